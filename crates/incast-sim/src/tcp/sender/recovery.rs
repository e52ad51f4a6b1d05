//! What loss recovery makes of an ACK in each congestion-control state (Linux's
//! `tcp_fastretrans_alert`): entering fast recovery, PRR (RFC 6937) or halving while in it,
//! NewReno's partial ACKs (RFC 6582), F-RTO (RFC 5682) after a timeout and its undo.

use super::ack::Ack;
use super::Sender;
use crate::config::{AckOrder, RecoveryCwnd};
use crate::tcp::cc::{CaState, Controller, MAX_CWND};

impl Sender {
    /// Loss recovery's look at an ACK, by congestion-control state (Linux's
    /// `tcp_fastretrans_alert`), with cwnd's growth before or after it as the profile's ACK
    /// order says: Linux 4.x on grows cwnd after loss recovery has looked at the ACK
    /// (`tcp_cong_control` after `tcp_fastretrans_alert`); 2.6 and 3.x grew it first.
    pub(super) fn recovery_on_ack(&mut self, a: &Ack) {
        match self.ca {
            CaState::Open => self.open_on_ack(a),
            CaState::Recovery => self.recovering_on_ack(a),
            CaState::Loss if self.frto && self.orig_delivered => self.undo_spurious_timeout(),
            CaState::Loss => self.loss_on_ack(a),
        }
    }

    /// Open: cwnd grows, and fast recovery starts if the ACK shows a loss.
    fn open_on_ack(&mut self, a: &Ack) {
        let enter = self.shows_loss(a) && !self.board.is_empty();
        let late = self.p.ack_order == AckOrder::RecoveryFirst;
        let sets_cwnd = self.cc.sets_cwnd();
        // Whether recovery starts does not depend on cwnd, so one test serves both orders:
        // Linux 2.6/3.x grew cwnd before the loss check (and so before the cut), Linux 4.x on
        // grows it only if the ACK does not start recovery.
        if a.advanced() && !sets_cwnd && !(late && enter) {
            self.grow(a.delivered, a.now);
        }
        if enter {
            self.enter_recovery();
            if !sets_cwnd {
                let newly_lost = self.board.lost_total() > a.lost_before;
                self.reduce_cwnd(a.delivered, a.advanced(), newly_lost);
            }
        }
    }

    /// Whether an ACK in the Open state shows a loss: RACK marked one (RFC 8985), or
    /// dupthresh duplicate ACKs arrived (RFC 5681), or dupthresh segments above the
    /// unSACKed head are SACKed (RFC 6675's IsLost).
    fn shows_loss(&self, a: &Ack) -> bool {
        if a.rack_tlp {
            return self.board.lost_out() > 0;
        }
        self.dupacks >= self.p.dupthresh
            || (self.p.sack && a.newly_sacked > 0 && self.board.head_lost_by_sack(self.p.dupthresh))
    }

    /// Recovery: it ends once `high_seq` is acknowledged; until then, NewReno's partial ACKs
    /// or SACK mark the next losses, and PRR sets cwnd.
    fn recovering_on_ack(&mut self, a: &Ack) {
        let sets_cwnd = self.cc.sets_cwnd();
        if self.snd_una >= self.high_seq {
            self.ca = CaState::Open;
            if !sets_cwnd {
                // Linux's tcp_end_cwnd_reduction, which a congestion control that sets cwnd
                // itself skips: its ssthresh stays infinite, and it restores its own cwnd on
                // leaving recovery.
                self.cwnd = self.ssthresh;
                if self.p.ack_order == AckOrder::RecoveryFirst {
                    // Open again, an ACK of new data may raise cwnd.
                    self.grow(a.delivered, a.now);
                }
            }
            self.dupacks = 0;
        } else if !self.p.sack {
            if a.advanced() {
                // NewReno (RFC 6582 3.2 step 3): a partial ACK reveals the next hole;
                // retransmit it at once.
                self.board.mark_lost(0);
                self.force_retx = true;
            }
        } else if (a.newly_sacked > 0 || a.advanced()) && !a.rack_tlp {
            self.board.mark_lost_by_sack(self.p.dupthresh);
        }
        if self.ca == CaState::Recovery && !sets_cwnd {
            let newly_lost = self.board.lost_total() > a.lost_before;
            self.reduce_cwnd(a.delivered, a.advanced(), newly_lost);
        }
    }

    /// Loss, after a timeout (F-RTO's undo aside): F-RTO's next step, cwnd's growth, and the
    /// end of the Loss state once `high_seq` is acknowledged.
    fn loss_on_ack(&mut self, a: &Ack) {
        if self.frto {
            self.frto_step(a);
        }
        if a.advanced() && !self.cc.sets_cwnd() {
            self.grow(a.delivered, a.now);
        }
        if self.snd_una >= self.high_seq {
            self.ca = CaState::Open;
            self.dupacks = 0;
            // F-RTO lives only in the Loss state (Linux's tcp_process_loss): a later
            // recovery resends what RACK or SACK deems lost at once.
            self.frto = false;
        }
    }

