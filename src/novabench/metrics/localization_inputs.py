"""Localisation input reading: per-image predictions and references, checked and flattened.

Checks every prediction and reference (through ``novabench.checks``) and stacks all boxes
of all images into one ``(n, 4)`` xywh array with per-image counts, the form the matching
in :mod:`novabench.metrics.localization` works on. Both entry forms are here: lists of
per-image mappings and the columnar arrays the ``evaluate`` face reads from Arrow.

Plain input (dicts of lists or tuples of Python floats and ints, what JSON gives) is read
by :func:`_read_plain` a chunk of images at a time, with a few C-level passes per chunk
(types, lengths, one ``np.fromiter`` per field) and the value checks on the final arrays.
Anything else, and any input that fails a check, is read by :func:`_read_checked`, item by
item, whose errors name the record and field: both give the same arrays for the same input.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import chain
from typing import Any

import numpy as np

from novabench import checks
from novabench.errors import NovaInputError
from novabench.metrics.boxes import to_xywh

__all__ = ["LocalizationInputs"]

_PREDICTION_KEYS = frozenset({"boxes", "scores"})
_DICTS = frozenset({dict})
_PLAIN_LISTS = frozenset({list, tuple})
_PLAIN_LISTS_OR_NONE = _PLAIN_LISTS | {type(None)}
_PLAIN_NUMBERS = frozenset({float, int})
#: Python ints from this size on go to the checked reader: numpy reads some of them as
#: objects there, which it refuses, so only it can answer for them.
_PLAIN_INT_LIMIT = 2.0**63
#: Images per chunk of the plain reader: a chunk's objects are still in the CPU cache for
#: the next pass over them (passes over all images at once took twice as long at 100k
#: images), and the per-chunk Python steps cost nothing beside the passes.
_CHUNK_IMAGES = 256


def _check_collection(value: Any, name: str) -> int:
    if isinstance(value, (str, bytes, Mapping)) or not (
        hasattr(value, "__len__") and hasattr(value, "__iter__")
    ):
        raise NovaInputError(
            f"{name} must be a list with one entry per image, got {type(value).__name__}",
            field=name,
        )
    return len(value)


def _box_list_length(boxes: Any, record: str, field: str) -> int:
    if type(boxes) is list:  # the usual case, without the slower abstract-class check
        return len(boxes)
    if isinstance(boxes, (str, bytes, Mapping)) or not hasattr(boxes, "__len__"):
        raise NovaInputError(
            f"boxes must be a list of boxes (each 4 numbers), got {type(boxes).__name__}",
            record=record,
            field=field,
        )
    return len(boxes)


_Columns = tuple[list[Any], list[Any], list[Any], list[int], list[int]]
#: det_counts, gold_counts, det_boxes, gold_boxes (as given, not yet xywh), det_scores
_Flat = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _plain_values(groups: list[Any], count: int) -> np.ndarray | None:
    """The ``count`` numbers of ``groups`` (lists of numbers) in order, as float64; None
    unless each is a Python float or int (booleans are neither) of a safe size."""
    kinds = set(map(type, chain.from_iterable(groups)))
    if not _PLAIN_NUMBERS.issuperset(kinds):
        return None
    try:
        values = np.fromiter(chain.from_iterable(groups), dtype=np.float64, count=count)
    except OverflowError:  # an int beyond the float range
        return None
    if int in kinds and count and float(np.abs(values).max()) >= _PLAIN_INT_LIMIT:
        return None
    return values


def _plain_boxes(per_image: list[Any]) -> np.ndarray | None:
    """The images' boxes stacked as float64 ``(n, 4)``, or None unless every box is a plain
    list or tuple of 4 plain numbers (values and sizes are not checked here)."""
    boxes = list(chain.from_iterable(per_image))
    if not boxes:
        return np.zeros((0, 4))
    if not (_PLAIN_LISTS.issuperset(map(type, boxes)) and set(map(len, boxes)) == {4}):
        return None
    values = _plain_values(boxes, 4 * len(boxes))
    return None if values is None else values.reshape(-1, 4)


def _plain_scores(per_image: list[Any], counts: np.ndarray) -> np.ndarray | None:
    """One score per box (1.0 for an image without scores), or None unless every image's
    scores are None or a plain list or tuple of plain numbers, one per box."""
    kinds = set(map(type, per_image))
    if not _PLAIN_LISTS_OR_NONE.issuperset(kinds):
        return None
    if type(None) not in kinds:
        lengths = np.fromiter(map(len, per_image), dtype=np.int64, count=len(per_image))
        return _plain_values(per_image, int(counts.sum())) if (lengths == counts).all() else None
    has_scores = np.array([scores is not None for scores in per_image], dtype=bool)
    given = [scores for scores in per_image if scores is not None]
    lengths = np.fromiter(map(len, given), dtype=np.int64, count=len(given))
    if not np.array_equal(lengths, counts[has_scores]):
        return None
    values = _plain_values(given, int(lengths.sum()))
    if values is None:
        return None
    scores = np.ones(int(counts.sum()), dtype=np.float64)
    scores[np.repeat(has_scores, counts)] = values
    return scores


def _plain_chunk(predictions: list[Any], references: list[Any]) -> _Flat | None:
    """:func:`_read_plain` for one chunk of images, values unchecked."""
    if not (
        _DICTS.issuperset(map(type, predictions))
        and _DICTS.issuperset(map(type, references))
        and all(map(_PREDICTION_KEYS.issuperset, predictions))
    ):
        return None
    try:
        det_lists = [prediction["boxes"] for prediction in predictions]
        gold_lists = [reference["boxes"] for reference in references]
    except KeyError:
        return None
    gold_kinds = set(map(type, gold_lists))
    if not (
        _PLAIN_LISTS.issuperset(map(type, det_lists))
        and _PLAIN_LISTS_OR_NONE.issuperset(gold_kinds)
    ):
        return None
    if type(None) in gold_kinds:  # a null box list in a dataset row means "no marked abnormality"
        gold_lists = [() if gold is None else gold for gold in gold_lists]
    det_counts = np.fromiter(map(len, det_lists), dtype=np.int64, count=len(det_lists))
    gold_counts = np.fromiter(map(len, gold_lists), dtype=np.int64, count=len(gold_lists))
    det_boxes = _plain_boxes(det_lists)
    gold_boxes = _plain_boxes(gold_lists)
    scores = _plain_scores([prediction.get("scores") for prediction in predictions], det_counts)
    if det_boxes is None or gold_boxes is None or scores is None:
        return None
    return det_counts, gold_counts, det_boxes, gold_boxes, scores


def _read_plain(
    predictions: list[Any], references: list[Any], box_format: str, reference_box_format: str
) -> _Flat | None:
    """Plain input flattened and checked, or None when anything is not plain or not valid
    (then :func:`_read_checked` reads it and names what is wrong)."""
    chunks = []
    for start in range(0, len(predictions), _CHUNK_IMAGES):
        stop = start + _CHUNK_IMAGES
        chunk = _plain_chunk(predictions[start:stop], references[start:stop])
        if chunk is None:
            return None
        chunks.append(chunk)
    if not chunks:
        return None
    det_counts, gold_counts, det_boxes, gold_boxes, scores = (
        np.concatenate(parts) for parts in zip(*chunks)
    )
    if (
        checks.first_invalid_box(det_boxes, box_format) is not None
        or checks.first_invalid_box(gold_boxes, reference_box_format) is not None
        or not np.isfinite(scores).all()
    ):
        return None
    return det_counts, gold_counts, det_boxes, gold_boxes, scores


def _checked_columns(predictions: list[Any], references: list[Any]) -> _Columns:
    """The per-image lists and box counts, every item checked in turn; errors name the item."""
    det_lists: list[Any] = []
    score_lists: list[Any] = []
    gold_lists: list[Any] = []
    det_counts: list[int] = []
    gold_counts: list[int] = []
    allowed = _PREDICTION_KEYS
    for index, (prediction, reference) in enumerate(zip(predictions, references)):
        if type(prediction) is not dict and not isinstance(prediction, Mapping):
            raise NovaInputError(
                'a prediction must be a dict like {"boxes": [...], "scores": [...]}, '
                f"got {type(prediction).__name__}",
                record=f"example {index}",
                field="predictions",
            )
        if not allowed.issuperset(prediction):
            unknown = sorted(str(key) for key in prediction if key not in allowed)
            raise NovaInputError(
                f"unknown key {unknown[0]!r} in a prediction; allowed keys: boxes, scores",
                record=f"example {index}",
                field=f"predictions.{unknown[0]}",
            )
        if "boxes" not in prediction:
            raise NovaInputError(
                'a prediction needs a "boxes" list (empty when the model found nothing)',
                record=f"example {index}",
                field="predictions.boxes",
            )
        boxes = prediction["boxes"]
        det_counts.append(_box_list_length(boxes, f"example {index}", "predictions.boxes"))
        det_lists.append(boxes)
        score_lists.append(prediction.get("scores"))

        is_mapping = type(reference) is dict or isinstance(reference, Mapping)
        if not is_mapping or "boxes" not in reference:
            raise NovaInputError(
                'a reference must be a mapping with a "boxes" key (a dataset row works)',
                record=f"example {index}",
                field="references.boxes",
            )
        gold = reference["boxes"]
        if gold is None:
            gold = ()  # a null box list in a dataset row means "no marked abnormality"
        gold_counts.append(_box_list_length(gold, f"example {index}", "references.boxes"))
        gold_lists.append(gold)
    return det_lists, score_lists, gold_lists, det_counts, gold_counts


def _read_checked(
    predictions: list[Any], references: list[Any], box_format: str, reference_box_format: str
) -> _Flat:
    """Any accepted input flattened, checked item by item; errors name the record and field."""
    det_lists, score_lists, gold_lists, det_counts, gold_counts = _checked_columns(
        predictions, references
    )
    det_count_array = np.array(det_counts, dtype=np.int64)
    gold_count_array = np.array(gold_counts, dtype=np.int64)
    det_boxes = checks.box_batch(
        det_lists, det_count_array, field="predictions.boxes", box_format=box_format
    )
    det_scores = checks.score_batch(score_lists, det_count_array)
    gold_boxes = checks.box_batch(
        gold_lists, gold_count_array, field="references.boxes", box_format=reference_box_format
    )
    return det_count_array, gold_count_array, det_boxes, gold_boxes, det_scores


def _without_size(references: list[Any]) -> list[int]:
    """The positions of the rows that give no image size, when another row gives one (a
    mix: the box notes then measure every image against the reference boxes' extent, and
    :meth:`~novabench.metrics.localization.LocalizationEvaluation.input_notes` says so)."""
    unsized = [
        index
        for index, reference in enumerate(references)
        if not isinstance(reference, Mapping)
        or reference.get("width") is None
        or reference.get("height") is None
    ]
    return unsized if len(unsized) < len(references) else []


def _image_sizes(references: list[Any]) -> np.ndarray | None:
    """Each image's ``(width, height)`` when every reference row gives both (whole positive
    pixels, checked), else None: the box notes then measure boxes against their image."""
    if not references or not all(
        isinstance(reference, Mapping)
        and reference.get("width") is not None
        and reference.get("height") is not None
        for reference in references
    ):
        return None
    return np.array(
        [
            checks.image_size(
                [reference["width"], reference["height"]],
                record=f"example {index}",
                field="references.width/height",
            )
            for index, reference in enumerate(references)
        ],
        dtype=np.float64,
    )


class LocalizationInputs:
    """Validated inputs, flattened: boxes grouped by image in the given order, xywh.

    Attributes: ``n_images``, ``det_counts`` / ``gold_counts`` (boxes per image),
    ``det_boxes`` / ``gold_boxes`` (stacked ``(n, 4)`` xywh), ``det_scores`` (1.0 where an
    image gave none), ``image_sizes`` (``(n_images, 2)`` width and height when every
    reference gives its ``width`` and ``height``, as NOVA rows do; else None),
    ``without_size`` (the positions of the rows without them when others give them).

    Example:
        >>> inputs = LocalizationInputs([{"boxes": [[0, 0, 2, 2]]}], [{"boxes": None}],
        ...                             "xyxy", "xywh")
        >>> inputs.det_boxes.tolist(), inputs.gold_counts.tolist(), inputs.det_scores.tolist()
        ([[0.0, 0.0, 2.0, 2.0]], [0], [1.0])
    """

    def __init__(
        self,
        predictions: Any,
        references: Any,
        box_format: str,
        reference_box_format: str,
    ) -> None:
        checks.box_format(box_format)
        checks.box_format(reference_box_format, field="reference_box_format")
        n_predictions = _check_collection(predictions, "predictions")
        n_references = _check_collection(references, "references")
        if n_predictions != n_references:
            raise NovaInputError(
                f"got {n_predictions} predictions for {n_references} references: "
                "give exactly one prediction (possibly with no boxes) per image",
                field="predictions",
            )
        predictions, references = list(predictions), list(references)
        flat = _read_plain(predictions, references, box_format, reference_box_format)
        if flat is None:
            flat = _read_checked(predictions, references, box_format, reference_box_format)
        self.n_images = n_predictions
        self.det_counts, self.gold_counts, det_boxes, gold_boxes, self.det_scores = flat
        # both readers return new arrays: convert them in place
        self.det_boxes = to_xywh(det_boxes, box_format, copy=False)
        self.gold_boxes = to_xywh(gold_boxes, reference_box_format, copy=False)
        self.image_sizes = _image_sizes(references)
        self.without_size = _without_size(references)

    @classmethod
    def from_arrays(
        cls,
        det_boxes: np.ndarray,
        det_counts: np.ndarray,
        det_scores: np.ndarray | None,
        gold_boxes: np.ndarray,
        gold_counts: np.ndarray,
        box_format: str,
        reference_box_format: str,
    ) -> LocalizationInputs:
        """Validated inputs from stacked arrays (see ``prepare_localization_from_arrays``)."""
        checks.box_format(box_format)
        checks.box_format(reference_box_format, field="reference_box_format")
        inputs = cls.__new__(cls)
        inputs.det_counts = np.asarray(det_counts, dtype=np.int64).reshape(-1)
        inputs.gold_counts = np.asarray(gold_counts, dtype=np.int64).reshape(-1)
        if len(inputs.det_counts) != len(inputs.gold_counts):
            raise NovaInputError(
                f"got {len(inputs.det_counts)} predictions for "
                f"{len(inputs.gold_counts)} references",
                field="predictions",
            )
        inputs.n_images = len(inputs.det_counts)
        det_array = checks.box_columns(
            det_boxes, inputs.det_counts, field="predictions.boxes", box_format=box_format
        )
        gold_array = checks.box_columns(
            gold_boxes,
            inputs.gold_counts,
            field="references.boxes",
            box_format=reference_box_format,
        )
        inputs.image_sizes = None  # columns carry no image size
        inputs.without_size = []
        inputs.det_scores = (
            np.ones(len(det_array), dtype=np.float64)
            if det_scores is None
            else checks.score_columns(det_scores, inputs.det_counts)
        )
        checked = [det_array, gold_array]
        inputs.det_boxes = to_xywh(checked[0], box_format)
        inputs.gold_boxes = to_xywh(checked[1], reference_box_format)
        return inputs
