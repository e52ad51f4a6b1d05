"""The documentation site's generated pages, written by mkdocs-gen-files during `mkdocs build`
(mkdocs.yml names this script), never by hand:

- ``cli.md``: every ``incast`` command's help, from the argparse parsers themselves;
- ``experiments/``: each reproduced experiment's verdict and figures, from the experiment
  folders the package ships (``incast reproduce`` writes them there with
  ``--update-expected``), with the paper cited by authors, title, venue and year;
- ``references.md``: the papers the pages cite.

Run alone (``python scripts/docs_pages.py OUTDIR``) it writes the same pages into OUTDIR.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import IO, Any

try:
    # The one table of citations, once issue 17's first part lands (experiments then name
    # their papers by key: `cites = ["chen2012"]`).
    from incastlab.studies import papers as _papers
except ImportError:  # until then, the table below
    _papers = None

#: The papers the experiments reproduce: key -> (short name, full citation). Used only while
#: incastlab.studies.papers does not exist; remove it once it does.
FALLBACK_PAPERS: dict[str, tuple[str, str]] = {
    "chen": (
        "Chen et al. 2012",
        "Yanpei Chen, Rean Griffith, David Zats, Randy H. Katz. "
        "“Understanding TCP Incast and Its Implications for Big Data Workloads.” "
        "Technical Report UCB/EECS-2012-40, EECS Department, University of California, "
        "Berkeley, April 2012.",
    ),
    "cmu": (
        "Vasudevan et al. 2009; Phanishayee et al. 2008",
        "Vijay Vasudevan, Amar Phanishayee, Hiral Shah, Elie Krevat, David G. Andersen, "
        "Gregory R. Ganger, Garth A. Gibson, Brian Mueller. “Safe and Effective Fine-grained "
        "TCP Retransmissions for Datacenter Communication.” ACM SIGCOMM 2009. "
        "Amar Phanishayee, Elie Krevat, Vijay Vasudevan, David G. Andersen, Gregory R. Ganger, "
        "Garth A. Gibson, Srinivasan Seshan. “Measurement and Analysis of TCP Throughput "
        "Collapse in Cluster-based Storage Systems.” USENIX FAST 2008. "
        "(The CMU Parallel Data Lab's incast project.)",
    ),
    "hafeez": (
        "Hafeez et al. 2015",
        "Ubaid Ullah Hafeez, Aqsa Kashaf, Qurat-ul-ann Bajwa, Hassan Zaidi, Ihsan Ayyub Qazi, "
        "Zartash Afzal Uzmi, Aisha Mushtaq. “Mitigating Datacenter Incast Congestion Using "
        "RTO Randomization.” IEEE GLOBECOM 2015, doi:10.1109/GLOCOM.2015.7417797.",
    ),
    "ndp": (
        "Handley et al. 2017",
        "Mark Handley, Costin Raiciu, Alexandru Agache, Andrei Voinescu, Andrew W. Moore, "
        "Gianni Antichi, Marcin Wójcik. “Re-architecting Datacenter Networks and Stacks for "
        "Low Latency and High Performance.” ACM SIGCOMM 2017 (NDP; htsim's incast_scaling "
        "example).",
    ),
    "riak": (
        "Fritchie 2012",
        "Scott Lystig Fritchie. “TCP incast: What is it? How can it affect Erlang "
        "applications?” Blog post on Riak at Voxer over gigabit Ethernet, 2012.",
    ),
    "dctcp": (
        "Alizadeh et al. 2010",
        "Mohammad Alizadeh, Albert Greenberg, David A. Maltz, Jitendra Padhye, Parveen Patel, "
        "Balaji Prabhakar, Sudipta Sengupta, Murari Sridharan. “Data Center TCP (DCTCP).” "
        "ACM SIGCOMM 2010.",
    ),
}

#: Which paper an experiment reproduces, by the first word of its folder's name (fallback).
EXPERIMENT_PAPER = {
    "fb2009": "chen",
    "chen": "chen",
    "hadoop": "chen",
    "cmu": "cmu",
    "hafeez": "hafeez",
    "ndp": "ndp",
    "riak": "riak",
}

#: How the project's internal copies of the papers are named: never shown to a reader.
INTERNAL_NAME = re.compile(r"\b\d{3}_[0-9a-f]{16}\.txt\b")

Opener = Callable[..., AbstractContextManager[IO[Any]]]


def cli_reference() -> str:
    """Every command's ``--help``, as argparse prints it at 100 columns."""
    os.environ["COLUMNS"] = "100"
    from incastlab.cli import NESTED, build_parser
    from incastlab.cli import model as model_cli

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    summary = {a.dest: a.help or "" for a in sub._choices_actions}
    nested = {
        ("model", "calibrate"): model_cli.build_calibrate_parser,
        ("model", "rto-random"): model_cli.build_rto_random_parser,
    }
    missing = set(NESTED) - set(nested)
    if missing:
        raise SystemExit(f"docs_pages: no parser known for {sorted(missing)}")

    out = [
        "# Command reference",
        "",
        "Generated from the `incast` command's own parsers when the site is built: what "
        "follows is exactly what `incast COMMAND --help` prints.",
        "",
        "| command | what it does |",
        "|---|---|",
    ]
    for name in sub.choices:
        out.append(f"| [`incast {name}`](#incast-{name}) | {summary.get(name, '')} |")
    for (group, name), _ in nested.items():
        anchor = f"incast-{group}-{name}"
        p = nested[(group, name)]()
        out.append(f"| [`incast {group} {name}`](#{anchor}) | {first_line(p.description)} |")
    out += ["", "## `incast`", "", "```text", parser.format_help().rstrip(), "```", ""]
    for name, p in sub.choices.items():
        out += [f"## `incast {name}` {{#incast-{name}}}", ""]
        out += ["```text", p.format_help().rstrip(), "```", ""]
        for (group, sub_name), build in nested.items():
            if group == name:
                out += [f"### `incast {group} {sub_name}` {{#incast-{group}-{sub_name}}}", ""]
                out += ["```text", build().format_help().rstrip(), "```", ""]
    return "\n".join(out)


