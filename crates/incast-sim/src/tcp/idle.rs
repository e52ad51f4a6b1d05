//! An idle endpoint in 160 bytes. A key-value cluster of H hosts runs H(H−1)
//! connections and almost all of them are idle at any moment, yet each full endpoint (its two
//! halves, the RTT estimator, the congestion control, the counters, the timers) is about a
//! kilobyte. An idle one (nothing in flight or unsent, no ACK owed, no timer armed) differs
//! from the endpoint as it was set up in a few dozen numbers, most of them sequence numbers,
//! times and RTTs close to one another: those are what it keeps.
//!
//! Every field that can differ is visited, in one fixed order, by the structs that own it
//! ([`Fields`]); a [`Compact`] holds a bit per visited field that differs from the endpoint as
//! set up and, for those, the value as a varint: a sequence number, time or RTT as its
//! difference from the field of its kind stored before (so `snd_una`, `snd_nxt` and
//! `write_end`, all equal, cost a byte each), a counter as itself. An endpoint is held compact
//! only if the endpoint decoded from its compact form equals it field for field (`PartialEq`;
//! checked as the endpoint with its stored fields [`Reset`] to those as set up being the
//! endpoint as set up, and in debug builds by decoding it too); one that does not fit (a field the visit leaves out, such as BBR's model, or more bytes than
//! a compact form holds) stays whole. So the compact form changes nothing a connection does.

use crate::units::SimTime;

/// What a visited number is, for the number its difference is taken from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A byte sequence number.
    Seq,
    /// A simulated time.
    Time,
    /// A round-trip time or a timeout.
    Rtt,
    /// Anything else: kept as itself.
    Plain,
}

/// Every field of an endpoint that an idle one may hold differently from one as set up, each
/// as a `u64`, in an order fixed by the code (the visit).
pub(crate) trait Fields {
    /// Whether the visit writes the fields (a decode) rather than only reading them: a
    /// reading visit must leave the endpoint exactly as it was, lossy mappings included.
    const WRITES: bool;

    /// A number of kind `kind`.
    fn num(&mut self, kind: Kind, x: &mut u64);

    /// The field just read would not read back as it is (a reading visit that stores fields
    /// gives up).
    #[inline]
    fn lossy(&mut self) {}

    /// A 32-bit counter.
    #[inline]
    fn u32(&mut self, x: &mut u32) {
        let mut v = u64::from(*x);
        self.num(Kind::Plain, &mut v);
        *x = v as u32;
    }

    /// An 8-bit counter.
    #[inline]
    fn u8(&mut self, x: &mut u8) {
        let mut v = u64::from(*x);
        self.num(Kind::Plain, &mut v);
        *x = v as u8;
    }

    /// A flag.
    #[inline]
    fn flag(&mut self, x: &mut bool) {
        let mut v = u64::from(*x);
        self.num(Kind::Plain, &mut v);
        *x = v != 0;
    }

    /// An optional number: 0 is `None`, `v + 1` is `Some(v)` (`Some(u64::MAX)` would read
    /// back as `None`: an endpoint holding it does not fit and stays whole).
    #[inline]
    fn opt(&mut self, kind: Kind, x: &mut Option<u64>) {
        if *x == Some(u64::MAX) {
            self.lossy();
        }
        let mut v = x.map_or(0, |t| t.wrapping_add(1));
        self.num(kind, &mut v);
        if Self::WRITES {
            *x = v.checked_sub(1);
        }
    }

    /// A list of numbers of kind `kind`: its length, then each. Its length moves the fields
    /// after it, so a visit ends with its one list.
    #[inline]
    fn list(&mut self, kind: Kind, x: &mut Vec<u64>) {
        let mut n = x.len() as u64;
        self.num(Kind::Plain, &mut n);
        x.resize(n as usize, 0);
        for v in x.iter_mut() {
            self.num(kind, v);
        }
    }
}

/// Fields visited at most: the width of [`Compact::mask`].
const MAX_FIELDS: usize = 128;
/// Bytes of varints a compact endpoint holds. An idle endpoint of the key-value cluster needs
/// 70 to 130 (7 RTTs and 6 times of 5 bytes each, its slow-start rounds 15).
const DATA: usize = 143;

/// An idle endpoint: which visited fields differ from the endpoint as set up, and their values.
/// 160 bytes (a whole endpoint with its timers is about 1.2 KB).
#[derive(Debug, Clone, Copy)]
pub(super) struct Compact {
    /// Bit `i`: the `i`-th visited field differs from the endpoint as set up.
    mask: u128,
    /// Bytes of `data` used.
    len: u8,
    /// The differing fields' varints, in visiting order.
    data: [u8; DATA],
}

const _: () = assert!(std::mem::size_of::<Compact>() == 160);

impl Compact {
    /// An endpoint exactly as set up.
    pub(super) const PRISTINE: Compact = Compact {
        mask: 0,
        len: 0,
        data: [0; DATA],
    };

