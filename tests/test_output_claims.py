"""Two writers of one output: the second is refused in one line naming the first, whose
outputs are the ones left; for every command that writes reports, tables or folders.

Each race uses real, separate processes (the lock is the kernel's, between processes). The
first writer is held right after it claimed its outputs by the test hook of
``novabench.run.lock`` (a FIFO it reads to its end), so the second starts while the first
has checked nothing and written nothing yet: exactly the window the old code lost outputs in.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import novabench
from novabench.cli import main
from novabench.data.release import read_release
from novabench.run.lock import HOLD_AFTER_CLAIM_VARIABLE, lock_path_for
from tests.release_factory import write_v1_release


def _env(**extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": str(Path(novabench.__file__).resolve().parents[1]),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        **extra,
    }


def _nova(*args: str | Path) -> list[str]:
    return [sys.executable, "-m", "novabench.cli", *map(str, args)]


@contextmanager
def held_after_claiming(command: list[str], fifo: Path) -> Iterator[subprocess.Popen[bytes]]:
    """Start ``command``; yield once it holds its outputs' locks, let it go on at exit.

    The first writer opens ``fifo`` for reading once it holds every lock and reads it to its
    end; opening the write end succeeds only while it is there, and closing it lets it go on.
    """
    os.mkfifo(fifo)
    first = subprocess.Popen(
        command,
        env=_env(**{HOLD_AFTER_CLAIM_VARIABLE: str(fifo)}),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    write_end = None
    try:
        for _ in range(3000):  # at most about 60 s on a loaded machine
            try:
                write_end = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
                break
            except OSError:  # no reader yet (ENXIO)
                if first.poll() is not None:
                    pytest.fail(
                        f"the first writer ended ({first.returncode}) without holding its "
                        f"outputs: {first.stderr.read().decode() if first.stderr else ''}"
                    )
                time.sleep(0.02)
        else:
            pytest.fail("the first writer never claimed its outputs")
        yield first
    finally:
        if write_end is not None:
            os.close(write_end)  # the first writer reads its end of file and goes on
        first.wait(timeout=300)


def _refusal(result: subprocess.CompletedProcess[bytes], first_pid: int, output: Path) -> str:
    message = result.stderr.decode().strip()
    assert result.returncode == 2, message
    assert len(message.splitlines()) == 1, message
    assert f"pid {first_pid} " in message and "is being written by another process" in message
    assert str(output) in message
    return message


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A 3-case release, two localisation prediction files and one report of each."""
    root = tmp_path_factory.mktemp("claims")
    release = write_v1_release(root / "release", n_cases=3, image_size=(64, 64))
    images = read_release(release).images
    found = root / "found.jsonl"  # every gold box found: the better model
    found.write_text(
        "".join(
            json.dumps({"filename": image.filename, "boxes": [list(image.boxes[0])]}) + "\n"
            for image in images
            if image.boxes
        ),
        encoding="utf-8",
    )
    empty = root / "empty.jsonl"  # nothing found anywhere
    empty.write_text(
        "".join(json.dumps({"filename": image.filename, "boxes": []}) + "\n" for image in images),
        encoding="utf-8",
    )
    paths = {"release": release, "found": found, "empty": empty}
    for name in ("found", "empty"):
        report = root / f"{name}-report.json"
        argv = [*_evaluate(release, paths[name], report), "-q"]
        assert main(argv[3:]) == 0
        paths[f"{name}_report"] = report
    return paths


def _evaluate(release: Path, predictions: Path, out: Path, *extra: str | Path) -> list[str]:
    return _nova(
        "evaluate",
        "--data",
        release,
        "--predictions",
        predictions,
        "--out",
        out,
        "--task",
        "localization",
        "--bootstrap",
        "0",
        "--no-breakdowns",
        *extra,
    )


