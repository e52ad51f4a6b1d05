//! The engine: the event queue (a 4-ary min-heap ordered by (time, insertion sequence), so
//! simultaneous events run in the order they were scheduled and every run of a scenario is
//! identical), lazy timers, why a run stops, and the driver loop ([`driver`]) that runs one
//! transport ([`driver::Transport`]) over the network ([`crate::net::fabric`]). It names no
//! transport and no workload.

use thiserror::Error;

pub mod driver;

use crate::config::ConfigError;
use crate::topology::LinkId;
use crate::units::{to_secs, SimTime};

/// Why a run stopped without a report.
#[derive(Debug, Error)]
pub enum SimError {
    /// The scenario is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// `run.max_events` was reached.
    #[error("stopped after {events} events (run.max_events = {limit}) at simulated time {at_s:.6}s with the workload unfinished; raise run.max_events or shrink the scenario")]
    EventBudget {
        /// Events processed.
        events: u64,
        /// The budget.
        limit: u64,
        /// Simulated time reached, seconds.
        at_s: f64,
    },
    /// `run.max_time` was reached.
    #[error("simulated time reached run.max_time ({limit_s}s) with the workload unfinished; raise run.max_time")]
    TimeBudget {
        /// The budget, seconds.
        limit_s: f64,
    },
    /// A bug: an invariant of the engine does not hold.
    #[error("internal simulator error: {0}")]
    Internal(String),
}

/// The next event, or why the run cannot go on: a budget is spent, nothing is pending while
/// `unfinished`, or time would go backwards. Inlined into the driver loop, the reasons to stop
/// out of line: as a call it cost ~10% of the 8000-sender NDP incast's samples in moving its
/// arguments and its result through the stack.
#[inline(always)]
pub(crate) fn next_event(
    events: &mut EventQueue,
    run: &crate::config::Run,
    processed: u64,
    now: SimTime,
    unfinished: &str,
) -> Result<(SimTime, Event), SimError> {
    if processed >= run.max_events {
        return Err(stopped(None, run, processed, now, unfinished));
    }
    match events.pop() {
        Some((t, ev)) if t >= now && t <= run.max_time => Ok((t, ev)),
        popped => Err(stopped(
            Some(popped.map(|(t, _)| t)),
            run,
            processed,
            now,
            unfinished,
        )),
    }
}

/// Why [`next_event`] stops: the event budget is spent (`popped` is `None`: nothing was
/// popped), or the time of what was popped (`Some(None)`: nothing was pending) is not
/// within `now..=run.max_time`.
#[cold]
#[inline(never)]
fn stopped(
    popped: Option<Option<SimTime>>,
    run: &crate::config::Run,
    processed: u64,
    now: SimTime,
    unfinished: &str,
) -> SimError {
    match popped {
        None => SimError::EventBudget {
            events: processed,
            limit: run.max_events,
            at_s: to_secs(now),
        },
        Some(None) => SimError::Internal(format!("no pending events but {unfinished}")),
        Some(Some(t)) if t < now => SimError::Internal(format!("time went backwards: {t} < {now}")),
        Some(Some(_)) => SimError::TimeBudget {
            limit_s: to_secs(run.max_time),
        },
    }
}

/// Something that happens at a time. Small and `Copy`: the heap moves these around a lot.
/// The network's own events name links; a transport's and an application's are opaque
/// numbers that only they read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// A link finished serializing the packet at the head of its queue.
    TxDone(LinkId),
    /// The packet at the head of a link's pipe (named, so that it can be fetched into the
    /// cache before its event runs) reaches the far end; with the link it goes on to, when
    /// the fabric knew it (see [`crate::ids::Next`]).
    Arrive(LinkId, crate::net::PktId, crate::ids::Next),
    /// A PFC pause (true) or resume (false) reaches the sending end of a link.
    Pause(LinkId, bool),
    /// A transport's timer: its agent (the transport's numbering), what kind of timer (the
    /// transport's numbering) and its generation (see [`Timer`]).
    Agent(u32, u8, u32),
    /// An application's timer (see [`crate::app::effect::Token`]).
    App(crate::app::effect::Token),
    /// The workload starts.
    Start,
    /// Take a time-series sample.
    Sample,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    /// (time << 64) | insertion sequence: unique, so any correct heap pops the same order.
    key: u128,
    event: Event,
}

