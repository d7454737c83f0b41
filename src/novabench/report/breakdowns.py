"""Breakdowns of a report: each task's headline scores per group of items, with n and a CI.

Groups (the *dimensions*), per item:

- ``pathology_category``: the case's category in our taxonomy
  (:mod:`novabench.lexicon.taxonomy`), or a user's mapping file;
- ``sequence`` and ``plane``: as the reference caption names them
  (:func:`parse_acquisition`); ``unstated`` when it names none, ``multiple`` when it
  names several;
- ``n_gold_boxes``: gold boxes on the image, ``0``, ``1``, ``2``, ``3+``;
- ``gold_box_size``: the largest gold box as a fraction of the image area:
  ``small`` below 1 %, ``medium`` 1 % to 5 %, ``large`` above 5 % (``none`` without a
  gold box). On NOVA's 480 x 480 slices 1 % is a 48 x 48 px box and 5 % a 107 x 107 px
  box: with a field of view of about 24 cm, lesions under about 2.5 cm across and over
  about 5 cm. The cut-offs play the part of COCO's small/medium/large areas (32² and 96²
  px on ~640 x 480 images, 0.3 % and 3 %), moved up because a brain slice is one large
  object and its lesions are seldom under 0.3 % of the image. The largest box decides
  because a hit on any gold box is a hit, and the largest is the one most often found;
- ``images_per_case``: how many images the item's case has: ``1``, ``2``, ``3``,
  ``4-5``, ``6+``.

Localisation is broken down by all six, captioning by category, sequence, plane and images
per case, diagnosis (one item per case) by category and images per case.

Each cell is the task's metric on the items of the group (the evaluation's own
``aggregate`` on those items, so the same code as the headline numbers) with ``n`` and a
bootstrap interval from :func:`novabench.metrics.stats.bootstrap_confidence_intervals`,
resampling the group's items with the report's resamples, confidence and seed. A cell with
fewer items than ``min_group_size`` is kept and flagged ``too_small``; empty groups are
left out. Resamples on which a score is undefined are left out of its interval, as in the
headline intervals (the warning that says so is not repeated per cell).
"""

from __future__ import annotations

import math
import re
import warnings
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from novabench import registry
from novabench.lexicon.taxonomy import PATHOLOGY_CATEGORIES, CategoryMap, assign_category
from novabench.tasks import BREAKDOWN_DIMENSIONS, behaviour

__all__ = [
    "BOX_SIZE_THRESHOLDS",
    "DIMENSIONS",
    "CaseFacts",
    "ImageFacts",
    "SubsetPreparer",
    "break_down",
    "case_facts",
    "dimension_order",
    "gold_box_size",
    "image_facts",
    "parse_acquisition",
    "result_with_intervals",
    "result_without_coco_ap",
    "task_breakdowns",
    "task_dimensions",
]

#: Upper bounds (fractions of the image area) of ``small`` and ``medium`` gold boxes.
BOX_SIZE_THRESHOLDS: dict[str, float] = {"small": 0.01, "medium": 0.05}

#: Every dimension, in report order (declared beside the tasks, which choose among them).
DIMENSIONS: tuple[str, ...] = BREAKDOWN_DIMENSIONS

SEQUENCES: tuple[str, ...] = (
    "FLAIR",
    "T1",
    "T1 with contrast",
    "T2",
    "DWI/ADC",
    "SWI/GRE",
    "PD",
    "STIR",
    "MRA",
    "perfusion",
)
PLANES: tuple[str, ...] = ("axial", "coronal", "sagittal")
UNSTATED = "unstated"
MULTIPLE = "multiple"

# Groups in display order, per dimension.
_ORDER: dict[str, tuple[str, ...]] = {
    "pathology_category": PATHOLOGY_CATEGORIES,
    "sequence": (*SEQUENCES, MULTIPLE, UNSTATED),
    "plane": (*PLANES, MULTIPLE, UNSTATED),
    "n_gold_boxes": ("0", "1", "2", "3+"),
    "gold_box_size": ("small", "medium", "large", "none"),
    "images_per_case": ("1", "2", "3", "4-5", "6+"),
}

# --------------------------------------------------------------------------- acquisition

