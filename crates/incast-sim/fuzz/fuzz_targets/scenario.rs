//! Fuzz the scenario parser: any text gives a scenario or an error naming a field, never a
//! panic; an accepted scenario's normalized form parses back to itself. Seed corpus:
//! `tests/corpus/scenario` (the files the stable proptest replays).
#![no_main]

use incast_sim::config::Scenario;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match Scenario::from_json(text) {
        Ok(sc) => {
            let again = Scenario::from_json(&sc.to_json()).expect("normalized parses back");
            assert_eq!(again.to_json(), sc.to_json());
        }
        Err(e) => assert!(!e.field.is_empty()),
    }
});
