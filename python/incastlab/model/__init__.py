"""The analytical incast model: closed forms from the papers, no simulation inside.

Chen et al., "Understanding TCP incast and its implications for big data workloads":
Eq. 1 (goodput before the onset), Eq. 2 (after it: one RTO per block), Eq. 4 (partial RTOs,
factor ``a``), Table 1 (bytes per slow-start round), Eq. 3 (the onset from the port buffer),
Eq. 5 (incast overhead of a job) and its Amdahl form. Hafeez et al., "Mitigating datacenter
incast congestion using RTO randomization": Eq. 4 (P(X > k)), Eq. 6 (E[X]), Eq. 7 (Var(X)),
Eq. 8 (the TDA interval) and the MAA interval f(N, σ).

Units follow the rest of incastlab: sizes in bytes, rates in bits per second, times in
seconds here (these are answers for people, not event times). Every function validates its
inputs and raises :class:`ModelError` (a :class:`ValueError`) naming the argument.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

FloatArray = NDArray[np.float64]


class ModelError(ValueError):
    """An input the model cannot answer for: names the argument and what is allowed."""


def _positive(name: str, value: float) -> float:
    if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
        raise ModelError(f"{name}: must be a positive number, got {value!r}")
    return float(value)


def _non_negative(name: str, value: float) -> float:
    if not (isinstance(value, int | float) and math.isfinite(value) and value >= 0):
        raise ModelError(f"{name}: must be zero or positive, got {value!r}")
    return float(value)


def _senders(n: ArrayLike) -> NDArray[np.int64]:
    arr = np.asarray(n)
    if arr.size == 0 or not np.issubdtype(arr.dtype, np.integer) or np.any(arr < 1):
        raise ModelError(f"senders: must be whole numbers of at least 1, got {n!r}")
    return arr.astype(np.int64)


# ---------------------------------------------------------------- flow-rate model (Chen)


def transfer_time(n: ArrayLike, sru: float, link_bps: float) -> FloatArray:
    """Ideal send time of one block: N·SRU·8 / C, seconds."""
    ns = _senders(n).astype(np.float64)
    out: FloatArray = ns * (_positive("sru", sru) * 8 / _positive("link_bps", link_bps))
    return out


def ideal_goodput(n: ArrayLike, sru: float, link_bps: float, rtt: float) -> FloatArray:
    """Chen Eq. 1, before the onset: N·SRU·8 / (RTT + N·SRU·8/C), bits per second."""
    send = transfer_time(n, sru, link_bps)
    return _senders(n) * sru * 8 / (_non_negative("rtt", rtt) + send)


def rto_goodput(
    n: ArrayLike, sru: float, link_bps: float, rtt: float, rto: float, a: float = 1.0
) -> FloatArray:
    """Chen Eq. 2 (``a = 1``) and Eq. 4 (partial RTO, ``0 < a``): one RTO per block,
    N·SRU·8 / (RTT + a·RTO + N·SRU·8/C), bits per second."""
    send = transfer_time(n, sru, link_bps)
    stall = _positive("a", a) * _non_negative("rto", rto)
    return _senders(n) * sru * 8 / (_non_negative("rtt", rtt) + stall + send)


# ---------------------------------------------------------------- slow start and the buffer


def slow_start_rounds(sru: int, mss: int = 1448, initial_window: int = 1) -> list[int]:
    """Chen Table 1: bytes sent in each slow-start round of one response, the first round
    ``initial_window`` segments, doubling each round (no loss)."""
    if not isinstance(sru, int) or sru <= 0:
        raise ModelError(f"sru: must be a positive whole number of bytes, got {sru!r}")
    if not isinstance(mss, int) or mss <= 0:
        raise ModelError(f"mss: must be a positive whole number of bytes, got {mss!r}")
    if not isinstance(initial_window, int) or initial_window <= 0:
        raise ModelError(f"initial_window: must be at least one segment, got {initial_window!r}")
    rounds: list[int] = []
    sent, window = 0, initial_window * mss
    while sent < sru:
        rounds.append(min(window, sru - sent))
        sent += rounds[-1]
        window *= 2
    return rounds


def largest_round(sru: int, mss: int = 1448, initial_window: int = 1) -> int:
    """The biggest burst one response puts in flight during slow start, bytes."""
    return max(slow_start_rounds(sru, mss, initial_window))


#: Chen's extra buffering beyond the switch port ("packets in flight, buffer at the sender
#: machines"): the article's onsets 13, 7, 4 (and 2 for 128 KB) for 16, 32, 64 (128) KB SRUs and
#: a 64 KiB port need it between 4.8 and 10.7 KB; this is the middle of that range.
CHEN_EXTRA_BUFFER = 8_000


def collapse_onset(
    sru: int,
    buffer: int,
    *,
    mss: int = 1448,
    initial_window: int = 1,
    extra_buffer: int = CHEN_EXTRA_BUFFER,
) -> int:
    """Chen Eq. 3: the smallest sender count whose synchronized largest slow-start rounds
    overflow the port, ⌈(buffer + extra) / W_max⌉, at least 2 (one sender is not incast)."""
    if not isinstance(buffer, int) or buffer <= 0:
        raise ModelError(f"buffer: must be a positive whole number of bytes, got {buffer!r}")
    if not isinstance(extra_buffer, int) or extra_buffer < 0:
        raise ModelError(f"extra_buffer: must be zero or more bytes, got {extra_buffer!r}")
    w = largest_round(sru, mss, initial_window)
    return max(2, math.ceil((buffer + extra_buffer) / w))


@dataclass(frozen=True)
class Prediction:
    """The model's answer for one sender count."""

    senders: int
    regime: str  # "ideal" before the onset, "rto" after it
    goodput_bps: float
    block_time_s: float
    timeouts_per_block: float


