"""A box written with a value that is not a finite number (user30): said so, in every form.

No read moves: such a box was never scored, in any form. What changes is what the answer
says about it: the error of an answer whose only box it is (``invalid_boxes``, as the
JSON form already was, not "no box ... found"), the dropped-box note and count of an answer
that kept others, and the report's box warnings, whose counts add up to the answers scored.
"""

from __future__ import annotations

import pytest

from novabench.report.render import answers_without_boxes_phrase, boxes_confined_line
from novabench.run.parsers import parse_localization

SIZE = (480, 480)
# [100, 100, 200, 200] read y-first in 0..1000 on a 480 px image: 48 px from the top-left,
# 48 px each side (1000 units = 480 px, so 100 units = 48 px).
GOOD = [[48.0, 48.0, 48.0, 48.0]]


@pytest.mark.parametrize(
    "answer",
    [
        "[nan, 100, 150, 150]",
        "The lesion is at [nan, 100, 150, 150].",
        "lesion: [NaN, 100, 150, 150]",
        "lesion: [100, 100, -inf, 150]",
        "lesion: (Infinity, 100, 150, 150)",
    ],
)
@pytest.mark.parametrize("convention", ["auto", "protocol", "xyxy_pixel"])
def test_an_answer_whose_only_box_is_not_finite_says_so(answer: str, convention: str) -> None:
    parsed = parse_localization(answer, image_size=SIZE, convention=convention)
    assert parsed.boxes == []
    assert parsed.status == "invalid_boxes"  # as '{"bbox_2d": [NaN, 1, 5, 5]}' always was
    assert parsed.n_degenerate_dropped == 1
    assert parsed.error is not None and "not a finite number" in parsed.error
    assert "no box and no 'no target'" not in parsed.error
    written = answer[answer.index("[") if "[" in answer else answer.index("(") :].rstrip(".")
    assert written in parsed.error  # the box as the model wrote it
    assert parsed.notes == (
        f"1 box(es) with a value that is not a finite number (NaN or infinite) not read: {written}",
    )


@pytest.mark.parametrize(
    "answer",
    [
        "[[nan, 100, 150, 150], [100, 100, 200, 200]]",  # the JSON list form
        "lesion: [nan, 100, 150, 150]\nedema: [100, 100, 200, 200]",  # labelled lines
        "The lesion is at [nan, 100, 150, 150] and [100, 100, 200, 200].",  # prose
    ],
)
def test_a_dropped_non_finite_box_is_noted_and_counted_in_every_form(answer: str) -> None:
    parsed = parse_localization(answer, image_size=SIZE, convention="protocol")
    assert parsed.status == "ok" and parsed.boxes == GOOD  # the read is the finite box alone
    assert parsed.n_degenerate_dropped == 1
    assert parsed.notes == (
        "1 of 2 boxes dropped (not scored): 1 with a value that is not a finite number",
    )


def test_reads_do_not_move_with_the_note() -> None:
    """The finite box of an answer is read exactly as the same answer without the NaN box."""
    with_nan = parse_localization(
        "lesion: [nan, 1, 2, 3]\nedema: [100, 100, 200, 200]", image_size=SIZE
    )
    without = parse_localization("edema: [100, 100, 200, 200]", image_size=SIZE)
    assert with_nan.boxes == without.boxes == GOOD
    assert with_nan.labels == without.labels == ["edema"]
    assert (with_nan.status, with_nan.convention) == (without.status, without.convention)


