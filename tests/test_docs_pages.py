"""The documentation's generated pages (scripts/docs_pages.py): every command and every
experiment is there, and no page names the project's internal copies of the papers."""

from __future__ import annotations

import argparse
import json
import re
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
