"""Localisation behaviours that the mutation check (scripts/mutation_check.py) found unpinned.

Each test names the behaviour, not the mutant; every expected number is worked out by hand in
the comment beside it (COCO's rules as pycocotools' COCOeval applies them).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from novabench.errors import NovaInputError
from novabench.metrics.localization import (
    LocalizationWarning,
    coco_average_precision,
    prepare_localization,
    prepare_localization_from_arrays,
    score_localization,
)

GOLD = [0.0, 0.0, 10.0, 10.0]
# Shifted by half its width: intersection 5 x 10 = 50, union 150, IoU 1/3 (between 0.30 and 0.50).
THIRD = [5.0, 0.0, 10.0, 10.0]


def test_coco_ap_at_30_reads_the_030_run_not_the_050_one() -> None:
    # One image, one prediction at IoU 1/3: a true positive at 0.30 (precision 1 / (1 + eps)
    # at recall 1, so every recall point reads ~1), a false positive at 0.50 (AP 0).
    evaluation = prepare_localization([{"boxes": [THIRD]}], [{"boxes": [GOLD]}])
    scores = evaluation.aggregate()
    assert scores["COCO-AP@30"] == pytest.approx(1.0, abs=1e-12)
    assert scores["COCO-AP@50"] == 0.0
    resampled = evaluation.aggregate_resamples(np.array([[0]]))
    assert resampled["COCO-AP@30"].tolist() == pytest.approx([1.0], abs=1e-12)
    assert resampled["COCO-AP@50"].tolist() == [0.0]


def test_per_image_hits_at_30_and_50_differ_for_an_iou_between_them() -> None:
    evaluation = prepare_localization(
        [{"boxes": [THIRD]}, {"boxes": [GOLD]}], [{"boxes": [GOLD]}, {"boxes": [GOLD]}]
    )
    # Image 0: IoU 1/3 reaches 0.30 only; image 1: IoU 1 reaches both.
    assert evaluation.per_image_hits() == {"hit_30": [True, True], "hit_50": [False, True]}


def test_iou_one_threshold_accepts_a_box_equal_but_for_float_rounding() -> None:
    # A model's answer [ymin, xmin, ymax, xmax] = [250, 100, 700, 300] in 0..1000 on a 512 px
    # image, rescaled in floating point, gives xywh [51.2, 128.0, 102.39999999999999,
    # 230.39999999999998]: the gold box [51.2, 128.0, 102.4, 230.4] up to rounding, IoU
    # 0.9999999999999997. COCO compares with min(t, 1 - 1e-10), so at t = 1.0 it is a match:
    # one true positive of one gold box, AP 1 / (1 + eps).
    scale = 512 / 1000
    ymin, xmin, ymax, xmax = 250, 100, 700, 300
    predicted = [
        xmin * scale,
        ymin * scale,
        xmax * scale - xmin * scale,
        ymax * scale - ymin * scale,
    ]
    gold = [51.2, 128.0, 102.4, 230.4]
    assert predicted != gold  # the rounding this test is about
    ap = coco_average_precision([{"boxes": [predicted]}], [{"boxes": [gold]}], iou_thresholds=[1.0])
    assert ap == pytest.approx(1.0, abs=1e-12)


def test_a_recall_point_whose_product_rounds_up_reads_the_earlier_true_positive() -> None:
    # 25 images with one gold box each. Ranked by score: 7 correct boxes, one box far from any
    # gold box (image 0), then the 18 other correct boxes. Precision at true positive t is
    # t / t for t <= 7 and t / (t + 1) after, so the envelope is ~1 up to recall 7/25 and
    # 25/26 beyond. Recall point 0.28 needs 7 true positives (7 / 25 >= 0.28), although
    # 0.28 * 25 is 7.000000000000001 in floating point: 29 points (0.00..0.28) read 1.
    # (pycocotools' COCOeval gives the same mean on this set.)
    gold = [40.0, 40.0, 30.0, 30.0]
    predictions = [{"boxes": [gold], "scores": [0.99 - 0.01 * image]} for image in range(7)]
    predictions += [{"boxes": [gold], "scores": [0.8 - 0.01 * image]} for image in range(18)]
    predictions[0] = {"boxes": [gold, [300.0, 300.0, 20.0, 20.0]], "scores": [0.99, 0.9]}
    assert 0.28 * 25 > 7
    scores = prepare_localization(predictions, [{"boxes": [gold]}] * 25).aggregate()
    assert scores["COCO-AP@50"] == pytest.approx((29 * 1 + 72 * 25 / 26) / 101, abs=1e-12)


def test_a_recall_point_just_above_its_fraction_needs_one_more_true_positive() -> None:
    # 20 images with one gold box each. Ranked by score: 19 correct boxes, one box far from
    # any gold box (image 0), then the last correct box. Precision is 1 through 19 true
    # positives and 20/21 at the 20th. COCO's recall point 0.95 is 0.9500000000000001, above
    # 19/20 = 0.95, so like 0.96..1.00 it needs all 20: 95 points read 1, 6 read 20/21.
    # (pycocotools' COCOeval gives the same mean on this set.)
    gold = [40.0, 40.0, 30.0, 30.0]
    predictions = [{"boxes": [gold], "scores": [0.99 - 0.01 * image]} for image in range(19)]
    predictions.append({"boxes": [gold], "scores": [0.5]})
    predictions[0] = {"boxes": [gold, [300.0, 300.0, 20.0, 20.0]], "scores": [0.99, 0.6]}
    assert np.linspace(0.0, 1.0, 101)[95] > 19 / 20
    scores = prepare_localization(predictions, [{"boxes": [gold]}] * 20).aggregate()
    assert scores["COCO-AP@50"] == pytest.approx((95 * 1 + 6 * 20 / 21) / 101, abs=1e-12)


def _runaway_answer(correct_at: int) -> list[list[float]]:
    """A looping model's 101 boxes in one image: misses everywhere but at position ``correct_at``."""
    boxes = [[300.0 + position, 300.0, 8.0, 8.0] for position in range(101)]
    boxes[correct_at - 1] = list(GOLD)
    return boxes


