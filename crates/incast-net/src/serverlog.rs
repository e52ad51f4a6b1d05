//! The block server's log: never blocks the event loop.
//!
//! Lines go through a bounded queue to a thread of their own that calls the sink (stderr by
//! default). When the sink is slow or stuck (stderr a pipe nobody drains) the queue fills and
//! further lines are dropped and counted; the next line that gets through says how many. Each
//! reason is rate-limited: at most [`LINES_PER_SECOND`] lines a second, then one summary line
//! a second saying how many more there were. The loop only formats the lines it will send.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, SyncSender, TrySendError};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Why a line is logged; each reason has its own rate limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// Turned away at the per-peer cap.
    Busy,
    /// Closed to make room for a new connection at `--max-conns`.
    Evicted,
    /// Refused a malformed, wrong-version or too-large request.
    Refused,
    /// A peer outside `--allow`.
    NotAllowed,
    /// A request without the token or with another one.
    Unauthorized,
    /// Closed for idleness.
    Idle,
    /// Closed because an answer made no progress.
    WriteTimeout,
    /// Anything else (accept or socket errors).
    Other,
}

const REASONS: usize = 8;

impl Reason {
    fn index(self) -> usize {
        self as usize
    }

    fn what(self) -> &'static str {
        match self {
            Reason::Busy => "turned away at --max-conns-per-peer",
            Reason::Evicted => "evicted at --max-conns",
            Reason::Refused => "refused requests",
            Reason::NotAllowed => "outside --allow",
            Reason::Unauthorized => "without the token",
            Reason::Idle => "closed idle",
            Reason::WriteTimeout => "closed not reading",
            Reason::Other => "other",
        }
    }
}

/// Lines per reason per second before the rest are summarized.
pub const LINES_PER_SECOND: u32 = 5;
/// Lines queued for the sink; more are dropped (and counted).
pub const QUEUE: usize = 256;

#[derive(Clone, Copy)]
struct Window {
    start: Option<Instant>,
    shown: u32,
    suppressed: u64,
}

/// The loop's side of the log (owned by the loop: no lock).
pub struct Log {
    tx: SyncSender<String>,
    windows: [Window; REASONS],
    /// Lines dropped because the queue was full, not yet reported.
    unreported: u64,
    /// Lines dropped in all (shared with the server's counters).
    dropped: Arc<AtomicU64>,
}

impl Log {
    /// Start the writer thread calling `sink` for each line.
    pub fn start(sink: Arc<dyn Fn(&str) + Send + Sync>, dropped: Arc<AtomicU64>) -> Log {
        let (tx, rx) = sync_channel::<String>(QUEUE);
        // Detached on purpose: a sink stuck in write(2) must not hold up the server's stop;
        // the thread ends when the loop drops its sender and the queue is drained.
        let spawned = std::thread::Builder::new()
            .name("serve-log".into())
            .spawn(move || {
                while let Ok(line) = rx.recv() {
                    sink(&line);
                }
            });
        // No thread (out of them): every line is then dropped and counted rather than block.
        drop(spawned);
        Log {
            tx,
            windows: [Window {
                start: None,
                shown: 0,
                suppressed: 0,
            }; REASONS],
            unreported: 0,
            dropped,
        }
    }

    /// Log `line()` for `reason` at `now`, unless its rate is exceeded or the queue is full.
    pub fn line(&mut self, reason: Reason, now: Instant, line: impl FnOnce() -> String) {
        self.summarize(now);
        let w = &mut self.windows[reason.index()];
        if w.start.is_none() {
            w.start = Some(now);
        }
        if w.shown >= LINES_PER_SECOND {
            w.suppressed += 1;
            return;
        }
        w.shown += 1;
        self.send(line());
    }

    /// Close the windows older than a second: one summary line for each that suppressed any.
    pub fn summarize(&mut self, now: Instant) {
        for (k, reason) in REASON_LIST.iter().enumerate() {
            let w = self.windows[k];
            let Some(start) = w.start else { continue };
            if now.duration_since(start) < Duration::from_secs(1) {
                continue;
            }
            self.windows[k] = Window {
                start: None,
                shown: 0,
                suppressed: 0,
            };
            if w.suppressed > 0 {
                let what = reason.what();
                self.send(format!(
                    "{} more {what} in the last {:.1}s (not logged one by one)",
                    w.suppressed,
                    now.duration_since(start).as_secs_f64()
                ));
            }
        }
    }