/// Children per node of the heap. A 4-ary heap is half as deep as a binary one and a node's
/// four 32-byte children share two cache lines. In the 8192-host EQDS 1000:1 run (3 M events,
/// memory-bound) taking the next event fell from 21% to 17% of the samples; the run's whole
/// CPU time did not move measurably on a shared machine.
const ARITY: usize = 4;

/// Width of a bucket of the timing wheel, picoseconds (2^27: about 134 µs).
const BUCKET_SHIFT: u32 = 27;
/// Buckets of the wheel (2^12 × 134 µs: about 550 ms ahead, past a 200 ms RTO and its
/// first doubling). Events further ahead go to the heap.
const BUCKETS: u64 = 1 << 12;
/// Width of a fine bucket, picoseconds (2^18: about 262 ns). A thousand-host cluster runs a
/// few hundred events a microsecond, and events due within the bucket being popped go to the
/// heap: at 2^20 a fifth of its events passed through the heap, and 2^18 took 3.5% of the
/// instructions off its run (cachegrind), 1-2% onto the 20-host cluster's and the 8000-sender
/// NDP incast's; 2^17 took 0.5% more off the large cluster and put 3-5% on the others.
const FINE_SHIFT: u32 = 18;
/// Fine buckets: one wheel bucket's worth.
const FINE: u64 = 1 << (BUCKET_SHIFT - FINE_SHIFT);
/// Entries a poured fine bucket keeps room for (32 KB): a thousand-host cluster runs a few
/// hundred events a microsecond; the buffer of a bucket that took a larger burst (8000 NDP
/// senders starting together) is freed, else the 512 buckets would each keep their largest.
const FINE_KEEP: usize = 1024;

/// Pending events in deterministic order: a 4-ary heap of the events due soon and, beside it,
/// a timing wheel of those due later (Varghese and Lauck, "Hashed and hierarchical timing
/// wheels", SOSP 1987). A key-value cluster of a thousand hosts keeps hundreds of thousands of
/// TCP timers pending (a lazily cancelled RTO stays scheduled for its 200 ms), and in one heap
/// every event paid their depth in cache misses. An event due in a bucket not yet reached waits
/// in that bucket, unordered; a bucket is poured into the heap, each event with the key it got
/// when scheduled, before the heap's earliest event can reach the bucket's start. So the heap
/// holds every event earlier than any in the wheel and events pop in exactly the (time,
/// insertion) order of one heap. A wheel bucket is poured through a second, fine level of
/// 262 ns buckets: a thousand-host cluster runs ~50,000 events per wheel bucket, and a heap
/// that took a bucket whole held thousands of events (six levels, out of the core's first
/// cache) where a fine bucket holds tens.
///
/// A fine bucket is not poured into the heap but sorted, whole, into a run that pops from its
/// front; the heap keeps only the events scheduled into a fine bucket already poured (and
/// those past the wheel), and a pop takes the earlier of the run's front and the heap's top.
/// A fine bucket's events were each sifted into the heap and out again (a 4-ary heap of ~340
/// events in the 8000-sender NDP incast): one sort of the bucket costs a third of that.
#[derive(Debug)]
pub struct EventQueue {
    heap: Vec<Entry>,
    seq: u64,
    /// The wheel's buckets; bucket `b` (absolute: time >> BUCKET_SHIFT) is `wheel[b % BUCKETS]`.
    wheel: Vec<Vec<Entry>>,
    /// First bucket not yet poured into the heap: the wheel holds only events of buckets
    /// `cursor..cursor + BUCKETS`.
    cursor: u64,
    /// Events in the wheel.
    in_wheel: usize,
    /// Buffers of poured buckets, for the next bucket that fills: a bucket slot comes round
    /// every 550 ms and would otherwise keep the largest buffer it ever needed.
    spare: Vec<Vec<Entry>>,
    /// The fine buckets; fine bucket `f` (time >> FINE_SHIFT) is `fine[f % FINE]`. They hold
    /// only events of buckets before `cursor` (so earlier than any in the wheel), of fine
    /// buckets `fine_cursor..fine_cursor + FINE`.
    fine: Vec<Vec<Entry>>,
    /// Buffers of poured fine buckets, the last poured on top: the next fine bucket to fill
    /// takes it while it is still in the cache. Each slot kept its own buffer before, and the
    /// 128 of them (~1.4 MB in the 8000-sender NDP incast) cycled through the core's caches
    /// (a quarter fewer first-level write misses in cachegrind's model of that run).
    fine_spare: Vec<Vec<Entry>>,
    /// First fine bucket not yet poured into the heap.
    fine_cursor: u64,
    /// Events in the fine buckets.
    in_fine: usize,
    /// The last fine bucket poured, sorted by key: its events from `run_at` on are pending,
    /// all earlier than any in the fine buckets and the wheel.
    run: Vec<Entry>,
    run_at: usize,
    /// The radix sort's second buffer.
    scratch: Vec<Entry>,
}

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue {
            heap: Vec::new(),
            seq: 0,
            wheel: (0..BUCKETS).map(|_| Vec::new()).collect(),
            cursor: 0,
            in_wheel: 0,
            spare: Vec::new(),
            fine: (0..FINE).map(|_| Vec::new()).collect(),
            fine_spare: Vec::new(),
            fine_cursor: 0,
            in_fine: 0,
            run: Vec::new(),
            run_at: 0,
            scratch: Vec::new(),
        }
    }
}

