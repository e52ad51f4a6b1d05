"""The burst model: goodput of synchronized reads from the overflow of each block's bursts.

Chen et al.'s Eq. 1-4 (:mod:`incastlab.model`) switch at one onset from "no RTO" to "one RTO
per block". This model follows a block the way the port sees it instead:

1. **The block's bursts.** Every sender answers the request at once with its window: the
   initial window when responses restart from it (``tcp.cwnd_restart = "block"``, and the first
   block of a run), or the window it carried over (persistent: ``"never"``, or ``"idle"`` when
   the pause between blocks is shorter than the RTO), which the flows' share of the buffer and
   the bandwidth-delay product bound. Slow start doubles the window every round.
2. **Overflow.** The first round, synchronized by the request, arrives at N times the link
   rate: the port holds its buffer plus what it drains while one sender's burst arrives (and
   while the requests trickle out). Later slow-start rounds arrive at twice the link rate,
   ACK-clocked: they overflow once half a round exceeds the buffer, or the whole window the
   buffer plus the pipe. DCTCP's marking holds the carried window to the flows' share of the
   marking threshold instead of the buffer.
3. **Which overflow costs an RTO.** A sender none of whose round got through loses its whole
   window; a sender that lost the end of its response (the tail) has nothing left to send that
   could raise duplicate ACKs; a sender with a window too small for ``dupthresh`` duplicate ACKs
   cannot fast-retransmit, nor can one of whose next round none gets through the port, or too
   few of it and of the segments their SACKs release in turn (limited transmit:
   :mod:`incastlab.model.limited`). All of them wait for the RTO. With RACK-TLP one segment
   through finds the hole after the reorder timer, lost retransmissions are found by time and a
   lost tail by the probe: those senders wait for one of these timers instead of the RTO (nearly
   an RTO too for one whose only lost segment is its last: :mod:`incastlab.model.probe`); those
   with nothing through after the loss probe together, and those whose probe the port drops time
   out. BBR keeps its window through a loss and, as far as the windows exceed the pipe, the port
   full: its retransmissions are lost too (:attr:`Constants.tail_timeout`), every round
   overflows it again (model/window.py, bbr.kept_full); one it takes for policed paces at what
   it delivered over its RTO waits (bbr.lock_wait).
4. **Serial RTO waits.** The senders that timed out together retransmit together, one segment
   each, into the same port: those the port cannot hold back off (2, 4, 8 RTOs...), and those
   it serves but whose next round it drops time out again behind them. The retransmissions
   arrive spread over the requests' order, the hosts' send jitter and the differences between
   the senders' RTOs (:attr:`Constants.dispersion` of the buffer's drain time; none in a run's
   first block, whose RTOs are the handshake's), which grow with every RTO waited; the port
   holds its buffer plus what it drains meanwhile (:mod:`incastlab.model.serial`).
5. **The backoff tail.** Where senders take turns waiting for RTOs the port stays full while
   the block's bytes go through, and a sender whose retransmissions it keeps dropping backs off
   past the end of the link's busy time: the block ends at its next retransmission
   (:mod:`incastlab.model.tail`).
6. **Spurious RTOs.** A queue longer than the RTO the senders started the block with, which
   Karn's rule keeps them from sampling, holds them in a loop of timeouts with nothing lost
   and the link full of duplicates (:mod:`incastlab.model.loop`).

Goodput = bytes / (transfer time with slow start, after a loss congestion avoidance's sawtooth
(:mod:`incastlab.model.window`), + the waits that no other sender's transfer hides), averaged
over the run's blocks (the first from the initial window). Expected values throughout: a
"timeouts per block" of 0.3 is a 30% chance of one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

from incastlab.model import bbr, bbr_rack, hystart
from incastlab.model.carry import after_spurious_rtos, carried_after_loss
from incastlab.model.chain import chain
from incastlab.model.drift import drift_per_rto, retransmit_capacity
from incastlab.model.fitted import CONSTANTS_FILE as CONSTANTS_FILE
from incastlab.model.fitted import Constants as Constants
from incastlab.model.fitted import fitted as fitted
from incastlab.model.fitted import save as save
from incastlab.model.fresh import fresh_waves
from incastlab.model.loop import spurious_loop as spurious_loop
from incastlab.model.marking import (
    avoiding_capacity,
    carried_cap,
    marked_avoidance,
    marked_round,
    marked_sawtooth,
    threshold_port,
)
from incastlab.model.overflow import overflow
from incastlab.model.path import Path as Path
from incastlab.model.port import round_capacity, rto_seconds, turns_rto
from incastlab.model.probe import probe_seconds as probe_seconds
from incastlab.model.probe import probe_wait
from incastlab.model.resent import lost_retransmissions
from incastlab.model.rotate import fresh_turns, probed_turns
from incastlab.model.stagger import lost_nothing
from incastlab.model.straggle import straggler_tail
from incastlab.model.turns import turn_waits
from incastlab.model.window import (
    at_timeout,
    grow,
    repeated_timeouts,
    restart_time,
    sawtooth_time,
    slow_start_rounds,
)
from incastlab.model.window import transfer_time as transfer_time


@dataclass(frozen=True)
class Block:
    """The model's account of one block."""

    window: float  # each sender's window at the start of the block, segments
    transfer_s: float  # the block without losses: slow-start rounds and the link's busy time
    loss_round: int | None  # slow-start round whose burst overflows the port (0 = the first)
    timeouts: float  # expected RTOs in the block (every sender's)
    waits: float  # expected serial RTO waits, in RTOs (backoff counted: 1 + 2 + 4 ...)
    stall_s: float  # time the waits add to the block (what other transfers do not hide)
    delack_s: float  # time a delayed ACK holds the first round
    sawtooth_s: float = 0.0  # time congestion avoidance after the loss adds (window.py)
    lock_s: float = 0.0  # time BBR's long-term bandwidth lock holds a sender (bbr.py)

    @property
    def time_s(self) -> float:
        return self.transfer_s + self.stall_s + self.delack_s + self.sawtooth_s + self.lock_s


