//! What goes out: lost segments first, then new data, then RFC 6675's rescue
//! retransmission, as cwnd, the receive window and pacing allow; cwnd validation (Linux's
//! `tcp_cwnd_validate`) and the pacing clock.

use super::{Sender, TimerKind};
use crate::config::CwndLimited;
use crate::net::{CWR, ECT};
use crate::tcp::cc::{CaState, Controller, GSO_MAX_BYTES, PACING_SHIFT};
use crate::tcp::receiver::Outbox;
use crate::tcp::scoreboard::TxState;
use crate::units::{SimTime, PS_PER_S};

/// Segments a connection sends before Linux starts pacing it (`tcp_update_skb_after_send`).
const UNPACED_SEGMENTS: u64 = 10;

impl Sender {
    /// Whether segments leave at a pacing rate.
    #[inline]
    fn paced(&self) -> bool {
        self.cc.sets_cwnd() || self.p.pacing
    }

    /// The pacing timer fired.
    pub(in crate::tcp) fn on_pace(&mut self, now: SimTime, out: &mut Outbox<'_>) {
        self.pace_at = None;
        self.try_send(now, out);
    }

    /// Send what cwnd, the receive window and the data allow: lost segments first, then new
    /// data, then RFC 6675's rescue retransmission.
    pub(in crate::tcp) fn try_send(&mut self, now: SimTime, out: &mut Outbox<'_>) {
        if self.force_retx {
            self.force_retx = false;
            if let Some(i) = self.board.next_lost() {
                self.retransmit(i, now, out);
            }
        }
        let nxt_before = self.snd_nxt;
        loop {
            if self.paced() && now < self.next_send {
                // Linux's tcp_pacing_check: the next burst waits for its departure time.
                if self.in_flight() < self.cwnd && self.has_something_to_send() {
                    self.pace_at = Some(self.next_send);
                }
                break;
            }
            if self.in_flight() >= self.cwnd {
                self.cwnd_limited = self.board.lost_pending() > 0 || self.snd_nxt < self.write_end;
                break;
            }
            if self.board.lost_pending() > 0 && !(self.frto && self.frto_head_sent) {
                if let Some(i) = self.board.next_lost() {
                    self.frto_head_sent |= self.frto;
                    self.retransmit(i, now, out);
                    continue;
                }
                self.board.forget_pending();
            }
            let len = self.p.mss.min(self.write_end.saturating_sub(self.snd_nxt));
            if len == 0 || self.snd_nxt + len > self.snd_una + self.p.receive_window {
                // Nothing new may go out: RFC 6675 NextSeg rule 3 resends the first segment
                // above HighRxt that is neither SACKed nor yet deemed lost.
                if let Some(i) = self.rescue_candidate() {
                    self.retransmit(i, now, out);
                    continue;
                }
                self.cwnd_limited = false;
                break;
            }
            let tx = self.tx_state(now);
            self.board.push(self.snd_nxt, len as u32, now, tx);
            self.emit(self.snd_nxt, len as u32, out);
            self.snd_nxt += len;
            self.sent_data(now);
            self.pace(now, len);
        }
        if self.p.rack_tlp && self.snd_nxt > nxt_before {
            // Linux's tcp_write_xmit: new data went out, so the probe timer restarts.
            self.schedule_loss_probe(now, false);
        }
        match self.p.cwnd_limited {
            CwndLimited::LastSend => self.validate_cwnd(),
            CwndLimited::Window => self.validate_cwnd_window(self.snd_nxt > nxt_before),
        }
        if self.rounds_open && self.snd_nxt >= self.first_end {
            // The first transfer is all sent: its current round is its last.
            self.stats.rounds.push(self.snd_nxt - self.round_start);
            self.rounds_open = false;
        }
    }

    /// Linux's `tcp_cwnd_validate`: remember the most packets outstanding per window.
    fn validate_cwnd(&mut self) {
        let out = self.board.packets_out();
        if self.snd_una >= self.max_packets_seq || out > self.max_packets_out || self.cwnd_limited {
            self.max_packets_out = out;
            self.max_packets_seq = self.snd_nxt;
        }
    }

    /// Linux 6.0 on (`tcp_write_xmit` and `tcp_cwnd_validate`), after a send attempt that
    /// sent new data (`sent_new`) or not: where there was new data to send, cwnd limited it if
    /// the packets in flight now fill it; a window that was cwnd-limited stays so until it is
    /// acknowledged, even if the data runs out, and otherwise the most packets out is kept.
    fn validate_cwnd_window(&mut self, sent_new: bool) {
        if !sent_new && self.snd_nxt >= self.write_end {
            return; // no send head: Linux does not run tcp_write_xmit
        }
        let limited = self.in_flight() >= self.cwnd;
        if !sent_new && !limited {
            return;
        }
        let out = self.board.packets_out();
        if self.snd_una >= self.max_packets_seq
            || limited
            || (!self.window_limited && out > self.max_packets_out)
        {
            self.window_limited = limited;
            self.max_packets_out = out;
            self.max_packets_seq = self.snd_nxt;
        }
    }

