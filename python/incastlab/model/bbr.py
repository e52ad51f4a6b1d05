"""BBR's window and pacing from block to block (Cardwell, Cheng, Gunn, Hassas Yeganeh,
Jacobson, "BBR: Congestion-Based Congestion Control", ACM Queue, 2016; Linux's
``tcp_bbr.c``, which the simulator follows).

BBR sets its window from what it measured, not from loss: a loss neither cuts the window nor
sets a slow-start threshold (recovery conserves packets for a round trip, then restores the
window it had; an RTO's recovery restores it too), so a window that overflowed the port is
carried into the next block whole. Its startup grows the window by every segment
acknowledged (slow start's doubling) until the bandwidth it measures has not grown by a
quarter for three rounds: each sender's delivery rate stops growing once the senders
together fill the pipe (at its share of the pipe, or its initial window where that is
more). The model ends startup two doublings later, at four times that window (the round
that fills the pipe is the first of the three; three doublings fit the random designs no
better). From then on BBR holds its window to twice the product of the bandwidth and the
least RTT it measured (each sender's share of the pipe) plus three of the bursts it paces
(``tso_segs_goal``: a millisecond of its pacing rate, 2 to 44 segments), and at least four
segments. The model keeps this as the threshold it carries from block to block: ``math.inf``
in startup, the held window (:func:`held_window`) after it.

The simulator shows both: 45 x 15.6 KB (11 segments, initial window 10) into 642 KB (423
packets) at 2.6 Gbps, 12 us, Linux's profile, windows carried across blocks: the first block
overflows nothing, the later ones send all 11 segments at once and lose the last ones to the
port, each waiting for the tail loss probe (0.8 RTO a block; the model had cut the window
after a loss, as Reno's, and sent them in two rounds without loss). With responses
restarting from the initial window (``tcp.cwnd_restart = "block"``) the window measured still
holds: 60 x 96 KB into 2.8 MB at 3.9 Gbps, 1 ms, initial window 10: one block with RTOs, then
none (a window of 26: 5.5 packets of pipe each, three bursts of 5).

BBR paces, in startup at 2.89 times the bandwidth it measured (:func:`paced_capacity`):
without segmentation offload (the classic profile) each segment after the connection's first
ten leaves at that rate, and where the senders' rates together stay under the link's a round
never fills the port: 14 x 31 KB (22 segments) into 151 KB at 96 Gbps, 177 us, windows of
50-110 carried across blocks: the later blocks go through without a loss, the queue under
seven packets, the senders paced at a few Gbps each (they measured a response a round trip).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from incastlab.model.burst import Path

#: BBR's pacing gain in startup (``bbr_high_gain``: 2/ln 2).
HIGH_GAIN = 2.885
#: BBR's window gain in probing the bandwidth (``bbr_cwnd_gain``).
CWND_GAIN = 2.0
#: Paced bursts BBR's window holds room for (``bbr_quantization_budget``).
BURSTS = 3
#: Least window, segments (``bbr_cwnd_min_target``).
MIN_WINDOW = 4.0
#: Largest paced burst, bytes (Linux's GSO_MAX_SIZE less headers).
GSO_MAX_BYTES = 65536 - 1 - 320
#: Rounds without a quarter's growth in the measured bandwidth that end startup, as doublings.
STARTUP_DOUBLINGS = 2


def _share(p: Path) -> float:
    """Each sender's share of the pipe, packets."""
    return p.pipe_packets / p.senders


def paced_burst(p: Path, rate: float) -> float:
    """Segments BBR sends at once pacing at ``rate`` (bytes/s; ``tso_segs_goal``): about a
    millisecond's worth, 1 or 2 (1 under 150 KB/s) to 44."""
    burst = min(rate / 1024, GSO_MAX_BYTES) // p.mss
    return max(1.0 if rate < 150_000 else 2.0, burst)


def held_window(p: Path) -> float:
    """The window BBR holds each sender to once startup has ended, segments."""
    # Paced at its share of the link, less the pacing margin.
    burst = paced_burst(p, 0.99 * p.link_bps / 8 / p.senders)
    w = math.ceil(CWND_GAIN * _share(p)) + BURSTS * burst
    return max(MIN_WINDOW, w + w % 2)


def startup_end(p: Path) -> float:
    """The window at which BBR's startup has measured the bandwidth and stops growing it."""
    return max(float(p.initial_window), _share(p), 1.0) * 2.0**STARTUP_DOUBLINGS


