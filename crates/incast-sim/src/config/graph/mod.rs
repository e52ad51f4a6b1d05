//! A described topology (`topology.kind = "file"`): switches, hosts and the links between
//! them, in the form the normalized scenario carries it.
//!
//! Users write a TOML file with unit strings; the Python layer reads it, turns the units into
//! base units and puts the tables in `topology.file`, so a stored result carries its topology
//! and needs no other file (as a CDF file's points are carried). This module owns the shape of
//! those tables and every rule they follow (`resolve.rs`: the topology's own; `scenario.rs`: what
//! a scenario may ask of it); [`crate::routing`] builds the routes over them.
//!
//! A host has exactly one link, to a switch (its NIC is link `2h` and the switch's port towards
//! it `2h + 1`, as in every topology); switches link to hosts and to each other, and parallel
//! links between two switches are allowed (ECMP spreads flows over them). A link's `buffer` is
//! the drop-tail limit of the switch egress port at each switch end; a switch may also share
//! one buffer among all its ports (`shared_buffer`, dynamic threshold α).

mod resolve;
mod scenario;

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::section::Shape;
use super::{bad, shown, ConfigError, QueueLimit};
use crate::units::SimTime;

/// The scenario key a described topology lives in; every error names it.
pub const FIELD: &str = "topology.file";
/// Most switches a described topology may have: the route tables hold one distance per pair
/// of switches (4096² × 2 bytes = 32 MiB).
pub const MAX_SWITCHES: usize = 4096;
/// Most links a described topology may have.
pub const MAX_LINKS: usize = 1_000_000;
/// Most work the route tables' set-up may take: a breadth-first search from every switch
/// over every switch-to-switch link, switches × (switches + links) steps (a k = 32 fat tree
/// described link by link needs 22 million).
pub const MAX_ROUTING_STEPS: u64 = 200_000_000;
/// Longest name of a switch or host.
const MAX_NAME: usize = 100;

/// A switch of a described topology.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GraphSwitch {
    /// Its name, unique among switches and hosts.
    pub name: String,
    /// Bytes shared by all its egress ports (each also bounded by its link's `buffer`);
    /// `None`: every port has its own buffer only.
    pub shared_buffer: Option<u64>,
    /// Dynamic threshold α of its shared buffer; `None`: `topology.buffer_alpha`.
    pub buffer_alpha: Option<f64>,
}

/// A link of a described topology: two directions of the same rate and delay.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GraphLink {
    /// One end (a switch or a host).
    pub a: String,
    /// The other end.
    pub b: String,
    /// Bits per second, each way.
    pub rate: u64,
    /// Propagation delay each way, picoseconds.
    pub delay: SimTime,
    /// Drop-tail limit of the switch egress port at each switch end (a host's own end is its
    /// NIC, bounded by `topology.nic_buffer`).
    pub buffer: QueueLimit,
}

/// A described topology, as the normalized scenario carries it (receiver and senders filled).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Graph {
    /// Switches, in the order given.
    pub switches: Vec<GraphSwitch>,
    /// Host names; a host's index is its place in this list.
    pub hosts: Vec<String>,
    /// Links, in the order given (ECMP next hops are tried in this order).
    pub links: Vec<GraphLink>,
    /// The receiver of fan-in workloads (sync_read, incast, queries); given or the last host.
    pub receiver: String,
    /// The senders of fan-in workloads, in order (`topology.senders` = N takes the first N);
    /// given or every host but the receiver, in the order of `hosts`.
    pub senders: Vec<String>,
}

/// A [`Graph`] with its names resolved to indices: what routing and placement need.
#[derive(Debug, Clone)]
pub struct ResolvedGraph {
    /// Switch of each host.
    pub host_switch: Vec<u32>,
    /// The link of each host (an index into [`Graph::links`]).
    pub host_link: Vec<u32>,
    /// Switch-to-switch links in the order given: (index into [`Graph::links`], switch at
    /// end `a`, switch at end `b`).
    pub trunks: Vec<(u32, u32, u32)>,
    /// Host index of the receiver.
    pub receiver: u32,
    /// Host indices of the senders, in order.
    pub senders: Vec<u32>,
}