def predict(
    senders: Sequence[int],
    *,
    sru: int,
    buffer: int,
    link_bps: float,
    rtt: float,
    rto: float,
    mss: int = 1448,
    initial_window: int = 1,
    extra_buffer: int = CHEN_EXTRA_BUFFER,
    a: float = 1.0,
    a_doubles_at: int | None = None,
) -> list[Prediction]:
    """Goodput against N: Eq. 1 below the onset (Eq. 3), Eq. 2/4 from it on. From
    ``a_doubles_at`` senders on, two partial RTOs hit each block (Chen: a goes from 0.6 to 1.0
    for 1 MB SRUs, from 0.8 to 1.5 for 512 KB), modelled as 2a."""
    if a_doubles_at is not None and (not isinstance(a_doubles_at, int) or a_doubles_at < 1):
        raise ModelError(
            f"a_doubles_at: must be a sender count of at least 1, got {a_doubles_at!r}"
        )
    onset = collapse_onset(
        sru, buffer, mss=mss, initial_window=initial_window, extra_buffer=extra_buffer
    )
    ns = _senders(list(senders))
    ideal = ideal_goodput(ns, sru, link_bps, rtt)
    bound = rto_goodput(ns, sru, link_bps, rtt, rto, a)
    doubled = rto_goodput(ns, sru, link_bps, rtt, rto, 2 * a)
    out = []
    for i, n in enumerate(ns.tolist()):
        after = n >= onset
        twice = after and a_doubles_at is not None and n >= a_doubles_at
        g = float(doubled[i] if twice else bound[i] if after else ideal[i])
        out.append(
            Prediction(
                senders=n,
                regime="rto" if after else "ideal",
                goodput_bps=g,
                block_time_s=n * sru * 8 / g,
                timeouts_per_block=(2 * a if twice else a) if after else 0.0,
            )
        )
    return out


def burst_buffer(
    n: ArrayLike, initial_window: int, frame_bytes: int, link_bps: float, rtt: float
) -> FloatArray:
    """Port buffer that absorbs N synchronized initial windows at once, bytes: everything
    beyond what the link drains while one RTT's worth is in flight (N·IW·frame − C·RTT/8)."""
    if not isinstance(initial_window, int) or initial_window <= 0:
        raise ModelError(f"initial_window: must be at least one segment, got {initial_window!r}")
    burst = _senders(n) * initial_window * _positive("frame_bytes", frame_bytes)
    pipe = _positive("link_bps", link_bps) * _non_negative("rtt", rtt) / 8
    out: FloatArray = np.maximum(burst - pipe, 0.0).astype(np.float64)
    return out


def dctcp_marking_threshold(link_bps: float, rtt: float) -> float:
    """DCTCP's guidance K > C·RTT/7 (Alizadeh et al.), bytes."""
    return _positive("link_bps", link_bps) * _positive("rtt", rtt) / 8 / 7


def optimal_completion(
    n: ArrayLike, flow_bytes: float, link_bps: float, base_latency: float = 0.0
) -> FloatArray:
    """Best possible completion of N flows of B bytes into one link: N·B·8/C plus the base
    latency, seconds (the NDP paper's yardstick: overhead = FCT / optimal − 1)."""
    return transfer_time(n, flow_bytes, link_bps) + _non_negative("base_latency", base_latency)


# ---------------------------------------------------------------- jobs (Chen Eq. 5)


def incast_overhead(job_time_default: float, job_time_small_rto: float) -> float:
    """Chen Eq. 5: (T_default − T_small-RTO) / T_small-RTO."""
    small = _positive("job_time_small_rto", job_time_small_rto)
    return (_positive("job_time_default", job_time_default) - small) / small


