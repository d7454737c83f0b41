"""Box-parser behaviours that the mutation check (scripts/mutation_check.py) found unpinned.

Each test names the behaviour, not the mutant; every expected value is worked out by hand in
the comment beside it.
"""

from __future__ import annotations

import ast
import dataclasses
import json
from pathlib import Path

import pytest

from novabench.errors import NovaInputError
from novabench.run.parsers import parse_localization
from novabench.run.parsers.text import _MAX_CHARS

IMAGE = (480, 480)


def test_a_parsed_answer_cannot_be_changed_after_parsing() -> None:
    # Stats and reports read the same ParsedBoxes more than once: it is frozen.
    parsed = parse_localization("lesion: [250, 100, 750, 500]", image_size=IMAGE)
    with pytest.raises(dataclasses.FrozenInstanceError):
        parsed.status = "no_target"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("entry", "shown"),
    [
        # repr is 40 characters (38 + 2 quotes): shown whole.
        ("lesion in the left frontal lobe, see T", "'lesion in the left frontal lobe, see T'"),
        # repr is 41 characters: its first 37 ("'" + 36 letters) then "...".
        ("lesion in the left frontal lobe, see T2", "'lesion in the left frontal lobe, see..."),
    ],
)
def test_an_entry_that_is_not_a_box_is_quoted_up_to_40_characters(entry: str, shown: str) -> None:
    parsed = parse_localization(json.dumps({"boxes": [entry]}), image_size=IMAGE)
    assert parsed.status == "unparseable"
    assert parsed.error == (
        f"the box list holds {shown} where a box of 4 numbers was expected, and no box"
    )


def test_a_box_list_of_objects_without_coordinates_is_not_a_no_target_answer() -> None:
    # The model named a lesion but gave no coordinates: nothing to score, and no statement
    # that nothing is there either.
    parsed = parse_localization(
        '{"boxes": [{"label": "lesion in the left thalamus"}]}', image_size=IMAGE
    )
    assert parsed.status == "unparseable"
    assert parsed.error == "no box and no 'no target' statement found"


def test_an_empty_list_under_a_key_that_holds_no_boxes_is_not_a_no_target_answer() -> None:
    parsed = parse_localization('{"lesion": "unclear", "differential": []}', image_size=IMAGE)
    assert parsed.status == "unparseable"


@pytest.mark.parametrize(
    ("answer", "labels"),
    [
        # A key holding a box is its label; a box list's key ("boxes") is not.
        ('{"left frontal lesion": [250, 100, 750, 500]}', ["left frontal lesion"]),
        ('{"boxes": [250, 100, 750, 500]}', [""]),
        ('{"boxes": [[250, 100, 750, 500], [100, 100, 200, 200]]}', ["", ""]),
    ],
)
def test_labels_of_boxes_in_json_objects(answer: str, labels: list[str]) -> None:
    parsed = parse_localization(answer, image_size=IMAGE, convention="protocol")
    assert parsed.labels == labels
    assert parsed.notes == ()  # per mille needs no input size: nothing assumed
    # [ymin, xmin, ymax, xmax] = [250, 100, 750, 500] per mille of 480 px: x 48, y 120,
    # width 400 * 0.48 = 192, height 500 * 0.48 = 240.
    assert parsed.boxes[0] == [48.0, 120.0, 192.0, 240.0]


def test_a_box_nested_25_objects_deep_is_read_from_the_json() -> None:
    # Well inside the parser's depth limit (40): read from the JSON with its key as label,
    # not from the text line by line.
    nested: object = {"lesion": [250, 100, 750, 500]}
    for _ in range(25):
        nested = {"finding": nested}
    parsed = parse_localization(json.dumps(nested), image_size=IMAGE, convention="protocol")
    assert parsed.labels == ["lesion"]
    assert parsed.boxes == [[48.0, 120.0, 192.0, 240.0]]


