"""Bootstrap behaviours that the mutation check (scripts/mutation_check.py) found unpinned.

Each test names the behaviour; the expected intervals come from the plain resampling loop of
``tests/bootstrap_reference.py`` (the rule ``novabench.metrics.stats`` documents), on per-item
hits of 0 or 1, whose sums are exact in any order.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from novabench.metrics.stats import (
    BootstrapWarning,
    bootstrap_confidence_intervals,
    paired_bootstrap,
)
from tests.bootstrap_reference import percentile_bootstrap_ratio


class HitRate:
    """The share of hits among the drawn items: the simplest evaluation of the protocol."""

    def __init__(self, hits: np.ndarray) -> None:
        self.hits = hits.astype(np.float64)
        self.n_items = len(hits)

    def aggregate(self, indices: np.ndarray | None = None) -> dict[str, float]:
        chosen = self.hits if indices is None else self.hits[indices]
        return {"hit rate": float(chosen.mean())}


def test_a_repeated_bootstrap_of_more_than_65536_items_draws_the_same_items() -> None:
    # Single-chunk draws of up to 2**16 items are kept (as 16-bit positions) for the next
    # bootstrap of the same seed and size. 70,000 items do not fit 16 bits: the second
    # bootstrap must draw items 65,536 and above again, not their positions wrapped round.
    # The hits sit only there, so a wrapped draw would see none of them.
    hits = np.zeros(70_000, dtype=np.int64)
    hits[65_536:] = np.random.default_rng(1).integers(0, 2, size=70_000 - 65_536)
    evaluation = HitRate(hits)
    expected = percentile_bootstrap_ratio(hits, n_resamples=5, seed=3)
    first = bootstrap_confidence_intervals(evaluation, n_resamples=5, seed=3)["hit rate"]
    second = bootstrap_confidence_intervals(evaluation, n_resamples=5, seed=3)["hit rate"]
    assert first == second == expected
    assert expected[0] > 0


def test_a_bootstrap_of_more_items_than_a_chunk_holds_scores_one_resample_at_a_time() -> None:
    # A chunk of resamples holds at most 2**21 positions; an evaluation of more items than
    # that still takes one resample per chunk (never zero), each the documented draw.
    n_items = (1 << 21) + 3
    hits = (np.arange(n_items) % 3 == 0).astype(np.int64)
    expected = percentile_bootstrap_ratio(hits, n_resamples=2, seed=7)
    intervals = bootstrap_confidence_intervals(HitRate(hits), n_resamples=2, seed=7)
    assert intervals["hit rate"] == expected


def test_the_default_is_1000_resamples_in_both_bootstraps() -> None:
    # Per-item integers up to 10**6: resample means are exact (integer sums), and near enough
    # continuous that 999 or 1001 resamples would move the percentiles.
    values = np.random.default_rng(2).integers(0, 10**6, size=30)
    expected = percentile_bootstrap_ratio(values, n_resamples=1000, seed=0)
    assert bootstrap_confidence_intervals(HitRate(values))["hit rate"] == expected
    # Against a model scoring 0 everywhere the paired differences are model A's means.
    paired = paired_bootstrap(HitRate(values), HitRate(np.zeros(30, dtype=np.int64)))
    assert paired["hit rate"]["ci"] == expected


class Sensitivity:
    """Hits among the positive items; NaN for a resample drawing no positive item."""

    def __init__(self, positive: list[int], hit: list[int]) -> None:
        self.positive = np.array(positive)
        self.hit = np.array(hit)
        self.n_items = len(positive)

    def aggregate(self, indices: np.ndarray | None = None) -> dict[str, float]:
        chosen = np.arange(self.n_items) if indices is None else np.asarray(indices)
        positives = int(self.positive[chosen].sum())
        found = int((self.positive * self.hit)[chosen].sum())
        return {"sensitivity": found / positives if positives else math.nan}


# Three items, the first the only positive one: model A finds it, model B misses it.
# Full set: sensitivity 1.0 and 0.0, difference 1.0.
FINDS = Sensitivity([1, 0, 0], [1, 0, 0])
MISSES = Sensitivity([1, 0, 0], [0, 0, 0])


def test_a_difference_defined_in_no_resample_has_no_p_value_and_is_warned_about() -> None:
    # Seed 4 draws items [2, 2, 2] and then [1, 2, 2] (np.random.default_rng(4).integers(0,
    # 3, size=(2, 3))): the positive item in neither, so no resampled difference is defined.
    assert 0 not in np.random.default_rng(4).integers(0, 3, size=(2, 3))
    with pytest.warns(BootstrapWarning) as caught:
        result = paired_bootstrap(FINDS, MISSES, n_resamples=2, seed=4)["sensitivity"]
    assert result["difference"] == 1.0
    assert math.isnan(result["p_value"])
    assert all(math.isnan(end) for end in result["ci"])
    assert [str(warning.message) for warning in caught] == [
        "some resamples left scores undefined (NaN); their intervals use the other "
        "resamples: sensitivity 2/2"
    ]
    assert caught[0].filename == __file__  # the caller's line, not the module's
    with pytest.warns(BootstrapWarning) as caught:
        bootstrap_confidence_intervals(FINDS, n_resamples=2, seed=4)
    assert caught[0].filename == __file__


def test_one_defined_resample_gives_a_p_value() -> None:
    # Seed 2 draws items [2, 0, 0]: the positive item twice, A finds it and B misses it, so
    # the resampled difference d* is 1.0 = d. |d* - d| = 0 is not >= |d| = 1: no resample
    # as extreme, p = (1 + 0) / (1 + 1) = 0.5.
    assert np.random.default_rng(2).integers(0, 3, size=3).tolist() == [2, 0, 0]
    result = paired_bootstrap(FINDS, MISSES, n_resamples=1, seed=2)["sensitivity"]
    assert result["p_value"] == 0.5
    assert result["ci"] == (1.0, 1.0)
