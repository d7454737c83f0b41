"""A percentile bootstrap written out by hand, to check the intervals novabench reports.

It follows the resampling rules documented in ``novabench.metrics.stats`` (``n`` item
positions drawn with replacement from ``numpy.random.default_rng(seed)``, percentiles with
numpy's linear interpolation) but computes the statistic itself, as a ratio of per-item
sums written by the test, so an interval can be compared with one derived independently of
the metric code. Given the same seed it reproduces the same draws, so the comparison is
exact rather than statistical. With ``cases`` it draws cases instead (numbered as they first
appear, ``rng.integers(0, n_cases, size=n_cases)`` per resample) and takes every item of each
drawn case, as the module documents for clustered items.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def percentile_bootstrap_ratio(
    numerators: Sequence[float],
    denominators: Sequence[float] | None = None,
    *,
    n_resamples: int,
    confidence: float = 0.95,
    seed: int = 0,
    cases: Sequence[str] | None = None,
) -> tuple[float, float]:
    """Percentile interval of ``sum(numerators[i]) / sum(denominators[i])`` over resamples.

    Args:
        numerators: per-item numerator (e.g. 1 for a hit, 0 for a miss).
        denominators: per-item denominator (e.g. 1 if the item counts); all ones if None,
            which makes the statistic a plain mean.
        n_resamples: number of resamples.
        confidence: coverage of the interval.
        seed: seed of ``numpy.random.default_rng``.
        cases: each item's case; None: items drawn one by one.

    Returns:
        ``(low, high)``; resamples whose denominator sums to 0 are left out.

    Example:
        >>> percentile_bootstrap_ratio([1.0, 1.0, 1.0], n_resamples=10)
        (1.0, 1.0)
    """
    top = np.asarray(numerators, dtype=float)
    bottom = np.ones_like(top) if denominators is None else np.asarray(denominators, dtype=float)
    rng = np.random.default_rng(seed)
    order = list(dict.fromkeys(cases)) if cases is not None else []
    members = {case: [i for i, c in enumerate(cases or []) if c == case] for case in order}
    values = []
    for _ in range(n_resamples):
        if cases is None:
            drawn = rng.integers(0, len(top), size=len(top))
        else:
            picked = rng.integers(0, len(order), size=len(order))
            drawn = np.array(sorted(i for d in picked for i in members[order[d]]), dtype=int)
        total = bottom[drawn].sum()
        if total > 0:
            values.append(top[drawn].sum() / total)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return float(low), float(high)
