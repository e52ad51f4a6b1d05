"""Topologies users describe (``topology.kind = "file"``): reading the file, carrying it in the
normalized scenario, the examples, and the one-line errors."""

from __future__ import annotations

import json
import re
import struct
from pathlib import Path
from typing import Any

import pytest

import incastlab
from incastlab.cli import main
from incastlab.scenario import ScenarioError, apply_overrides, from_dict, json_schema, load
from incastlab.scenario.columns import values

EXAMPLES = Path(__file__).parent.parent / "examples"
TOPOLOGIES = EXAMPLES / "topologies"
#: A fifth of a second of gets after 50 ms: enough for the reports to be compared.
SHORT = {"workload.kv_duration": "200ms", "workload.kv_warmup": "50ms"}


def link(a: str, b: str, rate: str = "1Gbps", buffer: str = "64KB") -> dict[str, str]:
    return {"a": a, "b": b, "rate": rate, "delay": "25us", "buffer": buffer}


#: Three hosts on two switches, inline.
INLINE: dict[str, Any] = {
    "switches": [{"name": "s1", "shared_buffer": "1MB"}, "s2"],
    "hosts": ["a", "b", "c"],
    "links": [link("a", "s1"), link("b", "s1"), link("c", "s2"), link("s1", "s2", "10Gbps")],
}


def described(topology: Any, **workload: Any) -> dict[str, Any]:
    return {
        "topology": {"kind": "file", "file": topology},
        "workload": workload or {"sru": "64KB", "blocks": 2},
    }


def test_inline_tables_are_carried_in_base_units() -> None:
    sc = from_dict(described(INLINE))
    f = sc.normalized()["topology"]["file"]
    assert f["links"][3] == {
        "a": "s1",
        "b": "s2",
        "rate": 10_000_000_000,
        "delay": 25_000_000,
        "buffer": {"bytes": 64_000, "packets": None},
    }
    assert f["switches"] == [
        {"name": "s1", "shared_buffer": 1_000_000, "buffer_alpha": None},
        {"name": "s2", "shared_buffer": None, "buffer_alpha": None},
    ]
    # The receiver is the last host, the senders every other one.
    assert (f["receiver"], f["senders"]) == ("c", ["a", "b"])
    assert sc.topology.senders == 2
    assert (sc.topology.link, sc.topology.receiver_link) == (1_000_000_000, 1_000_000_000)
    # The normalized form stands alone: read back, it is the same scenario.
    assert from_dict(sc.normalized(), normalized=True).to_json() == sc.to_json()
    # A stored record carries it as one JSON column.
    assert json.loads(values(sc.normalized())["topology.file"]) == f


def test_a_file_is_read_beside_the_scenario_and_inlined(tmp_path: Path) -> None:
    (tmp_path / "net").mkdir()
    topo = "\n".join(
        [
            'switches = ["s"]',
            'hosts = ["x", "y", "z"]',
            'receiver = "x"',
            "links = [",
            *(
                f'  {{ a = "{h}", b = "s", rate = "1Gbps", delay = "1us", buffer = "64KB" }},'
                for h in "xyz"
            ),
            "]",
        ]
    )
    (tmp_path / "net" / "t.toml").write_text(topo)
    (tmp_path / "sc.toml").write_text(
        '[topology]\nkind = "file"\nfile = "net/t.toml"\n[workload]\nsru = "8KB"\nblocks = 1\n'
    )
    sc = load(tmp_path / "sc.toml")
    f = sc.topology.file
    assert (f.receiver, f.senders) == ("x", ["y", "z"])
    r = incastlab.simulate(sc).record()
    assert r["senders"] == 2
    assert r["blocks"] == 1


def test_the_file_described_leaf_spine_gives_the_built_in_ones_report() -> None:
    def run(name: str) -> dict[str, Any]:
        rec = incastlab.simulate(load_with(EXAMPLES / name, SHORT)).record()
        return {k: v for k, v in rec.items() if not k.startswith("topology") and k != "scenario"}

    shape, file = run("riak-leaf-spine.toml"), run("riak-leaf-spine-file.toml")
    assert shape["kv_gets"] > 100
    assert file == shape


