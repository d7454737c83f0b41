"""Every entry of tests/run/known_limitations.txt names a test that exists, so the
list cannot silently outlive the tests it marks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import known_limitations

ROOT = Path(__file__).resolve().parents[2]


def test_every_listed_limitation_is_a_collected_test() -> None:
    listed = known_limitations()
    files = sorted({node.split("::")[0] for node in listed})
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *files],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert listed and not listed - set(collected)
