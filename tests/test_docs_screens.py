"""The documentation's screenshots are generated: scripts/docs_screens.py renders the mitigate
table at 100 columns (SVG) and takes the block-time CDF out of `incast report` (PNG)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_screenshot_script_writes_the_table_and_the_cdf(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("docs_screens", ROOT / "scripts/docs_screens.py")
    assert spec is not None and spec.loader is not None
    screens = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(screens)
    assert screens.main(["--out", str(tmp_path)]) == 0
    svg = (tmp_path / "mitigate-table.svg").read_text(encoding="utf-8")
    assert svg.startswith("<svg")
    text = re.sub(r"&#160;|&nbsp;", " ", svg)
    for word in ("mitigation", "baseline", "pfc", "tcp"):
        assert word in text, word
    png = (tmp_path / "report-block-cdf.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
    # The pictures the docs show are the ones this script makes.
    for name in ("mitigate-table.svg", "report-block-cdf.png"):
        assert (ROOT / "docs" / "img" / name).exists(), name
    # The table the docs show is what incast mitigate prints now (the simulator and the SVG
    # export are deterministic): after changing the table, run scripts/docs_screens.py.
    assert (ROOT / "docs/img/mitigate-table.svg").read_text(encoding="utf-8") == svg
    assert "img/mitigate-table.svg" in (ROOT / "docs/mitigate.md").read_text()
    assert "img/report-block-cdf.png" in (ROOT / "docs/sweeps.md").read_text()
