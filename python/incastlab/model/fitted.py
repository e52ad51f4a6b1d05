"""The burst model's fitted constants and the file that ships them with the package (apart
from :mod:`incastlab.model.burst`, which reads them)."""

from __future__ import annotations

import functools
import json
import pathlib
from dataclasses import asdict, dataclass, field, fields
from typing import Any


@dataclass(frozen=True)
class Constants:
    """The model's fitted constants, each a physical quantity (see :mod:`incastlab.model.fit`
    for how they are fitted and the values saved with the package)."""

    #: Senders that keep their window through a loss (BBR) keep the port's queue full: the
    #: share of those whose loss short of their tail still ends in an RTO, their
    #: retransmission dropped by it (Padhye et al.'s 3/w, scaled by this).
    tail_timeout: float = 0.15
    #: How far apart the senders' RTOs are, as a share of the time the port takes to drain
    #: its buffer: each sender's smoothed RTT holds the queueing delays it saw, so timers
    #: armed together drift apart by this much per RTO waited (backoff counted), where it
    #: reaches a tick of the clock their RTOs are counted in (:mod:`incastlab.model.drift`).
    dispersion: float = 0.5
    #: Share of the senders that the port served after an RTO but whose next round it dropped
    #: whole (they time out again, :mod:`incastlab.model.serial`) that land in the next wave
    #: of the backed-off senders' retransmissions and take the port's room from them.
    rejoin: float = 0.5
    #: Segments a sender caught in a loop of spurious RTOs gets acknowledged per queue wait
    #: (:func:`incastlab.model.burst.spurious_loop`): its window restarts from one after
    #: every timeout and grows by one per ACK.
    loop_segments: float = 3.0
    #: Chance that a retransmission sent while the senders that take turns waiting for RTOs
    #: keep the port full is lost to it (:mod:`incastlab.model.tail`).
    busy_loss: float = 0.5
    #: Simulator/model goodput, 10th and 90th percentile per regime on the calibration design.
    interval: dict[str, list[float]] = field(default_factory=dict, compare=False, hash=False)
    #: incastlab version the constants were fitted with (``None``: defaults, not fitted).
    version: str | None = None
    #: What the fit achieved (held-out errors), for the record.
    fit: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def named(self) -> str:
        """The fitted values in one line: ``"tail_timeout 0.7, dispersion 1, ..."``."""
        return ", ".join(f"{name} {getattr(self, name):g}" for name in FITTED)


#: The fitted constants' names: the fields that are figures (the interval, the version and
#: the fit are their record).
FITTED = tuple(f.name for f in fields(Constants) if f.type == "float")

#: The fitted constants ship with the package (``incast model calibrate --save`` writes them).
CONSTANTS_FILE = pathlib.Path(__file__).with_name("constants.json")


@functools.cache
def fitted() -> Constants:
    """The constants saved with the package, or the defaults if none are."""
    if not CONSTANTS_FILE.exists():
        return Constants()
    data = json.loads(CONSTANTS_FILE.read_text())
    return Constants(**data)


def save(c: Constants) -> pathlib.Path:
    """Write ``c`` as the package's fitted constants."""
    CONSTANTS_FILE.write_text(json.dumps(c.to_json(), indent=1, sort_keys=True) + "\n")
    fitted.cache_clear()
    return CONSTANTS_FILE
