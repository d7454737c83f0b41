"""A task with no answered item says so: its zeros are not a model's scores."""

from __future__ import annotations

import json
from pathlib import Path

from novabench.cli import main
from novabench.data.release import read_release
from novabench.report import render_markdown, render_table
from novabench.report.scoring import score_predictions

NOTHING = "nothing was answered"


def write_lines(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_a_task_whose_every_call_failed_warns_in_every_output(
    sample_release: Path, tmp_path: Path, capsys
) -> None:
    release = read_release(sample_release)
    failed = release.images[:3]
    case = release.cases()[0]
    lines = [
        {"filename": image.filename, "task": "localization", "error": "connection refused"}
        for image in failed
    ]
    lines.append({"case_id": case.case_id, "diagnoses": [case.final_diagnosis]})
    predictions = write_lines(tmp_path / "raw.jsonl", lines)
    out, markdown = tmp_path / "r.json", tmp_path / "r.md"
    code = main(
        ["evaluate", "--data", str(sample_release), "--predictions", str(predictions)]
        + ["--out", str(out), "--markdown", str(markdown), "--bootstrap", "0", "--quiet"]
        + ["--task", "localization", "--task", "diagnosis"]
    )
    assert code == 0
    captured = capsys.readouterr()
    n_images = len(release.images)
    expected = f"{NOTHING} (3 model errors, {n_images - 3} without a line)"
    # One warning line on stderr, for the task with nothing answered only.
    [warning] = captured.err.strip().splitlines()
    assert warning.startswith(f"nova evaluate: warning: localization: {expected}: ")
    report = json.loads(out.read_text())
    assert report["tasks"]["localization"]["notes"][0].startswith(expected)
    assert not any(NOTHING in note for note in report["tasks"]["diagnosis"]["notes"])
    assert f"- localization: note: {expected}" in markdown.read_text()
    assert f"localization: note: {expected}" in captured.out
    # The coverage line says the model errors are among the missing items, and names the
    # first failed item (in filename order) with its error (user30: only the run file did).
    coverage = f"0/{n_images} answered, {n_images} missing (scored as no prediction): "
    first = (
        f"(first: {min(image.filename for image in failed)}: connection refused; rerun to retry)"
    )
    assert (
        f"localization: {coverage}3 model errors {first}, {n_images - 3} without a line"
        in captured.out
    )
    assert report["tasks"]["localization"]["coverage"]["first_error"] == {
        "item": min(image.filename for image in failed),
        "error": "connection refused",
    }


def test_answered_only_names_the_model_errors_it_scores(sample_release: Path, tmp_path: Path):
    release = read_release(sample_release)
    answered, failed = release.images[0], release.images[1:4]
    lines = [{"filename": answered.filename, "boxes": answered.boxes}]
    lines += [
        {"filename": image.filename, "task": "localization", "error": "HTTP 500"}
        for image in failed
    ]
    predictions = write_lines(tmp_path / "raw.jsonl", lines)
    report = score_predictions(
        sample_release, predictions, n_resamples=0, answered_only=True
    ).report
    coverage = report["tasks"]["localization"]["coverage"]
    assert coverage["scored"] == 4 and coverage["answered"] == 1 and coverage["errors"] == 3
    table = render_table(report).splitlines()
    n_images = len(release.images)
    # Header and coverage agree: 4 scored, of which 1 answer and 3 model errors (no answer).
    scope = (
        f"answered items only: localization 4 of {n_images} images scored, the rest left out; "
        "model errors among them (scored as no prediction): localization 3"
    )
    assert scope in table and table.index(scope) < table.index(
        next(t for t in table if t.startswith("task "))
    )
    first = min(image.filename for image in failed)
    assert (
        f"localization: 1/{n_images} answered, 3 model errors (first: {first}: HTTP 500; rerun "
        f"to retry) (scored as no prediction), {n_images - 4} without a line left out"
    ) in table
    assert NOTHING not in render_markdown(report)


def test_a_file_with_answers_gets_no_such_note(sample_release: Path, tmp_path: Path) -> None:
    release = read_release(sample_release)
    image = release.images[0]
    predictions = write_lines(tmp_path / "p.jsonl", [{"filename": image.filename, "boxes": []}])
    report = score_predictions(sample_release, predictions, n_resamples=0).report
    assert not any(NOTHING in note for note in report["tasks"]["localization"]["notes"])
