"""Log-scale axes carry several plain labelled ticks whatever range they span (the report's
block-time CDF once showed a lone "1000")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pytest

from incastlab.cli import main
from incastlab.plot import sweep as sweep_plot
from incastlab.plot.report import write_report
from incastlab.plot.ticks import ReadableLogLocator, labelled, log_axis

SPEC = """
[sweep]
name = "cdf"
seeds = 2
[topology]
senders = [4, 16]
buffer = "32KB"
[tcp]
rto_min = "200ms"
[workload]
sru = "64KB"
blocks = 5
"""


def in_view(lo: float, hi: float, base: float = 10) -> list[float]:
    return [
        float(t) for t in ReadableLogLocator(base).tick_values(lo, hi) if lo <= t <= hi * 1.000001
    ]


@pytest.mark.parametrize(
    ("lo", "hi", "expected"),
    [
        # Inside one decade: 1-1.5-2-3-5-7 steps, not a lone 1000.
        (300, 1500, [300, 500, 700, 1000, 1500]),
        (2, 50, [2, 5, 10, 20, 50]),  # 1-2-5 when that gives three
        (1, 1000, [1, 10, 100, 1000]),  # decades when they do
        (204, 207, [204, 205, 206, 207]),  # round linear steps over a sliver
    ],
)
def test_the_locator_labels_at_least_three_ticks_in_any_range(
    lo: float, hi: float, expected: list[float]
) -> None:
    assert in_view(lo, hi) == pytest.approx(expected)


def test_base_two_axes_label_powers_of_two_and_their_halves() -> None:
    assert in_view(1, 64, base=2) == [1, 2, 4, 8, 16, 32, 64]
    assert in_view(3, 7, base=2) == [3, 4, 6]


def test_a_log_axis_shows_plain_labels_and_no_minor_labels() -> None:
    fig, ax = plt.subplots()
    ax.plot([400, 1400], [0, 1])
    ax.set_xscale("log")
    log_axis(ax.xaxis)
    ax.set_xlim(400, 1400)
    fig.canvas.draw()
    assert labelled(ax.xaxis) == ["500", "700", "1000"]
    assert not [t.get_text() for t in ax.xaxis.get_minorticklabels() if t.get_text()]
    plt.close(fig)


def test_the_reports_block_time_cdf_has_at_least_three_labelled_ticks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC)
    out = tmp_path / "sweep"
    assert main(["sweep", str(spec), "--out", str(out), "-q"]) == 0
    drawn: list[Any] = []
    save = sweep_plot.save_figure

    def keep(fig: Any, path: str | Path) -> Path:
        fig.canvas.draw()
        for ax in fig.axes:
            if ax.get_xlabel().startswith("block completion time"):
                drawn.append((ax.get_xscale(), labelled(ax.xaxis)))
        return save(fig, path)

    monkeypatch.setattr(sweep_plot, "save_figure", keep)
    write_report(out, tmp_path / "report.html")
    assert drawn, "the report drew no block-time CDF"
    for scale, labels in drawn:
        assert scale == "log"
        assert len(labels) >= 3, labels
        assert len(set(labels)) == len(labels)
        assert all(float(t) > 0 for t in labels)
