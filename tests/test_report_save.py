"""``NovaReport.save`` keeps the rules ``nova evaluate`` keeps for its outputs.

The CLI refuses an output that is, holds or sits inside an input (the release, the run
file) and names a file where a folder is wanted; ``save`` is the notebook's way to the same
files and refuses the same things in one line, before writing anything.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from novabench import evaluate_model
from novabench.errors import NovaInputError


def _no_target(image: object, prompt: str) -> str:
    return "no target"


@pytest.fixture(scope="module")
def report(sample_release: Path, tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("save")
    return evaluate_model(
        _no_target,
        sample_release,
        tasks="localization",
        run_file=folder / "run.jsonl",
        n_resamples=0,
        progress=False,
    )


def _files_under(folder: Path) -> list[str]:
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*"))


def test_a_folder_inside_the_release_is_refused_and_nothing_is_written(report, sample_release):
    before = _files_under(sample_release)
    target = sample_release / "reports"
    with pytest.raises(NovaInputError) as refused:
        report.save(target)
    assert str(refused.value) == (
        f"{target}, field 'folder': sits inside the release {sample_release}, an input of "
        "this command; choose an output outside it"
    )
    assert _files_under(sample_release) == before


def test_an_existing_file_is_refused_as_the_folder_and_kept(report, tmp_path):
    notes = tmp_path / "notes.jsonl"
    notes.write_text("my notes\n")
    with pytest.raises(NovaInputError) as refused:
        report.save(notes)
    assert str(refused.value) == (
        f"{notes}, field 'folder': is a file; give a folder to write report.json, report.md, "
        "report.html and items/ into"
    )
    assert notes.read_text() == "my notes\n"


def test_the_run_file_is_refused_as_the_folder(report):
    with pytest.raises(NovaInputError, match="is an input of this command \\(the run file\\)"):
        report.save(report.run_file)
    assert report.run_file.is_file()


def test_a_fresh_folder_still_gets_every_file(report, tmp_path):
    paths = report.save(tmp_path / "out")
    assert sorted(paths) == ["html", "items_cases", "items_images", "markdown", "report"]
    written = ("report", "markdown", "html", "items_images")
    assert [name for name in written if not paths[name].is_file()] == []
