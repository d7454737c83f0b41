"""user19: a gold box whose source is "Gold" silently became a rater's box, and a third rater
was said only in the Markdown report.

NOVA marks the consensus boxes ``source == "gold"``; the raters' strings are not known. A
source that is "gold" up to case and outer spaces cannot be told apart (the consensus, or a
rater named after it), so it is refused where it is read, naming the file, row and field.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from novabench.cli import main
from novabench.data.layouts import v1 as v1_layout
from novabench.data.release import read_release
from novabench.errors import NovaInputError
from novabench.report.human_reference import RATER_SLOTS
from tests.release_factory import default_rows, write_legacy_release, write_v1_release

SMALL = (64, 64)


@pytest.mark.parametrize("spelling", ["Gold", "GOLD", " gold", "gold\n"])
def test_a_gold_box_spelled_otherwise_is_refused_naming_the_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spelling: str
) -> None:
    rows = default_rows(image_size=SMALL)
    assert rows[4]["filename"] == "case0003_002.png" and rows[4]["bboxes"][0]["source"] == "gold"
    rows[4]["bboxes"][0]["source"] = spelling
    folder = write_v1_release(tmp_path / "nova", rows, image_size=SMALL)
    expected = (
        "data/nova-v1.parquet, row 4 (case0003_002.png), field 'bboxes[0].source': "
        f"box source {spelling!r} is 'gold' in another spelling"
    )
    with pytest.raises(NovaInputError) as caught:
        read_release(folder)
    assert str(caught.value).startswith(expected)
    # The box-by-box path (a release whose boxes cannot come as columns) says the same.
    monkeypatch.setattr(v1_layout, "_box_columns", lambda column: None)
    with pytest.raises(NovaInputError) as again:
        read_release(folder)
    assert str(again.value) == str(caught.value)


def test_a_rater_named_gold_in_the_legacy_layout_is_refused(tmp_path: Path) -> None:
    rows = default_rows(image_size=SMALL)
    rows[0]["bboxes"][0]["source"] = "Gold"  # written to bboxes_raters.csv as a rater
    folder = write_legacy_release(tmp_path / "legacy", rows, image_size=SMALL)
    with pytest.raises(NovaInputError) as caught:
        read_release(folder)
    assert str(caught.value).startswith(
        "bboxes_raters.csv, line 2 (case0001_001.png), field 'rater': rater name 'Gold'"
    )


def test_nova_info_refuses_it_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = default_rows(image_size=SMALL)
    rows[1]["bboxes"][0]["source"] = "Gold"
    folder = write_v1_release(tmp_path / "nova", rows, image_size=SMALL)
    assert main(["info", str(folder)]) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "Traceback" not in error
    assert "row 1 (case0002_001.png)" in error and "bboxes[0].source" in error


def test_a_rater_past_the_two_scored_is_a_warning_in_info_and_evaluate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = default_rows(image_size=SMALL)
    third = dict(rows[0]["bboxes"][1], source="rater3")
    rows[0]["bboxes"].append(third)
    folder = write_v1_release(tmp_path / "nova", rows, image_size=SMALL)
    warning = (
        "the boxes name 3 raters (rater1, rater2, rater3); the human reference scores the "
        "first 2 by name (rater1, rater2): rater3 not scored"
    )
    assert read_release(folder).warnings == [warning]
    assert main(["info", str(folder)]) == 0
    assert f"- {warning}" in capsys.readouterr().out
    answers = tmp_path / "boxes.jsonl"
    answers.write_text('{"filename": "case0001_001.png", "boxes": []}\n', encoding="utf-8")
    args = ["evaluate", "--data", str(folder), "--predictions", str(answers), "--bootstrap", "0"]
    assert main(args) == 0
    printed = capsys.readouterr().out.splitlines()
    table = next(i for i, line in enumerate(printed) if line.startswith("task "))
    assert any(warning in line for line in printed[:table])  # before the numbers


def test_two_raters_give_no_warning_and_the_count_is_the_human_references(
    tmp_path: Path,
) -> None:
    from novabench.data.release import SCORED_RATERS  # new with the warning

    assert SCORED_RATERS == len(RATER_SLOTS)
    folder = write_v1_release(tmp_path / "nova", image_size=SMALL)
    assert read_release(folder).warnings == []
