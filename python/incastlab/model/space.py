"""The space the burst model is calibrated and validated over: the axes of its random designs
(:mod:`incastlab.model.design` draws points from them; :mod:`incastlab.model.domain` flags
a scenario outside them). Its own module so that both read one list without importing each
other.
"""

from __future__ import annotations

from typing import Any

#: The design's axes: (scenario key, kind, range). ``log``: log-uniform between two sizes,
#: rates or times (strings in the scenario's units, converted by the design); ``int``:
#: log-uniform whole numbers; ``choice``: one of the listed values, equally likely.
AXES: list[tuple[str, str, tuple[Any, ...]]] = [
    ("topology.senders", "int", (1, 1024)),
    ("workload.sru", "log", (8e3, 1e6, "B")),
    ("topology.buffer", "log", (4e3, 16e6, "B")),
    ("topology.link", "log", (100e6, 100e9, "bps")),
    ("topology.rtt", "log", (5e-6, 2e-3, "s")),
    ("tcp.rto_min", "log", (200e-6, 200e-3, "s")),
    ("tcp.initial_window", "choice", (1, 2, 3, 4, 10)),
    ("tcp.profile", "choice", ("classic", "linux")),
    ("tcp.congestion_control", "choice", ("reno", "cubic", "dctcp", "bbr")),
    ("tcp.cwnd_restart", "choice", ("block", "idle", "never")),
]
