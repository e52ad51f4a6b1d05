"""`incast mitigate` on an RDMA scenario: the RoCE remedies (congestion control, PFC's
thresholds, the buffer's policy, lossy or lossless), ranked by the last flow's completion."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from incastlab.cli import main

#: A 16:1 incast of 200 KB at 100 Gbps on a star, PFC pausing each 100 KB ingress.
INCAST = [
    "--transport", "roce", "--cc", "none", "--workload", "incast", "--senders", "16",
    "--flow-size", "200KB", "--link", "100Gbps", "--rtt", "4us", "--buffer", "100KB",
]  # fmt: skip


def _json(argv: list[str]) -> list[dict[str, Any]]:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["mitigate", *argv, "--json", "--workers", "1"]) == 0
    rows: list[dict[str, Any]] = json.loads(buf.getvalue())
    return rows


@pytest.fixture(scope="module")
def ranking() -> dict[str, dict[str, Any]]:
    return {r["mitigation"]: r for r in _json(INCAST)}


def test_every_remedy_runs_or_says_why_not(ranking: dict[str, dict[str, Any]]) -> None:
    from incastlab.studies.mitigate_rdma import REMEDIES

    assert set(ranking) == {m.name for m in REMEDIES}
    assert "already runs roce.cc = 'none'" in ranking["cc-none"]["skipped"]
    assert "own buffer" in ranking["per-ingress"]["skipped"]
    assert "already runs it" in ranking["lossless"]["skipped"]


def test_remedies_rank_by_the_last_flow_and_say_what_they_changed(
    ranking: dict[str, dict[str, Any]],
) -> None:
    ran = [r for r in ranking.values() if "skipped" not in r]
    keys = [(r["unfinished_flows"], r["last_completion_s"]) for r in ran]
    assert keys == sorted(keys)
    assert ranking["hpcc"]["changed"] == {"roce.cc": "hpcc", "topology.int": True}
    dcqcn = ranking["dcqcn"]["changed"]
    # DCQCN's marking, Kmin 5 KB and Kmax 200 KB at 40 Gbps, scaled to 100 Gbps.
    assert dcqcn["topology.ecn_kmin"] == "12500B" and dcqcn["topology.ecn_kmax"] == "500000B"
    assert ranking["xoff-low"]["changed"] == {"topology.pfc_xoff": "25000B"}
    lossy = ranking["lossy-irn"]["changed"]
    assert lossy == {
        "roce.lossless": False,
        "topology.pfc": False,
        "roce.recovery": "selective_repeat",
    }
    assert all(r["why"] and r["effect"] for r in ran if r["mitigation"] != "baseline")


def test_hpcc_cuts_the_pauses_of_no_congestion_control(
    ranking: dict[str, dict[str, Any]],
) -> None:
    base, hpcc = ranking["baseline"], ranking["hpcc"]
    assert base["pfc_pauses"] > 10 and base["paused_s"] > 0 and base["drops"] == 0
    assert hpcc["pfc_pauses"] == 0 and hpcc["paused_s"] == 0
    assert "pauses 80 → 0" in hpcc["effect"]
    # Lossless fabrics drop nothing; a lossy one pauses nothing and drops instead.
    assert ranking["lossy-irn"]["pfc_pauses"] == 0 and ranking["lossy-irn"]["drops"] > 0
    # IRN's selective repeat recovers the drops sooner than go-back-N.
    irn, gbn = ranking["lossy-irn"], ranking["lossy-gbn"]
    assert irn["last_completion_s"] < gbn["last_completion_s"]
    assert ranking["shared-1/8"]["points"][0]["scenario"]["topology"]["shared_buffer"] == (
        17 * 100_000
    )


def test_the_table_fits_100_columns_and_names_each_remedys_keys(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["mitigate", *INCAST, "--only", "hpcc,xoff-low", "--workers", "1"]) == 0
    out = capsys.readouterr()
    lines = out.out.splitlines()
    assert max(len(line) for line in lines) <= 100
    assert any(line.startswith("hpcc · HPCC on INT") for line in lines)
    assert 'topology.pfc_xoff = "25000B"' in out.out
    assert "paused" in out.out and "victims" in out.out
    assert "skipped" not in out.err


def test_the_plot_draws_every_remedy_that_ran(tmp_path: Path) -> None:
    """The RDMA chart: one bar per remedy in each of its three panels (last flow, paused
    time, unfinished flows), the baseline among them, written as a PNG of some substance."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from incastlab.plot import mitigations

    figures: list[Any] = []
    save = mitigations.save_figure

    def keep(fig: Any, path: Any) -> Path:
        figures.append(fig)
        return save(fig, path)

    png = tmp_path / "rdma.png"
    argv = ["mitigate", *INCAST, "--only", "hpcc,dcqcn", "--workers", "1", "-q", "--plot", str(png)]
    mp = pytest.MonkeyPatch()
    mp.setattr(mitigations, "save_figure", keep)
    try:
        assert main(argv) == 0
    finally:
        mp.undo()
    data = png.read_bytes()
    assert data.startswith(b"\x89PNG") and len(data) > 20_000, len(data)
    (fig,) = figures
    panels = fig.axes
    assert len(panels) == 3
    labels = [t.get_text() for t in panels[0].get_yticklabels()]
    assert sorted(labels) == ["baseline", "dcqcn", "hpcc"]
    assert all(len(ax.patches) == 3 for ax in panels)
    xlabels = " ".join(ax.get_xlabel() for ax in panels)
    assert "last flow" in xlabels and "paused" in xlabels and "unfinished" in xlabels
    plt.close(fig)


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--only", "dctcp"], "--only: 'dctcp' is not a remedy of an RDMA scenario"),
        (["--set", "topology.pfc_xoff=200KB"], "topology.pfc_xoff: must be between"),
        (["--set", "topology.pfc=false"], "roce.lossless"),
    ],
)
def test_bad_combinations_are_refused_in_one_line(
    extra: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["mitigate", *INCAST, *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and len(err.splitlines()) == 1, err


def test_the_buffer_remedies_follow_the_scenario() -> None:
    from incastlab.studies import mitigate_rdma as m

    shared = {
        "roce": {"lossless": True, "cc": "none", "recovery": "go_back_n", "mtu": 1000},
        "topology": {
            "kind": "star", "senders": 7, "buffer": {"bytes": None, "packets": None},
            "shared_buffer": 800_000, "pfc_xoff": None, "pfc_alpha": 0.125,
        },
    }  # fmt: skip
    with pytest.raises(m.Skip, match="already shares"):
        m.BY_NAME["shared-1/8"].overrides(shared)
    with pytest.raises(m.Skip, match="dynamic threshold"):
        m.BY_NAME["xoff-low"].overrides(shared)
    assert m.BY_NAME["per-ingress"].overrides(shared)["topology.buffer"] == "100000B"
    assert m.BY_NAME["shared-1"].overrides(shared)["topology.pfc_alpha"] == 1.0
    lossy = shared | {"roce": shared["roce"] | {"lossless": False}}
    assert m.BY_NAME["shared-1"].overrides(lossy)["topology.buffer_alpha"] == 1.0
    with pytest.raises(m.Skip, match="lossy"):
        m.BY_NAME["xoff-high"].overrides(lossy)
