"""One writer per run file: a second `nova run` / `nova parse` / `nova merge` on the same
output fails at once in one line naming the holder, and leaves the file to the first.

Every check of the lock uses real, separate processes: the lock is the kernel's, between
processes. A folder the user cannot write is refused before any lock is taken: one process.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import novabench
from novabench.cli import main
from novabench.run.lock import lock_path_for
from tests.fake_openai_server import FakeOpenAIServer
from tests.release_factory import write_v1_release

DIAGNOSIS = json.dumps({"most_likely_diagnosis": "Glioblastoma"})


def _env() -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": str(Path(novabench.__file__).resolve().parents[1]),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
    }


def _nova(*args: str) -> list[str]:
    return [sys.executable, "-m", "novabench.cli", *args]


def _wait_for(condition: Any, process: subprocess.Popen[bytes]) -> None:
    """Poll until ``condition()`` (bounded); fail with the process's stderr if it ended first."""
    for _ in range(3000):  # at most about 60 s on a loaded machine
        if condition():
            return
        if process.poll() is not None:
            stderr = process.stderr.read().decode() if process.stderr else ""
            pytest.fail(f"the first process ended early ({process.returncode}): {stderr}")
        time.sleep(0.02)
    pytest.fail("the first process never took the lock")


@pytest.fixture(scope="module")
def release_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_v1_release(tmp_path_factory.mktemp("release"), n_cases=3, image_size=(64, 64))


