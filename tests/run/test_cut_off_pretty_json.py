"""Cut-off JSON answers: whitespace (newlines included) never changes the boxes read.

A model that writes ``json.dumps(indent=2)``-style JSON and runs out of tokens must score
the boxes it finished writing, exactly as the same answer written on one line. A box is
finished once its closing ``]`` is written.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from novabench.run.parsers import parse_localization

SETTINGS = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
IMAGE = (480, 480)

# Corners x1 < x2, y1 < y2 in pixels of a 480 x 480 image (the model saw the original size).
corner_box = st.tuples(
    st.integers(0, 400), st.integers(0, 400), st.integers(1, 79), st.integers(1, 79)
).map(lambda b: [b[0], b[1], b[0] + b[2], b[1] + b[3]])

# How models write several boxes: Qwen2.5-VL objects, a "boxes" key, a bare list of lists,
# Gemini-style box_2d objects (y first). Each with the convention that reads it.
SHAPES = {
    "qwen_objects": (lambda boxes: [{"bbox_2d": b, "label": "lesion"} for b in boxes], "qwen"),
    "boxes_key": (lambda boxes: {"boxes": boxes}, "xyxy_pixel"),
    "bare_lists": (lambda boxes: boxes, "xyxy_pixel"),
    # Gemini's 0..1000 y-first: read under "protocol" on a 1000 x 1000 image, so the values
    # stay pixels (box_2d is never read as pixels: fixb14).
    "box_2d_objects": (
        lambda boxes: [{"box_2d": [b[1], b[0], b[3], b[2]], "label": "mass"} for b in boxes],
        "protocol",
    ),
}


def box_ends(text: str, boxes: list[list[int]], y_first: bool) -> list[int]:
    """Where each box's closing bracket ends in ``text``: the cut positions that finish it."""
    ends, pos = [], 0
    for box in boxes:
        for number in [box[1], box[0], box[3], box[2]] if y_first else box:
            pos = text.index(str(number), pos) + len(str(number))
        pos = text.index("]", pos) + 1
        ends.append(pos)
    return ends


def read(text: str, convention: str) -> list[list[float]]:
    image = (1000, 1000) if convention == "protocol" else IMAGE
    parsed = parse_localization(text, image_size=image, convention=convention)
    if parsed.boxes:  # a cut-off answer says so, whatever comes last (a space, a newline)
        assert parsed.status == "truncated_ok" or text.rstrip().endswith(("]", "}")), text
    return parsed.boxes


@SETTINGS
@given(
    boxes=st.lists(corner_box, min_size=1, max_size=3),
    shape=st.sampled_from(sorted(SHAPES)),
    indent=st.sampled_from([1, 2, 4]),
    fenced=st.booleans(),
)
def test_a_pretty_printed_answer_cut_anywhere_reads_as_the_compact_one(
    boxes: list[list[int]], shape: str, indent: int, fenced: bool
) -> None:
    build, convention = SHAPES[shape]
    value: Any = build(boxes)
    y_first = shape == "box_2d_objects"
    pretty = json.dumps(value, indent=indent)
    compact = json.dumps(value)
    pretty_ends = box_ends(pretty, boxes, y_first)
    compact_ends = box_ends(compact, boxes, y_first)
    prefix = "```json\n" if fenced else ""
    # Expected from the corners alone: [x, y, width, height] of the first n boxes.
    expected = [[float(x1), float(y1), float(x2 - x1), float(y2 - y1)] for x1, y1, x2, y2 in boxes]
    # The compact answer is cut at one place per count of finished boxes: read once each.
    compact_read: dict[int, list[list[float]]] = {}
    for cut in range(len(pretty) + 1):
        finished = sum(end <= cut for end in pretty_ends)
        # The compact answer cut where it holds as many finished boxes: right after the last
        # finished box's "]", or just before the first box's "]" when none is finished.
        compact_cut = compact_ends[finished - 1] if finished else compact_ends[0] - 1
        if compact_cut not in compact_read:
            compact_read[compact_cut] = read(prefix + compact[:compact_cut], convention)
        got = read(prefix + pretty[:cut], convention)
        assert got == compact_read[compact_cut], (cut, pretty[:cut])
        assert got == expected[:finished], (cut, pretty[:cut])


