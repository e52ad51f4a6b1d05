//! EQDS's sender (Olteanu et al., NSDI 2022): the flow's backlog waits in the sender's edge
//! queue. It sends an unsolicited first window at line rate, then one packet per credit the
//! receiver grants: a retransmission if one waits (its header came back NACKed, or the timer
//! gave it up), else new data. Credit that finds nothing to send is kept for the next packet
//! to resend, so a credit racing ahead of a NACK is not lost.
//!
//! The unsolicited window is speculative: the sender sends it one packet per packet time of
//! its NIC and stops at the first answer of any kind (ACK, NACK, credit), as htsim's EQDS
//! stops speculating; what it did not send waits for credit. So the unsolicited data is at
//! most the window and about one round trip's worth.
//!
//! A sender that hears nothing for its timeout gives up what is unanswered (its headers were
//! dropped too, or, without trimming, the packets themselves) and sends an RTS: a request to
//! send carrying how many packets it still needs credit for, which the receiver grants.
//!
//! It never touches the clock or the network: every entry point takes `now` and appends what
//! it does to `out`, in order (the engine's lazy [`Timer`] for its deadline).

use std::collections::VecDeque;

use crate::engine::Timer;
use crate::units::SimTime;

/// Why a packet is sent again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cause {
    /// The receiver NACKed its trimmed header.
    Nack = 0,
    /// A switch returned its header.
    Bounce = 1,
    /// The sender's timer expired with it unanswered.
    Timeout = 2,
}

/// What a sender asks of the network and the clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SenderOut {
    /// Send data packet `seq`.
    Send(u32),
    /// Send an RTS asking for this many packets' credit.
    Rts(u32),
    /// Wake the sender at this time with this generation (see [`Sender::on_timer`]).
    Deadline(SimTime, u32),
    /// Wake the sender at this time to send its next unsolicited packet.
    Speculate(SimTime),
}

/// Retransmission counts, timeouts and RTSs of one sender.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    /// Retransmissions by [`Cause`].
    pub retx: [u32; 3],
    /// Timer expiries: giving up what is unanswered, or asking again for credit.
    pub timeouts: u32,
    /// RTSs sent.
    pub rts: u32,
    /// Credits received.
    pub credits: u32,
}

/// One flow's sending end.
#[derive(Debug)]
pub(crate) struct Sender {
    /// Packets and bytes in the flow.
    packets: u32,
    bytes: u64,
    /// Next packet never sent.
    next_new: u32,
    /// Packets the receiver ACKed, and how many.
    acked: Vec<bool>,
    acked_count: u32,
    /// Packets to send again, in order, and whether each is in there.
    rtx: VecDeque<(u32, Cause)>,
    queued: Vec<bool>,
    /// Packets sent and not yet answered (ACK, NACK or bounce): only these can time out.
    awaiting: Vec<bool>,
    in_flight: u32,
    /// Credit granted and not yet spent, in packets.
    credit: u32,
    /// Unsolicited packets sent, and still allowed while it speculates (no answer yet).
    unsolicited: u32,
    spec_left: u32,
    /// Packet time on its NIC: the gap between unsolicited packets (0: all at once).
    spec_gap: SimTime,
    /// Time to wait for an answer.
    rto: SimTime,
    timer: Timer,
    counts: Counts,
}

impl Sender {
    /// A flow of `bytes` in `packets` packets, waiting `rto` for answers.
    pub(crate) fn new(bytes: u64, packets: u32, rto: SimTime, spec_gap: SimTime) -> Sender {
        let n = packets as usize;
        Sender {
            packets,
            bytes,
            next_new: 0,
            acked: vec![false; n],
            acked_count: 0,
            rtx: VecDeque::new(),
            queued: vec![false; n],
            awaiting: vec![false; n],
            in_flight: 0,
            credit: 0,
            unsolicited: 0,
            spec_left: 0,
            spec_gap,
            rto,
            timer: Timer::default(),
            counts: Counts::default(),
        }
    }

    /// Bytes in the flow.
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Packets in the flow.
    pub(crate) fn packets(&self) -> u32 {
        self.packets
    }

    /// Payload bytes of packet `seq` with packets of `mtu`: the last may be short.
    pub(crate) fn payload(&self, seq: u32, mtu: u64) -> u64 {
        (self.bytes - seq as u64 * mtu).min(mtu)
    }

    /// Its counters.
    pub(crate) fn counts(&self) -> Counts {
        self.counts
    }