def test_second_nova_run_on_the_same_output_fails_while_the_first_writes(
    release_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "raw.jsonl"
    release_answers = threading.Event()

    def held_answer(body: dict[str, Any]) -> str:
        release_answers.wait(120)  # the first run stays mid-way until the second has tried
        return DIAGNOSIS

    with FakeOpenAIServer(answer=held_answer, keep_alive=True) as server:
        command = _nova(
            "run",
            "--data",
            str(release_dir),
            "--task",
            "diagnosis",
            "--endpoint",
            server.base_url,
            "--model-name",
            "fake-vlm",
            "--max-concurrency",
            "1",
            "--out",
            str(out),
            "--no-progress",
        )
        first = subprocess.Popen(
            command, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        try:
            _wait_for(lambda: server.n_requests > 0, first)  # it holds the lock and is asking
            second = subprocess.run(command, env=_env(), capture_output=True, timeout=120)
        finally:
            release_answers.set()
            first.wait(timeout=120)
        first_stderr = first.stderr.read().decode() if first.stderr else ""
        if first.stderr:
            first.stderr.close()

    assert first.returncode == 0, first_stderr
    assert second.returncode == 2
    message = second.stderr.decode().strip()
    assert len(message.splitlines()) == 1, message
    assert str(out) in message
    assert f"pid {first.pid} " in message and "nova run" in message
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(line["case_id"] for line in lines) == ["case0001", "case0002", "case0003"]
    assert not lock_path_for(out).exists()  # the first run removed its lock when done


def test_parse_and_merge_refuse_an_output_another_process_writes(
    release_dir: Path, tmp_path: Path, lock_holder: Any
) -> None:
    raw = tmp_path / "raw.jsonl"
    raw.write_text(
        json.dumps({"case_id": "case0001", "raw_diagnoses": DIAGNOSIS}) + "\n", encoding="utf-8"
    )
    out = tmp_path / "pred.jsonl"
    out.write_text(
        json.dumps({"case_id": "case0002", "diagnoses": ["Meningioma"]}) + "\n", encoding="utf-8"
    )
    before = out.read_bytes()
    holder = lock_holder(out)
    commands = {
        "parse": _nova("parse", str(raw), "--data", str(release_dir), "--out", str(out), "--force"),
        "merge": _nova("merge", str(raw), "--out", str(out), "--force"),
    }
    for name, command in commands.items():
        result = subprocess.run(command, env=_env(), capture_output=True, timeout=120)
        message = result.stderr.decode().strip()
        assert result.returncode == 2, (name, message)
        assert len(message.splitlines()) == 1, message
        assert f"pid {holder.pid} " in message and str(out) in message
        assert out.read_bytes() == before, name


def test_a_dead_holders_lock_file_does_not_block(release_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "raw.jsonl"
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    # What a killed run leaves behind: the lock file with its holder, but no lock on it.
    lock_path_for(out).write_text(
        json.dumps({"pid": int(dead.stdout), "command": "nova run", "started_at": "earlier"})
    )
    args = ["run", "--data", str(release_dir), "--task", "diagnosis", "--baseline", "floor"]
    assert main([*args, "--out", str(out), "--no-progress"]) == 0
    assert len(out.read_text().splitlines()) == 3
    assert not lock_path_for(out).exists()


def test_a_killed_writers_temporary_copies_are_removed_by_the_next_writer(
    release_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], lock_holder: Any
) -> None:
    # A run killed while its manifest was being rewritten left `.raw.jsonl.manifest.json.
    # <random>.tmp` beside the file for ever, and nothing said so.
    from novabench.run import lock
    from novabench.run.manifest import MANIFEST_SUFFIX

    assert lock._MANIFEST_SUFFIX == MANIFEST_SUFFIX
    out = tmp_path / "raw.jsonl"
    args = ["run", "--data", str(release_dir), "--task", "diagnosis", "--baseline", "floor"]
    assert main([*args, "--out", str(out), "--no-progress"]) == 0
    answers = out.read_bytes()
    unfinished = [
        tmp_path / ".raw.jsonl.manifest.json.k2j9x1ab.tmp",  # write_text_atomic of the manifest
        tmp_path / ".raw.jsonl.q1w2e3r4.tmp",  # write_text_atomic of the file (nova merge)
        tmp_path / ".raw.jsonl.zz11yy_2.partial",  # nova parse --out
    ]
    kept = [
        tmp_path / ".other.jsonl.q1w2e3r4.tmp",  # another file's
        tmp_path / "raw.jsonl.partial-20261206T045000Z",  # a cut-off line the runner saved
        tmp_path / ".raw.jsonl.notes.txt",
    ]
    # While another process holds the lock, the temporaries may be its own: left alone.
    holder = lock_holder(out)
    for path in [*unfinished, *kept]:
        path.write_text('{"half', encoding="utf-8")
    assert main([*args, "--out", str(out), "--no-progress"]) == 2
    assert all(path.exists() for path in unfinished)
    holder.communicate(b"\n", timeout=60)
    capsys.readouterr()

    assert main([*args, "--out", str(out), "--no-progress"]) == 0
    said = [line for line in capsys.readouterr().err.splitlines() if "unfinished write" in line]
    assert said == [
        f"nova: removed {path}, an unfinished write left by an interrupted writer of {out} "
        "(this command holds its writer lock, so no other writer is at work)"
        for path in sorted(unfinished)
    ]
    assert not any(path.exists() for path in unfinished)
    assert all(path.read_text(encoding="utf-8") == '{"half' for path in kept)
    assert out.read_bytes() == answers  # every item was answered: nothing asked again


@pytest.mark.parametrize(
    ("number", "lock_left", "expected"),
    [
        (errno.EACCES, False, "permission denied (no file can be made in its folder {folder})"),
        (errno.EROFS, False, "the file system is read-only (no file can be made in its folder "),
        (
            errno.EACCES,
            True,
            "permission denied (its writer lock raw.jsonl.lock there belongs to another user)",
        ),
    ],
)
def test_a_run_folder_this_user_cannot_write_names_the_run_file_and_why(
    number: int,
    lock_left: bool,
    expected: str,
    release_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = tmp_path / "runs"
    folder.mkdir()
    out = folder / "raw.jsonl"
    if lock_left:  # e.g. a colleague's run, killed, in a shared folder
        lock_path_for(out).write_text("{}\n", encoding="utf-8")
    real_open = os.open

    def kernel_refuses(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        # what the kernel says to a user without write permission on runs/ (tests run as
        # root here, which permission bits do not stop)
        if Path(path).parent == folder and flags & (os.O_WRONLY | os.O_RDWR):
            raise OSError(number, os.strerror(number), str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", kernel_refuses)
    args = ["run", "--data", str(release_dir), "--task", "diagnosis", "--baseline", "floor"]
    assert main([*args, "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"nova run: error: cannot write {out}: " + expected.format(folder=folder))
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not out.exists()