    /// Whether any field differs from the endpoint as set up.
    #[inline]
    pub(super) fn differs(&self) -> bool {
        self.mask != 0
    }
}

/// The last value of each kind stored, which the next of its kind is stored against.
#[derive(Debug, Default)]
struct Last([u64; 3]);

impl Last {
    /// Slot of `kind`, if it is stored as a difference.
    #[inline]
    fn of(&mut self, kind: Kind) -> Option<&mut u64> {
        match kind {
            Kind::Seq => Some(&mut self.0[0]),
            Kind::Time => Some(&mut self.0[1]),
            Kind::Rtt => Some(&mut self.0[2]),
            Kind::Plain => None,
        }
    }
}

#[inline]
fn zigzag(d: u64) -> u64 {
    let d = d as i64;
    ((d << 1) ^ (d >> 63)) as u64
}

#[inline]
fn unzigzag(z: u64) -> u64 {
    ((z >> 1) as i64 ^ -((z & 1) as i64)) as u64
}

/// Collects the visited fields of an endpoint as set up.
#[derive(Debug)]
pub(super) struct Collect {
    pub(super) values: [u64; MAX_FIELDS],
    pub(super) n: usize,
}

impl Default for Collect {
    fn default() -> Self {
        Collect {
            values: [0; MAX_FIELDS],
            n: 0,
        }
    }
}

impl Collect {
    /// The `i`-th visited field's value, if it was collected (a visit longer than
    /// [`MAX_FIELDS`] keeps only the first).
    #[inline]
    fn value(&self, i: usize) -> Option<u64> {
        self.values[..self.n.min(MAX_FIELDS)].get(i).copied()
    }
}

impl Fields for Collect {
    const WRITES: bool = false;

    #[inline]
    fn num(&mut self, _kind: Kind, x: &mut u64) {
        if self.n < MAX_FIELDS {
            self.values[self.n] = *x;
        }
        self.n += 1;
    }
}

/// Writes the visited fields that differ from `base`'s into a [`Compact`]; `ok` turns false if
/// they do not fit.
#[derive(Debug)]
pub(super) struct Encode<'a> {
    base: &'a Collect,
    i: usize,
    last: Last,
    pub(super) out: Compact,
    pub(super) ok: bool,
}

impl<'a> Encode<'a> {
    pub(super) fn new(base: &'a Collect) -> Encode<'a> {
        Encode {
            base,
            i: 0,
            last: Last::default(),
            out: Compact::PRISTINE,
            ok: true,
        }
    }

    /// Whether every field was visited and fit.
    pub(super) fn fits(&self) -> bool {
        self.ok && self.i <= MAX_FIELDS
    }
}

impl Fields for Encode<'_> {
    const WRITES: bool = false;

    #[inline]
    fn lossy(&mut self) {
        self.ok = false;
    }

    #[inline]
    fn num(&mut self, kind: Kind, x: &mut u64) {
        let i = self.i;
        self.i += 1;
        let v = *x;
        if i >= MAX_FIELDS {
            self.ok = false;
            return;
        }
        // Past the end of the base's fields (after a longer list) every field is stored.
        if self.base.value(i) == Some(v) {
            return;
        }
        let stored = match self.last.of(kind) {
            Some(last) => zigzag(v.wrapping_sub(std::mem::replace(last, v))),
            None => v,
        };
        self.out.mask |= 1 << i;
        let mut z = stored;
        loop {
            let len = self.out.len as usize;
            if len == DATA {
                self.ok = false;
                return;
            }
            let byte = (z & 0x7f) as u8;
            z >>= 7;
            self.out.data[len] = byte | if z > 0 { 0x80 } else { 0 };
            self.out.len += 1;
            if z == 0 {
                return;
            }
        }
    }
}

/// Puts a [`Compact`]'s fields into an endpoint as set up.
#[derive(Debug)]
pub(super) struct Decode<'a> {
    c: &'a Compact,
    i: usize,
    pos: usize,
    last: Last,
}

impl<'a> Decode<'a> {
    pub(super) fn new(c: &'a Compact) -> Decode<'a> {
        Decode {
            c,
            i: 0,
            pos: 0,
            last: Last::default(),
        }
    }
}

impl Fields for Decode<'_> {
    const WRITES: bool = true;

    #[inline]
    fn num(&mut self, kind: Kind, x: &mut u64) {
        let i = self.i;
        self.i += 1;
        if i < MAX_FIELDS && self.c.mask & (1 << i) != 0 {
            let mut z = 0u64;
            let mut shift = 0;
            while self.pos < self.c.len as usize {
                let b = self.c.data[self.pos];
                self.pos += 1;
                z |= u64::from(b & 0x7f).wrapping_shl(shift);
                shift += 7;
                if b & 0x80 == 0 {
                    break;
                }
            }
            *x = match self.last.of(kind) {
                None => z,
                Some(last) => {
                    *last = last.wrapping_add(unzigzag(z));
                    *last
                }
            };
        }
    }
}

