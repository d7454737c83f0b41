"""A module whose import waits for a file: a helper preloading it is "starting" until then.

``tests/test_parallel.py`` sets ``NOVABENCH_TEST_GATE`` to a path and creates the file when
the helper may finish starting (the wait gives up after a minute).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

_gate = os.environ.get("NOVABENCH_TEST_GATE")
if _gate:
    _deadline = time.monotonic() + 60
    while not Path(_gate).exists() and time.monotonic() < _deadline:
        time.sleep(0.01)
