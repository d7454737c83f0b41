"""Boxes in the wrong scale or format get a notice instead of a silent 0.

Answers are written from the sample's gold boxes as the models named write them: Qwen2.5-VL's
``bbox_2d`` in pixels of its 476 px resized input, the protocol's ``[ymin, xmin, ymax, xmax]``
in 0..1000, parsed files in [x1, y1, x2, y2] or in 0..1 fractions. Expected fractions are
computed here from the gold boxes, not by the code under test.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from novabench.cli import main
from novabench.data.release import read_release
from novabench.metrics.tasks import compute_task
from novabench.report import evaluate_predictions
from novabench.report.html import render_html
from novabench.report.render import render_markdown, render_table, with_notices

QWEN_INPUT = 476  # Qwen2.5-VL's input for a 480 px image (a multiple of 28)
CORNER = "answers with boxes have every box in the top-left"
TINY = "end within 2 px of their image's top-left corner"


def _qwen25_answer(boxes: list[list[float]], width: int) -> str:
    """Qwen2.5-VL's answer: bbox_2d corners in pixels of its input resized to QWEN_INPUT."""
    scale = QWEN_INPUT / width
    objects = [
        {
            "bbox_2d": [round(v * scale) for v in (x, y, x + w, y + h)],
            "label": "lesion",
        }
        for x, y, w, h in boxes
    ]
    return json.dumps(objects) if objects else "[]"


