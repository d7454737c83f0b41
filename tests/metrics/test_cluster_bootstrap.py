"""The case (cluster) bootstrap: whole cases resampled, every image of a drawn case taken.

The reference is a plain loop written here from the rule the module docstring of
``novabench.metrics.stats`` states: clusters numbered in the order they first appear, one
``rng.integers(0, n_clusters, size=n_clusters)`` per resample from
``numpy.random.default_rng(seed)``, the drawn clusters' items in item order (each as often
as its cluster is drawn), scored with the evaluation's own ``aggregate``, and numpy's
percentiles of the defined values.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from novabench.errors import NovaInputError
from novabench.metrics.captioning import prepare_captioning
from novabench.metrics.localization import prepare_localization
from novabench.metrics.stats import (
    BootstrapWarning,
    bootstrap_confidence_intervals,
    cluster_codes,
    paired_bootstrap,
)

from .test_bootstrap_vectorised import random_localization


def random_cases(rng: np.random.Generator, n_cases: int) -> list[str]:
    """Case ids of the images, 1 to 6 images a case; cases shuffled so that a case's
    images are not always next to each other (the rule must not depend on it)."""
    labels = [f"case{case:04d}" for case in range(n_cases) for _ in range(rng.integers(1, 7))]
    return [labels[i] for i in rng.permutation(len(labels))]


def loop_resamples(evaluation, clusters, n_resamples: int, seed: int) -> list[dict]:
    """Each resample's scores, drawn case by case in a plain loop."""
    first_seen: list[str] = []
    for label in clusters:
        if label not in first_seen:
            first_seen.append(label)
    members = {label: [i for i, c in enumerate(clusters) if c == label] for label in first_seen}
    rng = np.random.default_rng(seed)
    scores = []
    for _ in range(n_resamples):
        drawn = rng.integers(0, len(first_seen), size=len(first_seen))
        items = sorted(i for case in drawn for i in members[first_seen[case]])
        scores.append(evaluation.aggregate(np.array(items, dtype=np.int64)))
    return scores


def loop_intervals(evaluation, clusters, n_resamples: int, seed: int, confidence: float = 0.95):
    point = {k: v for k, v in evaluation.aggregate().items() if isinstance(v, float)}
    resampled = loop_resamples(evaluation, clusters, n_resamples, seed)
    tail = (1 - confidence) / 2 * 100
    intervals = {}
    for key, value in point.items():
        values = np.array([scores[key] for scores in resampled])
        values = values[~np.isnan(values)]
        if math.isnan(value) or len(values) == 0:
            intervals[key] = (math.nan, math.nan)
        else:
            low, high = np.percentile(values, [tail, 100 - tail])
            intervals[key] = (float(low), float(high))
    return intervals


def same(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return all((math.isnan(x) and math.isnan(y)) or x == y for x, y in zip(a, b))


def close(a: tuple[float, float], b: tuple[float, float], rel: float = 1e-12) -> bool:
    """Equal to float rounding: a case bootstrap sums a captioning resample's float values
    per case (``cluster_resample_sums``), not pair by pair as ``aggregate`` does."""
    return all(
        (math.isnan(x) and math.isnan(y)) or math.isclose(x, y, rel_tol=rel, abs_tol=rel)
        for x, y in zip(a, b)
    )


# Captioning keys whose case-bootstrap resamples are sums of per-pair integers: exact.
CAPTION_INTEGER_KEYS = {"BLEU-4", "BinaryF1", "BinaryF1-lexicon"}


class RowsOnly:
    """The evaluation without ``aggregate_counts``: the bootstrap must give it rows of item
    positions (blocks of equal length) instead of draw counts."""

    def __init__(self, evaluation):
        self._evaluation = evaluation
        self.n_items = evaluation.n_items
        self.order_free = getattr(evaluation, "order_free", False)

    def aggregate(self, indices=None):
        return self._evaluation.aggregate(indices)

    def aggregate_resamples(self, indices):
        return self._evaluation.aggregate_resamples(indices)


def random_captioning(rng: np.random.Generator, n_pairs: int):
    words = ["axial", "t2", "flair", "lesion", "left", "frontal", "mass", "no", "cyst", "edema"]

    def sentence() -> str:
        return " ".join(rng.choice(words, int(rng.integers(1, 8))))

    return prepare_captioning(
        [sentence() for _ in range(n_pairs)],
        [sentence() for _ in range(n_pairs)],
        exclude=["BERTScore-F1"],
    )


@pytest.mark.parametrize("seed", range(4))
def test_localization_case_intervals_equal_a_plain_loop_over_drawn_cases(seed: int) -> None:
    rng = np.random.default_rng(seed)
    clusters = random_cases(rng, int(rng.integers(2, 15)))
    evaluation = random_localization(rng, len(clusters))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BootstrapWarning)
        ours = bootstrap_confidence_intervals(
            evaluation, n_resamples=60, seed=seed, clusters=clusters
        )
        rows = bootstrap_confidence_intervals(
            RowsOnly(evaluation), n_resamples=60, seed=seed, clusters=clusters
        )
    expected = loop_intervals(evaluation, clusters, 60, seed)
    assert ours.keys() == expected.keys()  # COCO AP included
    for key in expected:
        assert same(ours[key], expected[key]), key
        assert same(rows[key], expected[key]), key


