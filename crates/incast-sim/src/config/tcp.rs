//! The `tcp` section: parameters shared by every TCP connection, and the rules they follow
//! (run in the order `validate.rs` lists).

use serde::{Deserialize, Serialize};

use super::section::{choices, section};
use super::{bad, ConfigError, QueueLimit, Scenario, AN_HOUR};
use crate::units::*;

/// What a connection does when it sends again after being idle.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CwndRestart {
    /// Linux's `tcp_slow_start_after_idle`: halve cwnd per RTO of idleness, down to the IW.
    Idle,
    /// Every response starts in slow start from the initial window (the model's assumption).
    Block,
    /// Keep cwnd across idle periods.
    Never,
}

/// How RTOmin enters the retransmission timeout.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RtoFormula {
    /// RFC 6298: `RTO = max(RTOmin, SRTT + max(G, 4·RTTVAR))`: RTOmin is a floor, so every
    /// connection with a small RTT times out after exactly RTOmin.
    Rfc6298,
    /// Linux (`tcp_rtt_estimator`, `__tcp_set_rto`): `RTO = SRTT + max(4·RTTVAR, RTOmin)`:
    /// RTOmin is added to the smoothed RTT, so RTOs differ with each connection's RTT.
    Linux,
}

/// How a connection draws its retransmission timeout (Hafeez et al., RTO randomization).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RtoRandomization {
    /// The estimator's RTO, doubled per successive timeout.
    None,
    /// Uniform in [RTO − Δ/2, RTO + Δ/2], then the usual doubling (Hafeez Eq. 3).
    Uniform,
    /// Timeout-driven adaptation (Hafeez Eq. 8): after s successive timeouts, uniform over an
    /// interval ω^s·Δ wide around the RTO, instead of doubling.
    Tda,
    /// Multiplexing-aware adaptation: an interval ⌊N/(σ·ln N)⌋·Δ wide for N senders, then the
    /// usual doubling.
    Maa,
    /// Flow-size-aware adaptation: TDA with ω for flows that have sent less than
    /// `fsa_long_after` bytes and `rto_omega_long` for longer ones.
    Fsa,
}

/// Congestion control.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CongestionControl {
    /// Reno / NewReno (RFC 5681): halve on loss.
    Reno,
    /// CUBIC (RFC 9438), Linux's default: keep 70% on loss, grow along a cubic curve.
    Cubic,
    /// DCTCP (RFC 8257): ECN-capable, cuts cwnd by α/2 once per window of CE marks.
    Dctcp,
    /// BBR v1 (Cardwell et al., ACM Queue 2016; Linux `tcp_bbr`): a model of the path's
    /// bandwidth and minimum RTT sets a pacing rate and cwnd; loss alone does not cut the rate.
    Bbr,
}

/// How CUBIC computes its window increase.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CubicUpdate {
    /// RFC 9438 as written: the curve's target is recomputed in real time on every ACK.
    PerAck,
    /// Linux's `tcp_cubic.c`: whole segments on the jiffy clock, recomputed at most once per
    /// jiffy and, while cwnd is unchanged, every HZ/32 jiffies (28 ms at HZ = 250); a timeout
    /// forgets W_max.
    Linux,
}

/// Whether cwnd grows before or after loss recovery has looked at an ACK.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum AckOrder {
    /// Linux 2.6 and 3.x (`tcp_cong_avoid` before `tcp_fastretrans_alert`).
    GrowFirst,
    /// Linux 4.x on (`tcp_cong_control` after `tcp_fastretrans_alert`).
    RecoveryFirst,
}

/// When cwnd counts as limiting the sender, which it must for cwnd to grow.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CwndLimited {
    /// The last send attempt stopped at cwnd with data waiting.
    LastSend,
    /// Linux 6.0 on (`tcp_cwnd_validate`): a send of new data filled cwnd in the current
    /// window, which stays cwnd-limited until it is acknowledged.
    Window,
}

