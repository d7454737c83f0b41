"""The system Chromium the browser tests drive (Playwright's own download is not reachable)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest


def find_chromium() -> str | None:
    """``$CHROMIUM``, the Debian paths, then ``PATH``; None when there is none."""
    for candidate in (os.environ.get("CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser"):
        if candidate and Path(candidate).is_file():
            return candidate
    return shutil.which("chromium") or shutil.which("chromium-browser")


CHROMIUM = find_chromium()
NEEDS_CHROMIUM = pytest.mark.skipif(
    CHROMIUM is None, reason="no Chromium binary (install the system chromium package)"
)
#: Headless, no sandbox (containers), nothing fetched in the background.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