# A token boundary that treats letters and digits as word characters (so "T1" in "T10" is not).
_B = r"(?<![a-z0-9])"
_E = r"(?![a-z0-9])"
_SEQUENCE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (label, re.compile(pattern))
    for label, pattern in (
        ("FLAIR", _B + r"(?:flair|fluid[- ]attenuated inversion recovery)" + _E),
        (
            "DWI/ADC",
            _B
            + r"(?:dwi|adc|diffusion(?:[- ]weighted)?|apparent diffusion coefficient|b ?1000)"
            + _E,
        ),
        (
            "SWI/GRE",
            _B + r"(?:swi|swan|susceptibility(?:[- ]weighted)?|gre|gradient[- ]echo|"
            r"t2\s*\*|t2[- ]star|t2\s*\*[- ]?weighted)",
        ),
        ("T1", _B + r"(?:t1(?:w|wi|[- ]?weighted)?|mprage|mp[- ]rage|spgr|bravo)" + _E),
        ("T2", _B + r"t2(?:w|wi|[- ]?weighted)?(?![a-z0-9*])(?!\s*\*)(?![- ]star)"),
        ("PD", _B + r"(?:pd(?:w|[- ]weighted)?|proton[- ]density)" + _E),
        ("STIR", _B + r"stir" + _E),
        ("MRA", _B + r"(?:mra|mr angiography|time[- ]of[- ]flight|tof)" + _E),
        ("perfusion", _B + r"(?:perfusion|dsc|dce|asl|arterial spin labell?ing)" + _E),
    )
)
_CONTRAST = re.compile(
    _B
    + r"(?:contrast|gadolinium|gd|post[- ]?gad|enhanced|c\+|\+c|post[- ]?contrast)"
    + _E
    + r"|(?<![a-z0-9])t1\s*\+\s*c|t1c"
    + _E
)
_PLANE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("axial", re.compile(_B + r"(?:axial|transverse|transaxial)" + _E)),
    ("coronal", re.compile(_B + r"coronal" + _E)),
    ("sagittal", re.compile(_B + r"sagittal" + _E)),
)
# Per pattern above, words of which every match holds one: a caption holding none of them
# is not searched. A search starting with a look-behind tries every position of the caption
# (13 of them took 30 ms over NOVA's 906 captions); most captions name a sequence or two and
# a plane, and hold none of the other patterns' words.
_NEEDLES: dict[str, tuple[str, ...]] = {
    "FLAIR": ("flair", "fluid"),
    "DWI/ADC": ("dwi", "adc", "diffusion", "1000"),
    "SWI/GRE": ("swi", "swan", "susceptibility", "gre", "gradient", "t2"),
    "T1": ("t1", "rage", "spgr", "bravo"),  # mprage, mp-rage
    "T2": ("t2",),
    "PD": ("pd", "proton"),
    "STIR": ("stir",),
    "MRA": ("mra", "angiography", "flight", "tof"),
    "perfusion": ("perfusion", "dsc", "dce", "asl", "spin"),
    "contrast": ("contrast", "gadolinium", "gd", "gad", "enhanced", "+", "t1c"),
    "axial": ("axial", "transverse"),
    "coronal": ("coronal",),
    "sagittal": ("sagittal",),
}


def _found(patterns: tuple[tuple[str, re.Pattern[str]], ...], text: str) -> set[str]:
    """The labels of ``patterns`` that match ``text``, searched only where one of the
    label's :data:`_NEEDLES` stands."""
    found: set[str] = set()
    for label, pattern in patterns:
        for needle in _NEEDLES[label]:
            if needle in text:
                if pattern.search(text):
                    found.add(label)
                break
    return found


