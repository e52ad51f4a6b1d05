//! Homa (Montazeri, Li, Alizadeh, Ousterhout, "Homa: A Receiver-Driven Low-Latency Transport
//! Protocol Using Network Priorities", SIGCOMM 2018): messages, not streams; each message sends
//! its first RTTbytes unscheduled and the rest as its receiver grants it; the receiver grants
//! the messages with the fewest bytes to come (SRPT), a few at once (overcommitment), and
//! chooses every packet's level at the switches' strict priority queues ([`crate::net::prio`]).
//!
//! - Every response of the workload is a message from the server to the client: the incast's
//!   (one per sender), a synchronized read's (one per server per block), a flow schedule's
//!   (one per flow). The client knows of it from the moment it is posted (it issued the
//!   request), which starts its resend timer; the request itself is not simulated.
//! - The incast optimization (the paper's incast section): a client with `homa.incast_threshold` responses
//!   outstanding marks the next requests, so their responses send only
//!   `homa.incast_unsched_bytes` unscheduled.
//! - A host's NIC holds one data packet at a time and takes the next from the outgoing
//!   message with the fewest bytes left (the paper's sender); GRANT, RESEND and BUSY go at the top level.
//! - Frames: payload plus `homa.header_bytes`; control frames `homa.control_bytes`.
//! - Paths: with `homa.spray` (the paper's simulations, §5.2) every packet takes a path of its
//!   own, drawn from random stream purpose 20 as it leaves its host; without it a message's
//!   packets all take one route each way (ECMP, drawn at set-up from stream 18, Homa's).
//!
//! The agents are apart and clock-free: `sender` (one outgoing message), `receiver` (one
//! incoming message, a host's grant scheduler and the resend timer), `levels` (which level a
//! packet takes); this module is their glue to the engine, `workload` lays the messages out,
//! `run_report` reports.

mod levels;
mod packets;
mod receiver;
mod run_report;
mod sender;
#[cfg(test)]
mod tests;
mod workload;

use crate::capture::Capture;
use crate::config::Scenario;
use crate::engine::driver::{Cx, Seen, Transport};
use crate::engine::{Event, EventQueue, Timer};
use crate::net::fabric::{Fabric, Offered, Wire};
use crate::net::trim::Trimmable;
use crate::net::PktId;
use crate::report::{HomaReport, Report};
use crate::rng::Rng;
use crate::topology::{LinkId, Network};
use crate::units::SimTime;

use crate::app::messages::Plan;
use levels::Levels;
use receiver::{Grant, Incoming, Scheduler};
use sender::Sender;

/// [`Event::Agent`] kinds: a message's resend timer, a message posted (the agent is the
/// message).
const RESEND_TIMER: u8 = 0;
const POST: u8 = 1;

/// What a Homa packet is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Bytes `offset..offset + len` of a message.
    Data,
    /// The receiver grants bytes up to `to`, at level `grant_level`.
    Grant,
    /// The receiver asks for bytes `offset..to` again, at level `grant_level`.
    Resend,
    /// The sender will send, only later.
    Busy,
}

/// A Homa packet on the wire.
#[derive(Debug, Clone, Copy)]
pub struct Pkt {
    kind: Kind,
    /// Its level at the switches.
    level: u8,
    /// The level a GRANT or RESEND asks for.
    grant_level: u8,
    hop: u16,
    msg: u32,
    len: u32,
    offset: u64,
    to: u64,
    /// Its message's route this way, unless sprayed.
    route: u32,
    /// Its own path from `src` to `dst` when sprayed, else [`ROUTED`].
    path: u32,
    src: u32,
    dst: u32,
    /// Bytes on the wire, without preamble and gap.
    frame: u32,
}

/// [`Pkt::path`] of a packet that follows its message's route.
const ROUTED: u32 = u32::MAX;

impl Trimmable for Pkt {
    #[inline]
    fn is_data(&self) -> bool {
        self.kind == Kind::Data
    }
    #[inline]
    fn frame(&self) -> u32 {
        self.frame
    }
    fn trim(&mut self, _header_bytes: u32) {
        unreachable!("Homa runs over priority ports, never trimming ones")
    }
}

impl Wire for Pkt {
    // A message's packets follow its route, or each its own sprayed path (`homa.spray`).
    crate::net::fabric::follows_route!(@walk |p: &Self, net: &Network, hop| match p.path {
        ROUTED => net.hop(p.route, hop),
        path => net.hop_via(p.src, p.dst, path, hop),
    });
    #[inline]
    fn flow(&self) -> u32 {
        self.msg
    }
    #[inline]
    fn priority(&self) -> u8 {
        self.level
    }
}

