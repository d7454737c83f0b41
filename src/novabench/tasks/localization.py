"""How anomaly localisation is scored, broken down and ranked.

Its metric (``metrics/localization.py``) takes no option from the scoring options and has
no judge; its answers get a note when boxes run past their image and the box-answer counts
of :func:`novabench.run.predictions.box_answer_summary`; its prompt fixes the box order;
its breakdowns add the gold boxes' number and size; the raters are its human reference;
the leaderboard ranks it on ``mAP@30``, the protocol's image hit rate at IoU 0.30.

Example:
    >>> BEHAVIOUR.rank_metric, BEHAVIOUR.rank_item_column
    ('mAP@30', ('images', 'best_iou'))
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from novabench.tasks import BREAKDOWN_DIMENSIONS, ItemTablesMismatch, TaskBehaviour

__all__ = [
    "BEHAVIOUR",
    "HIT_IOU",
    "MANY_BOXES",
    "MANY_BOXES_PER_GOLD",
    "box_overrun_notes",
    "many_box_counts",
    "item_case_ids",
    "item_mean_terms",
    "range_thresholds",
    "rank_item_values",
]

#: The IoU an image's best box must reach to be a hit of the ranking metric (mAP@30).
HIT_IOU = 0.3
# A box may reach this far past its image (rounding, a pixel of margin) before it is noted.
_OVERRUN_TOLERANCE = 1.02


def box_overrun_notes(predictions: Sequence[Mapping[str, Any]], images: Sequence[Any]) -> list[str]:
    """A note when predicted boxes run well past their image: often xyxy given as xywh.

    Args:
        predictions: ``{"boxes": [[x, y, w, h], ...]}`` per image, in the order of ``images``.
        images: the scored images (anything with ``width`` and ``height``).

    Example:
        >>> from types import SimpleNamespace
        >>> image = SimpleNamespace(width=100, height=100)
        >>> box_overrun_notes([{"boxes": [[10, 10, 20, 20]]}], [image])
        []
        >>> box_overrun_notes([{"boxes": [[50, 50, 80, 80], [0, 0, 5, 5]]}], [image])[0][:48]
        '1 predicted boxes in 1 images extend past their '
    """
    over, where = 0, 0
    for prediction, image in zip(predictions, images):
        boxes = prediction.get("boxes") or []
        limit_x = _OVERRUN_TOLERANCE * image.width
        limit_y = _OVERRUN_TOLERANCE * image.height
        past = sum(1 for x, y, w, h in boxes if x + w > limit_x or y + h > limit_y)
        over += past
        where += bool(past)
    if not over:
        return []
    return [
        f"{over} predicted boxes in {where} images extend past their image by more than 2%: "
        "if they are [x1, y1, x2, y2], convert them to [x, y, width, height] (raw answers: "
        "--box-convention xyxy_pixel)"
    ]


#: An image's answer holds "many boxes" above MANY_BOXES, or above MANY_BOXES_PER_GOLD times
#: its gold boxes when that is more. NOVA's prompt asks for the abnormal regions, which gold
#: marks with a few boxes (about 1.2 per image on the sample); ten is several times that, and
#: scaling by the gold count spares an image of many lesions answered lesion by lesion.
MANY_BOXES = 10
MANY_BOXES_PER_GOLD = 5


def many_box_counts(
    predictions: Sequence[Mapping[str, Any]], images: Sequence[Any]
) -> dict[str, int]:
    """How many scored images were answered with many boxes (:data:`MANY_BOXES`): the protocol's
    mAP@30 costs such answers nothing (a hit needs one box), COCO-AP@30 ranks them.

    Args:
        predictions: ``{"boxes": [...]}`` per image, in the order of ``images``.
        images: the scored images (anything with gold ``boxes``).

    Returns:
        ``{"images_with_many_boxes": n}`` when ``n > 0``, else ``{}`` (nothing to say).

    Example:
        >>> from types import SimpleNamespace
        >>> one_gold, three_gold = SimpleNamespace(boxes=[[0, 0, 5, 5]]), SimpleNamespace(boxes=[[0, 0, 5, 5]] * 3)
        >>> grid = {"boxes": [[i, i, 4, 4] for i in range(12)]}  # 12 > max(10, 5 x 1), 12 <= 15
        >>> many_box_counts([grid, grid, {"boxes": []}], [one_gold, three_gold, one_gold])
        {'images_with_many_boxes': 1}
    """
    many = sum(
        1
        for prediction, image in zip(predictions, images)
        if len(prediction.get("boxes") or [])
        > max(MANY_BOXES, MANY_BOXES_PER_GOLD * len(getattr(image, "boxes", None) or []))
    )
    return {"images_with_many_boxes": many} if many else {}


def rank_item_values(tables: Mapping[str, Any], reading: str = "mAP@30") -> tuple[list[str], Any]:
    """Filenames and per-image hits (best IoU >= 0.30) of the images table: mean = mAP@30.

    Images without a best IoU were not scored (``--answered-only``): left out, as the
    report's mAP@30 leaves them out.

    Raises:
        ItemTablesMismatch: ``reading`` is not mAP@30, or the table has no best IoU.

    Example:
        >>> import pandas as pd
        >>> images = pd.DataFrame({"filename": ["a.png", "b.png", "c.png"],
        ...                        "best_iou": [0.3, 0.29, None]})
        >>> keys, hits = rank_item_values({"images": images}, "mAP@30")
        >>> keys, hits.tolist()
        (['a.png', 'b.png'], [1.0, 0.0])
    """
    images = tables["images"]
    if reading != "mAP@30" or "best_iou" not in images.columns:
        raise ItemTablesMismatch(
            f"the images table's best_iou gives mAP@30, not {reading}"
            if reading != "mAP@30"
            else "the images table has no best_iou column (mAP@30 per image)"
        )
    best_iou = images["best_iou"].astype(float)
    scored = images[best_iou.notna()]
    hits = (scored["best_iou"].astype(float) >= HIT_IOU).to_numpy(float)
    return list(scored["filename"]), hits


# Per headline key a mean over images: the threshold on best_iou (every scored image
# counted), or the hit column (only the scored images with a gold box counted).
_IMAGE_MEANS = {"mAP@30": HIT_IOU, "mAP@50": 0.5}
_GOLD_IMAGE_MEANS = {"hit@30": "hit_30", "hit@50": "hit_50"}
# mAP@50:95: the hit rate over every scored image averaged over these IoUs.
_RANGE_MEAN = "mAP@50:95"


def range_thresholds() -> Any:
    """The IoUs ``mAP@50:95`` averages the hit rate over: 0.50, 0.55, ..., 0.95, built as
    COCO builds them (``np.linspace(0.5, 0.95, 10)``), so a best IoU on a threshold's last
    bit is a hit here exactly when it is one in ``metrics/localization.py``.

    Example:
        >>> [round(float(threshold), 2) for threshold in range_thresholds()][::3]
        [0.5, 0.65, 0.8, 0.95]
    """
    import numpy as np

    return np.linspace(0.5, 0.95, 10)


def item_mean_terms(
    tables: Mapping[str, Any], key: str, recorded: Mapping[str, Any] | None = None
) -> tuple[Any, Any] | None:
    """Per scored image (a best IoU; the table's order, the evaluation's) the terms of ``key``:
    mAP@30/50 count every image, hit@30/50 only those with a gold box, though the bootstrap
    draws all of them; mAP@50:95 counts, per image, the thresholds of
    :func:`range_thresholds` its best IoU reaches, over 10 per image (the mean over the ten
    thresholds of the hit rate over all images); None when the table cannot give ``key``.
    No recorded setting changes these (``recorded`` is not read).

    Example:
        >>> import pandas as pd
        >>> images = pd.DataFrame({"filename": ["a.png", "b.png", "c.png"],
        ...                        "n_gold_boxes": [1, 1, 0], "best_iou": [0.62, 0.4, 0.0],
        ...                        "hit_50": [True, False, False]})
        >>> [terms.tolist() for terms in item_mean_terms({"images": images}, "mAP@50")]
        [[1.0, 0.0, 0.0], [1.0, 1.0, 1.0]]
        >>> [terms.tolist() for terms in item_mean_terms({"images": images}, "hit@50")]
        [[1.0, 0.0, 0.0], [1.0, 1.0, 0.0]]
        >>> item_mean_terms({"images": images}, "hit@30") is None
        True

        0.62 reaches 0.50, 0.55 and 0.60 (3 of 10), 0.4 and 0.0 none: mAP@50:95 = 3 / 30.

        >>> [terms.tolist() for terms in item_mean_terms({"images": images}, "mAP@50:95")]
        [[3.0, 0.0, 0.0], [10.0, 10.0, 10.0]]
    """
    import numpy as np

    images = tables["images"]
    column = _GOLD_IMAGE_MEANS.get(key)
    needed = {"best_iou"} if column is None else {"best_iou", column, "n_gold_boxes"}
    known = key in _IMAGE_MEANS or key == _RANGE_MEAN or column is not None
    if not known or not needed <= set(images.columns):
        return None
    scored = _scored_images(images)
    best_iou = scored["best_iou"].astype(float).to_numpy(float)
    if key == _RANGE_MEAN:
        thresholds = range_thresholds()
        # A count of thresholds reached over their number: nova evaluate's
        # sum(hits per threshold) / 10 / images, as one ratio of sums.
        reached = (best_iou[:, None] >= thresholds[None, :]).sum(axis=1).astype(float)
        return reached, np.full(len(reached), float(len(thresholds)))
    if column is None:
        hits = (best_iou >= _IMAGE_MEANS[key]).astype(float)
        return hits, np.ones(len(hits))
    hits = scored[column].astype(float)
    counted = ((scored["n_gold_boxes"] > 0) & hits.notna()).to_numpy(float)
    return hits.fillna(0.0).to_numpy(float) * counted, counted


def _scored_images(images: Any) -> Any:
    """The rows of the images the report scored (a best IoU), in the table's order."""
    return images[images["best_iou"].astype(float).notna()]