    /// Lost segments to resend or new data to send.
    fn has_something_to_send(&self) -> bool {
        self.board.lost_pending() > 0 || self.snd_nxt < self.write_end
    }

    /// Segments per TSO burst (Linux's `tcp_tso_autosize`, unless the congestion control
    /// has a say: `tso_segs`).
    fn burst_segments(&self) -> u32 {
        if !self.p.tso {
            return 1;
        }
        if let Some(segs) = self.cc.tso_segs(self.p.mss) {
            return segs;
        }
        let bytes = (self.pacing_rate >> PACING_SHIFT).min(GSO_MAX_BYTES);
        ((bytes / self.p.mss) as u32).clamp(2, (GSO_MAX_BYTES / self.p.mss).max(2) as u32)
    }

    /// A segment of `len` bytes left at `now`: a paced sender's next burst departs when this
    /// one has left at the pacing rate (Linux's `tcp_update_skb_after_send`; the first ten
    /// segments of a connection are not paced). Linux times the write queue's buffer, whose
    /// length is its payload: headers go onto the clone that leaves, so the pacing rate is a
    /// rate of payload, as one from delivery-rate samples (packets × MSS) and the cwnd/SRTT
    /// rate are.
    fn pace(&mut self, now: SimTime, len: u64) {
        if !self.paced() || self.pacing_rate == 0 || self.stats.segments <= UNPACED_SEGMENTS {
            return;
        }
        if self.burst_left == 0 {
            self.burst_left = self.burst_segments();
            self.burst_bytes = 0;
        }
        self.burst_bytes += len;
        self.burst_left -= 1;
        if self.burst_left == 0 {
            let gap = (self.burst_bytes as u128 * PS_PER_S as u128 / self.pacing_rate as u128)
                .min(u64::MAX as u128) as SimTime;
            self.next_send = self.next_send.max(now) + gap;
        }
    }

    /// The delivery state a segment sent now carries: only a congestion control that sets
    /// cwnd itself reads delivery-rate samples.
    pub(super) fn tx_state(&mut self, now: SimTime) -> TxState {
        if self.cc.sets_cwnd() {
            self.rate.on_send(now, self.board.packets_out())
        } else {
            TxState::default()
        }
    }

    pub(super) fn sent_data(&mut self, now: SimTime) {
        self.stats.segments += 1;
        if self.ca == CaState::Recovery {
            self.prr_out += 1;
        }
        self.last_send = now;
        if self.rto_at.is_none() {
            self.arm_rto(now);
        }
    }

    pub(super) fn retransmit(&mut self, i: usize, now: SimTime, out: &mut Outbox<'_>) {
        let tx = self.tx_state(now);
        let (seq, len) = self.board.retransmitted(i, now, self.snd_nxt, tx);
        self.high_rxt = self.high_rxt.max(seq + len as u64);
        if self.ca == CaState::Loss {
            self.stats.retx_timeout += 1;
        } else {
            self.stats.retx_fast += 1;
        }
        self.emit(seq, len, out);
        self.sent_data(now);
        self.pace(now, len as u64);
        if i == 0 && self.timer == TimerKind::Rto {
            // Linux restarts the retransmission timer when it resends the head.
            self.arm_rto(now);
        }
    }

    fn rescue_candidate(&self) -> Option<usize> {
        if self.ca != CaState::Recovery || !self.p.sack || !self.p.rescue_retransmit {
            return None;
        }
        self.board.rescue_candidate(self.high_rxt)
    }

