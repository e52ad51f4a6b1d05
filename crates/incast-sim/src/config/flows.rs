//! The `flows` section: a schedule of flows between the hosts (`workload.kind = "flows"`):
//! background flows at an offered load with sizes from a flow-size CDF, and Poisson N:1
//! incast bursts, as HPCC's evaluation builds its traffic (Li et al., "HPCC: High Precision
//! Congestion Control", SIGCOMM 2019, §5). The schedule itself is
//! `incast_workload::flows::schedule`; these are its keys and their rules.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use incast_workload::cdf::Cdf;

use super::section::{section, Shape};
use super::{bad, ConfigError, Scenario, Transport, WorkloadKind, AN_HOUR};
use crate::units::*;

/// Most flows a schedule may hold on average (each is a connection of its own over TCP).
pub const MAX_FLOWS: f64 = 50_000.0;

/// A flow-size distribution: a built-in one by name (`websearch`, `hadoop`), or the points of
/// a CDF (a file's, parsed here from its text, which the Python layer reads).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum FlowSizes {
    /// A built-in distribution of `incast_workload::cdf::BUILTIN`.
    Named(String),
    /// (bytes, cumulative probability) points.
    Points(Vec<(u64, f64)>),
}

impl FlowSizes {
    /// The distribution (valid once the scenario is).
    pub fn cdf(&self) -> Result<Cdf, String> {
        match self {
            FlowSizes::Named(n) => Cdf::builtin(n).ok_or_else(|| {
                let names: Vec<&str> = Cdf::builtin_names().collect();
                format!(
                    "no built-in distribution {n:?}; built in: {}",
                    names.join(", ")
                )
            }),
            FlowSizes::Points(p) => Cdf::from_points(p).map_err(|e| e.to_string()),
        }
    }
}

impl Shape for FlowSizes {
    fn load(field: &str, v: Value) -> Result<Self, ConfigError> {
        let names: Vec<&str> = Cdf::builtin_names().collect();
        let expected = || {
            let shown = super::shown(&v);
            bad(
                field,
                format!(
                    "expected a built-in distribution ({}), a CDF file of 'size probability' lines, or [size, probability] points; got {shown}",
                    names.join(", ")
                ),
            )
        };
        let sizes = match &v {
            Value::String(s) if Cdf::builtin(s).is_some() => FlowSizes::Named(s.clone()),
            // A file's text, as the Python layer sends it: parsed here, so its errors name
            // the line.
            Value::Object(m) => {
                let (Some(Value::String(name)), Some(Value::String(text))) =
                    (m.get("file"), m.get("text"))
                else {
                    return Err(expected());
                };
                let cdf = Cdf::parse(text).map_err(|e| bad(field, format!("{name}, {e}")))?;
                FlowSizes::Points(cdf.points().to_vec())
            }
            Value::Array(_) => {
                let points: Vec<(u64, f64)> =
                    serde_json::from_value(v.clone()).map_err(|_| expected())?;
                Cdf::from_points(&points).map_err(|e| bad(field, e.to_string()))?;
                FlowSizes::Points(points)
            }
            _ => return Err(expected()),
        };
        Ok(sizes)
    }

    fn shape() -> Value {
        let names: Vec<&str> = Cdf::builtin_names().collect();
        let point = json!({"type": "array", "prefixItems": [{"type": "integer", "minimum": 1}, {"type": "number"}], "minItems": 2, "maxItems": 2});
        json!({"anyOf": [{"enum": names}, {"type": "array", "items": point}]})
    }
}

section! {
    /// A schedule of flows between the hosts (workload.kind = "flows").
    pub struct Flows {
        /// Offered background load ρ: each of the `topology.senders` hosts starts flows at
        /// Poisson instants so that its link carries this share of its capacity on average,
        /// each to a destination uniform among the other hosts (HPCC §5: 30%, and 50%).
        pub load: f64 [Plain] = 0.3,
        /// Background flow sizes: a built-in distribution (`websearch`: DCTCP's web-search
        /// cluster, Alizadeh et al., SIGCOMM 2010, mean 1.950 MB; `hadoop`: Facebook's Hadoop
        /// cluster, Roy et al., SIGCOMM 2015, mean 239.5 KB; each built from the ten deciles
        /// the HPCC paper prints on its Figures 3/10 and 11, Li et al., SIGCOMM 2019,
        /// log-uniform between them), or a CDF file of 'size probability' lines (`#`
        /// comments; sizes in bytes or with a unit, from 1 byte, increasing; probabilities not
        /// decreasing, the last 1, or percentages up to 100), as `workload.query_size_cdf`.
        /// The HPCC authors' own distribution files (means 1.711 MB and 120.4 KB) run once
        /// their first line's size 0 is written as 1; docs/simulate.md shows how.
        pub size_cdf: FlowSizes [SizeCdf] = FlowSizes::Named("websearch".into()),
        /// Flows (and bursts) start in [0, duration) from the workload's start; the run ends
        /// when every one has completed.
        pub duration: SimTime [Time] = from_ms(10),
        /// Background flows in all, instead of a duration (the bursts then run through their
        /// span); 0: `duration` decides.
        pub count: u32 [Plain] = 0,
        /// Share of the network's capacity (every host link) that N:1 incast bursts offer,
        /// arriving at Poisson instants, each from `incast_fan_in` random senders to one
        /// random receiver (HPCC §5: 2%, added to 30% load); 0: no bursts.
        pub incast_load: f64 [Plain] = 0.02,
        /// Senders of each incast burst, N (HPCC §5: 60), distinct hosts other than the
        /// receiver; at most `topology.senders` − 1.
        pub incast_fan_in: u32 [Plain] = 60,
        /// Bytes each sender of a burst sends (HPCC §5: 500 KB).
        pub incast_size: u64 [Size] = 500_000,
        /// Flow-size buckets of the FCT slowdown report: flows sorted by size, cut into this
        /// many buckets of equal flow count (HPCC's analysis: 20, one per 5% of flows).
        pub slowdown_buckets: u32 [Plain] = 20,
    }
}