/// A rate as users write it: `1Gbps`, `100Mbps`, or bits per second.
pub(crate) fn shown_rate(bps: u64) -> String {
    for (unit, scale) in [
        ("Tbps", 1e12 as u64),
        ("Gbps", 1e9 as u64),
        ("Mbps", 1e6 as u64),
    ] {
        if bps >= scale && bps.is_multiple_of(scale) {
            return format!("{}{unit}", bps / scale);
        }
    }
    format!("{bps}bps")
}

fn err(message: impl Into<String>) -> ConfigError {
    bad(FIELD, message)
}

fn name_of(v: Option<&Value>, what: &str) -> Result<String, ConfigError> {
    match v {
        Some(Value::String(s)) if !s.trim().is_empty() && s.chars().count() <= MAX_NAME => {
            Ok(s.clone())
        }
        Some(v) => Err(err(format!(
            "{what}: expected a name (text of 1..{MAX_NAME} characters), got {}",
            shown(v)
        ))),
        None => Err(err(format!("{what}: has no name"))),
    }
}

fn list<'a>(m: &'a Map<String, Value>, key: &str) -> Result<&'a [Value], ConfigError> {
    match m.get(key) {
        Some(Value::Array(a)) => Ok(a),
        Some(v) => Err(err(format!("{key}: expected a list, got {}", shown(v)))),
        None => Err(err(format!(
            "has no {key}; a topology file lists switches, hosts and links"
        ))),
    }
}

fn no_other_keys(m: &Map<String, Value>, allowed: &[&str], what: &str) -> Result<(), ConfigError> {
    match m.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => Err(err(format!(
            "{what}unknown key {}; allowed: {}",
            shown(&Value::from(k.as_str())),
            allowed.join(", ")
        ))),
        None => Ok(()),
    }
}

fn load_switch(i: usize, v: &Value) -> Result<GraphSwitch, ConfigError> {
    let what = format!("switch {i}");
    match v {
        Value::String(_) => Ok(GraphSwitch {
            name: name_of(Some(v), &what)?,
            shared_buffer: None,
            buffer_alpha: None,
        }),
        Value::Object(m) => {
            no_other_keys(
                m,
                &["name", "shared_buffer", "buffer_alpha"],
                &format!("{what}: "),
            )?;
            let name = name_of(m.get("name"), &what)?;
            let shared_buffer = match m.get("shared_buffer") {
                None | Some(Value::Null) => None,
                Some(b) => Some(b.as_u64().ok_or_else(|| {
                    err(format!(
                        "switch {name}: shared_buffer: expected bytes, got {}",
                        shown(b)
                    ))
                })?),
            };
            let buffer_alpha = match m.get("buffer_alpha") {
                None | Some(Value::Null) => None,
                Some(a) => Some(a.as_f64().ok_or_else(|| {
                    err(format!(
                        "switch {name}: buffer_alpha: expected a number, got {}",
                        shown(a)
                    ))
                })?),
            };
            Ok(GraphSwitch {
                name,
                shared_buffer,
                buffer_alpha,
            })
        }
        v => Err(err(format!(
            "{what}: expected a name or a table with name and shared_buffer, got {}",
            shown(v)
        ))),
    }
}