@pytest.mark.parametrize(
    ("corners", "box"),
    [
        # 0..1 fractions of 480 px, touching the left edge: x 0 to 240, y 120 to 360.
        ({"x1": 0.0, "y1": 0.25, "x2": 0.5, "y2": 0.75}, [0.0, 120.0, 240.0, 240.0]),
        # ... and the right edge: x 240 to 480.
        ({"x1": 0.5, "y1": 0.25, "x2": 1.0, "y2": 0.75}, [240.0, 120.0, 240.0, 240.0]),
    ],
)
def test_named_corners_in_zero_to_one_include_both_ends(
    corners: dict[str, float], box: list[float]
) -> None:
    parsed = parse_localization(json.dumps(corners), image_size=IMAGE)
    assert (parsed.status, parsed.convention, parsed.boxes) == ("ok", "xyxy_norm1", [box])


@pytest.mark.parametrize(
    "quoted",
    ["[100, 100, 200, 200]", "(100, 100, 200, 200)"],  # JSON itself, or only box-like text
)
def test_a_json_box_list_then_another_box_in_prose_counts_the_json_only(quoted: str) -> None:
    answer = f"[[250, 100, 750, 500]]\nAlso a smaller one at {quoted}."
    parsed = parse_localization(answer, image_size=IMAGE, convention="protocol")
    assert parsed.boxes == [[48.0, 120.0, 192.0, 240.0]]
    assert parsed.notes == (
        "1 different box(es) after the JSON answer not counted: [100, 100, 200, 200]",
    )


def test_a_qwen2_box_takes_the_last_object_reference_before_it_as_label() -> None:
    answer = (
        "<|object_ref_start|>brain<|object_ref_end|> shows a "
        "<|object_ref_start|>lesion<|object_ref_end|><|box_start|>(100,200),(300,400)<|box_end|>"
    )
    parsed = parse_localization(answer, image_size=IMAGE)
    assert parsed.labels == ["lesion"]


@pytest.mark.parametrize(
    ("bbox_2d", "status", "box"),
    [
        # x-first per mille of 480 px: x 48 to 480, y 96 to 384 (1000 itself is the edge).
        ([100, 200, 1000, 800], "ok", [48.0, 96.0, 432.0, 288.0]),
        # 0..1 floats or values past 1000 are not what a prompt for 0..1000 gets back.
        ([0.1, 0.2, 0.5, 0.6], "ambiguous_convention", None),
        ([100, 200, 1036, 800], "ambiguous_convention", None),
    ],
)
def test_bbox_2d_under_a_prompt_for_per_mille_values(
    bbox_2d: list[float], status: str, box: list[float] | None
) -> None:
    answer = json.dumps([{"bbox_2d": bbox_2d, "label": "lesion"}])
    parsed = parse_localization(answer, image_size=IMAGE, prompt_convention="xyxy_norm1000")
    assert parsed.status == status
    if box is None:
        assert parsed.readable_with == ("qwen",)
    else:
        assert (parsed.convention, parsed.boxes) == ("xyxy_norm1000", [box])


def test_named_x_y_width_height_all_within_zero_to_one_are_refused_up_to_one() -> None:
    # 1.0 is still "all in [0, 1]": fractions or a 1-pixel box cannot be told apart.
    answer = '{"x": 0.25, "y": 0.25, "width": 0.5, "height": 1.0}'
    parsed = parse_localization(answer, image_size=IMAGE)
    assert parsed.status == "ambiguous_convention"
    assert parsed.error is not None and "unknown scale" in parsed.error


def test_bare_pixel_lists_under_a_qwen_prompt_are_read_as_qwen_pixels() -> None:
    # Qwen2.5-VL's x1, y1, x2, y2 in pixels of the image it saw (here the original).
    parsed = parse_localization("[100, 200, 300, 400]", image_size=IMAGE, prompt_convention="qwen")
    assert (parsed.status, parsed.convention, parsed.boxes) == (
        "ok",
        "qwen",
        [[100.0, 200.0, 200.0, 200.0]],
    )
    assert parsed.notes == ("input_size not given: assumed the model saw the original image size",)


@pytest.mark.parametrize("size", [(480, 0), (0, 480)])
def test_an_image_size_with_a_zero_side_is_refused(size: tuple[int, int]) -> None:
    with pytest.raises(NovaInputError) as refused:
        parse_localization("lesion: [250, 100, 750, 500]", image_size=size)
    assert refused.value.field == "image_size"


