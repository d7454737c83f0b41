"""A run that was interrupted, or is still being written, says so when scored (user11).

`nova evaluate` scored a run whose manifest said ``running`` or ``interrupted`` with exit 0,
the status only inside the report's JSON; a Ctrl-C'd ``nova run --task all`` gave a
localisation-only report with no word of the two tasks asked and never answered.
"""

from __future__ import annotations

import csv
import hashlib
import html
import io
import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from novabench.cli import main
from novabench.errors import NovaInputError
from novabench.report import evaluate_predictions, render_markdown, render_table
from novabench.report.leaderboard import build_leaderboard, leaderboard_csv
from novabench.report.render import report_first_lines
from novabench.run.manifest import RunManifest, file_record

FAST = ["--bootstrap", "0", "--no-breakdowns", "--exclude", "BERTScore-F1", "--exclude", "METEOR"]


def partial_run(floor_run: Path, folder: Path, status: str, name: str = "run.jsonl") -> Path:
    """The floor run cut short: its localisation lines only, its manifest saying ``status``.

    The manifest still says the three tasks were asked, as a ``nova run --task all`` stopped
    during its first task leaves it.
    """
    lines = floor_run.read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [line for line in lines if json.loads(line)["task"] == "localization"]
    assert 0 < len(kept) < len(lines)
    out = folder / name
    out.write_text("".join(kept[: len(kept) // 2]), encoding="utf-8")
    manifest = RunManifest.read(floor_run)
    assert manifest is not None and manifest.tasks == ["localization", "captioning", "diagnosis"]
    # Its counts as the runner records them: only the lines written were answered.
    counts = {
        task: {**recorded, "done_before": 0, "answered": 0, "errors": 0}
        for task, recorded in (manifest.counts or {}).items()
    }
    counts["localization"]["answered"] = len(kept) // 2
    # The bytes as the runner records them: at its start while running (an empty file),
    # as it left them once it ended.
    recorded = {"sha256": hashlib.sha256(b"").hexdigest(), "bytes": 0}
    if status != "running":
        recorded = file_record(out)
    replace(manifest, status=status, counts=counts, file=recorded).write(out)
    return out


def evaluate(release: Path, predictions: Path, out: Path, *extra: str) -> int:
    return main(
        ["evaluate", "--data", str(release), "--predictions", str(predictions), "--out", str(out)]
        + FAST
        + list(extra)
    )


@pytest.fixture
def writer_elsewhere(tmp_path: Path) -> Iterator[Any]:
    """Hold a file's writer lock in another process, as a `nova run` at work does."""
    held: list[subprocess.Popen[str]] = []

    def hold(predictions: Path) -> None:
        code = (
            "import sys\n"
            "from novabench.run.lock import writer_lock\n"
            f"with writer_lock({str(predictions)!r}, 'nova run'):\n"
            "    print('held', flush=True)\n"
            "    sys.stdin.read()\n"  # until the test closes our stdin
        )
        process = subprocess.Popen(
            [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        held.append(process)
        assert process.stdout is not None and process.stdout.readline() == "held\n"

    yield hold
    for process in held:
        assert process.stdin is not None
        process.stdin.close()
        process.wait(timeout=30)


def test_an_interrupted_run_says_so_and_names_the_tasks_never_answered_in_every_output(
    sample_release: Path, sample_floor_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = partial_run(sample_floor_run, tmp_path, "interrupted")
    out = tmp_path / "report.json"
    markdown, page = tmp_path / "report.md", tmp_path / "report.html"
    code = evaluate(sample_release, run, out, "--markdown", str(markdown), "--html", str(page))
    assert code == 0
    expected = (
        "unfinished run: run.jsonl has manifest status 'interrupted' (it ended before it asked "
        "every item); captioning and diagnosis were asked and never answered (no line)"
    )
    report = json.loads(out.read_text(encoding="utf-8"))
    assert sorted(report["tasks"]) == ["localization"]
    recorded = report["predictions"]["unfinished_run"]
    assert recorded["notice"] == expected
    assert recorded["asked_not_answered"] == ["captioning", "diagnosis"]
    assert report_first_lines(report)[1] == expected
    terminal = capsys.readouterr().out.splitlines()
    assert terminal[1] == expected  # right after the synthetic-data notice
    assert f"**{expected}**" in markdown.read_text(encoding="utf-8").splitlines()
    read_first = page.read_text(encoding="utf-8").split('id="warnings"', 1)[1].split("</ul>")[0]
    assert read_first.split("<li>")[2] == f"{html.escape(expected)}</li>"


def test_a_complete_run_has_no_such_line(
    sample_release: Path, sample_floor_run: Path, tmp_path: Path
) -> None:
    out = tmp_path / "report.json"
    assert evaluate(sample_release, sample_floor_run, out, "--task", "localization") == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    assert "unfinished_run" not in report["predictions"]
    assert not any("unfinished run" in line for line in report_first_lines(report))


def test_a_run_still_being_written_is_refused_in_one_line_unless_allowed(
    sample_release: Path,
    sample_floor_run: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    writer_elsewhere: Any,
) -> None:
    run = partial_run(sample_floor_run, tmp_path, "running")
    writer_elsewhere(run)
    out = tmp_path / "report.json"
    assert evaluate(sample_release, run, out) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and error[0].startswith(f"nova evaluate: error: {run}, field 'status': ")
    assert "still being written (pid " in error[0]
    assert error[0].endswith("or pass --allow-running to score the answers so far")
    assert not out.exists()
    # A Python call is told its argument instead of the option.
    with pytest.raises(NovaInputError) as refused:
        evaluate_predictions(sample_release, run, tasks=["localization"], n_resamples=0)
    assert refused.value.message.endswith("or pass allow_running=True to score the answers so far")
    assert evaluate(sample_release, run, out, "--allow-running") == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    line = report["predictions"]["unfinished_run"]["notice"]
    assert line.startswith("unfinished run: run.jsonl was still being written when scored ")
    assert "not of the run once it ends" in line
    assert line.endswith("captioning and diagnosis were asked and not answered yet (no line)")
    assert line in render_table(report) and f"**{line}**" in render_markdown(report)
    # Ranked on a board only with a warning saying its numbers were a snapshot.
    board = build_leaderboard([report], ["running.json"], n_resamples=20)
    assert f"warning: running.json: {line}" in board["warnings"]
    (row,) = [row for row in csv.DictReader(io.StringIO(leaderboard_csv(board))) if row["run"]]
    assert row["run"].startswith("running (still being written when scored); captioning")
    # nova compare reads runs the same way: refused while written.
    arguments = ["compare", "--data", str(sample_release), "--a", str(sample_floor_run), "--b",
                 str(run), "--out", str(tmp_path / "c.json"), "--task", "localization",
                 "--bootstrap", "20"]  # fmt: skip
    capsys.readouterr()
    assert main(arguments) == 2
    assert "still being written" in capsys.readouterr().err


def test_a_running_status_with_no_writer_known_is_not_called_killed(
    sample_release: Path, sample_floor_run: Path, tmp_path: Path
) -> None:
    """No lock file: the file may be a copy of a run still going on another machine (user15)."""
    run = partial_run(sample_floor_run, tmp_path, "running")
    out = tmp_path / "report.json"
    assert evaluate(sample_release, run, out) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    line = report["predictions"]["unfinished_run"]["notice"]
    assert line.startswith(
        "unfinished run: run.jsonl is not finished (no end record): manifest status 'running'"
    )
    assert "killed" not in line and "ended" not in line
    board = build_leaderboard([report], ["copied.json"], n_resamples=20)
    (row,) = [row for row in csv.DictReader(io.StringIO(leaderboard_csv(board))) if row["run"]]
    assert row["run"] == (
        "running, not finished (no end record); captioning, diagnosis asked, no line"
    )


def _dead_pid() -> int:
    """The pid of a process of this machine that has ended."""
    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True, check=True)  # fmt: skip
    return int(child.stdout)


@pytest.mark.parametrize("on_this_machine", [True, False])
def test_a_writer_is_said_to_have_ended_only_when_known_dead_here(
    sample_release: Path, sample_floor_run: Path, tmp_path: Path, on_this_machine: bool
) -> None:
    """The lock file a SIGKILLed `nova run` leaves names its pid and host."""
    import socket

    run = partial_run(sample_floor_run, tmp_path, "running")
    host = socket.gethostname() if on_this_machine else socket.gethostname() + "-elsewhere"
    holder = {"pid": _dead_pid(), "host": host, "command": "nova run", "started_at": "t0"}
    Path(f"{run}.lock").write_text(json.dumps(holder) + "\n", encoding="utf-8")
    out = tmp_path / "report.json"
    assert evaluate(sample_release, run, out) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    line = report["predictions"]["unfinished_run"]["notice"]
    board = build_leaderboard([report], ["r.json"], n_resamples=20)
    (row,) = [row for row in csv.DictReader(io.StringIO(leaderboard_csv(board))) if row["run"]]
    if on_this_machine:
        assert line.startswith(
            f"unfinished run: run.jsonl has manifest status 'running' but its writer (pid "
            f"{holder['pid']} on {host}, nova run, since t0) has ended without recording how "
            "(e.g. killed): scored as it stands"
        )
        assert row["run"].startswith("running but its writer ended (e.g. killed);")
    else:  # another machine's pid cannot be checked from here
        assert "is not finished (no end record)" in line and "killed" not in line
        assert row["run"].startswith("running, not finished (no end record);")


def test_compare_and_leaderboard_carry_the_line(
    sample_release: Path, sample_floor_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = partial_run(sample_floor_run, tmp_path, "interrupted", name="cut.jsonl")
    arguments = ["compare", "--data", str(sample_release), "--a", str(sample_floor_run), "--b",
                 str(run), "--out", str(tmp_path / "c.json"), "--markdown", str(tmp_path / "c.md"),
                 "--task", "localization", "--bootstrap", "20"]  # fmt: skip
    assert main(arguments) == 0
    notice = (
        "unfinished run: cut.jsonl has manifest status 'interrupted' (it ended before it asked "
        "every item); captioning and diagnosis were asked and never answered (no line)"
    )
    terminal = capsys.readouterr().out
    assert f"B (baseline:floor) {notice}" in terminal.splitlines()
    assert f"**B (baseline:floor) {notice}**" in (tmp_path / "c.md").read_text(encoding="utf-8")
    assert "A (baseline:floor) unfinished" not in terminal

    reports = []
    for predictions, name in ((sample_floor_run, "full.json"), (run, "cut.json")):
        assert evaluate(sample_release, predictions, tmp_path / name, "--task", "localization") == 0
        reports.append(json.loads((tmp_path / name).read_text(encoding="utf-8")))
    board = build_leaderboard(reports, ["full.json", "cut.json"], n_resamples=20)
    assert f"warning: cut.json: {notice}" in board["warnings"]
    assert not any(line.startswith("warning: full.json: unfinished") for line in board["warnings"])
    rows = list(csv.DictReader(io.StringIO(leaderboard_csv(board))))
    runs = {row["model"]: row["run"] for row in rows}
    assert runs["baseline:floor (cut.json)"] == "interrupted; captioning, diagnosis asked, no line"
    assert runs["baseline:floor (full.json)"] == ""


def test_merge_refuses_a_shard_still_being_written_unless_allowed_and_then_says_so(
    sample_release: Path,
    sample_floor_run: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    writer_elsewhere: Any,
) -> None:
    """user13: `nova merge` took a shard at work with exit 0; its report then said "killed"."""
    running = partial_run(sample_floor_run, tmp_path, "running", "shard1.jsonl")
    taken = set(running.read_text(encoding="utf-8").splitlines(keepends=True))
    finished = tmp_path / "shard0.jsonl"
    rest = sample_floor_run.read_text(encoding="utf-8").splitlines(keepends=True)
    finished.write_text("".join(line for line in rest if line not in taken), encoding="utf-8")
    manifest = RunManifest.read(sample_floor_run)
    assert manifest is not None
    replace(manifest, status="complete", file=file_record(finished)).write(finished)
    writer_elsewhere(running)
    merged = tmp_path / "merged.jsonl"
    merge = [
        "merge",
        str(finished),
        str(running),
        "--out",
        str(merged),
        "--data",
        str(sample_release),
    ]
    capsys.readouterr()

    assert main(merge) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1
    assert error[0].startswith(f"nova merge: error: {running}, field 'status': the run is still ")
    assert "being written (pid " in error[0] and "--allow-running" in error[0]
    assert not merged.exists() and not RunManifest.path_for(merged).exists()

    assert main([*merge, "--allow-running"]) == 0
    said = capsys.readouterr().err
    assert f"note: {running} was still being written (pid " in said
    recorded = RunManifest.read(merged)
    assert recorded is not None and recorded.status == "mixed: complete, running-when-merged"
    assert recorded.merged_from is not None
    assert recorded.merged_from[1]["status"] == "running"
    assert recorded.merged_from[1]["writer_when_merged"].startswith("pid ")
    assert recorded.merged_from[1]["answers_when_merged"] == {"localization": len(taken)}
    assert "answers_when_merged" not in recorded.merged_from[0]
    out = tmp_path / "report.json"
    assert evaluate(sample_release, merged, out) == 0
    line = json.loads(out.read_text(encoding="utf-8"))["predictions"]["unfinished_run"]["notice"]
    assert line == (
        "unfinished run: merged.jsonl was merged while a shard was still being written "
        "(manifest status 'mixed: complete, running-when-merged', nova merge --allow-running): "
        "it holds that shard's answers up to the merge, not the ones given after"
    )


def test_merging_a_running_shard_sets_its_half_written_last_line_aside_and_recounts_it(
    sample_release: Path,
    sample_floor_run: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    writer_elsewhere: Any,
) -> None:
    """A shard at work ends mid-line while its writer appends: a snapshot merge took exit 2 on
    "not valid JSON", and its merged counts were the running shard's manifest's (of its start)."""
    running = partial_run(sample_floor_run, tmp_path, "running", "shard1.jsonl")
    complete = running.read_text(encoding="utf-8").splitlines(keepends=True)
    # The writer is in the middle of its next line: the bytes so far, no line break yet.
    half = '{"filename": "case0040_001.png", "task": "localization", "raw_boxes": "lesion: [1'
    with running.open("a", encoding="utf-8") as handle:
        handle.write(half)
    # Its manifest as the writer left it at its start: nothing answered yet.
    started = RunManifest.read(running)
    assert started is not None and started.counts is not None
    counts = {task: {**recorded, "answered": 0} for task, recorded in started.counts.items()}
    replace(started, counts=counts).write(running)
    stale = RunManifest.read(running)
    assert stale is not None and stale.counts is not None
    assert stale.counts["localization"]["answered"] != len(complete)  # the start's counts
    writer_elsewhere(running)
    merged = tmp_path / "merged.jsonl"
    capsys.readouterr()

    arguments = ["merge", str(running), "--out", str(merged), "--allow-running"]
    assert main([*arguments, "--data", str(sample_release)]) == 0
    notes = [line for line in capsys.readouterr().err.splitlines() if line.startswith("note:")]
    # What its manifest verifies of it (nothing: its writer wrote every byte since), then
    # the snapshot's own note.
    assert len(notes) == 2
    assert notes[0].startswith(f"note: {running.name}: none of its ")
    notes = notes[1:]
    assert f"its line {len(complete) + 1} was half-written ({len(half)} bytes" in notes[0]
    assert "set aside, not merged" in notes[0]
    taken = [json.loads(line) for line in merged.read_text(encoding="utf-8").splitlines()]
    assert taken == [json.loads(line) for line in complete]
    assert running.read_text(encoding="utf-8").endswith(half)  # the writer's file untouched
    recorded = RunManifest.read(merged)
    assert recorded is not None and recorded.counts is not None and recorded.merged_from
    assert recorded.counts["localization"]["answered"] == len(complete)
    assert recorded.counts["localization"]["done_before"] == 0
    assert recorded.counts["localization"]["items"] == stale.counts["localization"]["items"]
    assert recorded.counts["captioning"]["answered"] == 0  # asked in the manifest, no line yet
    assert recorded.merged_from[0]["counts"] == recorded.counts
    assert "line " + str(len(complete) + 1) in recorded.merged_from[0]["set_aside"]
    # The shard's bytes as merged: its complete lines, none of which its manifest recorded.
    taken_bytes = "".join(complete).encode("utf-8")
    assert recorded.merged_from[0]["file"] == {
        "sha256": hashlib.sha256(taken_bytes).hexdigest(),
        "bytes": len(taken_bytes),
        "unverified_from": [
            {
                "path": running.name,
                "bytes": len(taken_bytes),
                "reason": "appended after its manifest last recorded it",
            }
        ],
    }


def test_a_format_1_shard_merged_while_running_records_only_the_bytes_merged_as_unverified(
    sample_release: Path, sample_floor_run: Path, tmp_path: Path, writer_elsewhere: Any
) -> None:
    """trust24: a running shard whose manifest predates the digest (format_version 1) was
    recorded as unverified for its whole size, its half-written last line (set aside, not
    merged) included."""
    running = partial_run(sample_floor_run, tmp_path, "running", "shard1.jsonl")
    complete = running.read_text(encoding="utf-8").splitlines(keepends=True)
    with running.open("a", encoding="utf-8") as handle:
        handle.write(HALF_LINE)
    manifest_path = RunManifest.path_for(running)
    older = json.loads(manifest_path.read_text(encoding="utf-8"))
    del older["file"]
    older["format_version"] = 1
    manifest_path.write_text(json.dumps(older), encoding="utf-8")
    writer_elsewhere(running)
    merged = tmp_path / "merged.jsonl"
    arguments = ["merge", str(running), "--out", str(merged), "--allow-running"]
    assert main([*arguments, "--data", str(sample_release)]) == 0
    recorded = RunManifest.read(merged)
    assert recorded is not None and recorded.merged_from and recorded.file
    taken_bytes = len("".join(complete).encode("utf-8"))
    assert running.stat().st_size == taken_bytes + len(HALF_LINE)
    entry = {"path": running.name, "bytes": taken_bytes,
             "reason": "its manifest records no SHA-256 of it"}  # fmt: skip
    assert recorded.merged_from[0]["file"]["unverified_from"] == [entry]
    assert recorded.file["unverified_from"] == [entry]


HALF_LINE = '{"filename": "case0040_001.png", "task": "localization", "raw_boxes": "lesion: [1'


def test_evaluating_a_running_run_sets_its_half_written_last_line_aside_with_one_note(
    sample_release: Path,
    sample_floor_run: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    writer_elsewhere: Any,
) -> None:
    """user17: `nova evaluate --allow-running` on a live writer's file ending mid-line took
    exit 2 on "not valid JSON ... `nova run` repairs it on resume"; merge set it aside."""
    run = partial_run(sample_floor_run, tmp_path, "running")
    complete = run.read_text(encoding="utf-8").splitlines(keepends=True)
    with run.open("a", encoding="utf-8") as handle:
        handle.write(HALF_LINE)
    writer_elsewhere(run)
    out = tmp_path / "report.json"
    capsys.readouterr()
    assert evaluate(sample_release, run, out, "--allow-running") == 0
    said = capsys.readouterr()
    report = json.loads(out.read_text(encoding="utf-8"))
    line = report["predictions"]["unfinished_run"]["notice"]
    expected = (
        f"its line {len(complete) + 1} was half-written ({len(HALF_LINE)} bytes, no line break "
        "yet): set aside, not scored"
    )
    assert line.startswith("unfinished run: run.jsonl was still being written when scored ")
    assert f"not of the run once it ends; {expected}" in line
    assert (said.out + said.err).count("half-written") == 1  # one note, said once
    assert report["predictions"]["box_answers"]["read_here"] == len(complete)  # the whole lines
    assert run.read_text(encoding="utf-8").endswith(HALF_LINE)  # the writer's file untouched


@pytest.mark.parametrize("status", ["running", "interrupted"])
def test_a_half_written_last_line_of_a_run_no_one_writes_keeps_its_error(
    sample_release: Path,
    sample_floor_run: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    status: str,
) -> None:
    # No writer: the line will never be finished, so it is the file's fault, as before.
    run = partial_run(sample_floor_run, tmp_path, status)
    number = len(run.read_text(encoding="utf-8").splitlines()) + 1
    with run.open("a", encoding="utf-8") as handle:
        handle.write(HALF_LINE)
    if status == "interrupted":  # stopped mid-line: its last manifest records the half line
        ended = RunManifest.read(run)
        assert ended is not None
        replace(ended, file=file_record(run)).write(run)
    out = tmp_path / "report.json"
    capsys.readouterr()
    assert evaluate(sample_release, run, out, "--allow-running") == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and f"{run}, line {number}: " in error[0]
    assert "not valid JSON" in error[0] and not out.exists()