    /// Packets ACKed, counted from the bitmap and as kept.
    pub(crate) fn acked(&self) -> (u32, u32) {
        let bitmap = self.acked.iter().filter(|&&a| a).count() as u32;
        (bitmap, self.acked_count)
    }

    /// Every packet ACKed: the sender's view of completion.
    pub(crate) fn done(&self) -> bool {
        self.acked_count == self.packets
    }

    /// Packets it still needs credit for: retransmissions waiting and data never sent,
    /// less the credit it holds.
    pub(crate) fn wanted(&self) -> u32 {
        let want = self.rtx.len() as u32 + (self.packets - self.next_new - self.spec_left);
        want.saturating_sub(self.credit)
    }

    /// The packets of credit it will need for new data, as its packets tell the receiver:
    /// all but those sent unsolicited or still allowed to be.
    pub(crate) fn target(&self) -> u32 {
        self.packets - self.unsolicited - self.spec_left
    }

    /// Start the unsolicited window of `iw` packets at line rate.
    pub(crate) fn start(&mut self, now: SimTime, iw: u32, out: &mut Vec<SenderOut>) {
        self.spec_left = iw.min(self.packets);
        self.speculate(now, out);
    }

    /// Send the next unsolicited packet(s), if it still speculates: one now and a wake-up
    /// one packet time later, or all at once with no gap.
    pub(crate) fn speculate(&mut self, now: SimTime, out: &mut Vec<SenderOut>) {
        while self.spec_left > 0 {
            self.spec_left -= 1;
            self.unsolicited += 1;
            self.send_new(now, out);
            if self.spec_gap > 0 {
                if self.spec_left > 0 {
                    out.push(SenderOut::Speculate(now + self.spec_gap));
                }
                return;
            }
        }
    }

    /// An answer arrived: the unsolicited window ends here. If it ends early, the packets it
    /// no longer sends now need credit. A flow that wanted some credit already states the
    /// larger need in the first packet it sends on that credit. But a flow that fit in its
    /// window stated it wanted none: the receiver owes it nothing, so no credit comes and no
    /// packet follows to say more (on a fat tree a near sender's first answer can overtake
    /// the end of its window). Such a flow sends an RTS with its need, as htsim's EQDS sends
    /// one when it holds a backlog and no credit; without it, it waits out the long timer.
    fn stop_speculating(&mut self, out: &mut Vec<SenderOut>) {
        if self.spec_left == 0 {
            return;
        }
        let stated = self.target();
        self.spec_left = 0;
        let wanted = self.wanted();
        if stated == 0 && wanted > 0 {
            self.counts.rts += 1;
            out.push(SenderOut::Rts(wanted));
        }
    }

    /// The receiver ACKed packet `seq`.
    pub(crate) fn on_ack(&mut self, now: SimTime, seq: u32, out: &mut Vec<SenderOut>) {
        self.stop_speculating(out);
        if !self.acked[seq as usize] {
            self.acked[seq as usize] = true;
            self.acked_count += 1;
        }
        self.answered(now, seq, out);
    }

    /// The receiver NACKed packet `seq` (its header arrived, its payload was trimmed): resend
    /// it on credit, at once if credit is waiting.
    pub(crate) fn on_nack(&mut self, now: SimTime, seq: u32, out: &mut Vec<SenderOut>) {
        self.stop_speculating(out);
        self.want_again(seq, Cause::Nack);
        self.answered(now, seq, out);
        self.spend(now, out);
    }

    /// A switch returned packet `seq`'s header: the receiver never saw it, so ask for its
    /// credit with an RTS, and resend it on credit.
    pub(crate) fn on_bounce(&mut self, now: SimTime, seq: u32, out: &mut Vec<SenderOut>) {
        self.stop_speculating(out);
        self.want_again(seq, Cause::Bounce);
        self.answered(now, seq, out);
        self.counts.rts += 1;
        out.push(SenderOut::Rts(self.wanted()));
        self.spend(now, out);
    }

    /// The receiver granted one packet's credit.
    pub(crate) fn on_credit(&mut self, now: SimTime, out: &mut Vec<SenderOut>) {
        self.stop_speculating(out);
        self.counts.credits += 1;
        self.credit += 1;
        self.spend(now, out);
    }

