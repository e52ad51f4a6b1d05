//! Setting a TCP run up: the application's connections and the background flows, each with
//! its two endpoints on their hosts, routes and random streams.

use std::collections::VecDeque;

use super::agent::{EndpointTimers, Tcp};
use crate::app::App;
use crate::config::{CongestionControl, RtoRandomization, Scenario};
use crate::engine::driver::Cx;
use crate::engine::{Event, EventQueue};
use crate::ids::{ConnId, EndpointId};
use crate::net::fabric::Fabric;
use crate::report::Series;
use crate::rng::{Rng, Stream};
use crate::tcp::Packet;
use crate::tcp::{Endpoint, RtoPolicy, RttEstimator, TcpParams};
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
        let params = TcpParams::from(&sc.tcp);
        let mut eps = Vec::with_capacity(2 * conns as usize);
        let mut ep_route = Vec::with_capacity(2 * conns as usize);
        let mut ep_host = Vec::with_capacity(2 * conns as usize);
        for c in 0..conns {
            let conn = ConnId(c);
            let (server, client) = if c < fg {
                app.ends(conn, net)
            } else {
                net.background_ends(sc, c - fg)
            };
            // ECN is used only if both ends negotiated it (RFC 3168 6.1.1).
            let ecn = sc.tcp.ecn && (c < fg || sc.background.ecn.unwrap_or(sc.tcp.ecn));
            // Per-flow ECMP: each connection hashes onto one path (both directions alike).
            let path = Rng::stream(sc.seed, Stream::EcmpPath(conn)).next_u64() as u32;
            let to_server = net.add_route(client, server, path);
            let to_client = net.add_route(server, client, path);
            let handshake = net.latency(to_server, sc.tcp.header_bytes)
                + net.latency(to_client, sc.tcp.header_bytes);
            // The client sends towards the server, the server back.
            for (ep, route, host) in [
                (conn.receiver(), to_server, client),
                (conn.sender(), to_client, server),
            ] {
                debug_assert_eq!(ep.index(), eps.len());
                let p = TcpParams {
                    ecn,
                    ..params.clone()
                };
                eps.push(endpoint(sc, p, ep, fg, handshake));
                ep_route.push(route);
                ep_host.push(host);
            }
        }
        Tcp {
            host_q: vec![VecDeque::new(); eps.len()],
            timers: vec![EndpointTimers::default(); eps.len()],
            host_rng: (0..eps.len() as u32)
                .map(|e| Rng::stream(sc.seed, Stream::HostJitter(EndpointId(e))))
                .collect(),
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

/// Endpoint `ep` of a run with `fg` application connections.
fn endpoint(
    sc: &Scenario,
    p: TcpParams,
    ep: EndpointId,
    fg: u32,
    handshake: crate::units::SimTime,
) -> Endpoint {
    let rtt = RttEstimator::for_tcp(&sc.tcp);
    let mut e = Endpoint::new(p, rtt, Some(handshake));
    if sc.tcp.rto_randomization != RtoRandomization::None {
        let rng = Rng::stream(sc.seed, Stream::RtoPolicy(ep));
        e = e.with_rto_policy(RtoPolicy::new(&sc.tcp, fg, rng));
    }
    if sc.tcp.congestion_control == CongestionControl::Bbr {
        e = e.with_cc_rng(Rng::stream(sc.seed, Stream::Bbr(ep)));
    }
    e
}
