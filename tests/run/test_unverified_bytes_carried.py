"""Bytes no manifest vouched for stay unverified in every file written from them (user20).

Three ways turned an unverifiable predictions file into one whose manifest's SHA-256
covered everything: `nova parse` of a run still being written (its output kept the input's
``running`` status, so lines appended to the parsed file by hand were "appended since"),
`nova merge` / `nova parse` of an input whose manifest recorded no digest or only the start
of the file, and a killed `nova run` resumed after its tail was edited. A manifest of
today's format with its ``file`` entry deleted also read as an older novabench's.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from novabench.cli import main
from novabench.data.release import read_release
from novabench.errors import NovaInputError
from novabench.report import evaluate_predictions
from novabench.report.render import report_first_lines
from novabench.run.backends import Answer
from novabench.run.manifest import (
    RunManifest,
    UnverifiedFileWarning,
    check_recorded_file,
    file_record,
    merge_prediction_files,
)
from novabench.run.runner import ResumedRun, run_model

from ..report.test_unfinished_run import partial_run, writer_elsewhere  # noqa: F401

FAST = ["--bootstrap", "0", "--no-breakdowns", "--exclude", "BERTScore-F1", "--exclude", "METEOR"]


def evaluate(release: Path, predictions: Path, out: Path, *extra: str) -> int:
    arguments = ["evaluate", "--data", str(release), "--predictions", str(predictions)]
    return main([*arguments, "--out", str(out), *FAST, *extra])


def localization_lines(floor_run: Path) -> list[str]:
    return [
        line
        for line in floor_run.read_text(encoding="utf-8").splitlines(keepends=True)
        if json.loads(line)["task"] == "localization"
    ]


def test_parse_of_a_run_at_work_is_refused_unless_allowed_and_its_output_takes_no_appended_lines(
    sample_release: Path,
    sample_floor_run: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    writer_elsewhere: Any,  # noqa: F811
) -> None:
    live = partial_run(sample_floor_run, tmp_path, "running", "live.jsonl")  # recorded: 0 bytes
    writer_elsewhere(live)
    parsed = tmp_path / "plive.jsonl"
    parse = ["parse", str(live), "--data", str(sample_release), "--out", str(parsed)]
    capsys.readouterr()
    assert main(parse) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"nova parse: error: {live}, field 'status': the run is still being ")
    assert "--allow-running to parse the answers so far" in err
    assert not parsed.exists()

    assert main([*parse, "--allow-running"]) == 0
    recorded = RunManifest.read(parsed)
    assert recorded is not None and recorded.status == "running"  # as its input said
    assert recorded.file is not None
    # None of live.jsonl's bytes was recorded by its manifest: all of them are carried.
    assert recorded.file["unverified_from"] == [
        {"path": "live.jsonl", "bytes": live.stat().st_size,
         "reason": "appended after its manifest last recorded it"}
    ]  # fmt: skip
    report = evaluate_predictions(sample_release, parsed, n_resamples=0, breakdowns=False)
    said = (
        f"note: plive.jsonl was written from {live.stat().st_size:,} bytes of input that could "
        f"not be verified: {live.stat().st_size:,} bytes of live.jsonl (appended after its "
        "manifest last recorded it); its SHA-256 shows only that it is what was written from them"
    )
    assert said in report_first_lines(report)

    # nova parse wrote it whole: no writer appends to it, whatever status it copied.
    rest = localization_lines(sample_floor_run)[len(live.read_text().splitlines()) :]
    with parsed.open("a", encoding="utf-8") as handle:
        handle.write(rest[0])
    out = tmp_path / "report.json"
    capsys.readouterr()
    assert evaluate(sample_release, parsed, out) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "field 'file.sha256': plive.jsonl is not the file" in err
    assert "it should be " in err and not out.exists()


def test_a_merged_or_parsed_manifest_gets_no_appended_bytes_allowance(tmp_path: Path) -> None:
    path = tmp_path / "merged.jsonl"
    path.write_text('{"case_id": "case0001", "diagnoses": ["glioma"]}\n', encoding="utf-8")
    record = file_record(path)
    with path.open("a", encoding="utf-8") as handle:
        handle.write('{"case_id": "case0002", "diagnoses": ["abscess"]}\n')
    live = RunManifest(status="running", file=record)
    assert check_recorded_file(path, live).checked == "first_bytes"  # a run's own file grows
    merged = replace(live, status="mixed: complete, running", merged_from=[{"path": "a.jsonl"}])
    for written_whole in (merged, replace(live, parsed={"from": "raw.jsonl"})):
        with pytest.raises(NovaInputError, match="it should be 49 bytes") as refused:
            check_recorded_file(path, written_whole)
        assert refused.value.field == "file.sha256"


#: Per test process: the sample release -> the folder holding its two shards as first made.
_SHARDS_MADE: dict[Path, Path] = {}


def shards_one_without_digest(sample_release: Path, folder: Path) -> tuple[Path, Path]:
    """Two floor-run shards of the sample (localisation) in ``folder``; shard 1's manifest
    rewritten as an older novabench's, with no digest of the file.

    The two runs (0.6 CPU s) are made once per test process, beside the shared sample, and
    their files (answers and manifests, which name no folder) copied here for each caller.
    """
    made = _SHARDS_MADE.get(sample_release)
    if made is None:
        made = sample_release.parent / f"shards-without-digest-{os.getpid()}"
        made.mkdir()
        _make_shards_one_without_digest(sample_release, made)
        _SHARDS_MADE[sample_release] = made
    for name in sorted(path.name for path in made.iterdir()):
        shutil.copy2(made / name, folder / name)
    return folder / "shard0.jsonl", folder / "shard1.jsonl"


def _make_shards_one_without_digest(sample_release: Path, folder: Path) -> None:
    shards = []
    for index in range(2):
        shard = folder / f"shard{index}.jsonl"
        arguments = ["run", "--data", str(sample_release), "--task", "localization"]
        arguments += ["--baseline", "floor", "--shard", f"{index}/2", "--out", str(shard)]
        assert main([*arguments, "--no-progress"]) == 0
        shards.append(shard)
    older = RunManifest.read(shards[1])
    assert older is not None
    replace(older, file=None, format_version=1).write(shards[1])  # an older novabench's


SHARD1_UNVERIFIED = (
    "note: shard1.jsonl could not be verified: its manifest records no SHA-256 of the file "
    "(written by an older novabench), so nothing shows it is the file the run wrote"
)


def test_merge_and_parse_carry_a_shard_without_digest_into_every_report(
    sample_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = shards_one_without_digest(sample_release, tmp_path)
    size = second.stat().st_size
    merged = tmp_path / "merged.jsonl"
    capsys.readouterr()
    assert main(["merge", str(first), str(second), "--out", str(merged)]) == 0
    # nova merge says it as before: its own note line, not a "warning:" of the library.
    assert SHARD1_UNVERIFIED in capsys.readouterr().err.splitlines()
    carried = [
        {"path": "shard1.jsonl", "bytes": size, "reason": "its manifest records no SHA-256 of it"}
    ]
    recorded = RunManifest.read(merged)
    assert recorded is not None and recorded.file is not None
    assert recorded.file["unverified_from"] == carried
    assert recorded.file["sha256"] == file_record(merged)["sha256"]  # its own bytes still
    # Each shard's bytes as merged, so the merge can be checked against the shards later.
    assert recorded.merged_from is not None
    assert [entry["file"] for entry in recorded.merged_from] == [
        {"sha256": hashlib.sha256(first.read_bytes()).hexdigest(), "bytes": first.stat().st_size},
        {"sha256": hashlib.sha256(second.read_bytes()).hexdigest(), "bytes": size,
         "unverified_from": carried},
    ]  # fmt: skip

    parsed = tmp_path / "parsed.jsonl"
    assert main(["parse", str(merged), "--data", str(sample_release), "--out", str(parsed)]) == 0
    reparsed = RunManifest.read(parsed)
    assert reparsed is not None and reparsed.file is not None
    assert reparsed.file["unverified_from"] == carried  # carried on, not laundered
    out = tmp_path / "report.json"
    capsys.readouterr()
    assert evaluate(sample_release, parsed, out) == 0
    said = (
        f"note: parsed.jsonl was written from {size:,} bytes of input that could not be "
        f"verified: {size:,} bytes of shard1.jsonl (its manifest records no SHA-256 of it); "
        "its SHA-256 shows only that it is what was written from them"
    )
    assert said in capsys.readouterr().out.splitlines()
    report = json.loads(out.read_text(encoding="utf-8"))
    assert said in report_first_lines(report)
    assert report["predictions"]["file_checks"][0]["unverified_from"] == carried


def test_merge_prediction_files_warns_of_a_shard_it_cannot_verify_and_prints_nothing(
    sample_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = shards_one_without_digest(sample_release, tmp_path)
    capsys.readouterr()
    with pytest.warns(UnverifiedFileWarning) as told:
        merge_prediction_files([first, second], tmp_path / "merged.jsonl")
    assert capsys.readouterr() == ("", "")  # a library function prints nothing
    assert [str(warning.message) for warning in told] == [SHARD1_UNVERIFIED]
    # A caller who has read the note can silence it by its category alone.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", UnverifiedFileWarning)
        merge_prediction_files([first, second], tmp_path / "again.jsonl")


def killed_and_resumed(
    sample_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[Path, int]:
    """A floor run killed after its first checkpoint, its tail edited, then resumed by
    ``nova run``: the run file and the bytes of its kept tail."""
    run = tmp_path / "run.jsonl"
    arguments = ["run", "--data", str(sample_release), "--task", "localization"]
    arguments += ["--baseline", "floor", "--out", str(run), "--no-progress"]
    assert main([*arguments, "--limit", "3"]) == 0
    # As kill -9 leaves it: status running, the bytes of its last checkpoint (line 1).
    lines = run.read_text(encoding="utf-8").splitlines(keepends=True)
    checkpoint = tmp_path / "checkpoint.jsonl"
    checkpoint.write_text(lines[0], encoding="utf-8")
    manifest = RunManifest.read(run)
    assert manifest is not None
    replace(manifest, status="running", file=file_record(checkpoint)).write(run)
    tail = run.stat().st_size - len(lines[0].encode("utf-8"))
    # Line 3 edited (a box digit) after the checkpoint: a resume cannot tell.
    record = json.loads(lines[2])
    digit = next(c for c in record["raw_boxes"] if c in "12345678")
    record["raw_boxes"] = record["raw_boxes"].replace(digit, str(int(digit) + 1), 1)
    edited = json.dumps(record, ensure_ascii=False) + "\n"
    assert edited != lines[2] and len(edited) == len(lines[2])
    run.write_text(lines[0] + lines[1] + edited, encoding="utf-8")
    capsys.readouterr()
    assert main(arguments) == 0
    assert f"its last {tail:,} bytes were written after its manifest" in capsys.readouterr().err
    return run, tail


def test_a_killed_run_resumed_keeps_its_unrecorded_tail_as_unverified(
    sample_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run, tail = killed_and_resumed(sample_release, tmp_path, capsys)
    resumed = RunManifest.read(run)
    assert resumed is not None and resumed.status == "complete"
    carried = [
        {"path": "run.jsonl", "bytes": tail,
         "reason": "written by an earlier call that ended before its manifest recorded them"}
    ]  # fmt: skip
    assert resumed.file == file_record(run, carried)
    report = evaluate_predictions(sample_release, run, n_resamples=0, breakdowns=False)
    # The file is no input of its own: the earlier run's lines past its record were kept.
    kept = (
        f"note: run.jsonl: the earlier run's lines past its manifest's last record ({tail:,} "
        "bytes: it ended before recording them) were kept when it resumed and could not be "
        "verified; its SHA-256 shows only that they are the lines found then"
    )
    assert kept in report_first_lines(report)
    assert not any("was written from" in line for line in report_first_lines(report))
    # A file parsed from it was written from those bytes of run.jsonl: said so.
    parsed = tmp_path / "parsed.jsonl"
    capsys.readouterr()
    assert main(["parse", str(run), "--data", str(sample_release), "--out", str(parsed)]) == 0
    assert kept in capsys.readouterr().err.splitlines()  # its input, checked, as a report says
    report = evaluate_predictions(sample_release, parsed, n_resamples=0, breakdowns=False)
    assert (
        f"note: parsed.jsonl was written from {tail:,} bytes of input that could not be "
        f"verified: {tail:,} bytes of run.jsonl (written by an earlier call that ended before "
        "its manifest recorded them); its SHA-256 shows only that it is what was written from "
        "them"
    ) in report_first_lines(report)


def test_a_parse_or_merge_named_as_the_resumed_run_it_read_says_it_was_written_from_it(
    sample_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """trust24: an output of the resumed run's name in another folder got the resumed run's
    own "kept when it resumed" wording: the entry's name matched its own."""
    run, tail = killed_and_resumed(sample_release, tmp_path, capsys)
    from_input = (
        f"note: run.jsonl was written from {tail:,} bytes of input that could not be "
        f"verified: {tail:,} bytes of run.jsonl (written by an earlier call that ended before "
        "its manifest recorded them); its SHA-256 shows only that it is what was written from "
        "them"
    )
    for command in ("parse", "merge"):
        out = tmp_path / command / "run.jsonl"
        arguments = [str(run), "--out", str(out)]
        assert main([command, *arguments, "--data", str(sample_release)]) == 0, command
        report = evaluate_predictions(sample_release, out, n_resamples=0, breakdowns=False)
        lines = report_first_lines(report)
        assert from_input in lines, (command, lines)
        assert not any("kept when it resumed" in line for line in lines), command
    # The run itself, resumed once more, still says its own tail was kept.
    assert main(["run", "--data", str(sample_release), "--task", "localization",
                 "--baseline", "floor", "--out", str(run), "--no-progress"]) == 0  # fmt: skip
    lines = report_first_lines(
        evaluate_predictions(sample_release, run, n_resamples=0, breakdowns=False)
    )
    assert any(line.startswith("note: run.jsonl: the earlier run's lines") for line in lines)


