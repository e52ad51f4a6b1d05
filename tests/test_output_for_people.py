"""Output for people: every table's title names the TCP that ran; tables fit 80 and 100
columns with whole header words, leave out (and name) what does not fit, wrap or list their
descriptions, and print everything with ``--wide``."""

from __future__ import annotations

import re
from typing import Any

import pytest
from rich.console import Console

from conftest import run, scenario
from incastlab.cli import _consoles, main
from incastlab.cli.render import print_ranking
from incastlab.cli.render_runs import kv_columns
from incastlab.cli.tables import flat, print_table
from incastlab.plot import scenario_line, transport_label
from incastlab.studies.mitigate import MITIGATIONS, mitigate

SMALL_SIM = ["sim", "--senders", "4", "--sru", "16KB", "--blocks", "2", "--workers", "1"]


def _title(text: str) -> str:
    """The first line of a printed table's title (the transport comes first)."""
    return text.splitlines()[0]


def test_four_tcps_print_four_headers_naming_transport_profile_and_cc(
    capsys: pytest.CaptureFixture[str],
) -> None:
    titles = {}
    for flags in (
        ["--profile", "classic"],
        ["--profile", "linux"],
        ["--profile", "classic", "--cc", "bbr"],
        ["--cc", "bbr"],
    ):
        assert main([*SMALL_SIM, *flags]) == 0
        titles[" ".join(flags)] = _title(capsys.readouterr().out)
    assert len(set(titles.values())) == 4
    assert "tcp (classic profile, reno)" in titles["--profile classic"]
    assert "tcp (linux profile, cubic)" in titles["--profile linux"]
    assert "tcp (classic profile, bbr)" in titles["--profile classic --cc bbr"]
    assert "tcp (linux profile, bbr)" in titles["--cc bbr"], "linux is the default profile"


def test_the_label_comes_from_the_normalized_scenario_and_says_ndp() -> None:
    tcp = scenario(tcp__congestion_control="dctcp", topology__ecn_threshold="30KB").normalized()
    assert transport_label([tcp]) == "tcp (classic profile, dctcp)"
    ndp = scenario(transport="ndp", workload__kind="incast", workload__flow_size="64KB")
    ndp = ndp.normalized()
    assert transport_label([ndp]) == "ndp"
    cubic = scenario(tcp__congestion_control="cubic").normalized()
    assert transport_label([tcp, cubic]) == "tcp (classic profile, dctcp|cubic)"
    # A series that varies the congestion control names the rest only.
    assert transport_label([tcp], omit="congestion_control") == "tcp (classic profile)"
    r = run(topology__senders=2, workload__sru="8KB", workload__blocks=1)
    assert scenario_line(r).startswith("tcp (classic profile, reno) · ")


def _render(width: int, draw: Any) -> list[str]:
    out = Console(width=width, record=True, highlight=False, color_system=None)
    draw(out)
    return out.export_text().splitlines()


def _check_fits(lines: list[str], width: int, heads: list[str]) -> None:
    """No line wider than the console, no cut word, and every column's header words whole
    in the header, or the column named in the line that says what was left out."""
    assert max(len(ln) for ln in lines) <= width
    assert not any("…" in ln for ln in lines)
    rule = next(i for i, ln in enumerate(lines) if ln.startswith("──"))
    header_words = set(" ".join(lines[:rule]).split())
    left_out = next((ln for ln in lines if ln.startswith("left out at")), "")
    # The note may wrap: join it with the line after.
    if left_out:
        at = lines.index(left_out)
        left_out = " ".join(lines[at : at + 2])
    for h in heads:
        words = h.split()
        assert set(words) <= header_words or flat(h) in left_out, h


@pytest.fixture(scope="module")
def kv_runs() -> list[Any]:
    """A leaf-spine cluster with puts: the kv table's every optional column (fabric drops,
    put latency) appears."""
    return [
        run(
            topology__kind="leaf_spine",
            topology__senders=n,
            topology__hosts_per_leaf=4,
            workload__kind="kv_gets",
            workload__kv_duration="150ms",
            workload__kv_put_fraction=0.3,
        )
        for n in (4, 8)
    ]