def next_window(p: Path, w: float, ssthresh: float) -> float:
    """A round's window from the last one's: slow start's doubling below ``ssthresh``, one
    segment more above it; BBR's (``p.loss_blind``) doubles until startup ends and is held
    to :func:`held_window` from then on."""
    if not p.loss_blind:
        return min(2 * w, max(ssthresh, w + 1)) if w < ssthresh else w + 1
    if math.isinf(ssthresh) and w < startup_end(p):
        return 2 * w
    return min(2 * w, held_window(p))


def carried(p: Path, window: float, ssthresh: float, segments: float) -> tuple[float, float]:
    """BBR's window and threshold after a block that started from ``window``, loss or not:
    ``segments`` more acknowledged, held to :func:`held_window` once startup has ended."""
    w = window + segments
    if math.isinf(ssthresh) and w < startup_end(p):
        return w, ssthresh
    held = held_window(p)
    return min(w, held), held


def largest_round(window: float, segments: float) -> float:
    """The largest round a sender sends of ``segments`` from ``window``, doubling (what the
    bandwidth it measures in a block comes from)."""
    w, rem, most = max(1.0, window), float(segments), 0.0
    while rem > 1e-9:
        most = max(most, min(w, rem))
        rem -= min(w, rem)
        w *= 2
    return most


def _paced_rate(p: Path, senders: float, per_sender: float, delivered: float) -> float:
    """Packets/s each sender paces a round of ``per_sender`` at in startup, having measured
    ``delivered`` segments a round trip; 0 where the round is not paced or its bursts arrive
    as one (see :func:`paced_capacity`)."""
    if not p.loss_blind or delivered <= 0:
        return 0.0
    q, pt = p.buffer_packets, p.packet_time
    # Its round: the RTT and the link time of every sender's (packets/s, each).
    rate = HIGH_GAIN * delivered / (p.rtt + senders * delivered * pt)
    burst = paced_burst(p, 0.99 * rate * p.mss) if p.tso else 1.0
    if burst >= per_sender or senders * burst > q + burst:
        return 0.0
    return rate


def paced_timeout(p: Path, senders: float, per_sender: float, delivered: float) -> float | None:
    """Chance that a sender whose paced round is its response's last times out (``None``: the
    round is not paced, or does not overflow the port for it).

    Paced, the senders' segments arrive interleaved at their rates together: once the queue
    has filled, the port takes the link's share of each sender's arrivals, so the round's
    drops are spread over the rest of it, not its end, and the segments through after them
    raise duplicate ACKs (unless the sender's first hole is among its last ``dupthresh``
    segments: a lost tail, waited for with the RTO). A hole's retransmission leaves a round
    trip (and the queue's delay) after it: where the round still arrives then, the port
    drops it as it drops the round's own segments, and only the RTO finds a lost
    retransmission; after the round's last arrival the queue drains and it gets through. The
    simulator at 34 x 102 KB into 260 KB at 74 Gbps, 256 us (172 packets of buffer, 1,540 of
    pipe), classic BBR: 1,788 drops in four blocks, every one repaired by fast retransmit
    (the model, which took the drops for the rounds' tails, had every sender time out every
    block)."""
    rate = _paced_rate(p, senders, per_sender, delivered)
    q, pt = p.buffer_packets, p.packet_time
    over = senders * rate * pt  # arrivals over the link's rate
    if over <= 1:
        return None
    fill = q / (senders * rate - 1 / pt)  # the first drop
    end = per_sender / rate  # the round's last arrival
    after = per_sender - rate * fill  # each sender's segments after the first drop
    if after <= 0:
        # Its pacing alone does not fill the port: what overflows is the window beyond the
        # buffer and the pipe, the end of the round (paced_capacity).
        return None
    exposed = max(0.0, end - fill - p.rtt - q * pt)
    kept = 1 / over
    # A sender whose first hole is among its last dupthresh segments has too few after it
    # for fast retransmit: a lost tail. Of a round whose queue fills late, most are.
    tail = kept ** max(0.0, after - p.dupthresh) * (1 - kept ** min(after, p.dupthresh))
    # Holes whose retransmissions arrive while the round still overflows the port, each lost.
    holes = exposed * rate * (1 - kept)
    return float(1 - (1 - tail) * math.exp(-holes * (1 - kept)))


