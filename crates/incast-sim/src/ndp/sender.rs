//! NDP's sender: an initial window at line rate, then one packet per pull (the NDP paper),
//! a retransmission if one waits (after a NACK, a bounce or a timeout), else new data.
//!
//! It never touches the clock or the network: every entry point takes `now` and appends what
//! it does to `out`, in order: packets to send, and its timer's next deadline when that needs
//! an event (the engine's lazy [`Timer`]).

use std::collections::VecDeque;

use super::bits::Bits;
use crate::engine::Timer;
use crate::rng::Rng;
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
    /// Wake the sender at this time with this generation (see [`Sender::on_timer`]).
    Deadline(SimTime, u32),
}

/// One flow's sending end.
#[derive(Debug)]
pub(crate) struct Sender {
    /// Packets in the flow.
    packets: u32,
    /// Bytes in the flow.
    bytes: u64,
    /// Next packet never sent.
    next_new: u32,
    /// Packets the receiver ACKed, and how many.
    acked: Bits,
    acked_count: u32,
    /// Packets to send again, in order, and whether each is in there.
    rtx: VecDeque<(u32, Cause)>,
    queued: Bits,
    /// Packets sent and not yet answered (ACK, NACK or bounce): only these can time out.
    awaiting: Bits,
    in_flight: u32,
    /// When the last pull arrived, and the gap before it: how long a flow with nothing in
    /// flight can expect to wait for its next pull.
    last_pull: Option<SimTime>,
    pull_gap: SimTime,
    /// ACKs and NACKs received, and pulls received. The receiver queues one pull per
    /// packet it sees (until the flow completes), so while `answers > pulls` a pull is owed.
    answers: u32,
    pulls: u32,
    /// Time to wait for an answer (`ndp.rto`), and the wait armed now: `ndp.rto_initial`
    /// until the first ACK, then `rto` or, with `drawn` (`ndp.rto_jitter` and the flow's
    /// stream), `rto` stretched by a draw at each ACK. (Boxed, as the timer for each packet
    /// below: a sender without them stays small for the many flows of a large incast.)
    rto: SimTime,
    wait: SimTime,
    drawn: Option<Box<(f64, Rng)>>,
    /// The timer (see `arm`).
    timer: Timer,
    /// With a timer for each packet (`ndp.timer = "packet"`): each unanswered packet's last
    /// send time, and the sends in the order made, oldest first (an entry whose packet has
    /// since been answered or sent again is stale and dropped when it reaches the front).
    /// None with the flow's timer.
    per_packet: Option<Box<PerPacket>>,
    /// Retransmissions by cause.
    retx: [u32; 3],
    /// Timer expiries that resent something.
    timeouts: u32,
}

/// A sender's timer for each packet (`ndp.timer = "packet"`).
#[derive(Debug)]
struct PerPacket {
    /// Each packet's last send time.
    sent_at: Vec<SimTime>,
    /// The sends in the order made, oldest first.
    sends: VecDeque<(u32, SimTime)>,
}

impl Sender {
    /// A flow of `bytes` in `packets` packets, waiting `rto` for answers, on a timer that
    /// runs from the flow's last send or answer (`ndp.timer = "flow"`).
    pub(crate) fn new(bytes: u64, packets: u32, rto: SimTime) -> Sender {
        Sender {
            packets,
            bytes,
            next_new: 0,
            acked: Bits::new(packets),
            acked_count: 0,
            rtx: VecDeque::new(),
            queued: Bits::new(packets),
            awaiting: Bits::new(packets),
            in_flight: 0,
            last_pull: None,
            pull_gap: 0,
            answers: 0,
            pulls: 0,
            rto,
            wait: rto,
            drawn: None,
            timer: Timer::default(),
            per_packet: None,
            retx: [0; 3],
            timeouts: 0,
        }
    }

    /// Time each packet from its own send (`ndp.timer = "packet"`).
    pub(crate) fn timed_per_packet(mut self) -> Sender {
        self.per_packet = Some(Box::new(PerPacket {
            sent_at: vec![0; self.packets as usize],
            sends: VecDeque::new(),
        }));
        self
    }

    /// Wait `initial` before the first ACK (`ndp.rto_initial`), and from then on `rto`
    /// stretched by up to `jitter` of itself, drawn from `rng` at each ACK (`ndp.rto_jitter`).
    pub(crate) fn with_waits(mut self, initial: SimTime, jitter: f64, rng: Rng) -> Sender {
        self.wait = initial;
        self.drawn = (jitter > 0.0).then(|| Box::new((jitter, rng)));
        self
    }

