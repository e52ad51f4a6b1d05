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

from incastlab.reproductions import papers

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
    for name, p in sub.choices.items():
        out.append(f"| [`incast {name}`](#incast-{name}) | {summary.get(name, '')} |")
        for sub_name, help_, _ in subcommands(p):
            anchor = f"incast-{name}-{sub_name}"
            out.append(f"| [`incast {name} {sub_name}`](#{anchor}) | {help_} |")
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
        for sub_name, _, sp in subcommands(p):
            out += [f"### `incast {name} {sub_name}` {{#incast-{name}-{sub_name}}}", ""]
            out += ["```text", sp.format_help().rstrip(), "```", ""]
    return "\n".join(out)


def subcommands(p: argparse.ArgumentParser) -> list[tuple[str, str, argparse.ArgumentParser]]:
    """A command group's own subcommands (``incast jobs swim``): name, one-line help, parser."""
    for a in p._actions:
        if isinstance(a, argparse._SubParsersAction):
            helps = {c.dest: c.help or "" for c in a._choices_actions}
            return [(name, helps.get(name, ""), sp) for name, sp in a.choices.items()]
    return []


def first_line(text: str | None, limit: int = 110) -> str:
    """The first sentence of a description, cut to fit a table cell."""
    sentence = " ".join((text or "").split()).split(". ")[0].rstrip(".")
    return sentence if len(sentence) <= limit else sentence[: limit - 1].rstrip() + "…"


def experiment_citation(name: str, meta: dict[str, Any]) -> tuple[str, str]:
    """(short, full) citation of the paper(s) an experiment reproduces, with where in them."""
    where = INTERNAL_NAME.sub("", meta.get("source", "")).strip(" ,;.")
    keys = meta.get("cites") or []
    unknown = [k for k in keys if k not in papers.PAPERS]
    if not keys or unknown:
        raise SystemExit(
            f"docs_pages: experiment {name!r} must cite papers known to "
            f"incastlab.reproductions.papers (cites = [...]); unknown: {unknown or 'none given'}"
        )
    short = "; ".join(papers.PAPERS[k].short for k in keys)
    full = " ".join(papers.citation(k) for k in keys)
    return short, full + (f" {where[0].upper()}{where[1:]}." if where else "")


def experiment_pages() -> Iterator[tuple[str, str | bytes]]:
    """(path, content) of every experiment's page and figures, and their index."""
    from incastlab.reproductions.reproduce import experiments

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
    out += [f"- {paper}" for paper in papers.PAPERS.values()]
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