fn load_link(i: usize, v: &Value) -> Result<GraphLink, ConfigError> {
    let Value::Object(m) = v else {
        return Err(err(format!(
            "link {i}: expected a table {{a, b, rate, delay, buffer}}, got {}",
            shown(v)
        )));
    };
    let a = name_of(m.get("a"), &format!("link {i}: end a"))?;
    let b = name_of(m.get("b"), &format!("link {i}: end b"))?;
    let what = format!("link {i} ({a}–{b})");
    no_other_keys(
        m,
        &["a", "b", "rate", "delay", "buffer"],
        &format!("{what}: "),
    )?;
    let need = |key: &str, example: &str| -> Result<&Value, ConfigError> {
        m.get(key).filter(|v| !v.is_null()).ok_or_else(|| {
            err(format!(
                "{what} has no {key}; every link gives rate, delay and buffer (e.g. {key} = {example})"
            ))
        })
    };
    let rate = need("rate", "\"1Gbps\"")?;
    let rate = rate.as_u64().ok_or_else(|| {
        err(format!(
            "{what}: rate: expected bits per second, got {}",
            shown(rate)
        ))
    })?;
    let delay = need("delay", "\"25us\"")?;
    let delay = delay.as_u64().ok_or_else(|| {
        err(format!(
            "{what}: delay: expected picoseconds, got {}",
            shown(delay)
        ))
    })?;
    let buffer = need("buffer", "\"64KB\"")?;
    let buffer = QueueLimit::deserialize(buffer).map_err(|_| {
        err(format!(
            "{what}: buffer: expected {{\"bytes\": n or null, \"packets\": n or null}}, got {}",
            shown(buffer)
        ))
    })?;
    Ok(GraphLink {
        a,
        b,
        rate,
        delay,
        buffer,
    })
}

impl Shape for Graph {
    fn load(field: &str, v: Value) -> Result<Self, ConfigError> {
        debug_assert_eq!(field, FIELD);
        let Value::Object(m) = v else {
            return Err(err(format!(
                "expected the tables of a topology file (switches, hosts, links), got {}",
                shown(&v)
            )));
        };
        no_other_keys(
            &m,
            &["switches", "hosts", "links", "receiver", "senders"],
            "",
        )?;
        let switches = list(&m, "switches")?;
        let hosts = list(&m, "hosts")?;
        let links = list(&m, "links")?;
        if switches.len() > MAX_SWITCHES {
            return Err(err(format!(
                "{} switches; at most {MAX_SWITCHES}",
                switches.len()
            )));
        }
        if hosts.len() > super::MAX_SENDERS as usize {
            return Err(err(format!(
                "{} hosts; at most {}",
                hosts.len(),
                super::MAX_SENDERS
            )));
        }
        if links.len() > MAX_LINKS {
            return Err(err(format!("{} links; at most {MAX_LINKS}", links.len())));
        }
        let switches = switches
            .iter()
            .enumerate()
            .map(|(i, s)| load_switch(i, s))
            .collect::<Result<Vec<_>, _>>()?;
        let hosts = hosts
            .iter()
            .enumerate()
            .map(|(i, h)| name_of(Some(h), &format!("host {i}")))
            .collect::<Result<Vec<_>, _>>()?;
        let links = links
            .iter()
            .enumerate()
            .map(|(i, l)| load_link(i, l))
            .collect::<Result<Vec<_>, _>>()?;
        let receiver = match m.get("receiver") {
            None | Some(Value::Null) => {
                hosts.last().cloned().ok_or_else(|| err("lists no hosts"))?
            }
            r => name_of(r, "receiver")?,
        };
        let senders = match m.get("senders") {
            None | Some(Value::Null) => hosts.iter().filter(|h| **h != receiver).cloned().collect(),
            Some(Value::Array(a)) => a
                .iter()
                .enumerate()
                .map(|(i, s)| name_of(Some(s), &format!("senders[{i}]")))
                .collect::<Result<Vec<_>, _>>()?,
            Some(v) => {
                return Err(err(format!(
                    "senders: expected a list of host names, got {}",
                    shown(v)
                )))
            }
        };
        Ok(Graph {
            switches,
            hosts,
            links,
            receiver,
            senders,
        })
    }

