"""user19: predictions files of different models scored as one, and the lines' model name.

``--predictions A B`` joins the per-task files of ONE model; files whose manifests or lines
name different models were merged into one report named "A + B" without a word.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from novabench.cli import main
from novabench.errors import NovaInputError
from novabench.report import evaluate_predictions
from novabench.report.render import model_name


def _lines(run: Path, task: str, model: str) -> list[dict]:
    """The floor run's lines of one task, as another model's run would write them."""
    lines = [json.loads(line) for line in run.read_text(encoding="utf-8").splitlines()]
    return [{**line, "model": model} for line in lines if line.get("task") == task]


def _write(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_files_whose_lines_name_different_models_are_refused(
    sample_release: Path, sample_floor_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    boxes = _write(tmp_path / "locA.jsonl", _lines(sample_floor_run, "localization", "qwen"))
    captions = _write(tmp_path / "capB.jsonl", _lines(sample_floor_run, "captioning", "gpt-4o"))
    out = tmp_path / "mix" / "report.json"
    args = ["evaluate", "--data", str(sample_release), "--predictions", str(boxes)]
    assert main([*args, str(captions), "--bootstrap", "0", "--out", str(out)]) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "Traceback" not in error
    assert str(boxes) in error and str(captions) in error
    assert "'qwen' and 'gpt-4o'" in error and not out.exists()


def test_a_manifest_model_unlike_the_other_files_model_is_refused(
    sample_release: Path, sample_floor_run: Path, tmp_path: Path
) -> None:
    boxes = _write(tmp_path / "locA.jsonl", _lines(sample_floor_run, "localization", "qwen"))
    captions = _write(tmp_path / "capB.jsonl", _lines(sample_floor_run, "captioning", "qwen"))
    # The captions' run manifest says which model answered them: another one.
    manifest = {"model": "llava", "tasks": ["captioning"]}
    (tmp_path / "capB.jsonl.manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(NovaInputError, match="'qwen' and 'llava'"):
        evaluate_predictions(sample_release, [boxes, captions], n_resamples=0)


def test_one_file_whose_lines_name_two_models_is_refused(
    sample_release: Path, sample_floor_run: Path, tmp_path: Path
) -> None:
    lines = _lines(sample_floor_run, "localization", "qwen")
    lines[-1]["model"] = "gpt-4o"
    mixed = _write(tmp_path / "mixed.jsonl", lines)
    with pytest.raises(NovaInputError, match="'qwen' and 'gpt-4o'") as raised:
        evaluate_predictions(sample_release, mixed, n_resamples=0)
    assert raised.value.source == str(mixed)


def test_per_task_files_of_one_model_are_named_by_their_lines(
    sample_release: Path, sample_floor_run: Path, tmp_path: Path
) -> None:
    boxes = _write(tmp_path / "locA.jsonl", _lines(sample_floor_run, "localization", "other"))
    diagnoses = _write(tmp_path / "dxB.jsonl", _lines(sample_floor_run, "diagnosis", "other"))
    report = evaluate_predictions(sample_release, [boxes, diagnoses], n_resamples=0)
    # Not "locA + dxB" (the file names) nor "locA" alone: the model the lines name.
    assert model_name(report) == "other"
    assert report["predictions"]["line_models"] == [["other"], ["other"]]
