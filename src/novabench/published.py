"""Published zero-shot NOVA figures, with their provenance, to show beside a user's model.

The figures are data (``resources/published_results.json``): each names its model, task,
metric (the toolkit's key, so ``mAP@30`` is the protocol's image-level hit rate), value in
percent, the number of images scored where known, and its source: the NOVA paper (figures
quoted second-hand, no image count, so no interval) or the co-authors' later zero-shot
re-runs (WALDO; the same metric with another prompt, all 906 images or a 50-image subset).

They are never re-scored here: reports show them marked "published, not re-scored".

Intervals. A hit rate over ``n`` images is the mean of ``n`` hits (1) and misses (0), and
the toolkit's interval for it is a percentile bootstrap over images. That interval depends
on the hit count ``k`` and ``n`` only up to which images are the hits; so for a published
rate whose ``k`` is fixed by the figure (``k / n`` is the only count of ``n`` that rounds to
it), :func:`published_interval` gives a bootstrap over images from ``k`` of ``n``. Where no
single ``k`` fits, or ``n`` is unknown, there is no interval.

A report whose intervals resample cases (``bootstrap.unit == "case"``, every report since
cases are resampled) shows the published figures without an interval: a case interval needs
each image's hit and case, which the figures do not carry (the source's per-image files are
not shipped here), and an interval over images would be narrower than the report's own for
the same rate (:data:`NO_CASE_INTERVAL` says so in the figure's cell).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

import numpy as np

from novabench.errors import NovaInputError

__all__ = [
    "NO_CASE_INTERVAL",
    "PublishedResult",
    "PublishedSource",
    "hit_count",
    "published_interval",
    "published_results",
    "published_sources",
    "settings_caveat",
    "stand_in_of",
    "unpublished_settings",
]


@dataclass(frozen=True)
class PublishedSource:
    """Where published figures come from.

    Attributes:
        key: the source's short name (``"nova-paper"``, ``"waldo-zero-shot"``).
        title: what it is.
        reference: where to find it.
        protocol: how its figures were obtained (prompt, metric), as far as known.
        date: when it was published (year or year-month).
        note: what a reader must know before comparing.
    """

    key: str
    title: str
    reference: str
    protocol: str
    date: str
    note: str


@dataclass(frozen=True)
class PublishedResult:
    """One published figure.

    Attributes:
        model: the model as its source names it.
        source: the key of its :class:`PublishedSource`.
        task: the toolkit's task name.
        metric: the toolkit's metric key.
        value: the figure in percent, as published.
        n: images (or cases) scored; None when the source does not say.
        decimals: the decimals it was published with (None: full precision).
    """

    model: str
    source: str
    task: str
    metric: str
    value: float
    n: int | None = None
    decimals: int | None = None

    @property
    def hits(self) -> int | None:
        """The hit count the figure fixes (see :func:`hit_count`), or None."""
        return hit_count(self.value, self.n, self.decimals)


@lru_cache(maxsize=1)
def _data() -> Mapping[str, Any]:
    text = resources.files("novabench").joinpath("resources/published_results.json").read_text()
    data: Mapping[str, Any] = json.loads(text)
    return data


def published_sources() -> dict[str, PublishedSource]:
    """The sources of the published figures, by key.

    Example:
        >>> published_sources()["nova-paper"].reference.endswith("arXiv:2505.14064")
        True
    """
    return {
        key: PublishedSource(
            key=key,
            **{
                name: str(value)
                for name, value in entry.items()
                if name not in ("n", "unpublished_settings")
            },
        )
        for key, entry in _data()["sources"].items()
    }


def published_results(task: str | None = None, metric: str | None = None) -> list[PublishedResult]:
    """Published figures, optionally of one task and metric, in the data file's order.

    Example:
        >>> [(r.model, r.value) for r in published_results("diagnosis", "top1")]
        [('Gemini 2.0 Flash', 22.1)]
        >>> sorted({r.source for r in published_results("localization", "mAP@30")})
        ['nova-paper', 'waldo-zero-shot']
    """
    results = [PublishedResult(**entry) for entry in _data()["results"]]
    return [
        result
        for result in results
        if (task is None or result.task == task) and (metric is None or result.metric == metric)
    ]


def hit_count(value: float, n: int | None, decimals: int | None = None) -> int | None:
    """The number of hits ``k`` of ``n`` a published rate (percent) fixes, or None.

    With full precision (``decimals`` None) ``k`` is the count whose rate equals the value to
    1e-9; with ``decimals``, the one count whose rate rounds to the value. None when ``n`` is
    unknown or no single count fits.

    Example:
        >>> hit_count(36.42384105960265, 906), hit_count(36.3, 906, 1)
        (330, 329)
        >>> hit_count(50.0, None), hit_count(50.0, 3)  # unknown n; no count of 3 gives 50 %
        (None, None)
    """
    if n is None or n <= 0:
        return None
    if decimals is None:
        k = round(value * n / 100.0)
        return k if abs(100.0 * k / n - value) <= 1e-9 else None
    half = 0.5 * 10.0 ** (-decimals)
    fits = [k for k in range(n + 1) if abs(100.0 * k / n - value) < half + 1e-12]
    return fits[0] if len(fits) == 1 else None


class _Hits:
    """A hit rate as a prepared evaluation: ``k`` ones among ``n`` items, for the bootstrap."""

    order_free = True  # the rate counts draws, whatever their order

    def __init__(self, k: int, n: int) -> None:
        self.hits = np.zeros(n)
        self.hits[:k] = 1.0

    @property
    def n_items(self) -> int:
        return len(self.hits)

    def aggregate(self, indices: np.ndarray | None = None) -> dict[str, float]:
        chosen = self.hits if indices is None else self.hits[indices]
        return {"rate": float(chosen.mean())}

    def aggregate_resamples(self, indices: np.ndarray) -> dict[str, np.ndarray]:
        return {"rate": self.hits[indices].mean(axis=1)}


def published_interval(
    result: PublishedResult, *, n_resamples: int = 1000, confidence: float = 0.95, seed: int = 0
) -> tuple[float, float] | None:
    """A bootstrap interval (percent) for a published hit rate, as a report computes its own.

    Only for the image-level hit rates (``mAP@30``, ``mAP@50``) with a known ``n`` and a hit
    count the figure fixes; None otherwise (see the module docstring).

    Example:
        >>> (qwen,) = [r for r in published_results("localization", "mAP@30")
        ...            if r.model == "Qwen2.5-VL-72B" and r.source == "waldo-zero-shot"]
        >>> low, high = published_interval(qwen)
        >>> low < qwen.value < high
        True
    """
    if result.metric not in ("mAP@30", "mAP@50") or result.n is None:
        return None
    k = result.hits
    if k is None:
        return None
    if n_resamples < 1:
        raise NovaInputError(f"must be at least 1, got {n_resamples}", field="n_resamples")
    return _hit_rate_interval(k, result.n, n_resamples, confidence, seed)


@lru_cache(maxsize=256)
def _hit_rate_interval(
    k: int, n: int, n_resamples: int, confidence: float, seed: int
) -> tuple[float, float] | None:
    """The interval of k hits in n (percent); kept, as every rendering of a report asks again."""
    from novabench.metrics.stats import bootstrap_confidence_intervals

    low, high = bootstrap_confidence_intervals(
        _Hits(k, n), n_resamples=n_resamples, confidence=confidence, seed=seed
    )["rate"]
    if math.isnan(low):
        return None
    return 100.0 * low, 100.0 * high


def published_beside(
    report: Mapping[str, Any],
) -> list[tuple[PublishedResult, tuple[float, float] | None]]:
    """The published figures of the tasks and metrics a report scores, with their intervals.

    Intervals use the report's own bootstrap settings (resamples, confidence, seed); a
    report scored without resamples gets none, and so does a report whose intervals resample
    cases (``bootstrap.unit`` ``"case"``): the figures carry no image's case (see the module
    docstring). A paper key the report holds only a
    stand-in for (``top1-lexicon`` for ``top1``: another quantity) keeps its figures here;
    :func:`stand_in_of` names the stand-in so every rendering marks them not comparable.

    Example:
        >>> report = {"bootstrap": {"n_resamples": 0}, "tasks": {"diagnosis": {"metrics": {"top1": 0.3}}}}
        >>> [(result.model, interval) for result, interval in published_beside(report)]
        [('Gemini 2.0 Flash', None)]
    """
    bootstrap = report.get("bootstrap") or {}
    n_resamples = int(bootstrap.get("n_resamples") or 0)
    if _by_case(report):
        n_resamples = 0
    rows = []
    for task, section in (report.get("tasks") or {}).items():
        metrics = (section or {}).get("metrics") or {}
        for result in published_results(task):
            if result.metric not in metrics and stand_in_of(report, result) is None:
                continue
            interval = (
                published_interval(
                    result,
                    n_resamples=n_resamples,
                    confidence=float(bootstrap.get("confidence", 0.95)),
                    seed=int(bootstrap.get("seed", 0)),
                )
                if n_resamples
                else None
            )
            rows.append((result, interval))
    return rows


def stand_in_of(report: Mapping[str, Any], result: PublishedResult) -> str | None:
    """The report's key standing in for a published figure's paper key, or None.

    None when the report holds the paper key itself (comparable kinds) or no stand-in of it.

    Example:
        >>> result = published_results("diagnosis", "top1")[0]
        >>> stand_in_of({"tasks": {"diagnosis": {"metrics": {"top1-lexicon": 0.3}}}}, result)
        'top1-lexicon'
        >>> stand_in_of({"tasks": {"diagnosis": {"metrics": {"top1": 0.3}}}}, result) is None
        True
    """
    from novabench import registry

    metrics = (((report.get("tasks") or {}).get(result.task) or {}).get("metrics")) or {}
    spec = registry.TASKS.get(result.task)
    if result.metric in metrics or spec is None:
        return None
    return next((key for key in spec.stand_ins(result.metric) if key in metrics), None)


def unpublished_settings(result: PublishedResult) -> str | None:
    """The settings of the figure's metric its source did not publish, in words, or None.

    The paper's BLEU-4, METEOR and BERTScore figures come without their settings (corpus
    or sentence BLEU, WordNet, BERTScore model...), so a report's value under the same key
    may be on another scale: every rendering says so beside the figure.

    Example:
        >>> unpublished_settings(published_results("captioning", "BLEU-4")[0])
        'corpus or sentence BLEU, tokenizer and smoothing'
        >>> unpublished_settings(published_results("diagnosis", "top1")[0]) is None
        True
    """
    source = _data()["sources"].get(result.source) or {}
    unknown = (source.get("unpublished_settings") or {}).get(result.metric)
    return None if unknown is None else str(unknown)


def settings_caveat(result: PublishedResult) -> str | None:
    """``settings not published: ...`` for a figure whose metric settings are unknown.

    Example:
        >>> settings_caveat(published_results("captioning", "BLEU-4")[0])
        'settings not published: corpus or sentence BLEU, tokenizer and smoothing'
    """
    unknown = unpublished_settings(result)
    return None if unknown is None else f"settings not published: {unknown}"


#: What every rendering of published figures says about them.
NOT_RESCORED = "published, not re-scored"

#: Beside a published hit rate of known ``n`` when the report resamples cases.
NO_CASE_INTERVAL = "no interval: its per-image hits and cases are not here to resample cases"


def _by_case(report: Mapping[str, Any]) -> bool:
    """Whether the report's intervals resample cases (a report without a unit: images)."""
    return bool((report.get("bootstrap") or {}).get("unit") == "case")


