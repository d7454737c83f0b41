"""The box-convention warnings say what read the boxes and which conventions would fit them.

The raw answers are written as Qwen3-VL writes grounding answers, ``bbox_2d: [x1, y1, x2,
y2]`` in 0..1000 of the image, from the sample's gold boxes; without a manifest ``auto``
reads ``bbox_2d`` as pixels (it does not guess), so most boxes land past the 480 px images.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from novabench.cli import main
from novabench.data.release import read_release
from novabench.report import evaluate_predictions, render_table
from novabench.report.render import boxes_outside_line


def _qwen3_answer(boxes: list[list[float]], width: int, height: int, scale: int = 1000) -> str:
    """A fenced Qwen3-VL answer: each [x, y, w, h] pixel box as bbox_2d corners in 0..scale."""
    objects = [
        {
            "bbox_2d": [
                round(x / width * scale),
                round(y / height * scale),
                round((x + w) / width * scale),
                round((y + h) / height * scale),
            ],
            "label": "lesion",
        }
        for x, y, w, h in boxes
    ]
    return "```json\n" + json.dumps(objects) + "\n```" if objects else "No target."


def _raw_file(release_dir: Path, path: Path, scale: int = 1000) -> Path:
    lines = [
        {"filename": i.filename, "raw_boxes": _qwen3_answer(i.boxes, i.width, i.height, scale)}
        for i in read_release(release_dir).images
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _outside_line(printed: str) -> str:
    (line,) = [line for line in printed.splitlines() if "have a box past the image" in line]
    return line


def test_a_parsed_file_is_said_to_be_read_as_its_parse_recorded(
    sample_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    raw = _raw_file(sample_release, tmp_path / "p1.jsonl")
    parsed = tmp_path / "p1x.jsonl"
    data = ["--data", str(sample_release)]
    assert (
        main(["parse", str(raw), *data, "--out", str(parsed), "--box-convention", "xyxy_pixel"])
        == 0
    )
    capsys.readouterr()
    evaluate = ["evaluate", "--predictions", str(parsed), *data, "--bootstrap", "0"]
    assert main([*evaluate, "--out", str(tmp_path / "r.json"), "--task", "localization"]) == 0
    line = _outside_line(capsys.readouterr().out)
    # The parsed boxes are not read again: what read them is the parse, as its manifest says.
    assert "parsed earlier with --box-convention xyxy_pixel" in line
    assert "read with --box-convention auto" not in line
    report = json.loads((tmp_path / "r.json").read_text())
    n_images = len(read_release(sample_release).images)
    assert report["predictions"]["box_answers"] == {
        "read_here": 0,
        "parsed_earlier": {"xyxy_pixel": n_images},
    }
    # The note on boxes past the image no longer suggests the parse's own convention.
    assert "(raw answers: --box-convention xyxy_pixel)" not in " ".join(
        report["tasks"]["localization"]["notes"]
    )
    # A --box-convention given to evaluate would read no parsed answer: refused (user19), not
    # recorded as the reading of boxes it never read.
    args = [*evaluate, "--out", str(tmp_path / "r2.json"), "--box-convention", "xyxy_norm1000"]
    assert main(args) == 2
    assert "box convention xyxy_pixel" in capsys.readouterr().err
    assert not (tmp_path / "r2.json").exists()


def test_the_outside_warning_names_every_convention_under_which_the_answers_fit(
    sample_release: Path, tmp_path: Path
) -> None:
    raw = _raw_file(sample_release, tmp_path / "qwen3.jsonl")
    report = evaluate_predictions(sample_release, raw, n_resamples=0, tasks=["localization"])
    coverage = report["tasks"]["localization"]["coverage"]
    out = coverage["answers_out_of_image"]
    assert out > coverage["parse_status"]["ok"]  # most answers land past the image as pixels
    # Every answer past the image fits in 0..1000, read x-first or y-first (the numbers are
    # in 0..1000 of the image, so either order stays inside); in pixels, fractions or as
    # [x, y, w, h] they do not (x2 > 480 for these, read as pixels or as a width).
    assert coverage["out_of_image_reread"] == out
    assert coverage["inside_with"] == {"protocol": out, "xyxy_norm1000": out}
    line = _outside_line(render_table(report))
    assert "read with --box-convention auto" in line
    assert f"{out} of {out} fit the images with --box-convention protocol or xyxy_norm1000" in line

    # Read as the fitting x-first convention: no warning, every image with gold is hit.
    fixed = evaluate_predictions(
        sample_release, raw, n_resamples=0, tasks=["localization"], box_convention="xyxy_norm1000"
    )
    assert "have a box past the image" not in render_table(fixed)
    images = read_release(sample_release).images
    metrics = fixed["tasks"]["localization"]["metrics"]
    assert metrics["hit@30"] == 1.0
    assert metrics["mAP@30"] == sum(bool(i.boxes) for i in images) / len(images)


def test_the_outside_warning_says_when_no_convention_fits(
    sample_release: Path, tmp_path: Path
) -> None:
    # Corners in 0..10000 of the image. A box's first number, 10000 * x1 / 480, read as
    # pixels (or as x of [x, y, w, h]) lies past 480 once x1 > 23 px; read per mille,
    # x-first or y-first, it is 10 * x1 px, past 480 once x1 > 48 px; read as a fraction it
    # is thousands of pixels. Every gold box of the sample starts right of 48 px:
    images = read_release(sample_release).images
    assert all(x > 48 for i in images for x, _, _, _ in i.boxes)
    raw = _raw_file(sample_release, tmp_path / "scaled.jsonl", scale=10000)
    report = evaluate_predictions(sample_release, raw, n_resamples=0, tasks=["localization"])
    coverage = report["tasks"]["localization"]["coverage"]
    assert coverage["out_of_image_reread"] == coverage["answers_out_of_image"]
    line = _outside_line(render_table(report))
    assert "read again under every other --box-convention, most of them still reach past it" in line


def test_the_outside_line_says_what_read_each_part_of_a_mixed_set() -> None:
    coverage = {
        "parse_status": {"ok_out_of_image": 8, "ok": 2},
        "answers_out_of_image": 8,
        "boxes_out_of_image": 9,
        "out_of_image_reread": 6,
        "inside_with": {"xyxy_norm1000": 5, "protocol": 4, "xyxy_pixel": 3},
    }
    predictions = {
        "box_convention": "auto",
        "prompt_box_convention": "protocol",
        "box_answers": {"read_here": 6, "parsed_earlier": {"unrecorded": 4}},
    }
    line = boxes_outside_line("localization", coverage, predictions)
    assert line is not None
    assert "6 read with --box-convention auto; 4 given as boxes, no parse on record" in line
    assert "no parse on record; the run's prompt asked for protocol;" in line
    # More than half of the 6 read again fit under 5 and 4; 3 of 6 is not more than half.
    assert (
        "they fit the images with --box-convention xyxy_norm1000 (5 of 6) or protocol (4 of 6)"
        in line
    )
    assert "xyxy_pixel" not in line.split("most likely")[1]
    # A report written before box_answers: its one convention, as it was printed then.
    old = boxes_outside_line("localization", coverage, {"box_convention": "qwen"})
    assert old is not None and "read with --box-convention qwen (no run manifest" in old