impl EventQueue {
    /// Schedule `event` at `time`.
    #[inline]
    pub fn push(&mut self, time: SimTime, event: Event) {
        self.seq += 1;
        let e = Entry {
            key: ((time as u128) << 64) | self.seq as u128,
            event,
        };
        let b = time >> BUCKET_SHIFT;
        // The fine buckets first: most events are due a few microseconds on (a hop's delay
        // and serialization).
        let f = time >> FINE_SHIFT;
        if f.wrapping_sub(self.fine_cursor) < FINE && b < self.cursor {
            fine_push(&mut self.fine[(f % FINE) as usize], &mut self.fine_spare, e);
            self.in_fine += 1;
        } else if b.wrapping_sub(self.cursor) < BUCKETS {
            let bucket = &mut self.wheel[(b % BUCKETS) as usize];
            if bucket.capacity() == 0 {
                if let Some(v) = self.spare.pop() {
                    *bucket = v;
                }
            }
            bucket.push(e);
            self.in_wheel += 1;
        } else {
            self.heap_push(e);
        }
    }

    #[inline]
    fn heap_push(&mut self, e: Entry) {
        let mut i = self.heap.len();
        self.heap.push(e);
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if self.heap[parent].key <= e.key {
                break;
            }
            self.heap[i] = self.heap[parent];
            i = parent;
        }
        self.heap[i] = e;
    }

    /// With the run spent, pour the next fine bucket that has events into the run, or the
    /// wheel's next bucket into the fine buckets, until the run or the heap holds the earliest
    /// event.
    #[inline]
    fn pour(&mut self) {
        if self.in_wheel == 0 && self.in_fine == 0 {
            return;
        }
        self.pour_more();
    }

    /// [`EventQueue::pour`]'s work, once a bucket's worth of pops: out of line.
    #[inline(never)]
    fn pour_more(&mut self) {
        loop {
            if self.in_fine > 0 {
                // Every event of the fine buckets is earlier than any of the wheel's.
                let start = (self.fine_cursor as u128) << (64 + FINE_SHIFT);
                if self.heap.first().is_some_and(|top| top.key < start) {
                    return;
                }
                let f = (self.fine_cursor % FINE) as usize;
                self.fine_cursor += 1;
                if self.fine[f].is_empty() {
                    continue;
                }
                let mut v = std::mem::take(&mut self.fine[f]);
                self.in_fine -= v.len();
                sort_bucket(&mut v, &mut self.scratch);
                let mut old = std::mem::replace(&mut self.run, v);
                self.run_at = 0;
                // A burst's bucket gives its buffer back rather than keep it for good (and the
                // first run's has none: spares are buffers).
                if (1..=FINE_KEEP).contains(&old.capacity()) {
                    old.clear();
                    self.fine_spare.push(old);
                }
                return;
            }
            let start = (self.cursor as u128) << (64 + BUCKET_SHIFT);
            if self.heap.first().is_some_and(|top| top.key < start) || self.in_wheel == 0 {
                return;
            }
            // The bucket's events go to the fine buckets, which it fills exactly.
            let mut bucket = std::mem::take(&mut self.wheel[(self.cursor % BUCKETS) as usize]);
            self.in_wheel -= bucket.len();
            self.in_fine += bucket.len();
            for e in bucket.drain(..) {
                let f = ((e.key >> 64) as u64 >> FINE_SHIFT) % FINE;
                fine_push(&mut self.fine[f as usize], &mut self.fine_spare, e);
            }
            if bucket.capacity() > 0 {
                self.spare.push(bucket);
            }
            self.fine_cursor = self.cursor << (BUCKET_SHIFT - FINE_SHIFT);
            self.cursor += 1;
        }
    }

    /// The earliest event and its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, Event)> {
        if self.run_at == self.run.len() {
            self.pour();
        }
        if let Some(&r) = self.run.get(self.run_at) {
            if self.heap.first().is_none_or(|top| r.key < top.key) {
                self.run_at += 1;
                return Some((self.popped(r.key), r.event));
            }
        }
        let last = self.heap.pop()?;
        let Some(&top) = self.heap.first() else {
            return Some((self.popped(last.key), last.event));
        };
        // Move the hole at the root down to where `last` belongs.
        let n = self.heap.len();
        let mut i = 0;
        loop {
            let first = ARITY * i + 1;
            if first >= n {
                break;
            }
            let mut min = first;
            for c in first + 1..(first + ARITY).min(n) {
                if self.heap[c].key < self.heap[min].key {
                    min = c;
                }
            }
            if self.heap[min].key >= last.key {
                break;
            }
            self.heap[i] = self.heap[min];
            i = min;
        }
        self.heap[i] = last;
        Some((self.popped(top.key), top.event))
    }

    /// The time of the event of `key`, just popped.
    #[inline]
    fn popped(&mut self, key: u128) -> SimTime {
        let t = (key >> 64) as SimTime;
        if self.in_wheel == 0 {
            // Nothing waits in the wheel: events due in the current bucket go to the heap
            // directly and the wheel's reach starts after it.
            self.cursor = self.cursor.max((t >> BUCKET_SHIFT) + 1);
        }
        if self.in_fine == 0 {
            // Likewise for the fine buckets.
            self.fine_cursor = self.fine_cursor.max((t >> FINE_SHIFT) + 1);
        }
        t
    }

    /// The earliest event of the run and the heap, left in place (a hint of what comes next:
    /// it may be later than an event still in the fine buckets or the wheel).
    #[inline]
    pub fn peek(&self) -> Option<Event> {
        match (self.run.get(self.run_at), self.heap.first()) {
            (Some(r), Some(h)) if h.key < r.key => Some(h.event),
            (Some(r), _) => Some(r.event),
            (None, h) => h.map(|e| e.event),
        }
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.heap.len() + self.in_wheel + self.in_fine + (self.run.len() - self.run_at)
    }

    /// No pending events.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Fine buckets of fewer events are sorted by comparison.