def test_the_file_described_switch_gives_the_built_in_stars_report() -> None:
    def run(name: str) -> dict[str, Any]:
        rec = incastlab.simulate(load_with(EXAMPLES / name, SHORT)).record()
        return {k: v for k, v in rec.items() if not k.startswith("topology") and k != "scenario"}

    assert run("riak-one-switch-file.toml") == run("riak-one-switch.toml")


def load_with(path: Path, overrides: dict[str, Any]) -> Any:
    from incastlab.scenario import read_toml

    return from_dict(apply_overrides(read_toml(path), overrides))


def test_a_slow_trunk_is_where_the_two_switch_cluster_drops() -> None:
    def run(topology: str) -> dict[str, Any]:
        over = {**SHORT, "topology.file": str(TOPOLOGIES / topology)}
        return incastlab.simulate(load_with(EXAMPLES / "riak-two-switches.toml", over)).record()

    fast, slow = run("riak-two-switches.toml"), run("riak-two-switches-1g-trunk.toml")
    assert fast["senders"] == 20
    # Half of each get's replies cross the trunk: ~2.6 Gbps each way at 50% load, which a
    # 10 Gbps trunk carries and a 1 Gbps one cannot: its ports drop (the hosts' ports, behind
    # it, see less), gets wait out timeouts, and the cluster carries less.
    assert fast["kv_fabric_drops_per_s"] == 0
    # More frames die on the trunk than on all 20 host ports of the fast-trunk cluster (today's
    # Linux, the default profile, drops none there: ~11,000 a second on the slow trunk).
    assert slow["kv_fabric_drops_per_s"] > max(1000, 20 * fast["kv_drops_per_s_per_host"])
    assert slow["kv_drops_per_s_per_host"] <= fast["kv_drops_per_s_per_host"]
    assert slow["kv_timeouts_per_s"] > 2 * fast["kv_timeouts_per_s"]
    assert slow["kv_latency_p99_s"] > 2 * fast["kv_latency_p99_s"]
    assert slow["kv_carried_load"] < 0.8 * fast["kv_carried_load"]


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (lambda t: t["links"][0].pop("rate"), "link 0 (a–s1) has no rate"),
        (lambda t: t["links"][0].update(rate="fast"), "link 0 (a–s1): rate: expected a rate"),
        (lambda t: t["links"][0].update(b="s9"), 'unknown node "s9"'),
        (lambda t: t["links"].pop(3), "host c (on switch s2) cannot reach host a"),
        (lambda t: t["hosts"].append("s2"), 'the name "s2" is used twice'),
        (lambda t: t["links"].append(link("a", "s2")), "host a has two links (links 0 and 4)"),
        (lambda t: t.update(receiver="s1"), 'receiver "s1" is a switch'),
        (lambda t: t.update(senders=["a", "zz"]), 'sender "zz" is not a host'),
        (lambda t: t["links"][1].update(buffer="1KB"), "smaller than one full packet"),
        (lambda t: t.update(colour="red"), 'unknown key "colour"'),
    ],
)
def test_a_bad_topology_gets_one_line_naming_the_file_key(change: Any, says: str) -> None:
    topo = json.loads(json.dumps(INLINE))
    change(topo)
    with pytest.raises(ScenarioError, match=r"^topology\.file: ") as e:
        from_dict(described(topo))
    assert says in str(e.value)
    assert "\n" not in str(e.value)


def test_an_unreadable_topology_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match=r"topology\.file: .*cannot read"):
        from_dict(described(str(tmp_path / "missing.toml")))
    (tmp_path / "bad.toml").write_text("switches = [\n")
    with pytest.raises(ScenarioError, match=r"topology\.file: .*TOML"):
        from_dict(described(str(tmp_path / "bad.toml")))
    with pytest.raises(ScenarioError, match=r"topology\.file: expected the name of a topology"):
        from_dict(described(5))