def parse_acquisition(caption: str | None) -> tuple[str | None, str | None]:
    """The MRI sequence and plane a reference caption names, as breakdown groups.

    Sequences: ``FLAIR``, ``T1``, ``T1 with contrast``, ``T2``, ``DWI/ADC``, ``SWI/GRE``
    (``T2*`` included), ``PD``, ``STIR``, ``MRA``, ``perfusion``. A caption naming contrast
    (``post-contrast``, ``gadolinium``, ``C+``...) with T1 or with no other sequence is
    ``T1 with contrast`` (contrast images are T1-weighted unless said otherwise); ``T2`` next
    to ``FLAIR`` is read as ``T2-FLAIR``; ``DWI`` and ``ADC`` are one group. Planes:
    ``axial`` (``transverse`` too), ``coronal``, ``sagittal``. Several distinct ones give
    ``"multiple"``; none gives None.

    Args:
        caption: a reference caption (None: nothing is named).

    Returns:
        ``(sequence, plane)``, each a group name or None.

    Example:
        >>> parse_acquisition("Axial T2-weighted FLAIR image shows a lesion.")
        ('FLAIR', 'axial')
        >>> parse_acquisition("Coronal post-contrast T1-weighted image: ring enhancement.")
        ('T1 with contrast', 'coronal')
        >>> parse_acquisition("DWI and ADC map; sagittal and axial T1.")
        ('multiple', 'multiple')
        >>> parse_acquisition("Susceptibility-weighted image")
        ('SWI/GRE', None)
    """
    if not caption:
        return None, None
    text = caption.lower()
    sequences = _found(_SEQUENCE_PATTERNS, text)
    if "FLAIR" in sequences:
        sequences.discard("T2")  # "T2 FLAIR", "T2-weighted FLAIR": one sequence
    if (not sequences or "T1" in sequences) and _found((("contrast", _CONTRAST),), text):
        sequences.discard("T1")
        sequences.add("T1 with contrast")
    planes = _found(_PLANE_PATTERNS, text)
    return _one(sequences), _one(planes)


def _one(found: set[str]) -> str | None:
    if not found:
        return None
    return found.pop() if len(found) == 1 else MULTIPLE


# --------------------------------------------------------------------------- per-item facts


def gold_box_size(boxes: Sequence[Sequence[float]], width: int, height: int) -> tuple[str, float]:
    """The size group of an image's largest gold box, and its fraction of the image area.

    Args:
        boxes: gold boxes ``[x, y, w, h]`` in pixels.
        width: image width in pixels.
        height: image height in pixels.

    Returns:
        ``(group, fraction)``: ``("none", 0.0)`` without a box; otherwise ``small`` below
        :data:`BOX_SIZE_THRESHOLDS` ``["small"]``, ``medium`` up to ``["medium"]``, else
        ``large``.

    Example:
        >>> gold_box_size([[0, 0, 48, 40], [10, 10, 100, 100]], 480, 480)
        ('medium', 0.043402777777777776)
        >>> gold_box_size([], 480, 480)
        ('none', 0.0)
    """
    if not boxes:
        return "none", 0.0
    fraction = max(float(w) * float(h) for _, _, w, h in boxes) / float(width * height)
    if fraction < BOX_SIZE_THRESHOLDS["small"]:
        return "small", fraction
    if fraction <= BOX_SIZE_THRESHOLDS["medium"]:
        return "medium", fraction
    return "large", fraction


def _count_group(count: int) -> str:
    return str(count) if count < 3 else "3+"


def _case_size_group(count: int) -> str:
    if count <= 3:
        return str(count)
    return "4-5" if count <= 5 else "6+"


@dataclass(frozen=True)
class CaseFacts:
    """What a breakdown or table needs to know about one case.

    Attributes:
        case_id: the case.
        final_diagnosis: as the release writes it (None when missing).
        category: its pathology category; ``category_entry`` / ``category_rule``: the lexicon
            entry and rule that gave it (see
            :class:`~novabench.lexicon.taxonomy.CategoryAssignment`).
        n_images: images of the case in the release.
    """

    case_id: str
    final_diagnosis: str | None
    category: str
    category_entry: str | None
    category_rule: str
    n_images: int

    @property
    def groups(self) -> dict[str, str]:
        """The case's group per case-level dimension."""
        return {
            "pathology_category": self.category,
            "images_per_case": _case_size_group(self.n_images),
        }


@dataclass(frozen=True)
class ImageFacts:
    """What a breakdown or table needs to know about one image (see the module docstring).

    Attributes:
        filename, case_id: the image and its case.
        case: the case's :class:`CaseFacts`.
        sequence, plane: from the reference caption (None: not named).
        n_gold_boxes: gold boxes on the image.
        gold_box_size: ``small``/``medium``/``large``/``none``; ``gold_box_fraction`` the
            largest box's fraction of the image area.
    """

    filename: str
    case_id: str
    case: CaseFacts
    sequence: str | None
    plane: str | None
    n_gold_boxes: int
    gold_box_size: str
    gold_box_fraction: float

    @property
    def groups(self) -> dict[str, str]:
        """The image's group per dimension."""
        return {
            "pathology_category": self.case.category,
            "sequence": self.sequence or UNSTATED,
            "plane": self.plane or UNSTATED,
            "n_gold_boxes": _count_group(self.n_gold_boxes),
            "gold_box_size": self.gold_box_size,
            "images_per_case": _case_size_group(self.case.n_images),
        }