def _default_cut_scores(correct_at: int) -> dict[str, float]:
    """COCO-AP@50 by every public entry point left at its default max_detections."""
    boxes = _runaway_answer(correct_at)
    with pytest.warns(UserWarning, match="beyond max_detections=100"):
        prepared = prepare_localization([{"boxes": boxes}], [{"boxes": [GOLD]}])
    with pytest.warns(UserWarning, match="beyond max_detections=100"):
        from_arrays = prepare_localization_from_arrays(
            np.array(boxes), np.array([101]), np.array([GOLD]), np.array([1])
        )
    with pytest.warns(UserWarning, match="beyond max_detections=100"):
        scored = score_localization([{"boxes": boxes}], [{"boxes": [GOLD]}])
    return {
        "prepare_localization": prepared.aggregate()["COCO-AP@50"],
        "prepare_localization_from_arrays": from_arrays.aggregate()["COCO-AP@50"],
        "score_localization": scored["COCO-AP@50"],
        "coco_average_precision": coco_average_precision(
            [{"boxes": boxes}], [{"boxes": [GOLD]}], iou_thresholds=[0.5]
        ),
    }


def test_every_entry_point_keeps_cocos_100_detections_by_default() -> None:
    # Without scores the given order is the ranking. The gold box given 100th is kept: one
    # true positive at rank 100, precision 1/100 at every recall point, AP 0.01. Given
    # 101st it is cut (COCO's maxDets 100): AP 0.
    for name, value in _default_cut_scores(correct_at=100).items():
        assert value == pytest.approx(0.01, abs=1e-12), name
    assert _default_cut_scores(correct_at=101) == dict.fromkeys(
        [
            "prepare_localization",
            "prepare_localization_from_arrays",
            "score_localization",
            "coco_average_precision",
        ],
        0.0,
    )


