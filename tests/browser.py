"""Headless Chromium for tests that look at rendered HTML."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which(
    "google-chrome")

needs_chromium = pytest.mark.skipif(CHROMIUM is None,
                                    reason="headless Chromium is not installed (apt-get install "
                                           "chromium)")

_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
          "--disable-dev-shm-usage", "--virtual-time-budget=2000"]


def screenshot(page: Path, png: Path, size: str = "1280,1600") -> Path:
    subprocess.run([CHROMIUM, *_FLAGS, f"--window-size={size}", f"--screenshot={png}",
                    page.as_uri()], check=True, capture_output=True, timeout=60)
    return png


def dump_dom(page: Path) -> str:
    done = subprocess.run([CHROMIUM, *_FLAGS, "--dump-dom", page.as_uri()], check=True,
                          capture_output=True, text=True, timeout=60)
    return done.stdout


VISIBILITY_PROBE = """
<script>
window.addEventListener("load", () => {
  const el = document.querySelector(%s);
  const box = el ? el.getBoundingClientRect() : null;
  const style = el ? getComputedStyle(el) : null;
  const visible = !!el && box.width > 0 && box.height > 0 && box.top >= 0
    && box.bottom <= window.innerHeight && style.visibility === "visible"
    && style.display !== "none" && parseFloat(style.opacity) > 0.5
    && style.color !== getComputedStyle(document.body).backgroundColor;
  document.body.setAttribute("data-probe", visible ? "visible:" + el.textContent.trim()
                                                   : "hidden");
});
</script>
"""


def element_visibility(page: Path, selector: str, tmp: Path) -> str:
    """'visible:<text>' when the element is on the first screen and readable, else 'hidden'."""
    probe = tmp / ("probe-" + page.name)
    probe.write_text(page.read_text().replace("</body>",
                                              VISIBILITY_PROBE % repr(selector) + "</body>"))
    dom = dump_dom(probe)
    marker = 'data-probe="'
    start = dom.index(marker) + len(marker)
    return dom[start:dom.index('"', start)]
