"""A writer killed between the renames of its outputs left ``.NAME.<pid>-<random>.tmp``
files that the next run neither removed nor named (trust13): the next writer of the same
outputs removes those whose process has ended, in one line naming them, and leaves alone
those of a process still running."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from novabench import _files
from novabench.cli import main

KILLED_WRITER = """
import os, signal, sys
from pathlib import Path
from novabench._files import StagedOutputs

out = Path(sys.argv[1])
outputs = StagedOutputs()
outputs.write_text(out / "r.json", '{"half": ')
outputs.write_text(out / "r.md", "# Report (never put in place)")
print(os.getpid(), flush=True)
os.kill(os.getpid(), signal.SIGKILL)  # no commit, no cleanup: as a kill -9 leaves it
"""


def staged_by_a_killed_writer(folder: Path) -> tuple[int, list[Path]]:
    """Run a writer that stages r.json and r.md in ``folder`` and is killed before renaming."""
    environment = {**os.environ, "PYTHONPATH": str(Path(_files.__file__).parents[1])}
    done = subprocess.run(
        [sys.executable, "-c", KILLED_WRITER, str(folder)],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
    )
    assert done.returncode == -9, done.stderr
    pid = int(done.stdout.strip())
    left = sorted(folder.glob(".r.*.tmp"))
    assert [path.name.split(".")[2] for path in left] == ["json", "md"]
    assert all(path.name.split(".")[3].startswith(f"{pid}-") for path in left)
    return pid, left


def test_the_next_evaluate_removes_what_a_killed_one_staged_and_says_so(
    sample_release: Path,
    sample_floor_run: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    pid, left = staged_by_a_killed_writer(tmp_path)
    assert not (tmp_path / "r.json").exists()  # killed before the first rename
    arguments = ["evaluate", "--data", str(sample_release), "--predictions",
                 str(sample_floor_run), "--task", "localization", "--bootstrap", "0",
                 "--no-breakdowns", "-q", "--out", str(tmp_path / "r.json"),
                 "--markdown", str(tmp_path / "r.md")]  # fmt: skip
    assert main(arguments) == 0
    said = [line for line in capsys.readouterr().err.splitlines() if line.startswith("nova: ")]
    why = "staged for it by a writer that was killed before putting it in place"
    assert said == [
        f"nova: removed {left[0].name} (process {pid} has ended) beside {tmp_path / 'r.json'}: {why}",
        f"nova: removed {left[1].name} (process {pid} has ended) beside {tmp_path / 'r.md'}: {why}",
    ]
    assert not any(path.exists() for path in left)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["r.json", "r.md"]
    assert "localization" in json.loads((tmp_path / "r.json").read_text())["tasks"]


def test_a_staged_file_of_a_running_writer_is_left_alone_and_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], file_notes: Callable[[], list[str]]
) -> None:
    sleeper = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                               stdin=subprocess.PIPE)  # fmt: skip
    try:
        busy = tmp_path / f".r.json.{sleeper.pid}-k2j9x1ab.tmp"
        busy.write_text('{"being written', encoding="utf-8")
        with _files.writing_all_or_none() as outputs:
            outputs.write_text(tmp_path / "r.json", "{}")
        assert busy.read_text(encoding="utf-8") == '{"being written'
        assert (tmp_path / "r.json").read_text(encoding="utf-8") == "{}"
        assert file_notes() == [
            f"left {busy.name} (process {sleeper.pid} is running) beside "
            f"{tmp_path / 'r.json'}: staged for it by a writer that may still be at work"
        ]
        assert capsys.readouterr().err == ""  # a library prints nothing: nova prints the note
    finally:
        sleeper.communicate(b"", timeout=60)


def test_a_staged_file_without_a_process_id_is_named_with_what_is_known_never_removed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], file_notes: Callable[[], list[str]]
) -> None:
    """user15: an old file holding no pid was removed "(its process has ended)": nothing
    records its process, so nothing tells whether it has ended (a writer on another machine,
    or an earlier novabench's): it is named, with its age, and left."""
    old = tmp_path / ".r.json.q1w2e3r4.tmp"  # an earlier novabench's name
    fresh = tmp_path / ".r.json.z9y8x7w6.tmp"
    other = tmp_path / ".r.md.q1w2e3r4.tmp"  # another output's: not this writer's business
    for path in (old, fresh, other):
        path.write_text("{", encoding="utf-8")
    three_hours_ago = time.time() - 3 * 3600 - 60
    os.utime(old, (three_hours_ago, three_hours_ago))
    os.utime(other, (three_hours_ago, three_hours_ago))
    assert _files.remove_stale_staged_files(tmp_path / "r.json") == []
    assert old.exists() and fresh.exists() and other.exists()
    assert capsys.readouterr().err == ""
    assert file_notes() == [
        f"left {fresh.name} (no process id recorded; changed in the last hour) beside "
        f"{tmp_path / 'r.json'}: staged for it by a writer that may still be at work",
        f"left {old.name} (no process id recorded; unchanged for more than 3 hours) "
        f"beside {tmp_path / 'r.json'}: staged for it by a writer this machine cannot tell "
        "has ended; remove it if no command is writing r.json (on any machine)",
    ]
