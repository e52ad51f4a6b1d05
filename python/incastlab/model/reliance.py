"""Where the model's answer hangs on a fitted constant rather than on the scenario.

Five of the model's figures are fitted, not derived (:class:`incastlab.model.fitted.Constants`:
the share of BBR's losses that end in an RTO, how far apart timed-out senders' timers drift,
the senders that rejoin a wave of retransmissions, a spurious-RTO loop's segments, the loss of
a retransmission to a port kept full). Each stands for what the model does not follow sender
by sender, and each is fitted over thousands of scenarios: at one scenario its right value may
be well off the fitted one. Where the answer moves by more than :data:`RELIANCE_JUMP` with one
of them :data:`RELIANCE_NUDGE` smaller or larger (times 0.8 or 1.25), the answer rests on
that figure, and the model says so.

Measured on the fifty designs read while the model's mechanisms were chosen (seeds
32001-32051, 15,277 points), beside the flags of :mod:`incastlab.model.domain` and
:mod:`incastlab.model.edge`: 323 points not flagged otherwise rested so on a constant (on
``rejoin`` and ``busy_loss``, the waves of a deep collapse; the other three moved no point that
much), and 55% of them were off by more than 1.5x, against 11% of the points not flagged. The
jump of 2x is chosen there with the timer-bound flag's lower bound (15x the ideal block; 7x
with the edge alone): 89.0% of the points not flagged within 1.5x and 9.1% flagged, against
88.7% and 9.2% without this flag; a jump of 1.75x flags 9.6% for 89.1%.
"""

from __future__ import annotations

import dataclasses

from incastlab.model import burst
from incastlab.model.edge import moves
from incastlab.model.fitted import FITTED, Constants

#: The factor each fitted constant is moved by, down (its inverse) and up.
RELIANCE_NUDGE = 1.25
#: The largest ratio between the model's answers with one constant nudged (its own answer
#: included) that is not a reliance on it.
RELIANCE_JUMP = 2.0


def reliance(path: burst.Path, c: Constants, p: burst.BurstPrediction) -> tuple[str, float]:
    """The fitted constant the model's answer ``p`` at ``path`` moves the most with, nudged by
    :data:`RELIANCE_NUDGE` either way, and by how many times; a reliance if more than
    :data:`RELIANCE_JUMP`."""
    best = ("", 1.0)
    for name in FITTED:
        answers = [p.goodput_bps]
        for f in (1 / RELIANCE_NUDGE, RELIANCE_NUDGE):
            nudged = dataclasses.replace(c, **{name: getattr(c, name) * f})
            answers.append(burst.predict(path, nudged).goodput_bps)
        x = moves(answers)
        if x > best[1]:
            best = (name, x)
    return best