def test_two_evaluates_on_the_same_outputs_the_second_is_refused(
    workspace: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "e4" / "report.json"
    outputs = ("--items", tmp_path / "e4" / "items", "--markdown", tmp_path / "e4" / "report.md")
    first_command = _evaluate(workspace["release"], workspace["found"], out, *outputs)
    second_command = _evaluate(workspace["release"], workspace["empty"], out, *outputs)
    with held_after_claiming(first_command, tmp_path / "hold") as first:
        second = subprocess.run(second_command, env=_env(), capture_output=True, timeout=300)
        assert not out.exists()  # the second wrote nothing while the first was held
    assert first.returncode == 0, first.stderr.read().decode() if first.stderr else ""
    _refusal(second, first.pid, tmp_path / "e4" / "items")  # the first in path order
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["predictions"]["sha256"] == [_sha256(workspace["found"])]
    assert (tmp_path / "e4" / "report.md").is_file()
    assert (tmp_path / "e4" / "items" / "images.parquet").is_file()
    leftovers = [path.name for path in (tmp_path / "e4").iterdir()]
    assert sorted(leftovers) == ["items", "report.json", "report.md"]  # no lock file left


def test_a_shared_items_folder_is_claimed_with_different_reports(
    workspace: dict[str, Path], tmp_path: Path
) -> None:
    items = tmp_path / "e5" / "items"
    first_out, second_out = tmp_path / "e5a" / "report.json", tmp_path / "e5b" / "report.json"
    first_command = _evaluate(workspace["release"], workspace["found"], first_out, "--items", items)
    second_command = _evaluate(
        workspace["release"], workspace["empty"], second_out, "--items", items
    )
    with held_after_claiming(first_command, tmp_path / "hold") as first:
        second = subprocess.run(second_command, env=_env(), capture_output=True, timeout=300)
    assert first.returncode == 0
    _refusal(second, first.pid, items)
    assert not (tmp_path / "e5b").exists()  # the folder made for its lock removed again
    # The tables are still the ones the first report pins: the leaderboard reads it.
    assert main(["leaderboard", str(first_out), "-q"]) == 0


def test_two_leaderboards_on_the_same_outputs_the_second_is_refused(
    workspace: dict[str, Path], tmp_path: Path
) -> None:
    board = tmp_path / "L"
    outputs = ["--out", board / "lb.json", "--markdown", board / "lb.md", "--csv", board / "lb.csv"]
    first_command = _nova("leaderboard", workspace["found_report"], *outputs, "-q")
    second_command = _nova("leaderboard", workspace["empty_report"], *outputs, "-q")
    with held_after_claiming(first_command, tmp_path / "hold") as first:
        second = subprocess.run(second_command, env=_env(), capture_output=True, timeout=300)
    assert first.returncode == 0
    _refusal(second, first.pid, board / "lb.csv")  # the first in path order
    board_models = json.loads((board / "lb.json").read_text(encoding="utf-8"))["models"]
    assert [model["path"] for model in board_models] == ["found-report.json"]


# `nova export` loads datasets in its process (about 1 CPU s, 2 s of waiting): it runs with the
# slow tests; the same claim is refused fast for the other three writers.
@pytest.mark.parametrize(
    "command", [pytest.param("export", marks=pytest.mark.slow), "sample", "compare", "space"]
)
def test_folder_and_comparison_writers_refuse_an_output_being_written(
    command: str, workspace: dict[str, Path], tmp_path: Path, lock_holder: Any
) -> None:
    out = tmp_path / ("comparison.json" if command == "compare" else "out")
    argv = {
        "export": _nova("export", workspace["release"], out, "-q"),
        "sample": _nova("sample", out, "--cases", "2", "-q"),
        "space": _nova("space", "build", "metric", out),
        "compare": _nova(
            "compare",
            "--data",
            workspace["release"],
            "--a",
            workspace["found"],
            "--b",
            workspace["empty"],
            "--out",
            out,
            "--task",
            "localization",
            "--bootstrap",
            "20",
        ),
    }[command]
    holder = lock_holder(out, "nova export")
    result = subprocess.run(argv, env=_env(), capture_output=True, timeout=300)
    _refusal(result, holder.pid, out)
    assert not out.exists()
    assert sorted(path.name for path in tmp_path.iterdir()) == [lock_path_for(out).name]


def test_report_save_refuses_a_folder_whose_report_another_process_writes(
    workspace: dict[str, Path], tmp_path: Path, lock_holder: Any
) -> None:
    from novabench import evaluate_model
    from novabench.errors import NovaInputError

    report = evaluate_model(
        lambda image, prompt: "no target",
        workspace["release"],
        tasks="localization",
        run_file=tmp_path / "run.jsonl",
        n_resamples=0,
        progress=False,
    )
    folder = tmp_path / "saved"
    folder.mkdir()
    holder = lock_holder(folder / "report.json", "nova export")
    with pytest.raises(NovaInputError) as refused:
        report.save(folder)
    assert f"pid {holder.pid} " in str(refused.value)
    assert str(folder / "report.json") in str(refused.value)
    assert sorted(path.name for path in folder.iterdir()) == ["report.json.lock"]


def test_parse_checks_its_output_again_once_it_holds_the_lock(
    workspace: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    """A parse that finished between this one's first check and its lock is not replaced."""
    import novabench.cli.parse as parse_command
    from novabench.run import lock

    raw = tmp_path / "raw.jsonl"
    image = read_release(workspace["release"]).images[0]
    raw.write_text(
        json.dumps({"filename": image.filename, "raw_boxes": "no target"}) + "\n", encoding="utf-8"
    )
    out = tmp_path / "pred.jsonl"
    earlier = json.dumps({"filename": image.filename, "boxes": []}) + "\n"

    @contextmanager
    def lock_after_another_parse(path: Any, command: str) -> Iterator[Path]:
        out.write_text(earlier, encoding="utf-8")  # the other parse's finished file
        with lock.writer_lock(path, command) as held:
            yield held

    monkeypatch.setattr(parse_command, "writer_lock", lock_after_another_parse)
    code = main(["parse", str(raw), "--data", str(workspace["release"]), "--out", str(out)])
    assert code == 2
    assert "exists already" in capsys.readouterr().err
    assert out.read_text(encoding="utf-8") == earlier
