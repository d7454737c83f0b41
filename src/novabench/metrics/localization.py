"""Localisation metrics of NOVA: the protocol's hit rates and COCO-exact average precision.

The NOVA paper reports "mAP@30", "mAP@50", "mAP@[50:95]", ACC50, TP30, FP30 and FNR.
The keys named after the paper compute the paper's quantity as far as public evidence
shows (NOVA_REFERENCE.md, section 3); every other reading has a name of its own:

- ``mAP@30``, ``mAP@50`` (protocol; definition from the co-authors' later harness): per
  image, the best IoU between any predicted and any gold box (0 when either list is
  empty); the score is the share of ALL evaluated images whose best IoU reaches 0.30 /
  0.50. Images without a gold box are never hits. Confidence scores play no part.
- ``mAP@50:95`` (inferred): the mean of that hit rate over IoU 0.50, 0.55, ..., 0.95.
- ``COCO-AP@30``, ``COCO-AP@50``, ``COCO-AP@50:95`` (COCO's definition): average
  precision, class-agnostic, numerically identical to pycocotools' ``COCOeval`` (bbox,
  one category, area "all", ``maxDets`` = ``max_detections``). With no scores every score
  is 1.0, so ties keep the given order.
- ``hit@30``, ``hit@50`` (ours, a diagnostic): the same hit rate over the images that
  have a gold box only; equal to ``mAP@30`` / ``mAP@50`` when every image has one.
- ``ACC50``, ``TP30``, ``FP30``, ``FNR`` (ours; the paper's definitions are not public):
  see :meth:`LocalizationEvaluation.aggregate`. The box counts at IoU 0.30 that
  reproductions tabulate are in :meth:`LocalizationEvaluation.counts`.

Everything is vectorised over images: detections and gold boxes are flattened, the IoU of
every (detection, gold box) pair of the same image is computed once, and COCO's greedy
matching runs as one loop over detection rank (at most ``max_detections`` steps) handling
all images and all IoU thresholds at once. Matching is done once in
:func:`prepare_localization`; :meth:`LocalizationEvaluation.aggregate` only redoes the
cheap accumulation, so bootstrap resamples of images cost little.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, SupportsFloat

import numpy as np

from novabench import checks
from novabench.errors import NovaInputError, warn_at_caller
from novabench.metrics.boxes import paired_iou_xywh
from novabench.metrics.localization_inputs import LocalizationInputs
from novabench.metrics.stats import checked_cluster_counts

__all__ = [
    "COCO_AP_KEYS",
    "COCO_IOU_THRESHOLDS",
    "LOCALIZATION_METRIC_KEYS",
    "RECALL_POINTS",
    "LocalizationEvaluation",
    "coco_average_precision",
    "LocalizationWarning",
    "prepare_localization",
    "prepare_localization_from_arrays",
    "score_localization",
]

#: IoU thresholds of COCO's default run (0.50:0.05:0.95), built exactly as COCO's Params do.
COCO_IOU_THRESHOLDS: np.ndarray = np.linspace(0.5, 0.95, 10)
#: The 101 recall points at which COCO samples the precision envelope.
RECALL_POINTS: np.ndarray = np.linspace(0.0, 1.0, 101)
# Row 0 is the 0.30 run, rows 1..10 the COCO default run (row 1 is 0.50).
_THRESHOLDS: np.ndarray = np.concatenate(([0.3], COCO_IOU_THRESHOLDS))
_ROW_30 = 0
_ROW_50 = 1
# The protocol's hit-rate thresholds: 0.30, then 0.50:0.05:0.95 (row 1 is 0.50).
_PROTOCOL_THRESHOLDS: np.ndarray = _THRESHOLDS

#: Keys of :meth:`LocalizationEvaluation.aggregate`, all fractions in [0, 1] or NaN.
LOCALIZATION_METRIC_KEYS: tuple[str, ...] = (
    "mAP@30",
    "mAP@50",
    "mAP@50:95",
    "COCO-AP@30",
    "COCO-AP@50",
    "COCO-AP@50:95",
    "hit@30",
    "hit@50",
    "ACC50",
    "TP30",
    "FP30",
    "FNR",
)

#: The COCO AP keys: the only ones whose resampling rebuilds a ranking (most of the cost).
COCO_AP_KEYS: tuple[str, ...] = ("COCO-AP@30", "COCO-AP@50", "COCO-AP@50:95")

# Elements of the (resamples, blocks) arrays the bootstrap builds at a time.
_CHUNK_ELEMENTS = 1 << 16


@dataclass(frozen=True)
class _MatchTable:
    """Where one IoU threshold's true positives sit among the blocks of detections.

    A block is a run of equal-score detections of one image, in COCO's global order; a
    resample repeats it as a whole, once per draw of its image. A matched block whose
    detections all match is *full*. Adjacent full blocks form a *run* of true positives,
    along which precision never falls (every detection adds one to both counts), in any
    resample: only a run's end can hold the best precision at or after any of its true
    positives, so the rebuild reads full blocks at run ends only. The matches of the other
    (partial) blocks are read one by one, copy by copy.

    Counts are read off the union of every threshold's matched blocks (see
    :meth:`LocalizationEvaluation._match_tables`): true positives through a block are the
    union's running count plus this threshold's running difference from it (``delta_*``:
    the union positions where this threshold's matches differ, and by how much).

    Attributes:
        key: which detections match, as bytes: equal keys give equal precision (equal
            counts per block do not: the places of matches in a tied block count).
        run_block / run_union / run_delta: per run end, its block, its position in the
            union, and 1 + the number of differences at or before it (0: none).
        delta_union / delta_value: the differences' union positions and values (<= 0).
        partial_block / partial_union / partial_delta: per partial match, the same three
            for its block; partial_before / partial_place: matches ahead of it in the block
            and its place there; partial_per_block / partial_length: its block's matches
            and length.
    """

    key: bytes
    run_block: np.ndarray
    run_union: np.ndarray
    run_delta: np.ndarray
    delta_union: np.ndarray
    delta_value: np.ndarray
    partial_block: np.ndarray
    partial_union: np.ndarray
    partial_delta: np.ndarray
    partial_before: np.ndarray
    partial_place: np.ndarray
    partial_per_block: np.ndarray
    partial_length: np.ndarray
    # Column orders of the rebuild's entries (see order), by the copies they spell out.
    _orders: dict[int, np.ndarray] = field(default_factory=dict, compare=False, repr=False)

    @property
    def is_empty(self) -> bool:
        """Whether no detection matches at this threshold."""
        return not (len(self.run_block) or len(self.partial_block))

    def order(self, most_copies: int) -> np.ndarray:
        """The global order of the run ends followed by ``most_copies`` copies of every
        partial match, copy by copy (the rebuild's column layout)."""
        if most_copies not in self._orders:
            n_runs, n_partial = len(self.run_block), len(self.partial_block)
            block = np.concatenate((self.run_block, np.tile(self.partial_block, most_copies)))
            copy = np.concatenate(
                (np.zeros(n_runs, np.int64), np.repeat(np.arange(most_copies), n_partial))
            )
            before = np.concatenate(
                (np.zeros(n_runs, np.int64), np.tile(self.partial_before, most_copies))
            )
            self._orders[most_copies] = np.lexsort((before, copy, block))
        return self._orders[most_copies]


class LocalizationWarning(UserWarning):
    """A localisation score is undefined (NaN) or predictions were cut at ``max_detections``."""


def _offsets(counts: np.ndarray) -> np.ndarray:
    """Start of each group in a flat array given group sizes."""
    return np.cumsum(counts) - counts


# --------------------------------------------------------------------------- matching


def _greedy_match(
    pair_iou: np.ndarray,
    pair_det: np.ndarray,
    pair_gold: np.ndarray,
    pair_rank: np.ndarray,
    n_det: int,
    n_gold: int,
    thresholds: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """COCO's greedy matching (``COCOeval.evaluateImg``) for all images and thresholds at once.

    Detections are visited by rank within their image (highest score first). Each one takes,
    among the still unmatched gold boxes of its image with IoU >= threshold, the one with the
    highest IoU; on an exact IoU tie COCO keeps the LAST such gold box in gold order (its scan
    replaces the candidate when ``iou >= best so far``), and so do we.

    Pairs must be ordered by (image, detection rank, gold index).

    Returns:
        ``(det_matched, gold_matched)``: bool arrays ``(T, n_det)`` and ``(T, n_gold)``.
    """
    n_thresholds = len(thresholds)
    det_matched = np.zeros((n_thresholds, n_det), dtype=bool)
    gold_matched = np.zeros((n_thresholds, n_gold), dtype=bool)
    if len(pair_iou) == 0:
        return det_matched, gold_matched
    by_rank = np.argsort(pair_rank, kind="stable")  # -> (rank, image, gold) order
    rank_bounds = np.searchsorted(pair_rank[by_rank], np.arange(int(pair_rank.max()) + 2))
    # COCO compares against min(t, 1 - 1e-10) so that IoU 1.0 can still match at t = 1.
    limits = np.minimum(thresholds, 1 - 1e-10)[:, None]
    for rank in range(len(rank_bounds) - 1):
        chunk = by_rank[rank_bounds[rank] : rank_bounds[rank + 1]]
        if len(chunk) == 0:
            continue
        iou, gold, det = pair_iou[chunk], pair_gold[chunk], pair_det[chunk]
        # One segment per detection: its image's gold boxes, in gold order.
        starts = np.flatnonzero(np.concatenate(([True], det[1:] != det[:-1])))
        segment = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, len(det))))
        available = (iou >= limits) & ~gold_matched[:, gold]
        candidate_iou = np.where(available, iou, -1.0)
        best_iou = np.maximum.reduceat(candidate_iou, starts, axis=1)
        is_best = available & (candidate_iou == best_iou[:, segment])
        position = np.where(is_best, np.arange(len(chunk)), -1)
        chosen = np.maximum.reduceat(position, starts, axis=1)  # last best gold, as COCO
        rows, segments = np.nonzero(chosen >= 0)
        picked = chosen[rows, segments]
        gold_matched[rows, gold[picked]] = True
        det_matched[rows, det[picked]] = True
    return det_matched, gold_matched


