"""`incast scenario`: every scenario key, its default, unit and rule, as the reference page
(Markdown) or as a JSON Schema for editors."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

EXAMPLES = """\
examples:
  incast scenario > docs/scenario.md          # the reference page, regenerated
  incast scenario --json > incast.schema.json  # completion and checks in an editor
"""


def add_scenario_parser(sub: Any) -> None:
    s = sub.add_parser(
        "scenario",
        help="print every scenario key: the reference page, or --json for a JSON Schema",
        description="Print every scenario key with its default, unit and rule, as the engine "
        "declares them: the Markdown of the scenario reference, or with --json a JSON Schema "
        "that editors use to complete and check scenario files.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    s.add_argument("--json", action="store_true", help="print the JSON Schema instead")
    s.set_defaults(handler=cmd_scenario)


def cmd_scenario(a: argparse.Namespace, out: Console, err: Console) -> int:
    from incastlab.scenario.schema import json_schema, reference_markdown

    if a.json:
        print(json.dumps(json_schema(), indent=1, ensure_ascii=False))
    else:
        print(reference_markdown(), end="")
    return 0
