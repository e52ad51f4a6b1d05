"""Shared helpers: build scenarios from dotted overrides; the session's own HOME; the skip
summary."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections import Counter
from typing import Any

# The suite writes nothing outside its temporary directories: what the code under test or the
# tools it starts keep in the user's home (matplotlib's font cache, Chromium's profile and crash
# reports, GTK's dconf, `--cache ~/...` in a documented command) goes to a home of this session,
# removed at its end; so does Dask's scratch space. Set before anything imports matplotlib,
# which reads it once.
_HOME = tempfile.mkdtemp(prefix="incastlab-test-home-")
for _var, _sub in (
    ("HOME", ""),
    ("XDG_CONFIG_HOME", ".config"),
    ("XDG_CACHE_HOME", ".cache"),
    ("XDG_DATA_HOME", ".local/share"),
    ("XDG_STATE_HOME", ".local/state"),
    ("MPLCONFIGDIR", ".config/matplotlib"),
    # Dask's scratch space (its lock files stayed in /tmp/dask-scratch-space-UID).
    ("DASK_TEMPORARY_DIRECTORY", "dask"),
):
    os.environ[_var] = os.path.join(_HOME, _sub)

import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

import incastlab  # noqa: E402
from incastlab.real import capacity  # noqa: E402
from incastlab.result import Result  # noqa: E402
from incastlab.scenario import Scenario, apply_overrides, from_dict  # noqa: E402

GBPS = 1e9

# Property tests draw the same examples on every run, so the suite's verdict does not depend on
# luck. A search with fresh examples: HYPOTHESIS_PROFILE=campaign pytest tests/test_hardening.py
# No example database either: the suite writes no .hypothesis/ into the clone.
settings.register_profile("suite", derandomize=True, database=None)
settings.register_profile("campaign", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "suite"))

#: A machine that holds anything: each test lowers one of its limits.
ROOMY = capacity.Machine(
    mem_available=64 * 10**9,
    nofile_soft=1024,
    nofile_hard=1 << 20,
    netns_max=100_000,
    netns_in_use=1,
    neigh_gc_thresh3=1 << 20,
    neigh_entries=2,
)


def _emulation_unavailable() -> str:
    """Why this machine cannot emulate ("" if it can)."""
    from incastlab.real.testbed import build

    try:
        build.check_can_emulate()
    except build.EmulationError as e:
        return str(e)
    return ""


#: Tests that build network namespaces: skipped, with the reason, where that is impossible.
needs_root = pytest.mark.skipif(
    bool(_emulation_unavailable()), reason=f"cannot emulate here: {_emulation_unavailable()}"
)

#: Hafeez et al.'s setup (ns-2): 1 Gbps, 100 us RTT (the default), 1 KB packets, 32 KB per
#: port, RTOmin 10 ms, responses jittered U[0, 20] us. The paper does not give the block size;
#: incastlab's tests use 1 MB striped over the senders.
HAFEEZ = dict(
    workload__block="1MB",
    topology__buffer="32KB",
    tcp__rto_min="10ms",
    tcp__mss="1000B",
    workload__jitter="20us",
)


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(_HOME, ignore_errors=True)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say once, at the end, which checks were skipped and why: one line per reason, with how
    many tests it skipped and in which files (pyproject's addopts leave skips out of -r)."""
    reasons: Counter[str] = Counter()
    files: dict[str, set[str]] = {}
    for report in terminalreporter.stats.get("skipped", []):
        if not isinstance(report.longrepr, tuple):
            continue
        path, _, reason = report.longrepr
        reason = reason.removeprefix("Skipped: ")
        reasons[reason] += 1
        files.setdefault(reason, set()).add(os.path.basename(path))
    if not reasons:
        return
    total = sum(reasons.values())
    terminalreporter.section(f"{total} skipped, by reason", sep="-")
    for reason, n in reasons.most_common():
        terminalreporter.write_line(f"{n:4}  {reason}  [{', '.join(sorted(files[reason]))}]")


def scenario(**overrides: Any) -> Scenario:
    """A scenario from keyword overrides, ``topology__senders=4`` meaning topology.senders.

    The physics tests check the seed papers' closed forms and figures, which describe the 2009
    stack, so this helper pins ``tcp.profile = "classic"`` unless a test names a profile (users
    get ``linux`` by default; tests of that default build their scenario without this helper).
    """
    overrides.setdefault("tcp__profile", "classic")
    data = apply_overrides({}, {k.replace("__", "."): v for k, v in overrides.items()})
    return from_dict(data)


def run(**overrides: Any) -> Result:
    return incastlab.simulate(scenario(**overrides))


def sweep(senders: list[int], **overrides: Any) -> dict[int, Result]:
    return {n: run(topology__senders=n, **overrides) for n in senders}


def design_path(keys: dict[str, Any], blocks: int | None = None) -> Any:
    """The burst model's path of a random design's point ``keys`` as the designs run it
    (:func:`incastlab.model.design.point_keys`: the receiver's link, DCTCP's threshold, the
    run's bounds), over ``blocks`` blocks where given."""
    from incastlab.backends.model import burst_path
    from incastlab.model import design

    point = design.point_keys(keys)
    if blocks is not None:
        point["workload.blocks"] = blocks
    return burst_path(from_dict(apply_overrides({}, point)).normalized())


def model_path(**fields: Any) -> Any:
    """A burst-model path (:class:`incastlab.model.burst.Path`) from ``fields``, with 1,448-byte
    segments in 1,518-byte frames (1,538 on the wire), 190-byte requests and an exact timer
    unless given."""
    from incastlab.model import burst

    base: dict[str, Any] = dict(mss=1448, frame=1518, wire=1538, request_wire=190, timer_tick=0.0)
    return burst.Path(**{**base, **fields})
