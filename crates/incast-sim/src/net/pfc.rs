//! PFC / 802.3x at the switches' ingresses: the bytes each ingress holds in its switch, when
//! the switch pauses the link they came over, and when it resumes it.
//!
//! Two ways to account an ingress, chosen per switch:
//! - **its own buffer** (a switch without a shared buffer, as htsim's `LosslessInputQueue`):
//!   an ingress may hold `limit` bytes; XOFF when it holds `xoff`, XON at `xon`;
//! - **a share of the switch's pool** (a switch with `topology.shared_buffer`, as Broadcom's
//!   MMU and the "switch MMU" of HPCC's ns-3 account it): each ingress has a headroom of its own,
//!   carved out of the switch's buffer, and draws the rest from the shared pool. A frame goes to
//!   the pool while the ingress's use of it stays within the XOFF threshold — a static
//!   `topology.pfc_xoff`, or the dynamic α × (free pool) of Choudhury and Hahne ("Dynamic queue
//!   length thresholds for shared-memory packet switches", IEEE/ACM ToN 1998) with
//!   `topology.pfc_alpha` — and to the headroom once it would not; the ingress is paused as soon
//!   as it holds anything in its headroom or reaches the threshold. It resumes once its
//!   headroom is empty and its pool use is `pfc_xon_offset` below the threshold (or at the
//!   static `pfc_xon`), or it holds nothing. What leaves the switch drains the headroom first.
//!
//! Either way lossless: a frame that finds the headroom full too is a headroom overrun (the
//! thresholds left too little room for what was in flight), dropped and counted.
//!
//! XOFF is sent when the bytes held reach the threshold, XON when they fall to the resume
//! point: Broadcom's htsim (`LosslessInputQueue`) pauses above its high mark and resumes below
//! its low one, with no bound on what arrives after the pause, so its defaults (15 and 12
//! packets of 9000 B) are `pfc_xoff = 135001`, `pfc_xon = 107999` and a `buffer` too large to
//! fill.

use super::SharedBuffer;

/// The XOFF threshold of an ingress's use of a shared pool.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Xoff {
    /// A fixed number of bytes.
    Static(u64),
    /// α times the pool's free bytes (the dynamic threshold).
    Dynamic(f64),
}

/// When a paused ingress of a shared pool resumes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Xon {
    /// At or below a fixed number of bytes.
    Static(u64),
    /// At or below the XOFF threshold of the moment minus this many bytes.
    Offset(u64),
}

/// Where an admitted frame went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    /// Into the ingress's buffer or the shared pool; `pause`: the ingress just crossed XOFF.
    Held {
        /// Send a pause upstream now.
        pause: bool,
    },
    /// Neither the buffer nor the headroom had room: dropped (counted in `overruns`).
    Overrun,
}

/// PFC state of every ingress (indexed by the link the bytes came over).
#[derive(Debug)]
pub struct Pfc {
    /// Own buffer: pause when an ingress holds this many bytes.
    pub xoff: u64,
    /// Own buffer: resume when it holds this many or fewer.
    pub xon: u64,
    /// Own buffer: bytes an ingress may hold at all (XOFF plus headroom).
    pub limit: u64,
    /// Shared pool: the XOFF threshold.
    pub pool_xoff: Xoff,
    /// Shared pool: the XON rule.
    pub pool_xon: Xon,
    /// Bytes in the switch that arrived over each link: all of them with its own buffer, the
    /// shared pool's part with a shared pool.
    pub ingress: Vec<u64>,
    /// Shared pool: each ingress's headroom, bytes (empty without a shared pool).
    pub headroom: Vec<u64>,
    /// Shared pool: bytes each ingress holds in its headroom.
    pub in_headroom: Vec<u64>,
    /// Own buffer, on a described topology: each ingress's (XOFF, XON, limit), from its own
    /// link's buffer, rate and delay; empty: every ingress has `xoff`, `xon` and `limit`.
    pub own: Vec<(u64, u64, u64)>,
    /// Whether the switch has paused each link (and not yet resumed it).
    pub paused: Vec<bool>,
    /// Frames dropped because the headroom (or the own buffer) was full.
    pub overruns: u64,
}

impl Pfc {
    /// PFC over `links` links, each ingress with its own buffer of `limit` bytes, XOFF and XON
    /// as given; `pool_xoff`, `pool_xon` and `headroom` apply to the ingresses of switches
    /// with a shared pool.
    pub fn new(
        links: usize,
        (xoff, xon, limit): (u64, u64, u64),
        (pool_xoff, pool_xon): (Xoff, Xon),
        headroom: Vec<u64>,
    ) -> Pfc {
        Pfc {
            xoff,
            xon,
            limit,
            pool_xoff,
            pool_xon,
            ingress: vec![0; links],
            in_headroom: vec![0; if headroom.is_empty() { 0 } else { links }],
            headroom,
            paused: vec![false; links],
            overruns: 0,
            own: Vec::new(),
        }
    }