    /// Bytes in the flow.
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Payload bytes of packet `seq` with packets of `mtu`: the last may be short.
    pub(crate) fn payload(&self, seq: u32, mtu: u64) -> u64 {
        (self.bytes - seq as u64 * mtu).min(mtu)
    }

    /// Retransmissions for `cause`.
    pub(crate) fn retx(&self, cause: Cause) -> u32 {
        self.retx[cause as usize]
    }

    /// Timer expiries that resent something.
    pub(crate) fn timeouts(&self) -> u32 {
        self.timeouts
    }

    /// Pulls received.
    pub(crate) fn pulls(&self) -> u32 {
        self.pulls
    }

    /// Packets ACKed, counted from the bitmap and as kept.
    pub(crate) fn acked(&self) -> (u32, u32) {
        let bitmap = self.acked.count();
        (bitmap, self.acked_count)
    }

    /// Send the initial window of `iw` packets at line rate.
    pub(crate) fn start(&mut self, now: SimTime, iw: u32, out: &mut Vec<SenderOut>) {
        for _ in 0..iw.min(self.packets) {
            self.send_new(now, out);
        }
    }

    /// The receiver ACKed packet `seq`.
    pub(crate) fn on_ack(&mut self, now: SimTime, seq: u32, out: &mut Vec<SenderOut>) {
        if !self.acked.get(seq) {
            self.acked.set(seq, true);
            self.acked_count += 1;
        }
        self.answers += 1;
        self.wait = self.drawn_wait();
        self.answered(now, seq, out);
    }

    /// The wait after an ACK: `rto`, stretched by up to `rto_jitter` of itself.
    fn drawn_wait(&mut self) -> SimTime {
        let Some((jitter, rng)) = self.drawn.as_deref_mut() else {
            return self.rto;
        };
        let u = rng.unit();
        (self.rto).saturating_add((self.rto as f64 * *jitter * u) as SimTime)
    }

    /// The receiver NACKed packet `seq` (it saw only its header): resend it when pulled.
    pub(crate) fn on_nack(&mut self, now: SimTime, seq: u32, out: &mut Vec<SenderOut>) {
        self.want_again(seq, Cause::Nack);
        self.answers += 1;
        self.answered(now, seq, out);
    }

    /// A pull arrived: send one packet.
    pub(crate) fn on_pull(&mut self, now: SimTime, out: &mut Vec<SenderOut>) {
        if let Some(t) = self.last_pull {
            self.pull_gap = now - t;
        }
        self.last_pull = Some(now);
        self.pulls += 1;
        self.send_one(now, out);
    }

    /// A switch returned the header of packet `seq`.
    pub(crate) fn on_bounce(&mut self, now: SimTime, seq: u32, out: &mut Vec<SenderOut>) {
        self.want_again(seq, Cause::Bounce);
        self.answered(now, seq, out);
        // The receiver never saw this packet, so it owes no pull for it. If nothing else is
        // in flight and no pull is owed, nobody will pull this flow again: resend one now.
        // (So of a first window bounced whole, one packet goes again at once and the rest
        // wait for the pulls it earns.)
        if self.in_flight == 0 && self.answers <= self.pulls {
            self.send_one(now, out);
        }
    }

    /// The timer's event of generation `gen` fired at `now`: if due, everything unanswered
    /// is given up for lost and one packet goes again; with a timer for each packet, those
    /// that have waited their wait go again, all at once.
    pub(crate) fn on_timer(&mut self, now: SimTime, gen: u32, out: &mut Vec<SenderOut>) {
        if !self.timer.fire(now, gen) {
            // Re-armed later since this event was scheduled: wait out the rest.
            self.sync(out);
            return;
        }
        if self.in_flight == 0 && self.rtx.is_empty() {
            return;
        }
        if self.per_packet.is_some() && self.in_flight > 0 {
            // Every packet due goes again at once, as htsim's `retransmit_packet` sends them
            // (a resend is sent at `now`, not due again: every wait is positive).
            let mut due = false;
            while let Some((seq, sent)) = self.oldest_unanswered() {
                if sent + self.wait > now {
                    break;
                }
                if let Some(pp) = self.per_packet.as_deref_mut() {
                    pp.sends.pop_front();
                }
                self.awaiting.set(seq, false);
                self.in_flight -= 1;
                self.retx[Cause::Timeout as usize] += 1;
                self.send_data(now, seq, out);
                due = true;
            }
            if due {
                self.timeouts += 1;
            }
            self.arm(now, out);
            return;
        }
        for seq in 0..self.next_new {
            if self.awaiting.get(seq) {
                self.awaiting.set(seq, false);
                self.in_flight -= 1;
                self.want_again(seq, Cause::Timeout);
            }
        }
        self.timeouts += 1;
        self.send_one(now, out);
        self.arm(now, out);
    }