    /// F-RTO (RFC 5682 3.1) at an ACK that does not prove the timeout spurious.
    fn frto_step(&mut self, a: &Ack) {
        if self.snd_nxt > self.high_seq {
            // Step 3a: new data went out and the peer still reports holes.
            if a.newly_sacked > 0 || self.dupacks > 0 {
                self.frto = false;
            }
        } else if a.advanced() && self.snd_una < self.high_seq {
            // Step 2b: the head's retransmission came back; send new data next (the window's
            // original data, if it arrives, proves the timeout spurious), or fall back to
            // resending everything if there is none.
            self.high_seq = self.snd_nxt;
            self.frto = self.snd_nxt < self.write_end
                && self.snd_nxt < self.snd_una + self.p.receive_window;
        }
    }

    pub(super) fn enter_recovery(&mut self) {
        self.stats.recoveries += 1;
        self.rounds_open = false;
        self.ca = CaState::Recovery;
        self.high_seq = self.snd_nxt;
        self.high_rxt = self.snd_una;
        self.prior_cwnd = self.cwnd.max(1);
        self.ssthresh = self.loss_ssthresh();
        self.cwnd_cnt = 0;
        self.prr_delivered = 0;
        self.prr_out = 0;
        if !(self.p.rack_tlp && self.p.sack) {
            // RACK has marked what is lost already.
            self.board.mark_lost(0);
            if self.p.sack {
                self.board.mark_lost_by_sack(self.p.dupthresh);
            }
        }
        match self.p.recovery_cwnd {
            // PRR's first step allows the fast retransmit itself.
            RecoveryCwnd::Prr => {}
            RecoveryCwnd::Halve => {
                if !self.cc.sets_cwnd() {
                    self.cwnd = self.ssthresh;
                }
                self.force_retx = true;
            }
        }
    }

    /// Proportional rate reduction (RFC 6937, as Linux's `tcp_cwnd_reduction`): after
    /// `delivered` more segments left the network, allow sending so that, by the end of
    /// recovery, cwnd has come down to ssthresh at the pace of the ACKs.
    pub(super) fn reduce_cwnd(&mut self, delivered: u32, una_advanced: bool, newly_lost: bool) {
        if self.p.recovery_cwnd != RecoveryCwnd::Prr || delivered == 0 {
            return;
        }
        self.prr_delivered += delivered;
        let in_flight = self.in_flight() as i64;
        let delta = self.ssthresh as i64 - in_flight;
        let mut sndcnt = if delta < 0 {
            let target =
                (self.ssthresh as u64 * self.prr_delivered as u64).div_ceil(self.prior_cwnd as u64);
            target as i64 - self.prr_out as i64
        } else {
            // Conservative reduction bound, and the slow-start one (one segment more) only
            // for an ACK that moved snd_una and revealed no new loss (Linux 5.14 on).
            let s = (self.prr_delivered as i64 - self.prr_out as i64).max(delivered as i64)
                + i64::from(una_advanced && !newly_lost);
            s.min(delta)
        };
        // The first step is the fast retransmit.
        sndcnt = sndcnt.max(i64::from(self.prr_out == 0));
        self.cwnd = (in_flight + sndcnt).clamp(1, MAX_CWND as i64) as u32;
    }

    /// F-RTO found the timeout spurious: data never retransmitted has arrived. Restore the
    /// window (Linux's `tcp_undo_cwnd_reduction`), forget the loss marks, carry on.
    fn undo_spurious_timeout(&mut self) {
        self.stats.spurious_timeouts += 1;
        let st = self.ack_state(self.last_send, 0, CaState::Open);
        self.cc.on_undo(&st);
        self.cwnd = self.cwnd.max(self.undo_cwnd);
        self.ssthresh = self.ssthresh.max(self.undo_ssthresh);
        self.board.clear_lost();
        self.ca = CaState::Open;
        self.frto = false;
        self.dupacks = 0;
        self.backoff = 0;
    }

    /// ssthresh on entering recovery or loss: the congestion control's.
    pub(super) fn loss_ssthresh(&mut self) -> u32 {
        self.cc.ssthresh_after_loss(self.cwnd)
    }
}

#[cfg(test)]
mod tests {
    use crate::config::{AckOrder, CongestionControl};
    use crate::tcp::cc::CaState;
    use crate::tcp::sender::TimerKind;
    use crate::tcp::testing::*;
    use crate::tcp::TcpParams;
    use crate::units::{from_ms, from_us};