@dataclass(frozen=True)
class BurstPrediction:
    """The model's answer for one point, averaged over the run's blocks."""

    senders: int
    regime: str  # "ideal", "timeouts" (some RTOs, goodput above half the ideal), "collapse"
    goodput_bps: float
    ideal_bps: float
    block_time_s: float
    timeouts_per_block: float
    rto_waits_per_block: float
    rto_s: float
    terms: dict[str, float]  # seconds per block: "transfer", "slow start", "RTO waits", ...
    dominant: str
    first: Block
    steady: Block


# ---------------------------------------------------------------- time on the wire


def _short_tail(p: Path) -> float:
    """The share of a full frame the response's short last segment leaves unused."""
    last = p.sru - (p.segments - 1) * p.mss
    return 1.0 - (last + p.frame - p.mss) / p.frame


# ---------------------------------------------------------------- overflow


class Rounds(NamedTuple):
    """A block's rounds up to the first that overflows the port (:func:`_burst`)."""

    loss_round: int | None  # the round that overflows (0 = the first), or None
    timeouts: float  # expected senders that time out
    left: float  # segments each has left after it
    window: float  # the window it overflowed with
    probes: float  # expected senders that wait for the probe timer instead (RACK-TLP)
    lone: float  # of these, those with only their last segment out (model/probe.py)
    at_timeout: float  # the window of one that times out when its timer fires (window.py)
    spared: float  # senders that lost nothing (stagger.lost_nothing)
    resend: float  # segments each of those waiting for the probe lost