/// How the congestion window comes down during fast recovery.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RecoveryCwnd {
    /// Proportional rate reduction (RFC 6937; Linux since 3.2, ns-3's default): send about
    /// one segment per two delivered, so ACKs keep flowing during recovery.
    Prr,
    /// RFC 6675 / RFC 5681: cwnd drops to ssthresh at once; nothing is sent until the pipe
    /// estimate falls below it.
    Halve,
}

/// A named bundle of TCP defaults: whose TCP the scenario's hosts run. Keys the scenario sets
/// itself win over the profile's.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Profile {
    /// The kernels of the incast papers (Linux 2.6.2x, ns-2): tail losses wait for the RTO,
    /// every segment is acknowledged at once, Reno, one clock for RTTs and timers.
    Classic,
    /// Linux 5.x/6.x as shipped: RACK-TLP (RFC 8985), delayed ACKs of 40 ms with quick-ACK
    /// mode, CUBIC with HyStart, TSO-sized bursts, RTTs in µs and timers on 4 ms jiffies
    /// (HZ = 250, as Debian's kernels).
    Linux,
}

/// The profile of a scenario that names none: today's Linux, since a user who names no
/// profile asks about today's servers (the paper reproductions pin `classic`). Applied when a
/// scenario is read (`fill_derived`), and shown as the key's default by `Scenario::describe`.
pub const DEFAULT_PROFILE: Profile = Profile::Linux;

/// TCP's largest receive window: 65,535 bytes scaled by 2^14 is just under 1 GiB (RFC 7323
/// 2.3); the simulator's packets carry SACK blocks as 32-bit offsets above the ACK on it.
pub const MAX_WINDOW: u64 = 1 << 30;

impl Profile {
    /// The defaults this profile gives keys of the `tcp` section the scenario leaves unset,
    /// in base units (the classic profile's are the keys' own defaults).
    pub fn defaults(self) -> Vec<(&'static str, serde_json::Value)> {
        use serde_json::json;
        match self {
            Profile::Classic => Vec::new(),
            Profile::Linux => vec![
                ("congestion_control", json!("cubic")),
                ("rack_tlp", json!(true)),
                ("rescue_retransmit", json!(false)),
                ("delayed_ack", json!(from_ms(40))),
                ("quickack", json!(true)),
                ("sack_compression", json!(true)),
                ("sack_rtt", json!(true)),
                ("hystart", json!(true)),
                ("cubic_update", json!("linux")),
                ("ack_order", json!("recovery_first")),
                ("cwnd_limited", json!("window")),
                ("frto_recurring", json!(true)),
                ("tso", json!(true)),
                ("clock_granularity", json!(PS_PER_US)),
                ("timer_granularity", json!(4 * PS_PER_MS)),
                ("timer_wheel", json!(true)),
            ],
        }
    }
}

choices! {
    Profile: Classic, Linux;
    CwndRestart: Idle, Block, Never;
    RtoFormula: Rfc6298, Linux;
    RtoRandomization: None, Uniform, Tda, Maa, Fsa;
    CongestionControl: Reno, Cubic, Dctcp, Bbr;
    CubicUpdate: PerAck, Linux;
    AckOrder: GrowFirst, RecoveryFirst;
    CwndLimited: LastSend, Window;
    RecoveryCwnd: Prr, Halve;
}