    /// The timer's event of generation `gen` fired at `now`: if due, everything unanswered is
    /// given up and queued again, and an RTS asks for the credit to resend it.
    pub(crate) fn on_timer(&mut self, now: SimTime, gen: u32, out: &mut Vec<SenderOut>) {
        if !self.timer.fire(now, gen) {
            // Re-armed later since this event was scheduled: wait out the rest.
            self.sync(out);
            return;
        }
        if self.done() || (self.in_flight == 0 && self.wanted() == 0) {
            return;
        }
        // Every expiry that asks again is a timeout, the long wait for credit included.
        self.counts.timeouts += 1;
        if self.in_flight > 0 {
            for seq in 0..self.next_new {
                if self.awaiting[seq as usize] {
                    self.awaiting[seq as usize] = false;
                    self.in_flight -= 1;
                    self.want_again(seq, Cause::Timeout);
                }
            }
        }
        self.counts.rts += 1;
        out.push(SenderOut::Rts(self.wanted()));
        self.spend(now, out);
        self.arm(now, out);
    }

    /// Send as many packets as credit allows: retransmissions first, then new data.
    fn spend(&mut self, now: SimTime, out: &mut Vec<SenderOut>) {
        while self.credit > 0 && self.send_one(now, out) {
            self.credit -= 1;
        }
    }

    fn send_new(&mut self, now: SimTime, out: &mut Vec<SenderOut>) -> bool {
        if self.next_new >= self.packets {
            return false;
        }
        let seq = self.next_new;
        self.next_new += 1;
        self.send_data(now, seq, out);
        true
    }

    fn send_data(&mut self, now: SimTime, seq: u32, out: &mut Vec<SenderOut>) {
        if !self.awaiting[seq as usize] {
            self.awaiting[seq as usize] = true;
            self.in_flight += 1;
        }
        self.arm(now, out);
        out.push(SenderOut::Send(seq));
    }

    /// Send a retransmission if one waits, else new data; false if there is nothing.
    fn send_one(&mut self, now: SimTime, out: &mut Vec<SenderOut>) -> bool {
        while let Some((seq, cause)) = self.rtx.pop_front() {
            self.queued[seq as usize] = false;
            if self.acked[seq as usize] {
                continue;
            }
            self.counts.retx[cause as usize] += 1;
            self.send_data(now, seq, out);
            return true;
        }
        self.send_new(now, out)
    }

    /// The fate of packet `seq` is known: it no longer needs the timer.
    fn answered(&mut self, now: SimTime, seq: u32, out: &mut Vec<SenderOut>) {
        if self.awaiting[seq as usize] {
            self.awaiting[seq as usize] = false;
            self.in_flight -= 1;
            self.arm(now, out);
        }
    }

    fn want_again(&mut self, seq: u32, cause: Cause) {
        if !self.acked[seq as usize] && !self.queued[seq as usize] {
            self.queued[seq as usize] = true;
            self.rtx.push_back((seq, cause));
        }
    }

    /// Keep a timer while something could be lost unnoticed: packets awaiting an answer
    /// (`rto`), or a backlog waiting for credit that may have been lost (an RTS or a credit
    /// dropped by a full header queue): then 100 `rto`, since a receiver serving many senders
    /// round robin can leave one without credit for a long time and an RTS then is harmless
    /// but useless.
    fn arm(&mut self, now: SimTime, out: &mut Vec<SenderOut>) {
        let wait = if self.in_flight > 0 {
            self.rto
        } else if self.wanted() > 0 {
            100 * self.rto
        } else {
            return;
        };
        self.timer.set(now + wait);
        self.sync(out);
    }

