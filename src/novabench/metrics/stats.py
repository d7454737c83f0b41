"""Bootstrap confidence intervals and paired model comparisons for every metric family.

Works on anything following the ``prepare_*`` protocol of ``novabench.metrics`` (see
:class:`SupportsAggregate`): ``n_items`` items (images or cases) and
``aggregate(indices)`` returning the scores recomputed on the items at ``indices``.

Resampling rules, identical for every family:

- A resample draws ``n_items`` item positions with replacement from
  ``numpy.random.default_rng(seed)``; the same seed gives the same resamples.
- The drawn positions are sorted before ``aggregate`` sees them: a resample keeps items in
  their original relative order (repeats adjacent), so rank-based scores such as COCO AP
  resolve score ties across images exactly as on the full set.
- Only scalar (real-number) keys are bootstrapped; lists and counts-as-lists are skipped.
- An evaluation may also offer ``aggregate_resamples(indices)`` (see
  :class:`SupportsResampledAggregate`): the scores of many resamples at once, from per-item
  sufficient statistics, equal to calling ``aggregate`` on each row. The bootstrap then uses
  it, a chunk of resamples at a time; the draws, and so the intervals, are the same.
- Clustered items (NOVA's images come in cases, up to 17 images of one lesion): given
  ``clusters`` (the cluster of each item, e.g. its case id), a resample draws clusters
  instead, as many as there are, with replacement from the same generator (one
  ``rng.integers(0, n_clusters, size=n_clusters)`` per resample, clusters numbered in the
  order they first appear among the items), and takes every item of each drawn cluster as
  often as the cluster is drawn, in item order. Items of one case are not independent, so
  resampling them one by one gives intervals that are too narrow. A resample then holds a
  varying number of items; each is scored as ``aggregate`` scores it. An evaluation
  offering ``aggregate_cluster_counts`` takes the draw counts per cluster and sums per
  cluster: sums of integers are exact, sums of floats (captioning's means) are taken in a
  fixed order, the same on every machine (:func:`cluster_resample_sums`), and equal
  ``aggregate``'s to float rounding (a few ulps), not to the bit. When every cluster holds
  one item the draws are those of the item bootstrap.
- A key whose full-set value is NaN gets ``(nan, nan)``. Resamples on which a key is
  undefined (NaN, e.g. a resample without any gold box) are left out of that key's
  interval and counted in a :class:`BootstrapWarning`.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterator, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from novabench import checks
from novabench._blas import one_blas_thread
from novabench.errors import NovaInputError, warn_at_caller
from novabench.progress import progress_bar

__all__ = [
    "BOOTSTRAP_UNITS",
    "BootstrapWarning",
    "SupportsAggregate",
    "SupportsResampledAggregate",
    "bootstrap_confidence_intervals",
    "cluster_codes",
    "checked_cluster_counts",
    "cluster_resample_sums",
    "paired_bootstrap",
]


#: What a report's bootstrap resamples (its ``bootstrap.unit``): whole cases (every image of
#: each drawn case) or single images. A report without the field resampled images.
BOOTSTRAP_UNITS: tuple[str, ...] = ("case", "image")


@runtime_checkable
class SupportsAggregate(Protocol):
    """What the bootstrap needs from a prepared evaluation (``prepare_*`` result)."""

    @property
    def n_items(self) -> int:
        """Number of items (images, captions or cases) the scores are computed over."""
        ...

    def aggregate(self, indices: np.ndarray | None = None) -> Mapping[str, Any]:
        """Scores on the items at ``indices`` (repeats allowed); all items when None."""
        ...


@runtime_checkable
class SupportsResampledAggregate(Protocol):
    """An evaluation that scores many resamples at once (optional, for speed)."""

    def aggregate_resamples(self, indices: np.ndarray) -> Mapping[str, np.ndarray]:
        """Scores of each row of ``indices`` (``(n_resamples, n_items)``, rows sorted unless
        the evaluation is ``order_free``).

        Returns ``{key: (n_resamples,) float array}`` whose entries equal
        ``aggregate(indices[row])[key]`` exactly.
        """
        ...


class BootstrapWarning(UserWarning):
    """Some resamples left a score undefined; its interval uses the other resamples."""


def _check_evaluation(evaluation: Any, name: str) -> int:
    if not isinstance(evaluation, SupportsAggregate):
        raise NovaInputError(
            f"{name} must have .n_items and .aggregate(indices) (use a prepare_* function), "
            f"got {type(evaluation).__name__}",
            field=name,
        )
    n_items = evaluation.n_items
    if isinstance(n_items, bool) or not isinstance(n_items, (int, np.integer)) or n_items < 1:
        raise NovaInputError(
            f"cannot bootstrap an evaluation over {n_items!r} items", field=f"{name}.n_items"
        )
    return int(n_items)


def _check_settings(n_resamples: Any, confidence: Any, seed: Any = 0) -> None:
    checks.positive_int(n_resamples, field="n_resamples")
    checks.seed(seed)
    checks.confidence_level(confidence)


def _scalar_scores(scores: Mapping[str, Any]) -> dict[str, float]:
    """The real-number entries of an aggregate() result, as floats (booleans and lists skipped)."""
    return {key: float(value) for key, value in scores.items() if checks.is_real_number(value)}


# Resamples scored per chunk: bounds the (chunk, n_items) index arrays of the vectorised path.
_CHUNK_ELEMENTS = 1 << 21


def _draw(rng: np.random.Generator, n_items: int, n_rows: int, *, sort: bool = True) -> np.ndarray:
    """``n_rows`` resamples, sorted: the stream of one ``rng.integers(0, n, size=n)`` per row.

    One call for all rows yields the same numbers as a call per row (the generator keeps
    its state between calls; a test pins this), at a fraction of the Python overhead.
    ``sort=False`` leaves each row in drawn order, for evaluations whose scores do not
    depend on it (:func:`_order_free`): the same multiset of items, the same scores.
    """
    rows = rng.integers(0, n_items, size=(n_rows, n_items))
    return _sorted_rows(rows, n_items) if sort else rows


# From this row length on, a radix sort of 16-bit copies beats numpy's sort of int64 rows.
_RADIX_SORT_MIN_ROW = 512


def _sorted_rows(rows: np.ndarray, n_items: int) -> np.ndarray:
    """``rows`` (positions below ``n_items``) with each row sorted, as ``np.sort`` gives.

    Integers have one sorted order whatever the algorithm, so the rows are sorted as the
    narrowest type that holds every position (exactly) and converted back: numpy sorts
    16-bit integers with a radix sort (``kind="stable"``), a third of the time of int64.
    """
    if n_items <= 1 << 16 and rows.shape[1] >= _RADIX_SORT_MIN_ROW:
        narrow = rows.astype(np.uint16)
        narrow.sort(axis=1, kind="stable")
    elif n_items <= 1 << 31:
        narrow = rows.astype(np.int32)
        narrow.sort(axis=1)
    else:
        rows.sort(axis=1)
        return rows
    return narrow.astype(rows.dtype)


class _DrawCache:
    """Recent single-chunk draws, kept for the next bootstrap of the same seed and size.

    A report bootstraps equally many items with the same seed many times (the headline,
    the three human reference comparisons, breakdown groups of equal size in every task),
    and a draw is a function of (seed, items, resamples) alone: it is taken once. Kept as
    read-only 16-bit copies (positions below 2**16 only), the least recently used dropped
    beyond ``budget_bytes``; every caller gets its own int64 array, as a fresh draw.
    """

    def __init__(self, budget_bytes: int) -> None:
        self._budget = budget_bytes
        self._entries: OrderedDict[tuple[int, int, int, bool], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def rows(self, seed: int, n_items: int, n_rows: int, *, sort: bool) -> np.ndarray:
        """What ``_draw(np.random.default_rng(seed), n_items, n_rows, sort=sort)`` gives."""
        key = (seed, n_items, n_rows, sort)
        with self._lock:
            kept = self._entries.get(key)
            if kept is None and sort:  # the same draw, unsorted, is half the work
                unsorted = self._entries.get((seed, n_items, n_rows, False))
                if unsorted is not None:
                    kept = self._keep(key, _sorted_rows(unsorted.astype(np.int64), n_items))
            if kept is None:
                drawn = _draw(np.random.default_rng(seed), n_items, n_rows, sort=sort)
                self._keep(key, drawn)
                return drawn
            self._entries.move_to_end(key)
            return kept.astype(np.int64)

    def forget(self) -> None:
        """Drop every kept draw (the next request of each draws afresh)."""
        with self._lock:
            self._entries.clear()

    def _keep(self, key: tuple[int, int, int, bool], rows: np.ndarray) -> np.ndarray:
        compact = rows.astype(np.uint16)
        compact.flags.writeable = False
        self._entries[key] = compact
        used = sum(entry.nbytes for entry in self._entries.values())
        while used > self._budget and len(self._entries) > 1:
            _, dropped = self._entries.popitem(last=False)
            used -= dropped.nbytes
        return compact


# 32 MiB: every draw of a NOVA-size report (about 12 million positions) stays.
_DRAWS = _DrawCache(32 << 20)


def _chunks_of_draws(
    seed: Any, n_items: int, n_resamples: int, chunk: int, *, sort: bool
) -> Iterator[np.ndarray]:
    """The resamples of ``seed``, a chunk of ``chunk`` rows at a time (the last one shorter).

    A draw that fits one chunk, of an integer seed and fewer than 2**16 items, comes
    through :data:`_DRAWS`; the numbers are the same either way.
    """
    if (
        n_resamples <= chunk
        and isinstance(seed, (int, np.integer))
        and not isinstance(seed, bool)
        and n_items <= 1 << 16
    ):
        yield _DRAWS.rows(int(seed), n_items, n_resamples, sort=sort)
        return
    rng = np.random.default_rng(seed)
    for start in range(0, n_resamples, chunk):
        yield _draw(rng, n_items, min(chunk, n_resamples - start), sort=sort)


def cluster_codes(
    clusters: Sequence[Hashable], n_items: int, field: str = "clusters"
) -> np.ndarray:
    """Each item's cluster as a number: clusters counted in the order they first appear.

    Args:
        clusters: the cluster (e.g. case id) of each item, in item order.
        n_items: how many items the evaluation has.
        field: the argument's name, for the error.

    Returns:
        ``(n_items,)`` int64 cluster numbers, 0 for the first item's cluster.

    Raises:
        NovaInputError: not one cluster per item.

    Example:
        >>> cluster_codes(["case0002", "case0002", "case0001", "case0002"], 4).tolist()
        [0, 0, 1, 0]
    """
    labels = list(clusters)
    if len(labels) != n_items:
        raise NovaInputError(
            f"{field} must give one cluster per item: {len(labels)} for {n_items} items",
            field=field,
        )
    numbers: dict[Hashable, int] = {}
    return np.fromiter(
        (numbers.setdefault(label, len(numbers)) for label in labels), dtype=np.int64, count=n_items
    )


def checked_cluster_counts(
    counts: Any, codes: Any, n_items: int, *, item: str, source: str | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``counts`` and ``codes`` as arrays, once checked to be draws of whole clusters.

    ``counts`` must be ``(n_resamples, n_clusters)`` non-negative integers and ``codes`` one
    non-negative integer per item, each below ``n_clusters``; else a :class:`NovaInputError`
    naming ``counts`` and what an ``item`` is (a pair, an image).

    Example:
        >>> times, labels = checked_cluster_counts([[1, 1]], [0, 1, 1], 3, item="image")
        >>> times.shape, labels.tolist()
        ((1, 2), [0, 1, 1])
        >>> checked_cluster_counts([[1]], [0, 1], 2, item="image")
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: field 'counts': counts must be a 2-D array of non-negative integers, one column per cluster and one resample per row, and codes one cluster number per image (2) below the number of columns
    """
    times, labels = np.asarray(counts), np.asarray(codes)
    if (
        times.ndim != 2
        or (times.size and (times.dtype.kind not in "iu" or times.min() < 0))
        or labels.shape != (n_items,)
        or (labels.size and (labels.dtype.kind not in "iu" or labels.min() < 0))
        or (labels.size and labels.max() >= times.shape[1])
    ):
        raise NovaInputError(
            "counts must be a 2-D array of non-negative integers, one column per cluster and "
            f"one resample per row, and codes one cluster number per {item} ({n_items}) below "
            "the number of columns",
            source=source,
            field="counts",
        )
    return times, labels


