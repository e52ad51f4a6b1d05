"""The documentation's generated pages (scripts/docs_pages.py): every command and every
experiment is there, and no page names the project's internal copies of the papers. The
README is a front page: short, its links into the docs resolve, its commands parse, and every
page it leads to is in the site's nav."""

from __future__ import annotations

import argparse
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

from incastlab.cli import NESTED, build_parser
from incastlab.reproductions.reproduce import experiments

ROOT = Path(__file__).resolve().parent.parent
INTERNAL_NAME = re.compile(r"\d{3}_[0-9a-f]{16}\.txt")


def generate(out: Path) -> None:
    r = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "docs_pages.py"), str(out)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr


def test_cli_reference_has_every_command_and_flag(tmp_path: Path) -> None:
    generate(tmp_path)
    cli = (tmp_path / "cli.md").read_text(encoding="utf-8")
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, p in sub.choices.items():
        assert f"## `incast {name}`" in cli
        for action in p._actions:
            for flag in action.option_strings:
                assert flag in cli, f"incast {name} {flag} missing from the reference"
            if isinstance(action, argparse._SubParsersAction):  # a group: incast jobs swim
                for sub_name, sp in action.choices.items():
                    assert f"### `incast {name} {sub_name}`" in cli
                    for flag in (f for a in sp._actions for f in a.option_strings):
                        assert flag in cli, f"incast {name} {sub_name} {flag} missing"
    for group, name in NESTED:
        assert f"### `incast {group} {name}`" in cli


def test_every_experiment_has_a_page_with_its_figures_and_paper(tmp_path: Path) -> None:
    generate(tmp_path)
    index = (tmp_path / "experiments" / "index.md").read_text(encoding="utf-8")
    for name, e in experiments().items():
        assert f"]({name}/index.md)" in index
        page = (tmp_path / "experiments" / name / "index.md").read_text(encoding="utf-8")
        assert page.startswith(f"# {e.title}")
        # The source (one line, or a list of papers) comes before the verdict.
        head = page.split("**Verdict")[0]
        assert re.search(r"Sources?:", head), f"{name}: no source"
        assert re.search(r"[\"“][^\"”]{10,}[\"”].*\b(19|20)\d\d\b", head), (
            f"{name}: no citation with title and year"
        )
        for fig in (e.path / "expected").glob("*.png"):
            assert (tmp_path / "experiments" / name / fig.name).read_bytes() == fig.read_bytes()
            assert f"]({fig.name})" in page


def test_no_page_names_an_internal_file(tmp_path: Path) -> None:
    generate(tmp_path)
    pages = [*tmp_path.rglob("*.md"), *(ROOT / "docs").rglob("*.md")]
    pages += [ROOT / "docs" / "tutorial.ipynb"]
    for page in pages:
        leak = INTERNAL_NAME.search(page.read_text(encoding="utf-8"))
        assert leak is None, f"{page.name} names {leak.group(0)}"


def test_the_tutorial_is_stored_unexecuted() -> None:
    # The docs build executes it, so its outputs are always this version's.
    nb = json.loads((ROOT / "docs" / "tutorial.ipynb").read_text(encoding="utf-8"))
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert code
    assert all(not c["outputs"] and c["execution_count"] is None for c in code)


# --- the README: a front page into the site --------------------------------------------------

README = ROOT / "README.md"
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _commands(text: str) -> list[str]:
    """The `incast` command lines of a page's sh blocks, continuation lines joined."""
    out: list[str] = []
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = shlex.join(shlex.split(line, comments=True))
            if line.startswith("sudo "):
                line = line[len("sudo ") :]
            if line.startswith("incast "):
                out.append(line)
    return out


def test_the_readme_is_a_front_page() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) < 200
    # The two set-up commands, and six commands that show the lab.
    assert "./scripts/demo" in text and "./scripts/test" in text
    assert len(_commands(text)) >= 6
    assert "tcp.profile" in text and "`classic`" in text and "`linux`" in text


def test_the_readme_links_resolve_into_the_docs() -> None:
    text = README.read_text(encoding="utf-8")
    targets = [t for t in LINK.findall(text) if not t.startswith(("http", "#"))]
    assert any(t.startswith("docs/") for t in targets)
    for target in targets:
        path = ROOT / target.split("#")[0]
        assert path.is_file(), f"README links to {target}, which does not exist"


def test_the_documented_commands_parse() -> None:
    # Every `incast` line of the README and the written pages names a command and flags the
    # CLI knows (running them is another matter: they are parsed, not run).
    from incastlab.cli import model as model_cli

    nested = {
        ("model", "calibrate"): model_cli.build_calibrate_parser,
        ("model", "rto-random"): model_cli.build_rto_random_parser,
    }
    pages = [README, *(p for p in (ROOT / "docs").rglob("*.md") if "real" not in p.parts)]
    seen = 0
    for page in pages:
        for line in _commands(page.read_text(encoding="utf-8")):
            args = shlex.split(line)[1:]
            build = nested.get((args[0], args[1])) if len(args) > 1 else None
            if not build and tuple(args[:2]) in NESTED:
                continue  # a nested command this test has no parser for
            parser, rest = (build(), args[2:]) if build else (build_parser(), args)
            try:
                parser.parse_args(rest)
            except SystemExit as e:  # argparse's way of saying no
                raise AssertionError(f"{page.name}: `{line}` does not parse") from e
            seen += 1
    assert seen > 50


def test_every_written_page_is_in_the_site_nav() -> None:
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = config[config.index("\nnav:") : config.index("\nexclude_docs:")]
    listed = set(re.findall(r"^\s*- (?:[^\n]*: )?([\w/.-]+\.(?:md|ipynb))$", nav, re.M))
    # docs/generated/ holds the figures pages include (scripts/docs_figures.py), not pages.
    written = [p for p in (ROOT / "docs").rglob("*.md") if not {"real", "generated"} & set(p.parts)]
    for page in [*written, ROOT / "docs" / "tutorial.ipynb"]:
        rel = page.relative_to(ROOT / "docs").as_posix()
        assert rel in listed, f"docs/{rel} is not in mkdocs.yml's nav"


def _drawn_folders() -> list[str]:
    """The folders docs/architecture.md draws: crates, their src/ folders, the package's."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    tree = text.split("## The rooms", 1)[1].split("```text", 1)[1].split("```", 1)[0]
    out: list[str] = []
    top = parent = ""
    for line in tree.splitlines():
        name = line.strip().split(" ")[0].rstrip(",")
        if not line.strip() or "(?)" in line.split("  ")[0] or not name.endswith("/"):
            continue
        indent = len(line) - len(line.lstrip())
        if indent == 0:
            top = name
            if name in ("crates/", "python/incastlab/"):
                out.append(name)
        elif indent == 2 and top in ("crates/", "python/incastlab/"):
            parent = top + name
            out.append(parent)
        elif indent == 4 and parent:
            out.append(parent + ("src/" if top == "crates/" else "") + name)
    return out


def test_the_architecture_drawing_is_true() -> None:
    drawn = _drawn_folders()
    assert len(drawn) > 15
    missing = [f for f in drawn if not (ROOT / f).is_dir()]
    assert not missing, f"docs/architecture.md draws folders that do not exist: {missing}"
