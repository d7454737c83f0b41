"""Which answer failed to parse, and why, is said where the failures are counted (user31).

``nova parse`` and ``nova evaluate`` printed "invalid_boxes 4" with no item: the user had
to search the raw file. Each failure status now names its first item (in item order) and
the parser's error, as a model error is named; the dropped boxes are counted per reason
when the parser read their answers (no file format changes: the reasons are never written).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from novabench.cli import main
from novabench.data.release import read_release
from novabench.report.render import box_repair_phrase, parse_status_phrase
from novabench.run.records import PredictionRecord, PredictionSet

FAST = ["--bootstrap", "0", "--no-breakdowns", "--exclude", "BERTScore-F1", "--exclude", "METEOR"]
NAN_ERROR = "every box written had a value that is not a finite number ({}): no box to score"


@pytest.fixture
def raw(sample_release: Path, tmp_path: Path) -> Path:
    """Image 2 and 4: a lone NaN box (JSON, prose); image 3: a NaN box beside a finite one;
    image 5: no box at all; image 6: 'no target' beside a NaN box; the rest: one box."""
    images = [image.filename for image in read_release(sample_release).images]
    answers = {
        1: '{"bbox_2d": [NaN, 1, 5, 5]}',
        2: "[nan, 10, 50, 50] and [100, 100, 150, 150]",
        3: "The lesion is at [nan, 100, 150, 150].",
        4: "I see it.",
        5: "no target [inf, 1, 2, 3]",
    }
    lines = [
        {"filename": name, "task": "localization", "raw_boxes": answers.get(i, "[1, 1, 40, 40]")}
        for i, name in enumerate(images)
    ]
    path = tmp_path / "raw.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_nova_parse_and_evaluate_name_the_first_item_of_each_failure(
    sample_release: Path, raw: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    images = [image.filename for image in read_release(sample_release).images]
    first_invalid = f"invalid_boxes 2 (first: {images[1]}: {NAN_ERROR.format('[nan, 1, 5, 5]')})"
    unparseable = f"unparseable 1 (first: {images[4]}: no box and no 'no target' statement found)"
    # 4 dropped boxes in 4 answers, every one for its NaN or infinite value (by hand, above).
    dropped = (
        "boxes dropped (not scored): 4 in 4 answers (4 with a value that is not a finite number)"
    )
    parsed = tmp_path / "parsed.jsonl"
    common = ["--data", str(sample_release), "--box-convention", "xyxy_pixel"]
    capsys.readouterr()
    assert main(["parse", str(raw), *common, "--out", str(parsed), "-q"]) == 0
    printed = capsys.readouterr().out
    assert first_invalid in printed and unparseable in printed and dropped in printed
    for predictions in (raw, parsed):  # read now, or read again beside what parse wrote
        out = tmp_path / f"{predictions.stem}.json"
        arguments = ["evaluate", *common, "--predictions", str(predictions), "--out", str(out)]
        assert main([*arguments, *FAST]) == 0
        printed = capsys.readouterr().out
        assert first_invalid in printed and unparseable in printed and dropped in printed
        coverage = json.loads(out.read_text(encoding="utf-8"))["tasks"]["localization"]["coverage"]
        assert coverage["first_failure"]["invalid_boxes"] == {
            "item": images[1],
            "error": NAN_ERROR.format("[nan, 1, 5, 5]"),
        }
        assert coverage["boxes_dropped_by_reason"] == {
            "with a value that is not a finite number": 4
        }
    # Nothing new is written to the parsed file: the format stays.
    keys = set().union(*(json.loads(line) for line in parsed.read_text("utf-8").splitlines()))
    assert not keys & {"parse_error", "boxes_dropped_why", "first_failure"}


def test_the_first_failure_is_the_first_item_and_a_record_without_error_is_named_alone() -> None:
    def line(key: str, status: str, error: str | None) -> PredictionRecord:
        return PredictionRecord(
            "captioning",
            key,
            "p.jsonl",
            1,
            caption="",
            raw="x",
            parse_status=status,
            parse_error=error,
        )

    records = {
        "case0002_001.png": line("case0002_001.png", "empty", "second"),
        "case0001_002.png": line("case0001_002.png", "empty", "first"),
        "case0001_001.png": line("case0001_001.png", "unparseable", None),  # parsed earlier
        "case0003_001.png": line("case0003_001.png", "ok", None),
    }
    names = sorted(records)
    answers = PredictionSet(
        "p.jsonl",
        {"localization": {}, "captioning": records, "diagnosis": {}},
        names,
        [],
        aligned=True,
    )
    coverage = answers.summary()["captioning"]
    assert coverage["first_failure"] == {
        "empty": {"item": "case0001_002.png", "error": "first"},
        "unparseable": {"item": "case0001_001.png", "error": None},
    }
    assert parse_status_phrase(coverage) == (
        "empty 2 (first: case0001_002.png: first), ok 1, unparseable 1 (first: case0001_001.png)"
    )
    # Reasons unknown (no parser read the answers here): the four reasons, as before.
    assert box_repair_phrase(
        {"boxes_dropped": 2, "answers_with_boxes_dropped": 1, "boxes_dropped_by_reason": None}
    ).startswith("; boxes dropped (zero width or height, a value that is not a finite number")