def cluster_resample_sums(values: np.ndarray, codes: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Each resample's sums of per-item floats, resamples given as draws of whole clusters.

    Every item of a cluster is taken as often as its cluster is drawn. The sums are taken
    in one fixed order, the same on every machine: each cluster's items added in item
    order (``np.bincount``), each cluster's total times its draw count (an elementwise
    product, rounded once), and each resample's products added by numpy's pairwise
    summation along the last, contiguous axis of one ``(k, n_resamples, n_clusters)``
    array (a fixed algorithm in plain C, its blocks set by the number of clusters alone; a
    test holds it to a plain-Python copy, bit for bit). No BLAS (``@``, ``dot``,
    ``einsum``): a product of float matrices is summed in an order OpenBLAS picks by CPU
    and thread count, so its last bits would differ between machines. The result equals
    the sum of the items spelt out per resample to float rounding (a few ulps), not to the
    bit.

    Args:
        values: ``(k, n_items)`` floats, one row per key.
        codes: ``(n_items,)`` each item's cluster, ``0 .. n_clusters - 1``.
        counts: ``(n_resamples, n_clusters)`` times each cluster is drawn.

    Returns:
        ``(k, n_resamples)`` sums.

    Example:
        Items 0 and 1 in cluster 0, item 2 in cluster 1; the second resample draws
        cluster 0 twice.

        >>> cluster_resample_sums(
        ...     np.array([[0.5, 0.25, 2.0]]), np.array([0, 0, 1]), np.array([[1, 1], [2, 0]])
        ... ).tolist()
        [[2.75, 1.5]]
    """
    n_clusters = counts.shape[1]
    totals = np.stack(
        [np.bincount(codes, weights=row, minlength=n_clusters) for row in values]
    )  # (k, n_clusters)
    weights = np.ascontiguousarray(counts, dtype=np.float64)  # (n_resamples, n_clusters)
    products = totals[:, None, :] * weights[None, :, :]  # (k, n_resamples, n_clusters)
    summed: np.ndarray = np.add.reduce(products, axis=2)
    return summed


def _cluster_draws(
    seed: Any, codes: np.ndarray, n_resamples: int, chunk: int, *, per_item: bool = True
) -> Iterator[np.ndarray]:
    """Per chunk of resamples, ``(rows, n_items)`` times each item is drawn: the times its
    cluster is drawn (the stream of :func:`_chunks_of_draws` over clusters, unsorted).
    ``per_item=False``: ``(rows, n_clusters)``, the times each cluster is drawn."""
    n_clusters = int(codes.max()) + 1
    for drawn in _chunks_of_draws(seed, n_clusters, n_resamples, chunk, sort=False):
        counts = _draw_counts(drawn, n_clusters)
        # np.take keeps rows contiguous (C order); indexing [:, codes] gives a Fortran-
        # ordered array, on which every later per-row step (sums, repeats, products,
        # gathers along the images) runs several times slower.
        yield np.take(counts, codes, axis=1) if per_item else counts


def _draw_counts(rows: np.ndarray, n_columns: int) -> np.ndarray:
    """``(len(rows), n_columns)`` times each column is drawn in each row."""
    flat = rows + (np.arange(len(rows), dtype=np.int64) * n_columns)[:, None]
    counts = np.bincount(flat.ravel(), minlength=len(rows) * n_columns)
    return counts.reshape(len(rows), n_columns)


def _rows_by_length(counts: np.ndarray) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The resamples of ``counts`` (times each item is drawn, one row per resample) as sorted
    rows of item positions, in blocks of equal length: ``(which rows, (k, length) positions)``.

    A cluster resample holds as many items as its drawn clusters hold, so rows differ in
    length; a block of equal-length rows is one rectangular array, as
    ``aggregate_resamples`` takes them.
    """
    n_rows, n_items = counts.shape
    lengths = counts.sum(axis=1)
    order = np.argsort(lengths, kind="stable")
    ordered = lengths[order]
    positions = np.repeat(np.tile(np.arange(n_items), n_rows), counts[order].ravel())
    bounds = np.flatnonzero(np.diff(ordered)) + 1
    starts = np.concatenate(([0], bounds))
    stops = np.concatenate((bounds, [n_rows]))
    offset = 0
    for start, stop in zip(starts.tolist(), stops.tolist()):
        length = int(ordered[start])
        size = (stop - start) * length
        yield order[start:stop], positions[offset : offset + size].reshape(stop - start, length)
        offset += size


