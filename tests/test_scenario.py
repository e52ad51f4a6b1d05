"""Scenario parsing: units, defaults, and clear errors that name the field."""

from __future__ import annotations

import json

import pytest

import incastlab
from incastlab.scenario import from_dict, load
from incastlab.units import (
    UnitError,
    format_rate,
    parse_queue_limit,
    parse_rate,
    parse_size,
    parse_time,
)


def test_sizes_distinguish_si_and_binary_prefixes() -> None:
    assert parse_size("64KB") == 64_000
    assert parse_size("64KiB") == 65_536
    assert parse_size("1.5MB") == 1_500_000
    assert parse_size("270000B") == 270_000


def test_rates_and_times() -> None:
    assert parse_rate("1Gbps") == 10**9
    assert parse_rate("2.5Gbps") == 2_500_000_000
    assert parse_time("200ms") == 200 * 10**9
    assert parse_time("100us") == parse_time("100µs") == 100 * 10**6
    assert parse_time("1.5s") == 15 * 10**11


def test_queue_limits() -> None:
    assert parse_queue_limit("42pkt") == {"bytes": None, "packets": 42}
    assert parse_queue_limit("4KB") == {"bytes": 4000, "packets": None}
    assert parse_queue_limit("unlimited") == {"bytes": None, "packets": None}


@pytest.mark.parametrize(
    ("parse", "value", "needle"),
    [
        (parse_size, "64", "with a unit"),
        (parse_size, 64, "with a unit"),
        (parse_size, "64Kb", "unknown size unit 'Kb'"),
        (parse_rate, "1GB", "unknown rate unit"),
        (parse_time, "1.5ps", "whole number"),
        (parse_time, "-3ms", "with a unit"),
    ],
)
def test_bad_units_are_explained(parse: object, value: object, needle: str) -> None:
    with pytest.raises(UnitError, match=needle):
        parse(value)  # type: ignore[operator]


def test_defaults_are_normalized_to_base_units() -> None:
    n = from_dict({}).normalized()
    assert n["topology"]["link"] == 10**9
    assert n["topology"]["receiver_link"] == 10**9
    assert n["topology"]["buffer"] == {"bytes": 64_000, "packets": None}
    assert n["tcp"]["rto_min"] == 200 * 10**9
    # Today's Linux (the default profile) delays ACKs up to 40 ms; the papers' stack did not.
    assert (n["tcp"]["profile"], n["tcp"]["delayed_ack"]) == ("linux", 40 * 10**9)
    classic = from_dict({"tcp": {"profile": "classic"}}).normalized()
    assert classic["tcp"]["delayed_ack"] == 0


def test_normalized_form_round_trips() -> None:
    sc = from_dict({"topology": {"senders": 7, "buffer": "32KiB"}, "workload": {"sru": "1MB"}})
    again = from_dict(json.loads(sc.to_json()), normalized=True)
    assert again.to_json() == sc.to_json()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            {"topology": {"bufer": "64KB"}},
            "unknown key 'topology.bufer' (did you mean 'topology.buffer'?)",
        ),
        ({"topolgy": {}}, "unknown key 'topolgy' (did you mean 'topology'?)"),
        ({"tcp": {"rto_min": "200"}}, "tcp.rto_min: expected a duration with a unit"),
        ({"topology": {"link": "0Gbps"}}, "topology.link: rate must be positive"),
        ({"topology": {"senders": 0}}, "topology.senders: must be between 1"),
        ({"topology": {"senders": -3}}, "topology.senders: expected a whole number"),
        ({"topology": {"senders": "8"}}, "topology.senders"),
        (
            {"topology": {"buffer": "1KB"}},
            "topology.buffer: 1000 bytes is smaller than one full packet",
        ),
        ({"workload": {"sru": "0B"}}, "workload.sru: must be positive"),
        ({"workload": {"sru": "1MB", "block": "1MB"}}, "workload.sru: give either sru or block"),
        ({"workload": {"kind": "incast"}}, "workload.flow_size: incast needs a positive flow_size"),
        ({"tcp": {"sack": "yes"}}, "tcp.sack"),
        ({"topology": 5}, "topology: expected a table of settings"),
    ],
)
def test_bad_scenarios_name_the_field(data: dict[str, object], message: str) -> None:
    with pytest.raises(incastlab.ScenarioError) as e:
        from_dict(data)
    assert message in str(e.value)
    assert "\n" not in str(e.value)
    # The field is an attribute too, whether Python (units, unknown keys) or the core found it.
    assert str(e.value).startswith(e.value.field) or f"'{e.value.field}'" in str(e.value)


def test_scenario_files(tmp_path: object) -> None:
    from pathlib import Path

    p = Path(str(tmp_path)) / "s.toml"
    p.write_text('[topology]\nsenders = 3\nbuffer = "42pkt"\n[workload]\nsru = "16KB"\n')
    sc = load(p)
    assert sc.topology.senders == 3
    assert sc.normalized()["topology"]["buffer"]["packets"] == 42
    p.write_text("[topology\n")
    with pytest.raises(incastlab.ScenarioError, match="not valid TOML"):
        load(p)
    with pytest.raises(incastlab.ScenarioError, match="cannot read scenario file"):
        load(Path(str(tmp_path)) / "missing.toml")


def test_format_helpers() -> None:
    assert format_rate(941.2e6) == "941.2 Mbps"
