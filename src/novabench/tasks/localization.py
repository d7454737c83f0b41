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
    "CORNER_MIN_ANSWERS",
    "CORNER_REACH",
    "TINY_BOX_PIXELS",
    "box_overrun_notes",
    "box_reach",
    "box_scale_warnings",
    "corner_confinement",
    "item_case_ids",
    "overrun_advice_from_rereading",
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
        f"{_XYXY_ADVICE} {_RAW_ADVICE}"
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


# The advice of box_overrun_notes: for boxes given, and (a guess) for raw answers.
_XYXY_ADVICE = "if they are [x1, y1, x2, y2], convert them to [x, y, width, height]"
_RAW_ADVICE = "(raw answers: --box-convention xyxy_pixel)"


def overrun_advice_from_rereading(
    notes: Sequence[str], coverage: Mapping[str, Any], readers: Mapping[str, Any] | None
) -> list[str]:
    """The notes of :func:`box_overrun_notes`, their raw-answer advice taken from evidence.

    When the raw answers past the image were read again under every explicit convention
    (``box_answer_summary``'s ``out_of_image_reread`` and ``inside_with``), the advice names
    those under which more than half of them fit the image, or says none does, instead of
    guessing ``xyxy_pixel`` (which may leave them past it). The ``[x1, y1, x2, y2]`` advice
    stays only when some answers were given as boxes (``readers["parsed_earlier"]``).

    Args:
        notes: the task's notes.
        coverage: the task's coverage (``out_of_image_reread``: the raw answers past the
            image read again, 0 leaves the notes as given; ``inside_with``: per convention
            those that then fit their image).
        readers: the report's ``box_answers`` (what read the answers), or None.

    Example:
        >>> note = box_overrun_notes([{"boxes": [[300, 10, 400, 50]]}],
        ...     [type("Image", (), {"width": 480, "height": 480})()])
        >>> coverage = {"out_of_image_reread": 1, "inside_with": {"protocol": 1}}
        >>> print(overrun_advice_from_rereading(note, coverage, {"read_here": 1})[0])
        1 predicted boxes in 1 images extend past their image by more than 2%: raw answers read again: 1 of 1 fit with --box-convention protocol
    """
    reread = int(coverage.get("out_of_image_reread") or 0)
    inside_with = coverage.get("inside_with") or {}
    boxes_given = bool((readers or {}).get("parsed_earlier"))
    if not reread:
        return list(notes)
    fits = {c: int(n) for c, n in inside_with.items() if 2 * int(n) > reread}
    if len(set(fits.values())) == 1:
        fitted = (
            f"{next(iter(fits.values()))} of {reread} fit with --box-convention "
            + " or ".join(fits)
        )
    else:
        fitted = " or ".join(
            f"{n} of {reread} fit with --box-convention {c}" for c, n in fits.items()
        )
    found = (
        f"raw answers read again: {fitted}"
        if fits
        else "raw answers read again under every other --box-convention: most still reach past it"
    )
    advice = f"{_XYXY_ADVICE} ({found})" if boxes_given else found
    return [note.replace(f"{_XYXY_ADVICE} {_RAW_ADVICE}", advice) for note in notes]


#: A set of box answers is "confined to a corner" when every box's far corner (x + width,
#: y + height) lies at or below this fraction of its image's width and of its height. Pixels
#: of a model input under 600 px read as 0..1000 land there (a 476 px Qwen2.5-VL input on a
#: 480 px image: 0.476); on the synthetic sample 30% of the images' gold box sets reach no
#: further on both axes, so a genuine model's 20 answers all do so with odds near 0.3**20.
CORNER_REACH = 0.6
#: The answers with boxes a confinement needs before it is noted (a handful prove nothing).
CORNER_MIN_ANSWERS = 20
#: Boxes whose far corner lies within this many pixels of the image's origin: 0..1 fractions
#: read as pixels (no lesion box of a real image is that small on both axes).
TINY_BOX_PIXELS = 2.0


def box_reach(
    answers: Sequence[Sequence[Sequence[float]]], image_sizes: Sequence[tuple[float, float]]
) -> dict[str, Any]:
    """How far the boxes of a set of answers reach into their images, taken together.

    Args:
        answers: per answer its ``[x, y, width, height]`` boxes in pixels of its image.
        image_sizes: per answer its image's ``(width, height)``.

    Returns:
        ``{"answers_with_boxes": int, "reach": [x, y] | None, "reach_pixels": [x, y] | None}``:
        the largest far corner (x + width, y + height) of any box as a fraction of its image's
        width and height, and in pixels; None when no answer holds a box.

    Example:
        >>> box_reach([[[10, 20, 100, 50]], [], [[200, 0, 40, 40]]], [(480, 480)] * 3)
        {'answers_with_boxes': 2, 'reach': [0.5, 0.14583333333333334], 'reach_pixels': [240.0, 70.0]}
    """
    boxed, reach_x, reach_y, pixels_x, pixels_y = 0, 0.0, 0.0, 0.0, 0.0
    for boxes, (width, height) in zip(answers, image_sizes):
        if not boxes:
            continue
        boxed += 1
        far_x = max(float(box[0]) + float(box[2]) for box in boxes)
        far_y = max(float(box[1]) + float(box[3]) for box in boxes)
        reach_x, reach_y = max(reach_x, far_x / float(width)), max(reach_y, far_y / float(height))
        pixels_x, pixels_y = max(pixels_x, far_x), max(pixels_y, far_y)
    if not boxed:
        return {"answers_with_boxes": 0, "reach": None, "reach_pixels": None}
    return {
        "answers_with_boxes": boxed,
        "reach": [reach_x, reach_y],
        "reach_pixels": [pixels_x, pixels_y],
    }


