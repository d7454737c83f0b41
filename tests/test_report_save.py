"""``NovaReport.save`` keeps the rules ``nova evaluate`` keeps for its outputs.

The CLI refuses an output that is, holds or sits inside an input (the release, the run
file) and names a file where a folder is wanted; ``save`` is the notebook's way to the same
files and refuses the same things in one line, before writing anything.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
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


# A Python caller is told its own arguments (folder, overwrite=True), never nova evaluate's
# options (--items, --force) that it has no way to pass (tests/test_setting_words.py has
# the other faces).


def _forget_owner(items: Path) -> None:
    """The tables as a novabench before the pins wrote them: no report recorded."""
    for name in ("images", "cases"):
        table = pq.read_table(items / f"{name}.parquet")
        pq.write_table(table.replace_schema_metadata(None), items / f"{name}.parquet")


def test_tables_recording_no_report_are_refused_naming_folder_and_overwrite(report, tmp_path):
    folder = tmp_path / "saved"
    report.save(folder)
    for name in ("report.json", "report.md", "report.html"):  # only the tables are left
        (folder / name).unlink()
    _forget_owner(folder / "items")
    with pytest.raises(NovaInputError) as refused:
        report.save(folder)
    message = str(refused.value)
    assert message.startswith(f"{folder / 'items'}, field 'folder': holds per-item tables")
    assert message.endswith("; pass overwrite=True to replace them")
    assert "--" not in message.replace(str(tmp_path), "")


def test_tables_another_report_pins_are_refused_naming_the_folder_argument(report, tmp_path):
    folder = tmp_path / "saved"
    report.save(folder)
    # A second report in the same folder, pinning the tables the first one wrote.
    pinning = folder / "other.json"
    pinning.write_text((folder / "report.json").read_text())
    for name in ("images", "cases"):
        path = folder / "items" / f"{name}.parquet"
        table = pq.read_table(path)
        owner = json.loads(table.schema.metadata[b"novabench.items"])
        owner["report"] = "../other.json"
        metadata = {**table.schema.metadata, b"novabench.items": json.dumps(owner).encode()}
        pq.write_table(table.replace_schema_metadata(metadata), path)
    with pytest.raises(NovaInputError) as refused:
        report.save(folder, overwrite=True)
    assert refused.value.field == "folder"
    assert refused.value.message == (
        f"holds the per-item tables of the report {pinning}, which points at them; a second "
        "report would replace them: give folder= another folder"
    )
