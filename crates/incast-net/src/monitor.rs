//! `incast monitor`: a host's interface counters at a fixed interval (1 ms, 100 µs) and its
//! TCP counters once a second, as an operator watches a server for incast.
//!
//! The sampler is one thread on absolute deadlines (start + k·interval, so lateness never
//! accumulates) with the kernel's timer slack cut to 1 ns; each sample records when it was
//! actually taken, so rates use the real time between samples and the jitter is measured,
//! not assumed. It reads `/proc/thread-self/net/dev` with one `pread` on a file kept open:
//! the view of the thread's own network namespace, which `--netns` switches with
//! `setns(2)` before the first sample. TCP counters come from `/proc/thread-self/net/netstat`
//! (TcpExt) and `.../snmp` (Tcp) of the same namespace.
//!
//! Counters are 64-bit in the kernel, but some drivers keep 32-bit ones: a counter that goes
//! back from below 2^32 is taken as a 32-bit wrap (and said once); one that goes back from
//! above is a reset, and that interval is skipped (and said). An interface that disappears
//! ends the run with what was sampled.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What to watch.
#[derive(Debug, Clone)]
pub struct MonitorConfig {
    /// Interface name.
    pub iface: String,
    /// Network namespace (a name under /var/run/netns, as `ip netns` makes), if any.
    pub netns: Option<String>,
    /// Sampling interval.
    pub interval: Duration,
    /// How long to run; `None`: until stopped.
    pub duration: Option<Duration>,
}

/// One interval's counters (deltas over the interval ending at `t_ns`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sample {
    /// When the sample was taken, nanoseconds from the start.
    pub t_ns: u64,
    /// How late it was taken after its deadline, nanoseconds.
    pub late_ns: u64,
    /// Length of the interval it closes (time since the previous sample), nanoseconds.
    pub dt_ns: u64,
    /// Bytes received and sent over the interval.
    pub rx_bytes: u64,
    /// Bytes sent.
    pub tx_bytes: u64,
    /// Packets received.
    pub rx_packets: u64,
    /// Packets sent.
    pub tx_packets: u64,
    /// Packets dropped, receive and send side (the interface's and its queue's).
    pub drops: u64,
}

/// The kernel's TCP counters at one moment (totals since boot, for the namespace).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TcpCounters {
    /// When read, nanoseconds from the start.
    pub t_ns: u64,
    /// TcpExt TCPTimeouts: retransmission timeouts.
    pub timeouts: u64,
    /// TcpExt TCPLossProbes: tail-loss probes sent.
    pub loss_probes: u64,
    /// TcpExt TCPSpuriousRTOs.
    pub spurious_rtos: u64,
    /// Tcp RetransSegs.
    pub retrans_segs: u64,
    /// Tcp OutSegs.
    pub out_segs: u64,
    /// TcpExt TCPDeliveredCE: segments delivered with CE marks (ECN).
    pub delivered_ce: u64,
    /// TcpExt TCPSackRecovery plus TCPSACKReneging-free fast recoveries (TCPRenoRecovery).
    pub recoveries: u64,
}

/// Why the monitor stopped or could not start; each is one line.
#[derive(Debug, Clone, PartialEq)]
pub enum MonitorError {
    /// No such interface (at the start).
    NoInterface(String),
    /// The interface went away mid-run.
    Disappeared {
        /// Interface name.
        iface: String,
        /// Seconds into the run.
        at_s: f64,
    },
    /// The namespace cannot be entered.
    Netns(String),
    /// Reading the counters failed.
    Read(String),
}

impl std::fmt::Display for MonitorError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MonitorError::NoInterface(i) => write!(f, "--iface: no interface {i:?} here"),
            MonitorError::Disappeared { iface, at_s } => write!(
                f,
                "interface {iface} disappeared {at_s:.3} s into the run; the samples before it are kept"
            ),
            MonitorError::Netns(m) => write!(f, "--netns: {m}"),
            MonitorError::Read(m) => write!(f, "reading counters: {m}"),
        }
    }
}