    /// Put a segment out: ECT on data of ECN-capable connections, CWR once after an ECN
    /// reduction (RFC 3168 6.1.2). The outbox adds the receive half's acknowledgment.
    pub(super) fn emit(&mut self, seq: u64, len: u32, out: &mut Outbox<'_>) {
        let ect = len > 0 && self.p.ecn;
        let cwr = ect && std::mem::take(&mut self.send_cwr);
        out.push(
            seq,
            len,
            if ect { ECT } else { 0 } | if cwr { CWR } else { 0 },
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::config::{CongestionControl, CwndLimited};
    use crate::tcp::testing::*;
    use crate::tcp::TcpParams;
    use crate::units::{from_us, PS_PER_S};

    #[test]
    fn initial_window_goes_out_at_once() {
        let (e, out) = sender_with_flight(true, 50);
        assert_eq!(out.len(), 10);
        assert_eq!(out[9].seq, 9 * MSS);
        assert_eq!(e.packets_out(), 10);
    }

    /// With nothing new to send in fast recovery, RFC 6675's rescue resends the first segment
    /// neither SACKed nor deemed lost; Linux (`tcp_xmit_retransmit_queue`) resends only what is
    /// deemed lost and sends nothing.
    #[test]
    fn only_the_rfc6675_sender_rescues_a_segment_not_deemed_lost() {
        for rescue in [true, false] {
            let mut e = endpoint(TcpParams {
                rescue_retransmit: rescue,
                ..params(true)
            });
            let mut out = Vec::new();
            e.write(0, 10 * MSS, &mut out);
            let t = from_us(100);
            // Segment 0 lost: the third SACK starts recovery and resends it.
            for k in 1..=3u64 {
                ack(&mut e, t, 0, &[(MSS, (k + 1) * MSS)]);
            }
            assert_eq!(e.stats().retx_fast, 1);
            // SACKs up to segment 6 bring the pipe (10 − 6 SACKed − 1 lost + 1 resent = 4)
            // under ssthresh (5): room for one segment, and no new data to fill it.
            for k in 4..=5u64 {
                assert!(ack(&mut e, t, 0, &[(MSS, (k + 1) * MSS)]).is_empty());
            }
            let out = ack(&mut e, t, 0, &[(MSS, 7 * MSS)]);
            let sent: Vec<u64> = out.iter().map(|s| s.seq / MSS).collect();
            if rescue {
                assert_eq!(sent, vec![7], "the first segment above the resent head");
            } else {
                assert!(sent.is_empty(), "segment 7 is not deemed lost: {sent:?}");
            }
        }
    }

    /// Linux paces the write queue's buffer, payload only (`tcp_update_skb_after_send`): the
    /// frame's headers, which the scenario gives for the links' timing, do not stretch the
    /// gap. The first ten segments are not paced; the eleventh sets the twelfth's departure.
    #[test]
    fn pacing_spaces_segments_by_their_payload_not_their_frame() {
        let tcp = crate::config::Tcp {
            mss: MSS,
            initial_window: 20,
            header_bytes: 66,
            congestion_control: CongestionControl::Bbr,
            ..Default::default()
        };
        let mut e = endpoint(TcpParams::from(&tcp));
        let mut out = Vec::new();
        e.write(0, 12 * MSS, &mut out);
        assert_eq!(out.len(), 11);
        let rate = e.tx.pacing_rate;
        assert!(rate > 0);
        let gap = MSS * PS_PER_S / rate;
        assert_eq!(e.poll_at().pace, Some(gap));
        out.clear();
        e.on_pace(gap - 1, &mut out);
        assert!(out.is_empty(), "not a picosecond before the gap");
        e.on_pace(gap, &mut out);
        assert_eq!(
            out.iter().map(|s| s.seq).collect::<Vec<_>>(),
            vec![11 * MSS]
        );
    }

    #[test]
    fn limited_transmit_sends_new_data_on_the_first_two_dupacks() {
        let mut e = endpoint(params(true));
        let mut out = Vec::new();
        e.write(0, 100 * MSS, &mut out);
        // The whole window is out: only a dupack can release more data.
        let out = ack(&mut e, from_us(100), 0, &[(MSS, 2 * MSS)]);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].seq, 10 * MSS);
        let mut off = endpoint(TcpParams {
            limited_transmit: false,
            ..params(true)
        });
        let mut o = Vec::new();
        off.write(0, 100 * MSS, &mut o);
        assert!(ack(&mut off, from_us(100), 0, &[(MSS, 2 * MSS)]).is_empty());
    }

    /// Linux 6.0 on: a response whose last segment filled cwnd keeps its window cwnd-limited,
    /// so the ACKs of that window still grow cwnd; the last-send rule stops growing as soon
    /// as the data has run out.
    #[test]
    fn a_window_filled_by_the_last_segment_stays_cwnd_limited() {
        for (rule, grown) in [(CwndLimited::LastSend, 10), (CwndLimited::Window, 11)] {
            let mut e = endpoint(TcpParams {
                cwnd_limited: rule,
                ..params(true)
            });
            e.tx.ssthresh = 5; // congestion avoidance: one segment per window
            let mut out = Vec::new();
            e.write(0, 10 * MSS, &mut out);
            assert_eq!(out.len(), 10);
            for k in 1..=10 {
                ack(&mut e, from_us(100 + k), k * MSS, &[]);
            }
            assert_eq!(e.cwnd(), grown, "{rule:?}");
        }
    }
}