def test_a_non_finite_box_is_noted_where_no_box_is_read() -> None:
    no_target = parse_localization("No target. [nan, nan, nan, nan]", image_size=SIZE)
    assert no_target.status == "no_target" and no_target.boxes == []
    # A dropped box all the same: counted as every other (user31: it was 0, said only in
    # the note, which no report shows).
    assert no_target.n_degenerate_dropped == 1
    assert no_target.notes == (
        "1 box(es) with a value that is not a finite number (NaN or infinite) not read: "
        "[nan, nan, nan, nan]",
    )
    # An order left open: nothing is read, and the NaN box would be dropped under any order.
    open_order = parse_localization("[[nan, 100, 150, 150], [100, 100, 200, 200]]", image_size=SIZE)
    assert open_order.status == "ambiguous_convention" and open_order.boxes == []
    assert open_order.n_degenerate_dropped == 0  # nothing was read, nor dropped: unread
    assert open_order.notes == (
        "1 box(es) with a value that is not a finite number (NaN or infinite) not read: "
        "[nan, 100, 150, 150]",
    )


@pytest.mark.parametrize(
    "answer",
    [
        '{"boxes": [[NaN, NaN, NaN, NaN]]}',  # user32: was ambiguous, "values up to 0"
        '{"boxes": [[NaN, 1, 5, 5]]}',
        '{"boxes": [[Infinity, 1, 5, 5], [NaN, 1, 2, 3]]}',
    ],
)
def test_json_boxes_that_are_all_non_finite_are_invalid_under_auto_too(answer: str) -> None:
    # No convention reads such a box, so auto has no order to ask for: the answer is what
    # every explicit convention makes of it.
    auto = parse_localization(answer, image_size=SIZE)
    explicit = parse_localization(answer, image_size=SIZE, convention="protocol")
    assert auto.status == explicit.status == "invalid_boxes"
    assert auto.boxes == explicit.boxes == []
    assert auto.n_degenerate_dropped == explicit.n_degenerate_dropped == answer.count("[") - 1
    assert auto.error == explicit.error and "not a finite number" in str(auto.error)
    assert auto.notes == explicit.notes
    assert auto.convention is None  # no box converted, no convention used (as "ambiguous" had)


@pytest.mark.parametrize(
    "answer",
    [
        '{"boxes": [[NaN, 1, 5, 5], [10, 10, 50, 50]]}',  # the NaN box read from JSON
        "The lesion is at [nan, 1, 5, 5] and [10, 10, 50, 50].",  # written in text
    ],
)
def test_an_open_order_counts_only_the_finite_boxes_it_found(answer: str) -> None:
    parsed = parse_localization(answer, image_size=SIZE)
    assert parsed.status == "ambiguous_convention" and parsed.boxes == []
    assert str(parsed.error).startswith("1 box(es) found but the convention is ambiguous")


@pytest.mark.parametrize(
    "answer", ["an infinite (in, nan, 1, 2) region", "information [1, 2] nan", "No box here."]
)
def test_words_that_are_no_box_are_not_taken_for_one(answer: str) -> None:
    parsed = parse_localization(answer, image_size=SIZE, convention="protocol")
    assert parsed.status == "unparseable" and parsed.notes == ()
    assert parsed.error == "no box and no 'no target' statement found"


def test_the_box_warnings_counts_add_up_to_the_answers_scored() -> None:
    # 132 answers: 131 with boxes (all in the top-left corner), 1 whose only box was NaN.
    coverage = {
        "answered": 132,
        "parse_status": {"ok": 131, "invalid_boxes": 1},
        "boxes_confined": "corner",
        "answers_with_boxes": 131,
        "confined_answers": 131,
        "confined_reach": [0.15, 0.15],
        "confined_reach_pixels": [72.0, 72.0],
        "confined_reread": 131,
        "spread_with": {},
    }
    line = boxes_confined_line("localization", coverage, {"box_convention": "protocol"})
    assert line is not None
    assert "131 of the 131 answers with boxes" in line
    assert "the other 1 of the 132 answers has no box read (invalid_boxes 1)" in line
    # Several statuses, most first; nothing to add when every answer holds boxes.
    assert answers_without_boxes_phrase(
        {"answered": 10, "parse_status": {"ok": 6, "no_target": 1, "unparseable": 3}}, 6
    ) == ("; the other 4 of the 10 answers have no box read (unparseable 3, no_target 1)")
    assert answers_without_boxes_phrase({"answered": 6, "parse_status": {"ok": 6}}, 6) == ""