def _segment_max(values: np.ndarray, group: np.ndarray, n_groups: int, empty: float) -> np.ndarray:
    """Maximum of ``values`` per group (``group`` sorted ascending); ``empty`` for empty groups."""
    out = np.full(n_groups, empty, dtype=np.float64)
    if len(values):
        starts = np.flatnonzero(np.concatenate(([True], group[1:] != group[:-1])))
        out[group[starts]] = np.maximum.reduceat(values, starts)
    return out


def _ratio(numerator: SupportsFloat, denominator: SupportsFloat) -> float:
    """``numerator / denominator``, NaN (never an exception or a silent 0) when undefined."""
    return float(numerator) / float(denominator) if denominator else float("nan")


def _ratios(numerators: np.ndarray, denominators: np.ndarray) -> np.ndarray:
    """:func:`_ratio` elementwise: NaN where the denominator is 0."""
    numerators = np.asarray(numerators, dtype=np.float64)
    denominators = np.asarray(denominators, dtype=np.float64)
    out = np.full(np.broadcast(numerators, denominators).shape, np.nan)
    np.divide(numerators, denominators, out=out, where=denominators != 0)
    return out


def _first_true_positive_reaching(n_gold: np.ndarray, limit: int) -> np.ndarray:
    """Per resample and recall point, the smallest ``t >= 1`` with ``t / n_gold >= point``.

    Decided with the same float comparison as COCO's ``searchsorted`` on ``tp / n_gold``;
    ``limit + 1`` stands for "beyond every true positive".

    Example:
        >>> _first_true_positive_reaching(np.array([[4.0]]), 10)[0, [0, 1, 25, 26, 100]].tolist()
        [1, 1, 1, 2, 4]
    """
    points = RECALL_POINTS[None, :]
    first = np.maximum(np.ceil(points * n_gold), 1).astype(np.int64)
    for _ in range(2):  # the ceiling may be off by one either way in floating point
        lower = (first > 1) & ((first - 1) / n_gold >= points)
        first -= lower
        first += first / n_gold < points
    return np.minimum(first, limit + 1)


# --------------------------------------------------------------------------- evaluation


def _draw_counts(rows: np.ndarray, n_columns: int) -> np.ndarray:
    """``(n_rows, n_columns)`` times each column is drawn in each row of int64 ``rows``."""
    n_rows = len(rows)
    flat = rows + (np.arange(n_rows, dtype=np.int64) * n_columns)[:, None]
    return np.bincount(flat.ravel(), minlength=n_rows * n_columns).reshape(n_rows, n_columns)


