"""The plain-input fast reader of the localisation inputs against the checked reader.

``LocalizationInputs`` reads plain dicts of plain lists of Python numbers (what JSON gives)
with ``_read_plain`` (a few C-level passes per chunk of images); anything else, and any
input that fails a check, goes to ``_read_checked``, which checks item by item and names the
culprit. Switching the fast reader off leaves the checked reader alone (the reading as it
was before the fast one existed): on seeded random inputs, valid or broken, both must give
the same arrays bit for bit or the same error, word for word.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

from novabench.errors import NovaInputError
from novabench.metrics import localization_inputs
from novabench.metrics.localization_inputs import LocalizationInputs

N_SEEDS = 60


@contextmanager
def general_path_only() -> Iterator[None]:
    """The fast reader switched off: what is left checks and converts item by item."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(localization_inputs, "_read_plain", lambda *args: None)
        yield


def outcome(predictions: Any, references: Any, box_format: str, reference_format: str) -> Any:
    """Everything the reading gives: the arrays as bytes, or the error's text and parts."""
    try:
        inputs = LocalizationInputs(predictions, references, box_format, reference_format)
    except NovaInputError as error:
        return ("error", str(error), error.source, error.record, error.field)
    arrays = (
        inputs.det_counts,
        inputs.gold_counts,
        inputs.det_boxes,
        inputs.gold_boxes,
        inputs.det_scores,
    )
    return (
        "ok",
        inputs.n_images,
        [(array.dtype.str, array.shape, array.tobytes()) for array in arrays],
    )


def both_paths(*args: Any) -> tuple[Any, Any]:
    fast = outcome(*args)
    with general_path_only():
        general = outcome(*args)
    return fast, general


# --------------------------------------------------------------------------- random inputs


def _number(rng: np.random.Generator, low: float, high: float, kinds: str) -> Any:
    kind = kinds[int(rng.integers(len(kinds)))]
    value = float(rng.uniform(low, high))
    if kind == "i":
        return int(value)
    if kind == "I":  # integers past float precision, still within int64
        return int(rng.integers(2**53, 2**62))
    if kind == "z":
        return -0.0 if rng.random() < 0.5 else 0
    return value


def _box(rng: np.random.Generator, box_format: str, kinds: str) -> list[Any]:
    x, y = _number(rng, 0, 500, kinds), _number(rng, 0, 500, kinds)
    width, height = _number(rng, 0, 90, kinds), _number(rng, 0, 90, kinds)
    if box_format == "xyxy":
        return [x, y, x + width, y + height]
    return [x, y, width, height]


def _container(rng: np.random.Generator, rows: list[Any], plain_only: bool) -> Any:
    """The same boxes or scores as a list, a tuple, lists of tuples or a numpy array."""
    choice = int(rng.integers(2 if plain_only else 5))
    if choice == 0:
        return rows
    if choice == 1:
        return tuple(tuple(row) if isinstance(row, list) else row for row in rows)
    if choice == 2:
        return np.asarray(rows, dtype=np.float64) if rows else np.zeros((0, 4))
    if choice == 3:
        return np.asarray(rows, dtype=np.float32)
    return [np.asarray(row) for row in rows] if rows and isinstance(rows[0], list) else rows


def random_set(seed: int, plain_only: bool = False) -> tuple[list[Any], list[Any], str, str]:
    """Seeded valid inputs: empty images, None and missing scores, ints, tuples, arrays."""
    rng = np.random.default_rng(seed)
    box_format = ("xywh", "xyxy")[int(rng.integers(2))]
    reference_format = ("xywh", "xyxy")[int(rng.integers(2))]
    kinds = ("f", "fi", "i", "fiIz")[int(rng.integers(4))]
    predictions, references = [], []
    for _ in range(int(rng.integers(0, 12))):
        boxes = [_box(rng, box_format, kinds) for _ in range(int(rng.integers(0, 5)))]
        prediction: dict[str, Any] = {"boxes": _container(rng, boxes, plain_only)}
        scores_kind = int(rng.integers(4))
        if scores_kind == 1:
            prediction["scores"] = None
        elif scores_kind >= 2:
            scores = [_number(rng, 0, 1, kinds) for _ in boxes]
            prediction["scores"] = _container(rng, scores, plain_only)
        predictions.append(prediction)
        gold = [_box(rng, reference_format, kinds) for _ in range(int(rng.integers(0, 4)))]
        reference: dict[str, Any] = {"boxes": _container(rng, gold, plain_only), "id": 7}
        if not gold and rng.random() < 0.5:
            reference["boxes"] = None
        references.append(reference)
    return predictions, references, box_format, reference_format


@pytest.mark.parametrize("plain_only", [True, False])
def test_valid_inputs_read_identically(plain_only: bool) -> None:
    for seed in range(N_SEEDS):
        predictions, references, box_format, reference_format = random_set(seed, plain_only)
        fast, general = both_paths(predictions, references, box_format, reference_format)
        assert fast[0] == "ok", (seed, fast)
        assert fast == general, seed