const RADIX_MIN: usize = 64;

/// Sort poured fine bucket `v` by key, with `scratch` as the second buffer. A fine bucket
/// holds its events in push order (its wheel bucket's, poured in order, before any pushed into
/// it directly), so sorting by time alone, stably, gives the (time, push) order: three stable
/// passes of a counting sort on a third each of the bits of the time within the bucket, without
/// the comparison sort's mispredicted branches (~7% of a 1,024-host key-value cluster's
/// samples went to sorting the buckets). Keys are unique, so the small buckets' unstable
/// sort gives the same order.
fn sort_bucket(v: &mut Vec<Entry>, scratch: &mut Vec<Entry>) {
    if v.len() < RADIX_MIN {
        v.sort_unstable_by_key(|e| e.key);
        return;
    }
    const BITS: u32 = FINE_SHIFT.div_ceil(3);
    const DIGITS: usize = 1 << BITS;
    scratch.clear();
    scratch.extend_from_slice(v);
    for pass in 0..3 {
        let shift = 64 + BITS * pass;
        let digit = |e: &Entry| ((e.key >> shift) as usize) & (DIGITS - 1);
        let mut at = [0usize; DIGITS];
        for e in v.iter() {
            at[digit(e)] += 1;
        }
        if at[digit(&v[0])] == v.len() {
            continue; // one digit for all: the pass would move nothing
        }
        let mut sum = 0;
        for a in at.iter_mut() {
            (*a, sum) = (sum, sum + *a);
        }
        for e in v.iter() {
            let d = digit(e);
            scratch[at[d]] = *e;
            at[d] += 1;
        }
        std::mem::swap(v, scratch);
    }
    if scratch.capacity() > FINE_KEEP {
        *scratch = Vec::new();
    }
    debug_assert!(
        v.windows(2).all(|w| w[0].key < w[1].key),
        "a fine bucket out of push order"
    );
}