section! {
    /// TCP parameters.
    pub struct Tcp {
        /// Whose TCP the hosts run: a bundle of defaults for the keys below that the scenario
        /// leaves unset ("linux", the default: Linux 5.x/6.x as shipped today; "classic": the
        /// incast papers' kernels, which every paper reproduction pins). A scenario read
        /// without it gets [`DEFAULT_PROFILE`]; `Tcp::default()` is the bare keys, whose
        /// values are the classic profile's, and says so.
        pub profile: Profile [Plain] = Profile::Classic,
        /// Maximum segment size (payload bytes per packet).
        pub mss: u64 [Size] = 1448,
        /// Bytes of headers in each frame beyond the payload (Ethernet+FCS, IP, TCP, timestamps).
        pub header_bytes: u64 [Size] = 70,
        /// Bytes on the wire beyond the frame (preamble, start delimiter, inter-frame gap).
        pub phy_overhead: u64 [Size] = 20,
        /// Initial congestion window, segments.
        pub initial_window: u32 [Plain] = 10,
        /// Minimum retransmission timeout (RFC 6298 (2.4)).
        pub rto_min: SimTime [Time] = from_ms(200),
        /// Maximum retransmission timeout (RFC 6298 (2.5)).
        pub rto_max: SimTime [Time] = 120 * PS_PER_S,
        /// Retransmission timeout before any RTT sample (RFC 6298 (2.1)); connections are
        /// established, so the handshake's sample normally replaces it.
        pub rto_initial: SimTime [Time] = PS_PER_S,
        /// RTT clock granularity G (RFC 6298): 1 µs (Linux since 4.x), 1 ms, 4 ms (HZ=250)...
        pub clock_granularity: SimTime [Time] = PS_PER_US,
        /// Granularity of the retransmission, probe and reorder timers (Linux: a jiffy, 4 ms
        /// at HZ = 250, 1 ms at HZ = 1000); `None`: the RTT clock's. RTOmin is rounded up to
        /// whole ticks, as Linux keeps a route's `rto_min` in jiffies (1 ms is 4 ms at HZ = 250).
        pub timer_granularity: Option<SimTime> [Time] = None,
        /// The retransmission timer (RTO, tail loss probe, RACK's reorder timeout) fires as
        /// Linux's timer wheel runs it (`calc_wheel_index`, kernel/time/timer.c): one tick after
        /// its expiry when due within 63 ticks, also when armed on a tick (a timer handler
        /// rearming itself); later, at the next multiple of 8 ticks after it (of 64 beyond 504
        /// ticks), so a backed-off RTO of 408 ms at HZ = 250 fires 4 to 32 ms late, at one of
        /// the 32 ms boundaries every connection shares. Off: at the first tick at or after it.
        pub timer_wheel: bool [Plain] = false,
        /// How RTOmin combines with the RTT estimate.
        pub rto_formula: RtoFormula [Plain] = RtoFormula::Linux,
        /// How cwnd comes down during fast recovery.
        pub recovery_cwnd: RecoveryCwnd [Plain] = RecoveryCwnd::Prr,
        /// Whether an ACK grows cwnd before loss recovery looks at it: "grow_first" (Linux 2.6
        /// and 3.x: an ACK that also starts recovery first grows cwnd, so ssthresh is cut from
        /// the grown window, and the ACK that ends recovery does not grow it) or
        /// "recovery_first" (Linux 4.x on: the ACK that starts recovery does not grow cwnd; the
        /// one that ends it sets cwnd to ssthresh, then grows it).
        pub ack_order: AckOrder [Plain] = AckOrder::GrowFirst,
        /// When cwnd counts as limiting the sender (cwnd grows only then, apart from slow start
        /// below twice the most packets out): "last_send" (the last send attempt stopped at
        /// cwnd with data waiting) or "window" (Linux 6.0 on, `tcp_cwnd_validate`: a send of new
        /// data that filled cwnd makes the current window cwnd-limited until it is acknowledged,
        /// so the last window of a response keeps growing cwnd after the data runs out).
        pub cwnd_limited: CwndLimited [Plain] = CwndLimited::LastSend,
        /// Congestion control.
        pub congestion_control: CongestionControl [Plain] = CongestionControl::Reno,
        /// F-RTO (RFC 5682, SACK-enhanced, Linux's default): after a timeout, send new data
        /// rather than resend everything, and undo the window cut when data never retransmitted
        /// turns out to have arrived (the timeout was spurious).
        pub frto: bool [Plain] = true,
        /// When F-RTO starts (with `frto`): false, on every timeout that follows progress
        /// (fast recovery's included); true, as Linux 4.x on (RFC 5682 3.2): not on a timeout
        /// during fast recovery, but also on a recurring timeout of the same first
        /// unacknowledged byte.
        pub frto_recurring: bool [Plain] = false,
        /// The workload's hosts (servers and receiver) negotiate ECN (RFC 3168): their data is
        /// ECN-capable, switches mark instead of dropping where they can, and Reno/CUBIC halve
        /// (CUBIC: ×0.7) once per window on an echo. DCTCP requires it; when not given, on
        /// for dctcp and off otherwise.
        pub ecn: bool [Plain] = false,
        /// DCTCP's gain g for the marked fraction α (RFC 8257: 1/16).
        pub dctcp_g: f64 [Plain] = 1.0 / 16.0,
        /// RTO randomization policy.
        pub rto_randomization: RtoRandomization [Plain] = RtoRandomization::None,
        /// Δ: width of the randomization interval (uniform, TDA, FSA) or its unit (MAA).
        pub rto_delta: SimTime [Time] = 0,
        /// ω: growth of the interval per successive timeout (TDA; FSA's short flows).
        pub rto_omega: f64 [Plain] = 2.0,
        /// ω for FSA's long flows.
        pub rto_omega_long: f64 [Plain] = 4.0,
        /// σ of MAA's ⌊N/(σ·ln N)⌋.
        pub rto_sigma: f64 [Plain] = 1.0,
        /// FSA: a flow that has sent more than this many bytes is long.
        pub fsa_long_after: u64 [Size] = 100_000,
        /// Delayed-ACK timeout; 0 ("off") turns delayed ACKs off (every segment is acknowledged
        /// at once).
        pub delayed_ack: SimTime [TimeOrOff] = 0,
        /// SACK (RFC 2018) with RFC 6675 loss recovery; off means NewReno (RFC 6582).
        pub sack: bool [Plain] = true,
        /// RFC 6675's rescue retransmission (NextSeg rule 3): in fast recovery with nothing new
        /// to send and nothing deemed lost, resend the first segment above the highest one
        /// resent that is neither SACKed nor deemed lost, as the papers' kernels' forward
        /// retransmission did. Today's Linux resends only segments deemed lost
        /// (`tcp_xmit_retransmit_queue`): behind a deep queue the rescued segment's original is
        /// still queued, and once it is SACKed RACK deems lost everything sent before the
        /// rescue, a cascade of needless resends.
        pub rescue_retransmit: bool [Plain] = true,
        /// Limited transmit (RFC 3042).
        pub limited_transmit: bool [Plain] = true,
        /// Receiver's advertised window, bytes (at most 1 GiB, TCP's largest).
        pub receive_window: u64 [Size] = 4 * 1024 * 1024,
        /// Congestion-window restart policy.
        pub cwnd_restart: CwndRestart [Plain] = CwndRestart::Idle,
        /// Duplicate ACKs (or SACKed segments above a hole) that signal a loss.
        pub dupthresh: u32 [Plain] = 3,
        /// RACK-TLP (RFC 8985, Linux's default since 4.18): a segment is lost once a segment
        /// sent after it is delivered and an RTT plus a reordering window has passed; a tail
        /// loss probe (PTO ≈ 2·SRTT) repairs a lost tail without waiting for the RTO.
        pub rack_tlp: bool [Plain] = false,
        /// Linux's delayed-ACK engine: quick-ACK mode (every segment acknowledged at once for
        /// the first 16 segments, after an idle gap longer than both the RTO and the estimated
        /// interval between arrivals, `ato`, and after a loss), an ACK at once when the
        /// application reads a small pushed segment (a response's tail), and no ACK held longer
        /// than `ato` or RTOmin less one timer tick (Linux 6.7 on).
        pub quickack: bool [Plain] = false,
        /// SACK compression (Linux 4.19 on), a part of the delayed-ACK engine that applies only
        /// with `quickack` and `sack`: after three duplicate ACKs for the same hole,
        /// out-of-order data is acknowledged on a timer of 5% of the SRTT (at most 1 ms), up
        /// to 44 segments at a time, instead of segment by segment.
        pub sack_compression: bool [Plain] = false,
        /// RTT samples as Linux takes them (`tcp_ack_update_rtt`, since 3.12): where Karn's rule
        /// leaves an ACK without one, from the earliest newly SACKed segment never resent, else
        /// from the timestamp echo; so the RTO follows queueing delay through a recovery. Off:
        /// only cumulative ACKs of segments never resent (the papers' kernels).
        pub sack_rtt: bool [Plain] = false,
        /// HyStart for CUBIC (Ha and Rhee, as Linux's `tcp_cubic`): slow start ends when a
        /// round's ACK train spans half the minimum RTT or its RTT grows by an eighth.
        pub hystart: bool [Plain] = false,
        /// How CUBIC computes its increase: "per_ack" (RFC 9438 as written: the curve's target
        /// recomputed in real time on every ACK) or "linux" (`tcp_cubic.c`: in whole segments
        /// on the timer's jiffy, at most once per jiffy and, while cwnd is unchanged, every
        /// HZ/32 jiffies, 28 ms at HZ = 250, so at a window of 2 the window holds that long; a
        /// timeout forgets W_max and caps the increase at one segment per 20 ACKs).
        pub cubic_update: CubicUpdate [Plain] = CubicUpdate::PerAck,
        /// Pace every congestion control (Linux's fq or internal pacing): cwnd/SRTT × 2 in
        /// slow start, × 1.2 after. BBR always paces.
        pub pacing: bool [Plain] = false,
        /// A paced sender releases TSO-sized bursts (Linux's autosizing: about 1 ms of its
        /// pacing rate, 2 to 44 segments) back to back instead of single segments.
        pub tso: bool [Plain] = false,
    }
}

