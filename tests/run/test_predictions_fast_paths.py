"""Reading predictions: the shortcut for plain values gives what the field-by-field checks give.

``_LineChecker`` takes a list of plain finite floats (boxes, scores) or of strings
(diagnoses) as it is, without naming each element; anything else goes through the checks
that name the field. Each case compares both on many seeded random lists, errors included.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from novabench.errors import NovaInputError
from novabench.run.predictions import _LineChecker


def plain_boxes(check: _LineChecker, value: Any) -> list[list[float]]:
    if not isinstance(value, list):
        raise check.fail(
            f"must be a list of [x, y, width, height], got {type(value).__name__}", "boxes"
        )
    boxes = []
    for index, box in enumerate(value):
        name = f"boxes[{index}]"
        if not isinstance(box, list) or len(box) != 4:
            raise check.fail(f"must be [x, y, width, height], got {box!r}", name)
        x, y, width, height = (check.finite(v, f"{name}[{i}]") for i, v in enumerate(box))
        if width < 0 or height < 0:
            raise check.fail(f"width and height must not be negative, got {box!r}", name)
        boxes.append([x, y, width, height])
    return boxes


def plain_scores(check: _LineChecker, value: Any, n_boxes: int | None) -> list[float]:
    if not isinstance(value, list):
        raise check.fail(f"must be a list of numbers, got {type(value).__name__}", "scores")
    scores = [check.finite(v, f"scores[{i}]") for i, v in enumerate(value)]
    if n_boxes is None:
        raise check.fail("scores given without boxes", "scores")
    if len(scores) != n_boxes:
        raise check.fail(
            f"{len(scores)} scores for {n_boxes} boxes; give one score per box", "scores"
        )
    return scores


def plain_diagnoses(check: _LineChecker, value: Any) -> list[str]:
    if not isinstance(value, list):
        raise check.fail(f"must be a list of strings, got {type(value).__name__}", "diagnoses")
    return [check.string(v, f"diagnoses[{i}]") for i, v in enumerate(value)]


def outcome(action: Any) -> tuple[str, Any]:
    try:
        result = action()
    except NovaInputError as error:
        return "error", str(error)
    # Types too: an int coordinate must come back as a float either way.
    return "value", repr(result)


def random_number(rng: random.Random) -> Any:
    """Mostly plain floats; else ints, huge ints, NaN/inf, booleans, None, text, -0.0."""
    if rng.random() >= 0.3:
        return rng.uniform(0, 500)
    odd: list[Any] = [
        rng.uniform(-5, 500),
        float(rng.randint(0, 50)),
        rng.randint(-3, 500),
        10**400,
        rng.choice([float("nan"), float("inf"), -float("inf")]),
        rng.choice([True, False]),
        None,
        "3.5",
        -0.0,
    ]
    return rng.choice(odd)


# Seed 0 in the fast suite; seeds 1-3 search further under `make test-slow` (suite28).
@pytest.mark.parametrize(
    "seed", [0, *(pytest.param(seed, marks=pytest.mark.slow) for seed in range(1, 4))]
)
def test_boxes_and_scores_read_as_the_field_checks_read_them(seed: int) -> None:
    rng = random.Random(seed)
    check = _LineChecker("p.jsonl", 7, "case0001_001.png")
    for _ in range(3000):
        boxes = [
            [random_number(rng) for _ in range(rng.choice([4, 4, 4, 3]))]
            for _ in range(rng.randint(0, 4))
        ]
        if rng.random() < 0.05:
            boxes.append((1.0, 2.0, 3.0, 4.0))  # a tuple is no JSON list
        assert outcome(lambda: check.boxes(boxes)) == outcome(lambda: plain_boxes(check, boxes))
        scores = [random_number(rng) for _ in range(rng.randint(0, 4))]
        n_boxes = rng.choice([None, len(scores), len(scores) + 1])
        assert outcome(lambda: check.scores(scores, n_boxes)) == outcome(
            lambda: plain_scores(check, scores, n_boxes)
        )


@pytest.mark.parametrize("seed", range(2))
def test_diagnoses_read_as_the_field_checks_read_them(seed: int) -> None:
    rng = random.Random(seed)
    check = _LineChecker("p.jsonl", 3, "case0001")
    choices: list[Any] = ["Glioma", "", " ", "Abscess", 3, None, ["x"], 2.5]
    for _ in range(3000):
        value = [rng.choice(choices) for _ in range(rng.randint(0, 5))]
        if rng.random() < 0.8:
            value = [v for v in value if isinstance(v, str)]
        assert outcome(lambda: check.diagnoses(value)) == outcome(
            lambda: plain_diagnoses(check, value)
        )


def test_plain_lists_are_copied_not_shared() -> None:
    check = _LineChecker("p.jsonl", 1, None)
    boxes = [[1.0, 2.0, 3.0, 4.0]]
    scores = [0.5]
    diagnoses = ["Glioma"]
    assert check.boxes(boxes)[0] is not boxes[0]
    assert check.scores(scores, 1) is not scores
    assert check.diagnoses(diagnoses) is not diagnoses