def test_keys_the_file_owns_are_refused() -> None:
    data = described(INLINE)
    data["topology"]["buffer"] = "128KB"
    with pytest.raises(ScenarioError, match=r"^topology\.buffer: the topology file sets this"):
        from_dict(data)
    data = described(INLINE)
    data["topology"]["senders"] = 3
    with pytest.raises(ScenarioError, match=r"^topology\.senders: 3 senders asked for"):
        from_dict(data)


def test_the_cli_runs_a_topology_file_and_shows_its_errors(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(
        [
            "sim",
            str(EXAMPLES / "riak-two-switches.toml"),
            "--set",
            "workload.kv_duration=100ms",
            "--set",
            "workload.kv_warmup=20ms",
            "--json",
        ]
    )
    assert code == 0
    rec = json.loads(capsys.readouterr().out)[0]
    assert rec["senders"] == 20 and rec["kv_gets"] > 0
    short = ["--set", "workload.kv_duration=50ms", "--set", "workload.kv_warmup=10ms"]
    assert main(["sim", str(EXAMPLES / "riak-two-switches.toml"), *short]) == 0
    table = " ".join(capsys.readouterr().out.split())
    assert "· file ·" in table and "2 switches, 20 hosts, 21 links" in table
    assert re.search(r"drops/s .*fabric", table)  # the column "drops/s" over "fabric"
    code = main(["sim", "--set", "topology.kind=file"])
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith('incast: error: topology.file: topology.kind = "file" needs a topology')


def test_the_schema_takes_a_file_name_or_tables() -> None:
    key = json_schema()["properties"]["topology"]["properties"]["file"]
    kinds = [k["type"] for k in key["anyOf"]]
    assert kinds == ["string", "object"]
    enum = json_schema()["properties"]["topology"]["properties"]["kind"]["enum"]
    assert "file" in enum


def test_a_sweep_spec_may_list_topology_files_beside_it(tmp_path: Path) -> None:
    from incastlab.sweep.spec import load_spec

    spec = tmp_path / "trunks.toml"
    (tmp_path / "topologies").mkdir()
    for name in ("riak-two-switches.toml", "riak-two-switches-1g-trunk.toml"):
        (tmp_path / "topologies" / name).write_text((TOPOLOGIES / name).read_text())
    spec.write_text(
        '[topology]\nkind = "file"\nfile = ["topologies/riak-two-switches.toml", '
        '"topologies/riak-two-switches-1g-trunk.toml"]\n[workload]\nsru = "64KB"\nblocks = 1\n'
    )
    points = load_spec(spec).points()
    trunks = [p.scenario.normalized()["topology"]["file"]["links"][-1]["rate"] for p in points]
    assert trunks == [10_000_000_000, 1_000_000_000]
    assert [p.scenario.senders for p in points] == [19, 19]


def test_a_capture_taps_the_trunk_by_its_switches_names(tmp_path: Path) -> None:
    sc = from_dict(described(INLINE, sru="16KB", blocks=1))
    cap = tmp_path / "trunk.pcap"
    r = incastlab.simulate(sc, pcap=str(cap), pcap_at="s1>s2")
    # Two senders on s1 answer the receiver on s2: every data frame crosses s1 → s2 once.
    assert r.record()["blocks"] == 1
    data, at, sizes = cap.read_bytes(), 24, []
    while at < len(data):  # pcap records: 16-byte header (incl_len at 8, orig_len at 12)
        incl, orig = struct.unpack_from("<II", data, at + 8)
        sizes.append(orig)
        at += 16 + incl
    full = [n for n in sizes if n == 1514]  # Ethernet frames of a full segment (no FCS)
    assert len(full) == 2 * (16_000 // 1448), sizes
    with pytest.raises(ValueError, match="switch>switch"):
        incastlab.simulate(sc, pcap=str(cap), pcap_at="s2>s9")