    #[test]
    fn fast_retransmit_after_triple_duplicate_ack_and_not_before() {
        for sack in [true, false] {
            let (mut e, _) = sender_with_flight(sack, 10);
            let t = from_us(100);
            // Segment 0 lost; segments 1.. arrive and are SACKed one by one.
            for k in 1..=2u64 {
                let out = ack(&mut e, t, 0, &[(MSS, (k + 1) * MSS)]);
                assert!(
                    out.iter().all(|s| s.seq != 0),
                    "no retransmission at dupack {k}"
                );
            }
            let out = ack(&mut e, t, 0, &[(MSS, 4 * MSS)]);
            assert_eq!(out.first().map(|s| s.seq), Some(0), "sack={sack}");
            assert_eq!(e.stats().recoveries, 1);
            assert_eq!(e.stats().retx_fast, 1);
        }
    }

    #[test]
    fn newreno_partial_ack_retransmits_the_next_hole() {
        let (mut e, _) = sender_with_flight(false, 10);
        let t = from_us(100);
        for _ in 0..3 {
            ack(&mut e, t, 0, &[]);
        }
        // The retransmission of 0 arrives; segment 1 was lost too.
        let out = ack(&mut e, from_us(200), MSS, &[]);
        assert_eq!(out.first().map(|s| s.seq), Some(MSS));
        assert_eq!(e.stats().timeouts, 0);
    }