impl Tcp {
    /// The timers' tick (a jiffy): `timer_granularity`, else the RTT clock's granularity.
    pub fn timer_tick(&self) -> SimTime {
        self.timer_granularity.unwrap_or(self.clock_granularity)
    }
}

/// The rules of the `tcp` keys that need no other section, in the steps
/// [`Scenario::validate`] runs in its order.
impl Tcp {
    /// The frame's parts, checked first: the checks of buffers and bursts measure in frames.
    pub(super) fn validate_frame(&self) -> Result<(), ConfigError> {
        if self.mss == 0 || self.mss > 65_000 {
            return Err(bad(
                "tcp.mss",
                format!("must be 1..65000 bytes, got {}", self.mss),
            ));
        }
        if self.header_bytes > 1000 {
            return Err(bad(
                "tcp.header_bytes",
                "headers must be at most 1000 bytes",
            ));
        }
        if self.phy_overhead > 1000 {
            return Err(bad("tcp.phy_overhead", "must be at most 1000 bytes"));
        }
        Ok(())
    }

    /// The initial window and the retransmission timer: its bounds, its wheel and its
    /// randomization.
    pub(super) fn validate_timers(&self) -> Result<(), ConfigError> {
        if self.initial_window == 0 || self.initial_window > 10_000 {
            return Err(bad(
                "tcp.initial_window",
                format!("must be 1..10000 segments, got {}", self.initial_window),
            ));
        }
        if self.clock_granularity == 0 {
            return Err(bad(
                "tcp.clock_granularity",
                "must be positive (e.g. 1us, 1ms, 4ms)",
            ));
        }
        if self.rto_min == 0 {
            return Err(bad("tcp.rto_min", "must be positive"));
        }
        // The wheel's buckets are counted in jiffies: on a µs tick it would model nothing real.
        let tick = self.timer_tick();
        if self.timer_wheel && !(from_ms(1)..=from_ms(10)).contains(&tick) {
            return Err(bad(
                "tcp.timer_wheel",
                format!(
                    "Linux's timer wheel counts jiffies: it needs a timer tick of 1ms..10ms \
                     (tcp.timer_granularity, HZ = 1000..100), got {tick} ps; or set it false"
                ),
            ));
        }
        if self.rto_max < self.rto_min {
            return Err(bad("tcp.rto_max", "must be at least tcp.rto_min"));
        }
        if self.rto_max > AN_HOUR {
            return Err(bad("tcp.rto_max", "must be at most 3600s"));
        }
        if self.rto_initial == 0 || self.rto_initial > AN_HOUR {
            return Err(bad("tcp.rto_initial", "must be between 1ps and 3600s"));
        }
        self.validate_rto_randomization()
    }