QWEN = dict(image_size=(480, 480), input_size=(476, 476), convention="qwen")
# bbox_2d [158, 200, 190, 239] in pixels of the 476 x 476 input, on the 480 x 480 original.
QWEN_BOX = [158 * 480 / 476, 200 * 480 / 476, 32 * 480 / 476, 39 * 480 / 476]


@pytest.mark.parametrize(
    "answer",
    [
        '[{"bbox_2d": [158,\n 200, 190, 239], "label": "lesion"',
        '[{"bbox_2d": [158, 200, 190, 239], "label": "lesion"',
        '```json\n[\n  {\n    "bbox_2d": [\n      158,\n      200,\n      190,\n      239\n    ],\n'
        '    "label": "left frontal lesi',
    ],
    ids=["newline_in_the_list", "compact", "indent_2_cut_in_the_label"],
)
def test_a_cut_off_qwen_answer_keeps_its_finished_box(answer: str) -> None:
    parsed = parse_localization(answer, **QWEN)
    assert parsed.status == "truncated_ok"
    assert parsed.boxes == [pytest.approx(QWEN_BOX)]


def test_a_box_list_cut_before_its_closing_bracket_is_no_box() -> None:
    # The fourth number is written but the "]" is not: 239 may be the start of 2390.
    for answer in (
        '[{"bbox_2d": [158, 200, 190, 239',
        '[{"bbox_2d": [158, 200, 190, 239,',
        '[\n  {\n    "bbox_2d": [\n      158,\n      200,\n      190,\n      239\n',
    ):
        parsed = parse_localization(answer, **QWEN)
        assert (parsed.status, parsed.boxes) == ("unparseable", []), answer
        assert parsed.error == "answer cut off before the first complete box"


def test_a_box_list_cut_inside_its_second_box_keeps_the_first_and_says_it_was_cut() -> None:
    answer = '{"boxes": [[330, 420, 480, 520], [210, 13'
    parsed = parse_localization(answer, image_size=(480, 480), convention="xyxy_norm1000")
    assert parsed.status == "truncated_ok"
    assert parsed.notes == ("answer cut off: what follows its last complete box was not read",)
    assert parsed.boxes == [pytest.approx([158.4, 201.6, 72.0, 48.0])]


def test_a_pretty_printed_boxes_key_cut_after_its_first_box() -> None:
    answer = '{\n  "boxes": [\n    [\n      330,\n      420,\n      480,\n      520\n    ],\n    ['
    parsed = parse_localization(answer, image_size=(480, 480), convention="xyxy_norm1000")
    # 0..1000 of 480 px: x 330 -> 158.4, y 420 -> 201.6, width 150 -> 72, height 100 -> 48.
    assert parsed.status == "truncated_ok"
    assert parsed.boxes == [pytest.approx([158.4, 201.6, 72.0, 48.0])]


# --- boxes written after a JSON answer (user16 finding 4). 0..1000 of a 480 x 480 image:
# [200, 120, 400, 300] x-first is x 96, y 57.6, width 96, height 86.4;
# [210, 130, 390, 310] is x 100.8, y 62.4, width 86.4, height 86.4.
FIRST = [96.0, 57.6, 96.0, 86.4]
CORRECTED = [100.8, 62.4, 86.4, 86.4]
JSON_ANSWER = '{"boxes": [[200, 120, 400, 300]]}'


def read_1000(answer: str) -> tuple[list[list[float]], tuple[str, ...]]:
    parsed = parse_localization(answer, image_size=IMAGE, convention="xyxy_norm1000")
    return parsed.boxes, parsed.notes


