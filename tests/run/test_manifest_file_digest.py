"""A run manifest records the SHA-256 and size of its predictions file, and readers check it.

A manifest's claims (model, prompts, box convention, release, finished) were applied to any
file beside it with the same counts and tasks: a box edited by hand, or the file swapped
for another with as many answers, was scored under them. `nova run` (at its start and end),
`nova parse` and `nova merge` now record the bytes they leave; `nova evaluate`, `nova
compare`, `nova parse`, `nova merge`, a resumed `nova run` and both Spaces check them.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from novabench.cli import main
from novabench.errors import NovaInputError
from novabench.report import evaluate_predictions
from novabench.report.render import report_first_lines
from novabench.run.manifest import RunManifest, check_recorded_file, file_record

FAST = ["--bootstrap", "0", "--no-breakdowns", "--exclude", "BERTScore-F1", "--exclude", "METEOR"]


def run_copy(floor_run: Path, folder: Path, name: str = "run.jsonl") -> Path:
    """The floor run and its manifest copied as they are (a user moving a run folder)."""
    copy = folder / name
    shutil.copyfile(floor_run, copy)
    shutil.copyfile(RunManifest.path_for(floor_run), RunManifest.path_for(copy))
    return copy


def edit_first_box(path: Path) -> None:
    """One localisation answer's box changed by hand, keeping the file's size."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    for index, line in enumerate(lines):
        record = json.loads(line)
        answer = record.get("raw_boxes") or ""
        if "[" in answer and any(c in "12345678" for c in answer):
            digit = next(c for c in answer if c in "12345678")
            record["raw_boxes"] = answer.replace(digit, str(int(digit) + 1), 1)
            edited = json.dumps(record, ensure_ascii=False) + "\n"
            assert len(edited) == len(line)  # the same size: only the digest tells
            lines[index] = edited
            break
    else:
        raise AssertionError("no box answer with a digit to edit")
    path.write_text("".join(lines), encoding="utf-8")


def evaluate(release: Path, predictions: Path, out: Path, *extra: str) -> int:
    arguments = ["evaluate", "--data", str(release), "--predictions", str(predictions)]
    return main([*arguments, "--out", str(out), *FAST, *extra])


def test_nova_run_records_the_bytes_it_wrote(sample_floor_run: Path) -> None:
    manifest = RunManifest.read(sample_floor_run)
    assert manifest is not None and manifest.status == "complete"
    data = sample_floor_run.read_bytes()
    assert manifest.file == {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}


def test_a_box_edited_after_the_run_is_refused_in_one_line(
    sample_release: Path, sample_floor_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = run_copy(sample_floor_run, tmp_path)
    out = tmp_path / "report.json"
    assert evaluate(sample_release, run, out, "--task", "localization") == 0  # as written: scored
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["predictions"]["file_checks"] == [  # the name only: reports travel
        {"path": "run.jsonl", "checked": "sha256", "checked_bytes": run.stat().st_size,
         "unchecked_bytes": 0}
    ]  # fmt: skip
    assert not any("verified" in line for line in report_first_lines(report))
    out.unlink()
    edit_first_box(run)
    capsys.readouterr()
    assert evaluate(sample_release, run, out, "--task", "localization") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"nova evaluate: error: {run}.manifest.json, field 'file.sha256': ")
    assert "run.jsonl is not the file this manifest records" in err
    assert f"it should be {run.stat().st_size:,} bytes with SHA-256 " in err
    assert "give run.jsonl as the run wrote it, or give it without run.jsonl.manifest.json" in err
    assert not out.exists()


def test_a_file_swapped_for_another_with_the_same_counts_is_refused(
    sample_release: Path, sample_floor_run: Path, tmp_path: Path
) -> None:
    # Every answer kept, two answers' places swapped: the same counts and tasks, other bytes.
    run = run_copy(sample_floor_run, tmp_path)
    lines = run.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[0], lines[1] = lines[1], lines[0]
    run.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(NovaInputError, match="is not the file this manifest records") as refused:
        evaluate_predictions(sample_release, run, tasks=("localization",), n_resamples=0)
    assert refused.value.field == "file.sha256"
    with pytest.raises(NovaInputError, match="field 'file.sha256'"):
        from novabench.report import compare_predictions

        compare_predictions(sample_release, sample_floor_run, run, n_resamples=0)