def first_line(text: str | None, limit: int = 110) -> str:
    """The first sentence of a description, cut to fit a table cell."""
    sentence = " ".join((text or "").split()).split(". ")[0].rstrip(".")
    return sentence if len(sentence) <= limit else sentence[: limit - 1].rstrip() + "…"


def experiment_citation(name: str, meta: dict[str, Any]) -> tuple[str, str]:
    """(short, full) citation of the paper(s) an experiment reproduces, with where in them."""
    where = INTERNAL_NAME.sub("", meta.get("source", "")).strip(" ,;.")
    if _papers is not None and meta.get("cites"):
        keys = meta["cites"]
        short = "; ".join(_papers.PAPERS[k].short for k in keys)
        full = " ".join(_papers.citation(k) for k in keys)
    else:
        key = EXPERIMENT_PAPER.get(name.split("-")[0])
        if key is None:
            raise SystemExit(f"docs_pages: experiment {name!r}: which paper? (EXPERIMENT_PAPER)")
        short, full = FALLBACK_PAPERS[key]
        # A source that already cites the paper ("Chen, ..., Title (UC Berkeley, 2012): Figure
        # 8") keeps only where in it, after the citation.
        title = full.split("“")[1].split("”")[0].rstrip(".")
        if title in where:
            where = where.split(title, 1)[1].split(": ", 1)[-1].strip(" ,;.")
    return short, full + (f" {where[0].upper()}{where[1:]}." if where else "")


def experiment_pages() -> Iterator[tuple[str, str | bytes]]:
    """(path, content) of every experiment's page and figures, and their index."""
    from incastlab.studies.reproduce import experiments

    index = [
        "# Reproduced experiments",
        "",
        "Each experiment reruns a paper's figure or table with incastlab's simulator and "
        "model and grades it claim by claim against the paper's numbers. The verdicts and "
        "figures below are the ones shipped with this version; `incast reproduce NAME` "
        "reruns one on your machine (`incast reproduce --all` runs them all in a few "
        "minutes on two cores).",
        "",
        "| experiment | paper | verdict |",
        "|---|---|---|",
    ]
    for name, e in experiments().items():
        short, citation = experiment_citation(name, e.meta)
        expected = e.path / "expected"
        verdict_path = expected / "verdict.md"
        if not verdict_path.is_file():
            raise SystemExit(f"docs_pages: experiment {name!r} has no expected/verdict.md")
        verdict = verdict_path.read_text(encoding="utf-8")
        body, headline = rewrite_verdict(verdict, citation)
        page = [
            body.rstrip(),
            "",
            "Rerun it:",
            "",
            "```sh",
            f"incast reproduce {name}",
            "```",
            "",
        ]
        yield f"experiments/{name}/index.md", "\n".join(page)
        for fig in sorted(expected.iterdir()):
            if fig.suffix in (".png", ".svg"):
                yield f"experiments/{name}/{fig.name}", fig.read_bytes()
        index.append(f"| [{e.title}]({name}/index.md) | {short} | {headline} |")
    yield "experiments/index.md", "\n".join(index) + "\n"


def rewrite_verdict(verdict: str, citation: str) -> tuple[str, str]:
    """The verdict with its one-paper source line citing the paper in full; its headline."""
    lines = []
    for line in verdict.splitlines():
        if line.startswith("Source:"):
            line = f"Source: {citation}"
        lines.append(line)
    body = "\n".join(lines)
    m = re.search(r"\*\*Verdict: ([^*]+?)\.?\*\*", body)
    headline = m.group(1) if m else "see the page"
    return body, headline


def references() -> str:
    out = [
        "# References",
        "",
        "The papers incastlab models, simulates and reproduces, and that these pages cite.",
        "",
    ]
    if _papers is not None:
        out += [f"- {paper}" for paper in _papers.PAPERS.values()]
    else:
        out += [f"- **{short}**: {full}" for short, full in FALLBACK_PAPERS.values()]
    return "\n".join(out) + "\n"


def pages() -> Iterator[tuple[str, str | bytes]]:
    yield "cli.md", cli_reference()
    yield from experiment_pages()
    yield "references.md", references()


def write_all(open_: Opener) -> None:
    for path, content in pages():
        if isinstance(content, str):
            leak = INTERNAL_NAME.search(content)
            if leak:
                raise SystemExit(f"docs_pages: {path} names an internal file: {leak.group(0)}")
            with open_(path, "w", encoding="utf-8") as f:
                f.write(content)
        else:
            with open_(path, "wb") as f:
                f.write(content)


def main_standalone() -> None:
    if len(sys.argv) != 2:
        raise SystemExit("usage: python scripts/docs_pages.py OUTDIR")
    root = Path(sys.argv[1])

    def open_in_root(path: str, mode: str, **kw: Any) -> IO[Any]:
        p = root / path
        p.parent.mkdir(parents=True, exist_ok=True)
        return p.open(mode, **kw)

    write_all(open_in_root)


if __name__ == "__main__":
    main_standalone()
elif __name__ == "<run_path>":  # mkdocs-gen-files runs this file during the build
    import mkdocs_gen_files

    write_all(mkdocs_gen_files.open)
