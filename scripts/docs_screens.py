"""Generate the documentation's screenshots into docs/img/ (or --out DIR):

- mitigate-table.svg: what `incast mitigate examples/incast-collapse.toml --senders 16`
  prints in a terminal 100 columns wide (rich's own SVG export: no browser needed);
- report-block-cdf.png: the block-time CDF exactly as `incast report` embeds it, for a small
  sweep (senders 4 and 16, RTOmin 200 ms against 1 ms).

Run from the repository's root with incastlab importable:  python scripts/docs_screens.py
Both take a few seconds; the simulator is deterministic, so a rerun gives the same pictures
unless the output they show changed.
"""

from __future__ import annotations

import argparse
import base64
import io
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
WIDTH = 100
MITIGATE = ["mitigate", "examples/incast-collapse.toml", "--senders", "16"]
SWEEP = """
[sweep]
name = "rto-min"
seeds = 2
[topology]
senders = [4, 16]
buffer = "32KB"
[tcp]
rto_min = ["200ms", "1ms"]
[workload]
sru = "64KB"
blocks = 10
"""


def mitigate_table(out: Path) -> Path:
    """The mitigate table in a 100-column terminal, as SVG."""
    from rich.console import Console

    import incastlab.cli as cli

    screen = Console(
        record=True,
        width=WIDTH,
        file=io.StringIO(),
        force_terminal=True,
        color_system="truecolor",
        no_color=False,
        highlight=False,
    )
    errors = Console(stderr=True, highlight=False)

    def consoles() -> tuple[Any, Any]:
        return screen, errors

    real = cli._consoles
    cli._consoles = consoles
    try:
        code = cli.main([str(ROOT / a) if a.startswith("examples/") else a for a in MITIGATE])
    finally:
        cli._consoles = real
    if code != 0:
        raise SystemExit(f"incast {' '.join(MITIGATE)} exited {code}")
    path = out / "mitigate-table.svg"
    path.write_text(screen.export_svg(title="incast " + " ".join(MITIGATE)), encoding="utf-8")
    return path


def report_cdf(out: Path) -> Path:
    """The block-time CDF that `incast report` embeds, taken out of the report's HTML."""
    import incastlab.cli as cli

    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        (t / "spec.toml").write_text(SWEEP)
        quiet = ["-q"]
        if cli.main(["sweep", str(t / "spec.toml"), "--out", str(t / "sweep"), *quiet]) != 0:
            raise SystemExit("the sweep for the report's CDF failed")
        if cli.main(["report", str(t / "sweep"), "--out", str(t / "report.html")]) != 0:
            raise SystemExit("incast report failed")
        html = (t / "report.html").read_text(encoding="utf-8")
    found = re.search(r'<img alt="blocks" src="data:image/png;base64,([^"]+)"', html)
    if found is None:
        raise SystemExit("the report has no block-time CDF")
    path = out / "report-block-cdf.png"
    path.write_bytes(base64.b64decode(found.group(1)))
    return path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=ROOT / "docs" / "img", help="default: docs/img")
    a = p.parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=True)
    for made in (mitigate_table(a.out), report_cdf(a.out)):
        print(f"wrote {made} ({made.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