impl Scenario {
    /// A flow schedule's hosts, loads, sizes and span, and what runs beside it.
    pub(super) fn validate_flows(&self) -> Result<(), ConfigError> {
        let (f, h) = (&self.flows, self.topology.senders);
        if !(2..=1000).contains(&h) {
            return Err(bad(
                "topology.senders",
                format!(
                    "a flow schedule runs between 2..1000 hosts (each sends and receives), got {h}"
                ),
            ));
        }
        for (key, x) in [("flows.load", f.load), ("flows.incast_load", f.incast_load)] {
            if !(0.0..1.0).contains(&x) {
                return Err(bad(
                    key,
                    format!("a share of the link, 0 ≤ load < 1, got {x}"),
                ));
            }
        }
        if f.load == 0.0 && f.incast_load == 0.0 {
            return Err(bad(
                "flows.load",
                "with flows.incast_load 0 too, nothing would be sent",
            ));
        }
        if f.load + f.incast_load >= 1.0 {
            return Err(bad(
                "flows.incast_load",
                format!("load + incast_load = {:.0}% of the links: a load of 100% or more can never be carried", 100.0 * (f.load + f.incast_load)),
            ));
        }
        let cdf = f.size_cdf.cdf().map_err(|e| bad("flows.size_cdf", e))?;
        if f.incast_load > 0.0 {
            if f.incast_fan_in == 0 || f.incast_fan_in >= h {
                return Err(bad(
                    "flows.incast_fan_in",
                    format!("senders per burst must be 1..{} (the hosts other than the receiver; topology.senders = {h}), got {}", h - 1, f.incast_fan_in),
                ));
            }
            if f.incast_size == 0 || f.incast_size > (1 << 40) {
                return Err(bad("flows.incast_size", "must be 1..2^40 bytes"));
            }
        }
        self.validate_flows_span(&cdf)?;
        if f.slowdown_buckets == 0 || f.slowdown_buckets > 1000 {
            return Err(bad(
                "flows.slowdown_buckets",
                format!("must be 1..1000, got {}", f.slowdown_buckets),
            ));
        }
        self.validate_flows_company()
    }

    /// How long the schedule runs, and how many flows that makes.
    fn validate_flows_span(&self, cdf: &Cdf) -> Result<(), ConfigError> {
        let f = &self.flows;
        if f.duration == 0 || f.duration > AN_HOUR {
            return Err(bad("flows.duration", "must be between 1ps and 3600s"));
        }
        let capacity = self.topology.senders as f64 * self.topology.link as f64 / 8.0;
        let secs = f.duration as f64 / PS_PER_S as f64;
        let background = match f.count {
            0 => f.load * capacity * secs / cdf.mean(),
            n => n as f64,
        };
        let incast = f.incast_load * capacity * secs / f.incast_size.max(1) as f64;
        if background + incast > MAX_FLOWS {
            let key = if f.count > 0 {
                "flows.count"
            } else {
                "flows.duration"
            };
            return Err(bad(
                key,
                format!("about {:.0} flows, each a connection of its own: at most {MAX_FLOWS} per run (shorten the run or lower the load)", background + incast),
            ));
        }
        Ok(())
    }

    /// What a flow schedule runs without: tasks, long-lived background flows; and over TCP or
    /// RoCE.
    fn validate_flows_company(&self) -> Result<(), ConfigError> {
        if self.workload.tasks != 1 {
            return Err(bad(
                "workload.tasks",
                "a flow schedule has no tasks (leave it at 1)",
            ));
        }
        if self.background.flows > 0 {
            return Err(bad(
                "background.flows",
                "a flow schedule draws its background flows itself (flows.load); leave background.flows at 0",
            ));
        }
        if !matches!(
            self.transport,
            Transport::Tcp | Transport::Roce | Transport::Homa
        ) {
            return Err(bad(
                "transport",
                "a flow schedule runs over TCP, RoCE or Homa",
            ));
        }
        Ok(())
    }

