//! Deterministic random numbers: xoshiro256** seeded through SplitMix64.
//!
//! Written out here (20 lines, public-domain algorithms by Blackman and Vigna) rather than taken
//! from a crate so that a scenario's bytes stay identical across dependency upgrades: the
//! simulator's output is part of its interface.

use crate::ids::{ConnId, EndpointId};

/// The random streams of a run, one per purpose (and per connection, endpoint or link where
/// each draws its own), so that adding a flow or a feature does not change the numbers another
/// part draws. The stream numbers are part of the output: changing one changes every report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// A server's response jitter on one workload connection.
    ResponseJitter(ConnId),
    /// The host jitter of one TCP endpoint's packets.
    HostJitter(EndpointId),
    /// One TCP endpoint's RTO randomization.
    RtoPolicy(EndpointId),
    /// The Poisson arrivals and sizes of the queries workload.
    Queries,
    /// One link's RED drop/mark decisions.
    Red(u32),
    /// The ECMP path of one connection (both directions).
    EcmpPath(ConnId),
    /// NDP's simulation-wide draws.
    Ndp,
    /// One TCP endpoint's BBR (the PROBE_BW phase it starts in).
    Bbr(EndpointId),
    /// One link's delay jitter.
    LinkJitter(u32),
    /// One key-value host's get arrivals, keys and value sizes.
    KvGets(u32),
    /// One key-value host's service-time jitter.
    KvService(u32),
    /// The order in which one shuffle reducer asks the hosts for their map outputs.
    ShuffleOrder(u32),
    /// One link's egress ECN marks (`topology.ecn_kmin`).
    EcnMark(u32),
    /// One host's background flows of a flow schedule: arrivals, destinations, sizes.
    FlowArrivals(u32),
    /// A flow schedule's incast bursts: arrivals, receivers, senders.
    FlowIncast,
    /// RoCE's draws: 0 the servers' response jitter, 1 the queue pairs' set-up (ECMP paths).
    Roce(u32),
    /// Swift's draws: the ECMP path of one connection (both directions), then the seeds of
    /// its two endpoints' timer randomization (`swift.rto_jitter`).
    Swift(u32),
    /// EQDS's draws: 0 the flows' path entropies, 1 the synchronized read's jitter.
    Eqds(u32),
    /// Homa's draws: 0 the servers' response jitter, 1 the messages' ECMP paths.
    Homa(u32),
    /// The short flows beside an incast (`workload.short_load`): arrivals, servers, sizes.
    Short,
    /// Homa's per-packet paths (`homa.spray`).
    HomaSpray,
    /// One NDP flow's timer randomization (`ndp.rto_jitter`).
    NdpTimer(u32),
    /// NDP's switch ports' choice of the packet to trim (`ndp.trim = "either"`).
    NdpTrim,
}

impl Stream {
    /// The stream number [`Rng::new`] takes: a purpose in the high 32 bits, the index below.
    pub const fn id(self) -> u64 {
        let (purpose, index) = match self {
            Stream::ResponseJitter(c) => (0, c.0),
            Stream::HostJitter(e) => (1, e.0),
            Stream::RtoPolicy(e) => (2, e.0),
            Stream::Queries => (3, 0),
            Stream::Red(l) => (4, l),
            Stream::EcmpPath(c) => (5, c.0),
            Stream::Ndp => (6, 0),
            Stream::Bbr(e) => (7, e.0),
            Stream::LinkJitter(l) => (8, l),
            Stream::KvGets(h) => (9, h),
            Stream::KvService(h) => (10, h),
            Stream::ShuffleOrder(r) => (11, r),
            Stream::EcnMark(l) => (12, l),
            Stream::FlowArrivals(h) => (13, h),
            Stream::FlowIncast => (14, 0),
            Stream::Roce(i) => (15, i),
            Stream::Swift(c) => (16, c),
            Stream::Eqds(i) => (17, i),
            Stream::Homa(i) => (18, i),
            Stream::Short => (19, 0),
            Stream::HomaSpray => (20, 0),
            Stream::NdpTimer(f) => (21, f),
            Stream::NdpTrim => (22, 0),
        };
        (purpose << 32) + index as u64
    }
}

/// A xoshiro256** generator.
#[derive(Clone, Debug, PartialEq)]
pub struct Rng {
    s: [u64; 4],
}

fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Rng {
    /// A generator for `seed`, on its own `stream` (e.g. one stream per flow), so that adding a
    /// flow does not change the numbers another flow draws.
    pub fn new(seed: u64, stream: u64) -> Self {
        let mut x = seed ^ stream.wrapping_mul(0xD1B5_4A32_D192_ED03);
        let s = [
            splitmix64(&mut x),
            splitmix64(&mut x),
            splitmix64(&mut x),
            splitmix64(&mut x),
        ];
        Rng { s }
    }

    /// The generator of `stream` in the run seeded with `seed`.
    pub fn stream(seed: u64, stream: Stream) -> Self {
        Rng::new(seed, stream.id())
    }

    /// The generator's state (an idle TCP endpoint's compact form keeps it).
    pub(crate) fn state_mut(&mut self) -> &mut [u64; 4] {
        &mut self.s
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1): the top 53 of the next 64 bits, every double of that grid equally
    /// likely.
    #[inline]
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in `0..=max` (Lemire's multiply-shift; the bias is below 2^-64 per draw for the
    /// ranges used here and is deterministic, which is what matters).
    pub fn up_to(&mut self, max: u64) -> u64 {
        if max == u64::MAX {
            return self.next_u64();
        }
        ((self.next_u64() as u128 * (max as u128 + 1)) >> 64) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream_same_numbers() {
        let mut a = Rng::new(7, 3);
        let mut b = Rng::new(7, 3);
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
    }

    #[test]
    fn named_streams_keep_their_numbers() {
        // Reports of earlier versions depend on these exact values.
        assert_eq!(Stream::ResponseJitter(ConnId(7)).id(), 7);
        assert_eq!(Stream::HostJitter(EndpointId(3)).id(), (1 << 32) + 3);
        assert_eq!(Stream::RtoPolicy(EndpointId(3)).id(), (2 << 32) + 3);
        assert_eq!(Stream::Queries.id(), 3 << 32);
        assert_eq!(Stream::Red(9).id(), (4 << 32) + 9);
        assert_eq!(Stream::EcmpPath(ConnId(5)).id(), (5 << 32) + 5);
        assert_eq!(Stream::Ndp.id(), 6 << 32);
        assert_eq!(Stream::FlowArrivals(3).id(), (13 << 32) + 3);
        assert_eq!(Stream::FlowIncast.id(), 14 << 32);
    }

    #[test]
    fn streams_differ() {
        let mut a = Rng::new(7, 1);
        let mut b = Rng::new(7, 2);
        assert_ne!(a.next_u64(), b.next_u64());
    }

    #[test]
    fn up_to_stays_in_range_and_covers_it() {
        let mut r = Rng::new(1, 0);
        let mut seen = [false; 5];
        for _ in 0..1000 {
            let v = r.up_to(4);
            assert!(v <= 4);
            seen[v as usize] = true;
        }
        assert!(seen.iter().all(|&s| s));
        assert_eq!(r.up_to(0), 0);
    }
}
