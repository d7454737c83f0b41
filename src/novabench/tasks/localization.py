"""How anomaly localisation is scored, broken down and ranked.

Its metric (``metrics/localization.py``) takes no option from the scoring options and has
no judge; its answers get a note when boxes run past their image and the box-answer counts
of :func:`novabench.run.box_answers.box_answer_summary`; its prompt fixes the box order;
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
    "SAME_ANSWER_SHARE",
    "box_overrun_notes",
    "many_box_counts",
    "same_box_answers",
    "CORNER_GOLD_SHARE",
    "CORNER_MIN_ANSWERS",
    "CORNER_REACH",
    "CORNER_SHARE",
    "TINY_BOX_PIXELS",
    "WHOLE_IMAGE_OVERRUN",
    "box_overrun_notes",
    "box_reach",
    "box_scale_warnings",
    "corner_confinement",
    "inputs_from_rows",
    "item_case_ids",
    "overrun_advice_from_rereading",
    "item_mean_terms",
    "plain_predictions",
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


#: The share of the answers with boxes that, holding one and the same box set, make the
#: notice of a blind answer: a model that looks at the image answers it differently on
#: different images; one set on half of them is the same guess everywhere (the same ten
#: boxes on every image of the sample reach Gemini's published mAP@30). "no target" answers
#: hold no box and are never counted.
SAME_ANSWER_SHARE = 0.5


def _distinct_boxes(boxes: Sequence[Sequence[float]]) -> set[tuple[float, ...]]:
    """The distinct boxes of an answer (to six significant digits: a copied box is the same)."""
    return {tuple(float(f"{float(v):.6g}") for v in box) for box in boxes}


def _covers_the_image(box: Sequence[float]) -> bool:
    """Whether a box in fractions of its image (or of a stand-in for it) covers the image:
    starting within 2% of the origin and reaching 90% of it on both axes."""
    x, y, w, h = box
    return x <= 0.02 and y <= 0.02 and x + w >= 0.9 and y + h >= 0.9


def same_box_answers(
    answers: Sequence[Sequence[Sequence[float]]],
    image_sizes: Sequence[tuple[float, float]] | None = None,
) -> tuple[int, int]:
    """How many answers hold the most common box set, and how many hold boxes at all.

    Two answers are the same when their distinct boxes are, in fractions of their image to six
    significant digits when the image sizes are known (so a guess in 0..1000 matches across sizes), else
    in pixels.

    Args:
        answers: per answer its ``[x, y, width, height]`` boxes in pixels of its image.
        image_sizes: per answer its image's ``(width, height)``, or None.

    Returns:
        ``(same, answered)``: the answers holding the most common box set, and the answers
        with boxes (answers without a box are neither, nor, when the sizes are known, those
        whose every box covers the image: a diffuse finding's answer, not a guessed place).

    Example:
        >>> guess = [[100.0, 100.0, 50.0, 50.0], [300.0, 200.0, 40.0, 40.0]]
        >>> same_box_answers([guess, guess[::-1], [[10.0, 10.0, 5.0, 5.0]], []])
        (2, 3)
    """
    from collections import Counter

    sets: Counter[tuple[tuple[float, ...], ...]] = Counter()
    for position, boxes in enumerate(answers):
        if not boxes:
            continue
        if image_sizes is not None:
            width, height = (float(v) for v in image_sizes[position])
            scale = (width, height, width, height)
            # Six significant digits: tiny boxes (0..1 fractions) stay apart.
            boxes = [[float(f"{float(v) / s:.6g}") for v, s in zip(box, scale)] for box in boxes]
            if all(_covers_the_image(box) for box in boxes):
                continue  # "somewhere in here": a diffuse finding's answer, no guessed place
        sets[tuple(sorted(_distinct_boxes(boxes)))] += 1
    answered = sum(sets.values())
    return (sets.most_common(1)[0][1] if sets else 0), answered


def many_box_counts(
    predictions: Sequence[Mapping[str, Any]], images: Sequence[Any]
) -> dict[str, int]:
    """How many scored images were answered with many distinct boxes (:data:`MANY_BOXES`): the
    protocol's mAP@30 costs such answers nothing (a hit needs one box), COCO-AP@30 ranks them;
    with one box copied past that number (a runaway list); and with one box set shared by at
    least :data:`SAME_ANSWER_SHARE` of the answers with boxes (a blind answer).

    Args:
        predictions: ``{"boxes": [...]}`` per image, in the order of ``images``.
        images: the scored images (anything with gold ``boxes``, ``width`` and ``height``).

    Returns:
        ``{"images_with_many_boxes": n}`` when ``n > 0``, ``"images_with_repeated_boxes"``
        likewise, and ``"images_with_the_same_boxes"`` with ``"images_answered_with_boxes"``
        when one box set is that common among at least :data:`CORNER_MIN_ANSWERS` answers;
        ``{}`` when there is nothing to say.

    Example:
        >>> from types import SimpleNamespace
        >>> one_gold = SimpleNamespace(boxes=[[0, 0, 5, 5]], width=480, height=480)
        >>> three_gold = SimpleNamespace(boxes=[[0, 0, 5, 5]] * 3, width=480, height=480)
        >>> grid = {"boxes": [[i, i, 4, 4] for i in range(12)]}  # 12 > max(10, 5 x 1), 12 <= 15
        >>> copies = {"boxes": [[20, 20, 40, 40]] * 30}  # one box, 30 times
        >>> many_box_counts([grid, grid, copies], [one_gold, three_gold, one_gold])
        {'images_with_many_boxes': 1, 'images_with_repeated_boxes': 1}
    """
    many = repeated = 0
    for prediction, image in zip(predictions, images):
        boxes = prediction.get("boxes") or []
        limit = max(MANY_BOXES, MANY_BOXES_PER_GOLD * len(getattr(image, "boxes", None) or []))
        if len(boxes) <= limit:
            continue
        if len(_distinct_boxes(boxes)) > limit:
            many += 1
        else:
            repeated += 1
    counts = {"images_with_many_boxes": many, "images_with_repeated_boxes": repeated}
    counts = {key: value for key, value in counts.items() if value}
    sizes = [(getattr(image, "width", 1), getattr(image, "height", 1)) for image in images]
    same, answered = same_box_answers(
        [prediction.get("boxes") or [] for prediction in predictions], sizes
    )
    if answered >= CORNER_MIN_ANSWERS and same >= SAME_ANSWER_SHARE * answered and same > 1:
        counts["images_with_the_same_boxes"] = same
        counts["images_answered_with_boxes"] = answered
    return counts


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


#: An answer is "confined to a corner" when every box's far corner (x + width, y + height)
#: lies at or below this fraction of its image's width and of its height. Pixels of a model
#: input under 600 px read as 0..1000 land there (a 476 px Qwen2.5-VL input on a 480 px
#: image: 0.476); on the synthetic sample 30% of the images' gold box sets reach no further
#: on both axes, so a genuine model's answers are confined about as often.
CORNER_REACH = 0.6
#: The share of the answers with boxes that must be confined (or tiny) for the notice: a
#: share, not all of them, so one stray answer in the right scale cannot hide a whole run
#: read in the wrong one, while a genuine model (about 30% confined) stays far below it.
CORNER_SHARE = 0.95
#: The share of the same images' gold box sets confined the same way at or above which no
#: corner notice is given: answers confined because the lesions are (a model answering only
#: where the lesion lies top-left: gold confined on all of them) are no scale error. A scale
#: error on a spread of images meets gold confined at the base rate, 264 of 881 images
#: (30%) on the 906-image sample, 13 of 24 on a 25-image one: well below it.
CORNER_GOLD_SHARE = 0.8
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
        ``{"answers_with_boxes": int, "reach": [x, y] | None, "reach_pixels": [x, y] | None,
        "confined_answers": int, "tiny_answers": int, "confined_reach": [x, y] | None,
        "confined_reach_pixels": [x, y] | None}``: the largest far corner (x + width,
        y + height) of any box as a fraction of its image's width and height, and in pixels
        (None when no answer holds a box); the answers whose every box ends at or below
        :data:`CORNER_REACH` of its image on both axes, those whose every box ends within
        :data:`TINY_BOX_PIXELS` of the origin, and the largest far corner among the confined.

    Example:
        >>> reach = box_reach([[[10, 20, 100, 50]], [], [[200, 0, 40, 40]]], [(480, 480)] * 3)
        >>> reach["answers_with_boxes"], reach["reach"], reach["reach_pixels"]
        (2, [0.5, 0.14583333333333334], [240.0, 70.0])
        >>> reach["confined_answers"], reach["confined_reach_pixels"]
        (2, [240.0, 70.0])
    """
    boxed, confined, tiny = 0, 0, 0
    reach, pixels = [0.0, 0.0], [0.0, 0.0]
    confined_reach, confined_pixels = [0.0, 0.0], [0.0, 0.0]
    for boxes, (width, height) in zip(answers, image_sizes):
        if not boxes:
            continue
        boxed += 1
        far = [
            max(float(box[0]) + float(box[2]) for box in boxes),
            max(float(box[1]) + float(box[3]) for box in boxes),
        ]
        fraction = [far[0] / float(width), far[1] / float(height)]
        reach = [max(a, b) for a, b in zip(reach, fraction)]
        pixels = [max(a, b) for a, b in zip(pixels, far)]
        tiny += max(far) <= TINY_BOX_PIXELS
        if max(fraction) <= CORNER_REACH:
            confined += 1
            confined_reach = [max(a, b) for a, b in zip(confined_reach, fraction)]
            confined_pixels = [max(a, b) for a, b in zip(confined_pixels, far)]
    return {
        "answers_with_boxes": boxed,
        "reach": reach if boxed else None,
        "reach_pixels": pixels if boxed else None,
        "confined_answers": confined,
        "tiny_answers": tiny,
        "confined_reach": confined_reach if confined else None,
        "confined_reach_pixels": confined_pixels if confined else None,
    }


def corner_confinement(
    reach: Mapping[str, Any], gold_reach: Mapping[str, Any] | None = None
) -> str | None:
    """Whether boxes reaching as :func:`box_reach` says sit in one small corner of their images.

    Args:
        reach: :func:`box_reach` of the answers.
        gold_reach: :func:`box_reach` of the gold boxes of the same answered images, when known:
            gold confined as often as :data:`CORNER_GOLD_SHARE` explains confined answers.

    Returns:
        ``"tiny"`` when at least :data:`CORNER_SHARE` of the answers with boxes end within
        :data:`TINY_BOX_PIXELS` pixels of the images' origin (0..1 fractions read as pixels),
        ``"corner"`` when at least that share end at or below :data:`CORNER_REACH` of the
        image on both axes (a smaller scale read as a larger one, e.g. a model input's
        pixels as 0..1000) and the gold of those images is not confined alike; None
        otherwise or with fewer than :data:`CORNER_MIN_ANSWERS` answers with boxes.

    Example:
        >>> corner_confinement({"answers_with_boxes": 881, "confined_answers": 880, "tiny_answers": 0})
        'corner'
        >>> corner_confinement({"answers_with_boxes": 881, "confined_answers": 881, "tiny_answers": 881})
        'tiny'
        >>> corner_confinement({"answers_with_boxes": 881, "confined_answers": 264, "tiny_answers": 0}) is None
        True
        >>> gold = {"answers_with_boxes": 264, "confined_answers": 264, "tiny_answers": 0}
        >>> corner_confinement({"answers_with_boxes": 264, "confined_answers": 264, "tiny_answers": 0}, gold) is None
        True
    """
    boxed = int(reach.get("answers_with_boxes") or 0)
    if boxed < CORNER_MIN_ANSWERS:
        return None
    if int(reach.get("tiny_answers") or 0) >= CORNER_SHARE * boxed:
        return "tiny"
    if int(reach.get("confined_answers") or 0) < CORNER_SHARE * boxed:
        return None
    if gold_reach is not None:
        gold_boxed = int(gold_reach.get("answers_with_boxes") or 0)
        gold_confined = int(gold_reach.get("confined_answers") or 0)
        if gold_boxed and gold_confined >= CORNER_GOLD_SHARE * gold_boxed:
            return None  # the lesions themselves lie there
    return "corner"


#: A box past the reference boxes' extent that starts within 2% of it from the origin and
#: ends at most this many times the extent is a whole-image box (a normal answer for a
#: diffuse finding; the references rarely reach the image's edge), not a scale error.
WHOLE_IMAGE_OVERRUN = 1.5


def box_scale_warnings(
    det_boxes: Any,
    det_counts: Any,
    gold_boxes: Any,
    gold_counts: Any,
    image_sizes: Any = None,
) -> list[str]:
    """Warnings for predicted boxes in another format or scale, or blind.

    With ``image_sizes`` (the references' ``width`` and ``height``: NOVA rows give them)
    the boxes are judged against their own image, as ``nova evaluate`` judges them: any box
    ending more than 2% past its image is noted (how many boxes, in how many images, the
    first of them); and :data:`CORNER_SHARE` of the answers with boxes confined as
    :func:`corner_confinement` says, in fractions of their images, while the references of
    the same images are not.

    Without them (``compute_task`` or the ``evaluate`` face given bare boxes) the reference
    boxes' extent (their largest far corner on each axis, over all images) stands in for the
    image size. With at least :data:`CORNER_MIN_ANSWERS` predictions holding boxes: more than
    half of them with a box ending more than 2% past that extent ([x1, y1, x2, y2] given as
    [x, y, width, height], 0..1000 for pixels; a whole-image box, from the origin to at most
    :data:`WHOLE_IMAGE_OVERRUN` times the extent, is not counted); or the confinement above,
    measured against that extent (0..1 fractions; a smaller scale read as a larger one).

    Either way: images with many distinct boxes (:func:`many_box_counts`' rule), one box
    copied past it, one box set on at least :data:`SAME_ANSWER_SHARE` of the predictions
    with boxes (a blind answer), and boxes all within :data:`TINY_BOX_PIXELS` of the origin.

    Args:
        det_boxes: ``(n, 4)`` predicted ``[x, y, width, height]`` boxes, stacked by image.
        det_counts: predicted boxes per image.
        gold_boxes: ``(m, 4)`` reference boxes, same form.
        gold_counts: reference boxes per image.
        image_sizes: ``(n_images, 2)`` each image's width and height, or None (not known).

    Returns:
        The warnings (none for boxes spread as the references are, or inside their images).

    Example:
        >>> import numpy as np
        >>> gold = np.array([[100.0 + 10 * i, 120.0 + 15 * i, 60.0, 40.0] for i in range(20)])
        >>> fractions = gold / 480  # 0..1 of a 480 px image, given as pixels
        >>> print(box_scale_warnings(fractions, np.ones(20), gold, np.ones(20))[0])
        20 of the 20 predictions with boxes have every box ending within 2 px of the origin: 0..1 fractions? boxes must be pixels of the original image
        >>> box_scale_warnings(gold, np.ones(20), gold, np.ones(20))
        []

        Boxes inside their 480 px images but past every reference box: noted only when the
        images' sizes are not known.

        >>> right = gold + [[120.0, 0.0, 0.0, 0.0]]  # far corners up to x 470, y 445
        >>> print(box_scale_warnings(right, np.ones(20), gold, np.ones(20))[0][:64])
        12 of 20 predictions with boxes have a box ending more than 2% p
        >>> box_scale_warnings(right, np.ones(20), gold, np.ones(20), [[480, 480]] * 20)
        []
        >>> print(box_scale_warnings(right, np.ones(20), gold, np.ones(20), [[480, 400]] * 20)[0][:89])
        3 predicted boxes in 3 images extend past their image by more than 2% (first: example 17)
    """
    import numpy as np

    det = np.asarray(det_boxes, dtype=np.float64).reshape(-1, 4)
    counts = np.asarray(det_counts, dtype=np.int64)
    gold = np.asarray(gold_boxes, dtype=np.float64).reshape(-1, 4)
    references = np.asarray(gold_counts, dtype=np.int64)
    boxed = int(np.count_nonzero(counts))
    if not len(det):
        return []
    extent = (gold[:, :2] + gold[:, 2:]).max(axis=0) if len(gold) else np.ones(2)
    sized = image_sizes is not None
    scale = (
        np.asarray(image_sizes, dtype=np.float64).reshape(-1, 2)
        if sized
        else np.tile(np.where(extent > 0, extent, 1.0), (len(counts), 1))
    )
    warnings = _answer_count_warnings(det, counts, references, scale)
    far = det[:, :2] + det[:, 2:]
    image = np.repeat(np.arange(len(counts)), counts)
    image_far = np.zeros((len(counts), 2))
    np.maximum.at(image_far, image, far)
    answered = counts > 0
    tiny = int(np.count_nonzero(answered & (image_far.max(axis=1) <= TINY_BOX_PIXELS)))
    if tiny:  # no lesion's box is this small: said however few (a model switching scale)
        return [
            f"{tiny} of the {boxed} predictions with boxes have every box ending within "
            f"{TINY_BOX_PIXELS:g} px of the origin: 0..1 fractions? boxes must be pixels of the "
            "original image",
            *warnings,
        ]
    if sized:
        past_box = (far > _OVERRUN_TOLERANCE * scale[image]).any(axis=1)
        if past_box.any():
            images_past = np.unique(image[past_box])
            return [
                f"{int(past_box.sum())} predicted boxes in {len(images_past)} images extend past "
                f"their image by more than 2% (first: example {int(images_past[0])}): {_SCALE_ADVICE}",
                *warnings,
            ]
        where = "of their image"
    else:
        if boxed < CORNER_MIN_ANSWERS or not len(gold) or (extent <= 0).any():
            return warnings  # too few to judge, or nothing to measure them against
        stand_in = f"the images' sizes are not known here: the reference boxes' extent, {extent[0]:.0f} x {extent[1]:.0f} px, stands in"
        whole_image = (det[:, :2] <= 0.02 * extent).all(axis=1) & (
            far <= WHOLE_IMAGE_OVERRUN * extent
        ).all(axis=1)
        overrun = (far > _OVERRUN_TOLERANCE * extent).any(axis=1) & ~whole_image
        past = np.zeros(len(counts), dtype=bool)
        past[image[overrun]] = True
        if 2 * int(past.sum()) > boxed:
            return [
                f"{int(past.sum())} of {boxed} predictions with boxes have a box ending more "
                f"than 2% past every reference box ({stand_in}): {_SCALE_ADVICE}",
                *warnings,
            ]
        where = f"of the reference boxes' extent ({stand_in})"
    confined = answered & (image_far / scale <= CORNER_REACH).all(axis=1)
    gold_image = np.repeat(np.arange(len(references)), references)
    gold_far = np.zeros((len(references), 2))
    np.maximum.at(gold_far, gold_image, gold[:, :2] + gold[:, 2:])
    with_gold = answered[: len(references)] & (references > 0)
    gold_confined = with_gold & (gold_far / scale[: len(references)] <= CORNER_REACH).all(axis=1)
    kind = corner_confinement(
        {"answers_with_boxes": boxed, "confined_answers": int(confined.sum())},
        {
            "answers_with_boxes": int(with_gold.sum()),
            "confined_answers": int(gold_confined.sum()),
        },
    )
    if kind == "corner":
        reach = (image_far[confined] / scale[confined]).max(axis=0)
        return [
            f"{int(confined.sum())} of the {boxed} predictions with boxes have every box within "
            f"{100 * reach[0]:.1f}% x {100 * reach[1]:.1f}% {where}, where the references of "
            "those images mostly are not: a smaller scale read as a larger one (e.g. pixels of a "
            "model input under 1000 px read as 0..1000)? boxes must be pixels of the original "
            "image",
            *warnings,
        ]
    return warnings


# What box_scale_warnings advises for boxes past their image (or the references' extent).
_SCALE_ADVICE = (
    "boxes in another format or scale? They must be pixels of the original image, "
    "[x, y, width, height] (or [x1, y1, x2, y2] with box_format='xyxy')"
)


def _answer_count_warnings(det: Any, counts: Any, references: Any, sizes: Any) -> list[str]:
    """:func:`box_scale_warnings`' warnings on many boxes, copied boxes and one box set
    everywhere (:func:`many_box_counts`' rules on stacked boxes; ``sizes``, per image its
    size or the reference boxes' extent standing in for it, tells a whole-image box apart)."""
    import numpy as np

    starts = np.concatenate([[0], np.cumsum(counts)])
    answers = [det[starts[i] : starts[i + 1]].tolist() for i in range(len(counts))]
    gold = [[None] * int(n) for n in references] + [[]] * max(0, len(counts) - len(references))
    images = [
        _GoldCount(boxes, (float(sizes[i][0]), float(sizes[i][1]))) for i, boxes in enumerate(gold)
    ]
    found = many_box_counts([{"boxes": boxes} for boxes in answers], images)
    scored = len(counts)
    lines = []
    if found.get("images_with_many_boxes"):
        lines.append(
            f"{found['images_with_many_boxes']} of {scored} predictions hold many distinct boxes "
            f"(more than {MANY_BOXES}, or {MANY_BOXES_PER_GOLD} per reference box): mAP@30 and "
            "mAP@50 count an image as a hit when any one box overlaps a reference, so extra "
            "boxes cost them nothing; read COCO-AP@30 beside them (a warning only: no score is changed for it)"
        )
    if found.get("images_with_repeated_boxes"):
        lines.append(
            f"{found['images_with_repeated_boxes']} of {scored} predictions repeat the same "
            f"box past {MANY_BOXES} boxes (a runaway list): the hit rates count the box once, "
            "COCO-AP@30 counts every copy as a false positive, and a box after the copies may "
            "fall past the boxes kept per image; deduplicate the answers to read COCO-AP (a "
            "warning only: no score is changed for it)"
        )
    if found.get("images_with_the_same_boxes"):
        lines.append(
            f"the same boxes on {found['images_with_the_same_boxes']} of the "
            f"{found['images_answered_with_boxes']} predictions with boxes: a blind answer, not "
            "a reading of each image (a warning only: no score is changed for it)"
        )
    return lines


class _GoldCount:
    """A stand-in image for :func:`many_box_counts`: its reference boxes (only their number
    counts) and its size (or the reference boxes' extent standing in for it)."""

    def __init__(self, boxes: list[Any], size: tuple[float, ...]) -> None:
        self.boxes = boxes
        self.width, self.height = size


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


def inputs_from_rows(
    predictions: Sequence[Mapping[str, Any]],
    references: Sequence[Mapping[str, Any]],
    options: Mapping[str, Any],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    """The evaluate face's ``all`` rows as the localisation metric takes them: each row's
    boxes and scores (None when it gives none) against its gold boxes (and its image's
    width and height when the row gives them, which the box notes are judged against).

    Example:
        >>> inputs_from_rows([{"boxes": [[10, 20, 30, 40]], "caption": "Axial FLAIR."}],
        ...     [{"boxes": [[12, 20, 30, 40]], "case_id": "case0001"}], {"max_detections": 5})
        ([{'boxes': [[10, 20, 30, 40]], 'scores': None}], [{'boxes': [[12, 20, 30, 40]]}], {'max_detections': 5})
    """
    sizes = ("width", "height")
    return (
        [{"boxes": p["boxes"], "scores": p.get("scores")} for p in predictions],
        [
            {"boxes": r["boxes"], **{k: r[k] for k in sizes if r.get(k) is not None}}
            for r in references
        ],
        dict(options),
    )


def plain_predictions(predictions: list[Any]) -> list[dict[str, Any]]:
    """Predictions in their plain form as the metric reads them: Arrow stores "no scores" as
    an empty list, so boxes with an empty (or no) score list keep their given order, unscored.

    Example:
        >>> plain_predictions([{"boxes": [[1, 2, 3, 4]], "scores": []}, {"boxes": [], "scores": []},
        ...     {"boxes": [[1, 2, 3, 4]], "scores": [0.5]}])
        [{'boxes': [[1, 2, 3, 4]]}, {'boxes': [], 'scores': []}, {'boxes': [[1, 2, 3, 4]], 'scores': [0.5]}]
    """
    restored = []
    for prediction in predictions:
        boxes = prediction["boxes"]
        scores = prediction.get("scores")
        unscored = scores is None or (len(scores) == 0 and len(boxes) > 0)
        restored.append({"boxes": boxes} if unscored else {"boxes": boxes, "scores": scores})
    return restored


BEHAVIOUR = TaskBehaviour(
    task="localization",
    reference=lambda image: {"boxes": image.boxes},
    answer_notes=box_overrun_notes,
    answer_counts=many_box_counts,
    answer_summary="novabench.run.box_answers:box_answer_summary",
    revise_answer_notes=overrun_advice_from_rereading,
    prompt_sets_box_order=True,
    baseline_answer="novabench.run.baselines:answer_localization",
    baseline_name="outlier-detector",
    inputs_from_rows=inputs_from_rows,
    plain_predictions=plain_predictions,
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