def test_prose_before_a_fenced_json_answer_is_not_the_answer() -> None:
    answer = "Here: [[100, 100, 200, 200]]\n```json\n[[250, 100, 750, 500]]\n```"
    parsed = parse_localization(answer, image_size=IMAGE, convention="protocol")
    assert (parsed.labels, parsed.boxes) == ([""], [[48.0, 120.0, 192.0, 240.0]])


def test_a_json_object_without_boxes_before_the_box_list_is_not_the_answer() -> None:
    # The reasoning object holds no box: the answer is the list after it, not prose after
    # an empty answer.
    answer = '{"reasoning": "one lesion in the left frontal lobe"}\nBoxes:\n[[250, 100, 750, 500]]'
    parsed = parse_localization(answer, image_size=IMAGE, convention="protocol")
    assert (parsed.status, parsed.boxes, parsed.notes) == (
        "ok",
        [[48.0, 120.0, 192.0, 240.0]],
        (),
    )


@pytest.mark.parametrize(
    "answer",
    [
        "lesion: [250, 500, 750, 100]",  # xmax before xmin only
        "lesion: [750, 100, 250, 500]",  # ymax before ymin only
    ],
)
def test_corners_swapped_on_one_axis_only_are_put_right_and_counted(answer: str) -> None:
    parsed = parse_localization(answer, image_size=IMAGE, convention="protocol")
    assert (parsed.boxes, parsed.n_swapped) == ([[48.0, 120.0, 192.0, 240.0]], 1)


@pytest.mark.parametrize(("tail_length", "status"), [(200, "truncated_ok"), (201, "ok")])
def test_a_box_left_open_counts_as_cut_off_within_the_last_200_characters(
    tail_length: int, status: str
) -> None:
    # A second box opened and never closed (in parentheses: no JSON reader flags those):
    # the answer was cut off when the "(" is within the last 200 characters; one opened
    # earlier and followed by that much prose is not.
    opened = "(120, 340, "
    filler = ("then the answer went on about the lesion " * 10)[: tail_length - len(opened) - 1]
    tail = opened + filler + "x"
    assert len(tail) == tail_length and "]" not in tail and ")" not in tail
    answer = "lesion: [250, 100, 750, 500]\nsecond lesion: " + tail
    parsed = parse_localization(answer, image_size=IMAGE, convention="protocol")
    assert (parsed.status, parsed.boxes) == (status, [[48.0, 120.0, 192.0, 240.0]])


@pytest.mark.parametrize(
    "answer",
    [
        "[[]]",  # a list holding an empty list: no box, and not the empty answer "[]"
        '{"found": true, "note": "coordinates to follow"}',  # found, but no box given
    ],
)
def test_answers_that_are_neither_a_box_nor_no_target(answer: str) -> None:
    parsed = parse_localization(answer, image_size=IMAGE)
    assert parsed.status == "unparseable"


def test_a_box_list_inside_a_sentence_is_read_from_the_json_without_labels() -> None:
    answer = "Lesions: [[250, 100, 750, 500], [100, 100, 200, 200]] (left frontal, right occipital)"
    parsed = parse_localization(answer, image_size=IMAGE, convention="protocol")
    # The second box, per mille of 480 px: x and y 48, width and height 100 * 0.48 = 48.
    assert parsed.boxes == [[48.0, 120.0, 192.0, 240.0], [48.0, 48.0, 48.0, 48.0]]
    assert parsed.labels == ["", ""]


def test_a_labelled_box_nested_in_25_lists_is_read_from_the_json() -> None:
    # Within the depth limit (40): the key is the label, as at the top level.
    nested: object = {"lesion": [250, 100, 750, 500]}
    for _ in range(25):
        nested = [nested]
    parsed = parse_localization(json.dumps(nested), image_size=IMAGE, convention="protocol")
    assert (parsed.labels, parsed.boxes) == (["lesion"], [[48.0, 120.0, 192.0, 240.0]])