@pytest.mark.parametrize("fence", [("```json\n", "\n```\n"), ("", "\n")], ids=["fenced", "bare"])
def test_a_different_box_in_prose_after_the_answer_is_named_in_a_note(fence) -> None:
    opening, closing = fence
    answer = f"{opening}{JSON_ANSWER}{closing}Also a smaller one at [600, 600, 650, 650]."
    boxes, notes = read_1000(answer)
    assert boxes == [pytest.approx(FIRST)]
    assert notes == ("1 different box(es) after the JSON answer not counted: [600, 600, 650, 650]",)


def test_a_fenced_answer_restated_in_prose_is_a_quote() -> None:
    answer = f"```json\n{JSON_ANSWER}\n```\nThe box [200, 120, 400, 300] outlines the mass."
    boxes, notes = read_1000(answer)
    assert boxes == [pytest.approx(FIRST)]
    assert notes == ("1 box(es) after the JSON answer quoting it again not counted",)


def test_a_corrected_second_block_is_the_final_answer() -> None:
    answer = (
        f"```json\n{JSON_ANSWER}\n```\nOn second look the box is too wide. Corrected:\n"
        '```json\n{"boxes": [[210, 130, 390, 310]]}\n```'
    )
    boxes, notes = read_1000(answer)
    assert boxes == [pytest.approx(CORRECTED)]
    assert notes == (
        "an earlier JSON answer not counted (1 box(es): [200, 120, 400, 300]): the last "
        "complete JSON answer is the model's final answer",
    )


def test_a_correction_cut_off_leaves_the_last_complete_answer() -> None:
    answer = (
        f"```json\n{JSON_ANSWER}\n```\nCorrected:\n"
        '```json\n{"boxes": [[210, 130, 390, 310], [50, 60'
    )
    parsed = parse_localization(answer, image_size=IMAGE, convention="xyxy_norm1000")
    assert (parsed.status, parsed.boxes) == ("ok", [pytest.approx(FIRST)])
    assert parsed.notes == (
        "a later JSON answer cut off before its end not counted (1 box(es): "
        "[210, 130, 390, 310]): the last complete JSON answer is scored",
    )


def test_an_unfenced_correction_is_read_alone() -> None:
    # Bare lists of lists are read by the line reader: only the corrected answer's text.
    boxes, notes = read_1000("[[200, 120, 400, 300]]\nCorrected: [[210, 130, 390, 310]]")
    assert boxes == [pytest.approx(CORRECTED)]
    assert len(notes) == 1 and notes[0].startswith("an earlier JSON answer not counted")


def test_a_correction_cut_in_its_second_object_leaves_the_first_answer() -> None:
    answer = (
        '{"bbox_2d": [200, 120, 400, 300]}\nCorrected:\n'
        '{"bbox_2d": [210, 130, 390, 310]}\n{"bbox_2d": [50, 60, 70'
    )
    boxes, notes = read_1000(answer)
    assert boxes == [pytest.approx(FIRST)]
    assert len(notes) == 1 and notes[0].startswith("a later JSON answer cut off")


def test_of_two_broken_answers_the_last_is_scored() -> None:
    # The first block lacks its closing brace, the second is cut: neither is complete.
    answer = (
        '```json\n{"boxes": [[200, 120, 400, 300]]\n```\nCorrected:\n'
        '```json\n{"boxes": [[210, 130, 390, 310]]'
    )
    boxes, _ = read_1000(answer)
    assert boxes == [pytest.approx(CORRECTED)]


def test_prose_quoting_the_corrected_box_is_a_quote() -> None:
    answer = (
        f"```json\n{JSON_ANSWER}\n```\nCorrected:\n"
        '```json\n{"boxes": [[210, 130, 390, 310]]}\n```\n'
        "The box [210, 130, 390, 310] now fits the lesion."
    )
    boxes, notes = read_1000(answer)
    assert boxes == [pytest.approx(CORRECTED)]
    assert notes[1:] == ("1 box(es) after the JSON answer quoting it again not counted",)