    fn send(&mut self, mut line: String) {
        if self.unreported > 0 {
            line = format!(
                "{line} [{} earlier log lines dropped: the log is not being read]",
                self.unreported
            );
        }
        match self.tx.try_send(line) {
            Ok(()) => self.unreported = 0,
            Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {
                self.unreported += 1;
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

const REASON_LIST: [Reason; REASONS] = [
    Reason::Busy,
    Reason::Evicted,
    Reason::Refused,
    Reason::NotAllowed,
    Reason::Unauthorized,
    Reason::Idle,
    Reason::WriteTimeout,
    Reason::Other,
];

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Condvar, Mutex};

    type Sink = Arc<dyn Fn(&str) + Send + Sync>;

    fn collecting() -> (Arc<Mutex<Vec<String>>>, Sink) {
        let got = Arc::new(Mutex::new(Vec::new()));
        let g = got.clone();
        (
            got,
            Arc::new(move |l: &str| g.lock().unwrap().push(l.into())),
        )
    }

    fn wait_len(got: &Mutex<Vec<String>>, n: usize) {
        let t = Instant::now();
        while got.lock().unwrap().len() < n {
            assert!(t.elapsed() < Duration::from_secs(10), "{:?}", got.lock());
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    #[test]
    fn a_flood_is_one_summary_line_a_second_per_reason() {
        let (got, sink) = collecting();
        let mut log = Log::start(sink, Arc::new(AtomicU64::new(0)));
        let t0 = Instant::now();
        for i in 0..1000 {
            log.line(Reason::Evicted, t0, || format!("evicted {i}"));
            log.line(Reason::Idle, t0, || format!("idle {i}"));
        }
        // Just before the second is over: nothing summarized yet.
        log.summarize(t0 + Duration::from_millis(999));
        wait_len(&got, 10);
        assert_eq!(got.lock().unwrap().len(), 10);
        log.summarize(t0 + Duration::from_secs(1));
        wait_len(&got, 12);
        let lines = got.lock().unwrap().clone();
        assert!(
            lines.contains(
                &"995 more evicted at --max-conns in the last 1.0s (not logged one by one)"
                    .to_string()
            ),
            "{lines:?}"
        );
        assert!(lines.iter().any(|l| l.starts_with("995 more closed idle")));
        // A new second starts afresh.
        log.line(Reason::Evicted, t0 + Duration::from_secs(2), || {
            "again".into()
        });
        wait_len(&got, 13);
    }

    #[test]
    fn a_stuck_sink_drops_and_counts_and_never_blocks() {
        let gate = Arc::new((Mutex::new(false), Condvar::new()));
        let g = gate.clone();
        let (got, inner) = collecting();
        let sink: Sink = Arc::new(move |l: &str| {
            let (m, c) = &*g;
            let mut open = m.lock().unwrap();
            while !*open {
                open = c.wait(open).unwrap();
            }
            inner(l);
        });
        let dropped = Arc::new(AtomicU64::new(0));
        let mut log = Log::start(sink, dropped.clone());
        let t0 = Instant::now();
        let start = Instant::now();
        // Every line in its own second so none is rate-limited: only the queue drops them.
        for i in 0..(QUEUE as u64 + 100) {
            log.line(Reason::Other, t0 + Duration::from_secs(2 * i), || {
                format!("l{i}")
            });
        }
        assert!(start.elapsed() < Duration::from_secs(2), "the loop blocked");
        // The writer holds one line in the sink, the queue QUEUE more; the rest are dropped.
        let d = dropped.load(Ordering::Relaxed);
        assert!((99..=100).contains(&d), "{d} dropped");
        let (m, c) = &*gate;
        *m.lock().unwrap() = true;
        c.notify_all();
        wait_len(&got, QUEUE);
        std::thread::sleep(Duration::from_millis(50));
        log.line(Reason::Other, t0 + Duration::from_secs(10_000), || {
            "after".into()
        });
        // QUEUE lines, one more if the writer had taken one before the gate, then "after".
        wait_len(&got, QUEUE + 1 + (100 - d as usize));
        let last = got.lock().unwrap().last().unwrap().clone();
        assert!(last.contains("earlier log lines dropped"), "{last}");
    }
}
