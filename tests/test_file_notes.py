"""A library call tells what it did beside the user's files as a FileNoteWarning (trust24):
a Python caller can catch or silence it, and `nova` prints each as its own `nova:` line."""

from __future__ import annotations

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