def test_plain_inputs_take_the_fast_reader() -> None:
    # Without this the parity above could hold because the fast reader never ran.
    taken = []
    fast_reader = localization_inputs._read_plain

    def counting(*args: Any) -> Any:
        result = fast_reader(*args)
        taken.append(result is not None)
        return result

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(localization_inputs, "_read_plain", counting)
        for seed in range(N_SEEDS):
            predictions, references, box_format, reference_format = random_set(seed, True)
            LocalizationInputs(predictions, references, box_format, reference_format)
            # every non-empty plain set is read by the fast reader
            assert taken.pop() == bool(predictions), seed


def test_chunks_join_in_image_order() -> None:
    # more images than one chunk holds, and chunks without any box
    predictions, references, box_format, reference_format = random_set(3, plain_only=True)
    many = 3 * localization_inputs._CHUNK_IMAGES + 5
    predictions = (predictions * many)[:many] + [{"boxes": []}] * many
    references = (references * many)[:many] + [{"boxes": None}] * many
    fast, general = both_paths(predictions, references, box_format, reference_format)
    assert fast[0] == "ok" and fast == general


# --------------------------------------------------------------------------- broken inputs


def _corrupt_box(rng: np.random.Generator, box: list[Any]) -> Any:
    box = list(box)
    position = int(rng.integers(4))
    choice = int(rng.integers(16))
    if choice == 0:
        box[position] = float("nan")
    elif choice == 1:
        box[position] = float("-inf")
    elif choice == 2:
        box[position] = True
    elif choice == 3:
        box[position] = np.True_
    elif choice == 4:
        box[position] = "1.5"
    elif choice == 5:
        box[position] = None
    elif choice == 6:
        box[position] = 10**400
    elif choice == 7:
        box[position] = 2**70
    elif choice == 8:
        box[position] = Fraction(1, 3)
    elif choice == 9:
        box[2 + position % 2] = -1.5
    elif choice == 10:
        return box[:3]
    elif choice == 11:
        return box + [1.0]
    elif choice == 12:
        return dict(enumerate(box))
    elif choice == 13:
        return "abcd"
    elif choice == 14:
        return float(box[0])
    else:
        return set(box)
    return box


def _corrupt(
    rng: np.random.Generator, predictions: list[Any], references: list[Any], index: int
) -> None:
    """One random flaw in image ``index`` (a box, a score, a key, a container...)."""
    prediction, reference = predictions[index], references[index]
    choice = int(rng.integers(12))
    if choice <= 3 and len(prediction["boxes"]):
        boxes = list(prediction["boxes"])
        position = int(rng.integers(len(boxes)))
        boxes[position] = _corrupt_box(rng, boxes[position])
        prediction["boxes"] = boxes
    elif choice == 4 and reference["boxes"]:
        gold = list(reference["boxes"])
        gold[0] = _corrupt_box(rng, gold[0])
        reference["boxes"] = gold
    elif choice == 5:
        given = len(prediction["boxes"])
        bad_scores: list[Any] = [
            [0.5] * (given + 1),
            [float("nan")] * given if given else [0.5],
            [True] * given if given else [0.5],
            ["high"] * given if given else [0.5],
            0.5,
            "0.5",
            {"a": 1},
        ]
        prediction["scores"] = bad_scores[int(rng.integers(len(bad_scores)))]
    elif choice == 6:
        prediction["boxes"] = (None, 3, "[[0, 0, 1, 1]]", {"a": 1})[int(rng.integers(4))]
    elif choice == 7:
        prediction["score"] = [0.5]
    elif choice == 8:
        del prediction["boxes"]
    elif choice == 9:
        predictions[index] = [prediction.get("boxes")]
    elif choice == 10:
        references[index] = (
            {"bboxes": reference["boxes"]},
            [reference["boxes"]],
            {"boxes": 3},
        )[int(rng.integers(3))]
    else:
        reference["boxes"] = "[[0, 0, 1, 1]]"


@pytest.mark.parametrize("flaws", [1, 2])
def test_broken_inputs_raise_the_same_error(flaws: int) -> None:
    errors = 0
    for seed in range(3 * N_SEEDS):
        rng = np.random.default_rng(10_000 + seed)
        predictions, references, box_format, reference_format = random_set(seed, plain_only=True)
        if not predictions:
            continue
        for index in rng.choice(len(predictions), min(flaws, len(predictions)), replace=False):
            _corrupt(rng, predictions, references, int(index))
        fast, general = both_paths(predictions, references, box_format, reference_format)
        assert fast == general, (seed, fast, general)
        errors += fast[0] == "error"
    assert errors >= N_SEEDS  # most flaws are errors (a few land where they change nothing)


def test_broken_containers_raise_the_same_error() -> None:
    cases: list[tuple[Any, Any]] = [
        ([{"boxes": []}], [{"boxes": []}, {"boxes": []}]),
        ({"boxes": []}, [{"boxes": []}]),
        ([{"boxes": []}], "gold.json"),
        ([{"boxes": [[0, 0, 1, 1]], "scores": [0.5]}] * 2, [{"boxes": None}, {}]),
    ]
    for predictions, references in cases:
        fast, general = both_paths(predictions, references, "xywh", "xywh")
        assert fast[0] == "error" and fast == general
