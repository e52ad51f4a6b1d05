"""The doctor's one search over a value fitted by simulation: bisection on a log scale,
where each probe runs a replica and the answer is the pair of values either side of where a
yes-or-no reading of it changes (the buffer's resends, the marking threshold's marks)."""

from __future__ import annotations

import math
from collections.abc import Callable


def log_crossing(reads: Callable[[int], bool], a: int, b: int, steps: int) -> tuple[int, int]:
    """Bisection on log2 between ``a`` and ``b`` (< ``a`` or > it), which ``reads``
    differently, in ``steps`` halvings: the values either side of where the reading
    changes, ``a``'s side first."""
    x, y, at_a = math.log2(a), math.log2(b), reads(a)
    for _ in range(steps):
        m = (x + y) / 2
        if reads(round(2**m)) == at_a:
            x = m
        else:
            y = m
    return round(2**x), round(2**y)
