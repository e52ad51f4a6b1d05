"""BBR's window and pacing from block to block (Cardwell, Cheng, Gunn, Hassas Yeganeh,
Jacobson, "BBR: Congestion-Based Congestion Control", ACM Queue, 2016; Linux's
``tcp_bbr.c``, which the simulator follows).

BBR sets its window from what it measured, not from loss: a loss neither cuts the window nor
sets a slow-start threshold (recovery conserves packets for a round trip, then restores the
window it had; an RTO's recovery restores it too), so a window that overflowed the port is
carried into the next block whole. Its startup grows the window by every segment
acknowledged (slow start's doubling) until the bandwidth it measures has not grown by a
quarter for three rounds (:func:`full_rounds`). From then on BBR holds its window to twice
the product of the bandwidth and the least RTT it measured (each sender's share of the
pipe) plus three of the bursts it paces (``tso_segs_goal``: a millisecond of its pacing
rate, 2 to 44 segments), and at least four segments. The model keeps this as the threshold
it carries from block to block: ``math.inf`` in startup, the held window
(:func:`held_window`) after it.

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
#: Rounds without a quarter's growth in the measured bandwidth that end startup
#: (``bbr_full_bw_cnt``).
FULL_BW_ROUNDS = 3
#: Growth of the measured bandwidth that keeps startup going (``bbr_full_bw_thresh``).
FULL_BW_GROWTH = 1.25


def _share(p: Path) -> float:
    """Each sender's share of the pipe, packets."""
    return p.pipe_packets / p.senders


def initial_rate(p: Path) -> float:
    """The delivery rate BBR starts from (``bbr_init_pacing_rate``), packets/s: the initial
    window over the handshake's RTT sample (the RTT and about a packet's link time).

    Startup only raises its pacing rate, so where a round trip is short against the
    senders' link time this rate, not the one they measure, paces them: the simulator at 22 x
    76 KB (53 segments) into 972 packets at 352 Mbps, 188 us, classic, initial window 10,
    windows carried: each sender paces at 2.89 x 10 segments per 0.2 ms, 4.5 times the link,
    the port fills with 45 of each sender's 53 segments and keeps 1 in 100 of the rest: every
    sender loses its tail and times out, every later block, 372 drops (the model, pacing them
    at what they measured, 29 segments over the 22 senders' link time, had the port take
    them all)."""
    return p.initial_window / (p.rtt + p.packet_time)


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


def round_rate(p: Path, segments: float) -> float:
    """The delivery rate a sender measures over a startup round of ``segments`` sent by every
    sender at once, packets/s: the round over its RTT (and its own link time) while the
    senders' rounds together take less than that on the link, its share of the link once
    they take longer (the link busy throughout, each sender's ACKs come at its share)."""
    pt = p.packet_time
    return segments / max(p.rtt + segments * pt, p.senders * segments * pt)


def full_rounds(p: Path, window: float, segments: float, started: bool = False) -> int:
    """Startup's checks in a response of ``segments`` from ``window`` (doubling) that found
    the bandwidth BBR measured grown by less than a quarter (Linux's
    ``bbr_check_full_bw_reached``; three end startup).

    Linux checks at the start of each round, on a sample that is not app-limited, the
    largest rate measured (:func:`round_rate`) against the last that grew by a quarter: the
    first check finds it grown (from nothing) and is the baseline, each later one either
    counts or, grown again, is the new baseline. A write to an idle connection marks its
    samples app-limited until more than one segment is delivered: the first round's
    segments and those the first ACK releases, so a connection's first check comes at the
    start of its third round, on the second's rate; the last round is checked at its start
    on the one before it, and nothing after it. So the first response, of ``R`` rounds,
    makes at most ``R - 2`` checks, ``R - 3`` counting beyond the baseline. A later response
    from the initial window (``started``: the baseline set, the rates no higher) is
    app-limited until one segment more is delivered, its first round alone: ``R - 1``
    checks, all counting. The simulator at 60 x 96 KB (67 segments, rounds of 10, 20 and 37,
    responses from the initial window) into 2.8 MB at 3.9 Gbps, 1 ms, classic: the windows
    reach 77 in each of the first two blocks and are held (32-56) from the third on.

    The simulator at 363 x 66.5 KB (46 segments: rounds of 3, 6, 12, 22 and 3) into 9,860
    packets at 32.5 Gbps, 302 us (798 of pipe), IW 3, Linux's profile, windows carried: the
    windows are 45-49 after the first block and still grow by each response, 68-95 and
    64-141 after the next two, startup's pacing (2.9 times the share, bursts of 20 segments
    a millisecond) overflows the port in every later block: 2,200 drops, no RTO, blocks of
    30 ms on 6.6 ms of link time, the senders that lost their tails waiting for the probe
    (the model, which counted four rounds at the full pipe, had startup end and the window
    held at 26: 9,438 packets, no loss, 3.8 times the simulator's goodput; 1.46 now). At 7 x
    204 KB (141 segments, IW 2) into 212 packets, 107 of pipe, 2.1 Gbps, 626 us, never
    restarting: windows of 124-144, 163-252, 165-267 at the blocks' starts (1.93 times the
    simulator's goodput; 1.1 now)."""
    w, rem, rates = max(1.0, window), float(segments), []
    while rem > 1e-9:
        b = min(w, rem)
        rem -= b
        rates.append(round_rate(p, b))
        w *= 2
    full, counted = (math.inf, 0) if started else (0.0, 0)
    first = 1 if started else 2  # the start of the second round, or of the third
    for k in range(first, len(rates)):
        bw = max(rates[:k])
        if not started and bw >= FULL_BW_GROWTH * full:
            full, counted = bw, 0
        else:
            counted += 1
    return counted


