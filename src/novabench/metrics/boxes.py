"""Bounding-box helpers shared by the metrics, the parsers and the data readers.

Boxes follow the toolkit convention ``[x, y, width, height]`` ("xywh") in pixels of
the original image, top-left origin. ``"xyxy"`` means ``[x_min, y_min, x_max, y_max]``.

Rules applied everywhere a box enters the toolkit:

- a box is exactly four finite real numbers (no NaN, no infinity, no strings, no booleans);
- width and height may be zero: such a box is legal, it simply overlaps nothing
  (IoU 0 with every box, itself included);
- a negative width or height (``x_max < x_min`` in xyxy) is an error.

IoU is computed exactly as the COCO reference implementation does for boxes
(pycocotools' ``maskApi`` ``bbIou``): intersection sides clipped at zero, union
``area_a + area_b - intersection``, with the same floating-point operation order so
results agree bit for bit.
"""

from __future__ import annotations

from collections.abc import Sequence
from numbers import Real
from typing import Any, Literal

import numpy as np

from novabench.errors import NovaInputError

__all__ = [
    "BOX_FORMATS",
    "BoxFormat",
    "first_invalid_box",
    "iou_matrix_xywh",
    "paired_iou_xywh",
    "to_xywh",
    "validate_boxes",
]

BoxFormat = Literal["xywh", "xyxy"]
BOX_FORMATS: tuple[str, ...] = ("xywh", "xyxy")


def _check_box_format(box_format: str) -> None:
    if box_format not in BOX_FORMATS:
        raise NovaInputError(
            f"box_format must be one of {BOX_FORMATS}, got {box_format!r}", field="box_format"
        )


def _describe_bad_box(box: Any) -> str | None:
    """Why one box is not four finite real numbers, or None if it is."""
    if isinstance(box, (str, bytes)) or not isinstance(box, (Sequence, np.ndarray)):
        return f"a box must be a list of 4 numbers, got {type(box).__name__} {box!r}"
    if len(box) != 4:
        return f"a box must have 4 numbers, got {len(box)}: {list(box)!r}"
    for value in box:
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (Real, np.number)):
            return f"box values must be real numbers, got {type(value).__name__} {value!r}"
        if not np.isfinite(float(value)):
            return f"box values must be finite, got {list(box)!r}"
    return None


def validate_boxes(
    boxes: Any,
    *,
    record: str | None = None,
    field: str = "boxes",
    box_format: str = "xywh",
    source: str | None = None,
) -> np.ndarray:
    """Check a list of boxes and return it as a float64 array of shape ``(n, 4)``.

    The boxes are returned in the format they were given (no conversion: see
    :func:`to_xywh`). ``None`` is not accepted: an empty list means "no box".

    Args:
        boxes: a sequence of boxes (each four numbers) or an array of shape ``(n, 4)``.
        record: which record the boxes belong to, e.g. ``"example 3"``; used in errors.
        field: the field name used in errors; the offending box index is appended,
            e.g. ``"predictions.boxes[1]"``.
        box_format: ``"xywh"`` (width and height must be >= 0) or ``"xyxy"``
            (``x_max >= x_min`` and ``y_max >= y_min``).
        source: the file or argument the boxes came from; used in errors.

    Returns:
        A new ``float64`` array of shape ``(n, 4)``; ``(0, 4)`` for no boxes.

    Raises:
        NovaInputError: a box is not four finite real numbers or has a negative size.

    Example:
        >>> validate_boxes([[10, 20, 30, 40]], record="example 0").tolist()
        [[10.0, 20.0, 30.0, 40.0]]
        >>> validate_boxes([], record="example 0").shape
        (0, 4)
        >>> validate_boxes([[0, 0, -1, 5]], record="example 2")
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: example 2, field 'boxes[0]': width must be >= 0, got -1.0
    """
    _check_box_format(box_format)
    if boxes is None or isinstance(boxes, (str, bytes, dict)) or not isinstance(
        boxes, (Sequence, np.ndarray)
    ):
        raise NovaInputError(
            f"boxes must be a list of [x, y, w, h] lists, got {type(boxes).__name__}",
            source=source,
            record=record,
            field=field,
        )
    array = _as_box_array(boxes)
    if array is None:
        # Slow path, only on failure: find the first offending box for the message.
        for index, box in enumerate(boxes):
            problem = _describe_bad_box(box)
            if problem is not None:
                raise NovaInputError(
                    problem, source=source, record=record, field=f"{field}[{index}]"
                )
        raise NovaInputError(  # pragma: no cover - defensive: every failure has a culprit
            "boxes could not be read as an (n, 4) array of numbers",
            source=source,
            record=record,
            field=field,
        )
    bad_row = first_invalid_box(array, box_format)
    if bad_row is not None:
        raise NovaInputError(
            _size_problem(array[bad_row], box_format),
            source=source,
            record=record,
            field=f"{field}[{bad_row}]",
        )
    return array


