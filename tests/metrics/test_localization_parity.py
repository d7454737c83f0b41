"""Parity of the localisation metrics with pycocotools and faster-coco-eval on random cases.

The reference libraries are the ground truth for the AP keys: we build their COCO objects in
memory (one category, annotation ids from 1, area range "all") and compare the whole
interpolated precision array, not only its mean. TP30/FP30 are checked against the matches
that COCOeval itself records at IoU 0.30; hit@, ACC50 and FNR against a plain loop over
pycocotools' own IoU.
"""

from __future__ import annotations

import contextlib
import io
import math
import warnings

import numpy as np
import pytest

from novabench.metrics.localization import (
    COCO_IOU_THRESHOLDS,
    LocalizationWarning,
    coco_average_precision,
    prepare_localization,
    score_localization,
)

pycocotools_coco = pytest.importorskip("pycocotools.coco")
pycocotools_eval = pytest.importorskip("pycocotools.cocoeval")
from pycocotools import mask as coco_mask  # noqa: E402

N_CASES = 320
TOLERANCE = 1e-9


# --------------------------------------------------------------------------- random cases


def _random_box(rng: np.random.Generator, integer: bool) -> list[float]:
    x, y = rng.uniform(0, 80, size=2)
    w, h = rng.uniform(2, 40, size=2)
    box = [x, y, w, h]
    return [float(round(v)) for v in box] if integer else [float(v) for v in box]


def _near(rng: np.random.Generator, box: list[float], spread: float, integer: bool) -> list[float]:
    x, y, w, h = box
    jitter = rng.normal(0, spread, size=4) * np.array([w, h, w, h])
    new = [x + jitter[0], y + jitter[1], max(0.0, w + jitter[2]), max(0.0, h + jitter[3])]
    return [float(round(v)) for v in new] if integer else [float(v) for v in new]


def random_case(seed: int) -> tuple[list[dict], list[dict]]:
    """A random evaluation set mixing every situation that changes COCO's numbers."""
    rng = np.random.default_rng(seed)
    n_images = int(rng.integers(1, 31))
    integer = bool(rng.random() < 0.4)  # integer boxes create exact IoU ties
    score_mode = rng.choice(["missing", "tied", "continuous", "mixed"])
    predictions, references = [], []
    for _ in range(n_images):
        n_gold = int(rng.choice([0, 0, 1, 1, 2, 3, 4, 5, 6]))
        gold = [_random_box(rng, integer) for _ in range(n_gold)]
        if n_gold >= 2 and rng.random() < 0.4:
            gold[1] = _near(rng, gold[0], 0.1, integer)  # overlapping gold cluster
        if n_gold >= 2 and rng.random() < 0.15:
            gold[-1] = list(gold[0])  # duplicated gold box
        n_pred = int(rng.integers(0, 16))
        if rng.random() < 0.04:
            n_pred = int(rng.integers(101, 131))  # runaway list: exercises max_detections
        boxes: list[list[float]] = []
        for _ in range(n_pred):
            kind = rng.random()
            if gold and kind < 0.45:
                boxes.append(_near(rng, gold[int(rng.integers(len(gold)))], 0.25, integer))
            elif gold and kind < 0.55:
                boxes.append(list(gold[int(rng.integers(len(gold)))]))
            elif boxes and kind < 0.7:
                boxes.append(list(boxes[int(rng.integers(len(boxes)))]))  # duplicate
            elif kind < 0.73:
                x, y = rng.uniform(0, 80, size=2)
                boxes.append([float(x), float(y), 0.0, float(rng.uniform(0, 5))])  # zero-size
            else:
                boxes.append(_random_box(rng, integer))
        if n_gold >= 2 and rng.random() < 0.3:
            # Exact IoU tie that decides the outcome: a box halfway between two gold boxes
            # (integer coordinates, so both IoUs are bit-identical), then a box on one of them.
            x, y, w, h = (int(v) for v in rng.integers([0, 0, 10, 10], [60, 60, 30, 30]))
            shift = int(rng.integers(1, w))
            gold[0], gold[1] = [x + shift, y, w, h], [x - shift, y, w, h]
            middle = [float(x), float(y), float(w), float(h)]
            boxes[:0] = [middle, list(gold[int(rng.integers(2))])]
        prediction: dict = {"boxes": boxes}
        if score_mode == "tied" or (score_mode == "mixed" and rng.random() < 0.5):
            prediction["scores"] = [float(v) for v in rng.choice([0.2, 0.5, 0.9], size=len(boxes))]
        elif score_mode == "continuous":
            prediction["scores"] = [float(v) for v in rng.random(len(boxes))]
        predictions.append(prediction)
        references.append({"boxes": gold, "filename": "ignored.png"})
    return predictions, references


