"""Box-parser behaviours that the mutation check (scripts/mutation_check.py) found unpinned.

Each test names the behaviour, not the mutant; every expected value is worked out by hand in
the comment beside it.
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from novabench.run.parsers import parse_localization

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