@pytest.mark.parametrize(
    ("answer", "shown"),
    [
        ('{"bbox_2d": [NaN, 1, 5, 5]}', "[nan, 1, 5, 5]"),
        ('{"boxes": [[1, Infinity, 5.5, 5]]}', "[1, inf, 5.5, 5]"),
        # Quoted as written: the text scan finds it before any JSON reader.
        ('[{"box_2d": [-Infinity, 1, 5, 5], "label": "mass"}]', "[-Infinity, 1, 5, 5]"),
        ("lesion: [1e400, 1, 2, 3]", "[inf, 1, 2, 3]"),  # past a float: read as infinite
        ("[nan, 1, 5, 5]", "[nan, 1, 5, 5]"),  # the text form, as it was
    ],
)
def test_every_form_of_a_lone_non_finite_box_quotes_it(answer: str, shown: str) -> None:
    """user31: the JSON forms and 1e400 said "every box had a value that is not a finite
    number" with no box, the text forms quoted it: one error and one note for all."""
    parsed = parse_localization(answer, image_size=SIZE, convention="xyxy_pixel")
    assert (parsed.status, parsed.boxes, parsed.n_degenerate_dropped) == ("invalid_boxes", [], 1)
    assert parsed.error == (
        f"every box written had a value that is not a finite number ({shown}): no box to score"
    )
    assert parsed.notes == (
        f"1 box(es) with a value that is not a finite number (NaN or infinite) not read: {shown}",
    )


@pytest.mark.parametrize(
    ("answer", "status"),
    [
        ("no target [nan, 1, 2, 3]", "no_target"),
        ("No abnormality found. lesion: [inf, 1, 2, 3]", "no_target"),
        ("I cannot help with this. [nan, 1, 2, 3]", "refusal"),
    ],
)
def test_a_non_finite_box_beside_no_box_is_a_dropped_box(answer: str, status: str) -> None:
    parsed = parse_localization(answer, image_size=SIZE, convention="protocol")
    assert (parsed.status, parsed.boxes) == (status, [])  # the read as before
    assert parsed.n_degenerate_dropped == 1


@pytest.mark.parametrize(
    ("answer", "shown"),
    [
        # Three boxes are all shown; from the fourth on, the first three and "...".
        (
            "[[nan, 1, 2, 3], [nan, 4, 5, 6], [nan, 7, 8, 9]]",
            "[nan, 1, 2, 3], [nan, 4, 5, 6], [nan, 7, 8, 9]",
        ),
        (
            "[[nan, 1, 2, 3], [nan, 4, 5, 6], [nan, 7, 8, 9], [nan, 0, 0, 0]]",
            "[nan, 1, 2, 3], [nan, 4, 5, 6], [nan, 7, 8, 9], ...",
        ),
        # A box read from JSON is shown from its numbers: an integral value as an integer
        # below 1e16, past which a float no longer holds every integer (then its repr).
        ('{"boxes": [[NaN, 9999999999999998, 2, 3]]}', "[nan, 9999999999999998, 2, 3]"),
        ('{"boxes": [[NaN, 10000000000000000, 2, 3]]}', "[nan, 1e+16, 2, 3]"),
    ],
)
def test_the_error_and_note_show_the_first_three_boxes(answer: str, shown: str) -> None:
    parsed = parse_localization(answer, image_size=SIZE, convention="protocol")
    assert parsed.status == "invalid_boxes"
    assert parsed.error == (
        f"every box written had a value that is not a finite number ({shown}): no box to score"
    )
    count = answer.lower().count("nan")
    assert parsed.notes == (
        f"{count} box(es) with a value that is not a finite number (NaN or infinite) not read: "
        f"{shown}",
    )
