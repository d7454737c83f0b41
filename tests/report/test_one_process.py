"""Scoring is one process: ``--jobs`` and ``jobs=`` are refused in one line saying why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from novabench.cli import main
from novabench.data.release import read_release
from novabench.report import evaluate_predictions


@pytest.fixture()
def predictions(sample_release: Path, tmp_path: Path) -> Path:
    """Two cases answered, the first one right, the second wrong."""
    cases = read_release(sample_release).cases()
    lines = [
        {"case_id": cases[0].case_id, "diagnoses": [cases[0].final_diagnosis or "glioma"]},
        {"case_id": cases[1].case_id, "diagnoses": ["pituitary macroadenoma"]},
    ]
    path = tmp_path / "answers.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.mark.parametrize("value", ["2", "auto", "1"])
def test_evaluate_refuses_jobs_in_one_line_and_writes_nothing(
    sample_release: Path, predictions: Path, tmp_path: Path, capsys, value: str
) -> None:
    out = tmp_path / "report.json"
    args = ["evaluate", "--data", str(sample_release), "--predictions", str(predictions)]
    code = main([*args, "--out", str(out), "--bootstrap", "0", "--jobs", value])
    err = capsys.readouterr().err
    assert code == 2
    assert len(err.strip().splitlines()) == 1
    assert "--jobs was removed" in err and "one process" in err
    assert not out.exists()


def test_evaluate_predictions_refuses_jobs_saying_it_was_removed(
    sample_release: Path, predictions: Path
) -> None:
    with pytest.raises(TypeError, match="jobs was removed: scoring runs in one process"):
        evaluate_predictions(sample_release, predictions, n_resamples=0, jobs=2)
