"""What `incast` costs before and after the simulation: one command's parser, no rich or
process pool for a `--json` run of one point, and `--json` text written by the C encoder that
parses to what `json.dumps` gives."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from typing import Any

import pytest

from incastlab.cli import COMMANDS, build_parser
from incastlab.cli.json_text import dumps


def test_the_command_table_names_every_parser_in_order() -> None:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert list(sub.choices) == list(COMMANDS)  # type: ignore[arg-type]
    only = next(a for a in build_parser("sim")._actions if a.dest == "command")
    assert list(only.choices) == ["sim"]  # type: ignore[arg-type]


def test_a_json_run_of_one_point_imports_neither_rich_nor_a_process_pool() -> None:
    code = (
        "import contextlib, io, json, sys\n"
        "from incastlab.cli import main\n"
        "buf = io.StringIO()\n"
        "with contextlib.redirect_stdout(buf):\n"
        "    assert main(['sim', '--senders', '4', '--blocks', '2', '--json']) == 0\n"
        "assert json.loads(buf.getvalue())[0]['senders'] == 4\n"
        "heavy = {'rich', 'multiprocessing', 'concurrent.futures', 'numpy', 'pandas',\n"
        "         'pyarrow', 'matplotlib'}\n"
        "print(sorted(heavy & set(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]", out


@pytest.mark.parametrize(
    "value",
    [
        [],
        {},
        'é\n"',
        None,
        [1, 2.5, True, None, "x"],
        {"a": {"b": {}}, "c": [[1, [2]], {"d": []}]},
        {1: 2, None: 3, 2.5: [[]], False: "no"},
        [(1, (2,)), {}],
        {"flows": [{"id": i, "fct": i * 1.5, "rounds": []} for i in range(3)]},
    ],
)
def test_json_text_parses_to_what_json_dumps_gives(value: Any) -> None:
    assert json.loads(dumps(value)) == json.loads(json.dumps(value))


def test_json_text_puts_a_container_of_scalars_on_one_line_and_indents_the_rest() -> None:
    text = dumps([{"n": 1, "flows": [{"id": 0, "fct": 1.5}, {"id": 1, "fct": None}]}])
    assert text.splitlines() == [
        "[",
        " {",
        '  "n": 1,',
        '  "flows": [',
        '   {"id": 0, "fct": 1.5},',
        '   {"id": 1, "fct": null}',
        "  ]",
        " }",
        "]",
    ]
    assert dumps([math.nan]) == "[NaN]"  # as json.dumps: Python reads it back
    with pytest.raises(TypeError, match="set is not JSON serializable"):
        dumps({"a": {1, 2}})
