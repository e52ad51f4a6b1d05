"""The senders' congestion control, where the capture lets the fit tell: a capture at the
receiver does not show the family (:func:`~incastlab.doctor.replica.assumed_congestion_control`),
but one signature is out of CUBIC's reach. CUBIC halves its window on a loss, so behind even
the smallest port the fit tries its replica resends fewer segments per block than a capture of
BBR, which keeps sending at its estimate of the bottleneck's rate through losses (Cardwell et
al., "BBR: Congestion-Based Congestion Control", ACM Queue, 2016). When the buffer fit ends at
its floor with the capture still resending more, or the best replica misses the capture's
goodput, the fit is run again with BBR, and BBR is kept only if its replica comes clearly
closer to the capture.
"""

from __future__ import annotations

from collections.abc import Callable

from incastlab.doctor.infer import Estimate
from incastlab.doctor.replica import BUFFER_LO, Figures

#: BBR replaces the assumed family only when its replica's distance to the capture is under
#: this share of the assumed family's: the families' completion times differ by less than
#: the noise between random seeds over a few blocks, so a near tie keeps the profile's default.
BBR_BETTER = 0.7


#: A replica of the assumed family whose goodput misses the capture's by more than this factor
#: at its best fit leaves the family in doubt too (the tolerance the replica is held to).
GOODPUT_MISS = 1.25


def assumed_family_misses(
    est: dict[str, Estimate], capture: Figures, replica: Figures
) -> str | None:
    """Why the assumed family's best replica leaves the family in doubt, or None: the buffer
    fit ended at its floor (an "at most" the smallest buffer tried) while the capture resent
    segments, i.e. the family resends too little at any buffer; or the replica's goodput
    misses the capture's by more than :data:`GOODPUT_MISS`."""
    b, cc = est["buffer"], str(est["congestion_control"].value).upper()
    if b.lo is None and int(b.value) <= BUFFER_LO and capture.retx_per_block > 0:
        return (
            f"behind even a {BUFFER_LO:,} B port a {cc} replica resends fewer segments per "
            "block than the capture"
        )
    ratio = max(replica.goodput_bps, 1.0) / max(capture.goodput_bps, 1.0)
    if not 1 / GOODPUT_MISS <= ratio <= GOODPUT_MISS:
        return (
            f"the best {cc} replica's goodput is {ratio:.2f}x the capture's "
            f"({replica.goodput_bps / 1e6:,.1f} against {capture.goodput_bps / 1e6:,.1f} Mbps)"
        )
    return None


def bbr_if_closer(
    est: dict[str, Estimate],
    distance: float,
    doubt: str,
    fit: Callable[[dict[str, Estimate]], float],
) -> dict[str, Estimate]:
    """``est`` refitted with BBR (``fit`` fills RTOmin and the buffer and returns the best
    replica's distance) when that comes under :data:`BBR_BETTER` of ``distance``, the
    assumed family's; else ``est`` with a note on its congestion control that BBR was
    tried. ``doubt`` says why the assumed family was doubted."""
    assumed = est["congestion_control"]
    trial = dict(est)
    trial["congestion_control"] = Estimate("congestion_control", "bbr", None, None, "low", "")
    bbr = fit(trial)
    why = (
        f"{doubt}; a BBR replica (no back-off on loss) came "
        f"{'closer' if bbr < BBR_BETTER * distance else 'no closer'} (distance {bbr:.2f} "
        f"against {distance:.2f})"
    )
    if bbr < BBR_BETTER * distance:
        trial["congestion_control"] = Estimate(
            "congestion_control", "bbr", None, None, "low", f"fitted by simulation: {why}"
        )
        return trial
    est["congestion_control"] = Estimate(
        "congestion_control",
        assumed.value,
        None,
        None,
        assumed.confidence,
        f"{assumed.evidence}; {why}",
    )
    return est