def item_case_ids(tables: Mapping[str, Any], key: str) -> list[str] | None:
    """The case id of each scored image (the rows of :func:`item_mean_terms`, every key's
    the same); None when the images table has no best IoU or no case ids (older tables).

    Example:
        >>> import pandas as pd
        >>> images = pd.DataFrame({"filename": ["a.png", "b.png", "c.png"],
        ...                        "case_id": ["case0001", "case0001", "case0002"],
        ...                        "best_iou": [0.6, None, 0.0]})
        >>> item_case_ids({"images": images}, "mAP@30")
        ['case0001', 'case0002']
    """
    images = tables["images"]
    if not {"best_iou", "case_id"} <= set(images.columns):
        return None
    return [str(case) for case in _scored_images(images)["case_id"]]


BEHAVIOUR = TaskBehaviour(
    task="localization",
    reference=lambda image: {"boxes": image.boxes},
    answer_notes=box_overrun_notes,
    answer_counts=many_box_counts,
    answer_summary="novabench.run.predictions:box_answer_summary",
    prompt_sets_box_order=True,
    baseline_answer="novabench.run.baselines:answer_localization",
    breakdown_dimensions=BREAKDOWN_DIMENSIONS,  # every one: boxes have a size and a count
    # Every detection takes part in COCO's ranking: resampling a group inside the whole set
    # costs the whole set, its own evaluation costs the group (same numbers).
    groups_prepared_apart=True,
    human_reference="novabench.report.human_reference:human_reference",
    hit_rate_curve=True,
    rank_metric="mAP@30",
    rank_item_column=("images", "best_iou"),
    rank_item_values=rank_item_values,
    mean_keys=("mAP@30", "mAP@50", "mAP@50:95", "hit@30", "hit@50", "ACC50"),
    item_mean_terms=item_mean_terms,
    # How raw box answers were read (nova evaluate --box-convention, the prompt's order).
    answer_reading=("box_convention", "box_order_from_prompt"),
    table_rescoring="novabench.report.items:localization_from_tables",
    rescored_keys=("ACC50", "TP30", "FP30", "FNR", "COCO-AP@30", "COCO-AP@50", "COCO-AP@50:95"),
    item_case_ids=item_case_ids,
)
