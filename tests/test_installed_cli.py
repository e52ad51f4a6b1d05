"""The ``incast`` command as a user installed it: the console script beside this Python, run
as a separate process.

Part of the main suite, and also what ``scripts/wheel-check`` runs in a fresh virtualenv
that holds only the built wheel (no source tree on the path, no Rust toolchain), so it uses
no conftest helper and nothing but the installed package and pytest.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import incastlab

#: The console script pip wrote next to this interpreter.
INCAST = Path(sys.executable).parent / "incast"


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(INCAST), *args], capture_output=True, text=True, timeout=120, cwd=cwd
    )


def test_help_lists_the_commands() -> None:
    r = run("--help")
    assert r.returncode == 0, r.stderr
    for command in ("sim", "model", "mitigate", "sweep", "report", "reproduce", "pcap"):
        assert f"    {command}" in r.stdout


def test_version_is_the_package_version() -> None:
    r = run("--version")
    assert r.returncode == 0
    assert r.stdout.strip() == f"incastlab {incastlab.__version__}"


def test_sim_json_collapses_with_more_senders(tmp_path: Path) -> None:
    # 64 KB per server into a 32 KB port with RTOmin 200 ms: one server runs near the link,
    # eight overflow the port and wait out timeouts.
    scenario = tmp_path / "collapse.toml"
    scenario.write_text(
        '[topology]\nbuffer = "32KB"\n[tcp]\nrto_min = "200ms"\n'
        '[workload]\nkind = "sync_read"\nsru = "64KB"\nblocks = 5\n'
    )
    r = run("sim", str(scenario), "--senders", "1,8", "--json")
    assert r.returncode == 0, r.stderr
    one, eight = json.loads(r.stdout)
    assert (one["senders"], eight["senders"]) == (1, 8)
    assert one["version"] == incastlab.__version__
    assert one["goodput_fraction"] > 0.5
    assert one["timeouts"] == 0
    assert eight["timeouts"] > 0
    assert eight["goodput_bps"] < one["goodput_bps"] / 2


def test_sim_is_deterministic() -> None:
    args = ("sim", "--senders", "4", "--sru", "64KB", "--buffer", "32KB", "--blocks", "3")
    a, b = run(*args, "--json"), run(*args, "--json")
    assert a.returncode == 0, a.stderr
    strip = ("wall_s",)
    ra = [{k: v for k, v in d.items() if k not in strip} for d in json.loads(a.stdout)]
    rb = [{k: v for k, v in d.items() if k not in strip} for d in json.loads(b.stdout)]
    assert ra == rb


def test_model_json() -> None:
    r = run("model", "--senders", "1,16", "--sru", "64KB", "--buffer", "32KB", "--json")
    assert r.returncode == 0, r.stderr
    one, many = json.loads(r.stdout)
    assert one["backend"] == many["backend"] == "model"
    assert many["goodput_bps"] < one["goodput_bps"]


def test_bad_input_is_one_line_exit_2() -> None:
    r = run("sim", "--sru", "64")
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1
    assert "Traceback" not in r.stderr


def test_the_experiments_ship_with_the_package() -> None:
    r = run("reproduce", "--list")
    assert r.returncode == 0, r.stderr
    assert "chen-fig2" in r.stdout
    assert "ndp-incast-scaling" in r.stdout