/// Writes an endpoint as set up's visited fields (as [`Collect`]ed) over an endpoint's: what
/// then differs from the endpoint as set up is what the visit leaves out. Cheaper than a
/// [`Decode`] into an endpoint as set up (no varints, no list to grow), which is what an idle
/// endpoint's check did before: with the visit's shape fixed but for its one list, last, an
/// endpoint reads back from its compact form exactly if, its fields stored losslessly, it is
/// the endpoint as set up once they are reset.
#[derive(Debug)]
pub(super) struct Reset<'a> {
    base: &'a Collect,
    i: usize,
}

impl<'a> Reset<'a> {
    pub(super) fn new(base: &'a Collect) -> Reset<'a> {
        Reset { base, i: 0 }
    }
}

impl Fields for Reset<'_> {
    const WRITES: bool = true;

    #[inline]
    fn num(&mut self, _kind: Kind, x: &mut u64) {
        if let Some(v) = self.base.value(self.i) {
            *x = v;
        }
        self.i += 1;
    }
}

/// A timer's pending event, as the compact form keeps it: when it is scheduled, if it is, and
/// its generation (an idle endpoint's timers are disarmed, but a cancelled retransmission timer
/// leaves its event pending).
#[inline]
pub(super) fn timer_fields(f: &mut impl Fields, scheduled: &mut Option<SimTime>, gen: &mut u32) {
    f.opt(Kind::Time, scheduled);
    f.u32(gen);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A toy record visited as an endpoint is.
    #[derive(Debug, Clone, PartialEq, Default)]
    struct Toy {
        seq: [u64; 3],
        at: Option<u64>,
        n: u32,
        on: bool,
        rounds: Vec<u64>,
    }

    impl Toy {
        fn visit(&mut self, f: &mut impl Fields) {
            for s in &mut self.seq {
                f.num(Kind::Seq, s);
            }
            f.opt(Kind::Time, &mut self.at);
            f.u32(&mut self.n);
            f.flag(&mut self.on);
            f.list(Kind::Plain, &mut self.rounds);
        }
    }

    fn round_trip(base: &Toy, t: &Toy) -> (Toy, bool, u8) {
        let mut b = base.clone();
        let mut col = Collect::default();
        b.visit(&mut col);
        let mut enc = Encode::new(&col);
        t.clone().visit(&mut enc);
        let c = enc.out;
        let mut back = base.clone();
        back.visit(&mut Decode::new(&c));
        (back, enc.fits(), c.len)
    }

    #[test]
    fn equal_sequence_numbers_cost_a_byte_and_read_back() {
        let base = Toy::default();
        let t = Toy {
            seq: [1 << 40, 1 << 40, (1 << 40) - 3],
            at: Some(7),
            n: 3,
            on: true,
            rounds: vec![4344, 8688],
        };
        let (back, fits, len) = round_trip(&base, &t);
        assert!(fits);
        assert_eq!(back, t);
        // 6 bytes for the first sequence number (2^41 zigzagged), 1 for each of the others and
        // for the time, the counter and the flag; the list of 2 takes 1 + 2 + 2.
        assert_eq!(len, 6 + 1 + 1 + 1 + 1 + 1 + 5);
        assert_eq!(round_trip(&base, &base), (base, true, 0));
    }

    #[test]
    fn reset_makes_a_record_as_set_up_and_decode_restores_it() {
        let base = Toy::default();
        let mut col = Collect::default();
        base.clone().visit(&mut col);
        let t = Toy {
            seq: [9, 9, 4],
            at: Some(3),
            n: 2,
            on: true,
            rounds: vec![1, 2, 3],
        };
        let mut enc = Encode::new(&col);
        t.clone().visit(&mut enc);
        assert!(enc.fits());
        let mut r = t.clone();
        r.visit(&mut Reset::new(&col));
        assert_eq!(r, base, "every field visited: reset is the toy as set up");
        r.visit(&mut Decode::new(&enc.out));
        assert_eq!(r, t, "and decoding over it restores the toy");
    }

    #[test]
    fn too_many_bytes_do_not_fit() {
        let t = Toy {
            rounds: vec![u64::MAX; DATA / 10 + 1],
            ..Toy::default()
        };
        assert!(!round_trip(&Toy::default(), &t).1);
    }

    #[test]
    fn some_of_the_largest_value_reads_back_as_none() {
        let t = Toy {
            at: Some(u64::MAX),
            ..Toy::default()
        };
        let (back, fits, _) = round_trip(&Toy::default(), &t);
        assert_ne!(back, t);
        assert!(!fits, "such an endpoint does not fit and stays whole");
        // The check compares against the endpoint itself, so encoding must leave it as it
        // was (the lossy mapping is the decode's alone).
        let mut held = t.clone();
        let mut col = Collect::default();
        Toy::default().visit(&mut col);
        held.visit(&mut Encode::new(&col));
        assert_eq!(held, t, "encoding reads the endpoint, never changes it");
    }
}
