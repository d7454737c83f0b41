"""Boxes the parser drops from an answer, or puts in order, are said where the answer is
scored: its note, the report's coverage (JSON, terminal, Markdown, HTML), the images table
(trust13: an answer with one box of zero width among good ones was counted nowhere)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from novabench.cli import main
from novabench.data.release import read_release
from novabench.errors import NovaInputError
from novabench.report import evaluate_predictions, render_markdown, render_table
from novabench.report.html import render_html
from novabench.report.items import item_tables
from novabench.report.scoring import score_predictions
from novabench.run.parsers import parse_localization
from novabench.run.predictions import read_predictions

# Counted per reason: the parser read every answer here (user31: four reasons, no count).
DROPPED_PHRASE = "boxes dropped (not scored): 2 in 2 answers (2 of zero width or height)"
SWAPPED_PHRASE = "boxes whose corners came in the wrong order, put right (scored)"


def test_an_answer_with_some_boxes_dropped_says_how_many_and_why() -> None:
    # xyxy pixels: the first box runs from x=10 to x=10, no width; the second is 80 x 60.
    parsed = parse_localization(
        "[[10, 10, 10, 50], [100, 100, 180, 160]]", image_size=(480, 480), convention="xyxy_pixel"
    )
    assert parsed.status == "ok" and parsed.boxes == [[100.0, 100.0, 80.0, 60.0]]
    assert parsed.n_degenerate_dropped == 1
    assert parsed.notes == ("1 of 2 boxes dropped (not scored): 1 of zero width or height",)
    # Corners far apart past the largest float: a width of 2e308 is no number.
    mixed = parse_localization(
        "[[-1e308, 0, 1e308, 5], [0, 0, 0, 0], [100, 100, 180, 160]]",
        image_size=(480, 480),
        convention="xyxy_pixel",
    )
    assert mixed.notes == (
        "2 of 3 boxes dropped (not scored): 1 with a width, height or area past the largest "
        "float, 1 of zero width or height",
    )


def test_corners_put_in_order_are_noted_on_the_answer() -> None:
    parsed = parse_localization(
        "[[180, 160, 100, 100]]", image_size=(480, 480), convention="xyxy_pixel"
    )
    assert parsed.boxes == [[100.0, 100.0, 80.0, 60.0]] and parsed.n_swapped == 1
    assert parsed.notes == (
        "1 box(es) with corners in the wrong order (x1 > x2 or y1 > y2) put right",
    )


def test_an_answer_without_a_repair_carries_no_such_note() -> None:
    parsed = parse_localization(
        "[[100, 100, 180, 160]]", image_size=(480, 480), convention="xyxy_pixel"
    )
    assert parsed.notes == () and parsed.n_degenerate_dropped == parsed.n_swapped == 0


# Four answers (xyxy pixels): one box dropped of two; every box dropped (invalid_boxes); two
# boxes with their corners swapped; a clean one. Expected: 2 boxes dropped in 2 answers,
# 2 boxes swapped in 1 answer.
ANSWERS = [
    "[[10, 10, 10, 50], [100, 100, 180, 160]]",
    "[[30, 40, 90, 40]]",
    "[[180, 160, 100, 100], [300, 200, 250, 260]]",
    "[[200, 200, 260, 240]]",
]


@pytest.fixture(scope="module")
def raw_run(sample_release: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    filenames = [image.filename for image in read_release(sample_release).images][: len(ANSWERS)]
    path = tmp_path_factory.mktemp("dropped") / "raw.jsonl"
    lines = [
        {"filename": name, "task": "localization", "raw_boxes": answer}
        for name, answer in zip(filenames, ANSWERS)
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def scored(release: Path, run: Path, box_convention: str | None = "xyxy_pixel") -> dict:
    return evaluate_predictions(
        release, run, tasks=["localization"], n_resamples=0, box_convention=box_convention
    )


EXPECTED = {
    "boxes_dropped": 2,
    "answers_with_boxes_dropped": 2,
    "boxes_swapped": 2,
    "answers_with_boxes_swapped": 1,
    "box_repairs_unrecorded": 0,
}


def test_the_report_counts_dropped_and_swapped_boxes_in_every_output(
    sample_release: Path, raw_run: Path
) -> None:
    report = scored(sample_release, raw_run)
    coverage = report["tasks"]["localization"]["coverage"]
    assert {name: coverage[name] for name in EXPECTED} == EXPECTED
    assert coverage["parse_status"] == {"invalid_boxes": 1, "ok": 3}
    for text in (
        render_table(report),
        render_markdown(report),
        render_html(report, gallery_size=0),
    ):
        assert DROPPED_PHRASE in text
        assert f"{SWAPPED_PHRASE}: 2 in 1 answer" in text


def test_the_images_table_counts_them_per_answer(sample_release: Path, raw_run: Path) -> None:
    run = score_predictions(
        sample_release, raw_run, n_resamples=0, tasks=["localization"], box_convention="xyxy_pixel"
    )
    images = item_tables(run).images
    rows = images.set_index("filename")
    answered = [json.loads(line)["filename"] for line in raw_run.read_text().splitlines()]
    assert rows.loc[answered, "boxes_dropped"].tolist() == [1, 1, 0, 0]
    assert rows.loc[answered, "boxes_swapped"].tolist() == [0, 0, 2, 0]
    unanswered = rows.drop(index=answered)
    assert unanswered["boxes_dropped"].isna().all() and unanswered["boxes_swapped"].isna().all()


def test_a_parsed_file_keeps_the_counts_and_an_older_one_is_said_unknown(
    sample_release: Path, raw_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    parsed = tmp_path / "parsed.jsonl"
    arguments = ["parse", str(raw_run), "--data", str(sample_release), "--out", str(parsed)]
    assert main([*arguments, "--box-convention", "xyxy_pixel", "-q"]) == 0
    printed = capsys.readouterr().out  # the report's words: what was dropped and swapped
    assert DROPPED_PHRASE in printed
    assert f"{SWAPPED_PHRASE}: 2 in 1 answer" in printed
    lines = [json.loads(line) for line in parsed.read_text(encoding="utf-8").splitlines()]
    assert [line["boxes_dropped"] for line in lines] == [1, 1, 0, 0]
    report = scored(sample_release, parsed)
    coverage = report["tasks"]["localization"]["coverage"]
    assert {name: coverage[name] for name in EXPECTED} == EXPECTED
    # The same file as a nova parse of before these counts wrote it: nothing to count from.
    older = tmp_path / "older.jsonl"
    stripped = [{k: v for k, v in line.items() if not k.startswith("boxes_")} for line in lines]
    older.write_text("".join(json.dumps(line) + "\n" for line in stripped), encoding="utf-8")
    # No manifest: the raw answers beside the boxes are checked under the convention given.
    older_report = scored(sample_release, older, box_convention="xyxy_pixel")
    coverage = older_report["tasks"]["localization"]["coverage"]
    assert coverage["boxes_dropped"] == 0 and coverage["box_repairs_unrecorded"] == 4
    assert "4 answers parsed earlier by a `nova parse` that did not record" in render_table(
        older_report
    )


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ({"boxes": [[1.0, 2.0, 3.0, 4.0]], "boxes_dropped": 1}, "which this line does not hold"),
        ({"raw_boxes": "[[1, 2, 3, 4]]", "boxes_dropped": -1}, "must be >= 0"),
        ({"raw_boxes": "[[1, 2, 3, 4]]", "boxes_swapped": True}, "expected an integer"),
        ({"raw_caption": "Axial T2.", "boxes_dropped": 0}, "which this line does not hold"),
    ],
)
def test_a_bad_count_is_refused_naming_line_and_field(
    tmp_path: Path, line: dict, message: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"filename": "case0001_001.png", **line}) + "\n", encoding="utf-8")
    with pytest.raises(NovaInputError, match=message) as error:
        read_predictions(path)
    assert error.value.field in ("boxes_dropped", "boxes_swapped")
    assert "line 1" in str(error.value)