def case_facts(release: Any, category_map: CategoryMap | None = None) -> list[CaseFacts]:
    """Facts of every case of a release, in ``release.cases()`` order.

    Example:
        >>> import tempfile, pathlib
        >>> from novabench.data.release import read_release
        >>> from novabench.data.sample import write_sample_release
        >>> release = read_release(write_sample_release(
        ...     pathlib.Path(tempfile.mkdtemp()) / "nova", n_cases=2, seed=0, progress=False))
        >>> facts = case_facts(release)
        >>> [f.n_images for f in facts] == [
        ...     sum(i.case_id == f.case_id for i in release.images) for f in facts]
        True
        >>> facts[0].category in PATHOLOGY_CATEGORIES
        True
    """
    counts = Counter(image.case_id for image in release.images)
    facts = []
    for case in release.cases():
        assignment = assign_category(
            case.final_diagnosis, case_id=case.case_id, category_map=category_map
        )
        facts.append(
            CaseFacts(
                case_id=case.case_id,
                final_diagnosis=case.final_diagnosis,
                category=assignment.category,
                category_entry=assignment.entry,
                category_rule=assignment.rule,
                n_images=counts[case.case_id],
            )
        )
    return facts


def image_facts(
    release: Any, category_map: CategoryMap | None = None, cases: Sequence[CaseFacts] | None = None
) -> list[ImageFacts]:
    """Facts of every image of a release, in ``release.images`` order.

    Args:
        release: a :class:`~novabench.data.release.NovaRelease`.
        category_map: a user's category overrides.
        cases: the :func:`case_facts` of the release, when already at hand.

    Example:
        >>> import tempfile, pathlib
        >>> from novabench.data.release import read_release
        >>> from novabench.data.sample import write_sample_release
        >>> release = read_release(write_sample_release(
        ...     pathlib.Path(tempfile.mkdtemp()) / "nova", n_cases=1, seed=0, progress=False))
        >>> first = image_facts(release)[0]
        >>> release.images[0].caption[:17], first.sequence, first.plane
        ('Axial T1-weighted', 'T1', 'axial')
    """
    by_case = {facts.case_id: facts for facts in (cases or case_facts(release, category_map))}
    facts = []
    for image in release.images:
        sequence, plane = parse_acquisition(image.caption)
        size, fraction = gold_box_size(image.boxes, image.width, image.height)
        facts.append(
            ImageFacts(
                filename=image.filename,
                case_id=image.case_id,
                case=by_case[image.case_id],
                sequence=sequence,
                plane=plane,
                n_gold_boxes=len(image.boxes),
                gold_box_size=size,
                gold_box_fraction=fraction,
            )
        )
    return facts


# --------------------------------------------------------------------------- breakdowns


def task_dimensions(task: str) -> tuple[str, ...]:
    """The dimensions a task is broken down by.

    Example:
        >>> task_dimensions("diagnosis")
        ('pathology_category', 'images_per_case')
    """
    return behaviour(task).breakdown_dimensions


class _Group:
    """The items of one group as an evaluation of their own (for the bootstrap).

    ``positions`` are sorted, so a sorted resample of the group stays in the evaluation's
    item order (the rule :mod:`novabench.metrics.stats` keeps for rank-based scores).
    """

    def __init__(self, evaluation: Any, positions: np.ndarray) -> None:
        self._evaluation = evaluation
        self._positions = positions
        self.n_items = int(len(positions))

    @property
    def order_free(self) -> bool:
        """As the evaluation: a group's draws map to the evaluation's in the same order."""
        from novabench.metrics.stats import _order_free

        return _order_free(self._evaluation)

    def aggregate(self, indices: np.ndarray | None = None, **options: Any) -> Mapping[str, Any]:
        chosen = self._positions if indices is None else self._positions[np.asarray(indices)]
        result: Mapping[str, Any] = self._evaluation.aggregate(chosen, **options)
        return result


