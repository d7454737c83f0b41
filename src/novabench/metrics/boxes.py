"""Bounding-box helpers shared by the metrics, the parsers and the data readers.

Boxes follow the toolkit convention ``[x, y, width, height]`` ("xywh") in pixels of
the original image, top-left origin. ``"xyxy"`` means ``[x_min, y_min, x_max, y_max]``.

Rules applied everywhere a box enters the toolkit (checked by ``novabench.checks``):

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

from typing import Any, Literal

import numpy as np

from novabench import checks

__all__ = [
    "BOX_FORMATS",
    "BoxFormat",
    "iou_matrix_xywh",
    "paired_iou_xywh",
    "to_xywh",
]

BoxFormat = Literal["xywh", "xyxy"]
BOX_FORMATS: tuple[str, ...] = checks.BOX_FORMATS


def to_xywh(boxes: Any, box_format: str, *, copy: bool = True) -> np.ndarray:
    """Convert boxes to ``[x, y, width, height]`` (float64, shape ``(n, 4)``).

    No validation beyond the shape: call :func:`novabench.checks.box_list` first for user input.

    Args:
        boxes: array-like of shape ``(n, 4)`` (or empty).
        box_format: ``"xywh"`` (returned as a float64 copy) or ``"xyxy"``.
        copy: False converts a float64 array in place (and returns it) instead of copying;
            for arrays the caller has just made.

    Returns:
        A float64 array of shape ``(n, 4)``, new unless ``copy=False``.

    Example:
        >>> to_xywh([[10, 20, 40, 60]], "xyxy").tolist()
        [[10.0, 20.0, 30.0, 40.0]]
        >>> to_xywh([[10, 20, 30, 40]], "xywh").tolist()
        [[10.0, 20.0, 30.0, 40.0]]
    """
    checks.box_format(box_format)
    array = (
        np.array(boxes, dtype=np.float64, copy=True) if copy else np.asarray(boxes, np.float64)
    ).reshape(-1, 4)
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