def paced_capacity(
    p: Path, senders: float, per_sender: float, delivered: float, first: bool
) -> float:
    """Packets a round of ``senders`` sending ``per_sender`` each gets through the port when
    BBR paces it (0: not paced), having measured ``delivered`` segments a round trip.

    In startup BBR paces at 2.89 times the bandwidth it measured (Cardwell et al.'s
    2/ln 2): ``delivered`` segments over the RTT and the link time of every sender's round
    (so at most 2.89 times its share of the link).
    The round arrives spread over ``per_sender`` at that rate, while the port drains; where
    the senders' rates together are under the link's it never fills. The connection's first
    ten segments are not paced. With segmentation offload (``tcp.tso``) BBR sends bursts of
    a millisecond of its rate (:func:`paced_burst`), which at these RTTs mostly hold a
    round, except on slow links; without it, one segment at a time. The senders' bursts
    arrive together: where they overflow the port, pacing does not keep it from loss."""
    rate = _paced_rate(p, senders, per_sender, delivered)
    if rate <= 0:
        return 0.0
    q, pt = p.buffer_packets, p.packet_time
    # Past the first round, ACKs clock the senders: what exceeds the buffer and the pipe
    # overflows at any rate above the link's.
    held = math.inf if first else p.held_packets
    if senders * rate * pt <= 1:
        return held
    return min(held, q + per_sender / (rate * pt))


#: Round trips of each of the two stretches BBR samples a lossy sender's rate over, at least
#: (``bbr_lt_intvl_min_rtts``) and at most.
LT_STRETCH = 4
LT_STRETCH_MAX = 4 * LT_STRETCH
#: Share of delivered segments lost in a stretch that BBR takes for a policer (50/256).
LT_LOSS = 50 / 256
#: Round trips BBR holds a sender to the rate it sampled (``bbr_lt_bw_max_rtts``).
LT_ROUNDS = 48
#: RTOs waited in a row (1 + 2 + 4, backed off) beyond which no lock is modelled.
LT_WAITS = 7.0
#: Chance that a sender which timed out ends two stretches at the same rate and is locked.
LT_CHANCE = 0.002


def lock_wait(p: Path, waits: float, rto: float, timeouts: float) -> float:
    """Seconds a block waits, expected, for a sender BBR locked at the rate it sampled over its
    losses (Linux's long-term bandwidth, ``lt_bw``).

    From its first loss BBR samples a sender's delivery rate over stretches of 4 to 16 round
    trips (an RTO is one); a stretch that ends having lost a fifth of what it delivered, at
    the rate of the one before it (within an eighth), makes BBR take the path for a policer
    and pace at that rate for 48 round trips, across blocks. A sender whose stretches held
    an RTO wait measured a few segments over it: its share of the full port and pipe a round
    (``held_packets / senders``, one segment at least, its window at most) for a stretch's
    three other rounds, each as long as the full queue's delay, over those rounds and the
    RTO waits (``waits`` of them, backed off). It sends its next response at that rate, one
    segment a round once that is under one a round trip, and the block waits for it.

    Where a lock is modelled: RACK-TLP senders (Linux's profile; the classic profile's
    repeated timeouts, :func:`incastlab.model.window.repeated_timeouts`, already charge its
    senders for the rounds they lose); a window BBR holds a quarter or more over its share
    of the path (a fifth of it lost; else too little is); a response of 32 rounds at its
    share or more (two stretches of the longest, before the sender runs out of data and its
    samples turn app-limited, which ends the sampling); ``waits`` of at most 7 RTOs (a sender still
    backing off measures a rate that halves from one stretch to the next), a stretch of a
    millisecond or more (Linux stamps it in whole milliseconds). Of the ``timeouts`` in
    the block, each is locked with the chance :data:`LT_CHANCE` (one in 500), a figure
    chosen on the random designs and on a grid of Linux-profile scenarios (docs/model.md):
    one in 100 scores a little better on the designs and
    overshoots the grid's 32 and 128 senders."""
    if not (p.loss_blind and p.rack_tlp) or not 0 < waits <= LT_WAITS:
        return 0.0
    share, held = p.held_packets / p.senders, held_window(p)
    if share >= (1 - LT_LOSS) * held:
        return 0.0
    per_round = min(max(share, 1.0), held)
    delay = p.rtt + p.drain_s  # a round trip through the full queue
    stretch = waits * rto + (LT_STRETCH - 1) * delay
    if stretch < 1e-3 or p.segments / per_round < 2 * LT_STRETCH_MAX:
        return 0.0
    rate = (LT_STRETCH - 1) * per_round / stretch  # segments/s
    lock = min(p.segments / rate, LT_ROUNDS * max(delay, 1 / rate))
    return lock * (1 - math.exp(-LT_CHANCE * timeouts))
