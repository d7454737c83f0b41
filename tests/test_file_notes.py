"""A library call tells what it did beside the user's files as a FileNoteWarning (trust24):
a Python caller can catch or silence it, and `nova` prints each as its own `nova:` line."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pytest

from novabench.errors import FileNoteWarning
from novabench.run.lock import remove_unfinished_writes


def _left_by_a_killed_writer(folder: Path) -> list[Path]:
    left = [folder / ".run.jsonl.k2j9x1_a.tmp", folder / ".run.jsonl.manifest.json.q1w2e3.tmp"]
    for path in left:
        path.write_text("{", encoding="utf-8")
    return left


def test_a_caller_silences_the_notes_by_their_category_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    left = _left_by_a_killed_writer(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", FileNoteWarning)
        removed = remove_unfinished_writes(tmp_path / "run.jsonl")
    assert sorted(removed) == sorted(left) and not any(path.exists() for path in left)
    assert capsys.readouterr() == ("", "")


def test_notes_turned_into_errors_stop_nothing_half_done(tmp_path: Path) -> None:
    left = _left_by_a_killed_writer(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FileNoteWarning)
        with pytest.raises(FileNoteWarning, match=r"^removed .*\.run\.jsonl\.k2j9x1_a\.tmp, an "):
            remove_unfinished_writes(tmp_path / "run.jsonl")
    assert not any(path.exists() for path in left)  # every leftover removed before the first note


def test_a_note_points_at_the_callers_line_not_into_the_package(
    sample_release: Path, tmp_path: Path
) -> None:
    # evaluate_model's "resumed" note is told four frames down inside novabench (the
    # runner's resume callback); a notebook's warning line must name the user's call.
    from novabench import evaluate_model

    def diagnose(image: object, prompt: str) -> str:
        return '{"most_likely_diagnosis": "glioma"}'

    settings = dict(tasks="diagnosis", n_resamples=0, progress=False)
    run_file = tmp_path / "run.jsonl"
    evaluate_model(diagnose, sample_release, run_file=run_file, limit=2, **settings)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = sys._getframe().f_lineno + 1
        evaluate_model(diagnose, sample_release, run_file=run_file, **settings)
    notes = [told for told in caught if told.category is FileNoteWarning]
    assert [str(told.message).split(":")[0] for told in notes] == [f"resumed {run_file}"]
    assert (Path(notes[0].filename), notes[0].lineno) == (Path(__file__), line)


def test_a_note_told_on_entering_a_with_block_names_the_with_line(tmp_path: Path) -> None:
    # writer_lock removes a killed writer's leftovers as it is entered: the note came from
    # contextlib's __enter__ (contextlib.py:137), so every such note shared one location.
    from novabench.run.lock import writer_lock

    _left_by_a_killed_writer(tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = sys._getframe().f_lineno + 1
        with writer_lock(tmp_path / "run.jsonl", "a test"):
            pass
    notes = [told for told in caught if told.category is FileNoteWarning]
    assert len(notes) == 2
    assert {(Path(told.filename), told.lineno) for told in notes} == {(Path(__file__), line)}