def corner_confinement(reach: Mapping[str, Any]) -> str | None:
    """Whether boxes reaching as :func:`box_reach` says sit in one small corner of their images.

    Returns:
        ``"tiny"`` when every box ends within :data:`TINY_BOX_PIXELS` pixels of the images'
        origin (0..1 fractions read as pixels), ``"corner"`` when every box ends at or
        below :data:`CORNER_REACH` of its image on both axes (a smaller scale read as a
        larger one, e.g. a model input's pixels as 0..1000), None otherwise or with fewer than
        :data:`CORNER_MIN_ANSWERS` answers with boxes.

    Example:
        >>> corner_confinement({"answers_with_boxes": 881, "reach": [0.47, 0.47],
        ...                     "reach_pixels": [226.0, 226.0]})
        'corner'
        >>> corner_confinement({"answers_with_boxes": 881, "reach": [0.002, 0.002],
        ...                     "reach_pixels": [0.9, 1.0]})
        'tiny'
        >>> corner_confinement({"answers_with_boxes": 5, "reach": [0.47, 0.47],
        ...                     "reach_pixels": [226.0, 226.0]}) is None
        True
    """
    boxed, fraction, pixels = (
        reach.get("answers_with_boxes") or 0,
        reach.get("reach"),
        reach.get("reach_pixels"),
    )
    if boxed < CORNER_MIN_ANSWERS or not fraction or not pixels:
        return None
    if max(pixels) <= TINY_BOX_PIXELS:
        return "tiny"
    if max(fraction) <= CORNER_REACH:
        return "corner"
    return None


def box_scale_warnings(
    det_boxes: Any, det_counts: Any, gold_boxes: Any, gold_counts: Any
) -> list[str]:
    """Warnings for predicted boxes in another format or scale, when no image size is known.

    The ``evaluate`` face and ``compute_task`` get boxes and reference boxes, not the images:
    the reference boxes' extent (their largest far corner on each axis, over all images)
    stands in for the image size. With at least :data:`CORNER_MIN_ANSWERS` predictions
    holding boxes: more than half of them with a box ending more than 2% past that extent
    ([x1, y1, x2, y2] given as [x, y, width, height], 0..1000 for pixels); or every box
    confined as :func:`corner_confinement` says, measured against that extent (0..1
    fractions; a smaller scale read as a larger one).

    Args:
        det_boxes: ``(n, 4)`` predicted ``[x, y, width, height]`` boxes, stacked by image.
        det_counts: predicted boxes per image.
        gold_boxes: ``(m, 4)`` reference boxes, same form.
        gold_counts: reference boxes per image.

    Returns:
        The warnings (none for boxes spread as the references are).

    Example:
        >>> import numpy as np
        >>> gold = np.array([[100.0, 120.0, 60.0, 40.0], [300.0, 320.0, 80.0, 90.0]] * 10)
        >>> fractions = gold / 480  # 0..1 of a 480 px image, given as pixels
        >>> print(box_scale_warnings(fractions, np.ones(20), gold, np.ones(20))[0])
        every predicted box of the 20 predictions with boxes ends within 2 px of the origin: 0..1 fractions? boxes must be pixels of the original image
        >>> box_scale_warnings(gold, np.ones(20), gold, np.ones(20))
        []
    """
    import numpy as np

    det = np.asarray(det_boxes, dtype=np.float64).reshape(-1, 4)
    counts = np.asarray(det_counts, dtype=np.int64)
    gold = np.asarray(gold_boxes, dtype=np.float64).reshape(-1, 4)
    boxed = int(np.count_nonzero(counts))
    if boxed < CORNER_MIN_ANSWERS or not len(det):
        return []
    far = det[:, :2] + det[:, 2:]
    image = np.repeat(np.arange(len(counts)), counts)
    reach_pixels = far.max(axis=0)
    if float(reach_pixels.max()) <= TINY_BOX_PIXELS:
        return [
            f"every predicted box of the {boxed} predictions with boxes ends within "
            f"{TINY_BOX_PIXELS:g} px of the origin: 0..1 fractions? boxes must be pixels of the "
            "original image"
        ]
    if not len(gold):  # nothing else to measure them against
        return []
    extent = (gold[:, :2] + gold[:, 2:]).max(axis=0)
    if (extent <= 0).any():
        return []
    stand_in = f"the images' sizes are not known here: the reference boxes' extent, {extent[0]:.0f} x {extent[1]:.0f} px, stands in"
    past = np.zeros(len(counts), dtype=bool)
    past[image[(far > _OVERRUN_TOLERANCE * extent).any(axis=1)]] = True
    if 2 * int(past.sum()) > boxed:
        return [
            f"{int(past.sum())} of {boxed} predictions with boxes have a box ending more than 2% "
            f"past every reference box ({stand_in}): boxes in another format or scale? They must "
            "be pixels of the original image, [x, y, width, height] (or [x1, y1, x2, y2] with "
            "box_format='xyxy')"
        ]
    reach = reach_pixels / extent
    confined = corner_confinement(
        {
            "answers_with_boxes": boxed,
            "reach": reach.tolist(),
            "reach_pixels": reach_pixels.tolist(),
        }
    )
    if confined == "corner":
        return [
            f"every predicted box of the {boxed} predictions with boxes ends within "
            f"{100 * reach[0]:.1f}% x {100 * reach[1]:.1f}% of the reference boxes' extent "
            f"({stand_in}): a smaller scale read as a larger one (e.g. pixels of a model input "
            "under 1000 px read as 0..1000)? boxes must be pixels of the original image"
        ]
    return []


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
    revise_answer_notes=overrun_advice_from_rereading,
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
