"""A run manifest that is another file's record is refused, not applied (user15).

`nova evaluate` reads the manifest beside a predictions file, and both Spaces take one as an
upload: a manifest of another run (copied beside a file, or uploaded with another file) was
applied without a word: its box convention, prompts, release and status then describe
answers it never recorded.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from novabench.cli import main
from novabench.data.release import read_release
from novabench.errors import NovaInputError
from novabench.report import evaluate_predictions

REPO = Path(__file__).resolve().parents[2]
FAST = ["--bootstrap", "0", "--no-breakdowns", "--exclude", "BERTScore-F1", "--exclude", "METEOR"]


def _lines(run: Path, task: str) -> list[str]:
    return [
        line
        for line in run.read_text(encoding="utf-8").splitlines(keepends=True)
        if json.loads(line)["task"] == task
    ]


def test_nova_evaluate_refuses_a_manifest_copied_beside_another_file(
    sample_release: Path, sample_floor_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Twelve localisation answers; beside them the manifest of the full floor run, which
    # records every one of the sample's 132 images answered.
    recorded = json.loads(Path(f"{sample_floor_run}.manifest.json").read_text(encoding="utf-8"))
    counts = recorded["counts"]["localization"]
    expected = counts["done_before"] + counts["answered"]
    n_images = read_release(sample_release).n_images
    assert expected == n_images  # the floor run answered every image of the sample
    short = tmp_path / "short.jsonl"
    short.write_text("".join(_lines(sample_floor_run, "localization")[:12]), encoding="utf-8")
    shutil.copyfile(f"{sample_floor_run}.manifest.json", f"{short}.manifest.json")
    before = short.read_bytes()
    out = tmp_path / "report.json"
    arguments = ["evaluate", "--data", str(sample_release), "--predictions", str(short)]
    assert main([*arguments, "--out", str(out), *FAST]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    # The SHA-256 the manifest records (the full run's bytes) says it first.
    assert "short.jsonl.manifest.json, field 'file.sha256': short.jsonl is not the file" in err
    full = sample_floor_run.stat().st_size
    assert f"it should be {full:,} bytes with SHA-256 {recorded['file']['sha256'][:12]}" in err
    assert not out.exists() and short.read_bytes() == before

    # A manifest of an older novabench records no SHA-256: its counts still tell.
    del recorded["file"]
    recorded["format_version"] = 1  # before novabench recorded the file
    Path(f"{short}.manifest.json").write_text(json.dumps(recorded), encoding="utf-8")
    assert main([*arguments, "--out", str(out), *FAST]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "short.jsonl.manifest.json is not the record of short.jsonl" in err
    assert f"it records {n_images} localization items answered, the file answers 12" in err
    assert not out.exists() and short.read_bytes() == before


def test_a_file_answering_a_task_its_manifest_never_ran_is_refused(
    sample_release: Path, sample_floor_run: Path, tmp_path: Path
) -> None:
    run = tmp_path / "run.jsonl"
    shutil.copyfile(sample_floor_run, run)
    manifest = json.loads(Path(f"{sample_floor_run}.manifest.json").read_text(encoding="utf-8"))
    manifest["tasks"] = ["localization"]  # a localisation-only run's record
    manifest["counts"] = {"localization": manifest["counts"]["localization"]}
    Path(f"{run}.manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(NovaInputError, match="which it records no run of") as refused:
        evaluate_predictions(sample_release, run, n_resamples=0, breakdowns=False)
    assert "the file answers captioning, diagnosis" in str(refused.value)


def test_the_file_its_manifest_describes_is_scored_as_before(
    sample_release: Path, sample_floor_run: Path
) -> None:
    report = evaluate_predictions(
        sample_release, sample_floor_run, tasks=("localization",), n_resamples=0,
        breakdowns=False,
    )  # fmt: skip
    counts = report["predictions"]["manifests"][0]["counts"]["localization"]
    assert counts["answered"] == read_release(sample_release).n_images
    assert report["tasks"]["localization"]["metrics"]["n_images"] == counts["answered"]


def test_the_explorer_refuses_a_manifest_named_for_another_file(
    sample_release: Path, sample_floor_run: Path, tmp_path: Path
) -> None:
    from novabench.spaces import explorer

    upload = tmp_path / "gemma.jsonl"
    shutil.copyfile(sample_floor_run, upload)
    manifest = tmp_path / "qwen.jsonl.manifest.json"
    shutil.copyfile(f"{sample_floor_run}.manifest.json", manifest)
    with pytest.raises(NovaInputError) as refused:
        explorer.read_model_answers(upload, read_release(sample_release), "gemma.jsonl", manifest)
    message = str(refused.value)
    assert "qwen.jsonl.manifest.json is the record of qwen.jsonl" in message
    assert "not of the predictions given (gemma.jsonl)" in message and "\n" not in message


def test_the_metric_space_refuses_a_manifest_of_another_file_in_one_line(
    sample_release: Path, sample_floor_run: Path
) -> None:
    from novabench.spaces import metric

    text = "".join(_lines(sample_floor_run, "localization")[:12])
    manifest = Path(f"{sample_floor_run}.manifest.json").read_text(encoding="utf-8")
    module = REPO / "metrics" / "nova_metric"
    common = dict(n_resamples=0, data_source=str(sample_release), manifest_text=manifest)
    by_counts = metric.score_inputs(
        module, "localization", text, metric.REFERENCES_FROM_DATA, "", **common,
        predictions_name="short.jsonl",
    )  # fmt: skip
    by_name = metric.score_inputs(
        module, "localization", text, metric.REFERENCES_FROM_DATA, "", **common,
        predictions_name="short.jsonl", manifest_name="floor.jsonl.manifest.json",
    )  # fmt: skip
    older = json.loads(manifest)
    del older["file"]  # a manifest of an older novabench: no SHA-256, its counts tell
    older["format_version"] = 1
    by_older_counts = metric.score_inputs(
        module, "localization", text, metric.REFERENCES_FROM_DATA, "",
        **{**common, "manifest_text": json.dumps(older)}, predictions_name="short.jsonl",
    )  # fmt: skip
    for rows, message in (by_counts, by_name, by_older_counts):
        assert rows == [] and message.startswith("**Could not score.**") and "\n" not in message
    assert "field 'file.sha256': short.jsonl is not the file this manifest" in by_counts[1]
    assert "the file answers 12" in by_older_counts[1]
    assert "is the record of floor.jsonl" in by_name[1]