def _as_box_array(boxes: Any) -> np.ndarray | None:
    """``boxes`` as a float64 ``(n, 4)`` array, or None when it is not numeric of that shape."""
    try:
        raw = np.asarray(boxes)
    except (ValueError, TypeError):  # ragged nesting
        return None
    if raw.size == 0 and raw.ndim in (1, 2) and (raw.ndim == 1 or raw.shape[1] in (0, 4)):
        return np.zeros((0, 4), dtype=np.float64)
    if raw.ndim != 2 or raw.shape[1] != 4 or raw.dtype.kind not in "iuf":
        return None
    if not isinstance(boxes, np.ndarray) and any(
        isinstance(value, (bool, np.bool_)) for box in boxes for value in box
    ):
        return None  # numpy reads True as 1 (or 1.0 beside a float); the slow path names it
    array = raw.astype(np.float64, copy=True)
    if not np.isfinite(array).all():
        return None
    return array


def first_invalid_box(array: np.ndarray, box_format: str = "xywh") -> int | None:
    """Row index of the first box with a negative size (or non-finite value), or None.

    Args:
        array: float array of shape ``(n, 4)``.
        box_format: ``"xywh"`` or ``"xyxy"``.

    Returns:
        The index of the first invalid row, or None when every row is valid.

    Example:
        >>> import numpy as np
        >>> first_invalid_box(np.array([[0, 0, 1, 1], [0, 0, 1, -1.0]]))
        1
        >>> first_invalid_box(np.array([[5, 5, 6, 6.0]]), "xyxy") is None
        True
    """
    if array.shape[0] == 0:
        return None
    if box_format == "xyxy":
        sizes = array[:, 2:] - array[:, :2]
    else:
        sizes = array[:, 2:]
    bad = ~np.isfinite(array).all(axis=1) | (sizes < 0).any(axis=1)
    if not bad.any():
        return None
    return int(np.argmax(bad))


def _size_problem(box: np.ndarray, box_format: str) -> str:
    if not np.isfinite(box).all():
        return f"box values must be finite, got {box.tolist()!r}"
    if box_format == "xyxy":
        if box[2] < box[0]:
            return f"x_max must be >= x_min, got {box.tolist()!r}"
        return f"y_max must be >= y_min, got {box.tolist()!r}"
    if box[2] < 0:
        return f"width must be >= 0, got {float(box[2])!r}"
    return f"height must be >= 0, got {float(box[3])!r}"


def to_xywh(boxes: Any, box_format: str) -> np.ndarray:
    """Convert boxes to ``[x, y, width, height]`` (float64, shape ``(n, 4)``).

    No validation beyond the shape: call :func:`validate_boxes` first for user input.

    Args:
        boxes: array-like of shape ``(n, 4)`` (or empty).
        box_format: ``"xywh"`` (returned as a float64 copy) or ``"xyxy"``.

    Returns:
        A new float64 array of shape ``(n, 4)``.

    Example:
        >>> to_xywh([[10, 20, 40, 60]], "xyxy").tolist()
        [[10.0, 20.0, 30.0, 40.0]]
        >>> to_xywh([[10, 20, 30, 40]], "xywh").tolist()
        [[10.0, 20.0, 30.0, 40.0]]
    """
    _check_box_format(box_format)
    array = np.array(boxes, dtype=np.float64, copy=True).reshape(-1, 4)
    if box_format == "xyxy":
        array[:, 2:] -= array[:, :2]
    return array


def paired_iou_xywh(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IoU of ``a[k]`` with ``b[k]`` for every row ``k`` (xywh boxes, broadcastable).

    Same arithmetic, in the same order, as COCO's box IoU, so the floats are identical
    to pycocotools': a side that does not overlap (``<= 0``) gives IoU 0, so zero-size
    boxes have IoU 0 with everything.

    Args:
        a: array of shape ``(..., 4)``.
        b: array of shape ``(..., 4)`` broadcastable against ``a``.

    Returns:
        float64 array of the broadcast shape without the last axis.

    Example:
        >>> import numpy as np
        >>> paired_iou_xywh(np.array([[0., 0, 2, 2], [0, 0, 1, 1]]),
        ...                 np.array([[1., 0, 2, 2], [5, 5, 1, 1]])).tolist()
        [0.3333333333333333, 0.0]
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    ax, ay, aw, ah = a[..., 0], a[..., 1], a[..., 2], a[..., 3]
    bx, by, bw, bh = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
    inter_w = np.minimum(aw + ax, bw + bx) - np.maximum(ax, bx)
    inter_h = np.minimum(ah + ay, bh + by) - np.maximum(ay, by)
    overlaps = (inter_w > 0) & (inter_h > 0)
    inter = inter_w * inter_h
    union = aw * ah + bw * bh - inter
    # Only divide where the boxes overlap: there union >= max(area) > 0.
    return np.divide(inter, union, out=np.zeros(np.shape(inter)), where=overlaps)


def iou_matrix_xywh(a: Any, b: Any) -> np.ndarray:
    """IoU of every box of ``a`` against every box of ``b`` (COCO arithmetic).

    Args:
        a: boxes ``[x, y, w, h]``, shape ``(n, 4)``.
        b: boxes ``[x, y, w, h]``, shape ``(m, 4)``.

    Returns:
        float64 array of shape ``(n, m)``.

    Example:
        >>> others = [[0, 0, 10, 10], [5, 0, 10, 10], [0, 0, 0, 0]]
        >>> iou_matrix_xywh([[0, 0, 10, 10]], others).tolist()
        [[1.0, 0.3333333333333333, 0.0]]
    """
    a = np.asarray(a, dtype=np.float64).reshape(-1, 4)
    b = np.asarray(b, dtype=np.float64).reshape(-1, 4)
    return paired_iou_xywh(a[:, None, :], b[None, :, :])