def _order_free(evaluation: Any) -> bool:
    """Whether an evaluation says its scores depend only on how often each item is drawn.

    Such an evaluation (``order_free = True``, e.g. localisation, which counts draws per
    image) is scored the same on a resample in any order, so its rows need no sorting.
    """
    return getattr(evaluation, "order_free", False) is True


def _counted(evaluation: Any) -> bool:
    """Whether an evaluation scores resamples given as draw counts per item
    (``aggregate_counts(counts)``, ``counts`` of shape ``(n_resamples, n_items)``, each row
    standing for its sorted positions, ``np.repeat(np.arange(n_items), counts[row])``), as
    rows of whole cases, of varying length, need."""
    return callable(getattr(evaluation, "aggregate_counts", None))


def _cluster_counted(evaluation: Any) -> bool:
    """Whether an evaluation scores resamples given as draw counts per cluster
    (``aggregate_cluster_counts(counts, codes)``: ``counts`` of shape ``(n_resamples,
    n_clusters)``, ``codes`` each item's cluster), each row standing for the draw counts
    per item ``counts[:, codes]``, as :meth:`aggregate_counts` would take them: its sums of
    per-item integers can be taken per cluster, the draws never spelt out per item."""
    return callable(getattr(evaluation, "aggregate_cluster_counts", None))