def test_ap_of_eleven_images_with_two_tied_boxes_each() -> None:
    # 11 images, each answered with two boxes and no scores: 22 detections in 11 blocks of
    # tied detections (as many blocks as IoU thresholds, the shape of the per-threshold match
    # table). Images 0-5 have the gold box first and a miss second, images 6-10 the reverse.
    # COCO's order is the given one: TP, FP x 2 ... so precision after each true positive t
    # (ranks 1, 3, 5, 7, 9, 11, then 14, 16, 18, 20, 22) is t / rank, and the envelope at
    # recall k/11 is the best precision from the k-th true positive on. (pycocotools'
    # COCOeval gives the same mean on this set.)
    miss = [300.0, 300.0, 8.0, 8.0]
    predictions = [{"boxes": [GOLD, miss]} for _ in range(6)]
    predictions += [{"boxes": [miss, GOLD]} for _ in range(5)]
    evaluation = prepare_localization(predictions, [{"boxes": [GOLD]}] * 11)
    ranks = [1, 3, 5, 7, 9, 11, 14, 16, 18, 20, 22]
    precision = [t / rank for t, rank in enumerate(ranks, 1)]
    envelope = [max(precision[k:]) for k in range(11)]
    # Recall point p needs the first t >= 1 with t / 11 >= p (COCO's searchsorted on recall).
    needed = [next(t for t in range(1, 12) if t / 11 >= point) for point in np.linspace(0, 1, 101)]
    expected = np.mean([envelope[k - 1] for k in needed])
    assert evaluation.aggregate()["COCO-AP@50"] == pytest.approx(expected, abs=1e-12)
    # The per-detection expansion (an independent path) agrees on every threshold's row.
    expanded = evaluation.precision_at_recall_points(np.arange(11))
    assert np.allclose(evaluation.precision_at_recall_points(), expanded, rtol=0, atol=1e-15)


def test_an_iou_of_exactly_one_half_is_a_hit_at_50() -> None:
    # Prediction = the upper half of the gold box: intersection 50, union 100, IoU 0.5 exactly.
    evaluation = prepare_localization([{"boxes": [[0.0, 0.0, 10.0, 5.0]]}], [{"boxes": [GOLD]}])
    assert evaluation.per_image_best_iou == [0.5]
    assert evaluation.per_image_hits() == {"hit_30": [True], "hit_50": [True]}


def test_a_breakdown_group_without_coco_ap_scores_as_on_its_own() -> None:
    # A breakdown group draws 3 of 8 images; without COCO AP only the drawn images' columns
    # are summed. Images: best IoU 1 (hit), 1/3 (hit at 0.30 only), no prediction, and gold-less
    # images with a stray box; each resample must equal aggregate() on the same draws.
    far = [300.0, 300.0, 8.0, 8.0]
    predictions = [{"boxes": [GOLD]}, {"boxes": [THIRD]}, {"boxes": []}, {"boxes": [far]}] * 2
    references = [{"boxes": [GOLD]}, {"boxes": [GOLD]}, {"boxes": [GOLD]}, {"boxes": []}] * 2
    evaluation = prepare_localization(predictions, references)
    rows = np.array([[1, 1, 6], [5, 6, 7], [1, 2, 2], [7, 7, 7]])
    many = evaluation.aggregate_resamples(rows, coco_ap=False)
    for row, drawn in enumerate(rows):
        one = evaluation.aggregate(drawn)
        for name, values in many.items():
            value = float(values[row])
            assert np.isnan(value) if np.isnan(one[name]) else value == one[name], (row, name)
    # By hand, row 0 (images 1, 1, 6): hits at 0.30 in 2 of 3 draws, at 0.50 in 0 of 3.
    assert (many["hit@30"][0], many["hit@50"][0]) == (2 / 3, 0.0)


@pytest.mark.parametrize("coco_ap", [False, True])
@pytest.mark.parametrize(
    ("positions", "places", "field"),
    [
        # A negative first position with a valid last one: numpy would read -1 as the last
        # image, so a group of images [2, 1] would be scored without a word.
        ([-1, 1], [[0, 1]], "positions"),
        ([0, 3], [[0, 1]], "positions"),  # 3 is one past the last of 3 images
        ([0, 1], [0, 1], "indices"),  # one resample given as a flat row, not rows
        ([0, 1], [[0.0, 1.0]], "indices"),  # places as floats, not integers
    ],
)
def test_a_group_resample_refuses_a_position_or_place_it_cannot_read(
    positions: list[int], places: list[object], field: str, coco_ap: bool
) -> None:
    evaluation = prepare_localization([{"boxes": [GOLD]}] * 3, [{"boxes": [GOLD]}] * 3)
    with pytest.raises(NovaInputError) as refused:
        evaluation.aggregate_resamples(
            np.array(places), coco_ap=coco_ap, positions=np.array(positions)
        )
    assert refused.value.field == field