    /// The same with each ingress's own (XOFF, XON, limit) given by link (a described
    /// topology's links each have their own buffer, rate and delay).
    pub fn with_own(mut self, own: Vec<(u64, u64, u64)>) -> Pfc {
        self.own = own;
        self
    }

    /// Ingress `up`'s own (XOFF, XON, limit).
    #[inline]
    pub fn own_of(&self, up: usize) -> (u64, u64, u64) {
        match self.own.get(up) {
            Some(&t) => t,
            None => (self.xoff, self.xon, self.limit),
        }
    }

    /// Admit a frame of `frame` bytes come over link `up` into a switch with its own buffer
    /// per ingress.
    #[inline]
    pub fn admit_own(&mut self, up: usize, frame: u64) -> Admit {
        let (xoff, _, limit) = self.own_of(up);
        let held = &mut self.ingress[up];
        if *held + frame > limit {
            self.overruns += 1;
            return Admit::Overrun;
        }
        *held += frame;
        let pause = *held >= xoff && !self.paused[up];
        self.paused[up] |= pause;
        Admit::Held { pause }
    }

    /// A frame of `frame` bytes come over `up` left a switch with its own buffer per ingress;
    /// true if the ingress is to be resumed.
    #[inline]
    pub fn release_own(&mut self, up: usize, frame: u64) -> bool {
        let (_, xon, _) = self.own_of(up);
        let held = &mut self.ingress[up];
        *held -= frame;
        let resume = self.paused[up] && *held <= xon;
        self.paused[up] &= !resume;
        resume
    }

    /// The XOFF threshold of an ingress of `pool` now.
    #[inline]
    fn threshold(&self, pool: &SharedBuffer) -> u64 {
        match self.pool_xoff {
            Xoff::Static(b) => b,
            Xoff::Dynamic(alpha) => (alpha * pool.free() as f64) as u64,
        }
    }

    /// Admit a frame of `frame` bytes come over link `up` into a switch whose buffer is `pool`.
    #[inline]
    pub fn admit_shared(&mut self, up: usize, frame: u64, pool: &mut SharedBuffer) -> Admit {
        let threshold = self.threshold(pool);
        let used = self.ingress[up];
        if used + frame <= threshold && frame <= pool.free() {
            self.ingress[up] += frame;
            pool.take(frame);
        } else if self.in_headroom[up] + frame <= self.headroom[up] {
            self.in_headroom[up] += frame;
            pool.take_headroom(frame);
        } else {
            self.overruns += 1;
            return Admit::Overrun;
        }
        // The threshold after the frame: a dynamic one has shrunk by α × the frame.
        let over = self.in_headroom[up] > 0 || self.ingress[up] >= self.threshold(pool);
        let pause = over && !self.paused[up];
        self.paused[up] |= pause;
        Admit::Held { pause }
    }

    /// A frame of `frame` bytes come over `up` left a switch whose buffer is `pool` (the
    /// headroom drains first); true if the ingress is to be resumed.
    #[inline]
    pub fn release_shared(&mut self, up: usize, frame: u64, pool: &mut SharedBuffer) -> bool {
        let from_headroom = frame.min(self.in_headroom[up]);
        self.in_headroom[up] -= from_headroom;
        pool.release_headroom(from_headroom);
        self.ingress[up] -= frame - from_headroom;
        pool.release(frame - from_headroom);
        if !self.paused[up] || self.in_headroom[up] > 0 {
            return false;
        }
        let used = self.ingress[up];
        let xon = match self.pool_xon {
            Xon::Static(b) => b,
            Xon::Offset(o) => self.threshold(pool).saturating_sub(o),
        };
        let resume = used == 0 || used <= xon;
        self.paused[up] = !resume;
        resume
    }