    /// With a timer for each packet, the unanswered packet sent longest ago and when it was
    /// sent, stale entries before it dropped.
    fn oldest_unanswered(&mut self) -> Option<(u32, SimTime)> {
        let pp = self.per_packet.as_deref_mut()?;
        while let Some(&(seq, t)) = pp.sends.front() {
            if self.awaiting.get(seq) && pp.sent_at[seq as usize] == t {
                return Some((seq, t));
            }
            pp.sends.pop_front();
        }
        None
    }

    fn send_new(&mut self, now: SimTime, out: &mut Vec<SenderOut>) {
        if self.next_new >= self.packets {
            return;
        }
        let seq = self.next_new;
        self.next_new += 1;
        self.send_data(now, seq, out);
    }

    fn send_data(&mut self, now: SimTime, seq: u32, out: &mut Vec<SenderOut>) {
        if !self.awaiting.get(seq) {
            self.awaiting.set(seq, true);
            self.in_flight += 1;
        }
        if let Some(pp) = self.per_packet.as_deref_mut() {
            pp.sent_at[seq as usize] = now;
            pp.sends.push_back((seq, now));
        }
        self.arm(now, out);
        out.push(SenderOut::Send(seq));
    }

    /// Send a retransmission if one waits, else new data.
    fn send_one(&mut self, now: SimTime, out: &mut Vec<SenderOut>) {
        while let Some((seq, cause)) = self.rtx.pop_front() {
            self.queued.set(seq, false);
            if self.acked.get(seq) {
                continue;
            }
            self.retx[cause as usize] += 1;
            self.send_data(now, seq, out);
            return;
        }
        self.send_new(now, out);
    }

    /// The fate of packet `seq` is known: it no longer needs the timer.
    fn answered(&mut self, now: SimTime, seq: u32, out: &mut Vec<SenderOut>) {
        if self.awaiting.get(seq) {
            self.awaiting.set(seq, false);
            self.in_flight -= 1;
            // Restart the timer for what is still unanswered (a flow waiting only for
            // pulls, however long the receiver's queue of pulls, never times out).
            self.arm(now, out);
        }
    }

    fn want_again(&mut self, seq: u32, cause: Cause) {
        if !self.acked.get(seq) && !self.queued.get(seq) {
            self.queued.set(seq, true);
            self.rtx.push_back((seq, cause));
        }
    }

