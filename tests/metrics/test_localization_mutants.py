"""Localisation behaviours that the mutation check (scripts/mutation_check.py) found unpinned.

Each test names the behaviour, not the mutant; every expected number is worked out by hand in
the comment beside it (COCO's rules as pycocotools' COCOeval applies them).
"""

from __future__ import annotations

import numpy as np
import pytest

from novabench.metrics.localization import coco_average_precision, prepare_localization

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