    /// Bytes every ingress holds together (buffers, pools and headrooms).
    pub fn held(&self) -> u64 {
        self.ingress.iter().sum::<u64>() + self.in_headroom.iter().sum::<u64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn own() -> Pfc {
        Pfc::new(
            2,
            (3_000, 1_500, 4_000),
            (Xoff::Static(0), Xon::Static(0)),
            Vec::new(),
        )
    }

    #[test]
    fn an_own_buffer_pauses_at_xoff_resumes_at_xon_and_overruns_past_its_limit() {
        let mut p = own();
        assert_eq!(p.admit_own(0, 1_500), Admit::Held { pause: false });
        assert_eq!(p.admit_own(0, 1_499), Admit::Held { pause: false });
        assert_eq!(p.admit_own(0, 1), Admit::Held { pause: true });
        assert_eq!(p.admit_own(0, 1_000), Admit::Held { pause: false });
        assert_eq!(p.admit_own(0, 1), Admit::Overrun);
        assert_eq!(p.overruns, 1);
        assert!(!p.release_own(0, 2_499), "1501 held: above XON");
        assert!(p.release_own(0, 1), "1500 held: at XON");
        assert!(!p.release_own(0, 1_000), "resumed once");
        assert_eq!(p.admit_own(1, 3_000), Admit::Held { pause: true });
    }

    fn shared(xoff: Xoff, xon: Xon) -> (Pfc, SharedBuffer) {
        (
            Pfc::new(3, (0, 0, 0), (xoff, xon), vec![2_000; 3]),
            SharedBuffer::new(10_000, 1.0),
        )
    }

    #[test]
    fn a_static_threshold_fills_the_pool_then_the_headroom_and_pauses_at_the_first_overflow() {
        let (mut p, mut pool) = shared(Xoff::Static(3_000), Xon::Static(1_000));
        assert_eq!(
            p.admit_shared(0, 1_500, &mut pool),
            Admit::Held { pause: false }
        );
        // 1500 + 1499 stays within XOFF: still in the pool, not yet at it.
        assert_eq!(
            p.admit_shared(0, 1_499, &mut pool),
            Admit::Held { pause: false }
        );
        // The next frame would pass XOFF: into the headroom, and the ingress is paused.
        assert_eq!(
            p.admit_shared(0, 1_000, &mut pool),
            Admit::Held { pause: true }
        );
        assert_eq!((p.ingress[0], p.in_headroom[0]), (2_999, 1_000));
        assert_eq!(
            p.admit_shared(0, 1_000, &mut pool),
            Admit::Held { pause: false }
        );
        // A frame that would still fit under XOFF goes to the pool; one that would not, to
        // the full headroom: an overrun.
        assert_eq!(p.admit_shared(0, 2, &mut pool), Admit::Overrun);
        assert_eq!(p.overruns, 1);
        assert_eq!((pool.used(), pool.max_used), (2_999, 4_999));
        // The headroom drains first; XON once it is empty and the pool use is at 1000.
        assert!(!p.release_shared(0, 2_000, &mut pool));
        assert_eq!((p.ingress[0], p.in_headroom[0]), (2_999, 0));
        assert!(!p.release_shared(0, 1_998, &mut pool), "1001 in the pool");
        assert!(p.release_shared(0, 1, &mut pool), "1000: at XON");
        assert_eq!(pool.used(), 1_000);
        // Another ingress is accounted apart.
        assert_eq!(
            p.admit_shared(1, 3_000, &mut pool),
            Admit::Held { pause: true }
        );
    }

    #[test]
    fn a_dynamic_threshold_shrinks_as_the_pool_fills() {
        // α = 1: an ingress may hold as much as is free. 10 KB pool: alone, an ingress reaches
        // the threshold at 5 KB (5 KB held, 5 KB free).
        let (mut p, mut pool) = shared(Xoff::Dynamic(1.0), Xon::Offset(1_000));
        for _ in 0..4 {
            assert_eq!(
                p.admit_shared(0, 1_000, &mut pool),
                Admit::Held { pause: false }
            );
        }
        assert_eq!(
            p.admit_shared(0, 1_000, &mut pool),
            Admit::Held { pause: true },
            "5000 held, 5000 free"
        );
        // A second ingress now sees a threshold of 5 KB minus what it takes itself.
        assert_eq!(
            p.admit_shared(1, 2_000, &mut pool),
            Admit::Held { pause: false }
        );
        assert_eq!(
            p.admit_shared(1, 1_000, &mut pool),
            Admit::Held { pause: true },
            "3000 held, 2000 free"
        );
        assert_eq!(
            p.admit_shared(1, 1_000, &mut pool),
            Admit::Held { pause: false },
            "would pass α × free: into the headroom, already paused"
        );
        assert_eq!((p.ingress[1], p.in_headroom[1]), (3_000, 1_000));
        // Ingress 0 resumes when its use falls to the threshold minus the offset: it holds
        // 5000, the pool 8000 of 10000; after 2000 leave it holds 3000 with 4000 free.
        assert!(
            !p.release_shared(0, 1_000, &mut pool),
            "4000 held, 3000 free"
        );
        assert!(
            p.release_shared(0, 1_000, &mut pool),
            "3000 held, 4000 free"
        );
    }

    #[test]
    fn a_paused_ingress_that_empties_resumes_whatever_the_threshold() {
        let (mut p, mut pool) = shared(Xoff::Dynamic(0.001), Xon::Offset(1_000));
        assert_eq!(
            p.admit_shared(2, 1_500, &mut pool),
            Admit::Held { pause: true }
        );
        assert_eq!((p.ingress[2], p.in_headroom[2]), (0, 1_500));
        assert!(p.release_shared(2, 1_500, &mut pool));
        assert_eq!((pool.used(), p.held()), (0, 0));
    }
}
