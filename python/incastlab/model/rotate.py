"""Senders taking turns after the first loss (:func:`incastlab.model.burst._block`): which of
them the overflow's own chain of timeouts already holds.

After the first loss only as many senders as keep a window of dupthresh + 1 repair their
losses by fast retransmit; the others take turns waiting for RTOs until the rest of their
responses is through. Where the overflow itself timed out most senders, those are the same
senders: each wave of the overflow's chain serves a few (:func:`~incastlab.model.serial.held`),
and a served sender has the port to itself until the next wave, an RTO or more later. Where
the link sends what a wave serves within that RTO, a served sender finishes its response
there (a round of it lost on the way times out once, on a fresh timer, not backed off) and
never joins a second chain. Under RACK-TLP (Linux) the senders that got part of the round
through are served by their probes, and the others time out together. The simulator at 937 x
26 KB into 95 packets at 53 Gbps, RTOmin 316 us (linux CUBIC, an 8 ms RTO on the 4 ms tick):
99 senders served per wave, waves 1, 3, 7 ... 255 RTOs after the loss, blocks of 268 RTOs
and 3.4 RTOs per sender; the model 513 RTOs and 7.8 per sender with the turns a second chain
of 879 senders, 257 and 3.4 without it. At 272 x 25 KB into 14 packets at 646 Mbps (linux
Reno): waves of 14 senders, each followed 12 ms later by the half of them whose next round
the port dropped, blocks of 47,000-93,000 RTOs and 7.2-9.7 RTOs per sender; the model
105,000 and 18.3 with the second chain, 76,000 and 8.5 without.

Where a wave's responses take the link longer than the RTO, the served senders' later rounds
meet the next waves and do take turns: 609 x 229 KB into 33 packets at 810 Mbps (linux
DCTCP), a wave's 33 x 158 segments take 79 ms against an 8 ms RTO; the simulator 11.9 RTOs
per sender, the model 16.7 with the second chain, 7.7 without. Classic TCP (no probe) and
BBR (loss does not cut its window, model/bbr.py) keep the second chain.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from incastlab.model.serial import held

if TYPE_CHECKING:
    from incastlab.model.burst import Path


def fresh_turns(p: Path, rotating: float, timed_out: float, left: float, rto: float) -> float:
    """Of ``rotating`` senders taking turns, those not already in the chain of the
    ``timed_out`` senders of the overflow: those beyond ``timed_out`` where the link sends
    what a wave serves (:func:`~incastlab.model.serial.held` senders, ``left`` segments each)
    within the ``rto`` before the next wave (RACK-TLP, not BBR), all of them otherwise."""
    if not p.rack_tlp or p.loss_blind or held(p) * left * p.packet_time >= rto:
        return rotating
    return max(0.0, rotating - timed_out)