def _write(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _qwen25_run(release_dir: Path, path: Path, input_size: int | None = None) -> Path:
    lines = []
    for image in read_release(release_dir).images:
        line = {"filename": image.filename, "raw_boxes": _qwen25_answer(image.boxes, image.width)}
        if input_size:
            line["input_size"] = [input_size, input_size]
        lines.append(line)
    return _write(path, lines)


def _parsed_file(release_dir: Path, path: Path, convert) -> Path:  # type: ignore[no-untyped-def]
    lines = [
        {"filename": image.filename, "boxes": [convert(box, image.width) for box in image.boxes]}
        for image in read_release(release_dir).images
    ]
    return _write(path, lines)


def _localization_notices(report: dict) -> list[str]:
    return [line for line in with_notices(report)["notices"] if line.startswith("localization:")]


def test_pixels_of_a_resized_input_read_as_0_1000_get_a_corner_notice_in_every_output(
    sample_release: Path, tmp_path: Path
) -> None:
    images = read_release(sample_release).images
    boxed = [image for image in images if image.boxes]
    assert len(boxed) >= 20  # the rule's minimum, met by the sample
    raw = _qwen25_run(sample_release, tmp_path / "qwen25.jsonl")
    # qwen3-vl's convention: bbox_2d in 0..1000; these are pixels of a 476 px input.
    report = evaluate_predictions(
        sample_release, raw, tasks=["localization"], box_convention="xyxy_norm1000", n_resamples=0
    )
    # Far corner in 0..1000 read: round(c * 476 / 480) / 1000 of the image.
    reach_x = max(round((x + w) * QWEN_INPUT / 480) for i in boxed for x, _, w, _ in i.boxes)
    reach_y = max(round((y + h) * QWEN_INPUT / 480) for i in boxed for _, y, _, h in i.boxes)
    assert reach_x / 1000 < 0.6 and reach_y / 1000 < 0.6
    (line,) = [line for line in _localization_notices(report) if CORNER in line]
    assert line.startswith(
        f"localization: {len(boxed)} of the {len(boxed)} answers with boxes have every box in "
        f"the top-left "
        f"{reach_x / 10:.1f}% x {reach_y / 10:.1f}% of its image"
    )
    assert "read with --box-convention xyxy_norm1000" in line
    # Read again as pixels they fit and spread: the convention that reads them is named.
    assert f"{len(boxed)} of {len(boxed)} fit the images and reach past 60% of them" in line
    assert "xyxy_pixel" in line.split("with --box-convention", 2)[-1]
    assert render_table(report).splitlines()[1] == line  # first, after the sample's notice
    markdown = [md for md in render_markdown(report).splitlines()[1:] if md.strip()]
    assert markdown[1].startswith(f"**{line[:60]}") and CORNER in markdown[1]
    assert line in render_html(report).split('id="warnings"', 1)[1].split("</ul>", 1)[0]
    assert report["tasks"]["localization"]["metrics"]["mAP@30"] == 0.0  # numbers unchanged


def test_a_genuine_models_spread_boxes_and_a_handful_in_one_quadrant_get_no_corner_notice(
    sample_release: Path, tmp_path: Path
) -> None:
    images = read_release(sample_release).images
    gold_reach = max((x + w) / i.width for i in images for x, _, w, _ in i.boxes)
    assert gold_reach > 0.6  # the sample's boxes spread past the rule's fraction
    raw = _qwen25_run(sample_release, tmp_path / "qwen25.jsonl", input_size=QWEN_INPUT)
    report = evaluate_predictions(
        sample_release, raw, tasks=["localization"], box_convention="qwen", n_resamples=0
    )
    assert report["tasks"]["localization"]["coverage"]["boxes_confined"] is None
    assert not [line for line in _localization_notices(report) if CORNER in line]
    # Ten answers with boxes, every box in the top-left quadrant, the others "no target":
    # too few to tell a scale from chance.
    quadrant = json.dumps([{"bbox_2d": [60, 80, 150, 170], "label": "lesion"}])
    lines = [
        {"filename": image.filename, "raw_boxes": quadrant if n < 10 else "[]"}
        for n, image in enumerate(images)
    ]
    few = _write(tmp_path / "quadrant.jsonl", lines)
    report = evaluate_predictions(
        sample_release, few, tasks=["localization"], box_convention="xyxy_pixel", n_resamples=0
    )
    assert report["tasks"]["localization"]["coverage"]["boxes_confined"] is None
    assert not _localization_notices(report)


def test_nova_parse_prints_the_corner_notice(
    sample_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    raw = _qwen25_run(sample_release, tmp_path / "qwen25.jsonl")
    out = tmp_path / "parsed.jsonl"
    args = ["parse", str(raw), "--data", str(sample_release), "--out", str(out)]
    assert main([*args, "--box-convention", "xyxy_norm1000"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("localization: ")
    assert CORNER in printed[0] and "xyxy_pixel" in printed[0]


def test_a_parsed_file_of_xyxy_boxes_gets_the_past_the_image_notice(
    sample_release: Path, tmp_path: Path
) -> None:
    def xyxy(box: list[float], width: int) -> list[float]:
        x, y, w, h = box
        return [x, y, x + w, y + h]

    parsed = _parsed_file(sample_release, tmp_path / "xyxy.jsonl", xyxy)
    images = read_release(sample_release).images
    boxed = sum(bool(i.boxes) for i in images)
    # Read as [x, y, w, h], the far corner is x1 + x2: past 480 px for these answers.
    past = sum(
        any(2 * x + w > i.width or 2 * y + h > i.height for x, y, w, h in i.boxes) for i in images
    )
    assert past > boxed / 2
    report = evaluate_predictions(sample_release, parsed, tasks=["localization"], n_resamples=0)
    (line,) = _localization_notices(report)
    assert line.startswith(
        f"localization: {past} of {boxed} answers with boxes ({100 * past / boxed:.0f}%) have "
        "a box past the image"
    )
    assert "given as boxes, no parse on record" in line


def test_a_parsed_file_of_0_1_fractions_gets_the_tiny_boxes_notice(
    sample_release: Path, tmp_path: Path
) -> None:
    def fractions(box: list[float], width: int) -> list[float]:
        return [v / width for v in box]

    parsed = _parsed_file(sample_release, tmp_path / "fractions.jsonl", fractions)
    report = evaluate_predictions(sample_release, parsed, tasks=["localization"], n_resamples=0)
    (line,) = _localization_notices(report)
    boxed = sum(bool(i.boxes) for i in read_release(sample_release).images)
    assert line.startswith(f"localization: {boxed} of the {boxed} answers with boxes {TINY}")
    assert "0..1 fractions read as pixels" in line
    assert "convert them to pixels of the original image" in line


def test_the_past_the_image_note_advises_what_fits_never_a_convention_that_does_not(
    sample_release: Path, tmp_path: Path
) -> None:
    # The protocol's [ymin, xmin, ymax, xmax] in 0..1000, read as Qwen's pixels: past the
    # image. xyxy_pixel reads the same numbers as pixels too, so it must not be advised.
    lines = []
    for image in read_release(sample_release).images:
        answer = "\n".join(
            "lesion: [{}, {}, {}, {}]".format(
                *(round(v * 1000 / 480) for v in (y, x, y + h, x + w))
            )
            for x, y, w, h in image.boxes
        )
        lines.append({"filename": image.filename, "raw_boxes": answer or "no target"})
    raw = _write(tmp_path / "protocol.jsonl", lines)
    report = evaluate_predictions(
        sample_release, raw, tasks=["localization"], box_convention="qwen", n_resamples=0
    )
    notes = " ".join(report["tasks"]["localization"]["notes"])
    assert "extend past their image" in notes
    assert "xyxy_pixel" not in notes
    assert "fit with --box-convention protocol" in notes


def _face_warnings(predictions: list[dict], references: list[dict], **options: str) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compute_task("localization", predictions, references, **options)
    return [str(w.message) for w in caught if "predictions with boxes" in str(w.message)]


def test_the_metric_warns_of_boxes_in_another_format_or_scale_and_not_of_good_ones(
    sample_release: Path,
) -> None:
    images = read_release(sample_release).images
    references = [{"boxes": image.boxes} for image in images]
    assert _face_warnings([{"boxes": image.boxes} for image in images], references) == []
    xyxy = [{"boxes": [[x, y, x + w, y + h] for x, y, w, h in i.boxes]} for i in images]
    (line,) = _face_warnings(xyxy, references)
    assert "past every reference box" in line and "box_format='xyxy'" in line
    assert _face_warnings(xyxy, references, box_format="xyxy") == []
    per_mille = [
        {"boxes": [[v * 1000 / i.width for v in box] for box in b["boxes"]]}
        for i, b in zip(images, xyxy)
    ]
    (line,) = _face_warnings(per_mille, references, box_format="xyxy")
    assert "past every reference box" in line
    fractions = [{"boxes": [[v / i.width for v in box] for box in i.boxes]} for i in images]
    (line,) = _face_warnings(fractions, references)
    assert "ending within 2 px of the origin: 0..1 fractions?" in line
    corner = [{"boxes": [[v * QWEN_INPUT / 1000 for v in box] for box in i.boxes]} for i in images]
    (line,) = _face_warnings(corner, references)
    assert "of the reference boxes' extent" in line


def test_answers_switching_to_0_1_on_part_of_the_images_are_named_in_every_output(
    sample_release: Path, tmp_path: Path
) -> None:
    """user18: Gemini-style box_2d in 0..1000 on even images and 0..1 fractions on odd ones,
    read under the protocol's 0..1000, lost half the score (97.2 -> 47.9) with no word: the
    tiny-box notice asked 95% of the answers. A box ending within 2 px of the origin is no
    lesion's, so any share of them is named; all-0..1000 answers get no such line."""
    lines, honest = [], []
    for index, image in enumerate(read_release(sample_release).images):
        objects = []
        for x, y, w, h in image.boxes:
            corners = [
                y / image.height,
                x / image.width,
                (y + h) / image.height,
                (x + w) / image.width,
            ]
            scale = 1.0 if index % 2 else 1000.0
            objects.append({"box_2d": [round(v * scale, 3) for v in corners], "label": "lesion"})
        lines.append({"filename": image.filename, "raw_boxes": json.dumps(objects)})
        honest.append(
            {
                "filename": image.filename,
                "raw_boxes": json.dumps(
                    [{"box_2d": [round(v * 1000.0, 3) for v in ob["box_2d"]] if index % 2
                      else ob["box_2d"], "label": "lesion"} for ob in objects]
                ),
            }
        )  # fmt: skip
    mixed = _write(tmp_path / "mixed.jsonl", lines)
    options = {"tasks": ["localization"], "n_resamples": 0, "box_convention": "protocol"}
    report = evaluate_predictions(sample_release, mixed, **options)
    tiny_odd = sum(
        bool(image.boxes) for index, image in enumerate(read_release(sample_release).images)
        if index % 2
    )  # fmt: skip
    boxed = sum(bool(image.boxes) for image in read_release(sample_release).images)
    (line,) = _localization_notices(report)
    assert line.startswith(
        f"localization: {tiny_odd} of the {boxed} answers with boxes have every box ending "
        "within 2 px of its image's top-left corner"
    )
    assert "read with --box-convention protocol" in line
    shown = "answers with boxes have every box ending within 2 px of its image"
    assert shown in render_markdown(report) and shown in render_html(report)
    clean = evaluate_predictions(sample_release, _write(tmp_path / "h.jsonl", honest), **options)
    assert _localization_notices(clean) == []
    # The evaluate face, which sees boxes only: the same odd answers, in pixels as read.
    images = read_release(sample_release).images
    references = [{"boxes": image.boxes} for image in images]
    fractions_on_odd = [
        {"boxes": [[v / image.width for v in box] for box in image.boxes] if index % 2
         else image.boxes}
        for index, image in enumerate(images)
    ]  # fmt: skip
    (line,) = _face_warnings(fractions_on_odd, references)
    assert line.startswith(f"localization: {tiny_odd} of the {boxed} predictions with boxes have")
