"""An explicit box convention supplies only what an answer leaves open (user13's report).

An answer's own keys fix the order of its numbers (``x``/``y``/``width``/``height``: a corner
and a size; ``x1``/``y1``/``x2``/``y2``, ``xmin``..., ``left``..., ``bbox_2d`` and Qwen2-VL's
``(x1,y1),(x2,y2)`` tokens: x first; ``box_2d``: y first). An explicit ``--box-convention``
(or the one a preset sets) then gives only the scale: 0..1000 units, 0..1 fractions or pixels
of the image the model saw. Bare lists, generic keys and labelled lines fix no order: the
convention reads them whole, as before.

Every expected box below is worked out by hand on a 500 x 400 image (not square, so a swapped
x/y shows) that the model saw at 1000 x 800 (so pixels are halved on both axes).
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from novabench.cli import main
from novabench.data.release import read_release
from novabench.report import evaluate_predictions, render_table
from novabench.run.defaults import CONVENTIONS
from novabench.run.parsers.boxes import (
    _CONVENTION_READING,
    PROMPT_CONVENTIONS,
    parse_localization,
)
from novabench.run.parsers.stats import ParseStats
from novabench.run.predictions import box_answer_summary, parse_raw, read_predictions

IMAGE = (500, 400)
SEEN = (1000, 800)

# Every keyed answer below marks the same corners, (100, 200) to (400, 300), in its own order.
KEYED_ANSWERS = {
    "x_y_width_height": '{"x": 100, "y": 200, "width": 300, "height": 100}',
    "x1_y1_x2_y2": '{"x1": 100, "y1": 200, "x2": 400, "y2": 300}',
    "xmin_ymin": '{"ymin": 200, "xmin": 100, "ymax": 300, "xmax": 400, "label": "mass"}',
    "left_top": '{"left": 100, "top": 200, "right": 400, "bottom": 300}',
    "bbox_2d": '[{"bbox_2d": [100, 200, 400, 300], "label": "mass"}]',
    "box_2d": '[{"box_2d": [200, 100, 300, 400], "label": "mass"}]',
    "qwen2_tokens": "<|object_ref_start|>mass<|object_ref_end|>"
    "<|box_start|>(100,200),(400,300)<|box_end|>",
}
# The order each form fixes, and each convention's own order (the module docstring's table).
FORM_ORDER = {
    "x_y_width_height": "xywh",
    "x1_y1_x2_y2": "xyxy",
    "xmin_ymin": "xyxy",
    "left_top": "xyxy",
    "bbox_2d": "xyxy",
    "box_2d": "yxyx",
    "qwen2_tokens": "xyxy",
}
CONVENTION_ORDER = {
    "protocol": "yxyx",
    "qwen": "xyxy",
    "xyxy_norm1": "xyxy",
    "xyxy_norm1000": "xyxy",
    "xyxy_pixel": "xyxy",
    "xywh_pixel": "xywh",
    "yxyx_norm1": "yxyx",
}
# The corners (100, 200)-(400, 300) in each convention's scale, as [x, y, width, height]:
# 0..1000 units: x * 500/1000 = 0.5, y * 400/1000 = 0.4 -> (50, 80)-(200, 120);
# 0..1 fractions: x * 500, y * 400 -> (50000, 80000)-(200000, 120000);
# pixels of a 1000 x 800 input: x * 0.5, y * 0.5 -> (50, 100)-(200, 150).
PER_MILLE = [50.0, 80.0, 150.0, 40.0]
FRACTION = [50000.0, 80000.0, 150000.0, 40000.0]
PIXELS = [50.0, 100.0, 150.0, 50.0]
KEYED_EXPECTED = {
    "protocol": PER_MILLE,
    "xyxy_norm1000": PER_MILLE,
    "qwen": PIXELS,
    "xyxy_pixel": PIXELS,
    "xywh_pixel": PIXELS,
    "xyxy_norm1": FRACTION,
    "yxyx_norm1": FRACTION,
}

# The conventions in pixels of the image the model saw (box_2d's own 0..1000 contradicts them).
PIXEL_CONVENTIONS = frozenset({"qwen", "xyxy_pixel", "xywh_pixel"})

# Forms that fix no order, numbers [100, 200, 400, 300]: read whole by the convention.
UNKEYED_ANSWERS = {
    "bare_list": '{"boxes": [[100, 200, 400, 300]]}',
    "generic_key": '{"bbox": [100, 200, 400, 300]}',
    "labelled_line": "mass: [100, 200, 400, 300]",
}
UNKEYED_EXPECTED = {
    # y-first 0..1000: x 200*0.5 = 100 to 300*0.5 = 150, y 100*0.4 = 40 to 400*0.4 = 160.
    "protocol": [100.0, 40.0, 50.0, 120.0],
    "xyxy_norm1000": PER_MILLE,
    "qwen": PIXELS,
    "xyxy_pixel": PIXELS,
    # corner (100, 200), size 400 x 300 -> (100, 200)-(500, 500), halved: (50, 100)-(250, 250).
    "xywh_pixel": [50.0, 100.0, 200.0, 150.0],
    "xyxy_norm1": FRACTION,
    # y-first fractions: x 200*500 = 100000 to 300*500 = 150000, y 100*400 = 40000 to 160000.
    "yxyx_norm1": [100000.0, 40000.0, 50000.0, 120000.0],
}


def test_the_tables_cover_every_explicit_convention() -> None:
    explicit = set(CONVENTIONS) - {"auto"}
    assert set(CONVENTION_ORDER) == set(KEYED_EXPECTED) == set(UNKEYED_EXPECTED) == explicit
    # The parser knows the order and scale of every convention the command line offers.
    assert set(_CONVENTION_READING) == explicit
    assert {order for order, _ in _CONVENTION_READING.values()} == set(FORM_ORDER.values())


@pytest.mark.parametrize("convention", sorted(KEYED_EXPECTED))
@pytest.mark.parametrize("form", sorted(KEYED_ANSWERS))
def test_keys_fix_the_order_and_the_convention_the_scale(form: str, convention: str) -> None:
    parsed = parse_localization(
        KEYED_ANSWERS[form], image_size=IMAGE, input_size=SEEN, convention=convention
    )
    if form == "box_2d" and convention in PIXEL_CONVENTIONS:  # see the box_2d tests below
        assert parsed.status == "ambiguous_convention" and parsed.boxes == []
        return
    assert parsed.boxes == [pytest.approx(KEYED_EXPECTED[convention])]
    assert parsed.convention == convention  # it gave the scale
    contradicted = FORM_ORDER[form] != CONVENTION_ORDER[convention]
    notes = [note for note in parsed.notes if "read in the order they fix" in note]
    if contradicted:
        assert parsed.status == "ok_order_from_keys" and parsed.n_order_from_keys == 1
        assert len(notes) == 1 and notes[0].startswith("1 box(es) with ")
        assert f"not {convention}'s " in notes[0]
    else:
        assert parsed.status == "ok" and parsed.n_order_from_keys == 0
        assert notes == []


@pytest.mark.parametrize("convention", sorted(UNKEYED_EXPECTED))
@pytest.mark.parametrize("form", sorted(UNKEYED_ANSWERS))
def test_forms_without_keys_are_read_whole_by_the_convention(form: str, convention: str) -> None:
    parsed = parse_localization(
        UNKEYED_ANSWERS[form], image_size=IMAGE, input_size=SEEN, convention=convention
    )
    assert parsed.status == "ok"
    assert parsed.boxes == [pytest.approx(UNKEYED_EXPECTED[convention])]
    assert not any("read in the order they fix" in note for note in parsed.notes)


@pytest.mark.parametrize("prompt_convention", [None, *PROMPT_CONVENTIONS])
@pytest.mark.parametrize("form", sorted(KEYED_ANSWERS))
def test_auto_never_contradicts_the_keys(form: str, prompt_convention: str | None) -> None:
    parsed = parse_localization(
        KEYED_ANSWERS[form], image_size=IMAGE, input_size=SEEN, prompt_convention=prompt_convention
    )
    assert parsed.status in {"ok", "ambiguous_convention"}
    if parsed.status == "ok":  # whatever auto chose keeps the order the keys fix
        assert CONVENTION_ORDER[str(parsed.convention)] == FORM_ORDER[form]


def test_each_contradicted_form_gets_its_own_note_and_the_count_of_its_boxes() -> None:
    # Under xywh_pixel (pixels, seen at 1000 x 800): the two named-corner boxes (50, 100)-
    # (200, 150) and (0, 0)-(50, 50), then the x/y/width/height box read as a corner and a
    # size, like the convention: (10, 10)-(30, 30) halved -> (5, 5)-(15, 15).
    answer = json.dumps(
        [
            {"x1": 100, "y1": 200, "x2": 400, "y2": 300},
            {"xmin": 0, "ymin": 0, "xmax": 100, "ymax": 100},
            {"x": 10, "y": 10, "width": 20, "height": 20},
        ]
    )
    parsed = parse_localization(answer, image_size=IMAGE, input_size=SEEN, convention="xywh_pixel")
    assert parsed.status == "ok_order_from_keys"
    assert parsed.boxes == [
        [50.0, 100.0, 150.0, 50.0],
        [0.0, 0.0, 50.0, 50.0],
        [5.0, 5.0, 10.0, 10.0],
    ]
    assert parsed.notes == (
        "2 box(es) with named corner keys (x1/y1/x2/y2 and the like) read in the order they "
        "fix, [x1, y1, x2, y2], not xywh_pixel's [x, y, width, height]; xywh_pixel gave only "
        "the scale (pixels of the image the model saw)",
    )


def test_a_cut_off_keyed_answer_stays_truncated_ok_and_counts_its_keyed_boxes() -> None:
    # box_2d under xyxy_norm1000 (the qwen3-vl preset), cut inside the third box: the two
    # whole boxes are read y first in 0..1000 units; the cut one is not read (its last
    # number may have lost digits). (100, 200)-(400, 300) -> PER_MILLE; (0, 0)-(200, 500):
    # x 0..100, y 0..200 on 500 x 400.
    answer = (
        '```json\n[{"box_2d": [200, 100, 300, 400], "label": "mass"},\n'
        ' {"box_2d": [0, 0, 500, 200], "label": "oedema"},\n {"box_2d": [610, 220, 7'
    )
    parsed = parse_localization(
        answer, image_size=IMAGE, input_size=SEEN, convention="xyxy_norm1000"
    )
    assert parsed.status == "truncated_ok"  # boxes recovered from a cut-off answer: scored
    assert parsed.boxes == [pytest.approx(PER_MILLE), pytest.approx([0.0, 0.0, 100.0, 200.0])]
    assert parsed.labels == ["mass", "oedema"]
    # The status cannot say both: the count still tells the keyed reading, and a note the cut.
    assert parsed.n_order_from_keys == 2
    assert any("2 box(es) with box_2d keys read in the order" in n for n in parsed.notes)
    assert "answer cut off: what follows its last complete box was not read" in parsed.notes
    stats = ParseStats.from_results([parsed])
    assert stats.status_counts == {"truncated_ok": 1} and stats.as_dict()["n_order_from_keys"] == 2


@pytest.mark.parametrize("convention", sorted(PIXEL_CONVENTIONS))
def test_a_box_2d_answer_is_not_given_a_pixel_scale(convention: str) -> None:
    """box_2d is Gemini's y-first 0..1000 form; where pixels were asked (qwen, the qwen2.5-vl
    preset) nothing tells which scale the model meant: not read, counted, never guessed."""
    answer = '[{"box_2d": [200, 100, 300, 400], "label": "mass"}]'
    parsed = parse_localization(answer, image_size=IMAGE, input_size=SEEN, convention=convention)
    assert (parsed.status, parsed.boxes, parsed.readable_with) == ("ambiguous_convention", [], ())
    assert f"convention={convention} reads pixels" in str(parsed.error)
    cut = parse_localization(answer[:-8], image_size=IMAGE, input_size=SEEN, convention=convention)
    assert cut.status == "ambiguous_convention"  # cut off or not


def test_auto_does_not_read_box_2d_as_gemini_units_where_the_prompt_asked_for_pixels() -> None:
    answer = '[{"box_2d": [200, 100, 300, 400], "label": "mass"}]'
    asked_pixels = parse_localization(
        answer, image_size=IMAGE, input_size=SEEN, prompt_convention="qwen"
    )
    assert asked_pixels.status == "ambiguous_convention" and asked_pixels.boxes == []
    assert "the run's prompt asked for qwen pixels" in str(asked_pixels.error)
    for asked in (None, "protocol", "xyxy_norm1000"):  # nothing says pixels: Gemini's form
        parsed = parse_localization(
            answer, image_size=IMAGE, input_size=SEEN, prompt_convention=asked
        )
        assert (parsed.status, parsed.convention) == ("ok", "protocol")
        assert parsed.boxes == [pytest.approx(PER_MILLE)]


# user13's answers, as a hand-written raw file (no manifest) on the synthetic sample (480 px).
USER13_ANSWERS = [
    '{"x": 150, "y": 130, "width": 60, "height": 70}',
    '{"x1": 150, "y1": 130, "x2": 210, "y2": 200}',
    '[{"box_2d": [270, 312, 416, 437]}]',
]


def _user13_raw(release: Path, path: Path) -> tuple[Path, list[str]]:
    filenames = [image.filename for image in read_release(release).images[:3]]
    lines = [
        json.dumps({"filename": name, "raw_boxes": answer})
        for name, answer in zip(filenames, USER13_ANSWERS)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, filenames


def test_nova_parse_under_a_forced_convention_reads_keys_and_counts_them(
    sample_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert {image.width for image in read_release(sample_release).images[:3]} == {480}
    raw, _ = _user13_raw(sample_release, tmp_path / "hand.jsonl")
    out = tmp_path / "hand.protocol.jsonl"
    args = ["parse", str(raw), "--data", str(sample_release), "--out", str(out)]
    assert main([*args, "--box-convention", "protocol"]) == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    # 0..1000 on 480 px: one unit 0.48 px. x/y/width/height: (72, 62.4), 28.8 x 33.6; the
    # corners (150, 130)-(210, 200) the same box; box_2d y-first as protocol reads it:
    # x 312 * 0.48 = 149.76, y 270 * 0.48 = 129.6, w 125 * 0.48 = 60, h 146 * 0.48 = 70.08.
    assert [record["boxes"] for record in records] == [
        [pytest.approx([72.0, 62.4, 28.8, 33.6])],
        [pytest.approx([72.0, 62.4, 28.8, 33.6])],
        [pytest.approx([149.76, 129.6, 60.0, 70.08])],
    ]
    assert [record["parse_status"] for record in records] == [
        "ok_order_from_keys",
        "ok_order_from_keys",
        "ok",
    ]
    assert "ok_order_from_keys 2" in capsys.readouterr().out


def test_the_report_counts_answers_read_in_their_keys_order(
    sample_release: Path, tmp_path: Path
) -> None:
    raw, _ = _user13_raw(sample_release, tmp_path / "hand.jsonl")
    report = evaluate_predictions(
        sample_release, raw, n_resamples=0, tasks=["localization"], box_convention="qwen"
    )
    coverage = report["tasks"]["localization"]["coverage"]
    # qwen's order is x-first: x/y/width/height contradicts it (read in its keys' order);
    # box_2d's own form is 0..1000, qwen's pixels: not read, counted.
    assert coverage["parse_status"] == {
        "ok": 1,
        "ok_order_from_keys": 1,
        "ambiguous_convention": 1,
    }
    assert "ok_order_from_keys: the answer's keys fix another order" in render_table(report)


def test_a_keyed_answer_past_the_image_keeps_its_status_and_is_counted_outside(
    tmp_path: Path,
) -> None:
    # x/y/width/height under protocol on a 480 x 480 image: a corner and a size in 0..1000
    # units (0.48 px each): x 900 -> 432, width 200 -> 96, so it reaches 528, past 480.
    image = SimpleNamespace(filename="case0001_001.png", case_id="case0001", width=480, height=480)
    release = SimpleNamespace(images=[image], cases=lambda: [])
    raw = tmp_path / "raw.jsonl"
    answer = '{"x": 900, "y": 100, "width": 200, "height": 200}'
    line = {"filename": image.filename, "raw_boxes": answer}
    raw.write_text(json.dumps(line) + "\n", encoding="utf-8")
    parsed = parse_raw(read_predictions(raw, release), release, box_convention="protocol")
    assert parsed.parse_counts("localization") == {"ok_order_from_keys": 1}
    boxes = parsed.records["localization"][image.filename].boxes
    assert boxes == [pytest.approx([432.0, 48.0, 96.0, 96.0])]
    summary = box_answer_summary(parsed, release)
    assert (summary["answers_out_of_image"], summary["boxes_out_of_image"]) == (1, 1)


def test_a_whole_keyed_box_in_a_cut_object_is_read_in_its_keys_order() -> None:
    # Cut after the box's "]" but inside its label: the four numbers were all written. The
    # JSON reader keeps the cut object's finished members (the box, not the cut label), so
    # the box is read in box_2d's order, y first: (100, 200)-(400, 300) in 0..1000 ->
    # PER_MILLE. Once taken for a bare list by the line reader, x first under
    # xyxy_norm1000, it gave (100, 40)-(150, 160); no second pass counts such boxes (mut26).
    answer = '```json\n[{"box_2d": [200, 100, 300, 400], "label": "ma'
    parsed = parse_localization(
        answer, image_size=IMAGE, input_size=SEEN, convention="xyxy_norm1000"
    )
    assert (parsed.status, parsed.labels) == ("truncated_ok", [""])
    assert parsed.boxes == [pytest.approx(PER_MILLE)] and parsed.n_order_from_keys == 1
    # A second object cut after its box: both read, the second with its written label.
    answer = (
        '[{"box_2d": [200, 100, 300, 400], "label": "mass"}, '
        '{"label": "oedema", "box_2d": [0, 0, 500, 200], "conf'
    )
    parsed = parse_localization(answer, image_size=IMAGE, input_size=SEEN, convention="protocol")
    assert parsed.labels == ["mass", "oedema"] and parsed.status == "truncated_ok"
    assert parsed.boxes == [pytest.approx(PER_MILLE), pytest.approx([0.0, 0.0, 100.0, 200.0])]


@pytest.mark.parametrize("convention", sorted(PIXEL_CONVENTIONS))
def test_a_readable_box_beside_a_box_2d_one_is_read_under_a_pixel_convention(
    convention: str,
) -> None:
    """user17: one bbox_2d and one box_2d box under --box-convention qwen made the whole
    answer ambiguous_convention, the readable bbox_2d box lost with the other."""
    answer = (
        '[{"bbox_2d": [48, 120, 240, 360], "label": "mass"}, '
        '{"box_2d": [200, 100, 300, 400], "label": "cyst"}]'
    )
    parsed = parse_localization(answer, image_size=(480, 480), convention=convention)
    # bbox_2d is x1, y1, x2, y2 in pixels of the image seen (here the original 480 x 480):
    # x 48, y 120, width 240 - 48 = 192, height 360 - 120 = 240.
    # xywh_pixel's own order is x, y, width, height: the bbox_2d keys fix the order there.
    read = "ok_order_from_keys" if convention == "xywh_pixel" else "ok"
    assert (parsed.status, parsed.boxes, parsed.labels) == (
        read,
        [[48.0, 120.0, 192.0, 240.0]],
        ["mass"],
    )
    assert parsed.n_degenerate_dropped == 1  # counted as a box read but not scored
    [note] = [n for n in parsed.notes if "dropped (not scored)" in n]
    assert note.startswith("1 of 2 boxes dropped (not scored): 1 with box_2d keys")
    stats = ParseStats.from_results([parsed])
    assert stats.status_counts == {read: 1} and stats.as_dict()["n_degenerate_dropped"] == 1


def test_the_report_counts_the_box_2d_box_dropped_beside_a_read_one(
    sample_release: Path, tmp_path: Path
) -> None:
    release = read_release(sample_release)
    first = release.images[0]
    line = {
        "filename": first.filename,
        "task": "localization",
        "raw_boxes": '[{"bbox_2d": [48, 120, 240, 360]}, {"box_2d": [200, 100, 300, 400]}]',
    }
    raw = tmp_path / "mixed.jsonl"
    raw.write_text(json.dumps(line) + "\n", encoding="utf-8")
    report = evaluate_predictions(
        sample_release, raw, n_resamples=0, tasks=["localization"], box_convention="qwen"
    )
    coverage = report["tasks"]["localization"]["coverage"]
    assert coverage["parse_status"] == {"ok": 1}
    assert (coverage["boxes_dropped"], coverage["answers_with_boxes_dropped"]) == (1, 1)
    assert (
        "boxes dropped (not scored): 1 in 1 answer (1 with box_2d keys (y first in 0..1000, a "
        "scale pixels contradict))"
    ) in render_table(report)
