"""Float sums of a case bootstrap taken per case (``cluster_resample_sums``): a fixed order,
the same on every machine, and the true sums to float rounding.

The references here are written from the rule alone: an explicit loop over the clusters (the
order the function promises, bit for bit) and ``math.fsum`` over each resample's items spelt
out one by one, drawn case by case in a plain loop (correctly rounded sums, to ~1e-12).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from novabench.errors import NovaInputError
from novabench.metrics.captioning import prepare_captioning
from novabench.metrics.stats import (
    BootstrapWarning,
    bootstrap_confidence_intervals,
    cluster_codes,
    cluster_resample_sums,
)


def random_draws(rng: np.random.Generator, n_items: int, n_clusters: int, n_rows: int):
    codes = rng.integers(0, n_clusters, size=n_items)
    codes[:n_clusters] = np.arange(n_clusters)  # every cluster holds an item
    rng.shuffle(codes)
    counts = rng.integers(0, 4, size=(n_rows, n_clusters))
    return codes, counts


def pairwise_sum(values: list[float]) -> float:
    """numpy's pairwise summation of a contiguous float64 row, in plain Python (whose
    floats are the same IEEE doubles): fewer than 8 values left to right; up to 128 in
    eight running sums, combined in a fixed tree, the rest left to right; more, split in
    two halves (the first a multiple of 8) summed alike."""
    n = len(values)
    if n < 8:
        total = -0.0
        for value in values:
            total += value
        return total
    if n <= 128:
        r = list(values[:8])
        stop = n - n % 8
        for i in range(8, stop, 8):
            for j in range(8):
                r[j] += values[i + j]
        total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        for value in values[stop:]:
            total += value
        return total
    half = n // 2
    half -= half % 8
    return pairwise_sum(values[:half]) + pairwise_sum(values[half:])


@pytest.mark.parametrize("seed", range(6))
def test_sums_follow_the_stated_order_bit_for_bit(seed: int) -> None:
    # The order the function promises, written out: each cluster's items in item order,
    # its total times its draw count, the clusters' products summed pairwise. Plain float
    # additions in a fixed order: any machine, whatever its BLAS or CPU, gives these bits.
    rng = np.random.default_rng(seed)
    n_clusters = int(rng.integers(3, 300))
    codes, counts = random_draws(rng, 2 * n_clusters + 5, n_clusters, 40)
    values = rng.random((3, len(codes))) * 10.0 ** rng.integers(-3, 3, size=(3, 1))
    totals = [[0.0] * n_clusters for _ in range(3)]
    for item, cluster in enumerate(codes.tolist()):
        for key in range(3):
            totals[key][cluster] += float(values[key, item])
    expected = [
        [
            pairwise_sum([t * float(c) for t, c in zip(totals[key], counts[row].tolist())])
            for row in range(len(counts))
        ]
        for key in range(3)
    ]
    assert cluster_resample_sums(values, codes, counts).tolist() == expected


@pytest.mark.parametrize("seed", range(3))
def test_sums_equal_fsum_of_the_items_spelt_out(seed: int) -> None:
    rng = np.random.default_rng(20 + seed)
    codes, counts = random_draws(rng, 300, 60, 40)
    values = rng.random((2, 300))
    got = cluster_resample_sums(values, codes, counts)
    for row in range(40):
        items = [i for i in range(300) for _ in range(int(counts[row, codes[i]]))]
        for key in range(2):
            exact = math.fsum(values[key, items].tolist())
            assert got[key, row] == pytest.approx(exact, rel=1e-13, abs=1e-13)


def test_sums_do_not_depend_on_the_blas_thread_count() -> None:
    threadpoolctl = pytest.importorskip("threadpoolctl")
    rng = np.random.default_rng(9)
    codes, counts = random_draws(rng, 906, 281, 1000)
    values = rng.random((6, 906))
    evaluation = random_captioning(rng, 906)
    pair_codes = rng.integers(0, 281, size=906)
    pair_codes[:281] = np.arange(281)
    results = []
    for threads in (1, 2, None):
        with threadpoolctl.threadpool_limits(limits=threads, user_api="blas"):
            results.append(
                (
                    cluster_resample_sums(values, codes, counts),
                    evaluation.aggregate_cluster_counts(counts, pair_codes),
                )
            )
    for sums, scores in results[1:]:
        assert np.array_equal(sums, results[0][0])
        assert scores.keys() == results[0][1].keys()
        for key in scores:
            assert np.array_equal(scores[key], results[0][1][key], equal_nan=True), key


def random_captioning(rng: np.random.Generator, n_pairs: int):
    words = ["axial", "t2", "flair", "lesion", "left", "frontal", "mass", "no", "cyst", "edema"]

    def sentence() -> str:
        return " ".join(rng.choice(words, int(rng.integers(1, 9))))

    return prepare_captioning(
        [sentence() for _ in range(n_pairs)],
        [sentence() for _ in range(n_pairs)],
        exclude=["BERTScore-F1"],
    )


# Keys whose resamples are sums of per-pair integers: exact in any order.
INTEGER_KEYS = {"BLEU-4", "BinaryF1", "BinaryF1-lexicon"}


@pytest.mark.parametrize("seed", range(3))
def test_cluster_counts_equal_the_counts_spelt_out_per_pair(seed: int) -> None:
    rng = np.random.default_rng(40 + seed)
    evaluation = random_captioning(rng, 120)
    codes, counts = random_draws(rng, 120, 30, 60)
    counts[0] = 0  # a resample of no pair: NaN, as aggregate_counts says
    ours = evaluation.aggregate_cluster_counts(counts, codes)
    spelt = evaluation.aggregate_counts(counts[:, codes])
    assert ours.keys() == spelt.keys()
    for key in spelt:
        assert np.isnan(ours[key][0]), key
        if key in INTEGER_KEYS:
            assert np.array_equal(ours[key], spelt[key], equal_nan=True), key
        else:
            np.testing.assert_allclose(ours[key], spelt[key], rtol=1e-13, atol=1e-15)


def test_cluster_counts_refuse_bad_input_naming_the_field() -> None:
    evaluation = random_captioning(np.random.default_rng(1), 4)
    codes = np.array([0, 0, 1, 1])
    for counts, labels in [
        (np.array([1, 1]), codes),  # not 2-D
        (np.array([[1, -1]]), codes),  # negative
        (np.array([[0.5, 1.0]]), codes),  # not integers
        (np.array([[1, 1]]), np.array([0, 0, 1])),  # not one code per pair
        (np.array([[1, 1]]), np.array([0, 0, 1, 2])),  # a code without its column
    ]:
        with pytest.raises(NovaInputError, match="counts must be a 2-D array") as caught:
            evaluation.aggregate_cluster_counts(counts, labels)
        assert caught.value.field == "counts"


def fsum_intervals(evaluation, clusters, n_resamples: int, seed: int, confidence: float = 0.95):
    """Intervals of the averaged keys from resamples drawn case by case in a plain loop,
    each mean an ``fsum`` of the drawn pairs' values (the sample-averaged keyword F1s over
    the pairs with a keyword) divided by their number."""
    codes = cluster_codes(clusters, len(clusters)).tolist()
    members: dict[int, list[int]] = {}
    for item, code in enumerate(codes):
        members.setdefault(code, []).append(item)
    per_pair = evaluation.per_pair()
    rng = np.random.default_rng(seed)
    resampled: dict[str, list[float]] = {key: [] for key in per_pair}
    for _ in range(n_resamples):
        drawn = rng.integers(0, len(members), size=len(members))
        items = [i for case in drawn.tolist() for i in members[case]]
        for key, values in per_pair.items():
            kept = [values[i] for i in items if values[i] is not None]
            resampled[key].append(math.fsum(kept) / len(kept) if kept else math.nan)
    tail = (1 - confidence) / 2 * 100
    intervals = {}
    for key, values in resampled.items():
        defined = np.array([v for v in values if not math.isnan(v)])
        low, high = np.percentile(defined, [tail, 100 - tail])
        intervals[key] = (float(low), float(high))
    return intervals


@pytest.mark.parametrize("seed", range(3))
def test_case_intervals_agree_with_fsum_on_random_inputs(seed: int) -> None:
    rng = np.random.default_rng(60 + seed)
    n_cases = int(rng.integers(20, 60))
    clusters = [f"c{case}" for case in range(n_cases) for _ in range(rng.integers(1, 8))]
    clusters = [clusters[i] for i in rng.permutation(len(clusters))]
    evaluation = random_captioning(rng, len(clusters))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BootstrapWarning)
        ours = bootstrap_confidence_intervals(
            evaluation, n_resamples=120, seed=seed, clusters=clusters
        )
    expected = fsum_intervals(evaluation, clusters, 120, seed)
    assert {"ROUGE-L", "ClinicalF1-lexicon"} <= set(expected)
    for key, (low, high) in expected.items():
        assert ours[key][0] == pytest.approx(low, rel=1e-12, abs=1e-12), key
        assert ours[key][1] == pytest.approx(high, rel=1e-12, abs=1e-12), key