def test_an_answer_of_exactly_the_size_cap_is_read_whole_without_a_note() -> None:
    box = "lesion: [250, 100, 750, 500]"
    answer = box + "\n" + "x" * (_MAX_CHARS - len(box) - 1)
    assert len(answer) == _MAX_CHARS
    parsed = parse_localization(answer, image_size=IMAGE, convention="protocol")
    assert (parsed.boxes, parsed.notes) == ([[48.0, 120.0, 192.0, 240.0]], ())


# Per mille of 480 px (the protocol's [ymin, xmin, ymax, xmax]): 100 -> 48, 200 -> 96,
# 300 -> 144, 400 -> 192, 500 -> 240, 600 -> 288, 700 -> 336, 800 -> 384.
_JSON_THEN_PROSE = '{"boxes": [[100, 100, 200, 200]]}\nOther candidates: '


@pytest.mark.parametrize(
    ("prose_boxes", "shown"),
    [
        # Three boxes after the answer: all three quoted in the note.
        (
            "[300, 300, 400, 400], [500, 500, 600, 600], [700, 700, 800, 800]",
            "3 different box(es) after the JSON answer not counted: [300, 300, 400, 400], "
            "[500, 500, 600, 600], [700, 700, 800, 800]",
        ),
        # Four: the first three, then "...".
        (
            "[300, 300, 400, 400], [500, 500, 600, 600], [700, 700, 800, 800], [10, 10, 20, 20]",
            "4 different box(es) after the JSON answer not counted: [300, 300, 400, 400], "
            "[500, 500, 600, 600], [700, 700, 800, 800], ...",
        ),
    ],
)
def test_boxes_in_prose_after_the_json_answer_are_quoted_up_to_three(
    prose_boxes: str, shown: str
) -> None:
    parsed = parse_localization(
        _JSON_THEN_PROSE + prose_boxes, image_size=IMAGE, convention="protocol"
    )
    # Only the JSON box is scored: y and x 100..200 per mille -> 48, size 48.
    assert parsed.boxes == [[48.0, 48.0, 48.0, 48.0]]
    assert parsed.notes == (shown,)


_CUT_NOTE = "answer cut off: what follows its last complete box was not read"


@pytest.mark.parametrize(
    ("answer", "labels", "boxes"),
    [
        # The second object is cut inside its label: its box_2d was written whole and is
        # kept (y-first per mille: x 600 -> 288, y 500 -> 240, 100 per mille -> 48 wide), with
        # no label (a cut label is none); the first object keeps its own.
        (
            '[{"box_2d": [100, 200, 300, 400], "label": "mass"}, '
            '{"box_2d": [500, 600, 700, 800], "label": "ede',
            ["mass", ""],
            [[96.0, 48.0, 96.0, 96.0], [288.0, 240.0, 96.0, 96.0]],
        ),
        # The label written before the box in the cut object is its label.
        (
            '[{"box_2d": [100, 200, 300, 400], "label": "mass"}, '
            '{"label": "edema", "box_2d": [500, 600, 700, 800]',
            ["mass", "edema"],
            [[96.0, 48.0, 96.0, 96.0], [288.0, 240.0, 96.0, 96.0]],
        ),
        # Unquoted keys, the label first.
        (
            '{label: "edema", box_2d: [500, 600, 700, 800]',
            ["edema"],
            [[288.0, 240.0, 96.0, 96.0]],
        ),
        # A box_2d quoted in prose before the fenced answer is not the answer's: the cut
        # answer's two boxes only (300..400 per mille -> 144, size 48).
        (
            "Earlier guess: box_2d: [100, 100, 200, 200]\n```json\n"
            '[{"box_2d": [300, 300, 400, 400], "label": "mass"}, '
            '{"box_2d": [500, 600, 700, 800], "label": "ede',
            ["mass", ""],
            [[144.0, 144.0, 48.0, 48.0], [288.0, 240.0, 96.0, 96.0]],
        ),
    ],
)
def test_a_box_2d_written_whole_in_a_cut_off_object_is_kept(
    answer: str, labels: list[str], boxes: list[list[float]]
) -> None:
    parsed = parse_localization(answer, image_size=IMAGE)
    assert (parsed.status, parsed.convention) == ("truncated_ok", "protocol")
    assert (parsed.labels, parsed.boxes, parsed.notes) == (labels, boxes, (_CUT_NOTE,))


