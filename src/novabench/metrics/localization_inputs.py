"""Localisation input reading: per-image predictions and references, checked and flattened.

Checks every prediction and reference (through ``novabench.checks``) and stacks all boxes
of all images into one ``(n, 4)`` xywh array with per-image counts, the form the matching
in :mod:`novabench.metrics.localization` works on. Both entry forms are here: lists of
per-image mappings and the columnar arrays the ``evaluate`` face reads from Arrow.
"""

from __future__ import annotations

from collections.abc import Mapping
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


def _plain_columns(predictions: list[Any], references: list[Any]) -> _Columns | None:
    """The per-image lists and box counts when every item is a plain dict whose box and score
    lists are plain lists or tuples; None otherwise (then :func:`_checked_columns` reads them).

    A few C-level passes over the items instead of a Python loop; what it returns is what
    :func:`_checked_columns` returns for the same items.
    """
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
    score_lists = [prediction.get("scores") for prediction in predictions]
    if not _PLAIN_LISTS.issuperset(map(type, det_lists)):
        return None
    gold_kinds = set(map(type, gold_lists))
    if not _PLAIN_LISTS_OR_NONE.issuperset(gold_kinds):
        return None
    if type(None) in gold_kinds:  # a null box list in a dataset row means "no marked abnormality"
        gold_lists = [() if gold is None else gold for gold in gold_lists]
    return (
        det_lists,
        score_lists,
        gold_lists,
        list(map(len, det_lists)),
        list(map(len, gold_lists)),
    )


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


class LocalizationInputs:
    """Validated inputs, flattened: boxes grouped by image in the given order, xywh.

    Attributes: ``n_images``, ``det_counts`` / ``gold_counts`` (boxes per image),
    ``det_boxes`` / ``gold_boxes`` (stacked ``(n, 4)`` xywh), ``det_scores`` (1.0 where an
    image gave none).

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
        columns = _plain_columns(predictions, references)
        if columns is None:
            columns = _checked_columns(predictions, references)
        det_lists, score_lists, gold_lists, det_counts, gold_counts = columns

        self.n_images = n_predictions
        self.det_counts = np.array(det_counts, dtype=np.int64)
        self.gold_counts = np.array(gold_counts, dtype=np.int64)
        det_boxes = checks.box_batch(
            det_lists, self.det_counts, field="predictions.boxes", box_format=box_format
        )
        self.det_scores = checks.score_batch(score_lists, self.det_counts)
        gold_boxes = checks.box_batch(
            gold_lists, self.gold_counts, field="references.boxes", box_format=reference_box_format
        )
        # box_batch returns new arrays: convert them in place
        self.det_boxes = to_xywh(det_boxes, box_format, copy=False)
        self.gold_boxes = to_xywh(gold_boxes, reference_box_format, copy=False)

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
        inputs.det_scores = (
            np.ones(len(det_array), dtype=np.float64)
            if det_scores is None
            else checks.score_columns(det_scores, inputs.det_counts)
        )
        checked = [det_array, gold_array]
        inputs.det_boxes = to_xywh(checked[0], box_format)
        inputs.gold_boxes = to_xywh(checked[1], reference_box_format)
        return inputs
