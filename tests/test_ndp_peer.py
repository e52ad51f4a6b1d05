"""The NDP benchmark beside htsim (benchmarks/ndp_peer.py) judges its percentiles on the means
over seeds, each seed counted once however often it ran."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def peer(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location("ndp_peer", ROOT / "benchmarks/ndp_peer.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(seed: int, fcts: list[float], cpu: float = 1.0) -> dict[str, object]:
    return {"seed": seed, "fcts": fcts, "cpu": cpu, "rss": 10.0, "wall": cpu}


def test_percentiles_are_means_over_seeds_and_a_repeat_counts_once(peer: ModuleType) -> None:
    # htsim's two seeds: min 100 and 110 (mean 105); incastlab's: min 112 (twice: a repeat
    # of its first seed, for its cost) and 108 (mean 110): 110 / 105 = 1.048, within 5%,
    # though its first seed alone is 1.12 of htsim's first.
    ht = [_run(13, [100.0, 200.0, 300.0]), _run(14, [110.0, 200.0, 300.0])]
    inc = [
        _run(1, [112.0, 200.0, 300.0]),
        _run(1, [112.0, 200.0, 300.0]),
        _run(2, [108.0, 200.0, 300.0]),
    ]
    lines = peer.table(3, inc, ht)
    row = next(line for line in lines if line.startswith("min"))
    assert "105.000 [100.0-110.0]" in row and "110.000 [108.0-112.0]" in row, row
    assert row.split()[-2:] == ["1.048", "yes"], row
    assert lines[-1] == "percentiles within 5%: 5 of 5"


def test_one_seed_reads_as_before(peer: ModuleType) -> None:
    lines = peer.table(3, [_run(1, [120.0, 200.0, 300.0])], [_run(13, [100.0, 200.0, 300.0])])
    row = next(line for line in lines if line.startswith("min"))
    assert row.split() == ["min", "100.000", "120.000", "1.200", "NO"]
    # Of three flows the nearest-rank p10 is the first too.
    assert lines[-1] == "percentiles within 5%: 3 of 5"


def test_htsim_is_given_its_seed_only_when_not_its_own_default(peer: ModuleType) -> None:
    cmd = peer.htsim_command(Path("htsim_ndp"), Path("m.cm"), 1000)
    assert "-seed" not in cmd
    cmd = peer.htsim_command(Path("htsim_ndp"), Path("m.cm"), 1000, 15)
    assert cmd[-2:] == ["-seed", "15"]