    /// Report the deadline if it needs an event (lazy, as TCP's timers).
    fn sync(&mut self, out: &mut Vec<SenderOut>) {
        if let Some((t, gen)) = self.timer.needs_event() {
            out.push(SenderOut::Deadline(t, gen));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use SenderOut::{Deadline, Rts, Send};

    const RTO: SimTime = 1_000;

    /// A 5-packet flow that has sent its unsolicited window of 3 at time 0.
    fn sender_after_window() -> (Sender, u32) {
        let mut s = Sender::new(5 * 100, 5, RTO, 0);
        let mut out = Vec::new();
        s.start(0, 3, &mut out);
        let gen = match out[0] {
            Deadline(t, gen) => {
                assert_eq!(t, RTO);
                gen
            }
            other => panic!("{other:?}"),
        };
        assert_eq!(out[1..], [Send(0), Send(1), Send(2)]);
        assert_eq!(s.wanted(), 2);
        (s, gen)
    }

    fn sends(out: &[SenderOut]) -> Vec<u32> {
        out.iter()
            .filter_map(|o| match o {
                Send(s) => Some(*s),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn the_unsolicited_window_is_capped_by_the_flow_length() {
        let mut s = Sender::new(150, 2, RTO, 0);
        let mut out = Vec::new();
        s.start(0, 10, &mut out);
        assert_eq!(sends(&out), [0, 1]);
        assert_eq!(s.payload(1, 100), 50);
        assert_eq!(s.wanted(), 0);
    }

    #[test]
    fn nothing_new_goes_without_credit_and_each_credit_sends_one_packet() {
        let (mut s, _) = sender_after_window();
        let mut out = Vec::new();
        s.on_ack(10, 0, &mut out);
        s.on_ack(11, 1, &mut out);
        assert!(sends(&out).is_empty(), "ACKs are not credit: {out:?}");
        s.on_credit(20, &mut out);
        assert_eq!(sends(&out), [3]);
        assert_eq!(s.wanted(), 1);
    }

    #[test]
    fn a_nack_resends_on_the_next_credit_before_new_data() {
        let (mut s, _) = sender_after_window();
        let mut out = Vec::new();
        s.on_nack(10, 1, &mut out);
        assert!(sends(&out).is_empty(), "{out:?}");
        assert_eq!(s.wanted(), 3);
        s.on_credit(20, &mut out);
        s.on_credit(21, &mut out);
        assert_eq!(sends(&out), [1, 3]);
        assert_eq!(s.counts().retx[Cause::Nack as usize], 1);
    }

    #[test]
    fn credit_with_nothing_to_send_is_kept_for_a_later_nack() {
        let mut s = Sender::new(200, 2, RTO, 0);
        let mut out = Vec::new();
        s.start(0, 2, &mut out);
        out.clear();
        s.on_credit(5, &mut out);
        assert!(sends(&out).is_empty());
        s.on_nack(10, 1, &mut out);
        assert_eq!(sends(&out), [1], "the kept credit sends the NACKed packet");
    }

    #[test]
    fn a_retransmission_acked_meanwhile_is_skipped() {
        let (mut s, _) = sender_after_window();
        let mut out = Vec::new();
        s.on_nack(10, 1, &mut out);
        s.on_ack(11, 1, &mut out);
        out.clear();
        s.on_credit(20, &mut out);
        assert_eq!(sends(&out), [3]);
        assert_eq!(s.counts().retx, [0, 0, 0]);
    }

    #[test]
    fn a_bounce_asks_for_credit_with_an_rts() {
        let (mut s, _) = sender_after_window();
        let mut out = Vec::new();
        s.on_bounce(10, 2, &mut out);
        assert_eq!(out.last(), Some(&Rts(3)));
        s.on_credit(11, &mut out);
        assert_eq!(sends(&out), [2]);
        assert_eq!(s.counts().retx[Cause::Bounce as usize], 1);
    }

    #[test]
    fn the_timer_gives_up_nothing_one_tick_early_and_everything_unanswered_at_its_deadline() {
        let (mut s, gen) = sender_after_window();
        let mut out = Vec::new();
        s.on_ack(5, 0, &mut out);
        out.clear();
        // The ACK moved the deadline to 5 + RTO: the event at RTO only re-arms.
        s.on_timer(RTO, gen, &mut out);
        assert_eq!(out, [Deadline(5 + RTO, gen.wrapping_add(1))]);
        out.clear();
        s.on_timer(5 + RTO - 1, gen.wrapping_add(1), &mut out);
        assert_eq!(out, [Deadline(5 + RTO, gen.wrapping_add(2))]);
        assert_eq!(s.counts().timeouts, 0);
        out.clear();
        s.on_timer(5 + RTO, gen.wrapping_add(2), &mut out);
        assert_eq!(s.counts().timeouts, 1);
        // Packets 1 and 2 are given up; with 3 and 4 unsent, it asks for 4 credits and sends
        // nothing (no credit held), then waits long for credit.
        assert_eq!(out[0], Rts(4), "{out:?}");
        assert!(sends(&out).is_empty());
        assert_eq!(
            out[1..],
            [Deadline(5 + RTO + 100 * RTO, gen.wrapping_add(3))]
        );
        out.clear();
        s.on_credit(6 + RTO, &mut out);
        assert_eq!(sends(&out), [1]);
        assert_eq!(s.counts().retx[Cause::Timeout as usize], 1);
    }

    #[test]
    fn a_lost_credit_or_rts_is_asked_again_after_the_long_wait() {
        let mut s = Sender::new(300, 3, RTO, 0);
        let mut out = Vec::new();
        s.start(0, 1, &mut out);
        let gen = match out[0] {
            Deadline(t, g) if t == RTO => g,
            _ => panic!("{out:?}"),
        };
        out.clear();
        s.on_ack(10, 0, &mut out);
        // Nothing in flight, two packets wait for credit: the deadline moves to 10 + 100 RTO
        // and the pending event at RTO is reused.
        assert!(out.is_empty(), "{out:?}");
        s.on_timer(RTO, gen, &mut out);
        let gen = match out[..] {
            [Deadline(t, g)] if t == 10 + 100 * RTO => g,
            _ => panic!("{out:?}"),
        };
        out.clear();
        s.on_timer(10 + 100 * RTO - 1, gen, &mut out);
        assert_eq!(out, [Deadline(10 + 100 * RTO, gen.wrapping_add(1))]);
        out.clear();
        s.on_timer(10 + 100 * RTO, gen.wrapping_add(1), &mut out);
        assert_eq!(out[0], Rts(2));
        assert_eq!(
            s.counts().timeouts,
            1,
            "the long wait's expiry is a timeout"
        );
        assert_eq!(s.counts().retx, [0, 0, 0], "nothing was given up");
    }

    /// The fat tree's stall: a near sender's first answer comes back before its unsolicited
    /// window is out. Every packet it sent stated no credit wanted, so unless it tells the
    /// receiver, the receiver owes it nothing and the rest waits out the long timer.
    #[test]
    fn a_window_cut_short_asks_at_once_for_the_credit_it_now_needs() {
        let mut s = Sender::new(500, 5, RTO, 10);
        let mut out = Vec::new();
        s.start(0, 5, &mut out);
        let gen = match out[0] {
            Deadline(t, g) if t == RTO => g,
            _ => panic!("{out:?}"),
        };
        s.speculate(10, &mut out);
        s.speculate(20, &mut out);
        assert_eq!(sends(&out), [0, 1, 2]);
        assert_eq!(s.target(), 0, "its packets stated no credit wanted");
        out.clear();
        s.on_ack(25, 0, &mut out);
        assert_eq!(
            out,
            [Rts(2)],
            "two packets unsent: it asks for their credit"
        );
        assert_eq!((s.target(), s.counts().rts), (2, 1));
        // Later answers do not ask again.
        out.clear();
        s.on_ack(26, 1, &mut out);
        s.on_ack(27, 2, &mut out);
        assert!(out.is_empty(), "{out:?}");
        // Nothing in flight: should the RTS be lost, it asks again after the long wait.
        let deadline = 27 + 100 * RTO;
        s.on_timer(RTO, gen, &mut out);
        assert_eq!(out, [Deadline(deadline, gen.wrapping_add(1))]);
        out.clear();
        s.on_timer(deadline - 1, gen.wrapping_add(1), &mut out);
        assert_eq!(out, [Deadline(deadline, gen.wrapping_add(2))]);
        assert_eq!(s.counts().timeouts, 0);
        let gen = gen.wrapping_add(2);
        out.clear();
        s.on_timer(deadline, gen, &mut out);
        assert_eq!(out[0], Rts(2));
        assert_eq!((s.counts().timeouts, s.counts().rts), (1, 2));
        s.on_credit(deadline + 1, &mut out);
        s.on_credit(deadline + 2, &mut out);
        assert_eq!(sends(&out), [3, 4]);
    }

    #[test]
    fn a_finished_flow_never_times_out() {
        let mut s = Sender::new(100, 1, RTO, 0);
        let mut out = Vec::new();
        s.start(0, 1, &mut out);
        let gen = match out[0] {
            Deadline(_, g) => g,
            _ => panic!(),
        };
        s.on_ack(10, 0, &mut out);
        out.clear();
        s.on_timer(RTO, gen, &mut out);
        assert!(out.is_empty() || matches!(out[..], [Deadline(..)]));
        assert!(s.done());
        assert_eq!(s.counts().timeouts, 0);
    }

    #[test]
    fn the_unsolicited_window_goes_one_packet_time_apart_and_stops_at_the_first_answer() {
        let mut s = Sender::new(500, 5, RTO, 10);
        let mut out = Vec::new();
        s.start(0, 4, &mut out);
        assert_eq!(sends(&out), [0]);
        assert_eq!(out.last(), Some(&SenderOut::Speculate(10)));
        assert_eq!(s.target(), 1, "5 packets, 4 unsolicited");
        out.clear();
        s.speculate(10, &mut out);
        assert_eq!(sends(&out), [1]);
        assert_eq!(out.last(), Some(&SenderOut::Speculate(20)));
        out.clear();
        // The first ACK ends the window: packets 2 and 3 now wait for credit.
        s.on_ack(15, 0, &mut out);
        s.speculate(20, &mut out);
        assert!(sends(&out).is_empty(), "{out:?}");
        assert_eq!((s.target(), s.wanted()), (3, 3));
    }
}
