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


#: The share of what arrives at the full port that it drops while senders take turns in it
#: under RACK-TLP: 0.064 in the simulator at 60 x 130 KB into 131 packets at 3.85 Gbps, 40 us
#: (linux Reno, IW 3, RTOmin 15 ms: 1,386 drops of 21,600 segments over four blocks). A
#: chosen figure, measured once, not fitted to the designs.
FULL_PORT_DROP = 0.06


def probed_turns(p: Path, rotating: float, left: float) -> float:
    """Of ``rotating`` senders taking turns after the first loss with ``left`` segments each
    still to send, those that time out under RACK-TLP (Reno, CUBIC, DCTCP; not BBR).

    Under RACK-TLP a sender whose window is too small for duplicate ACKs does not wait for
    the RTO: RACK repairs a hole that a later segment's SACK shows, and the tail loss probe
    one that nothing shows. It times out only where the probe or the retransmission is
    itself dropped, with nothing sent after it: once for its loss in the overflow, and once
    more for every probe timer (``probe``) that fires while the port is still full, the link
    sending the others' rest (``senders x left`` packets), each probe dropped with the full
    port's :data:`FULL_PORT_DROP`; or once for each segment of its rest that is dropped and
    whose retransmission is dropped again, where that is more (long responses). So the
    count grows with the time the port stays full instead of staying at the senders the
    port has no room for (``burst._repairing``), and it never exceeds them. The simulator at
    60 x 43, 130, 430 and 1,300 KB into 131 packets at 3.85 Gbps (linux Reno, RTOmin 15 ms;
    27 senders without room): 0.2, 10.8, 29.5 and 86.5 RTOs a block as the link's time goes
    5.4, 16, 54 and 163 ms; over the read designs' Linux-profile points taking turns with no
    timeout in the overflow, the RTOs per sender without room are a median 0.02-0.1 where
    the port stays full for up to two probe timers, 0.2 at four, 0.7 at eight, 0.9 at 16,
    2.3 at 32-64 (the fixed count: one each). 776 x 22.8 KB into 738 KB at 3.5 Gbps, 0.92
    ms (linux CUBIC): 380 RTOs a block, the model 797 before, 401 with this (its goodput
    0.66x the simulator's before, 0.77x after)."""
    if not p.rack_tlp or p.loss_blind or rotating <= 0:
        return rotating
    full = p.senders * left * p.packet_time
    probes = 1 + full / max(p.probe, 1e-12)
    share = max(FULL_PORT_DROP * probes, left * FULL_PORT_DROP**2)
    return min(rotating, rotating * share)