def test_a_manifest_without_a_digest_is_read_as_before_and_says_so(
    sample_release: Path, sample_floor_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = run_copy(sample_floor_run, tmp_path, "old.jsonl")
    older = RunManifest.read(run)
    assert older is not None
    replace(older, file=None, format_version=1).write(run)  # as an older novabench wrote it
    out = tmp_path / "report.json"
    capsys.readouterr()
    assert evaluate(sample_release, run, out, "--task", "localization") == 0
    expected = (
        "note: old.jsonl could not be verified: its manifest records no SHA-256 of the file "
        "(written by an older novabench), so nothing shows it is the file the run wrote"
    )
    report = json.loads(out.read_text(encoding="utf-8"))
    assert expected in report_first_lines(report)
    assert expected in capsys.readouterr().out.splitlines()


def test_a_resumed_run_checks_the_file_first_and_records_it_whole_at_the_end(
    sample_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run.jsonl"
    arguments = ["run", "--data", str(sample_release), "--task", "localization"]
    arguments += ["--baseline", "floor", "--out", str(run), "--no-progress"]
    assert main([*arguments, "--limit", "3"]) == 0
    assert RunManifest.read(run).file == file_record(run)  # type: ignore[union-attr]
    kept = run.read_bytes()
    edit_first_box(run)
    capsys.readouterr()
    assert main(arguments) == 2  # the edit would become the run's own answers
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "field 'file.sha256'" in err
    assert "restore it as the run wrote it, or choose a new output" in err
    run.write_bytes(kept)
    assert main(arguments) == 0
    resumed = RunManifest.read(run)
    assert resumed is not None and resumed.status == "complete"
    assert resumed.file == file_record(run) and resumed.file["bytes"] > len(kept)


def test_parse_and_merge_record_their_own_output_and_check_their_inputs(
    sample_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shards = []
    for index in range(2):
        shard = tmp_path / f"shard{index}.jsonl"
        arguments = ["run", "--data", str(sample_release), "--task", "localization"]
        arguments += ["--baseline", "floor", "--shard", f"{index}/2", "--out", str(shard)]
        assert main([*arguments, "--no-progress"]) == 0
        shards.append(shard)
    merged = tmp_path / "merged.jsonl"
    assert main(["merge", *map(str, shards), "--out", str(merged)]) == 0
    assert RunManifest.read(merged).file == file_record(merged)  # type: ignore[union-attr]
    parsed = tmp_path / "parsed.jsonl"
    assert main(["parse", str(merged), "--data", str(sample_release), "--out", str(parsed)]) == 0
    assert RunManifest.read(parsed).file == file_record(parsed)  # type: ignore[union-attr]
    out = tmp_path / "report.json"
    assert evaluate(sample_release, parsed, out) == 0

    edit_first_box(shards[1])
    capsys.readouterr()
    again = tmp_path / "again.jsonl"
    assert main(["merge", *map(str, shards), "--out", str(again)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{shards[1]}.manifest.json, field 'file.sha256'" in err
    assert not again.exists()
    arguments = ["parse", str(shards[1]), "--data", str(sample_release), "--out", str(again)]
    assert main(arguments) == 2
    assert "field 'file.sha256'" in capsys.readouterr().err and not again.exists()


def test_a_running_file_is_checked_up_to_the_bytes_its_manifest_recorded(
    sample_release: Path, sample_floor_run: Path, tmp_path: Path
) -> None:
    # A run killed after its manifest recorded half its lines; the rest appended after that.
    lines = [
        line
        for line in sample_floor_run.read_text(encoding="utf-8").splitlines(keepends=True)
        if json.loads(line)["task"] == "localization"
    ]
    run = tmp_path / "run.jsonl"
    half = len(lines) // 2
    assert half > 2
    run.write_text("".join(lines[:half]), encoding="utf-8")
    manifest = RunManifest.read(sample_floor_run)
    assert manifest is not None
    counts = {"localization": {"items": len(lines), "done_before": 0, "answered": 0}}
    recorded = file_record(run)
    replace(manifest, status="running", tasks=["localization"], counts=counts, file=recorded).write(
        run
    )
    with run.open("a", encoding="utf-8") as handle:
        handle.write("".join(lines[half:]))
    appended = run.stat().st_size - recorded["bytes"]
    assert check_recorded_file(run, RunManifest.read(run)).checked == "first_bytes"  # type: ignore[arg-type]
    report = evaluate_predictions(sample_release, run, n_resamples=0, breakdowns=False)
    expected = (
        f"note: run.jsonl: its first {recorded['bytes']:,} bytes match its manifest's SHA-256; "
        f"the {appended:,} bytes its writer appended since are not verified (the run records "
        "them as it goes and when it ends)"
    )
    assert expected in report_first_lines(report)

    # An answer among the recorded bytes edited: refused, whatever was appended after.
    edit_first_box(run)
    with pytest.raises(NovaInputError, match=f"it should begin with {recorded['bytes']:,} bytes"):
        evaluate_predictions(sample_release, run, n_resamples=0, breakdowns=False)


def test_the_explorer_checks_an_uploaded_run_against_its_manifest(
    sample_release: Path, sample_floor_run: Path, tmp_path: Path
) -> None:
    from novabench.data.release import read_release
    from novabench.spaces import explorer

    upload = run_copy(sample_floor_run, tmp_path, "qwen.jsonl")
    release = read_release(sample_release)
    manifest = RunManifest.path_for(upload)
    answers = explorer.read_model_answers(upload, release, "qwen.jsonl", manifest)
    assert not any("verified" in line for line in answers.notices)
    edit_first_box(upload)
    with pytest.raises(NovaInputError) as refused:
        explorer.read_model_answers(upload, release, "qwen.jsonl", manifest)
    message = str(refused.value)
    assert message.startswith("the run manifest, field 'file.sha256': qwen.jsonl is not the file")
    assert str(tmp_path) not in message and "\n" not in message