# --------------------------------------------------------------------------- COCO references


def _coco_objects(coco_module, predictions, references):
    images = [{"id": i + 1, "width": 200, "height": 200} for i in range(len(references))]
    annotations = []
    for image_index, reference in enumerate(references):
        for box in reference["boxes"]:
            annotations.append(
                {
                    "id": len(annotations) + 1,  # id 0 would silently count as unmatched
                    "image_id": image_index + 1,
                    "category_id": 1,
                    "bbox": list(box),
                    "area": box[2] * box[3],
                    "iscrowd": 0,
                }
            )
    detections = []
    for image_index, prediction in enumerate(predictions):
        scores = prediction.get("scores") or [1.0] * len(prediction["boxes"])
        for box, score in zip(prediction["boxes"], scores):
            detections.append(
                {"image_id": image_index + 1, "category_id": 1, "bbox": list(box), "score": score}
            )
    gt = coco_module.COCO()
    gt.dataset = {"images": images, "annotations": annotations, "categories": [{"id": 1}]}
    gt.createIndex()
    dt = gt.loadRes(detections) if detections else None  # loadRes([]) crashes in pycocotools
    return gt, dt


def pycocotools_precision(predictions, references, iou_thresholds, max_detections=100):
    """COCOeval's precision array (T, 101) for area 'all'; None when COCO reports -1."""
    with contextlib.redirect_stdout(io.StringIO()):
        gt, dt = _coco_objects(pycocotools_coco, predictions, references)
        n_gold = len(gt.getAnnIds())
        if dt is None:
            # COCOeval cannot run without detections; by its definition precision is 0 at
            # every recall point when gold exists and -1 (absent) otherwise.
            return np.zeros((len(iou_thresholds), 101)) if n_gold else None, None
        evaluator = pycocotools_eval.COCOeval(gt, dt, "bbox")
        evaluator.params.iouThrs = np.asarray(iou_thresholds, dtype=np.float64)
        evaluator.params.maxDets = [max_detections]
        evaluator.params.areaRng = [[0**2, 1e5**2]]
        evaluator.params.areaRngLbl = ["all"]
        evaluator.evaluate()
        evaluator.accumulate()
    precision = evaluator.eval["precision"][:, :, 0, 0, -1]
    if (precision == -1).all():
        return None, evaluator
    return precision, evaluator


def coco_mean(precision) -> float:
    """COCO's summarize(): mean over the entries > -1 (NaN where COCO prints -1)."""
    return float("nan") if precision is None else float(np.mean(precision[precision > -1]))


def same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= TOLERANCE


def brute_force_image_rates(predictions, references, max_detections=100):
    """hit@30, hit@50, ACC50, FNR by a plain loop over pycocotools' IoU (independent code)."""
    hits30 = hits50 = acc50 = no_box = with_gold = 0
    for prediction, reference in zip(predictions, references):
        gold = reference["boxes"]
        if not gold:
            continue
        with_gold += 1
        boxes = prediction["boxes"]
        scores = prediction.get("scores") or [1.0] * len(boxes)
        ranked = [boxes[i] for i in sorted(range(len(boxes)), key=lambda i: -scores[i])]
        ranked = ranked[:max_detections]
        if not ranked:
            no_box += 1
            continue
        ious = np.asarray(coco_mask.iou(ranked, gold, [0] * len(gold)))
        hits30 += ious.max() >= 0.3
        hits50 += ious.max() >= 0.5
        acc50 += ious[0].max() >= 0.5
    if not with_gold:
        return {key: float("nan") for key in ("hit@30", "hit@50", "ACC50", "FNR")}
    return {
        "hit@30": hits30 / with_gold,
        "hit@50": hits50 / with_gold,
        "ACC50": acc50 / with_gold,
        "FNR": no_box / with_gold,
    }


# --------------------------------------------------------------------------- tests


def _score_quietly(predictions, references, max_detections=100):
    # Truncation and no-gold warnings are expected on random cases; tested elsewhere.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LocalizationWarning)
        evaluation = prepare_localization(predictions, references, max_detections=max_detections)
        result = score_localization(predictions, references, max_detections=max_detections)
    return evaluation, result