    /// RTO randomization (Hafeez et al.): a positive interval that keeps every RTO positive,
    /// and the growth and σ of the adaptive policies.
    fn validate_rto_randomization(&self) -> Result<(), ConfigError> {
        if self.rto_randomization != RtoRandomization::None {
            if self.rto_delta == 0 {
                return Err(bad(
                    "tcp.rto_delta",
                    "randomization needs a positive interval Δ",
                ));
            }
            if self.rto_randomization != RtoRandomization::Maa && self.rto_delta > 2 * self.rto_min
            {
                return Err(bad(
                    "tcp.rto_delta",
                    format!(
                        "must be at most 2·tcp.rto_min ({} ps) so every RTO stays positive, got {} ps",
                        2 * self.rto_min,
                        self.rto_delta
                    ),
                ));
            }
        }
        for (name, v) in [
            ("tcp.rto_omega", self.rto_omega),
            ("tcp.rto_omega_long", self.rto_omega_long),
        ] {
            if !(1.0..=100.0).contains(&v) {
                return Err(bad(name, format!("must be between 1 and 100, got {v}")));
            }
        }
        if !(self.rto_sigma > 0.0 && self.rto_sigma <= 1000.0) {
            return Err(bad(
                "tcp.rto_sigma",
                format!("must be in (0, 1000], got {}", self.rto_sigma),
            ));
        }
        Ok(())
    }