class LocalizationEvaluation:
    """Matched predictions of a localisation run, ready to aggregate on any resample of images.

    Built by :func:`prepare_localization`; follows the ``prepare_*`` / ``aggregate(indices)``
    protocol of ``novabench.metrics.stats``.

    Attributes:
        n_items: number of images.
        max_detections: predictions kept per image (highest scores first).
        n_images_with_gold, n_gold_boxes, n_predicted_boxes, n_truncated_predictions: counts
            over the full set (``n_predicted_boxes`` counts every given box, including the
            ``n_truncated_predictions`` beyond ``max_detections``).

    Example:
        >>> evaluation = prepare_localization(
        ...     [{"boxes": [[0, 0, 10, 10]]}, {"boxes": [[50, 50, 5, 5]]}],
        ...     [{"boxes": [[0, 0, 10, 10]]}, {"boxes": [[0, 0, 10, 10]]}])
        >>> evaluation.n_items, evaluation.per_image_best_iou
        (2, [1.0, 0.0])
        >>> evaluation.aggregate()["hit@50"], evaluation.aggregate([0])["hit@50"]
        (0.5, 1.0)
    """

    #: Scores depend only on how often each image is drawn, not on the order of draws: the
    #: bootstrap may skip sorting its rows (``novabench.metrics.stats``).
    order_free = True
    #: ``aggregate_resamples`` takes ``positions=``: a group of images resampled on its own
    #: (``novabench.report.breakdowns``).
    resamples_groups = True

    def __init__(
        self, inputs: LocalizationInputs, *, max_detections: int, thresholds: np.ndarray
    ) -> None:
        self.n_items = inputs.n_images
        self.max_detections = max_detections
        self._thresholds = np.asarray(thresholds, dtype=np.float64)
        n_images = inputs.n_images
        gold_counts = inputs.gold_counts
        given_counts = inputs.det_counts
        self._gold_counts = gold_counts
        self._given_counts = given_counts
        self._inputs = inputs  # for input_notes, on demand
        self.n_images_with_gold = int(np.count_nonzero(gold_counts))
        self.n_gold_boxes = int(gold_counts.sum())
        self.n_predicted_boxes = int(given_counts.sum())

        # Rank detections within each image by score, stable (COCO's mergesort), then cut.
        det_image = np.repeat(np.arange(n_images), given_counts)
        order = np.lexsort((-inputs.det_scores, det_image))
        rank = np.arange(len(order)) - np.repeat(_offsets(given_counts), given_counts)
        keep = order[rank < max_detections]
        kept_counts = np.minimum(given_counts, max_detections)
        self._kept_counts = kept_counts
        self.n_truncated_predictions = int((given_counts - kept_counts).sum())
        kept_boxes = inputs.det_boxes[keep]
        kept_scores = inputs.det_scores[keep]
        kept_image = np.repeat(np.arange(n_images), kept_counts)

        # Every (detection, gold) pair of the same image, ordered by (image, rank, gold).
        pairs_per_image = kept_counts * gold_counts
        pair_image = np.repeat(np.arange(n_images), pairs_per_image)
        local = np.arange(int(pairs_per_image.sum())) - np.repeat(
            _offsets(pairs_per_image), pairs_per_image
        )
        golds_of_pair = gold_counts[pair_image]
        pair_rank = local // golds_of_pair
        pair_det = _offsets(kept_counts)[pair_image] + pair_rank
        pair_gold = _offsets(gold_counts)[pair_image] + local % golds_of_pair
        pair_iou = paired_iou_xywh(kept_boxes[pair_det], inputs.gold_boxes[pair_gold])

        det_matched, gold_matched = _greedy_match(
            pair_iou, pair_det, pair_gold, pair_rank, len(keep), self.n_gold_boxes, self._thresholds
        )

        # Per-image quantities for the hit rates, ACC50, TP30/FP30 and FNR.
        has_gold = gold_counts > 0
        self._has_gold = has_gold
        best_iou = _segment_max(pair_iou, pair_image, n_images, 0.0)
        first = pair_rank == 0
        first_iou = _segment_max(pair_iou[first], pair_image[first], n_images, 0.0)
        self._best_iou = np.where(has_gold, best_iou, np.nan)
        self._first_iou = np.where(has_gold, first_iou, np.nan)
        self._no_prediction = has_gold & (given_counts == 0)
        # Box-level counts at IoU 0.30 (only when that threshold was run).
        row_30 = np.flatnonzero(self._thresholds == 0.3)
        gold_image = np.repeat(np.arange(n_images), gold_counts)
        # float64 per image (bincount with weights counts in float)
        self._matched_gold_30: np.ndarray = np.zeros(n_images)
        self._matched_det_30: np.ndarray = np.zeros(n_images)
        if len(row_30):
            self._matched_gold_30 = np.bincount(
                gold_image, weights=gold_matched[row_30[0]], minlength=n_images
            )
            self._matched_det_30 = np.bincount(
                kept_image, weights=det_matched[row_30[0]], minlength=n_images
            )

        # AP state: detections in COCO's global order (stable sort by score over images in
        # order), grouped into blocks of equal score within one image, the unit that a
        # resample repeats as a whole (see aggregate).
        global_order = np.argsort(-kept_scores, kind="stable")
        self._sorted_matched = det_matched[:, global_order]
        sorted_image = kept_image[global_order]
        sorted_scores = kept_scores[global_order]
        new_block = np.ones(len(global_order), dtype=bool)
        new_block[1:] = (sorted_image[1:] != sorted_image[:-1]) | (
            sorted_scores[1:] != sorted_scores[:-1]
        )
        self._block_start = np.flatnonzero(new_block)
        self._block_length = np.diff(np.append(self._block_start, len(global_order)))
        self._block_image = sorted_image[self._block_start]
        self._match_table_cache: list[_MatchTable] | None = None
        self._union_blocks: np.ndarray = np.zeros(0, dtype=np.int64)
        self._union_matches: np.ndarray = np.zeros(0, dtype=np.int32)
        self._per_image_cache: np.ndarray | None = None

    # ------------------------------------------------------------------ public views

    @property
    def per_image_best_iou(self) -> list[float | None]:
        """Best IoU of any kept prediction with any gold box, per image (None: no gold box)."""
        return [None if np.isnan(value) else float(value) for value in self._best_iou]

    def per_image_hits(self) -> dict[str, list[bool]]:
        """Per image, whether its best IoU reaches 0.30 and 0.50: what ``mAP@30``/``mAP@50``
        (over all images) and ``hit@30``/``hit@50`` (over images with gold) are the shares of.

        An image without gold is never a hit, as in :meth:`aggregate`.

        Example:
            >>> evaluation = prepare_localization(
            ...     [{"boxes": [[0, 0, 10, 10]]}, {"boxes": [[5, 0, 10, 10]]}, {"boxes": []}],
            ...     [{"boxes": [[0, 0, 10, 10]]}, {"boxes": [[0, 0, 10, 10]]}, {"boxes": []}])
            >>> evaluation.per_image_hits()  # IoU 1, 1/3, and no gold
            {'hit_30': [True, True, False], 'hit_50': [True, False, False]}
        """
        # The comparison aggregate() makes (NaN best IoU, no gold: never a hit).
        reached = self._best_iou[None, :] >= _PROTOCOL_THRESHOLDS[[_ROW_30, _ROW_50], None]
        return {"hit_30": reached[0].tolist(), "hit_50": reached[1].tolist()}

    def counts(self) -> dict[str, int]:
        """The counts reported next to the scores, over the full set of images.

        Example:
            >>> evaluation = prepare_localization([{"boxes": []}],
            ...                                   [{"boxes": [[0, 0, 5, 5]]}])
            >>> counts = evaluation.counts()
            >>> counts["n_gold_boxes"], counts["n_true_positives_30"], counts["n_false_negatives_30"]
            (1, 0, 1)
        """
        matched_30 = int(self._matched_det_30.sum())
        return {
            "n_images": self.n_items,
            "n_images_with_gold": self.n_images_with_gold,
            "n_gold_boxes": self.n_gold_boxes,
            "n_predicted_boxes": self.n_predicted_boxes,
            "n_truncated_predictions": self.n_truncated_predictions,
            # Box counts at IoU 0.30 under one-to-one matching (the counts reproductions tabulate).
            "n_true_positives_30": matched_30,
            "n_false_positives_30": int(self._kept_counts.sum()) - matched_30,
            "n_false_negatives_30": self.n_gold_boxes - matched_30,
        }

    def _weights(self, indices: np.ndarray | Iterable[int] | None) -> np.ndarray | None:
        if indices is None:
            return None
        array = np.asarray(indices)
        if array.ndim != 1 or (array.size and array.dtype.kind not in "iu"):
            raise NovaInputError(
                "indices must be a 1-D array of integer image positions", field="indices"
            )
        if array.size and (array.min() < 0 or array.max() >= self.n_items):
            raise NovaInputError(
                f"indices must lie in [0, {self.n_items}), got values from "
                f"{array.min()} to {array.max()}",
                field="indices",
            )
        return np.bincount(array.astype(np.int64), minlength=self.n_items)

    def precision_at_recall_points(
        self, indices: np.ndarray | Iterable[int] | None = None
    ) -> np.ndarray | None:
        """COCO's interpolated precision, shape ``(n_thresholds, 101)``; None without gold.

        Rows follow the evaluation's IoU thresholds: for :func:`prepare_localization`, row 0
        is IoU 0.30 and rows 1..10 are 0.50:0.05:0.95. This is the ``precision`` array of
        pycocotools' ``COCOeval.eval`` for one category, area "all", ``maxDets[-1]``.

        A resample is expanded detection by detection, as pycocotools would see it: the
        reference the bootstrap's rebuild (:meth:`_resampled_precision`) is tested against.
        The full set is that rebuild with every image drawn once (equal, and faster).

        Args:
            indices: image positions of a resample (may repeat); None for the full set.

        Returns:
            The precision envelope sampled at the 101 recall points, or None when the
            selected images hold no gold box (COCO's -1).

        Example:
            >>> box = [0, 0, 5, 5]
            >>> evaluation = prepare_localization([{"boxes": [box]}], [{"boxes": [box]}])
            >>> evaluation.precision_at_recall_points().shape
            (11, 101)
        """
        weights = self._weights(indices)
        n_gold = self.n_gold_boxes if weights is None else int(weights @ self._gold_counts)
        if n_gold == 0:
            return None
        if weights is None:
            # The full set is the resample drawing every image once: the rebuild reads only
            # the true positives' counts, where the expansion below reads every detection.
            every_image_once = np.ones((1, self.n_items), dtype=np.int64)
            full_set: np.ndarray = self._resampled_precision(every_image_once)[0]
            return full_set
        # A resample is the concatenation of the chosen images in their original order,
        # each repeated as often as drawn. Under the stable global sort, every block of
        # equal-score detections of one image then appears `weight` times in a row.
        copies = weights[self._block_image]
        out_lengths = self._block_length * copies
        block = np.repeat(np.arange(len(copies)), out_lengths)
        within = np.arange(len(block)) - np.repeat(_offsets(out_lengths), out_lengths)
        matched = self._sorted_matched[
            :, self._block_start[block] + within % self._block_length[block]
        ]
        n_detections = matched.shape[1]
        # Integer counts, so fp = (rank + 1) - tp is exact and saves a second cumsum.
        true_positives = np.cumsum(matched.view(np.int8), axis=1, dtype=np.int32).astype(np.float64)
        false_positives = np.arange(1.0, n_detections + 1) - true_positives
        recall = true_positives / n_gold
        precision = true_positives / (false_positives + true_positives + np.spacing(1))
        envelope = np.maximum.accumulate(precision[:, ::-1], axis=1)[:, ::-1]
        sampled = np.zeros((len(self._thresholds), len(RECALL_POINTS)))
        for row in range(len(self._thresholds)):
            at = np.searchsorted(recall[row], RECALL_POINTS, side="left")
            reached = at < n_detections  # recall points beyond the last detection stay 0
            sampled[row, reached] = envelope[row, at[reached]]
        return sampled

    def input_notes(self) -> list[str]:
        """Warnings on the predicted boxes' format or scale, measured against each image's
        size when the references gave it (NOVA rows' ``width`` and ``height``), else against
        the reference boxes: what ``compute_task`` and the ``evaluate`` face say (see
        :func:`novabench.tasks.localization.box_scale_warnings`).

        Example:
            >>> prepare_localization([{"boxes": [[4, 6, 9, 8]]}], [{"boxes": [[5, 5, 9, 9]]}]).input_notes()
            []
            >>> prepare_localization([{"boxes": [[0, 0, 1, 1]]}], [{"boxes": [[5, 5, 9, 9]]}]).input_notes()[0][:44]
            '1 of the 1 predictions with boxes have every'
            >>> sized = {"boxes": [[5, 5, 9, 9]], "width": 480, "height": 480}
            >>> prepare_localization([{"boxes": [[4, 6, 9, 8]]}] * 2,
            ...                      [sized, {"boxes": [[5, 5, 9, 9]]}]).input_notes()[0][:64]
            '1 of the 2 references gives no width and height (first: example '
        """
        from novabench.tasks.localization import box_scale_warnings

        inputs = self._inputs
        unsized = list(getattr(inputs, "without_size", []))
        mixed = (
            [
                f"{len(unsized)} of the {inputs.n_images} references "
                f"{'gives' if len(unsized) == 1 else 'give'} no width and height "
                f"(first: example {unsized[0]}, references.width/height): the box checks "
                "measure every image's boxes against the reference boxes' extent, not their "
                "image; give both on every row (load_nova rows do)"
            ]
            if unsized
            else []
        )
        return mixed + box_scale_warnings(
            inputs.det_boxes,
            inputs.det_counts,
            inputs.gold_boxes,
            inputs.gold_counts,
            getattr(inputs, "image_sizes", None),
        )

    def result(self) -> dict[str, Any]:
        """The full result of :func:`score_localization`: scores, counts and per-image best IoU.

        Example:
            >>> evaluation = prepare_localization([{"boxes": [[0, 0, 10, 10]]}], [{"boxes": [[0, 0, 10, 10]]}])
            >>> evaluation.result()["n_gold_boxes"], evaluation.result()["per_image_best_iou"]
            (1, [1.0])
        """
        result: dict[str, Any] = dict(self.aggregate())
        result.update(self.counts())
        result["per_image_best_iou"] = self.per_image_best_iou
        return result

    def aggregate(
        self, indices: np.ndarray | Iterable[int] | None = None, *, coco_ap: bool = True
    ) -> dict[str, float]:
        """The localisation scores on all images, or on a resample of them.

        A resample is the multiset of images given by ``indices`` (positions may repeat),
        taken in the original image order, so score ties across images resolve exactly as in
        the full set; the order of ``indices`` itself does not matter. No warning is issued
        here (the bootstrap calls this a thousand times): undefined scores are NaN.

        Args:
            indices: image positions (0-based, may repeat); None for every image once.
            coco_ap: also the :data:`COCO_AP_KEYS` (most of the cost); False leaves them
                out of the result.

        The keys, with ``best IoU`` the highest IoU of any kept prediction with any gold box
        of an image (0 when either list is empty):

        - ``mAP@30`` / ``mAP@50``: images whose best IoU is >= 0.30 / 0.50, over all images
          (the protocol's reading; images without gold count as misses); NaN without images.
        - ``mAP@50:95``: the mean of that rate at IoU 0.50, 0.55, ..., 0.95 (inferred).
        - ``COCO-AP@30`` / ``COCO-AP@50`` / ``COCO-AP@50:95``: pycocotools' AP; NaN when the
          images hold no gold box (COCO's -1).
        - ``hit@30`` / ``hit@50``: the hit rate over images with gold only; NaN without them.
        - ``ACC50``: images with gold whose top-ranked prediction has IoU >= 0.50, over
          images with gold.
        - ``TP30``: gold boxes matched one-to-one at IoU 0.30, over gold boxes.
        - ``FP30``: kept predictions left unmatched at IoU 0.30, over kept predictions
          (NaN when nothing was predicted).
        - ``FNR``: images with gold and no prediction at all, over images with gold.

        Returns:
            The keys of :data:`LOCALIZATION_METRIC_KEYS`, as fractions (NaN if undefined).

        Example:
            >>> evaluation = prepare_localization(
            ...     [{"boxes": [[0, 0, 10, 10]]}, {"boxes": []}],
            ...     [{"boxes": [[0, 0, 10, 10]]}, {"boxes": [[0, 0, 10, 10]]}])
            >>> evaluation.aggregate()["hit@30"], evaluation.aggregate([0, 0])["hit@30"]
            (0.5, 1.0)
        """
        weights = self._weights(indices)
        if weights is None:
            weights = np.ones(self.n_items, dtype=np.int64)
        coco: dict[str, float] = {}
        if coco_ap:
            precision = self.precision_at_recall_points(indices)
            if precision is None:
                coco = dict.fromkeys(COCO_AP_KEYS, float("nan"))
            else:
                coco = {
                    "COCO-AP@30": float(np.mean(precision[_ROW_30])),
                    "COCO-AP@50": float(np.mean(precision[_ROW_50])),
                    "COCO-AP@50:95": float(np.mean(precision[_ROW_50:].ravel())),
                }
        with_gold = weights * self._has_gold
        n_with_gold = with_gold.sum()
        n_images = weights.sum()
        kept = int(weights @ self._kept_counts)
        # Images without gold have a NaN best IoU, which reaches no threshold: never a hit.
        hits = weights @ (self._best_iou[None, :] >= _PROTOCOL_THRESHOLDS[:, None]).T
        return {
            "mAP@30": _ratio(hits[0], n_images),
            "mAP@50": _ratio(hits[1], n_images),
            "mAP@50:95": _ratio(hits[1:].mean(), n_images),
            **coco,
            "hit@30": _ratio(hits[0], n_with_gold),
            "hit@50": _ratio(hits[1], n_with_gold),
            "ACC50": _ratio(with_gold @ (self._first_iou >= 0.5), n_with_gold),
            "TP30": _ratio(weights @ self._matched_gold_30, weights @ self._gold_counts),
            "FP30": _ratio(kept - weights @ self._matched_det_30, kept),
            "FNR": _ratio(weights @ self._no_prediction, n_with_gold),
        }

    def aggregate_resamples(
        self, indices: np.ndarray, *, coco_ap: bool = True, positions: np.ndarray | None = None
    ) -> dict[str, np.ndarray]:
        """:meth:`aggregate` of every row of ``indices`` at once (the bootstrap's fast path).

        Each entry equals ``aggregate(indices[row])[key]`` exactly: the rates are integer
        counts divided as in :meth:`aggregate`, and COCO AP is rebuilt from the matches found
        once in :func:`prepare_localization` (see :meth:`_resampled_precision`), never by
        matching again.

        Args:
            indices: ``(n_resamples, n_images)`` image positions, one resample per row.
            coco_ap: also the :data:`COCO_AP_KEYS` (their rebuild is most of the cost);
                False leaves them out of the result.
            positions: a group of images (sorted, distinct positions); ``indices`` are then
                places in it, and the result is that of ``positions[indices]``. Without
                COCO AP the draws are counted over the group alone (a breakdown group's
                share of the work, not the whole set's).

        Returns:
            ``{key: (n_resamples,) array}`` for the keys of :data:`LOCALIZATION_METRIC_KEYS`
            (without :data:`COCO_AP_KEYS` when ``coco_ap`` is False).

        Example:
            >>> evaluation = prepare_localization(
            ...     [{"boxes": [[0, 0, 10, 10]]}, {"boxes": []}],
            ...     [{"boxes": [[0, 0, 10, 10]]}, {"boxes": [[0, 0, 10, 10]]}])
            >>> evaluation.aggregate_resamples(np.array([[0, 1], [0, 0]]))["hit@30"].tolist()
            [0.5, 1.0]
            >>> "COCO-AP@50" in evaluation.aggregate_resamples(np.array([[0, 1]]), coco_ap=False)
            False
            >>> evaluation.aggregate_resamples(
            ...     np.array([[0, 0]]), coco_ap=False, positions=np.array([1]))["hit@30"].tolist()
            [0.0]
        """
        counts = self._per_image_counts()
        if positions is not None:
            group = self._group_positions(positions)
            if coco_ap:
                indices = group[self._local_rows(indices, len(group))]
            else:
                # Draw counts over the group's images only: the sums below add integers,
                # exact in any order, so each result is the same as over every image.
                weights = _draw_counts(self._local_rows(indices, len(group)), len(group))
                counts = counts[group]
        if coco_ap:
            weights = self._resample_weights(indices)
        elif positions is None:
            # Only the columns of images drawn at all (a breakdown group draws few of the
            # whole set's): the sums below add integers, exact in any order, so each result
            # is the same as with every column.
            weights, drawn = self._drawn_weights(indices)
            counts = counts[drawn]
        return self._scores_of_weights(weights, counts, coco_ap=coco_ap)

    def aggregate_counts(
        self, counts: np.ndarray, *, coco_ap: bool = True, positions: np.ndarray | None = None
    ) -> dict[str, np.ndarray]:
        """:meth:`aggregate` of resamples given as how often each image is drawn.

        The scores depend only on these counts (``order_free``), so a resample of whole
        cases, whose number of images varies, is scored in the same call as any other: each
        entry equals ``aggregate`` of the row's images (each repeated as often as drawn).

        Args:
            counts: ``(n_resamples, n_images)`` non-negative integers, one resample per row.
            coco_ap: also the :data:`COCO_AP_KEYS`.
            positions: a group of images (sorted, distinct positions); ``counts`` then has
                one column per image of the group (a breakdown group's share of the work
                without COCO AP).

        Returns:
            ``{key: (n_resamples,) array}``, as :meth:`aggregate_resamples`.

        Example:
            >>> evaluation = prepare_localization(
            ...     [{"boxes": [[0, 0, 10, 10]]}, {"boxes": []}],
            ...     [{"boxes": [[0, 0, 10, 10]]}, {"boxes": [[0, 0, 10, 10]]}])
            >>> evaluation.aggregate_counts(np.array([[1, 1], [3, 0], [1, 2]]))["hit@30"].tolist()
            [0.5, 1.0, 0.3333333333333333]
        """
        group = None if positions is None else self._group_positions(positions)
        n_columns = self.n_items if group is None else len(group)
        weights = np.asarray(counts)
        if (
            weights.ndim != 2
            or weights.shape[1] != n_columns
            or (weights.size and (weights.dtype.kind not in "iu" or weights.min() < 0))
        ):
            raise NovaInputError(
                f"counts must be a 2-D array of non-negative integers, {n_columns} columns "
                "(one per image), one resample per row",
                field="counts",
            )
        weights = weights.astype(np.int64, copy=False)
        per_image = self._per_image_counts()
        if group is not None:
            if coco_ap:  # COCO's ranking reads every image's column
                whole = np.zeros((len(weights), self.n_items), dtype=np.int64)
                whole[:, group] = weights
                weights = whole
            else:  # integer sums over the group's images alone: exact in any order
                per_image = per_image[group]
        return self._scores_of_weights(weights, per_image, coco_ap=coco_ap)

    def aggregate_cluster_counts(
        self,
        counts: np.ndarray,
        codes: np.ndarray,
        *,
        coco_ap: bool = True,
        positions: np.ndarray | None = None,
    ) -> dict[str, np.ndarray]:
        """:meth:`aggregate_counts` of resamples given as how often each cluster (case) is
        drawn, every image of a cluster drawn as often as its cluster.

        Without COCO AP every score is a ratio of sums of per-image integers, exact in any
        order: they are summed per cluster once and the resamples take one product of the
        clusters' draw counts, never spelt out per image. COCO AP ranks images, so with it
        the counts are spelt out per image. Either way each entry equals
        ``aggregate_counts(counts[:, codes], ...)`` exactly.

        Args:
            counts: ``(n_resamples, n_clusters)`` non-negative integers, one resample per row.
            codes: each image's cluster (``0 .. n_clusters - 1``), one per image of the
                evaluation, or of ``positions`` when given.
            coco_ap: also the :data:`COCO_AP_KEYS`.
            positions: a group of images (sorted, distinct positions), as in
                :meth:`aggregate_counts`.

        Returns:
            ``{key: (n_resamples,) array}``, as :meth:`aggregate_counts`.

        Example:
            Two cases: the first of two images (one found), the second of one (missed).

            >>> evaluation = prepare_localization(
            ...     [{"boxes": [[0, 0, 10, 10]]}, {"boxes": []}, {"boxes": []}],
            ...     [{"boxes": [[0, 0, 10, 10]]}] * 3)
            >>> evaluation.aggregate_cluster_counts(
            ...     np.array([[1, 1], [2, 0]]), np.array([0, 0, 1]), coco_ap=False
            ... )["hit@30"].tolist()  # 1 of 3 images, 2 of 4
            [0.3333333333333333, 0.5]
        """
        group = None if positions is None else self._group_positions(positions)
        n_columns = self.n_items if group is None else len(group)
        weights, labels = checked_cluster_counts(counts, codes, n_columns, item="image")
        if coco_ap:
            per_image = np.take(weights, labels, axis=1)
            return self.aggregate_counts(per_image, coco_ap=True, positions=group)
        per_image_counts = self._per_image_counts()
        if group is not None:
            per_image_counts = per_image_counts[group]
        # Integers summed per cluster: exact, so the same sums as over the images.
        per_cluster = np.zeros((weights.shape[1], per_image_counts.shape[1]))
        for column in range(per_image_counts.shape[1]):
            per_cluster[:, column] = np.bincount(
                labels, weights=per_image_counts[:, column], minlength=weights.shape[1]
            )
        return self._scores_of_weights(
            weights.astype(np.int64, copy=False), per_cluster, coco_ap=False
        )

    def _scores_of_weights(
        self, weights: np.ndarray, counts: np.ndarray, *, coco_ap: bool
    ) -> dict[str, np.ndarray]:
        """The scores of resamples drawing the images of ``counts``' rows ``weights`` times
        (every image's columns when ``coco_ap``, whose rebuild reads them all)."""
        # Every count below is a sum over drawn images of a per-image integer: one product,
        # exact in any order. In float32 when no partial sum can reach 2**24 (counts and
        # weights are non-negative, so none exceeds the largest row total times the largest
        # count): exact there too, and half the work of float64.
        largest = int(weights.sum(axis=1).max(initial=0)) * int(counts.max(initial=0))
        if largest < 1 << 24:
            sums = (weights.astype(np.float32) @ counts.astype(np.float32)).astype(np.float64)
        else:
            sums = weights.astype(np.float64) @ counts
        n_images, n_with_gold, kept, acc_50, matched_gold, gold, matched_det, no_prediction = (
            sums[:, column] for column in range(8)
        )
        hits = sums[:, 8:]
        coco: dict[str, np.ndarray] = {}
        if coco_ap:
            precision = self._resampled_precision(weights)
            coco = {
                "COCO-AP@30": precision[:, _ROW_30].mean(axis=1),
                "COCO-AP@50": precision[:, _ROW_50].mean(axis=1),
                "COCO-AP@50:95": precision[:, _ROW_50:].reshape(len(weights), -1).mean(axis=1),
            }
        return {
            "mAP@30": _ratios(hits[:, 0], n_images),
            "mAP@50": _ratios(hits[:, 1], n_images),
            "mAP@50:95": _ratios(hits[:, 1:].mean(axis=1), n_images),
            **coco,
            "hit@30": _ratios(hits[:, 0], n_with_gold),
            "hit@50": _ratios(hits[:, 1], n_with_gold),
            "ACC50": _ratios(acc_50, n_with_gold),
            "TP30": _ratios(matched_gold, gold),
            "FP30": _ratios(kept - matched_det, kept),
            "FNR": _ratios(no_prediction, n_with_gold),
        }

    def _group_positions(self, positions: np.ndarray) -> np.ndarray:
        """``positions`` checked: sorted, distinct image positions of this evaluation."""
        group = np.asarray(positions)
        if (
            group.ndim != 1
            or (group.size and group.dtype.kind not in "iu")
            or (group.size and (group[0] < 0 or group[-1] >= self.n_items))
            or np.any(np.diff(group) <= 0)
        ):
            raise NovaInputError(
                f"positions must be sorted, distinct image positions in [0, {self.n_items})",
                field="positions",
            )
        return group.astype(np.int64, copy=False)

    @staticmethod
    def _local_rows(indices: np.ndarray, n_places: int) -> np.ndarray:
        """``indices`` checked as rows of places in a group of ``n_places`` images."""
        rows = np.asarray(indices)
        if rows.ndim != 2 or (rows.size and rows.dtype.kind not in "iu"):
            raise NovaInputError(
                "indices must be a 2-D array of integer places in the group, one resample per row",
                field="indices",
            )
        if rows.size and (rows.min() < 0 or rows.max() >= n_places):
            raise NovaInputError(
                f"indices must lie in [0, {n_places}) (places in the group), got values from "
                f"{rows.min()} to {rows.max()}",
                field="indices",
            )
        return rows.astype(np.int64, copy=False)

    def _per_image_counts(self) -> np.ndarray:
        """``(n_images, 8 + 11)`` per-image integers whose resampled sums make the rates.

        Columns: image, has gold, kept predictions, first prediction hits at 0.50, gold
        matched at 0.30, gold boxes, predictions matched at 0.30, no prediction, then one
        hit column per protocol threshold. Integers in float64, so sums are exact.
        """
        if self._per_image_cache is None:
            columns = [
                np.ones(self.n_items),
                self._has_gold,
                self._kept_counts,
                self._has_gold & (self._first_iou >= 0.5),
                self._matched_gold_30,
                self._gold_counts,
                self._matched_det_30,
                self._no_prediction,
                *(self._best_iou >= threshold for threshold in _PROTOCOL_THRESHOLDS),
            ]
            self._per_image_cache = np.column_stack(columns).astype(np.float64)
        return self._per_image_cache

    def _resample_weights(self, indices: np.ndarray) -> np.ndarray:
        """``(n_resamples, n_items)`` times each image is drawn, from rows of positions."""
        weights, _ = self._drawn_weights(indices, drawn_only=False)
        return weights

    def _drawn_weights(
        self, indices: np.ndarray, *, drawn_only: bool = True
    ) -> tuple[np.ndarray, np.ndarray]:
        """Times each image is drawn per row, and the positions of the columns.

        ``drawn_only``: only the columns of the images some row draws, when rows are short
        enough for that to pay (fewer draws per row than half the images); otherwise all.
        """
        rows = np.asarray(indices)
        if rows.ndim != 2 or (rows.size and rows.dtype.kind not in "iu"):
            raise NovaInputError(
                "indices must be a 2-D array of integer image positions, one resample per row",
                field="indices",
            )
        if rows.size and (rows.min() < 0 or rows.max() >= self.n_items):
            raise NovaInputError(
                f"indices must lie in [0, {self.n_items}), got values from "
                f"{rows.min()} to {rows.max()}",
                field="indices",
            )
        rows = rows.astype(np.int64, copy=False)
        n_columns = self.n_items
        drawn = np.arange(self.n_items)
        if drawn_only and 2 * rows.shape[1] < self.n_items:
            present = np.zeros(self.n_items, dtype=bool)
            present[rows.ravel()] = True
            drawn = np.flatnonzero(present)
            column_of = np.cumsum(present) - 1  # position -> its column among the drawn
            rows, n_columns = column_of[rows], len(drawn)
        return _draw_counts(rows, n_columns), drawn

    def _match_tables(self) -> list[_MatchTable]:
        """Per IoU threshold, where the true positives sit among the blocks of detections.

        Also sets the union of matched blocks (``_union_blocks``) and its matches per block
        (``_union_matches``: the most any threshold has there). Computed once and kept: the
        bootstrap reads them for every chunk of resamples.
        """
        if self._match_table_cache is not None:
            return self._match_table_cache
        n_blocks = len(self._block_start)
        lengths = self._block_length
        # matches[t, b]: matches of threshold t in block b
        # int32: a block's matches never exceed max_detections (a quarter of the memory of
        # int64 at 100,000 images x 10 boxes x 11 thresholds).
        # Blocks of one detection each (also with no detection: no block).
        if n_blocks == self._sorted_matched.shape[1]:
            matches = self._sorted_matched.astype(np.int32)
        else:
            matches = np.add.reduceat(
                self._sorted_matched, self._block_start, axis=1, dtype=np.int32
            )
        union = np.flatnonzero(matches.any(axis=0))
        union_matches = matches[:, union].max(axis=0, initial=0)
        self._union_blocks = union
        self._union_matches = union_matches.astype(np.int32)
        tables = []
        for row, matched in enumerate(self._sorted_matched):
            in_union = matches[row, union]
            full = in_union == lengths[union]
            # A run goes on while the next block is full too and comes right after this one.
            goes_on = np.zeros(len(union), dtype=bool)
            goes_on[:-1] = full[:-1] & full[1:] & (np.diff(union) == 1)
            run_union = np.flatnonzero(full & ~goes_on)
            differs = in_union != union_matches
            delta_union = np.flatnonzero(differs)
            # Differences at or before each union position, + 1 (0: none yet).
            differences_through = np.cumsum(differs)
            # The matches of partly matched blocks, in order, with their place in the block.
            partial_union = np.flatnonzero(~full & (in_union > 0))
            block = union[partial_union]
            detections = np.repeat(self._block_start[block], lengths[block])
            place = np.arange(len(detections)) - np.repeat(_offsets(lengths[block]), lengths[block])
            is_match = matched[detections + place]
            match_union = np.repeat(partial_union, lengths[block])[is_match]
            # Matches earlier in the same block: a running count, restarted at each block.
            before = np.arange(len(match_union)) - np.searchsorted(match_union, match_union)
            match_block = union[match_union]
            tables.append(
                _MatchTable(
                    key=np.packbits(matched).tobytes(),
                    run_block=union[run_union],
                    run_union=run_union,
                    run_delta=differences_through[run_union],
                    delta_union=delta_union,
                    delta_value=(in_union - union_matches)[delta_union].astype(np.int32),
                    partial_block=match_block,
                    partial_union=match_union,
                    partial_delta=differences_through[match_union],
                    partial_before=before,
                    partial_place=place[is_match],
                    partial_per_block=matches[row, match_block],
                    partial_length=lengths[match_block],
                )
            )
        self._match_table_cache = tables
        return tables

    def _resampled_precision(self, weights: np.ndarray) -> np.ndarray:
        """:meth:`precision_at_recall_points` of every resample, ``(n_resamples, T, 101)``.

        A resample repeats each block of equal-score detections of an image ``w`` times in a
        row (``w``: times the image was drawn). Only true positives matter: the sampled
        envelope at recall ``r`` is the best precision ``t / rank_t`` over the true positives
        ``t`` whose recall ``t / n_gold`` reaches ``r``. Their counts and ranks are running
        sums of per-block counts, so no resample is materialised detection by detection.
        Resamples without gold box get NaN (the per-resample path's None).
        """
        n_rows = len(weights)
        out = np.zeros((n_rows, len(self._thresholds), len(RECALL_POINTS)))
        n_blocks = len(self._block_start)
        if n_blocks:
            # Rows at a time, so that the (rows, blocks) arrays stay in cache. (Threads do
            # not pay here: on 2 cores, two chunks at once ran slower than one after the
            # other.)
            step = max(1, _CHUNK_ELEMENTS // n_blocks)
            for start in range(0, n_rows, step):
                self._precision_of_rows(weights[start : start + step], out[start : start + step])
        out[(weights @ self._gold_counts) == 0] = np.nan
        return out

    def _precision_of_rows(self, weights: np.ndarray, out: np.ndarray) -> None:
        """Fill ``out`` (rows, T, 101) for the resamples of ``weights`` (see the caller).

        Per threshold, the entries read are the run ends and every copy of every partial
        match, in global order: along them the true-positive count never falls, so the
        entries before the first reaching a recall point are those reaching fewer points
        (counted, not searched), and the envelope there is a suffix maximum of the entries'
        precisions. A block not drawn gives entries that repeat the count before it with a
        rank at least as large (a precision never above an earlier entry's at that count):
        they change nothing.
        """
        tables = self._match_tables()
        n_rows = len(weights)
        gold = np.maximum(weights @ self._gold_counts, 1).astype(np.float64)[:, None]
        # The recall points depend on the gold count alone: found once for every threshold.
        first = _first_true_positive_reaching(gold, int(gold.max()))  # (rows, 101)
        reached = _points_reached(first)  # (rows, counts): points reached by each count
        # int32 halves the memory traffic when no count can reach 2**31.
        # (A resample of whole cases may hold more images than the set: its own count.)
        most_drawn = max(self.n_items, int(weights.sum(axis=1).max(initial=0)))
        small = int(self._kept_counts.max(initial=0)) * most_drawn < 2**31
        count = np.int32 if small else np.int64
        copies = np.take(weights.astype(count), self._block_image, axis=1)  # (rows, blocks)
        ranks_through = np.cumsum(copies * self._block_length.astype(count), axis=1, dtype=count)
        rank_limits = ranks_through + np.spacing(1)  # COCO's tp / (tp + fp + eps), fp + tp = rank
        union_copies = np.take(copies, self._union_blocks, axis=1)
        union_true = (
            union_copies
            if int(self._union_matches.max(initial=1)) == 1
            else union_copies * self._union_matches
        )
        union_through = np.cumsum(union_true, axis=1, dtype=count)
        row_offsets = np.arange(n_rows, dtype=np.int64)[:, None]
        done: dict[bytes, int] = {}
        for row, table in enumerate(tables):
            if table.is_empty:
                continue
            if table.key in done:  # the same matches as an earlier threshold
                out[:, row] = out[:, done[table.key]]
                continue
            done[table.key] = row
            # difference_through[:, 1 + i]: this threshold's running difference from the union
            # through its i-th difference (column 0: none yet).
            counts = np.take(union_through, table.run_union, axis=1)
            difference_through = np.zeros((n_rows, len(table.delta_union) + 1), dtype=count)
            if len(table.delta_union):
                changed = np.take(union_copies, table.delta_union, axis=1) * table.delta_value
                np.cumsum(changed, axis=1, out=difference_through[:, 1:])
                counts += np.take(difference_through, table.run_delta, axis=1)
            limits = np.take(rank_limits, table.run_block, axis=1)
            if len(table.partial_block):
                counts, limits = self._with_partial_copies(
                    table, counts, limits, copies, union_through, difference_through, ranks_through
                )
            precision = counts / limits
            n_entries = precision.shape[1]
            # suffix[:, i]: the best precision over the last i entries (0 for none).
            suffix = np.zeros((n_rows, n_entries + 1))
            np.maximum.accumulate(precision[:, ::-1], axis=1, out=suffix[:, 1:])
            before = _entries_before_points(counts, reached)
            entries_after = row_offsets * (n_entries + 1) + n_entries - before
            out[:, row] = np.take(suffix.ravel(), entries_after)

    @staticmethod
    def _with_partial_copies(
        table: _MatchTable,
        counts: np.ndarray,
        limits: np.ndarray,
        copies: np.ndarray,
        union_through: np.ndarray,
        difference_through: np.ndarray,
        ranks_through: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The run-end entries with every copy of every partial match added, in global order.

        Copy ``j`` of a match adds ``j`` times its block's matches and length to the counts
        ahead of the block's first copy. Copies beyond those drawn repeat the block's end:
        their offsets run past it, since a drawn copy's never do (a match is at most the
        block's last match, at most at its last place).
        """
        drawn = np.take(copies, table.partial_block, axis=1)
        true_end = np.take(union_through, table.partial_union, axis=1) + np.take(
            difference_through, table.partial_delta, axis=1
        )
        rank_end = np.take(ranks_through, table.partial_block, axis=1)
        true_before = true_end - drawn * table.partial_per_block
        rank_before = rank_end - drawn * table.partial_length
        most = max(int(drawn.max(initial=0)), 1)
        # Copy j of a match sits at these offsets from the block's start; a copy not drawn
        # runs past the block's end, so the minimum gives the end there (as said above).
        copy = np.arange(most)[:, None]
        true_step = copy * table.partial_per_block + (table.partial_before + 1)
        rank_step = copy * table.partial_length + (table.partial_place + 1)
        true_at = np.minimum(true_before[:, None, :] + true_step, true_end[:, None, :])
        rank_at = np.minimum(rank_before[:, None, :] + rank_step, rank_end[:, None, :])
        count_pieces = [counts, true_at.reshape(len(counts), -1)]
        limit_pieces = [limits, rank_at.reshape(len(counts), -1) + np.spacing(1)]
        order = table.order(most)
        return (
            np.take(np.concatenate(count_pieces, axis=1), order, axis=1),
            np.take(np.concatenate(limit_pieces, axis=1), order, axis=1),
        )


def _points_reached(first: np.ndarray) -> np.ndarray:
    """Per resample, how many recall points ``t`` true positives reach, for every ``t``.

    ``first`` is :func:`_first_true_positive_reaching`'s table: ``reached[r, t]`` counts the
    points whose first reaching count is at most ``t`` (``t`` from 0 to ``first.max()``).

    Example:
        >>> first = _first_true_positive_reaching(np.array([[4.0]]), 4)
        >>> _points_reached(first)[0].tolist()  # 0 to 4 true positives of 4 gold boxes
        [0, 26, 51, 76, 101]
    """
    n_rows = len(first)
    span = int(first.max(initial=0)) + 1
    by_count = np.bincount(
        (first + np.arange(n_rows)[:, None] * span).ravel(), minlength=n_rows * span
    )
    return np.cumsum(by_count.reshape(n_rows, span), axis=1)


def _entries_before_points(counts: np.ndarray, reached: np.ndarray) -> np.ndarray:
    """Per resample and recall point, how many entries come before the first reaching it.

    ``counts`` are the true-positive counts of a resample's entries (never falling along a
    row, never above its gold count) and ``reached`` is :func:`_points_reached`: each entry
    reaches ``reached[r, count]`` points, so the entries not reaching point ``p`` are those
    reaching at most ``p`` points, a running count over points.

    Example:
        >>> first = _first_true_positive_reaching(np.array([[4.0]]), 4)
        >>> before = _entries_before_points(np.array([[0, 1, 1, 3]]), _points_reached(first))
        >>> before[0, [0, 25, 26, 51, 100]].tolist()
        [1, 1, 3, 3, 4]
    """
    n_rows, span = reached.shape
    n_points = len(RECALL_POINTS)
    rows = np.arange(n_rows)[:, None]
    per_entry = np.take(reached.ravel(), counts + rows * span)
    per_point = np.bincount(
        (per_entry + rows * (n_points + 1)).ravel(), minlength=n_rows * (n_points + 1)
    )
    return np.cumsum(per_point.reshape(n_rows, n_points + 1), axis=1)[:, :n_points]


def _check_max_detections(max_detections: Any) -> int:
    return checks.positive_int(max_detections, field="max_detections")


def prepare_localization(
    predictions: Any,
    references: Any,
    *,
    box_format: str = "xywh",
    max_detections: int = 100,
    reference_box_format: str = "xywh",
) -> LocalizationEvaluation:
    """Validate, rank and match predictions once; aggregate later (see :func:`score_localization`).

    Args:
        predictions: one dict per image, ``{"boxes": [[...], ...], "scores": [...]}``;
            ``scores`` is optional.
        references: one mapping per image with a ``"boxes"`` key (dataset rows work;
            other keys are ignored; ``None`` boxes mean no gold box).
        box_format: format of the predicted boxes, ``"xywh"`` or ``"xyxy"``.
        max_detections: predictions kept per image, highest scores first.
        reference_box_format: format of the reference boxes; the NOVA dataset stores
            ``"xywh"``.

    Returns:
        A :class:`LocalizationEvaluation` (``.n_items``, ``.aggregate(indices)``,
        ``.per_image_best_iou``, ``.counts()``).

    Raises:
        NovaInputError: malformed input, naming the example index and the field.

    Example:
        >>> evaluation = prepare_localization([{"boxes": [[0, 0, 10, 10]]}],
        ...                                   [{"boxes": [[0, 0, 10, 10]]}])
        >>> evaluation.n_items, evaluation.aggregate()["mAP@50:95"]
        (1, 1.0)
    """
    max_detections = _check_max_detections(max_detections)
    inputs = LocalizationInputs(predictions, references, box_format, reference_box_format)
    return _evaluate_inputs(inputs, max_detections)


def prepare_localization_from_arrays(
    det_boxes: np.ndarray,
    det_counts: np.ndarray,
    gold_boxes: np.ndarray,
    gold_counts: np.ndarray,
    *,
    det_scores: np.ndarray | None = None,
    box_format: str = "xywh",
    max_detections: int = 100,
    reference_box_format: str = "xywh",
) -> LocalizationEvaluation:
    """The columnar form of :func:`prepare_localization`, for callers that hold arrays.

    Boxes of all images are stacked in image order; ``*_counts[i]`` says how many belong to
    image ``i``. This is what the ``evaluate`` face feeds from its Arrow columns, so no Python
    object is made per box. Validation and every rule are those of ``prepare_localization``;
    errors name the example (image index) and the box.

    Args:
        det_boxes: ``(n_det, 4)`` predicted boxes.
        det_counts: predicted boxes per image, length ``n_images``.
        gold_boxes: ``(n_gold, 4)`` gold boxes.
        gold_counts: gold boxes per image, length ``n_images``.
        det_scores: ``(n_det,)`` scores; None means every score is 1.0 (given order).
        box_format: format of ``det_boxes``; ``reference_box_format`` of ``gold_boxes``.
        max_detections: detections scored per image.
        reference_box_format: format of ``gold_boxes``.

    Returns:
        A :class:`LocalizationEvaluation`.

    Example:
        >>> evaluation = prepare_localization_from_arrays(
        ...     np.array([[0, 0, 10, 10], [50, 50, 5, 5]]), np.array([2]),
        ...     np.array([[0, 0, 10, 10]]), np.array([1]), det_scores=np.array([0.9, 0.1]))
        >>> evaluation.result()["TP30"], evaluation.result()["FP30"]
        (1.0, 0.5)
    """
    max_detections = _check_max_detections(max_detections)
    inputs = LocalizationInputs.from_arrays(
        det_boxes, det_counts, det_scores, gold_boxes, gold_counts, box_format, reference_box_format
    )
    return _evaluate_inputs(inputs, max_detections)


def _evaluate_inputs(inputs: LocalizationInputs, max_detections: int) -> LocalizationEvaluation:
    evaluation = LocalizationEvaluation(
        inputs, max_detections=max_detections, thresholds=_THRESHOLDS
    )
    if evaluation.n_items == 0:
        warn_at_caller("no image to score: every key is undefined (NaN)", LocalizationWarning)
    elif evaluation.n_gold_boxes == 0:
        warn_at_caller(
            "no reference has a gold box: mAP@ keys are 0 (every image is a miss); COCO-AP, "
            "hit@, ACC50, TP30 and FNR are undefined (NaN)",
            LocalizationWarning,
        )
    degenerate = (inputs.gold_boxes[:, 2] <= 0) | (inputs.gold_boxes[:, 3] <= 0)
    if degenerate.any():
        # Legal (pycocotools scores them the same way) but almost surely a data error.
        first = int(np.argmax(degenerate))
        image = int(np.searchsorted(np.cumsum(inputs.gold_counts), first, side="right"))
        position = first - int(inputs.gold_counts[:image].sum())
        warn_at_caller(
            f"{int(degenerate.sum())} reference boxes have zero width or height (first: example "
            f"{image}, references.boxes[{position}]); no prediction can match them (IoU 0), so "
            "they count as missed gold boxes",
            LocalizationWarning,
        )
    if evaluation.n_truncated_predictions:
        warn_at_caller(
            f"{evaluation.n_truncated_predictions} predicted boxes beyond max_detections="
            f"{max_detections} per image were not scored (see n_truncated_predictions)",
            LocalizationWarning,
        )
    return evaluation


def score_localization(
    predictions: Any,
    references: Any,
    *,
    box_format: str = "xywh",
    max_detections: int = 100,
    reference_box_format: str = "xywh",
) -> dict[str, Any]:
    """Score predicted boxes against the gold boxes of NOVA: the protocol's rates and COCO AP.

    Within an image, predictions are ranked by score with a stable sort (equal scores keep
    the given order) and only the first ``max_detections`` are scored everywhere below;
    the rest are counted in ``n_truncated_predictions``. Missing scores mean every score is
    1.0: predictions keep their given order within an image and images their order in the
    list, exactly what pycocotools does with equal scores. Only the COCO keys and ACC50
    depend on the ranking; the protocol's keys use no score.

    Keys (fractions in [0, 1]); "best IoU" is the highest IoU between any prediction and any
    gold box of an image, 0 when either list is empty:

    - ``mAP@30``, ``mAP@50`` (the NOVA protocol, as the co-authors' later harness computes
      it): share of ALL images whose best IoU is >= 0.30 / 0.50. An image without a gold
      box is never a hit.
    - ``mAP@50:95`` (inferred): the mean of that share at IoU 0.50, 0.55, ..., 0.95.
    - ``COCO-AP@30``, ``COCO-AP@50``, ``COCO-AP@50:95``: class-agnostic COCO AP, identical to
      pycocotools ``COCOeval`` with ``iouThrs`` [0.3], [0.5] and the default 0.50:0.05:0.95:
      greedy one-to-one matching per image in score order (best unmatched gold box at
      IoU >= t), one global stable sort by score, precision envelope sampled at 101 recall
      points, mean over recall points (and thresholds).
    - ``hit@30``, ``hit@50`` (ours, a diagnostic): share of images WITH gold boxes whose best
      IoU is >= 0.30 / 0.50; equal to ``mAP@30`` / ``mAP@50`` when every image has gold.
    - ``ACC50`` (ours): share of images with gold boxes whose first-ranked prediction (highest
      score, else first given) has IoU >= 0.5 with some gold box (grounding accuracy).
    - ``TP30`` (ours): share of gold boxes matched one-to-one at IoU >= 0.30 (box-level
      recall, COCO's greedy matching).
    - ``FP30`` (ours): share of scored predicted boxes not matched at IoU >= 0.30 (box-level
      false discovery rate).
    - ``FNR`` (ours): share of images with gold boxes for which the model gave no box at all.

    Counts: ``n_images``, ``n_images_with_gold``, ``n_gold_boxes``, ``n_predicted_boxes``
    (every given box), ``n_truncated_predictions``, ``n_true_positives_30``,
    ``n_false_positives_30``, ``n_false_negatives_30`` (boxes, one-to-one matching at IoU
    0.30); and ``per_image_best_iou`` (list, None for images without gold box, 0.0 for an
    image with gold but no prediction).

    Edge cases:

    - Images without gold boxes are misses in ``mAP@*`` (the protocol divides by all
      images), count their predictions as false positives in COCO AP and TP30/FP30, and are
      left out of the hit@, ACC50 and FNR denominators.
    - No gold box in the whole set: ``mAP@*`` are 0.0 (every image is a miss), COCO AP keys
      are NaN (COCO reports -1), hit@, ACC50, TP30 and FNR are NaN, and a
      :class:`LocalizationWarning` is issued.
    - No image at all: every key is NaN.
    - No prediction anywhere while gold exists: ``mAP@*`` and COCO AP are 0.0, FNR 1.0;
      FP30 is NaN (0/0).
    - Zero-size boxes are legal and have IoU 0 with everything.
    - As in COCO, precision is ``tp / (tp + fp + eps)``, so a perfect COCO AP is
      ``1 - 2.2e-16``: compare with a tolerance or round for display.
    - Any other undefined ratio is NaN, never a silent 0.

    Args:
        predictions: one dict per image, ``{"boxes": [[x, y, w, h], ...], "scores": [...]}``;
            ``scores`` optional (or None); no other keys are accepted (a typo such as
            ``"score"`` would otherwise silently change the ranking).
        references: one mapping per image with a ``"boxes"`` key (e.g. NOVA dataset rows);
            ``None`` boxes mean no gold box.
        box_format: format of the predicted boxes: ``"xywh"`` (default) or ``"xyxy"``.
        max_detections: predictions scored per image (COCO's ``maxDets``), highest first.
        reference_box_format: format of the reference boxes (NOVA stores ``"xywh"``).

    Returns:
        A dict with the scores, counts and ``per_image_best_iou`` described above.

    Raises:
        NovaInputError: mismatched lengths, a box that is not 4 finite numbers, a negative
            width/height, scores of the wrong length or not finite, an unknown key.

    Example:
        >>> predictions = [{"boxes": [[0, 0, 10, 10]], "scores": [0.9]},
        ...                {"boxes": [[5, 0, 10, 10]], "scores": [0.8]}]
        >>> references = [{"boxes": [[0, 0, 10, 10]]}, {"boxes": [[0, 0, 10, 10]]}]
        >>> result = score_localization(predictions, references)
        >>> result["mAP@30"], result["mAP@50"], result["ACC50"], result["FNR"]
        (1.0, 0.5, 0.5, 0.0)
        >>> round(result["COCO-AP@30"], 4), round(result["COCO-AP@50"], 4)
        (1.0, 0.505)
        >>> result["per_image_best_iou"]
        [1.0, 0.3333333333333333]
    """
    evaluation = prepare_localization(
        predictions,
        references,
        box_format=box_format,
        max_detections=max_detections,
        reference_box_format=reference_box_format,
    )
    return evaluation.result()


def coco_average_precision(
    predictions: Any,
    references: Any,
    *,
    iou_thresholds: Iterable[float] = tuple(COCO_IOU_THRESHOLDS),
    box_format: str = "xywh",
    max_detections: int = 100,
) -> float:
    """Class-agnostic COCO AP averaged over ``iou_thresholds`` only (NaN without gold boxes).

    The same computation as ``COCO-AP@50:95`` of :func:`score_localization` without the extra
    0.30 run and image-level rates: the like-for-like counterpart of one default
    ``COCOeval`` run, used by the benchmark script.

    Args:
        predictions: as for :func:`score_localization`.
        references: as for :func:`score_localization`.
        iou_thresholds: the IoU thresholds to average over (COCO's default 0.50:0.05:0.95).
        box_format: format of the predicted boxes.
        max_detections: predictions scored per image.

    Returns:
        The mean of the precision envelope over 101 recall points and the thresholds.

    Example:
        >>> box = [0, 0, 10, 10]
        >>> ap = coco_average_precision([{"boxes": [box]}], [{"boxes": [box]}])
        >>> round(ap, 12)  # COCO divides by tp + fp + eps: a perfect run is 1 - 2.2e-16
        1.0
    """
    max_detections = _check_max_detections(max_detections)
    thresholds = np.asarray(list(iou_thresholds), dtype=np.float64)
    in_range = np.all((thresholds > 0) & (thresholds <= 1))
    if thresholds.ndim != 1 or not len(thresholds) or not in_range:
        raise NovaInputError(
            f"iou_thresholds must be numbers in (0, 1], got {thresholds.tolist()}",
            field="iou_thresholds",
        )
    inputs = LocalizationInputs(predictions, references, box_format, "xywh")
    evaluation = LocalizationEvaluation(
        inputs, max_detections=max_detections, thresholds=thresholds
    )
    precision = evaluation.precision_at_recall_points()
    return float("nan") if precision is None else float(np.mean(precision.ravel()))
