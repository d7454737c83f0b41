"""Bootstrap confidence intervals and the paired bootstrap.

Expected numbers come from normal-approximation theory (computed in the comments) or from
the definition of the procedure; tolerances are derived from the Monte Carlo error.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from novabench.errors import NovaInputError
from novabench.metrics.localization import LocalizationWarning, prepare_localization
from novabench.metrics.stats import (
    BootstrapWarning,
    bootstrap_confidence_intervals,
    paired_bootstrap,
)
from tests.bootstrap_reference import percentile_bootstrap_ratio


class MeanEvaluation:
    """Mean of per-item values: the simplest evaluation following the protocol."""

    def __init__(self, values, extra=None):
        self.values = np.asarray(values, dtype=float)
        self.n_items = len(self.values)
        self.extra = extra or {}
        self.seen: list[np.ndarray] = []

    def aggregate(self, indices=None):
        if indices is not None:
            self.seen.append(np.array(indices))
        chosen = self.values if indices is None else self.values[indices]
        return {"mean": float(chosen.mean()) if len(chosen) else math.nan, **self.extra}


def normal_quantile(probability: float) -> float:
    """Inverse of the standard normal CDF by bisection on math.erf (no scipy needed)."""
    low, high = -10.0, 10.0
    for _ in range(200):
        middle = (low + high) / 2
        if 0.5 * (1 + math.erf(middle / math.sqrt(2))) < probability:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def localization_case(n_images: int = 60, hit_every: int = 3):
    """n images with one gold box each; every `hit_every`-th prediction is exact, others miss."""
    gold = [{"boxes": [[0, 0, 10, 10]]} for _ in range(n_images)]
    predictions = [
        {"boxes": [[0, 0, 10, 10]] if i % hit_every == 0 else [[40, 40, 5, 5]], "scores": [0.5]}
        for i in range(n_images)
    ]
    return prepare_localization(predictions, gold)


# --------------------------------------------------------------------------- intervals


@pytest.mark.parametrize("confidence", [0.95, 0.90])
def test_interval_of_a_bernoulli_mean_matches_the_normal_approximation(confidence) -> None:
    # 1000 items, 300 ones: the bootstrap distribution of the mean is Binomial(1000, .3)/1000,
    # sd = sqrt(.3 * .7 / 1000) = 0.014491. Normal interval: .3 -/+ z * 0.014491, where
    # z = 1.95996 (95%: +/- 0.02840) or 1.64485 (90%: +/- 0.02384).
    # Tolerance 0.003: percentile Monte Carlo error with 2000 resamples is about 0.0009 (sd),
    # the lattice step is 0.001; a wrong coverage (95% vs 90%) would be off by 0.0046.
    values = np.array([1] * 300 + [0] * 700)
    np.random.default_rng(1).shuffle(values)
    low, high = bootstrap_confidence_intervals(
        MeanEvaluation(values), n_resamples=2000, confidence=confidence, seed=3
    )["mean"]
    half_width = normal_quantile(0.5 + confidence / 2) * math.sqrt(0.3 * 0.7 / 1000)
    assert low == pytest.approx(0.3 - half_width, abs=0.003)
    assert high == pytest.approx(0.3 + half_width, abs=0.003)


def test_interval_equals_a_percentile_bootstrap_computed_by_hand() -> None:
    # One gold box and one predicted box per image, exact on every third image: per image,
    # hit@30 = hit@50 = ACC50 = TP30 = 1 on a hit and FP30 = 1 on a miss, so each of these
    # scores is a plain mean of per-image values. The same seed draws the same resamples.
    evaluation = localization_case()  # hit rate 20/60
    hits = [1.0 if i % 3 == 0 else 0.0 for i in range(60)]
    intervals = bootstrap_confidence_intervals(evaluation, n_resamples=300, seed=4)
    by_hand = percentile_bootstrap_ratio(hits, n_resamples=300, seed=4)
    misses = percentile_bootstrap_ratio([1 - hit for hit in hits], n_resamples=300, seed=4)
    # Every image has a gold box and hits are exact (IoU 1): the protocol's mAP@ keys are the
    # same per-image mean at every threshold.
    for key in ("mAP@30", "mAP@50", "mAP@50:95", "hit@30", "hit@50", "ACC50", "TP30"):
        assert intervals[key] == pytest.approx(by_hand, abs=1e-12), key
    assert intervals["FP30"] == pytest.approx(misses, abs=1e-12)
    assert by_hand[0] < 20 / 60 < by_hand[1]  # the reference itself is not degenerate
    point = evaluation.aggregate()
    for key in (
        "COCO-AP@30",
        "COCO-AP@50:95",
    ):  # AP has no per-image form: it must bracket the value
        low, high = intervals[key]
        assert 0.0 <= low < point[key] < high <= 1.0, key
    assert intervals["FNR"] == (0.0, 0.0)  # every image has a box: FNR is 0 in every resample


def test_interval_shrinks_like_one_over_root_n() -> None:
    # Hit rate 1/3 on 60 and on 240 images: the normal-theory width is 2 * 1.96 *
    # sqrt(p (1 - p) / n), 0.239 and 0.119; four times the items, half the width.
    small = bootstrap_confidence_intervals(localization_case(60), n_resamples=1000)["hit@30"]
    large = bootstrap_confidence_intervals(localization_case(240), n_resamples=1000)["hit@30"]
    small_width, large_width = small[1] - small[0], large[1] - large[0]
    assert small_width == pytest.approx(2 * 1.959964 * math.sqrt(2 / 9 / 60), abs=0.03)
    assert large_width == pytest.approx(2 * 1.959964 * math.sqrt(2 / 9 / 240), abs=0.015)
    assert 0.35 < large_width / small_width < 0.65


def test_same_seed_same_interval_other_seed_differs() -> None:
    evaluation = localization_case()
    first = bootstrap_confidence_intervals(evaluation, n_resamples=200, seed=11)
    again = bootstrap_confidence_intervals(evaluation, n_resamples=200, seed=11)
    other = bootstrap_confidence_intervals(evaluation, n_resamples=200, seed=12)
    assert first == again
    assert first != other


def test_resamples_are_sorted_draws_with_replacement() -> None:
    evaluation = MeanEvaluation(np.arange(50.0))
    bootstrap_confidence_intervals(evaluation, n_resamples=20)
    assert len(evaluation.seen) == 20
    for indices in evaluation.seen:
        assert len(indices) == 50 and indices.min() >= 0 and indices.max() < 50
        assert np.all(np.diff(indices) >= 0)  # sorted: items keep their original order
    assert any(len(np.unique(indices)) < 50 for indices in evaluation.seen)  # with replacement


def test_non_scalar_keys_are_skipped_and_nan_keys_give_nan() -> None:
    extra = {"ids": [1, 2], "flag": True, "n": 3, "undefined": math.nan}
    evaluation = MeanEvaluation([0.0, 1.0, 1.0], extra=extra)
    intervals = bootstrap_confidence_intervals(evaluation, n_resamples=50)
    assert set(intervals) == {"mean", "n", "undefined"}
    assert all(math.isnan(v) for v in intervals["undefined"])
    assert intervals["n"] == (3.0, 3.0)


def test_no_gold_localization_gives_nan_intervals() -> None:
    with pytest.warns(LocalizationWarning):
        evaluation = prepare_localization([{"boxes": [[0, 0, 1, 1]]}] * 4, [{"boxes": []}] * 4)
    intervals = bootstrap_confidence_intervals(evaluation, n_resamples=30)
    assert all(math.isnan(v) for v in intervals["hit@30"] + intervals["COCO-AP@50"])
    assert intervals["FP30"] == (1.0, 1.0)


def test_resamples_where_a_score_is_undefined_are_counted_in_a_warning() -> None:
    # One image of 20 has a gold box; a resample misses it with probability (19/20)^20 = 0.36,
    # leaving hit@30 undefined there.
    gold = [{"boxes": [[0, 0, 10, 10]]}] + [{"boxes": []}] * 19
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LocalizationWarning)
        evaluation = prepare_localization([{"boxes": [[0, 0, 10, 10]]}] * 20, gold)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        intervals = bootstrap_confidence_intervals(evaluation, n_resamples=200)
    assert len(caught) == 1 and caught[0].category is BootstrapWarning  # one warning, all keys
    message = str(caught[0].message)
    undefined = int(message.split("hit@30 ")[1].split("/")[0])
    assert 40 <= undefined <= 105  # expected 0.36 * 200 = 72 (binomial sd 6.8)
    assert f"COCO-AP@50 {undefined}/200" in message and "FP30" not in message  # FP30 always defined
    assert intervals["hit@30"] == (1.0, 1.0)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"n_resamples": 0}, "n_resamples"),
        ({"n_resamples": 2.5}, "n_resamples"),
        ({"confidence": 1.0}, "confidence"),
        ({"confidence": 0}, "confidence"),
        ({"confidence": "95%"}, "confidence"),
    ],
)
def test_bad_settings_raise(kwargs, field) -> None:
    with pytest.raises(NovaInputError) as info:
        bootstrap_confidence_intervals(MeanEvaluation([1.0, 0.0]), **kwargs)
    assert info.value.field == field


def test_not_an_evaluation_or_empty_raises() -> None:
    with pytest.raises(NovaInputError, match="prepare_"):
        bootstrap_confidence_intervals({"mean": 0.5})  # a result dict, not an evaluation
    with pytest.raises(NovaInputError, match="0 items"):
        bootstrap_confidence_intervals(MeanEvaluation([]))

    class NoAggregate:
        n_items = 3

    class NoCount:
        def aggregate(self, indices=None):
            return {"mean": 0.5}

    for half_an_evaluation in (NoAggregate(), NoCount()):
        with pytest.raises(NovaInputError, match="aggregate") as info:
            bootstrap_confidence_intervals(half_an_evaluation)  # type: ignore[arg-type]
        assert info.value.field == "evaluation"
        with pytest.raises(NovaInputError) as info:
            paired_bootstrap(MeanEvaluation([1.0]), half_an_evaluation)  # type: ignore[arg-type]
        assert info.value.field == "evaluation_b"
    # Anything with both (no base class needed) is accepted and bootstrapped.
    values = [0.0, 1.0, 1.0, 0.0, 1.0]
    interval = bootstrap_confidence_intervals(MeanEvaluation(values), n_resamples=50)["mean"]
    assert interval == pytest.approx(percentile_bootstrap_ratio(values, n_resamples=50), abs=1e-12)


# --------------------------------------------------------------------------- paired


def test_model_against_itself_differs_by_zero_with_p_value_one() -> None:
    evaluation = localization_case()
    results = paired_bootstrap(evaluation, evaluation, n_resamples=200)
    for key in ("COCO-AP@30", "COCO-AP@50:95", "hit@30", "ACC50", "TP30", "FP30", "FNR"):
        assert results[key]["difference"] == 0.0
        assert results[key]["ci"] == (0.0, 0.0)
        assert results[key]["p_value"] == 1.0


def test_paired_resampling_uses_the_same_indices_for_both_models() -> None:
    a, b = MeanEvaluation(np.arange(30.0)), MeanEvaluation(np.zeros(30))
    paired_bootstrap(a, b, n_resamples=25, seed=4)
    assert len(a.seen) == len(b.seen) == 25
    assert all(np.array_equal(x, y) for x, y in zip(a.seen, b.seen))


def test_clearly_better_model_has_tiny_p_value() -> None:
    # A hits all 50 images, B hits every third (17 of 50): difference 1 - 17/50 = 0.66.
    # No resample can bring the difference to 0 (A never misses) and |d* - 0.66| >= 0.66 would
    # need d* = 0 or d* >= 1.32: impossible, so p = 1 / (1 + 400).
    better, worse = localization_case(50, hit_every=1), localization_case(50, hit_every=3)
    result = paired_bootstrap(better, worse, n_resamples=400)["hit@50"]
    assert result["difference"] == pytest.approx(1 - 17 / 50)
    assert result["p_value"] == pytest.approx(1 / 401)
    # Per image the difference is 1 - (B hits): its percentile bootstrap, by hand.
    differences = [0.0 if i % 3 == 0 else 1.0 for i in range(50)]
    expected = percentile_bootstrap_ratio(differences, n_resamples=400)
    assert result["ci"] == pytest.approx(expected, abs=1e-12)
    assert 0 < result["ci"][0] < result["difference"] < result["ci"][1]
    assert (result["a"], result["b"]) == (1.0, pytest.approx(17 / 50))


def test_paired_p_value_and_interval_match_normal_theory() -> None:
    # Per-item differences: 40 items +1, 30 items -1, 930 items 0 (n = 1000).
    # Observed difference 10/1000 = 0.01; variance per item 0.07 - 0.01^2 = 0.0699,
    # standard error sqrt(0.0699 / 1000) = 0.008361.
    # Interval: 0.01 -/+ 1.96 * 0.008361 = [-0.00639, 0.02639] (tolerance 0.003 as above).
    # p-value: P(|d* - 0.01| >= 0.01) on a 0.001 lattice, with continuity correction
    # 2 * (1 - Phi((0.01 - 0.0005) / 0.008361)) = 2 * (1 - Phi(1.1362)) = 0.2559;
    # Monte Carlo sd with 2000 resamples is sqrt(.256 * .744 / 2000) = 0.0098 -> tolerance 0.035.
    a = np.array([1] * 40 + [0] * 30 + [0] * 930, dtype=float)
    b = np.array([0] * 40 + [1] * 30 + [0] * 930, dtype=float)
    order = np.random.default_rng(5).permutation(1000)
    result = paired_bootstrap(
        MeanEvaluation(a[order]), MeanEvaluation(b[order]), n_resamples=2000, seed=9
    )["mean"]
    se = math.sqrt(0.0699 / 1000)
    assert result["difference"] == pytest.approx(0.01)
    assert result["ci"][0] == pytest.approx(0.01 - 1.959964 * se, abs=0.003)
    assert result["ci"][1] == pytest.approx(0.01 + 1.959964 * se, abs=0.003)
    expected_p = 2 * (1 - 0.5 * (1 + math.erf((0.0095 / se) / math.sqrt(2))))
    assert result["p_value"] == pytest.approx(expected_p, abs=0.035)


def test_paired_needs_the_same_items() -> None:
    with pytest.raises(NovaInputError, match="same items") as info:
        paired_bootstrap(localization_case(60), localization_case(59), n_resamples=10)
    assert info.value.field == "evaluation_b"


def test_paired_keeps_only_shared_scalar_keys_and_nan_entries() -> None:
    a = MeanEvaluation([1.0, 0.0], extra={"only_a": 1.0, "undefined": math.nan})
    b = MeanEvaluation([0.0, 0.0], extra={"undefined": 0.5})
    results = paired_bootstrap(a, b, n_resamples=20)
    assert set(results) == {"mean", "undefined"}
    assert math.isnan(results["undefined"]["difference"])
    assert math.isnan(results["undefined"]["p_value"])
    assert all(math.isnan(v) for v in results["undefined"]["ci"])


@pytest.mark.parametrize("n_items", [1, 2, 7, 281, 511, 512, 906, 1001, 65536, 65537])
def test_resample_stream_is_one_integers_call_per_resample(n_items: int) -> None:
    # The documented stream: resample r is the r-th `rng.integers(0, n, size=n)`, sorted.
    # The sizes cross the rule of _sorted_rows: rows of 512 and more sorted as 16 bits,
    # positions of 65536 items and more as 32 bits.
    from novabench.metrics.stats import _draw

    reference = np.random.default_rng(5)
    expected = np.sort(
        np.stack([reference.integers(0, n_items, size=n_items) for _ in range(37)]), axis=1
    )
    rng = np.random.default_rng(5)
    drawn = np.concatenate([_draw(rng, n_items, 20), _draw(rng, n_items, 17)])
    assert drawn.dtype == expected.dtype
    assert np.array_equal(drawn, expected)


@pytest.mark.parametrize("sort_first", [True, False])
def test_draws_kept_for_the_next_bootstrap_are_the_stream_itself(sort_first: bool) -> None:
    # A draw is taken once per (seed, items, resamples) and kept: every later request, sorted
    # or not, in either order, must give the documented stream, and a caller writing into
    # its array must not change what the next one gets.
    from novabench.metrics.stats import _DrawCache

    expected = np.random.default_rng(11).integers(0, 906, size=(40, 906))
    cache = _DrawCache(1 << 20)
    for sort in (sort_first, not sort_first, sort_first, not sort_first):
        rows = cache.rows(11, 906, 40, sort=sort)
        assert rows.dtype == expected.dtype
        assert np.array_equal(rows, np.sort(expected, axis=1) if sort else expected)
        rows[:] = 0


def test_the_draw_cache_keeps_within_its_budget() -> None:
    from novabench.metrics.stats import _DrawCache

    cache = _DrawCache(3 * 10 * 100 * 2)  # three draws of 10 x 100 positions in 16 bits
    for seed in range(5):
        cache.rows(seed, 100, 10, sort=False)
    assert sorted(key[0] for key in cache._entries) == [2, 3, 4]  # the oldest went first
    cache.forget()
    assert not cache._entries
    assert np.array_equal(
        cache.rows(0, 100, 10, sort=False),
        np.random.default_rng(0).integers(0, 100, size=(10, 100)),
    )


def test_a_generator_as_seed_is_drawn_from_not_kept() -> None:
    # A Generator is state, not a seed: two bootstraps with the same one draw on from it.
    from novabench.metrics.stats import _chunks_of_draws

    generator = np.random.default_rng(3)
    first = next(_chunks_of_draws(generator, 50, 20, 20, sort=False))
    second = next(_chunks_of_draws(generator, 50, 20, 20, sort=False))
    reference = np.random.default_rng(3)
    assert np.array_equal(first, reference.integers(0, 50, size=(20, 50)))
    assert np.array_equal(second, reference.integers(0, 50, size=(20, 50)))


@pytest.mark.parametrize("seed", range(5))
def test_intervals_of_all_columns_at_once_equal_each_column_alone(seed) -> None:
    # bootstrap_confidence_intervals takes the NaN-free columns in one np.percentile call;
    # each must equal the column's own interval bit for bit (ties, NaN columns, tiny sizes).
    from novabench.metrics.stats import _percentile_interval, _percentile_intervals

    rng = np.random.default_rng(seed)
    for _ in range(40):
        n_rows, n_columns = int(rng.integers(1, 300)), int(rng.integers(1, 12))
        samples = rng.random((n_rows, n_columns))
        samples[:, ::3] = np.round(samples[:, ::3], 1)  # many ties
        samples[rng.random((n_rows, n_columns)) < 0.02] = np.nan
        confidence = float(rng.choice([0.8, 0.9, 0.95, 0.99]))
        together = _percentile_intervals(samples, confidence)
        for column in range(n_columns):
            alone = _percentile_interval(samples[:, column], confidence)
            assert all(
                (math.isnan(a) and math.isnan(b)) or a == b for a, b in zip(together[column], alone)
            ), (seed, column)


@pytest.mark.parametrize("seed", [-1, 1.5, True, None])
def test_a_bad_seed_is_refused_by_name_by_both_bootstraps(seed: object) -> None:
    """user21: seed=-1 reached numpy ("expected non-negative integer"), 1.5 a TypeError."""
    evaluation = MeanEvaluation([1.0, 0.0, 1.0])
    with pytest.raises(NovaInputError) as caught:
        bootstrap_confidence_intervals(evaluation, n_resamples=10, seed=seed)  # type: ignore[arg-type]
    assert caught.value.field == "seed"
    with pytest.raises(NovaInputError) as caught:
        paired_bootstrap(evaluation, evaluation, n_resamples=10, seed=seed)  # type: ignore[arg-type]
    assert caught.value.field == "seed"
    # numpy integers are integers
    assert bootstrap_confidence_intervals(evaluation, n_resamples=10, seed=np.int64(2))