/// Push `e` into fine bucket `bucket`, which takes the last spare buffer if it has none.
#[inline]
fn fine_push(bucket: &mut Vec<Entry>, spare: &mut Vec<Vec<Entry>>, e: Entry) {
    if bucket.capacity() == 0 {
        if let Some(v) = spare.pop() {
            *bucket = v;
        }
    }
    bucket.push(e);
}

/// A timer cancelled lazily: moving a deadline later schedules nothing; the stale event finds
/// the new deadline when it fires and reschedules itself. Moving it earlier schedules a new
/// event and bumps the generation, so the older event becomes a no-op.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Timer {
    /// When the timer is due, if armed.
    pub deadline: Option<SimTime>,
    scheduled: Option<SimTime>,
    gen: u32,
}

impl Timer {
    /// Arm (or re-arm) for `at`.
    #[inline]
    pub fn set(&mut self, at: SimTime) {
        self.deadline = Some(at);
    }

    /// Disarm.
    #[inline]
    pub fn clear(&mut self) {
        self.deadline = None;
    }

    /// The pending event's time, if one is scheduled, and the generation: what a disarmed
    /// timer keeps (a TCP endpoint's compact form holds them).
    pub(crate) fn pending_mut(&mut self) -> (&mut Option<SimTime>, &mut u32) {
        (&mut self.scheduled, &mut self.gen)
    }

    /// Whether armed.
    pub fn is_armed(&self) -> bool {
        self.deadline.is_some()
    }

    /// If an event must be scheduled for the current deadline, its time and generation.
    #[inline]
    pub fn needs_event(&mut self) -> Option<(SimTime, u32)> {
        match self.deadline {
            Some(d) if self.scheduled.is_none_or(|s| d < s) => {
                self.gen = self.gen.wrapping_add(1);
                self.scheduled = Some(d);
                Some((d, self.gen))
            }
            _ => None,
        }
    }

