"""A command's outputs are written all or none.

Before, ``nova evaluate --out r.json --html UNWRITABLE`` wrote r.json (and the item tables)
and then failed on the page: the user was left with a report the next run refused to
replace without --force. Now every output of ``nova evaluate``, ``nova compare``, ``nova
leaderboard`` and ``NovaReport.save`` is staged first; one that cannot be written leaves
no new file and every existing one as it was.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from novabench import evaluate_model
from novabench.cli import main
from novabench.errors import NovaOutputError
from novabench.evaluator import NovaReport
from novabench.report.render import model_name
from tests.report.localization_runs import write_scored_runs

FAST = ["--task", "localization", "--bootstrap", "0"]


@pytest.fixture(scope="module")
def runs(sample_release: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two localisation runs (gold boxes, no boxes) and an evaluation report of each."""
    folder = tmp_path_factory.mktemp("runs")
    models = {"gold-boxes": True, "no-boxes": False}
    return write_scored_runs(sample_release, folder, models, ["-q", *FAST])


def make_html_unwritable(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any ``.html`` output fails as in a folder the user may not write (EACCES).

    The fault is injected where every atomic writer makes its temporary sibling, so it hits
    the page whichever writer stages it (a read-only folder does not stop root, /proc is
    Linux only).
    """
    real_mkstemp: Callable[..., Any] = tempfile.mkstemp

    def mkstemp(*args: Any, **kwargs: Any) -> Any:
        prefix, folder = str(kwargs.get("prefix", "")), str(kwargs.get("dir", ""))
        if prefix.endswith(".html.") or prefix.endswith(f".html.{os.getpid()}-"):  # staged
            raise PermissionError(errno.EACCES, "Permission denied", f"{folder}/{prefix}x1.tmp")
        return real_mkstemp(*args, **kwargs)

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)


def make_replace_fail(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Putting a staged ``name`` in place fails as on a full disk; every other rename works."""
    real_replace: Callable[..., Any] = os.replace

    def replace(source: Any, target: Any) -> None:
        if Path(target).name == name:
            raise OSError(errno.ENOSPC, "No space left on device", str(source))
        real_replace(source, target)

    monkeypatch.setattr(os, "replace", replace)


def _snapshot(folder: Path) -> dict[str, bytes | None]:
    """Every entry under ``folder`` (hidden temporary files too) with a file's bytes."""
    return {
        str(path.relative_to(folder)): path.read_bytes() if path.is_file() else None
        for path in sorted(folder.rglob("*"))
    }


def _one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "Traceback" not in error, error
    return error


def _evaluate(release: Path, run: Path, folder: Path, *extra: str) -> int:
    args = ["evaluate", "-q", "--data", str(release), "--predictions", str(run), *FAST]
    outputs = ["--out", str(folder / "r.json"), "--markdown", str(folder / "r.md")]
    return main([*args, *outputs, "--items", str(folder / "items"), *extra])


def test_a_successful_evaluate_writes_every_output_and_pins_the_tables_in_place(
    sample_release: Path, runs: dict[str, Path], tmp_path: Path
) -> None:
    assert (
        _evaluate(sample_release, runs["gold-boxes"], tmp_path, "--html", str(tmp_path / "r.html"))
        == 0
    )
    names = sorted(str(path.relative_to(tmp_path)) for path in tmp_path.rglob("*"))
    tables = ["images.parquet", "images.csv", "cases.parquet", "cases.csv"]
    assert names == sorted(["r.json", "r.md", "r.html", "items", *(f"items/{t}" for t in tables)])
    pins = json.loads((tmp_path / "r.json").read_text())["items"]["sha256"]
    in_place = {
        t: hashlib.sha256((tmp_path / "items" / t).read_bytes()).hexdigest() for t in tables
    }
    assert pins == in_place


def test_a_failing_html_path_leaves_no_report_and_no_tables(
    sample_release: Path,
    runs: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    make_html_unwritable(monkeypatch)
    page = tmp_path / "pages" / "c.html"
    assert _evaluate(sample_release, runs["gold-boxes"], tmp_path, "--html", str(page)) == 2
    assert (
        _one_line_error(capsys) == f"nova evaluate: error: cannot write {page}: permission denied"
    )
    assert _snapshot(tmp_path) == {}  # no report, no tables, no folder made for them


def test_a_failing_html_path_leaves_the_previous_report_and_tables_as_they_were(
    sample_release: Path,
    runs: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert _evaluate(sample_release, runs["gold-boxes"], tmp_path) == 0
    before = _snapshot(tmp_path)
    make_html_unwritable(monkeypatch)
    capsys.readouterr()
    page = str(tmp_path / "c.html")
    assert _evaluate(sample_release, runs["no-boxes"], tmp_path, "--html", page, "--force") == 2
    assert "cannot write" in _one_line_error(capsys)
    assert _snapshot(tmp_path) == before
    monkeypatch.undo()  # a good --html now: the earlier report is replaced with --force
    assert _evaluate(sample_release, runs["no-boxes"], tmp_path, "--html", page, "--force") == 0
    assert model_name(json.loads((tmp_path / "r.json").read_text())) == "no-boxes"


def _compare(release: Path, runs: dict[str, Path], *outputs: str) -> int:
    sides = ["--a", str(runs["gold-boxes"]), "--b", str(runs["no-boxes"])]
    return main(
        ["compare", "-q", "--data", str(release), *sides, *FAST[:2], "--bootstrap", "10", *outputs]
    )


def test_compare_writes_all_or_none(
    sample_release: Path,
    runs: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    outputs = ["--out", str(tmp_path / "c.json"), "--markdown", str(tmp_path / "c.md")]
    make_html_unwritable(monkeypatch)
    assert _compare(sample_release, runs, *outputs, "--html", str(tmp_path / "c.html")) == 2
    assert "c.html" in _one_line_error(capsys)
    assert _snapshot(tmp_path) == {}
    monkeypatch.undo()
    assert _compare(sample_release, runs, *outputs) == 0
    before = _snapshot(tmp_path)
    assert sorted(before) == ["c.json", "c.md"]
    make_html_unwritable(monkeypatch)
    args = ["--html", str(tmp_path / "c.html"), "--force"]
    assert _compare(sample_release, runs, *outputs, *args) == 2
    assert _snapshot(tmp_path) == before
    monkeypatch.undo()
    assert _compare(sample_release, runs, *outputs, *args) == 0
    assert sorted(_snapshot(tmp_path)) == ["c.html", "c.json", "c.md"]


def _leaderboard(runs: dict[str, Path], folder: Path, *extra: str) -> int:
    reports = [str(runs["gold-boxes report"]), str(runs["no-boxes report"])]
    outputs = ["--out", str(folder / "b.json"), "--markdown", str(folder / "b.md")]
    outputs += ["--csv", str(folder / "b.csv"), "--html", str(folder / "b.html")]
    return main(["leaderboard", "-q", *reports, "--bootstrap", "10", *outputs, *extra])


def test_leaderboard_writes_all_or_none(
    runs: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    make_html_unwritable(monkeypatch)
    assert _leaderboard(runs, tmp_path) == 2
    assert "b.html" in _one_line_error(capsys)
    assert _snapshot(tmp_path) == {}
    monkeypatch.undo()
    assert _leaderboard(runs, tmp_path) == 0
    before = _snapshot(tmp_path)
    assert sorted(before) == ["b.csv", "b.html", "b.json", "b.md"]
    (tmp_path / "b.html").unlink()  # the page alone is missing; the others are kept
    before.pop("b.html")
    make_html_unwritable(monkeypatch)
    assert _leaderboard(runs, tmp_path, "--force") == 2
    assert _snapshot(tmp_path) == before


def _no_target(image: object, prompt: str) -> str:
    return "no target"


@pytest.fixture(scope="module")
def report(sample_release: Path, tmp_path_factory: pytest.TempPathFactory) -> NovaReport:
    """A function's localisation run, scored, to save."""
    return evaluate_model(
        _no_target,
        sample_release,
        tasks="localization",
        run_file=tmp_path_factory.mktemp("model") / "run.jsonl",
        n_resamples=0,
        progress=False,
    )


def test_report_save_writes_all_or_none(
    report: NovaReport, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "saved"
    make_html_unwritable(monkeypatch)
    with pytest.raises(NovaOutputError, match="report.html: permission denied"):
        report.save(folder)
    assert not folder.exists()  # the folder made for the call is removed again
    monkeypatch.undo()
    report.save(folder)
    before = _snapshot(folder)
    make_html_unwritable(monkeypatch)
    with pytest.raises(NovaOutputError):
        report.save(folder, overwrite=True)
    assert _snapshot(folder) == before


def test_a_failed_rename_says_which_outputs_are_new_and_a_rerun_repairs_it(
    sample_release: Path,
    runs: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert _evaluate(sample_release, runs["gold-boxes"], tmp_path) == 0
    old_markdown = (tmp_path / "r.md").read_bytes()
    make_replace_fail(monkeypatch, "r.md")
    capsys.readouterr()
    assert _evaluate(sample_release, runs["no-boxes"], tmp_path, "--force") == 2
    error = _one_line_error(capsys)
    assert error.startswith(
        f"nova evaluate: error: cannot write {tmp_path / 'r.md'}: no space left on the device"
    )
    assert f"new: {tmp_path / 'items' / 'images.parquet'}" in error
    assert f"as before: {tmp_path / 'r.md'}" in error
    assert error.endswith("write them again (with --force) to have them all")
    assert model_name(json.loads((tmp_path / "r.json").read_text())) == "no-boxes"
    assert (tmp_path / "r.md").read_bytes() == old_markdown
    assert not [path for path in tmp_path.rglob(".*")]  # no staged file left behind
    monkeypatch.undo()
    assert _evaluate(sample_release, runs["no-boxes"], tmp_path, "--force") == 0
    assert (tmp_path / "r.md").read_bytes() != old_markdown


def test_a_save_cut_short_by_a_full_disk_tells_the_caller_overwrite_true(
    report: NovaReport, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The command line's advice is its own option (above); a Python caller gets its argument.
    folder = tmp_path / "saved"
    report.save(folder)
    make_replace_fail(monkeypatch, "report.md")
    with pytest.raises(NovaOutputError) as failed:
        report.save(folder, overwrite=True)
    message = str(failed.value)
    assert message.startswith(f"cannot write {folder / 'report.md'}: no space left on the device")
    assert message.endswith("write them again (with overwrite=True) to have them all")