@pytest.mark.parametrize("seed", range(3))
def test_captioning_case_intervals_equal_a_plain_loop_over_drawn_cases(seed: int) -> None:
    # Captioning takes draw counts (each the sorted row); without them, rows of varying
    # length go to aggregate_resamples in blocks of equal length.
    rng = np.random.default_rng(10 + seed)
    clusters = random_cases(rng, int(rng.integers(2, 12)))
    evaluation = random_captioning(rng, len(clusters))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BootstrapWarning)  # BinaryF1 without labels drawn
        ours = bootstrap_confidence_intervals(
            evaluation, n_resamples=50, seed=seed, clusters=clusters
        )
        rows = bootstrap_confidence_intervals(
            RowsOnly(evaluation), n_resamples=50, seed=seed, clusters=clusters
        )
    expected = loop_intervals(evaluation, clusters, 50, seed)
    assert set(expected) >= {"BLEU-4", "ROUGE-L"}
    for key in expected:
        # Draw counts per case: integer sums exact, float sums (means, sample-averaged
        # keyword F1s) per case, to float rounding (test_cluster_sums.py holds them to fsum).
        if key in CAPTION_INTEGER_KEYS:
            assert same(ours[key], expected[key]), key
        else:
            assert close(ours[key], expected[key]), key
        assert same(rows[key], expected[key]), key