def test_a_bbox_2d_written_whole_in_a_cut_off_object_is_read_as_qwen_pixels() -> None:
    # bbox_2d is x-first pixels (Qwen2.5-VL): the cut object's box is x 50..70, y 60..80.
    answer = (
        '[{"bbox_2d": [10, 20, 300, 400], "label": "mass"}, '
        '{"bbox_2d": [50, 60, 70, 80], "label": "x"'
    )
    parsed = parse_localization(answer, image_size=IMAGE)
    assert (parsed.status, parsed.convention) == ("truncated_ok", "qwen")
    assert parsed.labels == ["mass", "x"]
    assert parsed.boxes == [[10.0, 20.0, 290.0, 380.0], [50.0, 60.0, 20.0, 20.0]]


@pytest.mark.parametrize("closed", ["", '00, 600, 700, 800], "label": "edema"}]'])
def test_a_box_2d_in_prose_before_a_cut_json_answer_is_not_counted_twice(closed: str) -> None:
    # The prose box joins the answer after it (boxes before the first JSON answer always
    # did); the JSON answer's own box is read once, whether the answer was cut after its
    # first object or not. Per mille of 480 px, y first: [200, 100, 300, 400] -> x 48..192,
    # y 96..144; [500, 600, 700, 800] -> x 288..384, y 240..336.
    answer = (
        "The lesion is at box_2d: [200, 100, 300, 400], the mass.\n"
        '[{"box_2d": [500, 600, 700, 800], "label": "edema"}, {"box_2d": [5' + closed
    )
    parsed = parse_localization(answer, image_size=IMAGE, convention="protocol")
    mass, edema = [48.0, 96.0, 144.0, 48.0], [288.0, 240.0, 96.0, 96.0]
    if closed:  # the second object closed: it is the same box again, written twice
        assert parsed.boxes == [mass, edema, edema]
    else:
        assert (parsed.status, parsed.boxes) == ("truncated_ok", [mass, edema])


def test_box_2d_fractions_touching_the_edges_under_a_prompt_for_fractions() -> None:
    # The prompt asked for 0..1 fractions; box_2d fixes y first. 0.0 and 1.0 are fractions
    # too: ymin 0 -> 0 px, xmin 0.25 -> 120, ymax 0.5 -> 240, xmax 1.0 -> 480.
    answer = '[{"box_2d": [0.0, 0.25, 0.5, 1.0], "label": "mass"}]'
    parsed = parse_localization(answer, image_size=IMAGE, prompt_convention="xyxy_norm1")
    assert (parsed.status, parsed.convention) == ("ok", "yxyx_norm1")
    assert parsed.boxes == [[120.0, 0.0, 360.0, 240.0]]


@pytest.mark.parametrize(
    ("prompt", "why"),
    [
        (None, ""),
        ("protocol", " and the run's prompt asked for protocol"),
    ],
)
def test_box_2d_fractions_name_the_prompt_only_when_one_is_on_record(
    prompt: str | None, why: str
) -> None:
    answer = '[{"box_2d": [0.1, 0.2, 0.5, 0.6], "label": "mass"}]'
    parsed = parse_localization(answer, image_size=IMAGE, prompt_convention=prompt)
    assert (parsed.status, parsed.readable_with) == ("ambiguous_convention", ("yxyx_norm1",))
    assert parsed.error == (
        "1 box(es) found but the convention is ambiguous: box_2d values in 0..1, but box_2d "
        f"is Gemini's 0..1000 form{why}: y-first fractions are read only when chosen; pass "
        "convention= explicitly"
    )


def test_a_box_2d_fraction_box_touching_the_edges_beside_a_per_mille_one() -> None:
    # The first box is 0..1 fractions (0.0 and 1.0 included), the second Gemini's 0..1000
    # units with a decimal: no single scale reads both, and only the first counts as a
    # fraction box ("1 of 2"); the largest value is 400.
    answer = (
        '[{"box_2d": [0.0, 0.25, 0.5, 1.0], "label": "mass"}, '
        '{"box_2d": [100.5, 200, 300, 400], "label": "edema"}]'
    )
    parsed = parse_localization(answer, image_size=IMAGE)
    assert (parsed.status, parsed.boxes) == ("ambiguous_convention", [])
    assert parsed.error == (
        "2 box(es) found but the convention is ambiguous: box_2d values in 0..1 in 1 of 2 "
        "boxes and up to 400 in the others: 0..1 fractions and Gemini's 0..1000 units in one "
        "answer; pass convention= explicitly"
    )


