"""``python -m incastlab.scenario``: the key reference (Markdown); ``--json``: the editor schema."""

import json
import sys

from incastlab.scenario.schema import json_schema, reference_markdown

if sys.argv[1:] == ["--json"]:
    print(json.dumps(json_schema(), indent=1, ensure_ascii=False))
else:
    print(reference_markdown(), end="")