class _ResampledGroup(_Group):
    """A group of an evaluation that scores many resamples at once: so does the group.

    A sorted row of group indices maps to sorted evaluation positions, so each row is
    scored exactly as :meth:`aggregate` would score it.
    """

    def __getattr__(self, name: str) -> Any:
        # aggregate_counts / aggregate_cluster_counts only where the evaluation has them
        # (the bootstrap asks for them); per cluster only for a group resampled on its own.
        inner = self.__dict__.get("_evaluation")
        if name == "aggregate_counts" and callable(getattr(inner, "aggregate_counts", None)):
            return self._aggregate_counts
        if (
            name == "aggregate_cluster_counts"
            and callable(getattr(inner, "aggregate_cluster_counts", None))
            and getattr(inner, "resamples_groups", False) is True
        ):
            return self._aggregate_cluster_counts
        raise AttributeError(name)

    def _aggregate_cluster_counts(
        self, counts: np.ndarray, codes: np.ndarray, **options: Any
    ) -> Mapping[str, np.ndarray]:
        """Draw counts of the group's clusters (``codes``: each of its items' cluster)."""
        result: Mapping[str, np.ndarray] = self._evaluation.aggregate_cluster_counts(
            counts, codes, positions=self._positions, **options
        )
        return result

    def _aggregate_counts(self, counts: np.ndarray, **options: Any) -> Mapping[str, np.ndarray]:
        """Draw counts of the group's items, scored by the evaluation as those images'."""
        if getattr(self._evaluation, "resamples_groups", False) is True:
            result: Mapping[str, np.ndarray] = self._evaluation.aggregate_counts(
                counts, positions=self._positions, **options
            )
            return result
        whole = np.zeros((len(counts), self._evaluation.n_items), dtype=np.int64)
        whole[:, self._positions] = counts
        result = self._evaluation.aggregate_counts(whole, **options)
        return result

    def aggregate_resamples(self, indices: np.ndarray, **options: Any) -> Mapping[str, np.ndarray]:
        result: Mapping[str, np.ndarray]
        if getattr(self._evaluation, "resamples_groups", False) is True:
            # Draws counted over the group's images, not mapped onto the whole set's.
            result = self._evaluation.aggregate_resamples(
                indices, positions=self._positions, **options
            )
        else:
            result = self._evaluation.aggregate_resamples(
                self._positions[np.asarray(indices)], **options
            )
        return result


class _WithoutCocoAp:
    """A localisation evaluation seen by the bootstrap without its COCO AP keys.

    The other keys are resampled exactly as on the evaluation itself (same draws, same
    order rule, the same vectorised path), so their intervals do not change; the COCO AP
    rebuild, most of the cost, is skipped and those keys get no interval.
    """

    def __init__(self, evaluation: Any) -> None:
        self._evaluation = evaluation
        self.n_items = int(evaluation.n_items)

    @property
    def order_free(self) -> bool:
        """As the evaluation it wraps."""
        from novabench.metrics.stats import _order_free

        return _order_free(self._evaluation)

    def aggregate(self, indices: np.ndarray | None = None) -> Mapping[str, Any]:
        # Not computed at all: COCO AP is most of a point score's cost too.
        result: Mapping[str, Any] = self._evaluation.aggregate(indices, coco_ap=False)
        return result

    def aggregate_resamples(self, indices: np.ndarray) -> Mapping[str, np.ndarray]:
        result: Mapping[str, np.ndarray] = self._evaluation.aggregate_resamples(
            indices, coco_ap=False
        )
        return result

    def __getattr__(self, name: str) -> Any:
        # aggregate_counts / aggregate_cluster_counts only where the wrapped evaluation has them.
        inner = self.__dict__.get("_evaluation")
        if name == "aggregate_counts" and callable(getattr(inner, "aggregate_counts", None)):
            return self._aggregate_counts
        if name == "aggregate_cluster_counts" and callable(
            getattr(inner, "aggregate_cluster_counts", None)
        ):
            return self._aggregate_cluster_counts
        raise AttributeError(name)

    def _aggregate_counts(self, counts: np.ndarray) -> Mapping[str, np.ndarray]:
        result: Mapping[str, np.ndarray] = self._evaluation.aggregate_counts(counts, coco_ap=False)
        return result

    def _aggregate_cluster_counts(
        self, counts: np.ndarray, codes: np.ndarray
    ) -> Mapping[str, np.ndarray]:
        result: Mapping[str, np.ndarray] = self._evaluation.aggregate_cluster_counts(
            counts, codes, coco_ap=False
        )
        return result