    /// DCTCP needs ECN negotiated.
    pub(super) fn validate_ecn(&self) -> Result<(), ConfigError> {
        if self.congestion_control == CongestionControl::Dctcp && !self.ecn {
            return Err(bad(
                "tcp.ecn",
                "dctcp needs ECN: set tcp.ecn = true (or leave it unset)",
            ));
        }
        Ok(())
    }

    /// DCTCP's gain, the receive window and the duplicate-ACK threshold.
    pub(super) fn validate_window(&self) -> Result<(), ConfigError> {
        if !(self.dctcp_g > 0.0 && self.dctcp_g <= 1.0) {
            return Err(bad(
                "tcp.dctcp_g",
                format!("must be in (0, 1], got {}", self.dctcp_g),
            ));
        }
        if self.receive_window < self.mss {
            return Err(bad("tcp.receive_window", "must be at least one MSS"));
        }
        if self.receive_window > MAX_WINDOW {
            return Err(bad(
                "tcp.receive_window",
                format!(
                    "must be at most 1GiB (TCP's largest window, RFC 7323), got {} bytes",
                    self.receive_window
                ),
            ));
        }
        if self.dupthresh == 0 || self.dupthresh > 1000 {
            return Err(bad("tcp.dupthresh", "must be 1..1000"));
        }
        Ok(())
    }
}

impl Scenario {
    /// DCTCP needs the switches to mark: an ECN threshold, or RED that marks.
    pub(super) fn validate_dctcp_marking(&self) -> Result<(), ConfigError> {
        let (c, t) = (&self.tcp, &self.topology);
        let marks = t.ecn_threshold != QueueLimit::UNLIMITED
            || (t.red_min.is_some() && t.red_ecn)
            || t.ecn_kmin.is_some();
        if c.congestion_control == CongestionControl::Dctcp && !marks {
            return Err(bad(
                "tcp.congestion_control",
                "dctcp needs ECN marking at the switch: set topology.ecn_threshold (e.g. \"30KB\") or RED with topology.red_ecn",
            ));
        }
        Ok(())
    }
}
