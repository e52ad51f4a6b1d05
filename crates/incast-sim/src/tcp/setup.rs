//! Setting a TCP run up: the application's connections and the background flows, each with
//! its two endpoints on their hosts, routes and random streams.

use super::agent::Tcp;
use super::scoreboard::SegPool;
use super::slots::Endpoints;
use crate::app::App;
use crate::config::Scenario;
use crate::engine::driver::Cx;
use crate::engine::{Event, EventQueue};
use crate::ids::ConnId;
use crate::net::fabric::Fabric;
use crate::report::Series;
use crate::rng::{Rng, Stream};
use crate::tcp::Packet;
use crate::topology::Network;

/// Bytes a background flow offers: more than any run can send.
const BACKGROUND_BYTES: u64 = 1 << 50;

impl Tcp {
    /// The connections of `sc` over `fabric`, the background flows writing, the start (and
    /// the first sample) scheduled.
    pub(super) fn set_up(
        sc: &Scenario,
        fabric: &mut Fabric<Packet>,
        events: &mut EventQueue,
    ) -> Tcp {
        let app = crate::app::of(sc, &fabric.net);
        Tcp::set_up_with(sc, fabric, events, app)
    }

    /// [`Tcp::set_up`] with application `app` in place of the scenario's workload.
    pub(crate) fn set_up_with(
        sc: &Scenario,
        fabric: &mut Fabric<Packet>,
        events: &mut EventQueue,
        app: Box<dyn App>,
    ) -> Tcp {
        let mut tcp = Tcp::connect(sc, &mut fabric.net, app);
        let fg = tcp.app_conns;
        let conns = tcp.eps.len() as u32 / 2;
        let mut cx = Cx {
            now: 0,
            events,
            fabric,
            sc,
        };
        for c in fg..conns {
            tcp.write(&mut cx, ConnId(c).sender(), BACKGROUND_BYTES);
        }
        let start = if sc.background.flows > 0 {
            sc.background.warmup
        } else {
            0
        };
        cx.push(start, Event::Start);
        if tcp.series.is_some() {
            cx.push(start, Event::Sample);
        }
        tcp
    }

    /// Every connection's endpoints and routes, nothing sent yet.
    fn connect(sc: &Scenario, net: &mut Network, app: Box<dyn App>) -> Tcp {
        let fg = app.connections();
        let conns = fg + sc.background.flows;
        let mut eps = Endpoints::new(sc, fg);
        let mut ep_route = Vec::with_capacity(2 * conns as usize);
        let mut ep_host = Vec::with_capacity(2 * conns as usize);
        for c in 0..conns {
            let conn = ConnId(c);
            let (server, client) = if c < fg {
                app.ends(conn, net)
            } else {
                net.background_ends(sc, c - fg)
            };
            // Per-flow ECMP: each connection hashes onto one path (both directions alike).
            let path = Rng::stream(sc.seed, Stream::EcmpPath(conn)).next_u64() as u32;
            let to_server = net.add_route(client, server, path);
            let to_client = net.add_route(server, client, path);
            let handshake = net.latency(to_server, sc.tcp.header_bytes)
                + net.latency(to_client, sc.tcp.header_bytes);
            // The client sends towards the server, the server back.
            debug_assert_eq!(conn.receiver().index(), eps.len());
            eps.connect(handshake);
            // Each with its first link, read with it as a segment is sent (one cache line, not
            // the route table's two).
            let first = |r: u32| net.hop(r, 0).expect("routes are never empty");
            ep_route.extend([(to_server, first(to_server)), (to_client, first(to_client))]);
            ep_host.extend([client, server]);
        }
        Tcp {
            seg_pool: SegPool::default(),
            eps,
            ep_route,
            ep_host,
            app_conns: fg,
            app_every_segment: app.every_segment(),
            app_counts_rx: app.counts_rx(),
            app,
            drops_by_kind: [0; 3],
            header: sc.tcp.header_bytes,
            jitter: sc.topology.host_jitter,
            out: Vec::new(),
            act: Vec::new(),
            served: Vec::new(),
            finished: false,
            busy_at_start: 0,
            background_at_start: 0,
            series: (sc.run.sample_interval > 0).then(|| Series {
                cwnd: vec![Vec::new(); fg as usize],
                ..Series::default()
            }),
            capture: None,
        }
    }
}