def _burst(
    p: Path,
    c: Constants,
    senders: float,
    segments: float,
    window: float,
    first: bool,
    ssthresh: float = math.inf,
    delivered: float = 0.0,
) -> Rounds:
    """Rounds of ``senders`` from ``window`` (doubling below ``ssthresh``, one more segment
    a round above it) until one overflows the port (:class:`Rounds`)."""
    rem, w, marked, uncut = float(segments), max(1.0, window), False, senders
    avoiding = False
    for k in range(256):
        b = min(w, rem)
        rem -= b
        # The last round carries the short last segment: the port holds bytes (16 x 8 KB
        # responses, 5.5 frames each, not 6, fit 128 KB).
        f = max(1e-9, b - _short_tail(p)) if rem <= 1e-9 else b
        cap = round_capacity(p, senders, f, first and k == 0)
        if k > 0 and avoiding and marked:  # ACK-clocked after the marks' cut (marking.py)
            cap = avoiding_capacity(p, cap)
        if senders * f > max(cap, bbr.paced_capacity(p, senders, f, delivered, k == 0)):
            # Under dupthresh segments left to send: too few duplicate ACKs, a lost tail.
            # Paced (BBR), a round's drops are spread over it, not at its end (bbr.py).
            paced = bbr.paced_timeout(p, senders, f, delivered) if rem < p.dupthresh else None
            last, tail = rem <= 1e-9, rem < p.dupthresh and paced is None
            args = (first and k == 0, tail, last, -1.0 if paced is None else paced)
            m, probes, lone, resend = overflow(
                p, c, senders, f, *args, rest=rem, room=_repairing(p)
            )
            # Those that lost nothing go on in slow start and can overflow it again (stagger.py).
            spared = lost_nothing(p, senders, f, cap, first and k == 0)
            rest = spared if rem > 1e-9 else 0.0
            if rest > 1e-6:
                r = _burst(p, c, rest, rem, bbr.next_window(p, w, ssthresh), False, ssthresh, b)
                resend = (probes * resend + r.probes * r.resend) / max(probes + r.probes, 1e-12)
                m, probes, lone, spared = m + r.timeouts, probes + r.probes, lone + r.lone, r.spared
            # Classic senders' cut windows can keep the port full through their recovery, and
            # a retransmission lost there waits for the RTO (resent.py).
            m += lost_retransmissions(p, senders, m, spared, f, w, ssthresh)
            grown = at_timeout(w, ssthresh, min(f, cap / senders), b)
            return Rounds(k, m, rem + b / 2, w, probes, lone, grown, spared, resend)
        if rem <= 1e-9:
            return Rounds(None, 0.0, 0.0, w, 0.0, 0.0, w, senders, 0.0)
        avoiding = w >= ssthresh
        w_next = bbr.next_window(p, w, ssthresh)
        if avoiding and marked:  # DCTCP's marks go on cutting past the threshold (marking.py)
            w_next = marked_avoidance(p, senders, w)
        if p.marking is not None and not marked:  # DCTCP's marks cut the next round (marking.py)
            w_next, cut, uncut = marked_round(
                p, senders, f, w, w_next, first and k == 0, uncut, avoiding
            )
            ssthresh, marked = (ssthresh, False) if cut is None else (cut, True)
        w, delivered = w_next, max(delivered, b)
    return Rounds(None, 0.0, 0.0, w, 0.0, 0.0, w, senders, 0.0)


def _repairing(p: Path) -> float:
    """Senders the port's buffer and pipe hold a window each of that repairs a loss by fast
    retransmit: ``dupthresh`` + 1 segments (DCTCP's marking keeps them at 2; BBR's under
    RACK-TLP 2, where the port and the pipe hold that for every sender: bbr_rack.rack_room)."""
    if bbr_rack.rack_room(p):
        return p.held_packets / 2
    return p.held_packets / (1 + (1 if p.marking is not None else p.dupthresh))


