"""One owner of the scenario: every default, derived default, rule and the block split come
from the simulator core; Python only turns units into base units and names fields."""

from __future__ import annotations

import json
from typing import Any

import pytest

from incastlab import _core
from incastlab.scenario import KEYS, SECTIONS, ScenarioError, from_dict, json_schema


def _leaves(d: dict[str, Any], path: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        p = f"{path}.{k}" if path else k
        if k in SECTIONS and not path:
            out |= _leaves(v, p)
        else:
            out[p] = v
    return out


def test_every_default_seen_from_python_is_the_engines() -> None:
    # The engine's bare keys hold the classic profile's values; a scenario read without a
    # profile gets the default one's bundle (tests/test_profiles.py).
    engine = _leaves(json.loads(_core.defaults()))
    python = _leaves(from_dict({"tcp": {"profile": "classic"}}).normalized())
    described = _leaves({k: v.get("keys", v) for k, v in KEYS.items()})
    assert python == engine
    assert set(described) == set(engine)
    for key, value in engine.items():
        if key == "tcp.profile":
            # The key's default is the profile a scenario gets; the bare keys are classic's.
            assert (described[key]["default"], value) == ("linux", "classic")
            continue
        assert described[key]["default"] == value, key
        assert described[key]["doc"], f"{key} has no doc in the Rust config"
    # Attribute access sees the same values.
    sc = from_dict({})
    assert sc.topology.buffer.bytes == engine["topology.buffer"]["bytes"]
    assert sc.tcp.rto_min == engine["tcp.rto_min"]


def test_derived_defaults_come_from_the_engine() -> None:
    sc = from_dict(
        {
            "topology": {"link": "10Gbps", "ecn_threshold": "30KB"},
            "tcp": {"congestion_control": "dctcp"},
        }
    )
    assert sc.topology.receiver_link == 10**10
    assert sc.tcp.ecn is True
    assert sc.background.ecn is None
    w = from_dict({"workload": {"block": "1MB"}}).workload
    assert (w.sru, w.block) == (None, 10**6)


def test_overrides_on_the_given_scenario_derive_defaults_anew() -> None:
    from incastlab.scenario import apply_overrides

    sc = from_dict({"topology": {"senders": 4}})
    over = {"tcp.congestion_control": "dctcp", "topology.ecn_threshold": "30KB"}
    again = from_dict(apply_overrides(sc.model_dump(), over), normalized=True)
    assert again.tcp.ecn is True and again.topology.senders == 4


def test_a_stored_normalized_scenario_loads_back_byte_identical() -> None:
    sc = from_dict(
        {
            "topology": {"senders": 7, "buffer": "32KiB", "kind": "leaf_spine"},
            "workload": {"kind": "queries", "query_size_cdf": [["1KB", 0.5], ["2KB", 1]]},
            "tcp": {"delayed_ack": "40ms", "rto_randomization": "uniform", "rto_delta": "1ms"},
        }
    )
    text = sc.to_json()
    assert from_dict(json.loads(text), normalized=True).to_json() == text
    assert _core.normalize(text) and json.loads(_core.normalize(text)) == json.loads(text)


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"topology": {"bufer": "64KB"}}, "topology.bufer"),  # Python: unknown key
        ({"tcp": {"rto_min": "200"}}, "tcp.rto_min"),  # Python: no unit
        ({"workload": {"query_size_cdf": [[1, 2, 3]]}}, "workload.query_size_cdf"),
        ({"topology": 5}, "topology"),
        ({"tcp": {"sack": "yes"}}, "tcp.sack"),  # core: type
        ({"topology": {"buffer": "1KB"}}, "topology.buffer"),  # core: rule
        ({"workload": {"kind": "incast"}}, "workload.flow_size"),
        ({"topology": {"kind": "ring"}}, "topology.kind"),
    ],
)
def test_errors_carry_the_field(data: dict[str, Any], field: str) -> None:
    with pytest.raises(ScenarioError) as e:
        from_dict(data)
    assert e.value.field == field


def test_the_core_names_the_field_of_raw_json_too() -> None:
    with pytest.raises(ScenarioError) as e:
        _core.normalize('{"run": {"max_events": 0}}')
    assert e.value.field == "run.max_events"
    assert ScenarioError("no field given").field == "scenario"


def test_block_split_is_the_engines_one_rule() -> None:
    assert _core.block_split(10, 3) == [4, 3, 3]
    assert sum(_core.block_split(1_000_000, 48)) == 1_000_000
    with pytest.raises(ValueError):
        _core.block_split(10, 0)
    # The model's senders are alike: each returns the largest share, the one that ends a block.
    from incastlab.backends.model import predict_scenario

    point = predict_scenario(from_dict({"topology": {"senders": 3}, "workload": {"block": "10B"}}))
    assert point.sru == _core.block_split(10, 3)[0] == 4


def test_the_editor_schema_describes_every_key_with_units() -> None:
    s = json_schema()
    topo = s["properties"]["topology"]["properties"]
    assert set(topo) == set(SECTIONS["topology"])
    assert topo["link"]["type"] == "string" and topo["link"]["default"] == "1Gbps"
    assert "Drop-tail" in topo["buffer"]["description"]
    assert s["properties"]["tcp"]["properties"]["sack"] == {
        "type": "boolean",
        "default": True,
        "description": SECTIONS["tcp"]["sack"]["doc"],
    }


def test_a_key_added_in_rust_alone_reaches_python() -> None:
    # topology.receiver_buffer was added with a Rust line and its doc, no Python line.
    assert SECTIONS["topology"]["receiver_buffer"]["unit"] == "limit"
    sc = from_dict({"topology": {"senders": 16, "buffer": "32KB", "receiver_buffer": "8MB"}})
    assert sc.topology.receiver_buffer.bytes == 8_000_000
    assert from_dict({}).topology.receiver_buffer is None
    from incastlab.backends.model import port_buffer_bytes

    assert port_buffer_bytes(sc.normalized()) == 8_000_000
    from incastlab.backends.model import ignored_fields

    assert "topology.receiver_buffer" not in ignored_fields(sc)
    with pytest.raises(ScenarioError) as e:
        from_dict({"topology": {"receiver_buffer": "1KB"}})
    assert e.value.field == "topology.receiver_buffer"


def test_the_key_reference_is_generated_from_the_engine() -> None:
    from pathlib import Path

    from incastlab.scenario import reference_markdown

    doc = Path(__file__).resolve().parent.parent / "docs" / "scenario.md"
    assert doc.read_text(encoding="utf-8") == reference_markdown(), (
        "docs/scenario.md is stale: incast scenario > docs/scenario.md"
    )