    /// An event of generation `gen` fired at `now`: true if the timer is due (and it is then
    /// disarmed). A false answer may leave a later deadline for `needs_event` to schedule.
    #[inline]
    pub fn fire(&mut self, now: SimTime, gen: u32) -> bool {
        if gen != self.gen || self.scheduled.is_none() {
            return false;
        }
        self.scheduled = None;
        match self.deadline {
            Some(d) if d <= now => {
                self.deadline = None;
                true
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simultaneous_events_keep_insertion_order() {
        let mut q = EventQueue::default();
        q.push(5, Event::TxDone(LinkId(2)));
        q.push(5, Event::TxDone(LinkId(1)));
        q.push(3, Event::Start);
        assert_eq!(q.pop(), Some((3, Event::Start)));
        assert_eq!(q.pop(), Some((5, Event::TxDone(LinkId(2)))));
        assert_eq!(q.pop(), Some((5, Event::TxDone(LinkId(1)))));
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn pops_in_time_then_insertion_order_under_interleaved_pushes() {
        // Reference: sort by (time, push order). Pushes and pops interleave so the heap is
        // exercised at every depth, with many equal times.
        let mut q = EventQueue::default();
        let mut reference: Vec<(SimTime, u32, u32)> = Vec::new();
        let mut x: u64 = 20091130;
        let mut pushed = 0u32;
        let mut now: SimTime = 0;
        for round in 0..20_000u32 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            if (x >> 60) < 9 || q.is_empty() {
                let t = now + (x >> 33) % 50;
                q.push(t, Event::Agent(pushed, 0, round));
                reference.push((t, pushed, round));
                pushed += 1;
            } else {
                let (t, ev) = q.pop().unwrap();
                let best = (0..reference.len()).min_by_key(|&k| reference[k]).unwrap();
                let (rt, rid, rround) = reference.remove(best);
                assert_eq!((t, ev), (rt, Event::Agent(rid, 0, rround)));
                now = t;
            }
            assert_eq!(q.len(), reference.len());
        }
    }

    /// Push `count` events at `at(r, now)` (r a draw of a seeded LCG, now the last popped
    /// time), popping one whenever the draw says so (7 in 16), each checked against a sort by
    /// (time, push order), then drain and check the rest. Returns the pops before the drain.
    fn pops_as_sorted(seed: u64, count: u32, at: impl Fn(u64, SimTime) -> SimTime) -> u32 {
        let mut q = EventQueue::default();
        let mut reference = std::collections::BTreeSet::new();
        let mut x = seed;
        let mut now: SimTime = 0;
        let mut popped = 0;
        for id in 0..count {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let t = at(x >> 33, now);
            q.push(t, Event::Agent(id, 0, 0));
            reference.insert((t, id));
            if (x >> 60) < 7 {
                let (t, ev) = q.pop().unwrap();
                let (rt, rid) = reference.pop_first().unwrap();
                assert_eq!((t, ev), (rt, Event::Agent(rid, 0, 0)));
                now = t;
                popped += 1;
            }
            assert_eq!(q.len(), reference.len());
        }
        for (rt, rid) in reference {
            assert_eq!(q.pop(), Some((rt, Event::Agent(rid, 0, 0))));
        }
        assert_eq!(q.pop(), None);
        popped
    }

    #[test]
    fn wheel_and_heap_pop_in_time_then_insertion_order_across_buckets_and_horizon() {
        // Times spread over many buckets, past the wheel's reach, into buckets already poured
        // and onto bucket edges; the reference is a sort by (time, push order).
        let bucket: SimTime = 1 << BUCKET_SHIFT;
        let fine: SimTime = 1 << FINE_SHIFT;
        let popped = pops_as_sorted(20091130, 60_000, |r, now| {
            now + match r % 5 {
                0 => r % 100,
                1 => (r % 8) * bucket,
                2 => (r % 8 + 1) * bucket - 1 + (r >> 20) % 2,
                3 if r.is_multiple_of(2) => r % (BUCKETS * bucket),
                3 => (r % 300 + 1) * fine - 1 + (r >> 20) % 2,
                _ => r % (3 * BUCKETS * bucket),
            }
        });
        assert!(popped > 10_000);
    }

    #[test]
    fn dense_fine_buckets_pop_in_time_then_insertion_order() {
        // Hundreds of events a microsecond, many at the same picosecond, some pushed into the
        // microsecond being popped: the buckets large enough to be radix-sorted.
        let fine: SimTime = 1 << FINE_SHIFT;
        pops_as_sorted(20191106, 200_000, |r, now| {
            now + match r % 4 {
                0 => (r >> 8) % 64 * 1_000,
                1 => (r >> 8) % (8 * fine),
                2 => (r >> 8) % 8 * fine,
                _ => (r >> 8) % 3,
            }
        });
    }

    #[test]
    fn timer_not_due_one_tick_early_and_due_on_time() {
        let mut t = Timer::default();
        t.set(100);
        let (at, gen) = t.needs_event().unwrap();
        assert_eq!(at, 100);
        assert!(!t.fire(99, gen.wrapping_add(1)));
        assert!(t.fire(100, gen));
        assert!(!t.is_armed());
    }

    #[test]
    fn moving_a_deadline_later_reuses_the_pending_event() {
        let mut t = Timer::default();
        t.set(100);
        let (_, gen) = t.needs_event().unwrap();
        t.set(200);
        assert_eq!(t.needs_event(), None);
        assert!(!t.fire(100, gen));
        let (at, gen2) = t.needs_event().unwrap();
        assert_eq!(at, 200);
        assert!(t.fire(200, gen2));
    }

    #[test]
    fn moving_a_deadline_earlier_makes_the_old_event_stale() {
        let mut t = Timer::default();
        t.set(200);
        let (_, old) = t.needs_event().unwrap();
        t.set(100);
        let (at, new) = t.needs_event().unwrap();
        assert_eq!(at, 100);
        assert!(t.fire(100, new));
        assert!(!t.fire(200, old));
    }

    #[test]
    fn cleared_timer_does_not_fire() {
        let mut t = Timer::default();
        t.set(10);
        let (_, gen) = t.needs_event().unwrap();
        t.clear();
        assert!(!t.fire(10, gen));
        assert_eq!(t.needs_event(), None);
    }
}