def test_coco_ap_of_a_resample_whose_ranks_reach_two_to_the_31() -> None:
    # The rank sums switch from int32 to int64 when they could pass 2**31 - 1. Image 0 has one
    # gold box and 2**13 predictions equal to it, all of score 1 (one tie block, the first
    # matched, the rest false positives); 2**18 - 1 other images have nothing. A resample
    # drawing image 0 all 2**18 times ranks 2**31 detections: the last rank needs int64.
    # (2**13 boxes, not 2**16 on 2**15 images: the matching visits an image's detections rank
    # by rank, and 2**16 of them cost 1.5 s; the product, and so the branch, is the same.)
    n_images, n_boxes = 2**18, 2**13
    det_counts = np.zeros(n_images, dtype=np.int64)
    det_counts[0] = n_boxes
    gold_counts = np.zeros(n_images, dtype=np.int64)
    gold_counts[0] = 1
    evaluation = prepare_localization_from_arrays(
        np.tile(GOLD, (n_boxes, 1)),
        det_counts,
        np.array([GOLD]),
        gold_counts,
        max_detections=n_boxes,
    )
    resampled = evaluation.aggregate_resamples(np.zeros((1, n_images), dtype=np.int64))
    # Draw j's true positive is the first of its block: true positive t sits at rank
    # (t - 1) * 2**16 + 1, with precision t / (rank + eps), falling as t grows. So the
    # envelope at recall point p is the precision of the first t with t / 2**15 >= p.
    coco_ap = _one_hit_per_block_ap(n_images, n_boxes)
    assert resampled["COCO-AP@50"].tolist() == pytest.approx([coco_ap], rel=1e-12)
    assert resampled["COCO-AP@30"].tolist() == pytest.approx([coco_ap], rel=1e-12)


def test_a_zero_height_gold_box_is_warned_about_and_a_thin_one_is_not() -> None:
    # Example 1's second gold box is 10 px wide and 0 px tall: no prediction can match it.
    predictions = [{"boxes": [GOLD]}, {"boxes": [GOLD]}]
    references = [{"boxes": [GOLD]}, {"boxes": [GOLD, [0.0, 0.0, 10.0, 0.0]]}]
    with pytest.warns(LocalizationWarning) as record:
        prepare_localization(predictions, references)
    assert [str(warning.message) for warning in record] == [
        "1 reference boxes have zero width or height (first: example 1, references.boxes[1]); "
        "no prediction can match them (IoU 0), so they count as missed gold boxes"
    ]
    # One pixel tall (a thin lesion rim) is a real box: no warning.
    with warnings.catch_warnings():
        warnings.simplefilter("error", LocalizationWarning)
        prepare_localization([{"boxes": [GOLD]}], [{"boxes": [[0.0, 0.0, 10.0, 1.0]]}])


def test_a_note_on_references_without_size_names_the_first_of_them() -> None:
    # Three references: example 0 gives width and height, examples 1 and 2 do not. The note
    # counts the two and names the first of them, example 1 (not the last, example 2).
    sized = {"boxes": [GOLD], "width": 480, "height": 480}
    evaluation = prepare_localization(
        [{"boxes": [GOLD]}] * 3, [sized, {"boxes": [GOLD]}, {"boxes": [GOLD]}]
    )
    notes = evaluation.input_notes()
    assert notes[0].startswith(
        "2 of the 3 references give no width and height (first: example 1, references.width/height)"
    )


def test_draw_counts_of_minus_one_are_refused_naming_the_field() -> None:
    evaluation = prepare_localization([{"boxes": [GOLD]}] * 2, [{"boxes": [GOLD]}] * 2)
    for counts in (np.array([[2, -1]]), np.array([[1, 1.0]])):
        with pytest.raises(NovaInputError, match="non-negative integers, 2 columns") as refused:
            evaluation.aggregate_counts(counts)
        assert refused.value.field == "counts"