@pytest.mark.parametrize("width", [80, 100])
def test_the_kv_table_with_puts_fits_with_whole_header_words(
    kv_runs: list[Any], width: int
) -> None:
    cols = kv_columns(kv_runs, [0.1, 0.2])
    heads = [c.head for c in cols]
    assert "put\np99\nms" in heads and "drops/s\nfabric" in heads
    lines = _render(width, lambda out: print_table(out, "kv", cols))
    _check_fits(lines, width, heads)
    # What matters for the store is always there: drops per host, the p99 get, timeouts.
    header = " ".join(lines[: next(i for i, ln in enumerate(lines) if ln.startswith("──"))])
    assert "per host" in header and "outs/s" in header and "p99" in header
    note = [ln for ln in lines if ln.startswith("left out at")]
    assert note and "--wide" in " ".join(lines[lines.index(note[0]) :])


def test_wide_prints_every_kv_column_on_one_line_per_row(kv_runs: list[Any]) -> None:
    cols = kv_columns(kv_runs, [0.1, 0.2])
    lines = _render(100, lambda out: print_table(out, "kv", cols, wide=True))
    assert max(len(ln) for ln in lines) > 100
    assert not any(ln.startswith("left out") for ln in lines)
    header = " ".join(lines[:4])
    for c in cols:
        assert set(c.head.split()) <= set(header.split()), c.head
    assert len(lines) == 1 + 3 + 1 + 2  # title, three header lines, rule, two rows


@pytest.fixture(scope="module")
def ranking() -> Any:
    points = [
        scenario(topology__senders=n, workload__sru="16KB", workload__blocks=3) for n in (4, 8)
    ]
    return mitigate(points, workers=1)


@pytest.mark.parametrize("width", [80, 100])
def test_the_mitigate_table_fits_and_never_cuts_a_description(ranking: Any, width: int) -> None:
    lines = _render(width, lambda out: print_ranking(out, out, ranking))
    heads = ["#", "mitigation", "N=4", "N=8", "mean", "vs\nbase", "RTOs/\nblock"]
    _check_fits(lines, width, heads)
    words = " ".join(lines).split()
    for m in MITIGATIONS:
        # Every description whole: its words in order (wrapped or listed below the table).
        seq = m.what.split()
        at = [i for i, w in enumerate(words) if w == seq[0]]
        assert any(words[i : i + len(seq)] == seq for i in at) or _wrapped(lines, m.what), m.name
    assert "tcp (classic profile, reno)" in " ".join(lines[:3])


def _wrapped(lines: list[str], what: str) -> bool:
    """``what`` found in the description column, whose lines follow each other."""
    column = " ".join(ln[ln.rfind("  ") + 2 :].strip() for ln in lines if ln.strip())
    return " ".join(what.split()) in re.sub(r"\s+", " ", column)


def test_mitigate_wide_gives_each_description_in_full_on_its_row(ranking: Any) -> None:
    lines = _render(100, lambda out: print_ranking(out, out, ranking, wide=True))
    for o in ranking.ranked:
        row = next(ln for ln in lines if f" {o.mitigation.name} " in ln)
        assert row.rstrip().endswith(o.mitigation.what)


def test_at_80_columns_the_descriptions_move_below_the_table(ranking: Any) -> None:
    lines = _render(80, lambda out: print_ranking(out, out, ranking))
    at = lines.index("what:")
    listed = lines[at + 1 :]
    for o in ranking.ranked:
        assert any(
            ln.startswith(o.mitigation.name + " ") and ln.rstrip().endswith(o.mitigation.what)
            for ln in listed
        )


def test_output_that_is_not_a_terminal_is_100_columns(capsys: pytest.CaptureFixture[str]) -> None:
    out, _ = _consoles()
    assert out.width == 100


def test_every_table_command_takes_wide(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("sim", "emulate", "mitigate", "compare", "sweep", "results"):
        assert main([command, "--help"]) == 0
        assert "--wide" in capsys.readouterr().out, command