/// The interface's cumulative counters, as /proc/net/dev gives them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DevCounters {
    /// rx bytes, packets, drops; tx bytes, packets, drops.
    pub rx_bytes: u64,
    /// Packets received.
    pub rx_packets: u64,
    /// Received packets dropped.
    pub rx_drops: u64,
    /// Bytes sent.
    pub tx_bytes: u64,
    /// Packets sent.
    pub tx_packets: u64,
    /// Packets dropped on the way out.
    pub tx_drops: u64,
}

/// The counters of `iface` in the text of /proc/net/dev, if it is there.
pub fn parse_dev(text: &str, iface: &str) -> Option<DevCounters> {
    for line in text.lines().skip(2) {
        let Some((name, rest)) = line.split_once(':') else {
            continue;
        };
        if name.trim() != iface {
            continue;
        }
        let v: Vec<u64> = rest
            .split_ascii_whitespace()
            .map(|x| x.parse().unwrap_or(0))
            .collect();
        if v.len() < 12 {
            return None;
        }
        return Some(DevCounters {
            rx_bytes: v[0],
            rx_packets: v[1],
            rx_drops: v[3],
            tx_bytes: v[8],
            tx_packets: v[9],
            tx_drops: v[11],
        });
    }
    None
}

/// How a counter moved between two readings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delta {
    /// It grew by this much.
    Grew(u64),
    /// It went back from below 2^32: a 32-bit counter wrapped; this is what it grew by.
    Wrapped(u64),
    /// It went back from above 2^32: the counters were reset.
    Reset,
}

/// The change of a counter from `old` to `new`.
pub fn delta(old: u64, new: u64) -> Delta {
    if new >= old {
        Delta::Grew(new - old)
    } else if old <= u32::MAX as u64 {
        Delta::Wrapped(new + (1u64 << 32) - old)
    } else {
        Delta::Reset
    }
}

/// The TCP counters in the text of /proc/net/netstat and /proc/net/snmp.
pub fn parse_tcp(netstat: &str, snmp: &str) -> TcpCounters {
    let mut c = TcpCounters::default();
    for (text, prefix) in [(netstat, "TcpExt:"), (snmp, "Tcp:")] {
        let mut lines = text.lines().filter(|l| l.starts_with(prefix));
        let (Some(names), Some(values)) = (lines.next(), lines.next()) else {
            continue;
        };
        for (k, v) in names
            .split_ascii_whitespace()
            .zip(values.split_ascii_whitespace())
            .skip(1)
        {
            let v: u64 = v.parse().unwrap_or(0);
            match k {
                "TCPTimeouts" => c.timeouts = v,
                "TCPLossProbes" => c.loss_probes = v,
                "TCPSpuriousRTOs" => c.spurious_rtos = v,
                "TCPDeliveredCE" => c.delivered_ce = v,
                "TCPSackRecovery" | "TCPRenoRecovery" => c.recoveries += v,
                "RetransSegs" => c.retrans_segs = v,
                "OutSegs" => c.out_segs = v,
                _ => {}
            }
        }
    }
    c
}

/// What the sampler has gathered since the last [`Monitor::poll`].
#[derive(Debug, Default)]
pub struct Batch {
    /// Interface samples.
    pub samples: Vec<Sample>,
    /// TCP counters read (about once a second).
    pub tcp: Vec<TcpCounters>,
    /// One-line notes (a wrapped or reset counter).
    pub notes: Vec<String>,
    /// The sampler has stopped; with the error that stopped it, if any.
    pub finished: bool,
    /// Why it stopped, if not by its duration or by [`Monitor::stop`].
    pub error: Option<MonitorError>,
    /// CPU time the sampler thread used, nanoseconds (at the end).
    pub cpu_ns: u64,
    /// The sampler runs at a real-time priority (granted to root).
    pub realtime: bool,
}