def test_paired_case_bootstrap_draws_the_same_cases_for_both_models() -> None:
    rng = np.random.default_rng(7)
    clusters = random_cases(rng, 9)
    a, b = (random_localization(rng, len(clusters)) for _ in range(2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BootstrapWarning)
        ours = paired_bootstrap(a, b, n_resamples=80, seed=3, clusters=clusters)["mAP@30"]
    resampled_a = loop_resamples(a, clusters, 80, 3)
    resampled_b = loop_resamples(b, clusters, 80, 3)
    differences = np.array([x["mAP@30"] - y["mAP@30"] for x, y in zip(resampled_a, resampled_b)])
    observed = a.aggregate()["mAP@30"] - b.aggregate()["mAP@30"]
    assert ours["ci"] == tuple(float(v) for v in np.percentile(differences, [2.5, 97.5]))
    extreme = np.count_nonzero(np.abs(differences - observed) >= abs(observed))
    assert ours["p_value"] == (1 + extreme) / 81


def test_cases_of_one_image_give_the_image_bootstrap() -> None:
    rng = np.random.default_rng(5)
    evaluation = random_localization(rng, 30)
    captions = random_captioning(rng, 30)
    # Names out of order: clusters are numbered as they first appear, so still 0, 1, 2...
    singletons = [f"case{i:04d}" for i in rng.permutation(30)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BootstrapWarning)
        for prepared in (evaluation, captions):
            by_image = bootstrap_confidence_intervals(prepared, n_resamples=40, seed=2)
            by_case = bootstrap_confidence_intervals(
                prepared, n_resamples=40, seed=2, clusters=singletons
            )
            if prepared is evaluation:
                assert by_case == by_image
            else:  # captioning's float sums per case (of one image): to float rounding
                assert by_case.keys() == by_image.keys()
                for key in by_image:
                    assert close(by_case[key], by_image[key]), key
                    if key in CAPTION_INTEGER_KEYS:
                        assert same(by_case[key], by_image[key]), key


def test_images_of_one_case_that_agree_widen_the_interval() -> None:
    # 12 cases of 6 images; in each case every image hits or every image misses (half the
    # cases). Images drawn one by one: sd of the rate about sqrt(0.25 / 72) = 0.059; whole
    # cases: sqrt(0.25 / 12) = 0.144, sqrt(6) = 2.4 times wider.
    box = [10.0, 10.0, 20.0, 20.0]
    gold, predictions, clusters = [], [], []
    for case in range(12):
        for _ in range(6):
            gold.append({"boxes": [box]})
            predictions.append({"boxes": [box] if case % 2 else []})
            clusters.append(f"case{case:04d}")
    evaluation = prepare_localization(predictions, gold)
    assert evaluation.aggregate()["mAP@30"] == 0.5
    low_i, high_i = bootstrap_confidence_intervals(evaluation, n_resamples=2000)["mAP@30"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BootstrapWarning)  # FP30: a resample of no boxes
        low_c, high_c = bootstrap_confidence_intervals(
            evaluation, n_resamples=2000, clusters=clusters
        )["mAP@30"]
    assert low_c < low_i < 0.5 < high_i < high_c
    # Percentiles of rates in steps of 1/72 and 1/12: the ratio is near, not at, 2.4.
    assert (high_c - low_c) >= 1.8 * (high_i - low_i)
    # Whole cases: every resampled rate is a count of hit cases over 12.
    assert round(low_c * 12, 9) % 1 == 0 and round(high_c * 12, 9) % 1 == 0


def test_clusters_must_name_one_case_per_item() -> None:
    evaluation = prepare_localization([{"boxes": []}] * 3, [{"boxes": [[0, 0, 5, 5]]}] * 3)
    with pytest.raises(NovaInputError, match="one cluster per item: 2 for 3 items"):
        bootstrap_confidence_intervals(evaluation, n_resamples=5, clusters=["a", "b"])
    with pytest.raises(NovaInputError, match="one cluster per item"):
        paired_bootstrap(evaluation, evaluation, n_resamples=5, clusters=["a"] * 4)


def test_cluster_codes_number_cases_as_they_first_appear() -> None:
    assert cluster_codes(["b", "a", "b", "c", "a"], 5).tolist() == [0, 1, 0, 2, 1]


def test_localization_draw_counts_score_as_the_repeated_images() -> None:
    rng = np.random.default_rng(11)
    evaluation = random_localization(rng, 20)
    counts = rng.integers(0, 4, (15, 20))
    many = evaluation.aggregate_counts(counts)
    for row, weights in enumerate(counts):
        one = evaluation.aggregate(np.repeat(np.arange(20), weights))
        for key, value in one.items():
            assert (math.isnan(value) and math.isnan(many[key][row])) or value == many[key][row]
    with pytest.raises(NovaInputError, match="non-negative integers, 20 columns"):
        evaluation.aggregate_counts(-counts)


def test_localization_draw_counts_past_float32s_exact_range_stay_exact() -> None:
    # Sums are taken in float32 only while every partial sum stays below 2**24; a row of
    # 2**24 + 5 draws (an odd count float32 cannot hold) goes to float64, still exact: as
    # the repeated images score. The second row stays in float32's range.
    rng = np.random.default_rng(5)
    evaluation = random_localization(rng, 8)
    counts = np.array([[(1 << 24) + 1, 1, 0, 2, 0, 0, 1, 0], [3, 0, 1 << 19, 0, 5, 7, 0, 1]])
    many = evaluation.aggregate_counts(counts, coco_ap=False)
    for row, weights in enumerate(counts):
        one = evaluation.aggregate(np.repeat(np.arange(8), weights), coco_ap=False)
        for key, value in one.items():
            assert (math.isnan(value) and math.isnan(many[key][row])) or value == many[key][row]


def test_compute_task_all_resamples_the_cases_its_rows_name() -> None:
    from novabench.metrics.tasks import compute_task

    box = [0.0, 0.0, 10.0, 10.0]
    # case0001: 3 images, all found; case0002: 1 image, missed; case0003: 2 images, missed.
    cases = ["case0001"] * 3 + ["case0002"] + ["case0003"] * 2
    references = [
        {
            "boxes": [box],
            "caption": "axial flair lesion",
            "final_diagnosis": "glioma",
            "case_id": case,
            "clinical_history": "headache",
        }
        for case in cases
    ]
    predictions = [
        {"boxes": [box] if case == "case0001" else [], "caption": "axial flair", "diagnoses": []}
        for case in cases
    ]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = compute_task(
            "all",
            predictions,
            references,
            n_resamples=200,
            seed=1,
            exclude=["BERTScore-F1"],
        )
    assert not [w for w in caught if "one by one" in str(w.message)]  # cases, all of them
    localization = result["localization"]
    assert localization["bootstrap_unit"] == "case"
    assert result["captioning"]["bootstrap_unit"] == "case"
    assert result["diagnosis"]["bootstrap_unit"] == "case"
    hits = [1.0, 1.0, 1.0, 0.0, 0.0, 0.0]
    rng = np.random.default_rng(1)
    members = {0: [0, 1, 2], 1: [3], 2: [4, 5]}
    rates = []
    for _ in range(200):
        items = [i for case in rng.integers(0, 3, size=3) for i in members[int(case)]]
        rates.append(sum(hits[i] for i in items) / len(items))
    assert localization["confidence_intervals"]["mAP@30"] == [
        float(v) for v in np.percentile(rates, [2.5, 97.5])
    ]


def test_compute_task_of_one_image_task_resamples_images_and_says_so() -> None:
    from novabench.metrics.tasks import compute_task

    box = [0.0, 0.0, 10.0, 10.0]
    with pytest.warns(UserWarning, match="resample images one by one") as caught:
        result = compute_task(
            "localization", [{"boxes": [box]}] * 4, [{"boxes": [box]}] * 4, n_resamples=20
        )
    assert len([w for w in caught if "one by one" in str(w.message)]) == 1
    assert result["bootstrap_unit"] == "image"
    assert "bootstrap_unit" not in compute_task(
        "localization", [{"boxes": [box]}], [{"boxes": [box]}]
    )


@pytest.mark.parametrize("coco_ap", [True, False])
def test_localization_draw_counts_of_a_group_score_as_its_repeated_images(coco_ap: bool) -> None:
    rng = np.random.default_rng(12)
    evaluation = random_localization(rng, 25)
    group = np.array([1, 4, 5, 9, 17, 20])
    counts = rng.integers(0, 3, (12, len(group)))
    many = evaluation.aggregate_counts(counts, coco_ap=coco_ap, positions=group)
    for row, weights in enumerate(counts):
        one = evaluation.aggregate(np.repeat(group, weights), coco_ap=coco_ap)
        assert one.keys() == many.keys()
        for key, value in one.items():
            assert (math.isnan(value) and math.isnan(many[key][row])) or value == many[key][row]


@pytest.mark.parametrize("coco_ap", [True, False])
@pytest.mark.parametrize("in_group", [False, True])
def test_localization_cluster_counts_score_as_their_images_repeated(
    coco_ap: bool, in_group: bool
) -> None:
    # Draw counts per case (cases of 1-6 images, not next to each other) must score as
    # every image of each case repeated as often as its case.
    rng = np.random.default_rng(14 + in_group)
    clusters = random_cases(rng, 9)
    evaluation = random_localization(rng, len(clusters) + 4 * in_group)
    group = np.arange(2, 2 + len(clusters)) if in_group else None
    places = group if group is not None else np.arange(len(clusters))
    codes = cluster_codes(clusters, len(clusters))
    counts = rng.integers(0, 4, (15, 9))
    counts[2] = 0  # no case drawn: undefined
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        many = evaluation.aggregate_cluster_counts(counts, codes, coco_ap=coco_ap, positions=group)
    for row, weights in enumerate(counts):
        one = evaluation.aggregate(np.repeat(places, weights[codes]), coco_ap=coco_ap)
        assert one.keys() == many.keys()
        for key, value in one.items():
            assert (math.isnan(value) and math.isnan(many[key][row])) or value == many[key][row]


def test_localization_cluster_counts_refuse_codes_that_do_not_fit() -> None:
    evaluation = random_localization(np.random.default_rng(3), 4)
    counts = np.ones((2, 3), dtype=np.int64)
    for codes in (np.array([0, 1, 2]), np.array([0, 1, 2, 3]), np.array([0, -1, 1, 2])):
        with pytest.raises(NovaInputError, match="one cluster number per image"):
            evaluation.aggregate_cluster_counts(counts, codes)
    with pytest.raises(NovaInputError, match="non-negative integers"):
        evaluation.aggregate_cluster_counts(-counts, np.array([0, 1, 2, 2]))


def test_case_intervals_without_coco_ap_equal_a_plain_loop_over_drawn_cases() -> None:
    # A breakdown cell's and the human reference's evaluation: COCO AP left out, so the
    # bootstrap gives it draw counts per case; the intervals are the loop's, bit for bit.
    from novabench.report.breakdowns import result_without_coco_ap

    rng = np.random.default_rng(8)
    clusters = random_cases(rng, 11)
    evaluation = result_without_coco_ap(random_localization(rng, len(clusters)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BootstrapWarning)
        ours = bootstrap_confidence_intervals(evaluation, n_resamples=60, seed=4, clusters=clusters)
    expected = loop_intervals(evaluation, clusters, 60, 4)
    assert ours.keys() == expected.keys() and "COCO-AP@30" not in ours
    for key in expected:
        assert same(ours[key], expected[key]), key


@pytest.mark.parametrize("averaging", ["sample", "micro"])
def test_captioning_draw_counts_score_as_the_sorted_rows(averaging: str) -> None:
    rng = np.random.default_rng(13)
    words = ["axial", "t2", "flair", "lesion", "left", "mass", "no", "cyst", "edema", "dwi"]

    def sentence() -> str:
        return " ".join(rng.choice(words, int(rng.integers(1, 9))))

    evaluation = prepare_captioning(
        [sentence() for _ in range(18)],
        [sentence() for _ in range(18)],
        exclude=["BERTScore-F1"],
        keyword_averaging=averaging,
    )
    counts = rng.integers(0, 3, (20, 18))
    counts[3] = 0  # a resample of no pair: undefined
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        many = evaluation.aggregate_counts(counts)
    for row, weights in enumerate(counts):
        one = evaluation.aggregate(np.repeat(np.arange(18), weights))
        assert one.keys() == many.keys()
        for key, value in one.items():
            assert (math.isnan(value) and math.isnan(many[key][row])) or value == many[key][row]
    with pytest.raises(NovaInputError, match="non-negative integers, 18 columns"):
        evaluation.aggregate_counts(counts[:, :5])


def test_captioning_draw_counts_of_long_rows_of_many_lengths_score_as_the_sorted_rows() -> None:
    # Rows of hundreds of pairs, of many lengths in one call: numpy sums a row of more than
    # 128 values pairwise, splitting it by its length, so a mean taken over a padded or
    # reordered row would differ in the last bits; each must equal aggregate's own mean.
    rng = np.random.default_rng(21)
    words = ["axial", "t2", "flair", "lesion", "left", "mass", "no", "cyst", "edema", "dwi"]

    def sentence() -> str:
        return " ".join(rng.choice(words, int(rng.integers(1, 12))))

    n_pairs = 300
    evaluation = prepare_captioning(
        [sentence() for _ in range(n_pairs)],
        [sentence() for _ in range(n_pairs)],
        exclude=["BERTScore-F1"],
    )
    # Whole cases drawn, as the bootstrap gives them: C-ordered rows of 0 to ~900 pairs.
    codes = np.sort(rng.integers(0, 90, n_pairs))
    drawn = rng.integers(0, 90, (40, 90))
    cluster_counts = np.stack([np.bincount(row, minlength=90) for row in drawn])
    counts = cluster_counts[:, codes]
    counts[:5] *= rng.integers(0, 4, (5, 1))  # some rows empty, some very long
    assert len(np.unique(counts.sum(axis=1))) > 20
    assert counts.sum(axis=1).max() > 512
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        many = evaluation.aggregate_counts(counts)
        fortran = evaluation.aggregate_counts(np.asfortranarray(counts))
    for row, weights in enumerate(counts):
        one = evaluation.aggregate(np.repeat(np.arange(n_pairs), weights))
        for key, value in one.items():
            for result in (many, fortran):
                got = result[key][row]
                assert (math.isnan(value) and math.isnan(got)) or value == got, (key, row)