def amdahl_overhead(
    network_share: float, goodput_small_rto: float, goodput_default: float
) -> float:
    """Eq. 5 through Amdahl's law: a job spends ``network_share`` of its time (with a small
    RTOmin) moving data at ``goodput_small_rto``; with the default RTOmin that part runs at
    ``goodput_default``. The job's overhead is share·(G_small/G_default − 1)."""
    if not (0 <= network_share <= 1):
        raise ModelError(f"network_share: must be between 0 and 1, got {network_share!r}")
    ratio = _positive("goodput_small_rto", goodput_small_rto) / _positive(
        "goodput_default", goodput_default
    )
    return network_share * (ratio - 1)


# ---------------------------------------------------------------- RTO randomization (Hafeez)


def _interval(rto_min: float, delta: float) -> tuple[float, float]:
    lo = _positive("rto_min", rto_min) - _non_negative("delta", delta) / 2
    if lo < 0:
        raise ModelError(
            f"delta: must be at most 2·rto_min ({2 * rto_min:g}) so RTOs stay positive, "
            f"got {delta:g}"
        )
    return lo, rto_min + delta / 2


def rto_exceeds(k: ArrayLike, n: ArrayLike, rto_min: float, delta: float) -> FloatArray:
    """Hafeez Eq. 4: P(X > k) for X the largest of N RTOs drawn from
    U(RTOmin − Δ/2, RTOmin + Δ/2)."""
    lo, hi = _interval(rto_min, delta)
    ns = _senders(n)
    kk = np.asarray(k, dtype=np.float64)
    if delta == 0:
        return np.where(kk < rto_min, 1.0, 0.0) * np.ones_like(ns, dtype=np.float64)
    frac = np.clip((kk - lo) / (hi - lo), 0.0, 1.0)
    return 1.0 - frac**ns


def expected_max_rto(n: ArrayLike, rto_min: float, delta: float) -> FloatArray:
    """Hafeez Eq. 6: E[X] = RTOmin + Δ(N − 1) / (2(N + 1))."""
    _interval(rto_min, delta)
    ns = _senders(n).astype(np.float64)
    return rto_min + delta * (ns - 1) / (2 * (ns + 1))


def var_max_rto(n: ArrayLike, rto_min: float, delta: float) -> FloatArray:
    """Hafeez Eq. 7: Var(X) = 2Δ²/((N+1)(N+2)) − Δ²/(N+1)²."""
    _interval(rto_min, delta)
    ns = _senders(n).astype(np.float64)
    return 2 * delta**2 / ((ns + 1) * (ns + 2)) - delta**2 / (ns + 1) ** 2


def tda_interval(
    rto_min: float, delta: float, successive: int, omega: float = 2.0
) -> tuple[float, float]:
    """Hafeez Eq. 8 (TDA): after ``successive`` timeouts the RTO is drawn from
    U(RTOmin − ω^s·Δ/2, RTOmin + ω^s·Δ/2); returns that interval (seconds)."""
    if not isinstance(successive, int) or successive < 0:
        raise ModelError(f"successive: must be a whole number of timeouts, got {successive!r}")
    width = _non_negative("delta", delta) * _positive("omega", omega) ** successive
    return _interval(rto_min, width)


def maa_interval(n: int, sigma: float) -> int:
    """Hafeez's MAA interval f(N, σ) = ⌊N / (σ·log N)⌋ (natural log; 0 for N = 1), in the
    unit the caller scales it by."""
    if not isinstance(n, int) or n < 1:
        raise ModelError(f"senders: must be a whole number of at least 1, got {n!r}")
    s = _positive("sigma", sigma)
    if n == 1:
        return 0
    return math.floor(n / (s * math.log(n)))


def rto_random_table(
    senders: Sequence[int], rto_min: float, delta: float
) -> list[dict[str, float | int]]:
    """Per sender count: E[X] (Eq. 6), its standard deviation (Eq. 7) and
    P(X > RTOmin + delta/4) (Eq. 4), for RTOs uniform in RTOmin ± delta/2 (seconds)."""
    ex = expected_max_rto(senders, rto_min, delta)
    var = var_max_rto(senders, rto_min, delta)
    late = rto_exceeds(rto_min + delta / 4, senders, rto_min, delta)
    return [
        {
            "senders": n,
            "expected_max_rto_s": float(e),
            "sd_max_rto_s": float(v) ** 0.5,
            "p_exceeds_rto_min_plus_quarter_delta": float(p),
        }
        for n, e, v, p in zip(senders, ex, var, late, strict=True)
    ]
