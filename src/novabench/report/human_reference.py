"""The human reference for localisation: the release's raters scored like a model.

NOVA's images carry boxes of two blinded raters besides the consensus (gold) boxes. Each
rater's boxes are scored against the gold boxes with the localisation metric the model
gets (:func:`novabench.metrics.tasks.prepare_task`, same keys, same bootstrap), and rater 1
against rater 2 (rater 2's boxes standing in for gold: the inter-rater agreement). An image
on which a rater drew nothing counts as "no box" for that rater, exactly as a model's
missing answer does. The gold boxes are the raters' consensus, so rater-vs-gold is an
optimistic ceiling; rater 1 vs rater 2 is the fairer human yardstick.

Raters are taken in name order: ``rater_1`` is the first name found in the release,
``rater_2`` the second (``rater1`` and ``rater2`` in the official layout, as far as known).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from novabench import registry
from novabench.report.breakdowns import result_with_intervals

__all__ = [
    "COMPARISONS",
    "RATER_SLOTS",
    "HumanReference",
    "comparison_rows",
    "human_reference",
    "release_raters",
]

RATER_SLOTS: tuple[str, ...] = ("rater_1", "rater_2")
#: The comparisons reported: (name, predicted side, reference side); "gold" is the consensus.
COMPARISONS: tuple[tuple[str, str, str], ...] = (
    ("rater_1_vs_gold", "rater_1", "gold"),
    ("rater_2_vs_gold", "rater_2", "gold"),
    ("rater_1_vs_rater_2", "rater_1", "rater_2"),
)


def comparison_rows(section: Mapping[str, Any] | None) -> list[tuple[str, Mapping[str, Any]]]:
    """The scored comparisons of a report's ``human_reference["localization"]``, in order.

    Skips the section's settings (``available``, ``raters``, ``n_images``, ``notes``) and any
    comparison whose rater the release lacks.

    Example:
        >>> section = {"available": True, "raters": {"rater_1": "a"}, "n_images": 2,
        ...     "rater_1_vs_gold": {"mAP@30": 0.5}, "rater_2_vs_gold": {"available": False}}
        >>> comparison_rows(section)
        [('rater 1 vs gold', {'mAP@30': 0.5})]
    """
    if not section or section.get("available") is False:
        return []
    rows = []
    for name, _, _ in COMPARISONS:
        row = section.get(name)
        if isinstance(row, Mapping) and row.get("available") is not False:
            rows.append((name.replace("_", " "), row))
    return rows


def release_raters(release: Any) -> list[str]:
    """The rater names of a release, sorted (empty when it has no rater boxes).

    Example:
        >>> import types
        >>> image = types.SimpleNamespace(rater_boxes=[{"rater": "b", "boxes": []},
        ...                                              {"rater": "a", "boxes": [[0, 0, 1, 1]]}])
        >>> release_raters(types.SimpleNamespace(images=[image]))
        ['a', 'b']
    """
    return sorted({entry["rater"] for image in release.images for entry in image.rater_boxes})


def _boxes_of(image: Any, rater: str) -> list[list[float]]:
    for entry in image.rater_boxes:
        if entry["rater"] == rater:
            return [list(box) for box in entry["boxes"]]
    return []


@dataclass
class HumanReference:
    """The human reference on some images of a release.

    Attributes:
        raters: ``{"rater_1": name, "rater_2": name}`` for the raters the release has.
        section: what the report's ``human_reference["localization"]`` holds.
        boxes: per rater slot, each image's boxes (``[x, y, w, h]``); absent slots: no rater.
        best_iou: per comparison, each image's best IoU (0.0 when either side is empty).
    """

    raters: dict[str, str]
    section: dict[str, Any]
    boxes: dict[str, list[list[list[float]]]] = field(default_factory=dict)
    best_iou: dict[str, list[float]] = field(default_factory=dict)


def human_reference(
    release: Any,
    positions: Sequence[int],
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    coco_ap_intervals: bool = False,
) -> HumanReference:
    """Score the raters on the images at ``positions`` (those the model was scored on).

    Args:
        release: a :class:`~novabench.data.release.NovaRelease`.
        positions: positions in ``release.images`` of the images to score.
        n_resamples: bootstrap resamples (0: no intervals), as the report's; they draw
            whole cases (every scored image of a drawn case), as the model's intervals do.
        confidence: interval coverage.
        seed: bootstrap seed.
        coco_ap_intervals: also give the COCO AP keys intervals (five times the cost of
            the other keys together); by default they keep their values without one.

    Returns:
        A :class:`HumanReference`. Its ``section`` is ``{"available": True, "raters": ...,
        "n_images": n, "rater_1_vs_gold": {metric keys, counts, "confidence_intervals",
        "n_images_with_rater_boxes"}, "rater_2_vs_gold": ..., "rater_1_vs_rater_2": ...,
        "notes": [...]}``, a comparison whose rater is missing being ``{"available": False,
        "reason": ...}``; or ``{"available": False, "reason": ...}`` when the release has no
        rater boxes at all.

    Example:
        >>> import tempfile, pathlib
        >>> from novabench.data.release import read_release
        >>> from novabench.data.sample import write_sample_release
        >>> release = read_release(write_sample_release(
        ...     pathlib.Path(tempfile.mkdtemp()) / "nova", n_cases=2, seed=0, progress=False))
        >>> reference = human_reference(release, range(len(release.images)), n_resamples=0)
        >>> reference.raters, 0 < reference.section["rater_1_vs_gold"]["mAP@30"] <= 1
        ({'rater_1': 'rater1', 'rater_2': 'rater2'}, True)
        >>> reference.section["n_images"] == len(release.images)
        True
    """
    images = [release.images[position] for position in positions]
    names = release_raters(release)
    if not names:
        unavailable = {
            "available": False,
            "reason": "the release has no rater boxes (only the consensus gold boxes)",
        }
        return HumanReference({}, unavailable)
    raters = dict(zip(RATER_SLOTS, names))
    boxes: dict[str, list[list[list[float]]]] = {
        slot: [_boxes_of(image, name) for image in images] for slot, name in raters.items()
    }
    boxes_with_gold = {**boxes, "gold": [[list(b) for b in image.boxes] for image in images]}
    section: dict[str, Any] = {"available": True, "raters": raters, "n_images": len(images)}
    best_iou: dict[str, list[float]] = {}
    for comparison, predicted, reference in COMPARISONS:  # in report order, scored or not
        missing = [slot for slot in (predicted, reference) if slot not in boxes_with_gold]
        if missing:
            section[comparison] = {
                "available": False,
                "reason": f"the release has {len(names)} rater(s): no "
                + missing[0].replace("_", " "),
            }
            continue
        section[comparison], best_iou[comparison] = _compare(
            boxes_with_gold[predicted],
            boxes_with_gold[reference],
            n_resamples=n_resamples,
            confidence=confidence,
            seed=seed,
            coco_ap_intervals=coco_ap_intervals,
            cases=[image.case_id for image in images],
        )
    section["notes"] = [
        "the gold boxes are the raters' consensus, so rater-vs-gold is an optimistic "
        "ceiling; rater 1 vs rater 2 (rater 2 as reference) is the inter-rater agreement",
        "an image on which a rater drew no box counts as a miss for that rater",
    ]
    if n_resamples > 0 and not coco_ap_intervals:
        section["notes"].append(
            "COCO-AP keys are given without an interval (ask for them with --coco-ap-intervals all)"
        )
    if len(names) > len(RATER_SLOTS):
        section["notes"].append(
            f"the release names {len(names)} raters; the first two by name are "
            "scored: " + ", ".join(names)
        )
    return HumanReference(raters, section, boxes, best_iou)


def _compare(
    predicted: list[list[list[float]]],
    reference: list[list[list[float]]],
    *,
    n_resamples: int,
    confidence: float,
    seed: int,
    coco_ap_intervals: bool,
    cases: Sequence[str],
) -> tuple[dict[str, Any], list[float]]:
    """One comparison: its result and each image's best IoU."""
    from novabench.metrics.localization import LocalizationWarning
    from novabench.metrics.tasks import prepare_task

    with warnings.catch_warnings():
        # Data warnings about the gold boxes were already given for the model's score.
        warnings.simplefilter("ignore", LocalizationWarning)
        evaluation = prepare_task(
            registry.task_answered_in("boxes"),
            [{"boxes": b} for b in predicted],
            [{"boxes": b} for b in reference],
        )
        result = result_with_intervals(
            evaluation,
            n_resamples=n_resamples,
            confidence=confidence,
            seed=seed,
            coco_ap_intervals=coco_ap_intervals,
            clusters=cases,
        )
    result.pop("per_image_best_iou", None)
    result["n_images_with_rater_boxes"] = sum(1 for b in predicted if b)
    best_iou = [0.0 if value is None else value for value in evaluation.per_image_best_iou]
    return result, best_iou