def _block(
    p: Path,
    c: Constants,
    window: float,
    ssthresh: float,
    rto: float,
    index: int = 0,
    found: float = math.inf,
) -> tuple[Block, float, float]:
    """The run's block ``index`` (from 0) from ``window``: its account, the window, ssthresh;
    ``found``: the window HyStart ended slow start at, before any loss (model/hystart.py)."""
    n, seg, first_block = p.senders, p.segments, index == 0
    transfer = transfer_time(p, n, seg, window, found)
    ssthresh = min(ssthresh, found)
    delack = 0.0
    if p.delayed_ack > 0 and window < 2 and not (p.quickack and first_block):
        # A lone first segment waits for the delayed-ACK timer. Linux's receiver ACKs at once
        # only at the connection's start: answering each block with a request puts it in
        # ping-pong mode, where the timer (40 ms, at most delack_max) runs, armed on a tick.
        delack = min(p.delayed_ack, p.delack_max) + (p.timer_tick / 2 if p.quickack else 0)
    paced = 0.0 if first_block else bbr.largest_round(window, seg)  # BBR's measured rate
    burst = _burst(p, c, n, seg, window, True, ssthresh, paced)
    loss_round, m0, left, w_loss = burst.loss_round, burst.timeouts, burst.left, burst.window
    probes, lone, w_rto = burst.probes, burst.lone, burst.at_timeout
    spared, resend = burst.spared, burst.resend
    # Under RACK-TLP BBR's senders in recovery with room for fast retransmit time out where
    # a whole round of theirs is lost (bbr.unprobed_recovery); those without room rotate.
    unlucky = 0.0
    if p.loss_blind and p.rack_tlp and loss_round is not None and _repairing(p) >= n:
        m0 += max(0.0, n - spared - m0) * bbr.unprobed_recovery(p, n, min(w_loss, seg))
        # With room for every sender, a whole round lost in recovery recurs over the rounds
        # the rest of the response takes after the one that overflowed (bbr_rack.recovery_timeouts).
        if bbr_rack.rack_room(p):
            after = max(0.0, left - min(w_loss, seg) / 2)
            m0 += max(0.0, n - m0) * bbr_rack.recovery_timeouts(p, after)
            runs = bbr_rack.recovery_runs(p, after)
            unlucky = min(bbr_rack.unluckiest_waits(n, runs), transfer / rto)  # within the transfer
            # unless a chain of them backs off past it (bbr_rack.recovery_tail)
            unlucky = max(unlucky, bbr_rack.recovery_tail(p, transfer / rto, n * runs, c.busy_loss))
    # BBR overflows the port every round (model/window.py) while its windows keep a queue
    # there (bbr.kept_full); RACK finds its lost retransmissions by time (but those above).
    if p.loss_blind and not p.rack_tlp:
        again = repeated_timeouts(n, m0, left, w_loss)
        m0 += (again - m0) * bbr.kept_full(p, n, w_loss)
    # After the loss the rest goes in congestion avoidance: where the buffer is short of the
    # pipe the cut windows leave the link idle until they grow back (window.py).
    sawtooth, ceiling = 0.0, p.held_packets
    if loss_round is not None and p.marking is None and not p.loss_blind:
        sawtooth = sawtooth_time(p, n, seg, window, left, w_loss, ceiling) - transfer
    # DCTCP's first marks cut the windows as a loss would (model/marking.py).
    mark = None if p.marking is None else _burst(threshold_port(p), c, n, seg, window, True)
    w_mark = math.inf
    if mark is not None and mark.loss_round is not None:
        t_mark, w_mark = marked_sawtooth(p, n, seg, window, mark.left, mark.window)
        sawtooth = t_mark - transfer
    sawtooth = max(0.0, sawtooth)
    # After the first loss only as many senders as keep a window of dupthresh + 1 repair losses
    # by fast retransmit; the others take turns waiting for RTOs until their responses are
    # through (not twice, as the overflow's chain and again: rotate.py). DCTCP's marking keeps
    # losses away unless the senders' least windows, 2 each, overflow the port.
    # Classic Reno and CUBIC: no BBR's kept windows, RACK-TLP's timers or DCTCP marks that
    # hold the queue (Path.holds_queue); where they cannot, DCTCP's served senders take turns
    # as Reno's do. Simulator, 39 x 15.2 KB into 31 packets, 908 Mbps, IW 1, RTOmin 63 ms,
    # classic DCTCP: 9-21 single RTOs a block, blocks 97-128 ms; one wave 67 ms, turns 130.
    classic = not (p.loss_blind or p.rack_tlp or p.holds_queue)
    rotating, t_rot = 0.0, 0.0
    if loss_round is not None and (p.marking is None or 2 * n > ceiling) and left > 1:
        rotating = max(0.0, n - max(1.0, _repairing(p)))
    if rotating > 0:  # their estimators settle on the full queue (port.turns_rto)
        rto = turns_rto(p, rto)
    waits, timeouts, covered = (0.0, 0.0, 0.0)
    if m0 > 0:
        stalled = (
            0.0 if first_block else bbr.stalled_spread(p, n, seg, left, window, transfer / rto)
        )
        waits, timeouts, covered = chain(p, c, m0, max(1.0, left), first_block, rto, stalled)
    if rotating > 0:
        turns = fresh_turns(p, rotating, m0, left, rto)
        # Under RACK-TLP only those whose probe or retransmission the full port drops (rotate.py).
        turns = min(turns, probed_turns(p, rotating, left))
        w_rot, t_rot, c_rot = chain(p, c, turns, left, first_block, rto)
        # Classic TCP's served senders reset their backoff: the turns come an RTO apart,
        # those dropped by one back off (model/turns.py).
        if classic:
            cap = retransmit_capacity(p, c.dispersion, 0, first_block)
            w_rot = max(w_rot, turn_waits(p, cap, turns, left))
        if w_rot > waits:
            waits, covered = w_rot, c_rot
        timeouts += t_rot
    stall = waits * rto
    # Senders that timed out send the rest from a window of one after the wait: slow start's
    # rounds, short of the link, beyond the link time the transfer counted for them. Where
    # they wait in one wave (no backoff); in a chain of waves the served senders' slow start
    # runs under the later waves' waits, and they time out again (serial.rejoined).
    if m0 > 0 and rotating <= 0 and waits <= 1.0 and left > 1 and not p.loss_blind:
        # Slow start up to the timeout's ssthresh, the congestion control's cut (carry.py).
        again = restart_time(p, max(1.0, m0), left, max(2.0, p.beta * w_rto), ceiling)
        stall += (1 - math.exp(-m0)) * max(0.0, again - m0 * left * p.packet_time)
    # The senders one wave served go on in slow start after their retransmission, and where
    # they come back fast enough to fill the port, those whose rounds it drops time out again
    # on a fresh timer: a wave an RTO each (model/fresh.py). They come back spread over the
    # first wave: its lossless time less the rest they still had to send. Classic Reno and
    # CUBIC only: with DCTCP's marks, BBR's kept windows and RACK-TLP's timers the random
    # designs scored worse (pooled within 1.5x 86.69% -> 86.19%, the linear-load version).
    if classic and m0 > 0 and waits <= 1.0 + 1e-9 and left > 1:
        once, restart = min(m0, float(n)), max(2.0, p.beta * w_rto)
        rest = once * left * p.packet_time
        spread = max(transfer + sawtooth - rest, slow_start_rounds(seg, window) * p.rtt)

        def retimed(m: float) -> float:  # from the two segments the retransmission's ACK releases
            return _burst(p, c, m, left - 1, 2.0, False, restart).timeouts

        w_fresh, t_fresh = fresh_waves(p, once, left, spread, retimed)
        waits += w_fresh
        timeouts += t_fresh
        stall += w_fresh * rto
    # A sender BBR takes for policed paces at what it delivered over its losses (bbr.py).
    lock = bbr.lock_wait(p, max(waits, 1.0), rto, timeouts) if m0 + rotating > 0 else 0.0
    # The waits that the other senders' transfer hides: whatever the link still had to send
    # when the first timeout began.
    waiting = max(m0, rotating)
    if waiting > 0:
        busy_after = transfer * (1 - min(1.0, waiting / n)) * (left / seg)
        # On a coarse tick the waves wait behind the rest of the senders they served
        # (busy.busy_wave), and the link sends it meanwhile (chain): 271 x 447 KB into
        # 131 frames at 396 Mbps (linux Reno) waits 127 RTOs a block, 100 of them hidden so.
        if p.timer_tick > 0:
            busy_after = max(busy_after, covered * rto)
        # BBR's kept windows repair a loss mid-response by fast retransmit and time out on a
        # lost tail: the wait starts after the transfer, which hides none of it (bbr.lost_tail).
        if p.loss_blind and not p.rack_tlp:
            busy_after *= 1 - bbr.lost_tail(p, n, w_loss)
        stall = max(0.0, stall - busy_after)
    # BBR paces each sender at its share of the link, so what one sender lost to its own
    # RTOs over the response is not made up by the others: the unluckiest ends the block.
    if unlucky > 0:
        stall = max(stall, unlucky * rto)
    if rotating > 0:
        # While they take turns the port stays full: the block ends when the last chain of
        # lost retransmissions, backed off, fires after the link has sent the rest (tail.py).
        # The port is full as often as the senders' least windows, one segment each,
        # exceed its buffer and pipe (always, for senders that keep their window: BBR).
        room = ceiling / n
        loss = c.busy_loss * (1.0 if p.loss_blind else max(0.0, 1.0 - room))
        busy = (transfer + sawtooth) / rto
        # A later block's survivors come back at their drifted RTOs (model/tail.py).
        drift = drift_per_rto(p, c.dispersion, first_block)
        # Under RACK-TLP BBR's turns also lose whole rounds (bbr_rack.recovery_runs).
        runs = t_rot + (n * bbr_rack.recovery_runs(p, left) if p.loss_blind and p.rack_tlp else 0)
        tail = straggler_tail(p, busy, m0, runs, loss, room * n, rotating, left / seg, drift)
        stall = max(stall, tail * rto)
    # The window each sender carries out: the mean over those that timed out and the others.
    if p.loss_blind:  # no loss cuts BBR's window: what it measured does (model/bbr.py)
        recovered = None if loss_round is None else bbr.after_recovery(p, w_loss, left)
        w_next, s_next = bbr.carried(p, window, ssthresh, seg, index + 1, recovered)
    elif loss_round is None and math.isfinite(found):
        w_next, s_next = hystart.grown(window, found, seg), ssthresh
    elif loss_round is None:
        w_next, s_next = grow(window, ssthresh, seg, p.growth), ssthresh
    else:
        # The senders served sit idle through the RTO waits the block adds (stall), and a
        # restart after idle cuts their windows (carry.idle_restart).
        idle = waits if stall > 0 else 0.0
        w_next, s_next = carried_after_loss(p, n, seg, window, ssthresh, burst, idle)
    if first_block and loss_round is None:  # the handshake's RTO under the queue (carry.py)
        w_next, s_next = after_spurious_rtos(p, window, w_next, s_next)
    # Once marked, DCTCP carries its sawtooth's last window, under its share (marking.py).
    if p.marking is not None:
        w_next = min(w_next, carried_cap(p, mark, ssthresh, loss_round is not None, w_mark))
    # Probe timers are waited together, a lone last segment's nearly an RTO (probe.py).
    probe = probe_wait(p, probes, lone, carried=not first_block, resend=resend)
    block = Block(
        window=window,
        transfer_s=transfer,
        loss_round=loss_round,
        timeouts=timeouts,
        waits=waits,
        stall_s=stall + probe,
        delack_s=delack,
        sawtooth_s=sawtooth,
        lock_s=lock,
    )
    return block, w_next, s_next


