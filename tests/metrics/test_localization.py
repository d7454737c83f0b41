"""Hand-computed cases, edge-case rules and bad inputs of the localisation metric.

Parity with pycocotools on random inputs lives in test_localization_parity.py; here every
expected number is derived by hand in the comments.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from novabench.checks import box_list as validate_boxes
from novabench.errors import NovaInputError
from novabench.metrics.boxes import iou_matrix_xywh, paired_iou_xywh, to_xywh
from novabench.metrics.localization import (
    LOCALIZATION_METRIC_KEYS,
    LocalizationWarning,
    coco_average_precision,
    prepare_localization,
    score_localization,
)

# COCO divides by tp + fp + eps (eps = 2.2e-16), so "1.0" is 1 - 2.2e-16: compare loosely.
close = dict(rel=0, abs=1e-12)
GOLD = {"boxes": [[0, 0, 10, 10]]}


def quiet_score(predictions, references, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning here would be unexpected
        return score_localization(predictions, references, **kwargs)


# --------------------------------------------------------------------------- boxes


def test_iou_by_hand() -> None:
    # [0,0,10,10] vs [5,0,10,10]: intersection 5x10 = 50, union 100 + 100 - 50 = 150.
    # vs [0,0,10,5]: intersection 50, union 100 + 50 - 50 = 100 -> 0.5.
    # vs [10,0,5,5]: touching edge, intersection width 0 -> 0.
    ious = iou_matrix_xywh([[0, 0, 10, 10]], [[5, 0, 10, 10], [0, 0, 10, 5], [10, 0, 5, 5]])
    assert ious.tolist() == [[50 / 150, 0.5, 0.0]]


def test_zero_size_boxes_overlap_nothing_even_themselves() -> None:
    assert iou_matrix_xywh([[3, 3, 0, 0]], [[3, 3, 0, 0], [0, 0, 10, 10]]).tolist() == [[0.0, 0.0]]
    assert paired_iou_xywh(np.array([1.0, 1, 0, 5]), np.array([0.0, 0, 10, 10])) == 0.0


def test_to_xywh_and_validate() -> None:
    assert to_xywh([[1, 2, 4, 8]], "xyxy").tolist() == [[1.0, 2.0, 3.0, 6.0]]
    assert to_xywh(np.zeros((0, 4)), "xyxy").shape == (0, 4)
    with pytest.raises(NovaInputError, match="box_format"):
        to_xywh([[0, 0, 1, 1]], "cxcywh")
    with pytest.raises(NovaInputError) as info:
        validate_boxes(
            [[0, 0, 1, 1], [5, 5, 4, 9]], record="example 1", field="b", box_format="xyxy"
        )
    assert (info.value.record, info.value.field) == ("example 1", "b[1]")
    assert "x_max" in str(info.value)


# --------------------------------------------------------------------------- hand-computed scores


def test_average_precision_by_hand() -> None:
    # Image 0: gold G0=[0,0,10,10]; a=[0,0,10,10] score .9 (IoU 1), b=[20,20,5,5] score .6 (IoU 0).
    # Image 1: golds G1=[0,0,10,10], G2=[50,50,10,10]; c=[0,0,10,5] score .8 (IoU with G1 = 0.5).
    # Global order a(.9), c(.8), b(.6); 3 gold boxes.
    # t <= 0.5: TP, TP, FP -> recall 1/3, 2/3, 2/3; precision 1, 1, 2/3; envelope 1, 1, 2/3.
    #   recall points k/100 <= 2/3 (k = 0..66, 67 points) read precision 1; the rest 0.
    #   AP = 67/101.
    # t in 0.55..0.95 (9 thresholds): TP, FP, FP -> recall stays 1/3; k = 0..33 (34 points)
    #   read precision 1 -> AP = 34/101.
    # COCO-AP@50:95 = (67/101 + 9 * 34/101) / 10 = 373/1010.
    predictions = [
        {"boxes": [[0, 0, 10, 10], [20, 20, 5, 5]], "scores": [0.9, 0.6]},
        {"boxes": [[0, 0, 10, 5]], "scores": [0.8]},
    ]
    references = [{"boxes": [[0, 0, 10, 10]]}, {"boxes": [[0, 0, 10, 10], [50, 50, 10, 10]]}]
    result = quiet_score(predictions, references)
    assert result["COCO-AP@30"] == pytest.approx(67 / 101, **close)
    assert result["COCO-AP@50"] == pytest.approx(67 / 101, **close)
    assert result["COCO-AP@50:95"] == pytest.approx(373 / 1010, **close)
    # Best IoUs 1 and 0.5: both images hit at 0.30 and 0.50; first-ranked boxes are a and c.
    assert (result["hit@30"], result["hit@50"], result["ACC50"]) == (1.0, 1.0, 1.0)
    # G0 and G1 matched at 0.30, G2 not: 2/3. Of 3 predictions only b is unmatched: 1/3.
    assert result["TP30"] == pytest.approx(2 / 3)
    assert result["FP30"] == pytest.approx(1 / 3)
    assert result["FNR"] == 0.0
    assert result["per_image_best_iou"] == [1.0, 0.5]
    assert {k: result[k] for k in ("n_images", "n_images_with_gold", "n_gold_boxes")} == {
        "n_images": 2,
        "n_images_with_gold": 2,
        "n_gold_boxes": 3,
    }
    assert (result["n_predicted_boxes"], result["n_truncated_predictions"]) == (3, 0)


def test_hit_rate_acc50_fnr_and_box_rates_by_hand() -> None:
    gold = [[0, 0, 10, 10]]
    predictions = [
        # No scores: ranked as given. First box misses (IoU 0), second is exact: the best box
        # is not the first one -> hit, but not ACC50.
        {"boxes": [[30, 30, 5, 5], [0, 0, 10, 10]]},
        # Ranked by score: [2,0,10,10] (score .7) first: IoU 80/120 = 2/3 >= 0.5 -> ACC50.
        {"boxes": [[0, 0, 10, 10], [2, 0, 10, 10]], "scores": [0.2, 0.7]},
        # Gold but no box at all -> counts in FNR, misses everything.
        {"boxes": []},
        # No gold: left out of hit@/ACC50/FNR, its box is a false positive.
        {"boxes": [[0, 0, 1, 1]], "scores": [0.1]},
    ]
    references = [{"boxes": gold}, {"boxes": gold}, {"boxes": gold}, {"boxes": []}]
    result = quiet_score(predictions, references)
    # Images with gold: 0, 1, 2. Best IoU: 1, 1, 0 -> hit@30 = hit@50 = 2/3.
    assert result["hit@30"] == pytest.approx(2 / 3)
    assert result["hit@50"] == pytest.approx(2 / 3)
    assert result["ACC50"] == pytest.approx(1 / 3)  # only image 1's first box reaches 0.5
    assert result["FNR"] == pytest.approx(1 / 3)  # image 2
    # Gold boxes 3, matched at 0.30: image 0 (by its 2nd box) and image 1 (by its 1st) -> 2/3.
    assert result["TP30"] == pytest.approx(2 / 3)
    # Scored boxes 2 + 2 + 0 + 1 = 5, matched 2 -> 3 unmatched -> 3/5.
    assert result["FP30"] == pytest.approx(3 / 5)
    assert result["per_image_best_iou"] == [1.0, 1.0, 0.0, None]
    assert (result["n_images_with_gold"], result["n_predicted_boxes"]) == (3, 5)


def test_missing_scores_keep_the_given_order() -> None:
    # Definition (b): without scores the order of the boxes is the ranking.
    # [miss, hit]: precision 0 then 1/2, recall 0 then 1; envelope 1/2 everywhere -> AP 1/2.
    # [hit, miss]: precision 1 at recall 1 -> AP 1.
    gold = [{"boxes": [[0, 0, 10, 10]]}]
    miss_first = quiet_score([{"boxes": [[50, 50, 5, 5], [0, 0, 10, 10]]}], gold)
    hit_first = quiet_score([{"boxes": [[0, 0, 10, 10], [50, 50, 5, 5]]}], gold)
    assert miss_first["COCO-AP@50"] == pytest.approx(0.5, **close)
    assert hit_first["COCO-AP@50"] == pytest.approx(1.0, **close)
    # The image-level rates do not depend on the order, except ACC50 (first box only).
    assert miss_first["hit@50"] == hit_first["hit@50"] == 1.0
    assert (miss_first["ACC50"], hit_first["ACC50"]) == (0.0, 1.0)


def test_equal_scores_across_images_keep_image_order() -> None:
    # Image 0 holds a false positive, image 1 a true positive, both score 1 (no scores): the
    # false positive ranks first, as in pycocotools -> AP 0.5 (see the test above). Swapping
    # the images ranks the true positive first -> AP 1.
    no_gold, gold = {"boxes": []}, {"boxes": [[0, 0, 10, 10]]}
    fp, tp = {"boxes": [[50, 50, 5, 5]]}, {"boxes": [[0, 0, 10, 10]]}
    assert quiet_score([fp, tp], [no_gold, gold])["COCO-AP@50"] == pytest.approx(0.5, **close)
    assert quiet_score([tp, fp], [gold, no_gold])["COCO-AP@50"] == pytest.approx(1.0, **close)


def test_exact_iou_tie_takes_the_last_gold_box_like_coco() -> None:
    # Golds A=[10,0,10,10] and B=[0,0,10,10]; the middle box M=[5,0,10,10] has IoU 1/3 with
    # both (intersection 50, union 150). COCO scans gold boxes in order and keeps the LAST one
    # with the best IoU. A second box equal to B then only matches if M did not take B.
    a, b, middle = [10, 0, 10, 10], [0, 0, 10, 10], [5, 0, 10, 10]
    prediction = {"boxes": [middle, b], "scores": [0.9, 0.8]}
    # Gold order [A, B]: M takes B (last), the copy of B finds nothing -> 1 of 2 gold matched.
    assert quiet_score([prediction], [{"boxes": [a, b]}])["TP30"] == 0.5
    # Gold order [B, A]: M takes A (last), the copy of B takes B -> 2 of 2.
    assert quiet_score([prediction], [{"boxes": [b, a]}])["TP30"] == 1.0


def test_one_to_one_matching_counts_duplicates_as_false_positives() -> None:
    # Three identical boxes on one gold box: one TP, two FP at every threshold.
    # Order TP, FP, FP: precision 1, 1/2, 1/3 at recall 1 -> envelope 1 at recall 1 -> AP 1.
    result = quiet_score([{"boxes": [[0, 0, 10, 10]] * 3}], [{"boxes": [[0, 0, 10, 10]]}])
    assert result["COCO-AP@50:95"] == pytest.approx(1.0, **close)
    assert result["TP30"] == 1.0
    assert result["FP30"] == pytest.approx(2 / 3)


# --------------------------------------------------------------------------- edge-case rules


def test_no_gold_anywhere_gives_nan_and_warns() -> None:
    predictions = [{"boxes": [[0, 0, 5, 5]]}, {"boxes": []}]
    references = [{"boxes": []}, {"boxes": None}]  # None: a null dataset cell
    with pytest.warns(LocalizationWarning, match="no reference has a gold box"):
        result = score_localization(predictions, references)
    for key in (
        "COCO-AP@30",
        "COCO-AP@50",
        "COCO-AP@50:95",
        "hit@30",
        "hit@50",
        "ACC50",
        "TP30",
        "FNR",
    ):
        assert math.isnan(result[key]), key
    assert result["FP30"] == 1.0  # the one box is unmatched
    assert result["per_image_best_iou"] == [None, None]


def test_no_prediction_anywhere() -> None:
    # Gold exists, nothing predicted: AP 0, every gold image is a false negative, FP30 is
    # 0/0 -> NaN (documented), TP30 0.
    result = quiet_score([{"boxes": []}, {"boxes": []}], [{"boxes": [[0, 0, 5, 5]]}, {"boxes": []}])
    assert (result["COCO-AP@30"], result["COCO-AP@50"], result["COCO-AP@50:95"]) == (0.0, 0.0, 0.0)
    assert (result["hit@30"], result["ACC50"]) == (0.0, 0.0)
    assert (result["FNR"], result["TP30"]) == (1.0, 0.0)
    assert math.isnan(result["FP30"])
    assert result["per_image_best_iou"] == [0.0, None]


def test_empty_input() -> None:
    with pytest.warns(LocalizationWarning):
        result = score_localization([], [])
    assert result["n_images"] == 0
    assert all(math.isnan(result[key]) for key in LOCALIZATION_METRIC_KEYS)


def test_truncation_is_counted_and_applies_to_every_key() -> None:
    # 105 boxes without scores: the exact box is the 101st, beyond max_detections=100.
    boxes = [[50, 50, 5, 5]] * 100 + [[0, 0, 10, 10]] * 5
    with pytest.warns(LocalizationWarning, match="5 predicted boxes beyond max_detections=100"):
        result = score_localization([{"boxes": boxes}], [{"boxes": [[0, 0, 10, 10]]}])
    assert (result["n_predicted_boxes"], result["n_truncated_predictions"]) == (105, 5)
    assert (result["COCO-AP@30"], result["hit@30"], result["TP30"]) == (0.0, 0.0, 0.0)
    assert result["FP30"] == 1.0  # 100 scored boxes, none matched
    assert result["per_image_best_iou"] == [0.0]
    # Ranking by score happens before the cut: give the exact box the top score.
    scores = [0.1] * 100 + [0.9] * 5
    with pytest.warns(LocalizationWarning):
        ranked = score_localization([{"boxes": boxes, "scores": scores}], [GOLD])
    assert (ranked["hit@50"], ranked["ACC50"], ranked["TP30"]) == (1.0, 1.0, 1.0)
    uncut = quiet_score([{"boxes": boxes}], [GOLD], max_detections=105)
    assert (uncut["hit@50"], uncut["n_truncated_predictions"]) == (1.0, 0)


def test_zero_size_prediction_is_legal_and_scores_iou_zero() -> None:
    result = quiet_score([{"boxes": [[0, 0, 0, 0]]}], [{"boxes": [[0, 0, 10, 10]]}])
    assert (result["hit@30"], result["FP30"], result["FNR"]) == (0.0, 1.0, 0.0)


def test_references_accept_dataset_rows_and_reference_format() -> None:
    row = {"filename": "case0001_001.png", "caption": "x", "boxes": [[0.0, 0.0, 10.0, 10.0]]}
    assert quiet_score([{"boxes": [[0, 0, 10, 10]]}], [row])["hit@50"] == 1.0
    xyxy_row = {"boxes": [[0, 0, 10, 10]]}  # as xyxy this is the same box as xywh [0,0,10,10]
    assert quiet_score([{"boxes": [[0, 0, 10, 10]]}], [xyxy_row], reference_box_format="xyxy")[
        "per_image_best_iou"
    ] == [1.0]


def test_xyxy_predictions_equal_the_converted_xywh_result() -> None:
    rng = np.random.default_rng(7)
    references = [{"boxes": rng.uniform(0, 50, (3, 4)).tolist()} for _ in range(12)]
    xywh = [rng.uniform(0, 50, (5, 4)) for _ in range(12)]
    scores = [rng.random(5).tolist() for _ in range(12)]
    xyxy = [np.column_stack((b[:, :2], b[:, :2] + b[:, 2:])) for b in xywh]
    as_xywh = quiet_score(
        [{"boxes": b.tolist(), "scores": s} for b, s in zip(xywh, scores)], references
    )
    as_xyxy = quiet_score(
        [{"boxes": b.tolist(), "scores": s} for b, s in zip(xyxy, scores)],
        references,
        box_format="xyxy",
    )
    # Converting back (x2 - x1) can move the last bit of a width, so compare to 1e-12.
    for key in LOCALIZATION_METRIC_KEYS:
        assert as_xyxy[key] == pytest.approx(as_xywh[key], rel=0, abs=1e-12), key
    assert as_xywh["hit@30"] > 0  # the comparison is not between two empty results


def test_numpy_arrays_are_accepted() -> None:
    result = quiet_score(
        [{"boxes": np.array([[0, 0, 10, 10]], dtype=np.float32), "scores": np.array([0.5])}],
        [{"boxes": np.array([[0, 0, 10, 10]])}],
    )
    assert result["hit@50"] == 1.0


# --------------------------------------------------------------------------- resampling


def _random_set(seed: int):
    rng = np.random.default_rng(seed)
    predictions, references = [], []
    for _ in range(int(rng.integers(2, 12))):
        gold = np.round(rng.uniform(0, 30, (int(rng.integers(0, 3)), 4)))
        near = np.round(rng.uniform(0, 30, (int(rng.integers(0, 5)), 4)))
        prediction = {"boxes": near.tolist()}
        if rng.random() < 0.5:
            prediction["scores"] = rng.choice([0.3, 0.6, 0.9], len(near)).tolist()  # ties
        predictions.append(prediction)
        references.append({"boxes": gold.tolist()})
    return predictions, references


def test_aggregate_on_indices_equals_scoring_the_resampled_set() -> None:
    # The contract of aggregate(indices): the scores of the images at `indices`, taken in
    # their original order (repeats adjacent), as if that set had been scored from scratch.
    rng = np.random.default_rng(0)
    checked = 0
    for seed in range(60):
        predictions, references = _random_set(seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", LocalizationWarning)
            evaluation = prepare_localization(predictions, references)
            indices = rng.integers(0, len(predictions), len(predictions))
            ordered = np.sort(indices)
            expected = score_localization(
                [predictions[i] for i in ordered], [references[i] for i in ordered]
            )
        got = evaluation.aggregate(indices)
        shuffled = evaluation.aggregate(rng.permutation(indices))
        for key in LOCALIZATION_METRIC_KEYS:
            want = pytest.approx(expected[key], nan_ok=True, rel=0, abs=1e-12)
            assert got[key] == want, (seed, key)
            assert shuffled[key] == pytest.approx(got[key], nan_ok=True, rel=0, abs=0), (seed, key)
        checked += not math.isnan(expected["COCO-AP@50"])
    assert checked > 20


def test_aggregate_without_indices_equals_score() -> None:
    predictions, references = _random_set(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LocalizationWarning)
        evaluation = prepare_localization(predictions, references)
        full = score_localization(predictions, references)
    assert list(evaluation.aggregate()) == list(LOCALIZATION_METRIC_KEYS)
    every_item_once = evaluation.aggregate(np.arange(evaluation.n_items))
    for key in LOCALIZATION_METRIC_KEYS:
        assert evaluation.aggregate()[key] == pytest.approx(full[key], nan_ok=True, rel=0, abs=0)
        assert every_item_once[key] == pytest.approx(full[key], nan_ok=True, rel=0, abs=0)
    assert not math.isnan(full["COCO-AP@50"])  # a case with gold boxes, so the check has teeth
    assert evaluation.per_image_best_iou == full["per_image_best_iou"]


@pytest.mark.parametrize("indices", [[0, 5], [-1], [0.5, 1.0], [[0, 1]], ["a"]])
def test_bad_indices_raise(indices) -> None:
    evaluation = prepare_localization([{"boxes": []}] * 2, [{"boxes": [[0, 0, 1, 1]]}] * 2)
    with pytest.raises(NovaInputError) as info:
        evaluation.aggregate(indices)
    assert info.value.field == "indices"


def test_empty_resample_is_nan_not_an_error() -> None:
    evaluation = prepare_localization([{"boxes": []}], [{"boxes": [[0, 0, 1, 1]]}])
    assert all(math.isnan(v) for v in evaluation.aggregate(np.array([], dtype=int)).values())


# --------------------------------------------------------------------------- bad inputs


def _three_good() -> list[dict]:
    return [{"boxes": [[0, 0, 10, 10]], "scores": [0.5]} for _ in range(3)]


@pytest.mark.parametrize(
    ("bad_prediction", "field", "message"),
    [
        ({"boxes": [[0, 0, 1, 1], [0, 0, float("nan"), 1]]}, "predictions.boxes[1]", "finite"),
        ({"boxes": [[0, 0, 1, 1], [0, 0, float("inf"), 1]]}, "predictions.boxes[1]", "finite"),
        ({"boxes": [[0, 0, 1, 1], [0, 0, -2, 1]]}, "predictions.boxes[1]", "width must be >= 0"),
        ({"boxes": [[0, 0, 1, -1]]}, "predictions.boxes[0]", "height must be >= 0"),
        ({"boxes": [[0, 0, 1, 1], [0, 0, 1]]}, "predictions.boxes[1]", "4 numbers, got 3"),
        ({"boxes": [[0, 0, 1, 1], [0, 0, 1, 1, 1]]}, "predictions.boxes[1]", "4 numbers, got 5"),
        ({"boxes": [[0, "a", 1, 1]]}, "predictions.boxes[0]", "real numbers"),
        ({"boxes": [[0, None, 1, 1]]}, "predictions.boxes[0]", "real numbers"),
        ({"boxes": [[True, False, True, True]]}, "predictions.boxes[0]", "real numbers"),
        ({"boxes": [0, 0, 1, 1]}, "predictions.boxes[0]", "list of 4 numbers"),
        ({"boxes": "[[0, 0, 1, 1]]"}, "predictions.boxes", "list of boxes"),
        ({"boxes": None}, "predictions.boxes", "list of boxes"),
        ({"boxes": [[0, 0, 1, 1]], "scores": [0.5, 0.4]}, "predictions.scores", "2 values but"),
        ({"boxes": [[0, 0, 1, 1]], "scores": []}, "predictions.scores", "0 values"),
        ({"boxes": [[0, 0, 1, 1]], "scores": [float("nan")]}, "predictions.scores[0]", "finite"),
        ({"boxes": [[0, 0, 1, 1]], "scores": ["high"]}, "predictions.scores[0]", "numbers"),
        ({"boxes": [[0, 0, 1, 1]], "scores": [True]}, "predictions.scores[0]", "numbers"),
        ({"boxes": [[0, 0, 1, 1]], "scores": 0.5}, "predictions.scores", "list of numbers"),
        ({"boxes": [[0, 0, 1, 1]], "score": [0.5]}, "predictions.score", "unknown key 'score'"),
        ({"scores": []}, "predictions.boxes", 'needs a "boxes" list'),
        ([[0, 0, 1, 1]], "predictions", "must be a dict"),
    ],
)
def test_bad_prediction_names_example_and_field(bad_prediction, field, message) -> None:
    predictions = _three_good() + [bad_prediction]
    with pytest.raises(NovaInputError, match=message) as info:
        score_localization(predictions, [GOLD] * 4)
    assert isinstance(info.value, ValueError)
    assert (info.value.record, info.value.field) == ("example 3", field)


@pytest.mark.parametrize(
    ("bad_reference", "field", "message"),
    [
        ({"boxes": [[0, 0, -1, 1]]}, "references.boxes[0]", "width must be >= 0"),
        ({"boxes": [[0, 0, 1, 1], [1, 2, 3]]}, "references.boxes[1]", "4 numbers"),
        ({"bboxes": [[0, 0, 1, 1]]}, "references.boxes", '"boxes" key'),
        ([[0, 0, 1, 1]], "references.boxes", '"boxes" key'),
    ],
)
def test_bad_reference_names_example_and_field(bad_reference, field, message) -> None:
    with pytest.raises(NovaInputError, match=message) as info:
        score_localization(_three_good() + [{"boxes": []}], [GOLD] * 3 + [bad_reference])
    assert (info.value.record, info.value.field) == ("example 3", field)


def test_xyxy_with_inverted_corners_is_an_error() -> None:
    with pytest.raises(NovaInputError, match="x_max must be >= x_min") as info:
        score_localization([{"boxes": [[10, 0, 5, 5]]}], [GOLD], box_format="xyxy")
    assert (info.value.record, info.value.field) == ("example 0", "predictions.boxes[0]")


def test_mismatched_lengths_and_bad_containers() -> None:
    with pytest.raises(NovaInputError, match="2 predictions for 3 references"):
        score_localization(_three_good()[:2], [GOLD] * 3)
    with pytest.raises(NovaInputError, match="predictions must be a list"):
        score_localization({"boxes": []}, [GOLD])
    with pytest.raises(NovaInputError, match="references must be a list"):
        score_localization([{"boxes": []}], "gold.json")


@pytest.mark.parametrize("value", [0, -3, 1.5, True, None])
def test_bad_max_detections(value) -> None:
    with pytest.raises(NovaInputError) as info:
        score_localization([{"boxes": []}], [GOLD], max_detections=value)
    assert info.value.field == "max_detections"


def test_bad_box_format() -> None:
    with pytest.raises(NovaInputError) as info:
        score_localization([{"boxes": []}], [GOLD], box_format="yxyx")
    assert info.value.field == "box_format"


def test_a_datasets_table_works_as_references() -> None:
    # NOVA rows come from `datasets` (boxes: List(List(float64)), null for unmarked images).
    datasets = pytest.importorskip("datasets")
    table = datasets.Dataset.from_dict(
        {
            "filename": ["case0001_001.png", "case0001_002.png"],
            "boxes": [[[0.0, 0.0, 10.0, 10.0]], None],
        },
        features=datasets.Features(
            {
                "filename": datasets.Value("string"),
                "boxes": datasets.List(datasets.List(datasets.Value("float64"))),
            }
        ),
    )
    predictions = [{"boxes": [[0, 0, 10, 10]]}, {"boxes": [[3, 3, 2, 2]]}]
    result = quiet_score(predictions, table)
    # Image 0: exact hit; image 1 has no gold, so its box is a false positive: 1 of 2 boxes.
    assert (result["hit@50"], result["FP30"], result["n_images_with_gold"]) == (1.0, 0.5, 1)
    assert result["per_image_best_iou"] == [1.0, None]


def test_validate_boxes_reads_arrays_and_rejects_boolean_arrays() -> None:
    assert validate_boxes(np.array([[1, 2, 3, 4]], dtype=np.int32)).dtype == np.float64
    with pytest.raises(NovaInputError, match="real numbers"):
        validate_boxes(np.array([[True, False, True, True]]), record="example 0")


def test_zero_area_gold_box_is_a_missed_gold_box_with_a_warning_naming_it() -> None:
    gold = [{"boxes": [[0, 0, 10, 10]]}, {"boxes": [[5, 5, 10, 10], [20, 20, 0, 4]]}]
    predictions = [{"boxes": [[0, 0, 10, 10]]}, {"boxes": [[5, 5, 10, 10], [20, 20, 0, 4]]}]
    with pytest.warns(
        LocalizationWarning, match=r"1 reference boxes .*example 1, references.boxes\[1\]"
    ):
        result = score_localization(predictions, gold)
    # 3 gold boxes, the zero-area one unmatchable even by an identical prediction: 2/3.
    assert result["TP30"] == pytest.approx(2 / 3)
    assert result["hit@30"] == 1.0  # both images still have a real hit


def test_booleans_are_refused_as_box_values_and_scores() -> None:
    gold = [{"boxes": [[0, 0, 10, 10]]}]
    with pytest.raises(NovaInputError) as info:
        score_localization([{"boxes": [[0, 0, 10, True]]}], gold)
    assert info.value.record == "example 0" and info.value.field.startswith("predictions.boxes")
    with pytest.raises(NovaInputError) as info:
        score_localization([{"boxes": [[0, 0, 10, 10]], "scores": [False]}], gold)
    assert info.value.field.startswith("predictions.scores")


def test_booleans_beside_floats_are_refused_too() -> None:
    # numpy turns [0.5, 0, 10, True] into floats, hiding the boolean from a dtype check.
    with pytest.raises(NovaInputError) as info:
        validate_boxes([[0.5, 0, 10, True]], record="example 3")
    assert info.value.record == "example 3" and info.value.field == "boxes[0]"
    with pytest.raises(NovaInputError) as info:
        score_localization(
            [{"boxes": [[0, 0, 10, 10]]}, {"boxes": [[0.5, 0, 10, np.True_]]}], [GOLD, GOLD]
        )
    assert info.value.record == "example 1" and info.value.field == "predictions.boxes[0]"
    with pytest.raises(NovaInputError) as info:
        score_localization([{"boxes": []}], [{"boxes": [[0.5, 0, 10, False]]}])
    assert info.value.record == "example 0" and info.value.field == "references.boxes[0]"


def test_array_entry_point_refuses_boolean_arrays() -> None:
    from novabench.metrics.localization import prepare_localization_from_arrays

    boxes, counts = np.array([[0, 0, 10, 10.0]]), np.array([1])
    with pytest.raises(NovaInputError, match="boolean"):
        prepare_localization_from_arrays(boxes, counts, boxes, counts, det_scores=np.array([True]))
    with pytest.raises(NovaInputError, match="boolean") as info:
        prepare_localization_from_arrays(np.ones((1, 4), dtype=bool), counts, boxes, counts)
    assert info.value.field == "predictions.boxes"


# --------------------------------------------------------------------------- the protocol's mAP


def test_protocol_map_is_a_hit_rate_over_all_images_by_hand() -> None:
    gold = [0, 0, 10, 10]
    predictions = [
        {
            "boxes": [[0, 0, 3, 10]]
        },  # inside the gold box: IoU 30/100 = 0.3 exactly -> hit at 0.30 only
        {"boxes": []},  # gold, no prediction: best IoU 0
        {"boxes": [[0, 0, 5, 5]]},  # no gold: never a hit
        {"boxes": [[50, 50, 5, 5], [20, 20, 10, 10]]},  # the 2nd box is exact: IoU 1
        {"boxes": []},  # no gold, no prediction
        {"boxes": [[0, 0, 10, 7.2]]},  # IoU 72/100 = 0.72: hit at 0.50..0.70, miss from 0.75
    ]
    references = [
        {"boxes": [gold]},
        {"boxes": [gold]},
        {"boxes": []},
        {"boxes": [gold, [20, 20, 10, 10]]},
        {"boxes": []},
        {"boxes": [gold]},
    ]
    result = quiet_score(predictions, references)
    # Hits at 0.30: images 0, 3, 5 of 6. At 0.50: images 3, 5.
    assert result["mAP@30"] == pytest.approx(3 / 6)
    assert result["mAP@50"] == pytest.approx(2 / 6)
    # Over 0.50..0.95 (10 thresholds): image 3 hits 10 times, image 5 five times -> 15 / (10 * 6).
    assert result["mAP@50:95"] == pytest.approx(15 / 60)
    # The diagnostic hit rates divide by the 4 images with gold instead.
    assert (result["hit@30"], result["hit@50"]) == (pytest.approx(3 / 4), pytest.approx(2 / 4))
    # Counts at IoU 0.30 (one-to-one): gold 5, matched 3 (images 0, 3's second gold, 5);
    # 1 + 0 + 1 + 2 + 0 + 1 = 5 kept predictions -> 2 false positives; 2 gold boxes unmatched.
    assert (
        result["n_true_positives_30"],
        result["n_false_positives_30"],
        result["n_false_negatives_30"],
    ) == (3, 2, 2)


def test_protocol_map_ignores_scores_and_order() -> None:
    references = [{"boxes": [[0, 0, 10, 10]]}, {"boxes": [[0, 0, 10, 10]]}]
    ranked = [
        {"boxes": [[0, 0, 10, 10], [40, 40, 5, 5]], "scores": [0.9, 0.1]},
        {"boxes": [[60, 0, 5, 5]]},
    ]
    reversed_ = [
        {"boxes": [[40, 40, 5, 5], [0, 0, 10, 10]], "scores": [0.9, 0.1]},
        {"boxes": [[60, 0, 5, 5]]},
    ]
    first, second = quiet_score(ranked, references), quiet_score(reversed_, references)
    for key in ("mAP@30", "mAP@50", "mAP@50:95"):
        assert first[key] == second[key] == pytest.approx(0.5)
    # COCO AP and ACC50 do depend on the ranking: the check above is not vacuous.
    assert first["COCO-AP@50"] > second["COCO-AP@50"] and first["ACC50"] > second["ACC50"]


def test_protocol_map_without_any_gold_is_zero_and_without_images_nan() -> None:
    with pytest.warns(LocalizationWarning, match="every image is a miss"):
        result = score_localization([{"boxes": [[0, 0, 5, 5]]}], [{"boxes": []}])
    assert (result["mAP@30"], result["mAP@50"], result["mAP@50:95"]) == (0.0, 0.0, 0.0)
    assert math.isnan(result["COCO-AP@30"]) and math.isnan(result["hit@30"])
    with pytest.warns(LocalizationWarning):
        empty = score_localization([], [])
    assert all(math.isnan(empty[key]) for key in ("mAP@30", "mAP@50", "mAP@50:95"))


def _reference_iou(a: list[float], b: list[float]) -> float:
    # Written apart from metrics.boxes on purpose: xywh, zero-area boxes overlap nothing.
    width = min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0])
    height = min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1])
    if width <= 0 or height <= 0:
        return 0.0
    inter = width * height
    return inter / (a[2] * a[3] + b[2] * b[3] - inter)


def _reference_protocol_map(predictions, references, threshold: float) -> float:
    hits = 0
    for prediction, reference in zip(predictions, references):
        best = max(
            (_reference_iou(p, g) for p in prediction["boxes"] for g in reference["boxes"]),
            default=0.0,
        )
        hits += best >= threshold
    return hits / len(predictions)


@pytest.mark.parametrize("seed", range(40))
def test_protocol_map_matches_a_plain_loop_on_random_inputs(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n_images = int(rng.integers(1, 30))
    references = [
        {"boxes": np.round(rng.uniform(0, 60, (int(rng.integers(0, 4)), 4)), 1).tolist()}
        for _ in range(n_images)
    ]
    # Predictions jittered around the gold boxes, so every threshold is crossed somewhere.
    predictions = []
    for reference in references:
        near = [np.add(box, rng.normal(0, 4, 4)).clip(0.5).tolist() for box in reference["boxes"]]
        far = rng.uniform(0, 60, (int(rng.integers(0, 3)), 4)).tolist()
        predictions.append(
            {
                "boxes": [
                    near[i] for i in rng.permutation(len(near))[: rng.integers(0, len(near) + 1)]
                ]
                + far
            }
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LocalizationWarning)
        result = score_localization(predictions, references)
    assert result["mAP@30"] == pytest.approx(
        _reference_protocol_map(predictions, references, 0.3), abs=1e-12
    )
    assert result["mAP@50"] == pytest.approx(
        _reference_protocol_map(predictions, references, 0.5), abs=1e-12
    )
    expected_50_95 = np.mean(
        [_reference_protocol_map(predictions, references, t) for t in np.linspace(0.5, 0.95, 10)]
    )
    assert result["mAP@50:95"] == pytest.approx(expected_50_95, abs=1e-12)


@pytest.mark.parametrize("thresholds", [[1.01], [0.0], [-0.3], [0.5, 1.5], []])
def test_coco_ap_refuses_iou_thresholds_outside_zero_to_one(thresholds) -> None:
    # An IoU never exceeds 1 and every box pair reaches 0: such a threshold measures nothing.
    with pytest.raises(NovaInputError) as info:
        coco_average_precision([GOLD], [GOLD], iou_thresholds=thresholds)
    assert info.value.field == "iou_thresholds"


def test_coco_ap_at_the_ends_of_the_threshold_range() -> None:
    # [0, 0, 10, 9] inside [0, 0, 10, 10]: IoU 90 / 100 = 0.9 by hand.
    inner = [{"boxes": [[0, 0, 10, 9]]}]
    assert coco_average_precision([GOLD], [GOLD], iou_thresholds=[1.0]) == pytest.approx(1, **close)
    assert coco_average_precision(inner, [GOLD], iou_thresholds=[1.0]) == 0.0
    assert coco_average_precision(inner, [GOLD], iou_thresholds=[0.85]) == pytest.approx(1, **close)
    # Any overlap at all reaches a threshold just above 0; a far box does not.
    far = [{"boxes": [[50, 50, 10, 10]]}]
    assert coco_average_precision(inner, [GOLD], iou_thresholds=[1e-9]) == pytest.approx(1, **close)
    assert coco_average_precision(far, [GOLD], iou_thresholds=[1e-9]) == 0.0


@pytest.mark.parametrize(
    "predictions, references, max_detections",
    [
        ([{"boxes": [[0, 0, 10, 10]]}], [{"boxes": []}], 100),  # no gold box at all
        ([{"boxes": [[0, 0, 10, 10]]}], [{"boxes": [[0, 0, 0, 10]]}], 100),  # zero-width gold
        ([{"boxes": [[0, 0, 10, 10], [5, 5, 10, 10]]}], [GOLD], 1),  # beyond max_detections
    ],
    ids=["no_gold", "degenerate_gold", "truncated"],
)
def test_localization_warnings_point_at_the_callers_line(
    predictions, references, max_detections
) -> None:
    # A warning shown at a line of novabench tells the user nothing about their own call.
    with pytest.warns(LocalizationWarning) as record:
        prepare_localization(predictions, references, max_detections=max_detections)
    assert [warning.filename for warning in record] == [__file__] * len(record)


def test_a_perfect_match_keeps_cocos_epsilon() -> None:
    # COCOeval's precision is tp / (tp + fp + np.spacing(1)): one true positive gives
    # 1 / (1 + 2**-52) at each of the 101 recall points, and AP is their mean (pycocotools
    # prints 0.9999999999999999 for this case), not 1.
    expected = np.mean(np.full(101, 1 / (1 + np.spacing(1))))
    assert expected != 1.0
    assert coco_average_precision([GOLD], [GOLD], iou_thresholds=[0.5]) == expected