    /// Keep a timer while something could be lost unnoticed: packets awaiting an answer
    /// (`rto` from now, or with a timer for each packet from the oldest one's send), or
    /// retransmissions waiting for a pull that was lost (100 `rto`, or four of the flow's
    /// last gaps between pulls if that is longer).
    fn arm(&mut self, now: SimTime, out: &mut Vec<SenderOut>) {
        let oldest = self.oldest_unanswered();
        let at = if self.in_flight > 0 {
            // A wait drawn shorter may have passed already: due now.
            (oldest.map_or(now, |(_, sent)| sent) + self.wait).max(now)
        } else if !self.rtx.is_empty() {
            // Only a lost pull leaves a flow waiting here; pulls can be a whole pull queue
            // apart (N flows × one packet time), so wait long before resending.
            now + (100 * self.rto).max(4 * self.pull_gap)
        } else {
            return;
        };
        self.timer.set(at);
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
    use SenderOut::{Deadline, Send};

    const RTO: SimTime = 1_000;

    /// A 5-packet flow that has sent its initial window of 3 at time 0.
    fn sender_after_window() -> (Sender, u32) {
        let mut s = Sender::new(5 * 100, 5, RTO);
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
        (s, gen)
    }

    #[test]
    fn initial_window_is_capped_by_the_flow_length() {
        let mut s = Sender::new(150, 2, RTO);
        let mut out = Vec::new();
        s.start(0, 10, &mut out);
        let sends: Vec<_> = out.iter().filter(|o| matches!(o, Send(_))).collect();
        assert_eq!(sends, [&Send(0), &Send(1)]);
        assert_eq!(s.payload(1, 100), 50);
    }

    #[test]
    fn a_pull_sends_new_data_when_nothing_waits_for_retransmission() {
        let (mut s, _) = sender_after_window();
        let mut out = Vec::new();
        s.on_ack(10, 0, &mut out);
        out.clear();
        s.on_pull(20, &mut out);
        assert_eq!(out.last(), Some(&Send(3)));
        assert_eq!(s.pulls(), 1);
    }

    #[test]
    fn a_nack_queues_the_packet_for_the_next_pull() {
        let (mut s, _) = sender_after_window();
        let mut out = Vec::new();
        s.on_nack(10, 1, &mut out);
        assert!(!out.iter().any(|o| matches!(o, Send(_))), "{out:?}");
        s.on_pull(20, &mut out);
        assert_eq!(out.last(), Some(&Send(1)));
        assert_eq!(s.retx(Cause::Nack), 1);
    }

    #[test]
    fn a_retransmission_acked_meanwhile_is_skipped() {
        let (mut s, _) = sender_after_window();
        let mut out = Vec::new();
        s.on_nack(10, 1, &mut out);
        s.on_ack(11, 1, &mut out);
        out.clear();
        s.on_pull(20, &mut out);
        assert_eq!(out.last(), Some(&Send(3)));
        assert_eq!(s.retx(Cause::Nack), 0);
    }

    #[test]
    fn a_bounce_with_nothing_in_flight_and_no_pull_owed_resends_at_once() {
        let mut s = Sender::new(100, 1, RTO);
        let mut out = Vec::new();
        s.start(0, 1, &mut out);
        out.clear();
        s.on_bounce(10, 0, &mut out);
        assert_eq!(out.last(), Some(&Send(0)));
        assert_eq!(s.retx(Cause::Bounce), 1);
    }

    #[test]
    fn a_bounce_with_a_pull_owed_waits_for_it() {
        let (mut s, _) = sender_after_window();
        let mut out = Vec::new();
        s.on_ack(5, 0, &mut out);
        s.on_ack(6, 1, &mut out);
        out.clear();
        // Packet 2 bounces: nothing in flight, but two pulls are owed for the ACKs.
        s.on_bounce(10, 2, &mut out);
        assert!(!out.iter().any(|o| matches!(o, Send(_))), "{out:?}");
        s.on_pull(20, &mut out);
        assert_eq!(out.last(), Some(&Send(2)));
    }

    #[test]
    fn the_timer_resends_nothing_one_tick_early_and_everything_unanswered_at_its_deadline() {
        let (mut s, gen) = sender_after_window();
        let mut out = Vec::new();
        s.on_timer(RTO - 1, gen, &mut out);
        assert_eq!(out, [Deadline(RTO, gen.wrapping_add(1))]);
        assert_eq!(s.timeouts(), 0);
        out.clear();
        s.on_timer(RTO, gen.wrapping_add(1), &mut out);
        assert_eq!(s.timeouts(), 1);
        // All three are queued again; one goes now, and the timer is re-armed for it.
        assert_eq!(
            out,
            [Deadline(2 * RTO, gen.wrapping_add(2)), Send(0)],
            "{out:?}"
        );
        assert_eq!(s.retx(Cause::Timeout), 1);
        out.clear();
        s.on_pull(2 * RTO - 10, &mut out);
        assert_eq!(out, [Send(1)]);
    }

    #[test]
    fn an_answer_moves_the_deadline_later_without_a_new_event() {
        let (mut s, gen) = sender_after_window();
        let mut out = Vec::new();
        s.on_ack(500, 0, &mut out);
        assert!(
            out.is_empty(),
            "a later deadline reuses the pending event: {out:?}"
        );
        // The pending event fires at the old deadline, finds the new one and reschedules.
        s.on_timer(RTO, gen, &mut out);
        assert_eq!(out, [Deadline(500 + RTO, gen.wrapping_add(1))]);
        assert_eq!(s.timeouts(), 0);
        out.clear();
        s.on_timer(500 + RTO, gen.wrapping_add(1), &mut out);
        assert_eq!(s.timeouts(), 1);
    }

    #[test]
    fn with_only_retransmissions_waiting_for_pulls_the_timer_waits_long() {
        let mut s = Sender::new(200, 2, RTO);
        let mut out = Vec::new();
        s.start(0, 1, &mut out);
        out.clear();
        s.on_nack(10, 0, &mut out);
        // Nothing in flight, packet 0 waits for a pull: 100 rto, a later deadline.
        assert!(out.is_empty(), "{out:?}");
        s.on_ack(20, 0, &mut out);
        assert_eq!(s.acked(), (1, 1));
    }

    /// htsim's timer (`ndp.timer = "packet"`): a packet unanswered `rto` after its own send is
    /// given up even while answers for the others keep coming, and only it.
    #[test]
    fn a_timer_for_each_packet_resends_the_silent_one_while_others_are_answered() {
        let mut s = Sender::new(5 * 100, 5, RTO).timed_per_packet();
        let mut out = Vec::new();
        s.start(0, 3, &mut out);
        assert_eq!(out[0], Deadline(RTO, 1));
        // Packets 0 and 2 are answered late, packet 1 never: the deadline stays packet 1's.
        out.clear();
        s.on_ack(RTO - 10, 0, &mut out);
        s.on_ack(RTO - 5, 2, &mut out);
        assert!(!out.iter().any(|o| matches!(o, Deadline(..))), "{out:?}");
        out.clear();
        s.on_timer(RTO, 1, &mut out);
        assert_eq!(s.timeouts(), 1);
        assert_eq!(s.retx(Cause::Timeout), 1);
        // Packet 1 goes again at once and is timed from this send.
        assert_eq!(out, [Deadline(2 * RTO, 2), Send(1)]);
        // With the flow's timer the same answers push the deadline on: no timeout at RTO.
        let mut f = Sender::new(5 * 100, 5, RTO);
        let mut out = Vec::new();
        f.start(0, 3, &mut out);
        f.on_ack(RTO - 10, 0, &mut out);
        f.on_ack(RTO - 5, 2, &mut out);
        out.clear();
        f.on_timer(RTO, 1, &mut out);
        assert_eq!(f.timeouts(), 0);
        assert!(!out.iter().any(|o| matches!(o, Send(_))), "{out:?}");
    }

    /// Of two packets sent at different times, the timer gives up only the one that has
    /// waited `rto`; the other keeps its own deadline.
    #[test]
    fn a_timer_for_each_packet_gives_up_only_the_packets_due() {
        let mut s = Sender::new(5 * 100, 5, RTO).timed_per_packet();
        let mut out = Vec::new();
        s.start(0, 1, &mut out);
        s.on_pull(400, &mut out); // packet 1 at 400: a pull without an answer yet
        out.clear();
        s.on_timer(RTO, 1, &mut out);
        assert_eq!(s.timeouts(), 1);
        // Packet 0 goes again now; packet 1 is still awaited, due at 400 + RTO.
        assert_eq!(out, [Deadline(400 + RTO, 2), Send(0)]);
        out.clear();
        s.on_ack(500, 1, &mut out);
        // Answered: the next deadline is packet 0's resend, RTO after it.
        s.on_timer(400 + RTO, 2, &mut out);
        assert_eq!(s.timeouts(), 1);
        assert_eq!(out.last(), Some(&Deadline(2 * RTO, 3)));
    }

    /// `ndp.rto_initial` until the first ACK; after each ACK a wait drawn from `rto` to
    /// `rto` × (1 + jitter), the same for the same stream.
    #[test]
    fn the_first_wait_holds_until_an_ack_and_each_ack_draws_the_next() {
        let waits = |seed: u64| {
            let mut s = Sender::new(5 * 100, 5, RTO).with_waits(20 * RTO, 0.5, Rng::new(seed, 7));
            let mut out = Vec::new();
            s.start(0, 3, &mut out);
            assert_eq!(out[0], Deadline(20 * RTO, 1));
            s.on_nack(10, 0, &mut out); // a NACK is not an ACK: still the first wait
            assert_eq!(s.wait, 20 * RTO);
            (1..3)
                .map(|seq| {
                    s.on_ack(20 * seq as u64, seq, &mut out);
                    s.wait
                })
                .collect::<Vec<_>>()
        };
        let (a, b) = (waits(1), waits(1));
        assert_eq!(a, b);
        assert!(
            a.iter().all(|&w| (RTO..RTO + RTO / 2).contains(&w)),
            "{a:?}"
        );
        assert_ne!(a[0], a[1]);
        assert_ne!(waits(2), a);
    }
}