def predict(p: Path, c: Constants) -> BurstPrediction:
    """The model's goodput for one point: block after block from the initial window, each
    starting from the window the last one left (or the initial window again when responses
    restart from it), averaged over ``p.blocks``."""
    rto = rto_seconds(p)
    blocks: list[Block] = []
    window, ssthresh = float(p.initial_window), math.inf
    found, lost = math.inf, False  # HyStart's exit window (model/hystart.py); a loss since
    for i in range(max(1, p.blocks)):
        if not lost and math.isinf(found) and window < ssthresh:
            found = hystart.exit_window(p, p.senders, window, p.segments)
        rto_i = rto_seconds(p, first=i == 0)
        b, window, ssthresh = _block(p, c, window, ssthresh, rto_i, i, math.inf if lost else found)
        blocks.append(b)
        lost = lost or b.loss_round is not None
        if p.restart == "block":  # Linux's tcp_cwnd_restart keeps 3/4 of the window
            ssthresh = max(ssthresh, 0.75 * window)
            window = float(p.initial_window)
        if math.isfinite(found):  # slow start stops at ssthresh from now on
            found = ssthresh
    k = len(blocks)
    block = sum(b.time_s for b in blocks) / k
    # Spurious RTOs fill the link with duplicates: the block takes their link time.
    spurious = max(0.0, spurious_loop(p, c) - block)
    block += spurious
    data = p.senders * p.sru * 8
    # The block without RTO waits (the regimes' yardstick): the sawtooth is no stall.
    ideal = sum(b.transfer_s + b.sawtooth_s for b in blocks) / k
    goodput = data / block
    ideal_bps = data / ideal
    to = sum(b.timeouts for b in blocks) / k
    waits = sum(b.waits for b in blocks) / k
    link = p.senders * p.segments * p.packet_time
    terms = {
        "transfer": link,
        "slow start": max(0.0, sum(b.transfer_s for b in blocks) / k - link),
        "RTO waits": sum(b.stall_s for b in blocks) / k,
        "delayed ACK": sum(b.delack_s for b in blocks) / k,
        "window sawtooth": sum(b.sawtooth_s for b in blocks) / k,
        "spurious RTOs": spurious,
        "BBR lock": sum(b.lock_s for b in blocks) / k,
    }
    dominant = max(terms, key=lambda t: terms[t])
    if goodput < ideal_bps / 2:
        regime = "collapse"
    elif to >= 0.05:
        regime = "timeouts"
    else:
        regime = "ideal"
    return BurstPrediction(
        senders=p.senders,
        regime=regime,
        goodput_bps=goodput,
        ideal_bps=ideal_bps,
        block_time_s=block,
        timeouts_per_block=to,
        rto_waits_per_block=waits,
        rto_s=rto,
        terms=terms,
        dominant=dominant,
        first=blocks[0],
        steady=blocks[-1],
    )