def result_without_coco_ap(evaluation: Any) -> Any:
    """A localisation evaluation that leaves its COCO AP keys out of every score and
    resample (the other keys, and the bootstrap's draws, unchanged): COCO AP is most of the
    cost.

    Example:
        >>> from novabench.metrics.localization import prepare_localization
        >>> evaluation = prepare_localization([{"boxes": [[0, 0, 10, 10]]}],
        ...                                   [{"boxes": [[0, 0, 10, 10]]}])
        >>> sorted(result_without_coco_ap(evaluation).aggregate())[:3]
        ['ACC50', 'FNR', 'FP30']
    """
    return _WithoutCocoAp(evaluation)


def _bootstrapped(evaluation: Any, coco_ap_intervals: bool) -> Any:
    """What the bootstrap resamples: the evaluation, or it without its COCO AP keys."""
    from novabench.metrics.localization import LocalizationEvaluation

    if coco_ap_intervals:
        return evaluation
    inner = evaluation._evaluation if isinstance(evaluation, _Group) else evaluation
    if not isinstance(inner, LocalizationEvaluation):  # only localisation has COCO AP keys
        return evaluation
    return _WithoutCocoAp(evaluation)


def _group(evaluation: Any, positions: np.ndarray) -> Any:
    from novabench.metrics.stats import SupportsResampledAggregate

    subset = getattr(evaluation, "subset", None)
    if callable(subset):  # the group's own statistics: resampled over its items alone
        return subset(positions)
    if isinstance(evaluation, SupportsResampledAggregate):
        return _ResampledGroup(evaluation, positions)
    return _Group(evaluation, positions)


def result_with_intervals(
    evaluation: Any,
    *,
    n_resamples: int,
    confidence: float = 0.95,
    seed: int = 0,
    coco_ap_intervals: bool = True,
    clusters: Sequence[str] | None = None,
) -> dict[str, Any]:
    """An evaluation's full result and, with resamples, its ``confidence_intervals``.

    What ``novabench.metrics.tasks.compute_task`` returns for a prepared evaluation: the
    report's task results and the human reference are built with it. With
    ``coco_ap_intervals=False`` a localisation evaluation's COCO AP keys keep their values
    but get no interval (the other intervals are unchanged, and cost a fraction). With
    ``clusters`` (each image's case id) whole cases are resampled.

    Example:
        >>> from novabench.metrics.diagnosis import prepare_diagnosis
        >>> result = result_with_intervals(prepare_diagnosis([["glioma"]], ["glioma"]),
        ...                                n_resamples=10)
        >>> result["top1-lexicon"], result["confidence_intervals"]["top1-lexicon"]
        (1.0, [1.0, 1.0])
    """
    from novabench.metrics.stats import bootstrap_confidence_intervals

    result = dict(evaluation.result())
    if n_resamples > 0:
        intervals = bootstrap_confidence_intervals(
            _bootstrapped(evaluation, coco_ap_intervals),
            n_resamples=n_resamples,
            confidence=confidence,
            seed=seed,
            clusters=clusters,
        )
        result["confidence_intervals"] = {
            key: [low, high] for key, (low, high) in intervals.items()
        }
    return result


def _number(value: Any) -> float | None:
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value


