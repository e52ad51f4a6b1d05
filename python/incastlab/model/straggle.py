"""Stragglers (:mod:`incastlab.model.burst`, step 5): where senders take turns waiting for
RTOs, the link is not full until the block's bytes are through, because the senders whose
retransmissions keep being lost hold their bytes while they back off.

A sender that takes turns does not time out once a block. After an RTO it resends from a
window of one segment (the simulator's ``on_rto``: every segment out marked lost, go-back-N),
and slow start brings it back into the full port, where its next loss with a window too small
for ``dupthresh`` duplicate ACKs is an RTO again: one run of timeouts every few segments
(:func:`episode_segments`). Each run's retransmissions are lost as often as the port is full,
and each lost one doubles the wait, so at any time some of the senders are deep in backoff
with part of their response unsent. The link carries only the others' bytes; when those are
through, the senders still backing off send the rest, and while they do their retransmissions
are lost as before. The lossy busy time lasts longer than the link's time for the bytes, and
the backoff tail (:mod:`incastlab.model.tail`) starts after it.

The simulator at 216 x 180 KB into 24 KB at 9.8 Gbps, RTOmin 238 us (classic Reno, 125
segments a response): 8.7 runs of timeouts per sender and block (2.0 RTOs a run, 14 segments
between runs), each run continuing with chance 0.48-0.57 up to its seventh timeout; the queue
is full for the first 30% of the block (77 ms, 277 RTOs, against 122 RTOs of link time), part
full until 60% and idle after it until the last runs (255 RTOs long) end; link utilization
0.44. The same at 844 x 323 KB into 41 KB (CUBIC): 52 runs per sender and block, 4.3 segments
between runs, utilization 0.29; at 120 x 519 KB into 26 KB at 523 Mbps: 15 runs, utilization
0.40. The model before this: one chain of timeouts per sender, 5-7 RTOs per sender against
18-99, and blocks of 1.6 times the link time against 2.4-3.2.

BBR without RACK-TLP (the classic profile) takes turns too where the port cannot hold a
segment of every sender: a sender whose retransmission gets through keeps its window and
sends the rest of its response at once, the port to itself, while the others' retransmissions
are lost and back off; those still backing off when the link has sent the served senders'
bytes hold the rest of their responses (the model: half a share, as above; the whole of it
scored worse once refitted). The simulator at 13 x 814 KB into 3.6 packets (8.6 with the
pipe) at 130 Mbps, RTOmin 10.5 ms, one block: nine senders served one after the other in the
first 50 RTOs, the link idle until the wave at 63 RTOs brings three more (sent at 63, 70 and
77), the last, whose chain started at 16 RTOs, at 143; blocks of 82-496 RTOs, 145 on average
over three seeds (the link's time 63; the model with the backoff tail alone 80, with this
124), 3.0-3.4 runs of timeouts per sender and block, 2.6-2.7 RTOs a run. At 20 x 428 KB into
2.9 packets at 161 Mbps: 2.7-4.6 runs per sender and block; at 20 x 336 KB into 5.6 packets
at 1.5 Gbps 2.1-2.2; at 13 x 222 KB into 5.7 packets at 6.1 Gbps 1.8-1.9: a run every
65-186 segments, not every 15 (BBR does not restart from one segment into the full port: a
served sender's window carries it through). The model counts :data:`BBR_RUNS` runs per
straggling sender and block (two scored best on the random designs; three, as many, lost a
little). Where the port holds a segment of every sender, BBR's kept windows repair the losses
(:func:`incastlab.model.bbr.kept_full`): the backoff tail alone, as the random designs
confirm (with the stretch there, the held-out design lost 0.7 points within 1.5x).

Under RACK-TLP (Linux's profile) BBR's stragglers hold their bytes the same way where the port
cannot hold a segment of each: RACK finds a lost retransmission by time only when a later
segment gets through, and a straggler in backoff has none out. The simulator at 601 x 87 KB
(60 segments) into 349 packets (0.58 a sender), 162 Mbps, RTOmin 22 ms, restarting every
block: 1.3 runs of timeouts per sender and block, blocks of 4.2-8.2 s on 2.7 s of link time;
the model 4.4 s with the tail alone, 6.6 s stretched. At 654 x 271 KB into 0.34 packets a
sender: 2.3 runs per sender and block. A short response has fewer: 0.54 runs per sender and
block at 170 x 14 KB (10 segments), 0.82 at 132 x 21 KB (15), 1.3 at 60 segments, where two a
response had the model's blocks twice the simulator's at 10 segments; the model counts no more
runs than Reno's episodes would (:func:`episode_segments`), and the turns' runs include the
rounds they lose whole (:func:`incastlab.model.bbr_rack.recovery_runs`: 34 x 409 KB into 0.51
packets a sender, 8.9 RTOs per sender and block, the model 2.9). On the 29 read designs:
87.86% within 1.5x with the tail alone, 87.96% with the stretch, the short responses' runs
and the lost rounds (with :func:`incastlab.model.bbr_rack.recovery_tail`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from incastlab.model.tail import backoff_tail, still_waiting

if TYPE_CHECKING:
    from incastlab.model.burst import Path

#: Runs of timeouts a BBR sender taking turns has in a block (without RACK-TLP).
BBR_RUNS = 2.0

#: Passes of the fixed point between the busy time and the stragglers it leaves (a longer busy
#: time starts more chains; it settles within a few).
PASSES = 20


def episode_segments(p: Path) -> float:
    """Segments a sender that takes turns sends between two runs of timeouts: slow start from
    the one segment an RTO leaves, until its window is twice what fast retransmit needs
    (``dupthresh`` + 1), the round whose losses in the full port no longer leave it the
    duplicate ACKs: 1 + 2 + 4 + 8 = 15 (the simulator: 14 at 216 x 180 KB into 24 KB). BBR's
    served sender keeps its window: :data:`BBR_RUNS` runs a response, under RACK-TLP no more
    than one every 15 segments (see above)."""
    w, sent = 1.0, 0.0
    while w < 2 * (p.dupthresh + 1):
        sent += w
        w *= 2
    if p.loss_blind and p.rack_tlp:  # no more runs than Reno's episodes (see above)
        return max(p.segments / BBR_RUNS, sent + w)
    if p.loss_blind:
        return p.segments / BBR_RUNS
    return sent + w


def straggler_tail(
    p: Path,
    busy: float,
    start: float,
    timeouts: float,
    loss: float,
    room: float,
    rotating: float,
    left: float,
    drift: float = 0.0,
) -> float:
    """RTOs a block lasts beyond ``busy`` RTOs of the link's time for its bytes, where
    ``rotating`` senders take turns with ``left`` of the block's bytes (a share) each after
    the first loss: the lossy busy time stretched by the stragglers' unsent bytes (half their
    share, on average), then the backoff tail after it (``start``, ``loss``, ``room`` and
    ``drift`` as :func:`~incastlab.model.tail.backoff_tail`; its chains through the busy time
    are the ``timeouts`` the senders' turns take). DCTCP's marked windows do not restart from one
    segment, and BBR's, where the port holds a segment of each sender (``room``), repair its
    losses: the tail alone (under RACK-TLP too: see above)."""
    rate = timeouts / max(busy, 1.0)
    bbr_repairs = p.loss_blind and room >= p.senders
    if bbr_repairs or p.marking is not None or rotating <= 0 or busy <= 0 or loss <= 0:
        return backoff_tail(p, busy, start, rate, loss, room, drift)
    runs = rotating * left * p.segments / episode_segments(p)  # runs of timeouts a block
    stretched = busy
    for _ in range(PASSES):
        waiting = min(rotating, still_waiting(p, stretched, runs / stretched, loss))
        # A straggler's run of timeouts starts anywhere in its share: half of it is unsent.
        stretched = busy * (1 + 0.5 * left * waiting / p.senders)
    return stretched - busy + backoff_tail(p, stretched, start, rate, loss, room, drift)
