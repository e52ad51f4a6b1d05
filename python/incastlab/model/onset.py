"""The burst model's collapse onset: the smallest sender count it puts in collapse (kept
apart from :mod:`incastlab.model.burst`, which predicts one point)."""

from __future__ import annotations

import dataclasses
import functools

from incastlab.model.burst import Constants, Path, predict


def onset(p: Path, c: Constants, limit: int = 1024) -> int | None:
    """The smallest sender count the model puts in collapse (goodput below half the ideal)
    with ``p``'s other settings, every count to 64 and then in steps of a quarter up to
    ``limit``; ``None`` if none does."""
    return _onset(dataclasses.replace(p, senders=1), c, limit)


def _onset_candidates(limit: int) -> list[int]:
    ns = list(range(2, min(limit, 64) + 1))
    while ns[-1] < limit:
        ns.append(min(limit, ns[-1] + ns[-1] // 4))
    return ns


@functools.lru_cache(maxsize=256)
def _onset(p: Path, c: Constants, limit: int) -> int | None:
    for n in _onset_candidates(limit):
        if predict(dataclasses.replace(p, senders=n), c).regime == "collapse":
            return n
    return None