/// One message: its ends, routes, size, and when it was posted and completed.
#[derive(Debug, Clone)]
struct Msg {
    src: u32,
    dst: u32,
    bytes: u64,
    data_route: u32,
    ctrl_route: u32,
    /// Paths from its sender to its receiver and back (for spraying).
    paths: (u32, u32),
    /// Its incast burst, in a flow schedule.
    burst: Option<u32>,
    /// Marked by the incast optimization.
    marked: bool,
    posted: Option<SimTime>,
    done: Option<SimTime>,
}

/// A host: its outgoing messages, its NIC's one data packet, its grant scheduler.
#[derive(Debug)]
struct Host {
    out: Vec<u32>,
    queued: u32,
    sched: Scheduler,
    /// Responses it awaits (posted, not complete): the incast optimization's count.
    outstanding: u32,
}

/// The messages of a Homa run.
#[derive(Debug)]
pub struct Homa {
    msgs: Vec<Msg>,
    tx: Vec<Sender>,
    rx: Vec<Incoming>,
    timers: Vec<Timer>,
    hosts: Vec<Host>,
    plan: Plan,
    /// The application's messages not yet complete.
    pending: usize,
    /// The application's messages, `0..apps`; the short flows beside it follow
    /// (`workload.short_load`).
    apps: usize,
    /// Each short flow's arrival after the workload's start.
    shorts: Vec<SimTime>,
    levels: Levels,
    rtt_bytes: u64,
    mtu: u64,
    header: u64,
    ctrl: u32,
    timeout: SimTime,
    /// Missing ranges a resend timeout asks for (0: all).
    resend_ranges: u32,
    incast_threshold: u32,
    incast_unsched: u64,
    grants: Vec<Grant>,
    /// Per-packet path draws (`homa.spray`), else `None`.
    spray: Option<Rng>,
    stats: HomaReport,
    /// A capture was asked for (and is refused when the run ends).
    capture_asked: bool,
}

impl Transport for Homa {
    type Packet = Pkt;
    const UNFINISHED: &'static str = "Homa messages are unfinished";

    fn new(sc: &Scenario, fabric: &mut Fabric<Pkt>, events: &mut EventQueue) -> Homa {
        let homa = Homa::set_up(sc, &mut fabric.net);
        fabric.prioritize(|net, l| workload::port_buffer(sc, net, l));
        events.push(0, Event::Start);
        homa
    }

    fn finished(&self) -> bool {
        self.pending == 0
    }

    fn start(&mut self, cx: &mut Cx<Pkt>) {
        self.start_workload(cx);
    }

    #[inline]
    fn timer(&mut self, cx: &mut Cx<Pkt>, agent: u32, kind: u8, gen: u32) {
        match kind {
            RESEND_TIMER => {
                if self.timers[agent as usize].fire(cx.now, gen) {
                    self.on_resend_timer(cx, agent);
                }
                // Due or not, a later deadline may be left to schedule.
                self.arm(cx, agent);
            }
            _ => self.post(cx, agent),
        }
    }

    #[inline]
    fn sent(&mut self, cx: &mut Cx<Pkt>, _l: LinkId, id: PktId) {
        let p = cx.fabric.pkts.get(id);
        // A data packet left its NIC: the NIC takes the next.
        if p.kind == Kind::Data && p.hop == 0 {
            let host = self.msgs[p.msg as usize].src;
            self.hosts[host as usize].queued -= 1;
            self.pump(cx, host);
        }
    }

    #[inline]
    fn deliver(&mut self, cx: &mut Cx<Pkt>, id: PktId) {
        let p = *cx.fabric.pkts.get(id);
        cx.fabric.pkts.free(id);
        let m = p.msg;
        match p.kind {
            Kind::Data => self.on_data(cx, &p),
            Kind::Grant => {
                self.tx[m as usize].on_grant(p.to, p.grant_level);
                self.pump(cx, self.msgs[m as usize].src);
            }
            Kind::Resend => self.on_resend(cx, &p),
            Kind::Busy => {
                self.rx[m as usize].restart(cx.now);
                self.arm(cx, m);
            }
        }
    }

