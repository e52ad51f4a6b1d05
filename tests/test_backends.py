"""The backend protocol and registry, and the light `incast` start-up that depends on them."""

from __future__ import annotations

import subprocess
import sys

import pytest

from incastlab import backends
from incastlab.scenario import from_dict


def test_the_registry_names_every_backend_and_rejects_others() -> None:
    assert backends.names() == ("sim", "model", "chen", "emulate")
    with pytest.raises(backends.UnknownBackend, match="one of sim, model, chen, emulate"):
        backends.get("ns3")


@pytest.mark.parametrize("name", ["sim", "model", "chen", "emulate"])
def test_each_backend_follows_the_protocol(name: str) -> None:
    b = backends.get(name)
    assert isinstance(b, backends.Backend)
    assert b.name == name and b.title
    assert b.needs_root == (name == "emulate")
    assert b.predicts == (name in ("model", "chen"))


def test_backends_say_which_fields_they_cannot_honour() -> None:
    sc = from_dict({"topology": {"rtt": "50us"}, "tcp": {"sack": False}})
    assert backends.get("sim").unsupported(sc) == []
    assert backends.get("model").unsupported(sc) == ["tcp.sack"]
    # No netem here: the emulated RTT is never the scenario's.
    assert backends.get("emulate").unsupported(from_dict({})) == ["topology.rtt"]


def test_options_reach_only_the_backends_that_take_them() -> None:
    b = backends.get("emulate", warmup=3, time_limit_s=10.0)
    assert (b.warmup, b.time_limit_s) == (3, 10.0)  # type: ignore[attr-defined]
    assert backends.get("sim", warmup=3).name == "sim"


def test_the_model_answers_with_a_result_like_a_run() -> None:
    sc = from_dict({"topology": {"senders": 8, "buffer": "32KB"}, "workload": {"sru": "64KB"}})
    r = backends.get("model").run(sc)
    sim = backends.get("sim").run(sc)
    assert r.backend == "model" and r.senders == sim.senders == 8
    assert r.report["model"]["regime"] == "collapse"
    assert r.report["model"]["dominant"] == "RTO waits"
    assert r.row()["blocks"] == len(sim.block_times_s)


def test_the_cli_starts_without_the_heavy_libraries() -> None:
    heavy = ["pyarrow", "numpy", "matplotlib", "pandas", "rich", "dask"]
    code = f"import sys, incastlab.cli; print([m for m in {heavy!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
