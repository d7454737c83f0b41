"""Edited copies of a scored report and the leaderboard's refusal of them (board tests)."""

from __future__ import annotations

import hashlib
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


def manifest_of_cut_run(source_run: Path, cut: Path) -> None:
    """The run's manifest beside ``cut`` (some of its lines), its counts those of ``cut``:
    what the runner records of a run that answered only those lines (a copied manifest
    whose counts describe the whole run is refused as another file's)."""
    manifest = json.loads(Path(f"{source_run}.manifest.json").read_text(encoding="utf-8"))
    answered: dict[str, int] = {}
    for line in cut.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if "error" not in record:
            answered[record["task"]] = answered.get(record["task"], 0) + 1
    for task, counts in manifest["counts"].items():
        counts.update(done_before=0, answered=answered.get(task, 0), errors=0)
    data = cut.read_bytes()
    manifest["file"] = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
    Path(f"{cut}.manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


def diagnosis_only_report(name: str, top1: float, toolkit: dict[str, Any] | None) -> dict[str, Any]:
    """The least report a leaderboard ranks: one model's diagnosis top1, made by ``toolkit``
    (None: a report from before reports recorded their toolkit)."""
    report: dict[str, Any] = {
        "data": {"fingerprint": "f"},
        "predictions": {"manifests": [{"model": name}]},
        "tasks": {
            "diagnosis": {
                "metrics": {"top1": top1, "match_rule": "case-judge"},
                "confidence_intervals": {},
            }
        },
    }
    return report if toolkit is None else {**report, "toolkit": toolkit}