    #[inline]
    fn offered(&mut self, cx: &mut Cx<Pkt>, _l: LinkId, id: PktId, o: Offered) {
        debug_assert_eq!(o, Offered::Dropped, "priority ports queue or drop");
        let p = *cx.fabric.pkts.get(id);
        cx.fabric.pkts.free(id);
        self.stats.dropped += 1;
        if p.kind == Kind::Data && p.hop == 0 {
            // Refused by its own NIC's port (never, as they are unbounded; kept consistent).
            let host = self.msgs[p.msg as usize].src;
            self.hosts[host as usize].queued -= 1;
            self.pump(cx, host);
        }
    }

    fn attach_capture(&mut self, _cap: Capture, _sc: &Scenario) {
        self.capture_asked = true;
    }

    fn finish_capture(&mut self) -> Option<std::io::Result<u64>> {
        // Homa frames have no pcap encoding yet: say so rather than write an empty file.
        std::mem::take(&mut self.capture_asked).then(|| {
            Err(std::io::Error::other(
                "Homa runs are not captured (no Homa frame encoding yet)",
            ))
        })
    }

    fn report(&self, run: &Seen<Pkt>) -> Report {
        self.run_report(run)
    }

    fn check_invariants(&self, run: &Seen<Pkt>) -> Result<(), String> {
        self.check(run)
    }
}

impl Homa {
    /// Message `m` is posted now: its sender may send its unscheduled bytes (fewer if its
    /// client marked it), its receiver expects it.
    fn post(&mut self, cx: &mut Cx<Pkt>, m: u32) {
        let msg = &mut self.msgs[m as usize];
        msg.posted = Some(cx.now);
        let (src, dst, bytes) = (msg.src, msg.dst, msg.bytes);
        let client = &mut self.hosts[dst as usize];
        msg.marked = self.incast_threshold > 0 && client.outstanding >= self.incast_threshold;
        client.outstanding += 1;
        let unsched = if msg.marked {
            self.stats.marked += 1;
            self.incast_unsched
        } else {
            self.rtt_bytes
        };
        let level = self.levels.unscheduled_level(bytes);
        self.tx[m as usize] = Sender::new(bytes, self.mtu, unsched, level);
        self.rx[m as usize] = Incoming::new(cx.now, bytes, self.mtu, unsched).unscheduled_at(level);
        if self.rx[m as usize].needs_grants() {
            self.hosts[dst as usize].sched.add(&mut self.rx, m);
        }
        self.arm(cx, m);
        self.hosts[src as usize].out.push(m);
        self.pump(cx, src);
    }

    /// Host `h`'s NIC, if free, takes the next packet of the outgoing message with the fewest
    /// bytes left that may send; messages sent whole leave its list.
    fn pump(&mut self, cx: &mut Cx<Pkt>, h: u32) {
        let host = &mut self.hosts[h as usize];
        if host.queued > 0 {
            return;
        }
        let tx = &self.tx;
        host.out.retain(|&m| !tx[m as usize].done());
        let best = host
            .out
            .iter()
            .copied()
            .filter(|&m| tx[m as usize].ready())
            .min_by_key(|&m| (tx[m as usize].remaining(), m));
        let Some(m) = best else {
            return;
        };
        host.queued += 1;
        let p = self.tx[m as usize].next_packet().expect("it was ready");
        self.stats.data_packets += 1;
        self.stats.retransmitted += u64::from(p.retx);
        let path = self.path(self.msgs[m as usize].paths.0);
        let msg = &self.msgs[m as usize];
        let pkt = Pkt {
            kind: Kind::Data,
            level: p.level,
            grant_level: 0,
            hop: 0,
            msg: m,
            len: p.len,
            offset: p.offset,
            to: 0,
            route: msg.data_route,
            path,
            src: msg.src,
            dst: msg.dst,
            frame: (u64::from(p.len) + self.header) as u32,
        };
        self.send(cx, pkt);
    }

    /// A control packet of `kind` for message `m`, from its receiver (`back`) or its sender.
    fn control(&mut self, kind: Kind, m: u32, offset: u64, to: u64, level: u8) -> Pkt {
        let msg = &self.msgs[m as usize];
        let back = kind != Kind::Busy;
        let (src, dst, paths) = if back {
            (msg.dst, msg.src, msg.paths.1)
        } else {
            (msg.src, msg.dst, msg.paths.0)
        };
        let route = if back { msg.ctrl_route } else { msg.data_route };
        let path = self.path(paths);
        Pkt {
            kind,
            level: self.levels.total - 1,
            grant_level: level,
            hop: 0,
            msg: m,
            len: 0,
            offset,
            to,
            route,
            path,
            src,
            dst,
            frame: self.ctrl,
        }
    }