def test_a_run_records_its_bytes_at_checkpoints_while_it_writes(
    sample_release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ResumedRun, "CHECKPOINT_S", 0.0, raising=False)  # every answer
    out = tmp_path / "raw.jsonl"
    seen: list[tuple[int, int]] = []  # (file size, bytes its manifest records) at each call

    class Watching:
        name = "watching"

        def describe(self) -> dict[str, Any]:
            return {"type": "test", "model": "watching"}

        def generate(self, requests: Any) -> list[Answer]:
            recorded = RunManifest.read(out)
            assert recorded is not None and recorded.file is not None
            seen.append((out.stat().st_size, recorded.file["bytes"]))
            return [Answer(text="Glioma.") for _ in requests]

    release = read_release(sample_release)
    run_model(
        release, tasks="diagnosis", backend=Watching(), out_path=out, batch_size=1, progress=False
    )
    assert len(seen) == len(release.cases()) and seen[0] == (0, 0)
    assert all(size == recorded and size > 0 for size, recorded in seen[1:])  # none behind


def test_a_manifest_of_todays_format_without_its_digest_is_refused(
    sample_release: Path, sample_floor_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run.jsonl"
    shutil.copyfile(sample_floor_run, run)
    manifest = json.loads(RunManifest.path_for(sample_floor_run).read_text(encoding="utf-8"))
    assert manifest["format_version"] == 2 and "file" in manifest
    del manifest["file"]
    RunManifest.path_for(run).write_text(json.dumps(manifest), encoding="utf-8")
    out = tmp_path / "report.json"
    capsys.readouterr()
    assert evaluate(sample_release, run, out, "--task", "localization") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"nova evaluate: error: {run}.manifest.json, field 'file': missing: ")
    assert "format_version 2 always records the SHA-256 of its file" in err
    assert not out.exists()
    # One that predates the field is still read, with its note.
    manifest["format_version"] = 1
    RunManifest.path_for(run).write_text(json.dumps(manifest), encoding="utf-8")
    assert evaluate(sample_release, run, out, "--task", "localization") == 0
    assert "note: run.jsonl could not be verified" in capsys.readouterr().out