def kept_full(p: Path, senders: float, window: float) -> float:
    """Share of the time ``senders`` keeping windows of ``window`` through a loss keep a
    queue at the port: what their windows bring beyond the pipe, of all of it. Where the pipe
    holds them the queue drains within a round trip of the overflow, and the retransmissions
    and later rounds go through. The simulator at 7 x 171 KB into 19 packets, 94 of pipe,
    27 Gbps, 43 us, IW 1, classic BBR restarting every block (windows of 32 overflow the
    port): 1,650-1,750 drops, about 350 fast recoveries and 6-8 RTOs in 20 blocks; the model
    with the queue kept full 6.2 RTOs a block, with the pipe draining it 1.1. At 14 x 18 KB
    (13 segments, initial window 10, unpaced) into 29 packets, 399 of pipe, 13 Gbps, 377 us:
    101 drops, 13 fast recoveries and no RTO in 4 blocks; the model 8.3 of the 14 senders
    timing out in the first block, 3.1 (those with too few segments through for fast
    retransmit) with the pipe draining it."""
    brought = senders * window
    if brought <= 0:
        return 0.0
    return max(0.0, 1.0 - p.pipe_packets / brought)


def next_window(p: Path, w: float, ssthresh: float) -> float:
    """A round's window from the last one's: slow start's doubling below ``ssthresh``, one
    segment more above it; BBR's (``p.loss_blind``) doubles in startup (``math.inf``) and is
    held to :func:`held_window` from then on."""
    if not p.loss_blind:
        return min(2 * w, max(ssthresh, w + 1)) if w < ssthresh else w + 1
    if math.isinf(ssthresh):
        return 2 * w
    return min(2 * w, held_window(p))


def carried(
    p: Path,
    window: float,
    ssthresh: float,
    segments: float,
    blocks: int = 1,
    recovered: float | None = None,
) -> tuple[float, float]:
    """BBR's window and threshold after the run's ``blocks``-th block, which started from
    ``window``, loss or not: ``segments`` more acknowledged, held to :func:`held_window` once
    startup has ended (:data:`FULL_BW_ROUNDS` checks counted, :func:`full_rounds`). Each
    block from the initial window (``tcp.cwnd_restart = "block"``) checks its rounds again,
    on the baseline the first set; a carried window counts the first block's checks alone,
    its later responses are sent whole.

    A block that lost segments leaves startup's window at ``recovered`` (where given,
    :func:`after_recovery`), not grown by all its segments."""
    w = window + segments
    counted = full_rounds(p, p.initial_window, segments)
    if p.restart == "block":
        counted += (blocks - 1) * full_rounds(p, p.initial_window, segments, started=True)
    if math.isinf(ssthresh) and counted < FULL_BW_ROUNDS:
        if recovered is not None:
            w = min(w, max(window, recovered))
        return w, ssthresh
    held = held_window(p)
    return min(w, held), held