    /// A sprayed packet's path among `paths`, or [`ROUTED`] when packets follow their
    /// message's route.
    #[inline]
    fn path(&mut self, paths: u32) -> u32 {
        match self.spray.as_mut() {
            Some(rng) if paths > 1 => rng.up_to(u64::from(paths) - 1) as u32,
            Some(_) => 0,
            None => ROUTED,
        }
    }

    /// A data packet reached its receiver: count it, grant, complete the message.
    fn on_data(&mut self, cx: &mut Cx<Pkt>, p: &Pkt) {
        let m = p.msg;
        let before = self.rx[m as usize].granted_out();
        let behind = p.offset < self.rx[m as usize].reach();
        if !self.rx[m as usize].on_data(cx.now, p.offset, p.len) {
            self.stats.duplicates += 1;
        } else if behind {
            self.stats.reordered += 1;
        }
        let dst = self.msgs[m as usize].dst;
        let after = self.rx[m as usize].granted_out();
        self.hosts[dst as usize].sched.arrived(before, after);
        self.hosts[dst as usize].sched.update(&mut self.rx, m);
        if self.rx[m as usize].complete() && self.msgs[m as usize].done.is_none() {
            self.complete(cx, m);
        }
        let mut grants = std::mem::take(&mut self.grants);
        self.hosts[dst as usize]
            .sched
            .grant(&mut self.rx, &mut grants);
        for &(g, to, level) in &grants {
            self.stats.grants += 1;
            let pkt = self.control(Kind::Grant, g, 0, to, level);
            self.send(cx, pkt);
            // Granted bytes are awaited from now: a lost grant or its lost packets are asked
            // for again after the timeout.
            self.rx[g as usize].restart(cx.now);
            self.arm(cx, g);
        }
        grants.clear();
        self.grants = grants;
        self.arm(cx, m);
    }

    /// A RESEND reached the sender: what was sent goes again; BUSY if a shorter message of
    /// its own goes first.
    fn on_resend(&mut self, cx: &mut Cx<Pkt>, p: &Pkt) {
        let m = p.msg;
        let src = self.msgs[m as usize].src;
        let key = self.tx[m as usize].remaining();
        let tx = &self.tx;
        let busy = self.hosts[src as usize].out.iter().any(|&o| {
            o != m && tx[o as usize].ready() && (tx[o as usize].remaining(), o) < (key, m)
        });
        self.tx[m as usize].on_resend(p.offset, p.to, p.grant_level);
        if busy {
            self.stats.busy += 1;
            let pkt = self.control(Kind::Busy, m, 0, 0, 0);
            self.send(cx, pkt);
        }
        if !self.hosts[src as usize].out.contains(&m) {
            self.hosts[src as usize].out.push(m);
        }
        self.pump(cx, src);
    }

    /// Message `m`'s resend timer fired: ask for the first `homa.resend_ranges` missing ranges
    /// (0: all), a RESEND each. Holes left by drops are often more than one range (a message's
    /// packets interleave with others' in a full queue; sprayed ones are lost here and there),
    /// and each range not asked for costs another timeout.
    fn on_resend_timer(&mut self, cx: &mut Cx<Pkt>, m: u32) {
        let Some((mut from, mut to, level)) = self.rx[m as usize].on_timer(cx.now, self.timeout)
        else {
            return;
        };
        self.stats.resends += 1;
        let mut asked = 0;
        loop {
            let pkt = self.control(Kind::Resend, m, from, to, level);
            self.send(cx, pkt);
            asked += 1;
            if asked == self.resend_ranges {
                break;
            }
            match self.rx[m as usize].missing_from(to) {
                Some(next) => (from, to) = next,
                None => break,
            }
        }
    }

    /// Set message `m`'s resend timer from its receiver's deadline.
    fn arm(&mut self, cx: &mut Cx<Pkt>, m: u32) {
        let t = &mut self.timers[m as usize];
        t.deadline = match self.msgs[m as usize].done {
            Some(_) => None,
            None => self.rx[m as usize].deadline(self.timeout),
        };
        if let Some((at, gen)) = t.needs_event() {
            cx.push(at, Event::Agent(m, RESEND_TIMER, gen));
        }
    }

    /// Put packet `p` on the first link of its route.
    #[inline]
    fn send(&mut self, cx: &mut Cx<Pkt>, p: Pkt) {
        let first = p
            .link_at(&cx.fabric.net, 0)
            .expect("routes are never empty");
        let id = cx.fabric.pkts.alloc(p);
        let o = cx.offer(first, id);
        if o != Offered::Queued {
            self.offered(cx, first, id, o);
        }
    }
}
