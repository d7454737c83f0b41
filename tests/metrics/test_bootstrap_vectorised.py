"""The vectorised bootstrap path equals the resample-by-resample one, bit for bit.

``aggregate_resamples(indices)`` must give exactly what ``aggregate(indices[row])`` gives
for every row, and the intervals of ``bootstrap_confidence_intervals`` /
``paired_bootstrap`` must not depend on which path ran. The reference is the per-resample
``aggregate`` (the definition), forced by hiding ``aggregate_resamples``.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from novabench.errors import NovaInputError
from novabench.metrics.localization import (
    LOCALIZATION_METRIC_KEYS,
    LocalizationWarning,
    prepare_localization,
)
from novabench.metrics.stats import (
    SupportsResampledAggregate,
    bootstrap_confidence_intervals,
    paired_bootstrap,
)


class PerResampleOnly:
    """The same evaluation with only ``aggregate``: the bootstrap must loop over resamples."""

    def __init__(self, evaluation):
        self._evaluation = evaluation
        self.n_items = evaluation.n_items

    def aggregate(self, indices=None):
        return self._evaluation.aggregate(indices)


def random_localization(rng: np.random.Generator, n_images: int, distinct_scores: bool = False):
    """Small integer boxes so that IoU ties, equal scores and repeated boxes all occur.

    With ``distinct_scores`` every box has its own score (blocks of one detection), as
    models that give confidences produce.
    """
    predictions, references = [], []
    for _ in range(n_images):
        n_gold, n_det = int(rng.integers(0, 4)), int(rng.integers(0, 7))
        gold = rng.integers(0, 20, (n_gold, 4)).astype(float)
        gold[:, 2:] += 1
        det = rng.integers(0, 20, (n_det, 4)).astype(float)
        det[:, 2:] += 1
        if n_det and n_gold and rng.random() < 0.6:  # a near hit, often an exact one
            det[0] = gold[0] + rng.integers(-1, 2, 4)
            det[0, 2:] = np.abs(det[0, 2:]) + 1
        prediction = {"boxes": det.tolist()}
        if distinct_scores:
            prediction["scores"] = rng.random(n_det).tolist()
        elif rng.random() < 0.7:  # else no scores: given order, all ties
            prediction["scores"] = rng.choice([0.1, 0.5, 0.9], n_det).tolist()
        predictions.append(prediction)
        references.append({"boxes": gold.tolist()})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LocalizationWarning)
        return prepare_localization(predictions, references, max_detections=int(rng.integers(1, 6)))


def same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


# Seeds 0 and 1 in the fast suite; seeds 2-5 search further under `make test-slow`.
@pytest.mark.parametrize(
    "seed", [0, 1, *(pytest.param(seed, marks=pytest.mark.slow) for seed in range(2, 6))]
)
def test_localization_resamples_equal_the_per_resample_scores(seed) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(25):
        n_images = int(rng.integers(1, 40))
        evaluation = random_localization(rng, n_images)
        indices = np.sort(rng.integers(0, n_images, (30, n_images)), axis=1)
        many = evaluation.aggregate_resamples(indices)
        assert sorted(many) == sorted(LOCALIZATION_METRIC_KEYS)
        for row, drawn in enumerate(indices):
            one = evaluation.aggregate(drawn)
            mismatched = [key for key in one if not same(one[key], float(many[key][row]))]
            assert not mismatched, (n_images, row, mismatched)


def test_localization_resamples_cover_the_edge_cases() -> None:
    box = [0, 0, 10, 10]
    cases = [
        ([{"boxes": []}, {"boxes": []}], [{"boxes": [box]}, {"boxes": []}]),  # nothing predicted
        ([{"boxes": [box]}, {"boxes": [box]}], [{"boxes": []}, {"boxes": []}]),  # no gold anywhere
        ([{"boxes": [box, box]}], [{"boxes": [box, box]}]),  # duplicates, one image
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LocalizationWarning)
        for predictions, references in cases:
            evaluation = prepare_localization(predictions, references)
            n = evaluation.n_items
            indices = np.sort(np.random.default_rng(0).integers(0, n, (8, n)), axis=1)
            many = evaluation.aggregate_resamples(indices)
            for row, drawn in enumerate(indices):
                one = evaluation.aggregate(drawn)
                assert all(same(one[key], float(many[key][row])) for key in one)


def test_localization_resamples_reject_bad_indices() -> None:
    evaluation = prepare_localization([{"boxes": []}], [{"boxes": [[0, 0, 1, 1]]}])
    with pytest.raises(NovaInputError, match="2-D"):
        evaluation.aggregate_resamples(np.array([0]))
    with pytest.raises(NovaInputError, match=r"\[0, 1\)"):
        evaluation.aggregate_resamples(np.array([[1]]))


def test_the_bootstrap_takes_the_vectorised_path_and_gives_the_same_intervals() -> None:
    evaluation = random_localization(np.random.default_rng(7), 60)
    assert isinstance(evaluation, SupportsResampledAggregate)
    assert not isinstance(PerResampleOnly(evaluation), SupportsResampledAggregate)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fast = bootstrap_confidence_intervals(evaluation, n_resamples=300, seed=5)
        slow = bootstrap_confidence_intervals(PerResampleOnly(evaluation), n_resamples=300, seed=5)
    assert fast.keys() == slow.keys()
    for key in fast:
        assert all(same(a, b) for a, b in zip(fast[key], slow[key])), key


def test_intervals_do_not_depend_on_the_chunk_size(monkeypatch) -> None:
    from novabench.metrics import stats

    evaluation = random_localization(np.random.default_rng(8), 50)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        whole = bootstrap_confidence_intervals(evaluation, n_resamples=200, seed=2)
        monkeypatch.setattr(stats, "_CHUNK_ELEMENTS", 7 * 50)  # chunks of 7 resamples
        chunked = bootstrap_confidence_intervals(evaluation, n_resamples=200, seed=2)
    assert all(all(same(a, b) for a, b in zip(whole[key], chunked[key])) for key in whole)


def test_paired_bootstrap_is_the_same_on_both_paths() -> None:
    rng = np.random.default_rng(9)
    model_a, model_b = random_localization(rng, 45), random_localization(rng, 45)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fast = paired_bootstrap(model_a, model_b, n_resamples=200, seed=1)
        mixed = paired_bootstrap(model_a, PerResampleOnly(model_b), n_resamples=200, seed=1)
    for key, entry in fast.items():
        other = mixed[key]
        assert same(entry["p_value"], other["p_value"]), key
        assert all(same(a, b) for a, b in zip(entry["ci"], other["ci"])), key


@pytest.mark.parametrize("averaging", ["sample", "micro"])
def test_captioning_resamples_equal_the_per_resample_scores(averaging) -> None:
    from novabench.metrics.caption_pairs import random_caption_pairs
    from novabench.metrics.captioning import prepare_captioning

    predictions, references = random_caption_pairs(80, seed=3)
    predictions[:5] = ["", "", "axial", "normal study", "flair hyperintensity"]
    evaluation = prepare_captioning(
        predictions, references, exclude=["BERTScore-F1"], keyword_averaging=averaging
    )
    evaluation.bertscore_f1 = np.random.default_rng(0).random(80)  # stands in for the model
    evaluation.metrics = (*evaluation.metrics, "BERTScore-F1")
    indices = np.sort(np.random.default_rng(1).integers(0, 80, (60, 80)), axis=1)
    indices[0] = 2  # one pair only: keyword and label scores may be undefined
    many = evaluation.aggregate_resamples(indices)
    assert sorted(many) == sorted(evaluation.metrics)
    for row, drawn in enumerate(indices):
        one = evaluation.aggregate(drawn)
        assert all(same(one[key], float(many[key][row])) for key in one), row


def test_diagnosis_resamples_equal_the_per_resample_scores() -> None:
    from novabench.metrics.diagnosis import prepare_diagnosis

    rng = np.random.default_rng(4)
    names = ["glioma", "meningioma", "abscess", "lymphoma", "metastasis"]
    references = [str(rng.choice(names)) for _ in range(70)]
    predictions = [list(rng.choice(names, int(rng.integers(0, 4)))) for _ in range(70)]
    evaluation = prepare_diagnosis(predictions, references)
    indices = np.sort(rng.integers(0, evaluation.n_items, (50, evaluation.n_items)), axis=1)
    many = evaluation.aggregate_resamples(indices)
    for row, drawn in enumerate(indices):
        one = evaluation.aggregate(drawn)
        assert all(same(one[key], float(many[key][row])) for key in one), row
    with pytest.raises(NovaInputError):
        evaluation.aggregate_resamples(np.array([[evaluation.n_items]]))


@pytest.mark.parametrize("distinct_scores", [False, True])
@pytest.mark.parametrize("chunk_elements", [None, 8])
# Seed 0 (every chunking and score kind) in the fast suite; seeds 1 and 2 under `make test-slow`.
@pytest.mark.parametrize(
    "seed", [0, *(pytest.param(seed, marks=pytest.mark.slow) for seed in (1, 2))]
)
def test_both_ways_of_resampling_ap_agree(
    seed, chunk_elements, distinct_scores, monkeypatch
) -> None:
    # aggregate_resamples rebuilds AP for all resamples at once; it must equal the
    # per-resample path of aggregate(), also a few rows at a time.
    from novabench.metrics import localization

    if chunk_elements is not None:
        monkeypatch.setattr(localization, "_CHUNK_ELEMENTS", chunk_elements)
    rng = np.random.default_rng(100 + seed)
    kinds: set[str] = set()  # which kinds of matched block the thresholds held
    for _ in range(20):
        n_images = int(rng.integers(1, 30))
        evaluation = random_localization(rng, n_images, distinct_scores)
        indices = np.sort(rng.integers(0, n_images, (15, n_images)), axis=1)
        rebuilt = evaluation._resampled_precision(evaluation._resample_weights(indices))
        for row, drawn in enumerate(indices):
            one = evaluation.precision_at_recall_points(drawn)
            if one is None:  # no gold box drawn: the rebuild gives NaN there
                one = np.full(rebuilt[row].shape, np.nan)
            assert np.array_equal(rebuilt[row], one, equal_nan=True), (n_images, row)
        n_blocks = len(evaluation._block_start)
        block_of = np.repeat(np.arange(n_blocks), evaluation._block_length)
        keys = set()
        for table, matched in zip(evaluation._match_tables(), evaluation._sorted_matched):
            per_block = np.bincount(block_of[matched], minlength=n_blocks)
            n_full = int(((per_block > 0) & (per_block == evaluation._block_length)).sum())
            kinds |= {"full"} if n_full else set()
            # a run of several adjacent full blocks, read at its end only
            kinds |= {"run"} if len(table.run_block) < n_full else set()
            kinds |= {"partial"} if len(table.partial_block) else set()
            # matches unlike the union's (counted by difference), or like an earlier row's
            kinds |= {"differs"} if len(table.delta_union) else set()
            kinds |= {"repeated"} if table.key in keys and not table.is_empty else set()
            keys.add(table.key)
    # Blocks of one detection are always fully matched; tied scores also give partly
    # matched blocks, whose every copy is an entry.
    common = {"full", "run", "differs", "repeated"}
    assert kinds == (common if distinct_scores else common | {"partial"})


def test_a_key_missing_from_the_fast_path_is_still_bootstrapped() -> None:
    class NewKey(PerResampleOnly):
        """aggregate() gained a key that aggregate_resamples does not give."""

        def aggregate(self, indices=None):
            scores = dict(self._evaluation.aggregate(indices))
            scores["extra"] = scores["hit@50"] / 2
            return scores

        def aggregate_resamples(self, indices):
            return self._evaluation.aggregate_resamples(indices)

    evaluation = random_localization(np.random.default_rng(11), 40)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        intervals = bootstrap_confidence_intervals(NewKey(evaluation), n_resamples=100)
        reference = bootstrap_confidence_intervals(evaluation, n_resamples=100)
    low, high = intervals["extra"]
    assert (low, high) == (reference["hit@50"][0] / 2, reference["hit@50"][1] / 2)


@pytest.mark.parametrize("seed", range(4))
def test_entries_before_each_recall_point_are_counted_as_a_search_would(seed) -> None:
    # _entries_before_points counts; a plain per-point comparison says what it must give.
    from novabench.metrics import localization

    rng = np.random.default_rng(seed)
    for _ in range(30):
        n_rows, n_entries = int(rng.integers(1, 12)), int(rng.integers(1, 60))
        gold = rng.integers(1, 250, (n_rows, 1)).astype(np.float64)
        steps = rng.integers(0, 4, (n_rows, n_entries)) * (rng.random((n_rows, n_entries)) < 0.6)
        counts = np.minimum(np.cumsum(steps, axis=1), gold.astype(np.int64))
        first = localization._first_true_positive_reaching(gold, int(gold.max()))
        expected = np.array(
            [[int((row < point).sum()) for point in points] for row, points in zip(counts, first)]
        )
        found = localization._entries_before_points(counts, localization._points_reached(first))
        assert np.array_equal(found, expected)


@pytest.mark.parametrize("distinct_scores", [False, True])
def test_the_full_set_rebuilt_equals_every_image_expanded_once(distinct_scores) -> None:
    # precision_at_recall_points() takes the rebuild; given every position once, it expands
    # the detections (the reference path). Both must agree bit for bit.
    rng = np.random.default_rng(31 + distinct_scores)
    for _ in range(40):
        n_images = int(rng.integers(1, 50))
        evaluation = random_localization(rng, n_images, distinct_scores)
        rebuilt = evaluation.precision_at_recall_points()
        expanded = evaluation.precision_at_recall_points(np.arange(n_images))
        assert (rebuilt is None) == (expanded is None)
        if rebuilt is not None:
            assert np.array_equal(rebuilt, expanded), n_images


def test_thresholds_with_equal_counts_per_block_but_other_matches_stay_apart() -> None:
    # Three tied predictions on one gold box: at IoU 0.50 the first matches (IoU ~0.52), at
    # 0.55 only the third (IoU ~0.6). Both thresholds count one match in the block, at
    # different ranks, so their precision differs and neither row may copy the other.
    gold = [0.0, 0.0, 10.0, 10.0]
    first = [0.0, 0.0, 10.0, 5.2]  # IoU 0.52
    far = [50.0, 50.0, 10.0, 10.0]
    third = [0.0, 0.0, 10.0, 6.0]  # IoU 0.60
    evaluation = prepare_localization(
        [{"boxes": [first, far, third], "scores": [0.5, 0.5, 0.5]}], [{"boxes": [gold]}]
    )
    rebuilt = evaluation.precision_at_recall_points()
    expanded = evaluation.precision_at_recall_points(np.arange(1))
    assert rebuilt is not None and np.array_equal(rebuilt, expanded)
    assert rebuilt[1, 0] == pytest.approx(1) and rebuilt[2, 0] == pytest.approx(1 / 3)  # .50, .55


def test_localisation_skips_sorting_draws_and_keeps_every_interval(monkeypatch) -> None:
    # Localisation is order_free (it counts draws per image), so its bootstrap rows are left
    # unsorted; forcing the sort must give the very same intervals and paired results.
    from novabench.metrics import stats

    evaluation = random_localization(np.random.default_rng(21), 50)
    other = random_localization(np.random.default_rng(22), 50)
    assert evaluation.order_free
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        unsorted = bootstrap_confidence_intervals(evaluation, n_resamples=300, seed=3)
        paired = paired_bootstrap(evaluation, other, n_resamples=300, seed=3)
        monkeypatch.setattr(stats, "_order_free", lambda evaluation: False)
        sorted_ = bootstrap_confidence_intervals(evaluation, n_resamples=300, seed=3)
        paired_sorted = paired_bootstrap(evaluation, other, n_resamples=300, seed=3)
    assert unsorted.keys() == sorted_.keys()
    assert all(all(map(same, unsorted[key], sorted_[key])) for key in unsorted)
    for key, entry in paired.items():
        assert all(map(same, entry["ci"], paired_sorted[key]["ci"])), key
        assert same(entry["p_value"], paired_sorted[key]["p_value"]), key


def _three_item_evaluations() -> dict[str, object]:
    """One evaluation of each family on three items, for the index boundaries."""
    from novabench.metrics.captioning import prepare_captioning
    from novabench.metrics.diagnosis import prepare_diagnosis

    box = [10.0, 10.0, 20.0, 20.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LocalizationWarning)
        localization = prepare_localization(
            [{"boxes": [box]}, {"boxes": []}, {"boxes": [[200.0, 200.0, 5.0, 5.0]]}],
            [{"boxes": [box]}] * 3,
        )
    return {
        # Top-1 per case, by hand: glioma == glioma (1), abscess != lymphoma (0), none (0).
        "diagnosis": prepare_diagnosis(
            [["glioma"], ["abscess"], []], ["glioma", "lymphoma", "abscess"]
        ),
        # Best IoU per image: 1 (the same box), 0 (no box), 0 (far away).
        "localization": localization,
        "captioning": prepare_captioning(
            ["Axial FLAIR image.", "Sagittal T1.", "Coronal DWI."],
            ["Axial FLAIR image.", "Axial T2.", "Coronal DWI."],
            exclude=["BERTScore-F1"],
        ),
    }


@pytest.mark.parametrize("family", ["diagnosis", "localization", "captioning"])
def test_the_first_and_last_items_are_valid_indices(family) -> None:
    evaluation = _three_item_evaluations()[family]
    for index in (0, 2):
        one = evaluation.aggregate(np.array([index]))
        many = evaluation.aggregate_resamples(np.array([[index]]))
        assert all(same(one[key], float(many[key][0])) for key in one)


@pytest.mark.parametrize(
    "family",
    [
        "diagnosis",
        "localization",
        "captioning",
    ],
)
@pytest.mark.parametrize("index", [3, -1], ids=["n_items", "minus_one"])
def test_aggregate_refuses_an_index_past_either_end(family, index) -> None:
    # numpy would read -1 as the last item and bincount would grow for 3: both must be errors.
    evaluation = _three_item_evaluations()[family]
    with pytest.raises(NovaInputError) as info:
        evaluation.aggregate(np.array([0, index]))
    assert info.value.field == "indices"


@pytest.mark.parametrize("family", ["diagnosis", "localization", "captioning"])
@pytest.mark.parametrize("index", [3, -1], ids=["n_items", "minus_one"])
def test_aggregate_resamples_refuses_an_index_past_either_end(family, index) -> None:
    evaluation = _three_item_evaluations()[family]
    with pytest.raises(NovaInputError) as info:
        evaluation.aggregate_resamples(np.array([[0, index]]))
    assert info.value.field == "indices"


def test_single_items_score_what_they_hold() -> None:
    evaluations = _three_item_evaluations()
    diagnosis, localization = evaluations["diagnosis"], evaluations["localization"]
    assert [diagnosis.aggregate(np.array([i]))["top1-lexicon"] for i in range(3)] == [1.0, 0.0, 0.0]
    assert [localization.aggregate(np.array([i]))["mAP@30"] for i in range(3)] == [1.0, 0.0, 0.0]
    # The last item drawn twice and the first once: 1 hit in 3 draws.
    assert diagnosis.aggregate(np.array([0, 2, 2]))["top1-lexicon"] == pytest.approx(1 / 3)
    assert localization.aggregate(np.array([0, 2, 2]))["mAP@50"] == pytest.approx(1 / 3)


def test_a_one_item_bootstrap_is_that_item_not_nan() -> None:
    from novabench.metrics.diagnosis import prepare_diagnosis

    # Every resample of one item is that item: the interval is its score at both ends.
    box = [10.0, 10.0, 20.0, 20.0]
    diagnosis = prepare_diagnosis([["glioma"]], ["glioma"])
    localization = prepare_localization([{"boxes": [box]}], [{"boxes": [box]}])
    assert bootstrap_confidence_intervals(diagnosis, n_resamples=50, seed=1)["top1-lexicon"] == (
        1.0,
        1.0,
    )
    intervals = bootstrap_confidence_intervals(localization, n_resamples=50, seed=1)
    assert intervals["mAP@30"] == (1.0, 1.0)
    assert intervals["FP30"] == (0.0, 0.0)


@pytest.mark.parametrize("family", ["diagnosis", "localization", "captioning"])
@pytest.mark.parametrize(
    "indices",
    [np.array([0, 1]), np.array([[[0, 1]]])],
    ids=["one_dimensional", "three_dimensional"],
)
def test_aggregate_resamples_wants_rows(family, indices) -> None:
    evaluation = _three_item_evaluations()[family]
    with pytest.raises(NovaInputError, match="2-D") as info:
        evaluation.aggregate_resamples(indices)
    assert info.value.field == "indices"


@pytest.mark.parametrize(
    "family",
    [
        "diagnosis",
        "localization",
        "captioning",
    ],
)
def test_aggregate_resamples_refuses_positions_that_are_not_integers(family) -> None:
    evaluation = _three_item_evaluations()[family]
    with pytest.raises(NovaInputError) as info:
        evaluation.aggregate_resamples(np.array([[0.0, 1.7]]))
    assert info.value.field == "indices"


@pytest.mark.parametrize("family", ["diagnosis", "localization", "captioning"])
def test_an_empty_resample_is_nan_without_a_numpy_warning(family) -> None:
    evaluation = _three_item_evaluations()[family]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's "Mean of empty slice" would be a RuntimeWarning
        one = evaluation.aggregate(np.array([], dtype=np.int64))
        many = evaluation.aggregate_resamples(np.zeros((2, 0), dtype=np.int64))
    assert one and all(math.isnan(value) for value in one.values())
    assert all(np.isnan(values).all() and len(values) == 2 for values in many.values())


@pytest.mark.parametrize("seed", range(3))
def test_aggregate_without_coco_ap_keeps_every_other_key_bit_for_bit(seed) -> None:
    # The breakdowns' and human reference's point scores skip COCO AP (no interval is given
    # to it there): every other key must be exactly what the full aggregate gives.
    from novabench.metrics.localization import COCO_AP_KEYS

    rng = np.random.default_rng(seed)
    for _ in range(25):
        n_images = int(rng.integers(1, 30))
        evaluation = random_localization(rng, n_images)
        for indices in (None, np.sort(rng.integers(0, n_images, n_images))):
            full = evaluation.aggregate(indices)
            without = evaluation.aggregate(indices, coco_ap=False)
            assert list(without) == [key for key in full if key not in COCO_AP_KEYS]
            assert all(same(without[key], full[key]) for key in without)


# Seed 0 in the fast suite; seeds 1-3 search further under `make test-slow` (suite28).
@pytest.mark.parametrize(
    "seed", [0, *(pytest.param(seed, marks=pytest.mark.slow) for seed in range(1, 4))]
)
def test_resamples_of_a_group_equal_those_of_its_positions(seed) -> None:
    # A breakdown group's draws are counted over its own images; every key must equal the
    # resamples of the same images given as positions in the whole set.
    rng = np.random.default_rng(seed)
    for _ in range(20):
        n_images = int(rng.integers(2, 40))
        evaluation = random_localization(rng, n_images)
        group = np.flatnonzero(rng.random(n_images) < 0.5)
        if not len(group):
            group = np.array([int(rng.integers(0, n_images))])
        places = np.sort(rng.integers(0, len(group), (25, len(group))), axis=1)
        for coco_ap in (False, True):
            expected = evaluation.aggregate_resamples(group[places], coco_ap=coco_ap)
            got = evaluation.aggregate_resamples(places, coco_ap=coco_ap, positions=group)
            assert list(got) == list(expected)
            for key in got:
                assert all(map(same, got[key].tolist(), expected[key].tolist())), key


@pytest.mark.parametrize(
    "positions, places",
    [
        ([2, 1], [[0, 1]]),  # not sorted
        ([1, 1], [[0, 1]]),  # repeated
        ([0, 5], [[0, 1]]),  # past the last image
        ([0, 1], [[0, 2]]),  # a place past the group
        ([0, 1], [[-1, 0]]),
    ],
)
def test_group_resamples_refuse_bad_positions_or_places(positions, places) -> None:
    evaluation = prepare_localization(
        [{"boxes": [[0, 0, 4, 4]]}] * 3, [{"boxes": [[0, 0, 4, 4]]}] * 3
    )
    with pytest.raises(NovaInputError):
        evaluation.aggregate_resamples(
            np.array(places), coco_ap=False, positions=np.array(positions)
        )


@pytest.mark.parametrize("averaging", ["sample", "micro"])
def test_a_caption_subset_scores_what_the_whole_scores_on_its_pairs(averaging) -> None:
    # Breakdown groups are resampled on the subset's own statistics: each key, point and
    # resampled, must equal the whole evaluation's on the same pairs, bit for bit.
    from novabench.metrics.captioning import prepare_captioning

    words = ["axial", "flair", "cyst", "mass", "oedema", "left", "frontal", "no", "lesion"]
    rng = np.random.default_rng(7)
    predictions = [" ".join(rng.choice(words, int(rng.integers(0, 7)))) for _ in range(60)]
    references = [" ".join(rng.choice(words, int(rng.integers(1, 7)))) for _ in range(60)]
    evaluation = prepare_captioning(
        predictions, references, exclude=["BERTScore-F1"], keyword_averaging=averaging
    )
    for _ in range(10):
        group = np.flatnonzero(rng.random(60) < 0.3)
        subset = evaluation.subset(group)
        assert subset.n_items == len(group)
        places = np.sort(rng.integers(0, len(group), (20, len(group))), axis=1)
        expected = evaluation.aggregate_resamples(group[places])
        got = subset.aggregate_resamples(places)
        for key in expected:
            assert all(map(same, got[key].tolist(), expected[key].tolist())), key
        point, whole = subset.aggregate(), evaluation.aggregate(group)
        assert all(same(point[key], whole[key]) for key in whole)