_DECLINED = "As an AI language model, I cannot analyze medical images.\n"


@pytest.mark.parametrize(
    ("answer", "shown"),
    [
        # 57 + " " + 22 = 80 characters once the line break is a space: quoted whole.
        (
            _DECLINED + "Consult a radiologist.",
            "As an AI language model, I cannot analyze medical images. Consult a radiologist.",
        ),
        # 81 characters: its first 77 (58 up to "Consult", then 19: "Consult your physic"),
        # then "...".
        (
            _DECLINED + "Consult your physician.",
            "As an AI language model, I cannot analyze medical images. Consult your physic...",
        ),
    ],
)
def test_a_refusal_is_quoted_on_one_line_up_to_80_characters(answer: str, shown: str) -> None:
    parsed = parse_localization(answer, image_size=IMAGE)
    assert (parsed.status, parsed.boxes) == ("refusal", [])
    assert parsed.error == f"the model declined to localise: {shown!r}"


@pytest.mark.parametrize("between", ["\n", " "])  # one lesion a line, or both on one line
def test_lesions_listed_after_a_fenced_block_without_json_are_all_scored(between: str) -> None:
    # The fenced block holds prose, no JSON: the whole text is read, and its two numbered
    # lesions are one answer. Per mille of 480 px, y first: [100, 100, 200, 200] -> x and y
    # 48, size 48; [300, 600, 400, 700] -> x 288, y 144, size 48.
    answer = (
        "Findings:\n```\nT2 hyperintense lesions in both hemispheres\n```\n"
        'Lesion 1: {"box_2d": [100, 100, 200, 200], "label": "left frontal"}'
        + between
        + 'Lesion 2: {"box_2d": [300, 600, 400, 700], "label": "right parietal"}'
    )
    parsed = parse_localization(answer, image_size=IMAGE)
    assert (parsed.status, parsed.labels) == ("ok", ["left frontal", "right parietal"])
    assert parsed.boxes == [[48.0, 48.0, 48.0, 48.0], [288.0, 144.0, 48.0, 48.0]]
    assert parsed.notes == (
        "2 JSON answers, one per numbered lesion (Lesion 1, Lesion 2...), scored together",
    )


def test_a_box_restated_by_two_later_answers_is_no_prose_box() -> None:
    # Three JSON answers, the last two holding the same box: the last is scored, the two
    # earlier ones are set aside, and the box written twice after the first answer is each
    # time a later answer's own box, not prose (300..400 per mille of 480 px -> 144, 48).
    answer = (
        'First try: {"boxes": [[100, 100, 200, 200]]}\n'
        'On a second look: {"boxes": [[300, 300, 400, 400]]}\n'
        'Final answer: {"boxes": [[300, 300, 400, 400]]}'
    )
    parsed = parse_localization(answer, image_size=IMAGE, convention="protocol")
    assert (parsed.status, parsed.boxes) == ("ok", [[144.0, 144.0, 48.0, 48.0]])
    earlier = (
        "an earlier JSON answer not counted (1 box(es): {}): the last complete JSON answer "
        "is the model's final answer"
    )
    assert parsed.notes == (
        earlier.format("[100, 100, 200, 200]"),
        earlier.format("[300, 300, 400, 400]"),
    )