def break_down(
    evaluation: Any,
    groups: Sequence[str],
    *,
    keys: Sequence[str],
    order: Sequence[str] = (),
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    min_group_size: int = 10,
    prepare_group: Callable[[np.ndarray], Any] | None = None,
    coco_ap_intervals: bool = False,
    clusters: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """One row per group: n, too_small, each key's value on the group and its bootstrap CI.

    Args:
        evaluation: a prepared evaluation (``prepare_task``) whose items are ``groups``' items.
        groups: the group of each evaluation item, in item order.
        keys: the metric keys to report (those ``aggregate`` gives; others are skipped).
        order: group display order; groups not named come after, sorted.
        n_resamples: bootstrap resamples per group (0: no intervals).
        confidence: interval coverage.
        seed: bootstrap seed (the same for every group).
        min_group_size: groups with fewer items are flagged ``too_small``.
        prepare_group: optionally, the evaluation of the items at some (sorted) positions
            prepared on its own, equal to ``evaluation`` on those items but cheaper to
            resample when its cost grows with the whole set (localisation, a
            :class:`SubsetPreparer`); by default, and always without resamples, the group
            is ``evaluation`` restricted to its items.
        coco_ap_intervals: also bootstrap the COCO AP keys of a localisation evaluation
            (most of a breakdown's cost); by default their cells keep the value and have
            no interval (``_ci`` None).
        clusters: each item's case id: a group's interval then resamples the cases its
            items belong to, taking the group's items of each drawn case; None: items one
            by one.

    Returns:
        Rows ``{"group", "n", "too_small", key: value | None, key + "_ci": [lo, hi] | None}``
        (None where a score is undefined, without resamples, or for a COCO AP key without
        ``coco_ap_intervals``).

    Example:
        >>> from novabench.metrics.diagnosis import prepare_diagnosis
        >>> evaluation = prepare_diagnosis([["glioma"], ["abscess"], ["glioma"]],
        ...                                ["glioma", "glioma", "glioma"])
        >>> rows = break_down(evaluation, ["a", "b", "a"], keys=["top1-lexicon"], n_resamples=0,
        ...                   min_group_size=2)
        >>> [(row["group"], row["n"], row["too_small"], row["top1-lexicon"]) for row in rows]
        [('a', 2, False, 1.0), ('b', 1, True, 0.0)]
    """
    settings = _RowSettings(
        tuple(keys), n_resamples, confidence, seed, min_group_size, coco_ap_intervals
    )
    return _rows(evaluation, groups, order, settings, prepare_group, clusters)


@dataclass(frozen=True)
class _RowSettings:
    """What every row of a breakdown shares."""

    keys: tuple[str, ...]
    n_resamples: int
    confidence: float
    seed: int
    min_group_size: int
    coco_ap_intervals: bool = False


class SubsetPreparer:
    """A task's evaluation prepared on its own for some of its items (a breakdown group).

    :meth:`subset` keeps only the items a group needs, so a group's evaluation and
    bootstrap cost what its own items cost, not the whole set's.

    Args:
        task: the task name.
        predictions: the task's answers, in item order.
        references: the task's references, in item order.
        options: the metric options the whole task was scored with.

    Example:
        >>> preparer = SubsetPreparer("localization", [{"boxes": [[0, 0, 5, 5]]}, {"boxes": []}],
        ...     [{"boxes": [[0, 0, 5, 5]]}, {"boxes": [[0, 0, 5, 5]]}], {})
        >>> preparer(np.array([0])).result()["mAP@30"], preparer.subset(np.array([1])).n_items
        (1.0, 1)
    """

    def __init__(
        self,
        task: str,
        predictions: Sequence[Any],
        references: Sequence[Any],
        options: Mapping[str, Any],
    ) -> None:
        self.task = task
        self.predictions = list(predictions)
        self.references = list(references)
        self.options = dict(options)

    @property
    def n_items(self) -> int:
        """How many items the preparer holds."""
        return len(self.predictions)

    def subset(self, positions: np.ndarray) -> SubsetPreparer:
        """A preparer of only the items at ``positions`` (in that order)."""
        return SubsetPreparer(
            self.task,
            [self.predictions[int(i)] for i in positions],
            [self.references[int(i)] for i in positions],
            self.options,
        )

    def __call__(self, positions: np.ndarray) -> Any:
        """The evaluation of the items at ``positions``, prepared as the task's own."""
        from novabench.metrics.localization import LocalizationWarning
        from novabench.metrics.tasks import prepare_task

        chosen = self.subset(positions)
        with warnings.catch_warnings():
            # Said once for the whole set; a group without gold boxes is expected.
            warnings.simplefilter("ignore", LocalizationWarning)
            return prepare_task(self.task, chosen.predictions, chosen.references, **self.options)


def _rows(
    evaluation: Any,
    groups: Sequence[str],
    order: Sequence[str],
    settings: _RowSettings,
    prepare_group: Callable[[np.ndarray], Any] | None,
    clusters: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """:func:`break_down`'s rows, in display order."""
    if len(groups) != evaluation.n_items:
        raise ValueError(f"{len(groups)} group labels for {evaluation.n_items} items")
    if clusters is not None and len(clusters) != evaluation.n_items:
        raise ValueError(f"{len(clusters)} case ids for {evaluation.n_items} items")
    labels = np.asarray(list(groups), dtype=object)
    present = list(dict.fromkeys(groups))
    ranked = [g for g in order if g in present] + sorted(g for g in present if g not in order)
    rows: list[dict[str, Any]] = []
    for group in ranked:
        positions = np.flatnonzero(labels == group).astype(np.int64)
        cases = None if clusters is None else [clusters[int(p)] for p in positions]
        # A group prepared on its own only pays when its COCO AP is resampled: the other
        # keys are per-image counts, as cheap to resample on the whole evaluation.
        if prepare_group is None or settings.n_resamples == 0 or not settings.coco_ap_intervals:
            rows.append(_group_row(_group(evaluation, positions), group, settings, cases))
        else:
            rows.append(_prepared_group_row(prepare_group, positions, group, settings, cases))
    return rows


def _prepared_group_row(
    prepare_group: Callable[[np.ndarray], Any],
    positions: np.ndarray,
    group: str,
    settings: _RowSettings,
    cases: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The row of a group whose evaluation is prepared on its own."""
    return _group_row(prepare_group(positions), group, settings, cases)


def _group_row(
    subset: Any, group: str, settings: _RowSettings, cases: Sequence[str] | None = None
) -> dict[str, Any]:
    """One breakdown row: the group's values and, with resamples, their intervals."""
    from novabench.metrics.stats import BootstrapWarning, bootstrap_confidence_intervals

    values = subset.aggregate()
    row: dict[str, Any] = {
        "group": group,
        "n": subset.n_items,
        "too_small": subset.n_items < settings.min_group_size,
    }
    intervals: Mapping[str, tuple[float, float]] = {}
    if settings.n_resamples > 0:
        with warnings.catch_warnings():
            # Undefined resamples are common in small groups; the rule is documented.
            warnings.simplefilter("ignore", BootstrapWarning)
            bootstrapped = _bootstrapped(subset, settings.coco_ap_intervals)
            intervals = bootstrap_confidence_intervals(
                bootstrapped,
                n_resamples=settings.n_resamples,
                confidence=settings.confidence,
                seed=settings.seed,
                clusters=cases,
                # The cell's values are the bootstrap's full-set scores: not computed twice
                # (a wrapper without COCO AP scores fewer keys: it computes its own).
                point=values if bootstrapped is subset else None,
            )
    for key in settings.keys:
        if key not in values:
            continue
        row[key] = _number(values[key])
        low, high = intervals.get(key, (math.nan, math.nan))
        defined = not (math.isnan(low) or math.isnan(high))
        row[f"{key}_ci"] = [float(low), float(high)] if defined else None
    return row


def dimension_order(dimension: str) -> tuple[str, ...]:
    """The display order of a dimension's groups.

    Example:
        >>> dimension_order("gold_box_size")
        ('small', 'medium', 'large', 'none')
    """
    return _ORDER[dimension]


def task_breakdowns(
    task: str,
    evaluation: Any,
    item_groups: Sequence[Mapping[str, str]],
    *,
    n_resamples: int,
    confidence: float,
    seed: int,
    min_group_size: int,
    keys: Sequence[str] | None = None,
    prepare_group: Callable[[np.ndarray], Any] | None = None,
    coco_ap_intervals: bool = False,
    clusters: Sequence[str] | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """Every dimension of ``task``: ``{dimension: rows of :func:`break_down`}``.

    Args:
        task: the task name.
        evaluation: its prepared evaluation.
        item_groups: per evaluation item, ``{dimension: group}`` (``ImageFacts.groups``...).
        n_resamples: bootstrap resamples.
        confidence: interval coverage.
        seed: bootstrap seed.
        min_group_size: the too-small flag's threshold.
        keys: metric keys (default: the task's headline keys).
        prepare_group: see :func:`break_down`.
        coco_ap_intervals: see :func:`break_down`.
        clusters: see :func:`break_down` (each image's case id; None for a case task).

    Example:
        >>> from novabench.metrics.diagnosis import prepare_diagnosis
        >>> evaluation = prepare_diagnosis([["glioma"]], ["glioma"])
        >>> groups = [{"pathology_category": "neoplastic", "images_per_case": "1"}]
        >>> result = task_breakdowns("diagnosis", evaluation, groups, n_resamples=0,
        ...     confidence=0.95, seed=0, min_group_size=1)
        >>> result["pathology_category"][0]["top5-lexicon"], result["images_per_case"][0]["group"]
        (1.0, '1')
    """
    chosen_keys = (
        tuple(keys)
        if keys is not None
        else registry.TASKS[task].headline_keys_with(getattr(evaluation, "metrics", ()))
    )
    settings = _RowSettings(
        chosen_keys, n_resamples, confidence, seed, min_group_size, coco_ap_intervals
    )
    return {
        dimension: _rows(
            evaluation,
            [groups[dimension] for groups in item_groups],
            _ORDER[dimension],
            settings,
            prepare_group,
            clusters,
        )
        for dimension in task_dimensions(task)
    }
