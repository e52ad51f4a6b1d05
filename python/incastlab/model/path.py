"""One scenario point in the burst model's terms (:class:`Path`): what every mechanism of
:mod:`incastlab.model.burst` reads, built from a normalized scenario by
:func:`incastlab.backends.model.burst_path`. Its own module so that the mechanisms' modules
and the burst model read one definition; :mod:`incastlab.model.burst` re-exports it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Path:
    """One scenario point in the model's terms (bytes, bits per second, seconds)."""

    senders: int
    sru: int
    buffer: int  # the bottleneck port's drop-tail limit
    link_bps: float
    rtt: float  # base RTT
    rto: float  # the RTO a connection settles on at the base RTT (the simulator's estimator)
    timer_tick: float  # retransmission timer granularity (0: exact)
    mss: int
    frame: int  # bytes one segment takes in the port's buffer (payload + headers)
    wire: int  # bytes one segment takes on the wire (frame + preamble, gap)
    request_wire: int  # bytes one request takes on the wire
    initial_window: int
    restart: str  # tcp.cwnd_restart: "block", "idle" or "never"
    blocks: int
    dupthresh: int = 3
    rack_tlp: bool = False
    delayed_ack: float = 0.0  # seconds; 0 = off
    quickack: bool = False
    delack_max: float = math.inf  # Linux's cap on the delayed-ACK timer (RTOmin less a tick)
    marking: int | None = None  # ECN marking threshold K (bytes) when DCTCP holds the queue
    beta: float = 0.5  # window kept after a loss (Reno 0.5, CUBIC 0.7)
    probe: float = 0.0  # RACK-TLP's probe timeout at the base RTT (the simulator's rule)
    probe_lone: float = 0.0  # the same with one segment out (model/probe.py)
    probe_lone_queued: float = 0.0  # probe_lone after round trips through the full queue
    rto_max: float = math.inf  # the cap on a backed-off RTO (tcp.rto_max), seconds
    host_jitter: float = 0.0  # seconds each packet may wait in its host (topology.host_jitter)
    karn: bool = True  # RTT samples skip retransmitted segments (no timestamp sample: sack_rtt)
    rto_first: float = 0.0  # the RTO a first block starts with: the handshake's sample alone
    rto_queued: float = 0.0  # the RTO after the block's queue built up (rto_seconds)
    rto_settled: float = 0.0  # the RTO of an estimator settled on the full queue (turns_rto)
    loss_blind: bool = False  # loss does not cut the sending rate (BBR; model/window.py)
    growth: float = 1.0  # segments a window grows per round trip in congestion avoidance
    tso: bool = False  # segmentation offload: BBR's paced bursts hold a round (model/bbr.py)
    rto_grain: float = 0.0  # the clock an RTO is whole ticks of, fine or not (model/drift.py)
    hystart: bool = False  # Linux CUBIC's HyStart ends slow start early (model/hystart.py)
    # Seconds Linux's CUBIC (tcp_cubic.c, once a jiffy) holds a cut window; 0: no hold (window.py)
    cubic_hold: float = 0.0

    @property
    def packet_time(self) -> float:  # seconds a segment takes on the link
        return self.wire * 8 / self.link_bps

    @property
    def segments(self) -> int:  # segments of one response
        return max(1, math.ceil(self.sru / self.mss))

    @property
    def buffer_packets(self) -> float:  # the port's limit in frames
        return self.buffer / self.frame

    @property
    def pipe_packets(self) -> float:  # the bandwidth-delay product in segments on the wire
        return self.link_bps * self.rtt / 8 / self.wire

    @property
    def held_packets(self) -> float:  # what the path holds: the port's buffer and the pipe
        return self.buffer_packets + self.pipe_packets

    @property
    def holds_queue(self) -> bool:
        """Whether DCTCP's marks keep the port short of full: not where the senders' least
        windows, 2 each, overflow the buffer and the pipe, where every packet is marked and
        its losses are Reno's (the simulator at 67 x 145 KB into 5.8 KB, 163 Mbps, classic:
        24.7 Mbps under DCTCP, 25.3 under Reno). Limited transmit and the first round's
        emptied senders (recovery.py, stagger.py) are counted for it there as for Reno."""
        return self.marking is not None and 2 * self.senders <= self.held_packets

    @property
    def drain_s(self) -> float:  # seconds the link takes to send the full buffer
        return self.buffer_packets * self.packet_time

    @property
    def request_gap(self) -> float:  # packet times between two answers: a request's wire time
        return self.request_wire / self.wire
