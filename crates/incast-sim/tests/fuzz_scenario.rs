//! The scenario parser under fuzzing, on the stable toolchain: a fixed budget of mutated
//! scenarios (proptest) and a corpus kept in the repository (`tests/corpus/scenario`).
//!
//! Whatever JSON arrives, `Scenario::from_json` returns a scenario or a `ConfigError` naming a
//! field, never panics; an accepted scenario's normalized form parses back to itself.
//!
//! The budget's seed is fixed, so the suite gives the same verdict on every run; a longer
//! campaign with fresh seeds is one command (a debug build: its overflow checks find more), and
//! whatever it finds belongs in the corpus:
//!
//! ```text
//! INCAST_FUZZ_CASES=200000 INCAST_FUZZ_SEED=random cargo test -p incast-sim --test fuzz_scenario
//! ```
//!
//! Corpus files are named by what they must give: `ok--WHY.json` parses;
//! `bad--FIELD--WHY.json` is refused naming FIELD. Add a file for every input a fuzzer or a
//! tester finds interesting.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::OnceLock;

use incast_sim::config::Scenario;
use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use serde_json::{json, Map, Value};

/// Parse, turning a panic into a test failure that shows the input.
fn parse(text: &str) -> Result<Scenario, incast_sim::ConfigError> {
    match catch_unwind(AssertUnwindSafe(|| Scenario::from_json(text))) {
        Ok(r) => r,
        Err(_) => panic!("from_json panicked on {}", &text[..text.len().min(2000)]),
    }
}

fn check(text: &str) {
    match parse(text) {
        Ok(sc) => {
            let again = parse(&sc.to_json()).expect("a normalized scenario parses back");
            assert_eq!(again.to_json(), sc.to_json(), "normalization is stable");
        }
        Err(e) => {
            assert!(!e.field.is_empty(), "an error names a field: {e}");
            assert!(!e.message.is_empty());
            assert!(
                e.to_string().chars().count() < 1000,
                "a bad value is named, not echoed: {}",
                &e.to_string()[..200]
            );
        }
    }
}

/// Every (section, key) the core declares, and the top-level keys.
fn keys() -> &'static [(Option<String>, String)] {
    static KEYS: OnceLock<Vec<(Option<String>, String)>> = OnceLock::new();
    KEYS.get_or_init(|| {
        let d: Value = serde_json::from_str(&Scenario::describe()).unwrap();
        let mut out = Vec::new();
        for (name, k) in d.as_object().unwrap() {
            match k.get("keys").and_then(Value::as_object) {
                Some(sub) => out.extend(sub.keys().map(|s| (Some(name.clone()), s.clone()))),
                None => out.push((None, name.clone())),
            }
        }
        out
    })
}

/// The default scenario, normalized, as a JSON value.
fn defaults() -> Value {
    static DEFAULTS: OnceLock<Value> = OnceLock::new();
    DEFAULTS
        .get_or_init(|| serde_json::from_str(&Scenario::default().to_json()).unwrap())
        .clone()
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        prop_oneof![Just(0u64), Just(1), Just(u32::MAX as u64), Just(u64::MAX)]
            .prop_map(Value::from),
        any::<f64>()
            .prop_filter("JSON has no NaN or infinities", |x| x.is_finite())
            .prop_map(Value::from),
        "[a-z_]{0,12}".prop_map(Value::from),
        ".{0,40}".prop_map(Value::from),
    ];
    leaf.prop_recursive(6, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
            prop::collection::btree_map("[a-z_]{1,10}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// A mutation: a declared key (or a made-up one) set to any value.
fn mutation(n_keys: usize) -> impl Strategy<Value = (usize, bool, String, Value)> {
    (0..n_keys, any::<bool>(), "[a-z_]{1,12}", value())
}

/// The fixed budget of the suite, or a campaign's (`INCAST_FUZZ_CASES`, `INCAST_FUZZ_SEED`).
fn budget() -> ProptestConfig {
    let cases = std::env::var("INCAST_FUZZ_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000);
    let rng_seed = match std::env::var("INCAST_FUZZ_SEED").ok().as_deref() {
        Some("random") => RngSeed::Random,
        Some(s) => RngSeed::Fixed(
            s.parse()
                .expect("INCAST_FUZZ_SEED is a number or \"random\""),
        ),
        None => RngSeed::Fixed(20_091_130),
    };
    ProptestConfig {
        cases,
        rng_seed,
        // Failures are kept in the corpus by hand, named by what they must give.
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(budget())]

    /// Mutated scenarios: the fixed-budget fuzz that runs in CI.
    #[test]
    fn any_scenario_json_parses_or_names_a_field(
        muts in prop::collection::vec(mutation(keys().len()), 1..6),
    ) {
        let keys = keys();
        let mut v = defaults();
        for (i, made_up, junk, val) in muts {
            let (section, key) = &keys[i];
            let key = if made_up { junk } else { key.clone() };
            match section {
                Some(s) => {
                    if let Some(t) = v.get_mut(s).and_then(Value::as_object_mut) {
                        t.insert(key, val);
                    }
                }
                None => {
                    v.as_object_mut().unwrap().insert(key, val);
                }
            }
        }
        check(&v.to_string());
    }

    /// Raw text, most of it not JSON at all.
    #[test]
    fn any_text_parses_or_names_a_field(text in ".{0,200}") {
        check(&text);
    }
}

#[test]
fn deep_nesting_is_refused_without_exhausting_the_stack() {
    for depth in [100, 1_000, 100_000] {
        let text = format!(
            "{{\"topology\": {{\"senders\": {}{}}}}}",
            "[".repeat(depth),
            "]".repeat(depth)
        );
        assert!(parse(&text).is_err());
    }
    check(&json!({"workload": {"blocks": 1e300}}).to_string());
}

#[test]
fn the_corpus_gives_what_each_file_says() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/scenario");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        check(&text);
        let parts: Vec<&str> = name.split("--").collect();
        match parts.as_slice() {
            ["ok", ..] => {
                parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
            }
            ["bad", field, ..] => {
                let e = parse(&text)
                    .err()
                    .unwrap_or_else(|| panic!("{name} was accepted"));
                assert_eq!(&e.field, field, "{name}: {e}");
            }
            _ => panic!("{name}: corpus files are named ok--WHY or bad--FIELD--WHY"),
        }
        n += 1;
    }
    assert!(n >= 20, "the corpus holds {n} files");
}