    #[test]
    fn frto_undoes_a_spurious_timeout_when_original_data_arrives() {
        let mut e = endpoint(TcpParams {
            frto: true,
            ..params(true)
        });
        let mut out = Vec::new();
        e.write(0, 10 * MSS, &mut out);
        // The ACKs were only delayed: the timer fires, the head goes out again...
        out.clear();
        e.on_rto(rto_at(&e).unwrap(), &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(e.cwnd(), 1);
        // ...and the original segments' ACKs arrive: the timeout was spurious.
        ack(&mut e, from_ms(201), 2 * MSS, &[]);
        assert_eq!(e.stats().spurious_timeouts, 1);
        assert_eq!(e.cwnd(), 10);
        assert_eq!(e.tx.ca, CaState::Open);
    }

    #[test]
    fn frto_falls_back_to_resending_when_the_loss_was_real() {
        let mut e = endpoint(TcpParams {
            frto: true,
            ..params(true)
        });
        let mut out = Vec::new();
        e.write(0, 4 * MSS, &mut out);
        out.clear();
        e.on_rto(rto_at(&e).unwrap(), &mut out);
        // Only the head's retransmission is acknowledged, and there is no new data to send:
        // F-RTO gives up and the rest is resent in slow start.
        let out = ack(&mut e, from_ms(201), MSS, &[]);
        assert_eq!(e.stats().spurious_timeouts, 0);
        assert_eq!(
            out.iter().map(|s| s.seq).collect::<Vec<_>>(),
            vec![MSS, 2 * MSS]
        );
    }

    /// Linux 4.x on (tcp_enter_loss): F-RTO does not start from a timeout during fast
    /// recovery, but does again on a recurring timeout of the same snd_una (RFC 5682 3.2).
    #[test]
    fn frto_recurring_starts_on_repeated_timeouts_and_not_from_recovery() {
        for recurring in [false, true] {
            let p = TcpParams {
                frto: true,
                frto_recurring: recurring,
                ..params(true)
            };
            // A timeout during fast recovery (segment 0 lost, 1-4 SACKed, its resend lost).
            let mut e = endpoint(p.clone());
            let mut out = Vec::new();
            e.write(0, 10 * MSS, &mut out);
            ack(&mut e, from_us(100), 0, &[(MSS, 5 * MSS)]);
            assert_eq!(e.tx.ca, CaState::Recovery);
            let mut out = Vec::new();
            e.tx.timer = TimerKind::Rto;
            e.on_rto(from_ms(200), &mut out);
            assert_eq!(
                e.tx.frto, !recurring,
                "from recovery, recurring {recurring}"
            );
            // Two timeouts in a row from the open state.
            let mut e = endpoint(p);
            let mut out = Vec::new();
            e.write(0, 10 * MSS, &mut out);
            e.on_rto(from_ms(200), &mut out);
            assert!(e.tx.frto);
            e.on_rto(from_ms(600), &mut out);
            assert_eq!(
                e.tx.frto, recurring,
                "recurring timeout, recurring {recurring}"
            );
        }
    }

    #[test]
    fn frto_ends_with_the_loss_state_so_a_later_loss_is_resent_at_once() {
        let mut e = endpoint(TcpParams {
            frto: true,
            ..params(true)
        });
        let mut out = Vec::new();
        e.write(0, 4 * MSS, &mut out);
        // The last segment is lost; its resend after the timeout completes the response.
        ack(&mut e, from_us(100), 3 * MSS, &[]);
        let rto = rto_at(&e).unwrap();
        out.clear();
        e.on_rto(rto, &mut out);
        assert_eq!(out.iter().map(|s| s.seq).collect::<Vec<_>>(), vec![3 * MSS]);
        let t = rto + from_us(100);
        ack(&mut e, t, 4 * MSS, &[]);
        assert_eq!(e.tx.ca, CaState::Open);
        assert!(!e.tx.frto, "F-RTO does not outlive the Loss state");
        // The next response loses its first segment, with three SACKed above it: resent at
        // once, not left for another timeout.
        let mut out = Vec::new();
        let mut t = t + from_us(1);
        e.write(t, 40 * MSS, &mut out);
        while e.packets_out() < 5 {
            t += from_us(100);
            let una = e.tx.snd_una + MSS;
            ack(&mut e, t, una, &[]);
        }
        let una = e.tx.snd_una;
        let out = ack(&mut e, t + from_us(100), una, &[(una + MSS, una + 4 * MSS)]);
        assert_eq!(out.first().map(|s| s.seq), Some(una), "{out:?}");
        assert_eq!(e.stats().timeouts, 1);
    }

    #[test]
    fn prr_grows_one_more_only_when_snd_una_moves_and_nothing_new_is_lost() {
        let (mut e, _) = sender_with_flight(true, 10);
        // Segment 0 lost, 1-4 SACKed: recovery.
        ack(&mut e, from_us(100), 0, &[(MSS, 5 * MSS)]);
        assert_eq!(e.tx.ca, CaState::Recovery);
        // Below ssthresh with nothing owed (the slow-start reduction bound's branch).
        e.tx.ssthresh = 20;
        e.tx.prr_out = e.tx.prr_delivered;
        let in_flight = e.tx.in_flight();
        let after = |una_advanced: bool, newly_lost: bool| {
            let mut tx = e.tx.clone();
            tx.reduce_cwnd(1, una_advanced, newly_lost);
            tx.cwnd - in_flight
        };
        // Linux 5.14 on (tcp_cwnd_reduction): sndcnt = max(prr_delivered - prr_out, 1), plus
        // one if the ACK moved snd_una and revealed no new loss.
        assert_eq!(after(true, false), 2);
        assert_eq!(after(true, true), 1);
        assert_eq!(after(false, false), 1);
    }

    /// Linux 4.x on: the ACK that starts recovery does not grow cwnd first (so ssthresh is cut
    /// from the window before it), and the one that ends recovery grows it after setting it
    /// to ssthresh; Linux 2.6/3.x did the opposite.
    #[test]
    fn recovery_first_grows_cwnd_only_outside_recovery() {
        for (order, ssthresh) in [(AckOrder::GrowFirst, 7), (AckOrder::RecoveryFirst, 5)] {
            let mut e = endpoint(TcpParams {
                ack_order: order,
                ..params(true)
            });
            let mut out = Vec::new();
            e.write(0, 100 * MSS, &mut out);
            // Segment 0 arrives, 1 is lost, 2-4 are SACKed: recovery, in slow start.
            ack(&mut e, from_us(100), MSS, &[(2 * MSS, 5 * MSS)]);
            assert_eq!(e.tx.ca, CaState::Recovery);
            assert_eq!(e.tx.ssthresh, ssthresh, "{order:?}");
            let high = e.tx.high_seq;
            ack(&mut e, from_us(200), high, &[]);
            assert_eq!(e.tx.ca, CaState::Open);
            let grown = u32::from(order == AckOrder::RecoveryFirst);
            assert_eq!(e.cwnd(), ssthresh + grown, "{order:?}");
        }
    }

    #[test]
    fn bbr_keeps_its_own_cwnd_when_recovery_ends() {
        let mut e = endpoint(TcpParams {
            congestion_control: CongestionControl::Bbr,
            rack_tlp: true,
            ..params(true)
        });
        let mut out = Vec::new();
        e.write(0, 200 * MSS, &mut out);
        let mut t = 0;
        // Segment 0 is lost; the rest arrive and are SACKed, then the retransmission.
        for k in 1..6u64 {
            t += from_us(20);
            ack(&mut e, t, 0, &[(MSS, (k + 1) * MSS)]);
        }
        assert_eq!(e.tx.ca, CaState::Recovery);
        while e.tx.ca == CaState::Recovery {
            t += from_us(20);
            let una = e.tx.snd_nxt.min(e.tx.snd_una + 6 * MSS);
            ack(&mut e, t, una, &[]);
        }
        // Linux skips tcp_end_cwnd_reduction for BBR: cwnd is not set to its (infinite)
        // ssthresh.
        assert!(e.cwnd() < 1000, "cwnd {}", e.cwnd());
    }
}