def after_recovery(p: Path, lost_window: float, left: float) -> float | None:
    """Startup's window after a block whose round from ``lost_window`` overflowed the port,
    with ``left`` segments each left (half that round's and those after it); ``None`` where
    the loss does not hold the window back.

    BBR saves its window as recovery begins (``bbr_save_cwnd``), conserves packets through
    it and restores the saved window as it ends (``bbr_set_cwnd_to_recover_or_restore``):
    what is acknowledged in the meantime does not grow it. Where duplicate ACKs find the
    loss (``dupthresh`` segments or more sent after the round that lost), recovery takes the
    rest of that round: the window is the lost round's, grown by the segments sent after it.
    A lost tail is found by the probe once the rest is acknowledged, and the window has
    grown by all of it (the simulator's windows at 45 x 11 segments: 21, 32, 43 across
    blocks that each lose their tails). The simulator at 7 x 55 KB (39 segments, IW 2) into
    64 packets, 229 Mbps, 245 us, Linux's profile, windows carried: the round of 16
    overflows the port, windows of 14-24 after the first block (here 16 + 9; carried whole,
    41, every later block lost: 0.64 of the simulator's goodput, 0.69 now). At 15 x 204 KB
    (141 segments, IW 2) into 249 packets, 153 of pipe, 1.5 Gbps, 1.25 ms, classic: the
    round of 32 overflows in the first block, windows of 62-76 after it, 63-142 after the
    next (here 32 + 79 = 111; 143 carried whole: 0.86 of the simulator's goodput, 0.99 now).
    Both still above the simulator's windows."""
    after = left - lost_window / 2  # the segments sent after the round that lost
    if after < p.dupthresh:
        return None
    return lost_window + after


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
    # Its round: the RTT and the link time of every sender's (packets/s, each). In startup
    # the pacing rate never falls (bbr_set_pacing_rate): not under the one BBR set from the
    # initial window over the handshake's RTT. The model keeps that floor after startup too
    # (a simplification: its held window paces near that rate there).
    rate = HIGH_GAIN * max(delivered / (p.rtt + senders * delivered * pt), initial_rate(p))
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
    # A sender with fewer than dupthresh segments through after its first hole has too few
    # duplicate ACKs for fast retransmit: a lost tail. Of a round whose queue fills late, or
    # whose port keeps few of the arrivals, most are.
    tail = few_after_hole(round(after), kept, p.dupthresh)
    # Holes whose retransmissions arrive while the round still overflows the port, each lost.
    holes = exposed * rate * (1 - kept)
    return float(1 - (1 - tail) * math.exp(-holes * (1 - kept)))


def few_after_hole(segments: int, kept: float, dupthresh: int) -> float:
    """Chance that of a sender's ``segments`` that arrive at the full port, each kept with the
    chance ``kept``, one is lost and fewer than ``dupthresh`` are kept after the first lost.

    The simulator at 29 x 52 KB (37 segments) into 379 packets at 11.8 Gbps, 160 us,
    classic, initial window 3, windows carried: the second block's round, paced at 2.5 times
    the link, fills the port after 22 of each sender's segments and the port keeps 2 in 5 of
    the other 15; 27 senders repair 8-17 drops each by fast retransmit, two lose all their
    last 14 and 18 and time out (4 a block over three seeds; the chance here, 0.06 each, makes
    1.7 of 29; the model had counted only senders whose first hole was among their last
    three: 1e-5)."""
    total = 0.0
    for j in range(1, segments + 1):
        m = segments - j  # after the first hole
        few = sum(
            math.comb(m, i) * kept**i * (1 - kept) ** (m - i) for i in range(min(m + 1, dupthresh))
        )
        total += kept ** (j - 1) * (1 - kept) * few
    return total


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


