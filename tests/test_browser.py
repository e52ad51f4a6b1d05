"""A real browser looks at what incastlab shows people: headless Chromium renders the HTML of
`incast report` and the documentation site (built into site/ by scripts/docs), served over
loopback HTTP. Each page's screenshot must not be blank, and every <img> on it must have
loaded (naturalWidth > 0, read by a script in the page, not guessed from the files).

Skipped, with the reason, where no Chromium is installed (Debian: `apt-get install
chromium`) or the site is not built; with INCAST_REQUIRE_BROWSER=1 (as scripts/test sets in
CI) those are failures instead.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import numpy as np
import pytest

from incastlab.cli import main as incast

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "site"
REQUIRED = os.environ.get("INCAST_REQUIRE_BROWSER") == "1"


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    why = (
        "no Chromium: the browser checks of the HTML report and the docs "
        "(Debian: apt-get install chromium; ./scripts/test --install-system-deps)"
    )
    if REQUIRED:
        pytest.fail(f"INCAST_REQUIRE_BROWSER=1 but {why}")
    pytest.skip(why)


#: Loads a page of the same origin in a tall frame (so nothing is below the fold), and once
#: it has loaded (images included: they delay the load event) writes what the page's own
#: <img> elements say into <pre id="result">, which --dump-dom prints.
HARNESS = """<!doctype html><html><body>
<iframe id="f" src="{page}" style="width:1280px;height:30000px;border:0"></iframe>
<script>
const f = document.getElementById("f");
f.addEventListener("load", () => {{
  const d = f.contentDocument;
  const images = Array.from(d.images).map(i => ({{
    src: (i.currentSrc || i.src).slice(0, 120), complete: i.complete,
    width: i.naturalWidth, height: i.naturalHeight}}));
  const out = document.createElement("pre");
  out.id = "result";
  out.textContent = JSON.stringify({{title: d.title, text: d.body.innerText.length, images}});
  document.body.appendChild(out);
}});
</script></body></html>"""


class Handler(SimpleHTTPRequestHandler):
    def do_GET(self) -> None:
        url = urlparse(self.path)
        if url.path != "/__images__":
            super().do_GET()
            return
        page = html.escape(parse_qs(url.query)["page"][0], quote=True)
        body = HARNESS.format(page=page).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def served(root: Path) -> Iterator[str]:
    """``root`` over HTTP on a loopback port: the base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Handler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def browse(tmp: Path, *args: str) -> str:
    profile = tmp / "chromium-profile"
    r = subprocess.run(
        [
            chromium(),
            "--headless",
            "--no-sandbox",  # as root (CI), Chromium refuses to start without it
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--hide-scrollbars",
            "--no-first-run",
            f"--user-data-dir={profile}",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout


def images_on(tmp: Path, base: str, page: str) -> dict[str, Any]:
    dom = browse(tmp, "--virtual-time-budget=10000", "--dump-dom", f"{base}/__images__?page={page}")
    m = re.search(r'<pre id="result">(.*?)</pre>', dom, re.S)
    assert m, f"{page}: the page never finished loading in Chromium"
    result: dict[str, Any] = json.loads(html.unescape(m.group(1)))
    return result


def screenshot_is_not_blank(tmp: Path, url: str) -> None:
    shot = tmp / "shot.png"
    browse(tmp, "--window-size=1280,1000", f"--screenshot={shot}", url)
    import matplotlib.image

    pixels = np.asarray(matplotlib.image.imread(shot))[..., :3]
    gray = pixels.mean(axis=2)
    background = np.median(gray)
    drawn = float(np.mean(np.abs(gray - background) > 0.1))
    assert gray.std() > 0.05, f"{url}: the screenshot is blank (pixel std {gray.std():.4f})"
    assert drawn > 0.01, f"{url}: only {drawn:.2%} of the screenshot differs from its background"


def check_page(tmp: Path, base: str, page: str, min_images: int) -> dict[str, Any]:
    result = images_on(tmp, base, page)
    images = result["images"]
    assert len(images) >= min_images, f"{page}: {len(images)} images, expected ≥ {min_images}"
    broken = [i["src"] for i in images if not i["complete"] or i["width"] == 0]
    assert not broken, f"{page}: images that did not load: {broken}"
    assert result["text"] > 200, f"{page}: almost no text rendered"
    return result


def test_report_renders_with_every_figure(tmp_path: Path) -> None:
    chromium()
    spec = tmp_path / "spec.toml"
    spec.write_text(
        '[sweep]\nname = "browser"\nseeds = 2\n'
        '[topology]\nsenders = [1, 4, 16]\nbuffer = "32KB"\n'
        '[tcp]\nrto_min = ["200ms", "1ms"]\n'
        '[workload]\nsru = "64KB"\nblocks = 5\n'
    )
    sweep_dir, report = tmp_path / "sweep", tmp_path / "www" / "report.html"
    report.parent.mkdir()
    assert incast(["sweep", str(spec), "--out", str(sweep_dir), "-q"]) == 0
    assert incast(["report", str(sweep_dir), "--out", str(report)]) == 0
    with served(report.parent) as base:
        check_page(tmp_path, base, "/report.html", min_images=1)
        screenshot_is_not_blank(tmp_path, f"{base}/report.html")


@pytest.mark.parametrize(
    ("page", "min_images"),
    [
        ("/", 1),  # the home page's figure
        ("/tutorial/", 1),  # the executed notebook's figure
        ("/experiments/ndp-incast-scaling/", 2),
    ],
)
def test_docs_render_with_every_figure(tmp_path: Path, page: str, min_images: int) -> None:
    chromium()
    if not (SITE / "index.html").is_file():
        why = "the documentation site is not built (./scripts/docs builds it into site/)"
        if REQUIRED:
            pytest.fail(f"INCAST_REQUIRE_BROWSER=1 but {why}")
        pytest.skip(why)
    with served(SITE) as base:
        result = check_page(tmp_path, base, page, min_images)
        assert "incastlab" in result["title"]
        if page == "/":
            screenshot_is_not_blank(tmp_path, f"{base}/")
