"""Edited copies of a scored report and the leaderboard's refusal of them (board tests)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from novabench.cli import main


def edited_copy(source: Path, name: str, edit: Any) -> Path:
    """A copy of a report beside it (its tables resolve, as pinned), edited by ``edit``."""
    report = json.loads(source.read_text(encoding="utf-8"))
    edit(report)
    path = source.parent / name
    path.write_text(json.dumps(report), encoding="utf-8")
    return path


def refusal(path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """The one error line of nova leaderboard refusing ``path`` (exit 2)."""
    capsys.readouterr()
    assert main(["leaderboard", str(path), "--bootstrap", "20", "-q"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    [line] = captured.err.strip().splitlines()
    return line