def stalled_spread(
    p: Path, senders: float, segments: float, left: float, window: float, transfer: float
) -> float:
    """Packets the port sends between the first and the last timeout of ``senders`` whose
    carried windows of ``window`` overflowed it with their whole responses at once, ``left``
    of their ``segments`` each still to send then, over a transfer of ``transfer`` RTOs (0
    where the windows are not kept, not BBR, or do not hold the response, or where the
    retransmissions come while the port is still busy: a transfer of half an RTO or more).

    Kept through the loss, the windows keep the port full while the rest of the transfer goes
    through (:func:`kept_full`); a sender stalls when the hole it cannot repair is its last
    (fast retransmit repairs the others), and its timer fires an RTO after its last ACK: the
    senders stall one after another while the port sends what they got through, and their
    retransmissions arrive as far apart, where the port drains them. A block from the initial
    window loses in a round all the senders send together, and they stall together. The
    simulator at 205 x 63 KB (44 segments) into 57 packets, 1,590 of pipe, 61 Gbps, 319 us,
    RTOmin 42 ms, classic, windows carried: the later blocks' 188, 49 and 27 timeouts fire at
    1.007-1.036 RTOs (most of their senders' last arrivals 0.4-1.5 ms into the block, the port
    sent 7,500 packets), all served in one wave: blocks of 1.05-1.15 RTOs (the model, with the
    retransmissions arriving at once, 88 a wave, 7 RTOs). Where the transfer takes most of an
    RTO the retransmissions meet the port still full of the others' rounds and back off: at
    206 x 54 KB into 145 packets, 1,821 of pipe, 64 Gbps, RTOmin 2.4 ms (a transfer of 0.67
    RTO), the later blocks take 4.9, 2.7 and 1.8 RTOs; at 0.03-0.45 RTO (6 to 205 senders)
    they take one (the half an RTO between is the random designs' divide, not derived).

    Timers on a coarse tick (jiffies) fire on the tick after they expire: a spread under a
    tick keeps them in step (drift.retransmit_capacity). The simulator at 100 x 9.2 KB into 8
    packets, 437 of pipe, 49 Gbps, RTOmin 2 ms, a 4 ms tick (Linux's profile): the senders
    stall within 0.1 ms of one another and the later blocks wait 270, 69 and 18 RTOs, as the
    first 270."""
    if not p.loss_blind or window < segments or transfer >= 0.5:
        return 0.0
    stalled = senders * max(0.0, segments - left)
    if stalled * p.packet_time < p.timer_tick:
        return 0.0
    return stalled


def lost_tail(p: Path, senders: float, window: float) -> float:
    """Share of the RTOs of ``senders`` keeping windows of ``window`` through their losses
    that come from a lost tail, at the end of the sender's transfer, where no other sender's
    transfer hides the wait: as often as the windows keep the port full (:func:`kept_full`).
    A kept window brings duplicate ACKs for any loss with more of the response behind it,
    repaired by fast retransmit; only the last segments' loss leaves nothing to raise them.

    The simulator at 4 x 638 KB (441 segments) into 120 packets, 27 of pipe, 44 Gbps, 8 us,
    classic, windows carried: 1,000-2,200 drops and 1-3 RTOs in 4 blocks, each block with
    one 0.5 ms long, the others 0.52 + 1.6 ms (one RTO after the link sent everything, all
    four senders silent for 0.9 RTO); the model, hiding the waits behind the transfer left
    after the first overflow, 0.06 RTO a block. At 3 x 343 KB into 14 packets, 39 of pipe,
    52 Gbps: blocks of 0.21 ms or 6.7 ms (an RTO of 6.5 ms after the transfer)."""
    return kept_full(p, senders, window)


def unprobed_recovery(p: Path, senders: float, window: float) -> float:
    """Chance that a sender which lost part of a round of ``window`` (RACK-TLP, BBR keeping
    its window) loses the whole of its next round in recovery and waits for the RTO.

    RACK marks a lost retransmission only when a segment sent after it is acknowledged, and
    Linux arms the loss probe only out of recovery (``tcp_schedule_loss_probe``): a sender
    in recovery of whose round nothing gets through has no timer but the RTO. Its round is
    its share of what the port and the pipe hold (``held_packets / senders``, one at least,
    retransmissions and new segments), arriving while the others' kept windows keep the port
    full (:func:`kept_full`), which keeps of every arrival the share the held packets are of
    what the windows bring. The simulator at 92 x 282 KB (195 segments, initial window 10)
    into 438 packets, 119 of pipe, 47 Gbps, 31 us, RTOmin 121 ms, Linux's profile, windows
    carried (every response sent whole): 51,000-54,000 drops and 97-113 RTOs in 4 blocks,
    4-11 fast recoveries and 0-4 probes a sender, the blocks 136-148 ms (two 268) on 4.7 ms of link
    time (one RTO wait or two); the model, with RACK finding every loss, 0.04 RTO a block
    and 7.7 times the simulator's goodput (1.0 now)."""
    brought = senders * window
    if brought <= p.held_packets:
        return 0.0
    kept = p.held_packets / brought
    each = max(1.0, p.held_packets / senders)
    return float(kept_full(p, senders, window) * (1 - kept) ** each)
