"""The emulator as the referee (root): `compare --repeat` keeps every real run and reports the
kernel's spread, and `emulate` records what the kernel ran (the servers' congestion control
read back from their sockets, the sysctls, the measured base RTT)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import needs_root
from incastlab.cli import main
from incastlab.real import emulate, netns
from incastlab.real.testbed import kernel as testbed_kernel
from incastlab.scenario import from_dict


def _has(cc: str) -> bool:
    path = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
    return path.exists() and cc in path.read_text().split()


@needs_root
def test_compare_repeat_keeps_every_run_and_the_kernels_spread(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["compare", "--backends", "sim,emulate", "--senders", "1,2", "--link", "100Mbps"]
    # Long enough (~0.1 s a run) for the servers' sockets to be read back while they live.
    argv += ["--sru", "128KB", "--blocks", "8", "--repeat", "2", "--seed", "5"]
    assert main([*argv, "--json"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert [(r["backend"], r["senders"], r["seed"]) for r in records] == [
        (b, n, s) for n in (1, 2) for b in ("sim", "emulate") for s in (5, 6)
    ]
    real = [r for r in records if r["backend"] == "emulate"]
    assert all(r["goodput_bps"] > 0 for r in real)
    for r in real:
        emulated = r["report"]["emulated"]
        assert 0 < emulated["rtt_measured_s"] < 0.01
        # The default profile's (linux) congestion control.
        assert emulated["kernel"]["servers_congestion_control"] == "cubic"
    # The table: medians, the kernel's min-max, and whether the simulator lies inside.
    assert main(argv) == 0
    table = capsys.readouterr().out
    assert "medians of 2 runs" in table and "emulate min–max" in table
    assert "sim inside emulate" in table
    assert netns.ours() == []


@needs_root
@pytest.mark.skipif(not _has("bbr"), reason="this kernel has no bbr")
def test_emulate_runs_bbr_on_the_servers_sockets_and_records_the_kernel() -> None:
    sc = from_dict(
        {
            "topology": {"senders": 2, "link": "100Mbps", "buffer": "32KB"},
            "tcp": {"congestion_control": "bbr", "rto_min": "200ms"},
            "workload": {"sru": "256KB", "blocks": 3},
        }
    )
    r = emulate.run(sc)
    kernel = r.report["emulated"]["kernel"]
    assert kernel["servers_congestion_control"] == "bbr"
    assert {s["cc"] for s in kernel["servers_sockets"]} == {"bbr"}
    assert kernel["release"] and "net.ipv4.tcp_sack" in kernel["sysctls"]
    if Path("/proc/sys/net/ipv4/tcp_recovery").exists():
        assert "net.ipv4.tcp_recovery" in kernel["sysctls"]
    assert kernel["qdiscs"]["switch"][0]["kind"] == "tbf"
    assert r.report["emulated"]["rtt_probe"]["samples"] > 0
    assert r.goodput_bps > 0 and netns.ours() == []


def test_a_congestion_control_the_kernel_lacks_names_the_key(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # No kernel needed: what the check reads is replaced.
    import builtins

    real_open = builtins.open

    def fake_open(path: object, *args: object, **kwargs: object) -> object:
        if str(path).endswith("tcp_available_congestion_control"):
            f = tmp_path / "available"
            f.write_text("reno cubic\n")
            return real_open(f, *args, **kwargs)  # type: ignore[call-overload]
        return real_open(path, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(builtins, "open", fake_open)
    monkeypatch.setattr(testbed_kernel.shutil, "which", lambda _tool: None)
    with pytest.raises(emulate.EmulationError, match=r"^tcp\.congestion_control: .*'bbr'"):
        testbed_kernel.check_congestion_control("bbr")
    testbed_kernel.check_congestion_control("cubic")