/// A running monitor.
#[derive(Debug)]
pub struct Monitor {
    shared: Arc<Mutex<Batch>>,
    stop: Arc<AtomicBool>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Monitor {
    /// Start sampling; an interface or namespace that is not there is an error now.
    pub fn start(cfg: MonitorConfig) -> Result<Monitor, MonitorError> {
        let shared = Arc::new(Mutex::new(Batch::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = std::sync::mpsc::channel();
        let (sh, st) = (shared.clone(), stop.clone());
        let handle = std::thread::spawn(move || {
            let mut s = match Sampler::open(&cfg) {
                Ok(s) => {
                    let _ = tx.send(Ok(()));
                    s
                }
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            };
            s.run(&cfg, &sh, &st);
        });
        match rx.recv() {
            Ok(Ok(())) => Ok(Monitor {
                shared,
                stop,
                handle: Some(handle),
            }),
            Ok(Err(e)) => {
                let _ = handle.join();
                Err(e)
            }
            Err(_) => Err(MonitorError::Read("the sampler thread died".into())),
        }
    }

    /// What was gathered since the last poll.
    pub fn poll(&self) -> Batch {
        std::mem::take(&mut *self.shared.lock().expect("monitor lock"))
    }

    /// Stop sampling; the last batch.
    pub fn stop(mut self) -> Batch {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
        self.poll()
    }
}

/// The sampler's open files and last readings.
struct Sampler {
    dev: File,
    netstat: File,
    snmp: File,
    buf: Vec<u8>,
    iface: String,
}

fn read_at(f: &File, buf: &mut Vec<u8>) -> std::io::Result<usize> {
    let mut n = 0;
    loop {
        if n == buf.len() {
            buf.resize(buf.len() * 2, 0);
        }
        let k = f.read_at(&mut buf[n..], n as u64)?;
        if k == 0 {
            return Ok(n);
        }
        n += k;
    }
}

fn enter_netns(name: &str) -> Result<(), MonitorError> {
    crate::netns::enter(name).map_err(|e| MonitorError::Netns(e.to_string()))
}

fn cpu_time_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec out-pointer and a clock id the kernel knows.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

impl Sampler {
    fn open(cfg: &MonitorConfig) -> Result<Sampler, MonitorError> {
        if cfg!(not(target_os = "linux")) {
            return Err(MonitorError::Read(
                "the monitor reads /proc/thread-self/net, which only Linux has".into(),
            ));
        }
        if let Some(ns) = &cfg.netns {
            enter_netns(ns)?;
        }
        // /proc/thread-self: this thread's namespace, which setns just changed.
        let open = |p: &str| {
            File::open(format!("/proc/thread-self/net/{p}"))
                .map_err(|e| MonitorError::Read(format!("/proc/thread-self/net/{p}: {e}")))
        };
        let mut s = Sampler {
            dev: open("dev")?,
            netstat: open("netstat")?,
            snmp: open("snmp")?,
            buf: vec![0; 1 << 14],
            iface: cfg.iface.clone(),
        };
        if s.dev_counters()?.is_none() {
            return Err(MonitorError::NoInterface(cfg.iface.clone()));
        }
        // SAFETY: prctl with an integer argument; the slack lets sleeps end on time.
        #[cfg(target_os = "linux")]
        unsafe {
            libc::prctl(libc::PR_SET_TIMERSLACK, 1u64)
        };
        Ok(s)
    }

    /// Real-time priority is asked for on Linux only.
    #[cfg(not(target_os = "linux"))]
    fn realtime() -> bool {
        false
    }

    /// Ask for a real-time priority (SCHED_FIFO 10, as cyclictest does) so that a busy
    /// machine's other work does not delay the samples; whether it was granted (root).
    #[cfg(target_os = "linux")]
    fn realtime() -> bool {
        let param = libc::sched_param { sched_priority: 10 };
        // SAFETY: pid 0 is this thread; a valid sched_param.
        unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) == 0 }
    }

    fn dev_counters(&mut self) -> Result<Option<DevCounters>, MonitorError> {
        let n = read_at(&self.dev, &mut self.buf).map_err(|e| MonitorError::Read(e.to_string()))?;
        let text = std::str::from_utf8(&self.buf[..n]).unwrap_or("");
        Ok(parse_dev(text, &self.iface))
    }

    fn tcp_counters(&mut self) -> TcpCounters {
        let mut b = std::mem::take(&mut self.buf);
        let n = read_at(&self.netstat, &mut b).unwrap_or(0);
        let netstat = String::from_utf8_lossy(&b[..n]).into_owned();
        let n = read_at(&self.snmp, &mut b).unwrap_or(0);
        let snmp = String::from_utf8_lossy(&b[..n]).into_owned();
        self.buf = b;
        parse_tcp(&netstat, &snmp)
    }

    fn run(&mut self, cfg: &MonitorConfig, shared: &Mutex<Batch>, stop: &AtomicBool) {
        shared.lock().expect("monitor lock").realtime = Sampler::realtime();
        let interval = cfg.interval.as_nanos().max(1) as u64;
        let start = Instant::now();
        let cpu0 = cpu_time_ns();
        let mut last = match self.dev_counters() {
            Ok(Some(c)) => c,
            _ => DevCounters::default(),
        };
        let mut last_t = 0u64;
        let mut tcp = self.tcp_counters();
        shared.lock().expect("monitor lock").tcp.push(tcp);
        let mut next_tcp = 1_000_000_000u64;
        let mut pending = Vec::with_capacity(4096);
        let mut flushed = Instant::now();
        let mut wrapped_said = false;
        let mut k = 1u64;
        let error = loop {
            if stop.load(Ordering::Relaxed) {
                break None;
            }
            let deadline = k * interval;
            if cfg.duration.is_some_and(|d| deadline > d.as_nanos() as u64) {
                break None;
            }
            let now = start.elapsed().as_nanos() as u64;
            if now < deadline {
                std::thread::sleep(Duration::from_nanos(deadline - now));
            }
            let c = match self.dev_counters() {
                Ok(Some(c)) => c,
                Ok(None) => {
                    break Some(MonitorError::Disappeared {
                        iface: cfg.iface.clone(),
                        at_s: start.elapsed().as_secs_f64(),
                    })
                }
                Err(e) => break Some(e),
            };
            let t = start.elapsed().as_nanos() as u64;
            // Skip the deadlines this sample overran (its interval is longer, dt says so).
            k = t / interval + 1;
            let mut reset = false;
            let mut d = |o: u64, n: u64| match delta(o, n) {
                Delta::Grew(x) => x,
                Delta::Wrapped(x) => {
                    if !wrapped_said {
                        wrapped_said = true;
                        pending_note(
                            shared,
                            format!(
                                "a 32-bit counter of {} wrapped at {:.3} s; counted across the wrap",
                                cfg.iface,
                                t as f64 / 1e9
                            ),
                        );
                    }
                    x
                }
                Delta::Reset => {
                    reset = true;
                    0
                }
            };
            let s = Sample {
                t_ns: t,
                late_ns: t.saturating_sub(deadline),
                dt_ns: t - last_t,
                rx_bytes: d(last.rx_bytes, c.rx_bytes),
                tx_bytes: d(last.tx_bytes, c.tx_bytes),
                rx_packets: d(last.rx_packets, c.rx_packets),
                tx_packets: d(last.tx_packets, c.tx_packets),
                drops: d(last.rx_drops, c.rx_drops) + d(last.tx_drops, c.tx_drops),
            };
            if reset {
                pending_note(
                    shared,
                    format!(
                        "the counters of {} went back at {:.3} s (reset); that interval is skipped",
                        cfg.iface,
                        t as f64 / 1e9
                    ),
                );
            } else {
                pending.push(s);
            }
            last = c;
            last_t = t;
            if t >= next_tcp {
                tcp = self.tcp_counters();
                tcp.t_ns = t;
                next_tcp += 1_000_000_000;
                shared.lock().expect("monitor lock").tcp.push(tcp);
            }
            if flushed.elapsed() >= Duration::from_millis(50) {
                shared
                    .lock()
                    .expect("monitor lock")
                    .samples
                    .append(&mut pending);
                flushed = Instant::now();
            }
        };
        let mut tail = self.tcp_counters();
        tail.t_ns = start.elapsed().as_nanos() as u64;
        let mut b = shared.lock().expect("monitor lock");
        b.samples.append(&mut pending);
        if tail != tcp {
            b.tcp.push(tail);
        }
        b.finished = true;
        b.error = error;
        b.cpu_ns = cpu_time_ns() - cpu0;
    }
}

fn pending_note(shared: &Mutex<Batch>, note: String) {
    shared.lock().expect("monitor lock").notes.push(note);
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEV: &str = "Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo: 1000      10    0    0    0     0          0         0     2000      20    0    0    0     0       0          0
  eth0: 123456789 100    0    7    0     0          0         0  987654321     200    0    3    0     0       0          0
";

    #[test]
    fn dev_lines_are_read_by_name_and_a_missing_one_is_none() {
        let c = parse_dev(DEV, "eth0").unwrap();
        assert_eq!((c.rx_bytes, c.rx_packets, c.rx_drops), (123456789, 100, 7));
        assert_eq!((c.tx_bytes, c.tx_packets, c.tx_drops), (987654321, 200, 3));
        assert_eq!(parse_dev(DEV, "lo").unwrap().tx_bytes, 2000);
        assert_eq!(parse_dev(DEV, "eth1"), None);
        assert_eq!(parse_dev(DEV, "eth"), None, "a prefix is not the name");
    }

    #[test]
    fn a_32_bit_wrap_counts_across_it_and_a_reset_is_said() {
        assert_eq!(delta(10, 25), Delta::Grew(15));
        assert_eq!(delta(u32::MAX as u64 - 4, 5), Delta::Wrapped(10));
        assert_eq!(delta(1 << 40, 5), Delta::Reset);
    }

    #[test]
    fn tcp_counters_by_name() {
        let netstat = "TcpExt: SyncookiesSent TCPTimeouts TCPLossProbes TCPSpuriousRTOs TCPSackRecovery TCPDeliveredCE\nTcpExt: 0 17 4 1 3 9\nIpExt: InNoRoutes\nIpExt: 0\n";
        let snmp = "Tcp: RtoAlgorithm RtoMin RetransSegs OutSegs\nTcp: 1 200 42 1000\n";
        let c = parse_tcp(netstat, snmp);
        assert_eq!(
            (
                c.timeouts,
                c.loss_probes,
                c.spurious_rtos,
                c.recoveries,
                c.delivered_ce
            ),
            (17, 4, 1, 3, 9)
        );
        assert_eq!((c.retrans_segs, c.out_segs), (42, 1000));
    }

    #[test]
    fn loopback_is_sampled_on_time_and_a_missing_interface_is_one_error() {
        let e = Monitor::start(MonitorConfig {
            iface: "no-such-if0".into(),
            netns: None,
            interval: Duration::from_millis(1),
            duration: Some(Duration::from_millis(10)),
        })
        .unwrap_err();
        assert_eq!(e.to_string(), "--iface: no interface \"no-such-if0\" here");
        let m = Monitor::start(MonitorConfig {
            iface: "lo".into(),
            netns: None,
            interval: Duration::from_millis(1),
            duration: Some(Duration::from_millis(200)),
        })
        .unwrap();
        // Wait for the sampler's own end (a loaded machine may be slow to schedule it).
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while !m.shared.lock().unwrap().finished && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        let b = m.stop();
        assert!(b.finished && b.error.is_none());
        assert!(b.samples.len() >= 150, "{} samples", b.samples.len());
        assert!(!b.tcp.is_empty());
        let dt: u64 = b.samples.iter().map(|s| s.dt_ns).sum();
        assert!((190_000_000..=210_000_000).contains(&dt), "{dt}");
    }
}