def _resampled_scores(
    evaluations: list[SupportsAggregate],
    keys: list[str],
    n_items: int,
    n_resamples: int,
    seed: int,
    codes: np.ndarray | None = None,
) -> list[np.ndarray]:
    """For each evaluation, an ``(n_resamples, len(keys))`` array of resampled scores.

    Every evaluation sees the same sorted indices in each resample (paired resampling).
    Evaluations with ``aggregate_resamples`` score a chunk of resamples in one call; the
    others are asked resample by resample. With ``codes`` (each item's cluster number,
    :func:`cluster_codes`) clusters are resampled, and the rows of equal length of a chunk
    are scored together.
    """
    order_free = all(_order_free(evaluation) for evaluation in evaluations)
    by_cluster = codes is not None and all(
        _cluster_counted(evaluation) for evaluation in evaluations
    )
    counted = by_cluster or (
        codes is not None and all(_counted(evaluation) for evaluation in evaluations)
    )
    out = [np.full((n_resamples, len(keys)), np.nan) for _ in evaluations]
    chunk = max(1, min(n_resamples, _CHUNK_ELEMENTS // n_items))
    starts = range(0, n_resamples, chunk)
    if codes is None:
        draws = _chunks_of_draws(seed, n_items, n_resamples, chunk, sort=not order_free)
        blocks: Iterator[Any] = ([(np.arange(len(indices)), indices)] for indices in draws)
    elif counted:
        # Draw counts take a chunk of rows of any length at once (per cluster where every
        # evaluation takes them so).
        blocks = (
            [(np.arange(len(counts)), counts)]
            for counts in _cluster_draws(seed, codes, n_resamples, chunk, per_item=not by_cluster)
        )
    else:
        blocks = (
            list(_rows_by_length(counts))
            for counts in _cluster_draws(seed, codes, n_resamples, chunk)
        )
    # Many small matrix products: OpenBLAS's own threads would only spin between them.
    with one_blas_thread():
        for start, chunk_blocks in zip(
            progress_bar(starts, desc="bootstrap", unit="chunk"), blocks
        ):
            for rows, indices in chunk_blocks:
                for table, evaluation in zip(out, evaluations):
                    _score_rows(
                        evaluation,
                        keys,
                        indices,
                        table,
                        start + rows,
                        counted=counted,
                        codes=codes if by_cluster else None,
                    )
    return out


def _score_rows(
    evaluation: SupportsAggregate,
    keys: list[str],
    indices: np.ndarray,
    table: np.ndarray,
    rows: np.ndarray,
    *,
    counted: bool = False,
    codes: np.ndarray | None = None,
) -> None:
    """Fill ``table[rows]`` with the scores of the resamples ``indices`` (one per row), or,
    ``counted``, of the resamples whose draw counts per item are the rows of ``indices``
    (with ``codes``: per cluster, each item's cluster in ``codes``)."""
    if counted:
        if codes is not None:
            many = evaluation.aggregate_cluster_counts(indices, codes)  # type: ignore[attr-defined]
        else:
            many = evaluation.aggregate_counts(indices)  # type: ignore[attr-defined]
        for column, key in enumerate(keys):
            table[rows, column] = many[key] if key in many else np.nan
        return
    if isinstance(evaluation, SupportsResampledAggregate):
        many = evaluation.aggregate_resamples(indices)
        # A key the fast path does not know (a metric added to aggregate() only) is
        # scored resample by resample below rather than left undefined.
        if all(key in many for key in keys):
            for column, key in enumerate(keys):
                table[rows, column] = many[key]
            return
    for row, drawn in zip(rows.tolist(), indices):
        scores = evaluation.aggregate(drawn)
        table[row] = [float(scores.get(key, math.nan)) for key in keys]


def _percentile_interval(values: np.ndarray, confidence: float) -> tuple[float, float]:
    """Percentile interval of the defined (non-NaN) values; (nan, nan) if there are none."""
    defined = values[~np.isnan(values)]
    if len(defined) == 0:
        return (math.nan, math.nan)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(defined, [tail, 100 - tail])
    return (float(low), float(high))


def _percentile_intervals(samples: np.ndarray, confidence: float) -> list[tuple[float, float]]:
    """:func:`_percentile_interval` of every column; columns without NaN in one call.

    numpy computes each column of a 2-D percentile exactly as it would the column alone
    (a test pins the equality), so only columns with undefined resamples go one by one.
    """
    intervals: list[tuple[float, float]] = [(math.nan, math.nan)] * samples.shape[1]
    with_undefined = np.isnan(samples).any(axis=0)
    complete = np.flatnonzero(~with_undefined)
    if len(complete) and len(samples):
        tail = (1 - confidence) / 2 * 100
        low, high = np.percentile(samples[:, complete], [tail, 100 - tail], axis=0)
        for column, low_value, high_value in zip(complete, low.tolist(), high.tolist()):
            intervals[column] = (low_value, high_value)
    for column in np.flatnonzero(with_undefined):
        intervals[column] = _percentile_interval(samples[:, column], confidence)
    return intervals


def _warn_undefined(samples: np.ndarray, keys: list[str], checked: list[bool]) -> None:
    """One warning naming every key that some resamples left undefined, with counts."""
    undefined = np.isnan(samples).sum(axis=0)
    parts = [
        f"{key} {count}/{len(samples)}"
        for key, count, check in zip(keys, undefined.tolist(), checked)
        if check and count
    ]
    if parts:
        warn_at_caller(
            "some resamples left scores undefined (NaN); their intervals use the other "
            "resamples: " + ", ".join(parts),
            BootstrapWarning,
        )


def bootstrap_confidence_intervals(
    evaluation: SupportsAggregate,
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    clusters: Sequence[Hashable] | None = None,
    point: Mapping[str, Any] | None = None,
) -> dict[str, tuple[float, float]]:
    """Percentile bootstrap confidence intervals for every scalar score of an evaluation.

    Items are resampled with replacement (``n_items`` draws per resample, sorted so items keep
    their original order), the scores recomputed with ``evaluation.aggregate(indices)``, and
    the interval is the ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` percentiles
    (numpy's linear interpolation) of the resampled values. With ``clusters``, whole clusters
    are resampled instead (see the module docstring): the interval for images that come in
    cases.

    Args:
        evaluation: a prepared evaluation (``prepare_localization(...)`` and the like).
        n_resamples: number of bootstrap resamples.
        confidence: coverage of the interval, strictly between 0 and 1.
        seed: seed of ``numpy.random.default_rng``; same seed, same intervals.
        clusters: the cluster (case id) of each item, in item order; None: items are
            independent and drawn one by one.
        point: ``evaluation.aggregate()`` when the caller has it already (a breakdown
            cell shows it): not computed again. None: computed here.

    Returns:
        ``{key: (low, high)}`` for every real-number key of ``evaluation.aggregate()``;
        ``(nan, nan)`` where the full-set score is NaN.

    Raises:
        NovaInputError: not an evaluation, zero items, bad settings, or not one cluster
            per item.

    Example:
        >>> from novabench.metrics.localization import prepare_localization
        >>> gold = [{"boxes": [[0, 0, 10, 10]]}] * 4
        >>> predictions = [{"boxes": [[0, 0, 10, 10]]}] * 3 + [{"boxes": []}]
        >>> evaluation = prepare_localization(predictions, gold)
        >>> low, high = bootstrap_confidence_intervals(evaluation, n_resamples=200)["hit@50"]
        >>> 0.0 <= low <= 0.75 <= high <= 1.0
        True
        >>> by_case = bootstrap_confidence_intervals(
        ...     evaluation, n_resamples=200, clusters=["c1", "c1", "c2", "c2"])
        >>> by_case["hit@50"]  # two cases: both hit (1.0), one of each (0.75), both half (0.5)
        (0.5, 1.0)
    """
    n_items = _check_evaluation(evaluation, "evaluation")
    _check_settings(n_resamples, confidence, seed)
    codes = None if clusters is None else cluster_codes(clusters, n_items)
    point = _scalar_scores(evaluation.aggregate(None) if point is None else point)
    keys = list(point)
    (samples,) = _resampled_scores([evaluation], keys, n_items, int(n_resamples), seed, codes)
    defined = [not math.isnan(point[key]) for key in keys]
    _warn_undefined(samples, keys, defined)
    intervals = _percentile_intervals(samples, confidence)
    return {
        key: intervals[column] if defined[column] else (math.nan, math.nan)
        for column, key in enumerate(keys)
    }


def paired_bootstrap(
    evaluation_a: SupportsAggregate,
    evaluation_b: SupportsAggregate,
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    clusters: Sequence[Hashable] | None = None,
) -> dict[str, dict[str, Any]]:
    """Paired bootstrap comparison of two models scored on the same items.

    Each resample draws one set of item positions and applies it to BOTH evaluations, so the
    difference ``a - b`` is compared on identical items (item difficulty cancels out). With
    ``clusters`` both see the same drawn clusters (whole cases).

    For each scalar key present in both, the result holds:

    - ``"a"``, ``"b"``: the full-set scores;
    - ``"difference"``: observed ``a - b``;
    - ``"ci"``: percentile interval of the resampled differences;
    - ``"p_value"``: two-sided bootstrap p-value of "no difference": the resampled
      differences, centred on the observed one, stand in for the null distribution;
      ``p = (1 + #{|d* - d| >= |d|}) / (1 + n)`` over the ``n`` resamples where the key is
      defined (the +1 keeps p above 0, the resolution of a finite bootstrap). A model
      compared with itself gives difference 0 and p-value 1.

    Args:
        evaluation_a: evaluation of model A.
        evaluation_b: evaluation of model B over the same items, in the same order.
        n_resamples: number of bootstrap resamples.
        confidence: coverage of the interval of the difference.
        seed: seed of ``numpy.random.default_rng``.
        clusters: the cluster (case id) of each item, shared by both evaluations; None:
            items drawn one by one.

    Returns:
        ``{key: {"a", "b", "difference", "ci", "p_value"}}``; NaN entries where either
        full-set score is NaN.

    Raises:
        NovaInputError: the evaluations cover different numbers of items, or bad settings.

    Example:
        >>> from novabench.metrics.localization import prepare_localization
        >>> gold = [{"boxes": [[0, 0, 10, 10]]}] * 5
        >>> model = prepare_localization([{"boxes": [[0, 0, 10, 10]]}] * 5, gold)
        >>> result = paired_bootstrap(model, model, n_resamples=100)["hit@50"]
        >>> result["difference"], result["ci"], result["p_value"]
        (0.0, (0.0, 0.0), 1.0)
    """
    n_items = _check_evaluation(evaluation_a, "evaluation_a")
    n_items_b = _check_evaluation(evaluation_b, "evaluation_b")
    if n_items != n_items_b:
        raise NovaInputError(
            f"a paired comparison needs both models scored on the same items; evaluation_a "
            f"has {n_items} items and evaluation_b {n_items_b}",
            field="evaluation_b",
        )
    _check_settings(n_resamples, confidence, seed)
    codes = None if clusters is None else cluster_codes(clusters, n_items)
    point_a = _scalar_scores(evaluation_a.aggregate(None))
    point_b = _scalar_scores(evaluation_b.aggregate(None))
    keys = [key for key in point_a if key in point_b]
    samples_a, samples_b = _resampled_scores(
        [evaluation_a, evaluation_b], keys, n_items, int(n_resamples), seed, codes
    )
    differences = samples_a - samples_b
    _warn_undefined(differences, keys, [not math.isnan(point_a[k] - point_b[k]) for k in keys])
    results: dict[str, dict[str, Any]] = {}
    for column, key in enumerate(keys):
        observed = point_a[key] - point_b[key]
        entry: dict[str, Any] = {"a": point_a[key], "b": point_b[key], "difference": observed}
        if math.isnan(observed):
            entry.update(ci=(math.nan, math.nan), p_value=math.nan)
        else:
            resampled = differences[:, column]
            entry["ci"] = _percentile_interval(resampled, confidence)
            defined = resampled[~np.isnan(resampled)]
            if len(defined) == 0:
                entry["p_value"] = math.nan
            else:
                as_extreme = np.count_nonzero(np.abs(defined - observed) >= abs(observed))
                entry["p_value"] = float((1 + as_extreme) / (1 + len(defined)))
        results[key] = entry
    return results