    /// Whether the workload is a flow schedule.
    pub fn is_flows(&self) -> bool {
        self.workload.kind == WorkloadKind::Flows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The error of a flows scenario of 16 hosts with `flows` (a JSON table) and `extra` keys.
    fn error(flows: &str, extra: &str) -> String {
        let text = format!(
            r#"{{"workload": {{"kind": "flows"}}, "topology": {{"senders": 16}}, "flows": {flows}{extra}}}"#
        );
        match Scenario::from_json(&text) {
            Ok(_) => "ok".into(),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn the_defaults_are_hpccs_traffic_and_need_hosts_for_its_fan_in() {
        let f = Flows::default();
        assert_eq!(
            (f.load, f.incast_load, f.incast_fan_in, f.incast_size),
            (0.3, 0.02, 60, 500_000)
        );
        assert_eq!(f.size_cdf, FlowSizes::Named("websearch".into()));
        assert!(error("{}", "").starts_with("flows.incast_fan_in: senders per burst must be 1..15"));
        assert_eq!(error(r#"{"incast_fan_in": 15}"#, ""), "ok");
    }

    #[test]
    fn a_size_cdf_is_a_builtin_name_a_files_text_or_points() {
        assert_eq!(
            error(r#"{"incast_load": 0, "size_cdf": "hadoop"}"#, ""),
            "ok"
        );
        let e = error(r#"{"incast_load": 0, "size_cdf": "websarch"}"#, "");
        assert!(
            e.starts_with(
                "flows.size_cdf: expected a built-in distribution (websearch, hadoop), a CDF file"
            ),
            "{e}"
        );
        let file = r##"{"incast_load": 0, "size_cdf": {"file": "my.cdf", "text": "# mine\n100 0.5\n90 1\n"}}"##;
        assert_eq!(
            error(file, ""),
            "flows.size_cdf: my.cdf, line 3: sizes must increase: 90 after 100"
        );
        let file =
            r#"{"incast_load": 0, "size_cdf": {"file": "my.cdf", "text": "100 0.5\n200 0.9\n"}}"#;
        assert_eq!(
            error(file, ""),
            "flows.size_cdf: my.cdf, line 2: the last probability must be 1, got 0.9"
        );
        let file =
            r#"{"incast_load": 0, "size_cdf": {"file": "my.cdf", "text": "100 -0.5\n200 1\n"}}"#;
        assert_eq!(
            error(file, ""),
            "flows.size_cdf: my.cdf, line 1: probability must be in [0, 1], got -0.5"
        );
        let points = r#"{"incast_load": 0, "size_cdf": [[100, 0.6], [200, 0.5], [300, 1]]}"#;
        assert_eq!(
            error(points, ""),
            "flows.size_cdf: point 1: probabilities must not decrease (non-monotone): 0.5 after 0.6"
        );
        // A file's points are what the normalized scenario keeps.
        let text = r#"{"workload": {"kind": "flows"}, "topology": {"senders": 4}, "flows": {"incast_load": 0, "size_cdf": {"file": "a.cdf", "text": "100 0.5\n200 1\n"}}}"#;
        let sc = Scenario::from_json(text).unwrap();
        assert_eq!(
            sc.flows.size_cdf,
            FlowSizes::Points(vec![(100, 0.5), (200, 1.0)])
        );
        assert_eq!(Scenario::from_json(&sc.to_json()).unwrap(), sc);
    }

    #[test]
    fn bad_loads_spans_and_company_are_refused_naming_the_key() {
        let fan = r#", "seed": 1"#;
        assert_eq!(
            error(r#"{"load": 1.2, "incast_fan_in": 8}"#, fan),
            "flows.load: a share of the link, 0 ≤ load < 1, got 1.2"
        );
        assert!(error(
            r#"{"load": 0.9, "incast_load": 0.1, "incast_fan_in": 8}"#,
            ""
        )
        .starts_with("flows.incast_load: load + incast_load = 100% of the links"));
        assert!(error(r#"{"load": 0, "incast_load": 0}"#, "")
            .starts_with("flows.load: with flows.incast_load 0"));
        assert!(
            error(r#"{"duration": 1000000000000000, "incast_fan_in": 8}"#, "")
                .starts_with("flows.duration: about ")
        );
        assert_eq!(
            error(r#"{"incast_fan_in": 8, "incast_size": 0}"#, ""),
            "flows.incast_size: must be 1..2^40 bytes"
        );
        assert_eq!(
            error(r#"{"incast_fan_in": 8, "slowdown_buckets": 0}"#, ""),
            "flows.slowdown_buckets: must be 1..1000, got 0"
        );
        assert!(
            error(r#"{"incast_fan_in": 8}"#, r#", "background": {"flows": 2}"#)
                .starts_with("background.flows: a flow schedule draws")
        );
        assert_eq!(
            error(r#"{"incast_fan_in": 8}"#, r#", "transport": "ndp""#),
            "workload.kind: NDP runs the incast workload (N flows into one receiver); set workload.kind = \"incast\""
        );
        assert!(
            error(r#"{"incast_fan_in": 8, "lod": 0.3}"#, "").starts_with("flows.lod: unknown key")
        );
    }
}