@pytest.mark.slow  # 320 cases x 3 COCOeval runs: about 20 s over the 8 chunks
@pytest.mark.parametrize("chunk", range(8))
def test_parity_with_pycocotools(chunk: int) -> None:
    for seed in range(chunk, N_CASES, 8):
        predictions, references = random_case(seed)
        evaluation, result = _score_quietly(predictions, references)
        ours = evaluation.precision_at_recall_points()

        for iou_thresholds, rows, key in (
            ([0.3], slice(0, 1), "COCO-AP@30"),
            ([0.5], slice(1, 2), "COCO-AP@50"),
            (COCO_IOU_THRESHOLDS, slice(1, 11), "COCO-AP@50:95"),
        ):
            theirs, evaluator = pycocotools_precision(predictions, references, iou_thresholds)
            if theirs is None:
                assert ours is None, (seed, key)
            else:
                np.testing.assert_allclose(
                    ours[rows], theirs, rtol=0, atol=TOLERANCE, err_msg=f"seed {seed} {key}"
                )
            assert same(result[key], coco_mean(theirs)), (seed, key, result[key], coco_mean(theirs))

            if key == "COCO-AP@30" and evaluator is not None:
                # Box-level counts from COCOeval's own matches at IoU 0.30.
                per_image = [e for e in evaluator.evalImgs if e is not None]
                matched_gold = sum(int((e["gtMatches"][0] > 0).sum()) for e in per_image)
                scored = sum(len(e["dtIds"]) for e in per_image)
                unmatched_det = sum(int((e["dtMatches"][0] == 0).sum()) for e in per_image)
                n_gold = sum(len(r["boxes"]) for r in references)
                assert same(result["TP30"], matched_gold / n_gold if n_gold else float("nan")), seed
                assert same(result["FP30"], unmatched_det / scored), seed

        expected_rates = brute_force_image_rates(predictions, references)
        for key, value in expected_rates.items():
            assert same(result[key], value), (seed, key, result[key], value)


def test_coco_average_precision_matches_default_cocoeval_run() -> None:
    for seed in range(0, 60, 3):
        predictions, references = random_case(1000 + seed)
        theirs, _ = pycocotools_precision(predictions, references, COCO_IOU_THRESHOLDS)
        ours = coco_average_precision(predictions, references)
        assert same(ours, coco_mean(theirs)), seed


def test_truncation_matches_pycocotools_max_dets() -> None:
    # A small max_detections makes the cut bite on almost every image.
    for seed in range(40):
        predictions, references = random_case(2000 + seed)
        evaluation, _ = _score_quietly(predictions, references, max_detections=3)
        theirs, _ = pycocotools_precision(predictions, references, [0.3, *COCO_IOU_THRESHOLDS], 3)
        ours = evaluation.precision_at_recall_points()
        if theirs is None:
            assert ours is None
        else:
            np.testing.assert_allclose(ours, theirs, rtol=0, atol=TOLERANCE, err_msg=f"seed {seed}")


def test_random_cases_cover_the_intended_situations() -> None:
    # Guards the generator itself: the parity test is only as good as its cases.
    seen = {"no_gold_image": 0, "no_pred_image": 0, "over_100": 0, "missing_scores": 0, "tied": 0}
    for seed in range(N_CASES):
        predictions, references = random_case(seed)
        for prediction, reference in zip(predictions, references):
            seen["no_gold_image"] += not reference["boxes"]
            seen["no_pred_image"] += not prediction["boxes"]
            seen["over_100"] += len(prediction["boxes"]) > 100
            seen["missing_scores"] += "scores" not in prediction
            scores = prediction.get("scores") or []
            seen["tied"] += len(set(scores)) < len(scores)
    assert all(count >= 5 for count in seen.values()), seen


def test_parity_with_faster_coco_eval() -> None:
    faster = pytest.importorskip("faster_coco_eval")
    for seed in range(0, N_CASES, 10):
        predictions, references = random_case(seed)
        evaluation, _ = _score_quietly(predictions, references)
        ours = evaluation.precision_at_recall_points()
        gt, dt = _coco_objects(faster, predictions, references)
        if dt is None or not gt.getAnnIds():
            continue  # covered against pycocotools above
        evaluator = faster.COCOeval_faster(gt, dt, "bbox", print_function=lambda *args: None)
        evaluator.params.iouThrs = np.array([0.3, *COCO_IOU_THRESHOLDS])
        evaluator.params.maxDets = [100]
        evaluator.evaluate()
        evaluator.accumulate()
        area_all = evaluator.params.areaRngLbl.index("all")
        theirs = evaluator.eval["precision"][:, :, 0, area_all, -1]
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=TOLERANCE, err_msg=f"seed {seed}")