def _figure(
    result: PublishedResult, interval: tuple[float, float] | None, by_case: bool = False
) -> str:
    """The value as its source gave it (full-precision rates to one decimal), with the
    interval, or (``by_case``, a hit rate that would have one by image) why it has none."""
    text = f"{result.value:.{1 if result.decimals is None else result.decimals}f}"
    if result.n is None:  # a figure quoted as printed: its own digits
        text = f"{result.value:g}"
    if interval is not None:
        text += f" [{interval[0]:.1f}, {interval[1]:.1f}]"
    elif by_case and result.hits is not None and result.metric in ("mAP@30", "mAP@50"):
        text += f" ({NO_CASE_INTERVAL})"
    return text


def published_rows(report: Mapping[str, Any]) -> list[list[str]]:
    """Table rows (task, metric, model, value with interval, n, source) for a report's metrics.

    A figure shown beside a stand-in says so in its metric cell: ``top1 (not comparable with
    this report's top1-lexicon)``; one whose metric settings its source did not publish says
    that: ``BLEU-4 (settings not published: corpus or sentence BLEU, ...)``.

    Example:
        >>> report = {"bootstrap": {"n_resamples": 0}, "tasks": {"diagnosis": {"metrics": {"top1": 0.3}}}}
        >>> published_rows(report)
        [['diagnosis', 'top1', 'Gemini 2.0 Flash', '22.1', 'not stated', 'NOVA paper, zero-shot results (2025-05)']]
        >>> report = {"bootstrap": {"n_resamples": 1000, "unit": "case"},
        ...           "tasks": {"localization": {"metrics": {"mAP@30": 0.3}}}}
        >>> [row[3] for row in published_rows(report) if row[2] == "gemma-4-31B"]
        ['39.7 (no interval: its per-image hits and cases are not here to resample cases)']
    """
    sources = published_sources()
    by_case = _by_case(report) and bool((report.get("bootstrap") or {}).get("n_resamples"))
    rows = []
    for result, interval in published_beside(report):
        source = sources[result.source]
        stand_in = stand_in_of(report, result)
        metric = result.metric
        caveat = settings_caveat(result)
        if stand_in is not None:
            metric += f" (not comparable with this report's {stand_in})"
        elif caveat is not None:
            metric += f" ({caveat})"
        rows.append(
            [
                result.task,
                metric,
                result.model,
                _figure(result, interval, by_case),
                "not stated" if result.n is None else str(result.n),
                f"{source.title} ({source.date})",
            ]
        )
    return rows