    fn shape() -> Value {
        let name = json!({"type": "string"});
        let n = json!({"type": "integer", "minimum": 0});
        let limit = super::QueueLimit::shape();
        json!({
            "type": "object",
            "properties": {
                "switches": {"type": "array", "items": {"type": "object", "properties": {
                    "name": name,
                    "shared_buffer": {"anyOf": [n, {"type": "null"}]},
                    "buffer_alpha": {"anyOf": [{"type": "number"}, {"type": "null"}]},
                }}},
                "hosts": {"type": "array", "items": name},
                "links": {"type": "array", "items": {"type": "object", "properties": {
                    "a": name, "b": name, "rate": n, "delay": n, "buffer": limit,
                }}},
                "receiver": name,
                "senders": {"type": "array", "items": name},
            },
            "additionalProperties": false,
        })
    }
}

impl ResolvedGraph {
    /// Every link direction that enters a switch, as the network numbers links (host h's NIC
    /// is link 2h; the i-th switch-to-switch link is link 2·hosts + 2i from its end `a` to
    /// `b`, and the next one back): (that link, the switch it enters, its index in
    /// [`Graph::links`]). PFC's ingresses.
    pub fn ingresses(&self) -> impl Iterator<Item = (u32, u32, u32)> + '_ {
        let first = 2 * self.host_switch.len() as u32;
        let hosts = (self.host_switch.iter().zip(&self.host_link).enumerate())
            .map(|(h, (&s, &l))| (2 * h as u32, s, l));
        let trunks = (self.trunks.iter().enumerate()).flat_map(move |(i, &(l, a, b))| {
            let up = first + 2 * i as u32;
            [(up, b, l), (up + 1, a, l)]
        });
        hosts.chain(trunks)
    }
}

impl Graph {
    /// Hosts in the order the scenario places them (logical host `i` is physical host
    /// `order[i]`): the first `n` senders, the receiver, the other senders, then every other
    /// host in file order (background hosts and the sink take these).
    pub fn placement(r: &ResolvedGraph, n: u32) -> Vec<u32> {
        let n = (n as usize).min(r.senders.len());
        let mut order = Vec::with_capacity(r.host_switch.len());
        order.extend_from_slice(&r.senders[..n]);
        order.push(r.receiver);
        order.extend_from_slice(&r.senders[n..]);
        let mut placed = vec![false; r.host_switch.len()];
        for &h in &order {
            placed[h as usize] = true;
        }
        order.extend((0..r.host_switch.len() as u32).filter(|&h| !placed[h as usize]));
        order
    }