@pytest.mark.parametrize(
    "preamble",
    [
        "Overall, two lesions:",  # "overall" before the list sums up nothing yet
        "Otherwise unremarkable brain. Lesions:",  # "otherwise" opens no alternative here
    ],
)
def test_words_of_the_preamble_do_not_undo_a_numbered_list_of_lesions(preamble: str) -> None:
    # Before "Lesion 2" those words would make the second object a correction or an
    # alternative; before "Lesion 1" they are the report's opening. Both lesions are scored
    # (per mille of 480 px: [100, 100, 200, 200] -> 48, 48, 48, 48; [300, 600, 400, 700] ->
    # x 288, y 144, size 48).
    answer = (
        preamble + "\n"
        'Lesion 1: {"box_2d": [100, 100, 200, 200], "label": "left frontal"}\n'
        'Lesion 2: {"box_2d": [300, 600, 400, 700], "label": "right parietal"}'
    )
    parsed = parse_localization(answer, image_size=IMAGE)
    assert parsed.boxes == [[48.0, 48.0, 48.0, 48.0], [288.0, 144.0, 48.0, 48.0]]
    assert parsed.notes == (
        "2 JSON answers, one per numbered lesion (Lesion 1, Lesion 2...), scored together",
    )


_TUMOUR_WITH_CORE = (
    '{"box_2d": [200, 100, 300, 400], "label": "tumour", '
    '"core": {"box_2d": [220, 120, 280, 380], "label": "enhancing core"}}'
)


@pytest.mark.parametrize(
    "answer",
    [
        _TUMOUR_WITH_CORE,
        _TUMOUR_WITH_CORE[:-2],  # cut after the core's label: the core object unfinished
        _TUMOUR_WITH_CORE[: _TUMOUR_WITH_CORE.index(', "label": "enhancing')],  # after its "]"
    ],
)
def test_a_cut_answer_reads_no_box_its_whole_form_does_not(answer: str) -> None:
    # An object holding a box is one box: the box of an object nested in it is not read
    # (the whole answer gives one). Cut off, it gave two: the nested box was added back as
    # a "whole keyed box of the unfinished object". y first, per mille of 480 px:
    # [200, 100, 300, 400] -> x 48..192, y 96..144.
    parsed = parse_localization(answer, image_size=IMAGE)
    assert (parsed.labels, parsed.boxes) == (["tumour"], [[48.0, 96.0, 144.0, 48.0]])


def test_a_labelled_line_before_a_json_list_of_names_keeps_its_whole_label() -> None:
    # The JSON object names the lesion but holds no box: the line before it is the box, read
    # with the text from the very start ("Left", not "eft"), and the name that is no box is
    # noted. Per mille of 480 px: [250, 100, 750, 500] -> x 48, y 120, 192 x 240.
    answer = 'Left frontal lesion: [250, 100, 750, 500]\n{"lesions": ["left frontal"]}'
    parsed = parse_localization(answer, image_size=IMAGE, convention="protocol")
    assert (parsed.status, parsed.boxes) == ("ok", [[48.0, 120.0, 192.0, 240.0]])
    assert parsed.labels == ["Left frontal lesion"]
    assert parsed.notes == ("1 entry of a box list not 4 numbers ('left frontal'): not read",)


# Files that call the box parser only on the way to something else (a baseline's answers, a
# preset's prompt): their checks are not of the parser's rules, and they are slower.
_INCIDENTAL_CALLERS = {"tests/run/test_baselines.py", "tests/run/test_presets.py"}


def test_every_box_parser_test_file_is_among_its_mutation_targets() -> None:
    # trust28's test_not_finite_boxes.py was left out: its rules then counted as survivors
    # (boxes.py fell from 99.3% to 95.4%) although tests pinned them.
    root = Path(__file__).resolve().parents[2]
    script = ast.parse((root / "scripts" / "mutation_check.py").read_text(encoding="utf-8"))
    targets = next(
        ast.literal_eval(node.value)
        for node in script.body
        if isinstance(node, ast.AnnAssign)
        and isinstance(node.target, ast.Name)
        and node.target.id == "DEFAULT_TARGETS"
        and node.value is not None
    )["src/novabench/run/parsers/boxes.py"]
    callers = {
        path.relative_to(root).as_posix()
        for path in (root / "tests").rglob("test_*.py")
        if "parse_localization(" in path.read_text(encoding="utf-8")
    }
    assert callers - _INCIDENTAL_CALLERS <= set(targets), sorted(
        callers - _INCIDENTAL_CALLERS - set(targets)
    )