def test_draw_counts_whose_sums_pass_two_to_the_24_across_images_stay_exact() -> None:
    # Two images, each with one gold box and 99 predictions (the first equal to the gold box,
    # 98 far from it): kept 99, matched 1, false positives 98 per image. A resample drawing
    # them 100,001 and 100,000 times keeps 99 * 200,001 = 19,800,099 predictions: odd, between
    # 2**24 and 2**25, so float32 cannot hold it, although no single image's share (at most
    # 100,001 * 99 = 9,900,099) reaches 2**24. FP30 = 98 * 200,001 / (99 * 200,001) = 98/99
    # exactly (both sums exact, one correctly rounded division).
    far = [[100.0 + i, 100.0, 110.0 + i, 110.0] for i in range(98)]
    evaluation = prepare_localization(
        [{"boxes": [GOLD, *far], "scores": [1.0] + [0.5] * 98}] * 2, [{"boxes": [GOLD]}] * 2
    )
    counted = evaluation.aggregate_counts(np.array([[100_001, 100_000]]), coco_ap=False)
    assert counted["FP30"].tolist() == [98 / 99]
    assert counted["TP30"].tolist() == [1.0]
    cases = evaluation.aggregate_cluster_counts(
        np.array([[100_001, 100_000]]), np.array([0, 1]), coco_ap=False
    )
    assert cases["FP30"].tolist() == [98 / 99]


def test_coco_ap_of_a_case_resample_whose_ranks_reach_two_to_the_31() -> None:
    # As test_coco_ap_of_a_resample_whose_ranks_reach_two_to_the_31, drawn as counts: two
    # images (one case each), each with one gold box and 2**11 predictions equal to it, all
    # of score 1; a resample drawing each 2**19 times holds 2**20 images, more than the set's
    # 2, and ranks 2**31 detections, so the rank sums need int64 although no image is drawn
    # 2**20 times. Every drawn copy is the same block (its first prediction matched), so the
    # envelope is that of the one-image test: true positive t at rank (t - 1) * 2**11 + 1.
    n_drawn, n_boxes = 2**20, 2**11
    evaluation = prepare_localization_from_arrays(
        np.tile(GOLD, (2 * n_boxes, 1)),
        np.array([n_boxes, n_boxes]),
        np.array([GOLD, GOLD]),
        np.array([1, 1]),
        max_detections=n_boxes,
    )
    resampled = evaluation.aggregate_counts(np.array([[2**19, 2**19]]))
    coco_ap = _one_hit_per_block_ap(n_drawn, n_boxes)
    assert resampled["COCO-AP@50"].tolist() == pytest.approx([coco_ap], rel=1e-12)


def test_no_image_to_score_is_warned_about_at_the_callers_line() -> None:
    # An empty prediction set (a filter that kept nothing): every key is NaN, said once, and
    # the warning points at the line here that called prepare_localization (each call made
    # directly in this test: one frame further up is pytest's own code).
    no_box = np.zeros((0, 4))
    no_count = np.zeros(0, dtype=np.int64)
    with pytest.warns(LocalizationWarning) as from_rows:
        empty = prepare_localization([], [])
    with pytest.warns(LocalizationWarning) as from_arrays:
        prepare_localization_from_arrays(no_box, no_count, no_box, no_count)
    for caught in (from_rows, from_arrays):
        assert [str(warning.message) for warning in caught] == [
            "no image to score: every key is undefined (NaN)"
        ]
        assert caught[0].filename == __file__
    assert empty.n_items == 0


def _one_hit_per_block_ap(n_gold: int, n_boxes: int) -> float:
    """COCO AP, by hand, of detections ranked in blocks of ``n_boxes`` whose first is the
    block's only true positive, ``n_gold`` blocks: true positive t sits at rank
    (t - 1) * n_boxes + 1, and the envelope at recall point p is the precision of the first
    t with t / n_gold >= p (pycocotools' eps in the denominator)."""
    expected = []
    for point in np.linspace(0.0, 1.0, 101):
        first = max(math.ceil(point * n_gold), 1)
        while first > 1 and (first - 1) / n_gold >= point:  # ceil's float rounding
            first -= 1
        while first / n_gold < point:
            first += 1
        expected.append(first / ((first - 1) * n_boxes + 1 + np.spacing(1)))
    return sum(expected) / 101