    /// The rate of host `h`'s link.
    pub fn host_rate(&self, r: &ResolvedGraph, h: u32) -> u64 {
        self.links[r.host_link[h as usize] as usize].rate
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn star(hosts: usize) -> Value {
        let names: Vec<String> = (0..hosts).map(|i| format!("h{i}")).collect();
        let links: Vec<Value> = names
            .iter()
            .map(|h| json!({"a": h, "b": "s", "rate": 1_000_000_000u64, "delay": 25_000_000u64, "buffer": {"bytes": 64_000, "packets": null}}))
            .collect();
        json!({"switches": ["s"], "hosts": names, "links": links})
    }

    fn load(v: Value) -> Result<ResolvedGraph, ConfigError> {
        Graph::load(FIELD, v)?.resolve()
    }

    fn message(v: Value) -> String {
        let e = load(v).unwrap_err();
        assert_eq!(e.field, FIELD);
        e.message
    }

    #[test]
    fn receiver_and_senders_default_to_the_last_host_and_the_others() {
        let g = Graph::load(FIELD, star(4)).unwrap();
        assert_eq!(g.receiver, "h3");
        assert_eq!(g.senders, ["h0", "h1", "h2"]);
        let r = g.resolve().unwrap();
        assert_eq!((r.receiver, r.senders.clone()), (3, vec![0, 1, 2]));
        // Two senders placed: they, the receiver, then the third sender.
        assert_eq!(Graph::placement(&r, 2), [0, 1, 3, 2]);
    }

    #[test]
    fn bad_topologies_get_one_line_naming_what_is_wrong() {
        let mut v = star(3);
        v["links"][1]["b"] = json!("s9");
        assert!(message(v).contains("unknown node \"s9\""));

        let mut v = star(3);
        v["links"][0].as_object_mut().unwrap().remove("rate");
        assert!(message(v).starts_with("link 0 (h0–s) has no rate"));

        let mut v = star(3);
        v["links"][0]["rate"] = json!(0);
        assert!(message(v).contains("rate must be positive"));

        let mut v = star(3);
        v["hosts"][2] = json!("s");
        assert!(message(v).contains("\"s\" is used twice"));

        let mut v = star(3);
        v["links"].as_array_mut().unwrap().pop();
        assert_eq!(
            message(v),
            "host h2 has no link; every host links to one switch"
        );

        let mut v = star(3);
        let extra = v["links"][0].clone();
        v["links"].as_array_mut().unwrap().push(extra);
        assert!(message(v).starts_with("host h0 has two links (links 0 and 3)"));

        let mut v = star(3);
        v["links"][0]["b"] = json!("h1");
        assert!(message(v).contains("joins two hosts"));

        let mut v = star(3);
        v["receiver"] = json!("s");
        assert_eq!(message(v), "receiver \"s\" is a switch; it must be a host");

        let mut v = star(3);
        v["senders"] = json!(["h0", "h0"]);
        assert_eq!(message(v), "sender \"h0\" is listed twice");

        let mut v = star(3);
        v["colour"] = json!("red");
        assert!(message(v).starts_with("unknown key \"colour\""));
    }

    #[test]
    fn a_graph_too_big_to_route_is_refused_before_any_search() {
        let trunk = |i: usize| json!({"a": format!("s{}", i % 4096), "b": format!("s{}", (i + 1) % 4096), "rate": 1, "delay": 0, "buffer": {"bytes": null, "packets": null}});
        let mut v = star(2);
        v["switches"] = (0..4096).map(|i| json!(format!("s{i}"))).collect();
        v["links"][0]["b"] = json!("s0");
        v["links"][1]["b"] = json!("s1");
        let links = v["links"].as_array_mut().unwrap();
        links.extend((0..30_000).map(trunk));
        assert!(message(v)
            .starts_with("4096 switches and 30000 switch-to-switch links are too many to route"));
    }

    #[test]
    fn a_host_on_an_island_cannot_reach_the_others() {
        let mut v = star(3);
        v["switches"] = json!(["s", "t"]);
        v["links"][2]["b"] = json!("t");
        assert_eq!(
            message(v.clone()),
            "host h2 (on switch t) cannot reach host h0 (on switch s): no links join their switches"
        );
        v["links"].as_array_mut().unwrap().push(
            json!({"a": "s", "b": "t", "rate": 1, "delay": 0, "buffer": {"bytes": null, "packets": null}}),
        );
        let r = load(v).unwrap();
        assert_eq!(r.trunks, [(3, 0, 1)]);
        assert_eq!(r.host_switch, [0, 0, 1]);
    }

    /// A scenario on the 4-host star of [`star`], with `extra` merged into its topology.
    fn scenario(workload: Value, extra: Value) -> Result<super::super::Scenario, ConfigError> {
        let mut topology = json!({"kind": "file", "file": star(4)});
        for (k, v) in extra.as_object().unwrap() {
            topology[k] = v.clone();
        }
        let v = json!({"topology": topology, "workload": workload});
        super::super::Scenario::from_json(&v.to_string())
    }

    fn refused(workload: Value, extra: Value) -> (String, String) {
        let e = scenario(workload, extra).unwrap_err();
        (e.field, e.message)
    }

    #[test]
    fn a_file_gives_the_sender_count_and_the_rates_unless_told() {
        let sync = json!({"kind": "sync_read", "sru": 1000});
        let sc = scenario(sync.clone(), json!({})).unwrap();
        assert_eq!(sc.topology.senders, 3, "every host but the receiver");
        assert_eq!(sc.topology.link, 1_000_000_000);
        assert_eq!(sc.topology.receiver_link, 1_000_000_000);
        // The normalized form reads back to itself.
        let again = super::super::Scenario::from_json(&sc.to_json()).unwrap();
        assert_eq!(again, sc);
        assert_eq!(
            scenario(sync.clone(), json!({"senders": 2}))
                .unwrap()
                .topology
                .senders,
            2
        );
        let kv = json!({"kind": "kv_gets", "kv_replicas": 2});
        assert_eq!(scenario(kv, json!({})).unwrap().topology.senders, 4);
    }

    #[test]
    fn a_scenario_asking_what_the_file_cannot_give_gets_one_line() {
        let sync = json!({"kind": "sync_read", "sru": 1000});
        assert_eq!(
            refused(sync.clone(), json!({"senders": 4})),
            (
                "topology.senders".into(),
                "4 senders asked for, and the topology file names 3 (its senders, or every host but the receiver)".into()
            )
        );
        let (field, message) = refused(sync.clone(), json!({"rtt": 1_000_000}));
        assert_eq!(field, "topology.rtt");
        assert!(message.starts_with("the topology file sets this"));
        let (field, message) = refused(sync.clone(), json!({"link": 10_000_000_000u64}));
        assert_eq!(field, "topology.link");
        assert!(message.contains("the first sender's is 1Gbps);"));
        let (field, _) = refused(sync.clone(), json!({"kind": "star"}));
        assert_eq!(field, FIELD);
        let (field, message) = refused(sync.clone(), json!({"file": null}));
        assert_eq!(field, FIELD);
        assert!(message.contains("needs a topology"));
        // PFC takes each ingress's own link buffer: 64 KB holds the headroom, 8 KB does not.
        scenario(sync.clone(), json!({"pfc": true})).unwrap();
        let mut tight = star(4);
        tight["links"][1]["buffer"] = json!({"bytes": 8_000, "packets": null});
        let (field, message) = refused(sync.clone(), json!({"file": tight, "pfc": true}));
        assert_eq!(field, FIELD);
        assert!(message.starts_with("link 1 (h1–s) into switch s: a buffer of 8000 bytes leaves no room below PFC's headroom"), "{message}");
        let mut small = star(4);
        small["links"][2]["buffer"] = json!({"bytes": 1000, "packets": null});
        let (field, message) = refused(sync.clone(), json!({"file": small}));
        assert_eq!(field, FIELD);
        assert!(message.starts_with("link 2 (h2–s): a buffer of 1000 bytes is smaller"));
        let kv = json!({"kind": "kv_gets", "kv_replicas": 2});
        assert_eq!(
            refused(kv.clone(), json!({"senders": 5})),
            (
                "topology.senders".into(),
                "the key-value cluster takes 5 hosts, and the topology file has 4".into()
            )
        );
        let mut mixed = star(4);
        mixed["links"][1]["rate"] = json!(10_000_000_000u64);
        let (field, message) = refused(kv, json!({"file": mixed}));
        assert_eq!(field, "workload.kv_utilization");
        assert!(message.contains("host h1 has 10Gbps and host h0 1Gbps"));
        let bg = json!({"topology": {"kind": "file", "file": star(4), "senders": 2}, "background": {"flows": 2}, "workload": {"sru": 1000}});
        let e = super::super::Scenario::from_json(&bg.to_string()).unwrap_err();
        assert_eq!(e.field, "background.flows");
        let ndp = json!({"topology": {"kind": "file", "file": star(4)}, "transport": "ndp", "workload": {"kind": "incast", "flow_size": 1000}});
        let e = super::super::Scenario::from_json(&ndp.to_string()).unwrap_err();
        assert_eq!(e.field, "transport");
    }
}
