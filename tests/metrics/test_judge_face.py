"""The judges through the evaluate face: compute(case_judge=..., keyword_judge=...)."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from novabench.errors import NovaInputError
from novabench.metrics.judge import OpenAICaseJudge
from novabench.metrics.keyword_judge import KEYWORD_GROUPS, OpenAIKeywordJudge
from tests.fake_openai_server import FakeOpenAIServer, request_text
from tests.lazy_import import LazyModule

# Imported by the first test that reads it (tests/lazy_import.py), not at collection.
evaluate = LazyModule("evaluate")

MODULE = str(Path(__file__).resolve().parents[2] / "metrics" / "nova_metric")
KEYWORDS_ONLY = ["BLEU-4", "ROUGE-L", "METEOR", "BERTScore-F1"]


def answer(body: dict[str, Any]) -> str:
    """Case requests: the slot of the first prediction spelt 'GBM'; keyword requests: fixed sets."""
    text, _ = request_text(body)
    if "REFERENCE: " in text:
        reference = {**{g: [] for g in KEYWORD_GROUPS}, "findings": ["glioma"], "label": "abnormal"}
        prediction = {**reference, "findings": ["glioma", "oedema"]}
        return json.dumps({"reference": reference, "prediction": prediction})
    slots = [line.split(". ", 1) for line in text.splitlines() if line[:1].isdigit()]
    slot = next((int(number) for number, item in slots if item == "GBM"), None)
    return json.dumps({"matched_slot": slot})


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(answer=answer) as fake:
        yield fake


def test_diagnosis_face_with_the_case_judge(server: FakeOpenAIServer) -> None:
    judge = OpenAICaseJudge(server.base_url, "judge-model", backoff=0.0)
    predictions = [["GBM", "abscess"], ["abscess", "GBM"], ["abscess"], []]
    references = ["Glioblastoma", "Glioblastoma", "Glioblastoma", "Glioblastoma"]
    result = evaluate.load(MODULE, "diagnosis").compute(
        predictions=predictions, references=references, case_judge=judge
    )
    # Slots 1, 2, none; the empty list is a miss never sent: top1 1/4, top5 2/4.
    assert result["top1"] == 0.25 and result["top5"] == 0.5
    assert result["matcher"] == judge.description and "top1-lexicon" not in result
    assert server.n_requests == 3 and judge.stats.calls == 3


def test_diagnosis_face_passes_the_case_rows_clinical_history(server: FakeOpenAIServer) -> None:
    import datasets

    rows = [
        {"case_id": "c1", "final_diagnosis": "Glioblastoma", "clinical_history": "Seizures."},
        {"case_id": "c2", "final_diagnosis": "Abscess", "clinical_history": " "},
    ]
    for references in (rows, datasets.Dataset.from_list(rows)):
        judge = OpenAICaseJudge(server.base_url, "judge-model", backoff=0.0)
        start = server.n_requests
        evaluate.load(MODULE, "diagnosis").compute(
            predictions=[["GBM"], ["GBM"]], references=references, case_judge=judge
        )
        sent = [request_text(body)[0] for body in server.bodies[start:]]
        assert len(sent) == 2
        with_context = [text for text in sent if "Case context:" in text]
        assert len(with_context) == 1
        assert "Case context: Seizures.\nReference diagnosis: Glioblastoma" in with_context[0]


def test_captioning_face_with_the_keyword_judge(server: FakeOpenAIServer) -> None:
    judge = OpenAIKeywordJudge(server.base_url, "judge-model", backoff=0.0)
    result = evaluate.load(MODULE, "captioning").compute(
        predictions=["Glioma with oedema."],
        references=["Glioma."],
        keyword_judge=judge,
        exclude=KEYWORDS_ONLY,
    )
    # Clinical R {glioma} P {glioma, oedema}: 2*1/(1+2); no modality keyword on either side.
    assert result["ClinicalF1"] == pytest.approx(2 / 3)
    assert result["n_pairs_without_modality_keywords"] == 1
    assert result["BinaryF1"] == 1.0
    assert result["keyword_extractor"] == judge.description
    assert server.n_requests == 1


def test_all_face_routes_each_judge(server: FakeOpenAIServer) -> None:
    rows = [
        {"boxes": [[0, 0, 9, 9]], "caption": "Glioma.", "final_diagnosis": "GBM", "case_id": "c1"},
        {"boxes": [[0, 0, 9, 9]], "caption": "Glioma.", "final_diagnosis": "GBM", "case_id": "c1"},
    ]
    predictions = [{"boxes": [], "caption": "Glioma, oedema.", "diagnoses": ["x", "GBM"]}] * 2
    result = evaluate.load(MODULE, "all").compute(
        predictions=predictions,
        references=rows,
        exclude=KEYWORDS_ONLY,
        case_judge=OpenAICaseJudge(server.base_url, "m", backoff=0.0),
        keyword_judge=OpenAIKeywordJudge(server.base_url, "m", backoff=0.0),
    )
    assert result["diagnosis"]["top1"] == 0.0 and result["diagnosis"]["top5"] == 1.0
    assert result["captioning"]["ClinicalF1"] == pytest.approx(2 / 3)
    assert server.n_requests == 2  # one case, one distinct caption pair


def test_all_face_passes_the_images_rows_clinical_history(server: FakeOpenAIServer) -> None:
    import datasets

    def row(case_id: str, history: str | None) -> dict[str, Any]:
        return {"boxes": [[0, 0, 9, 9]], "caption": "Glioma.", "final_diagnosis": "Glioblastoma",
                "case_id": case_id, "clinical_history": history}  # fmt: skip

    # Case c1's history on both its images, c2's history blank (no context sent), c3 none.
    rows = [row("c1", "Seizures."), row("c1", "Seizures."), row("c2", " "), row("c3", None)]
    predictions = [{"boxes": [], "caption": "Glioma.", "diagnoses": ["GBM"]}] * len(rows)
    for references in (rows, datasets.Dataset.from_list(rows)):
        judge = OpenAICaseJudge(server.base_url, "judge-model", backoff=0.0)
        start = server.n_requests
        result = evaluate.load(MODULE, "all").compute(
            predictions=predictions, references=references, case_judge=judge,
            exclude=KEYWORDS_ONLY,
        )  # fmt: skip
        sent = [request_text(body)[0] for body in server.bodies[start:]]
        assert len(sent) == 3 and result["diagnosis"]["n_cases"] == 3
        with_context = [text for text in sent if "Case context:" in text]
        assert len(with_context) == 1
        assert "Case context: Seizures.\nReference diagnosis: Glioblastoma" in with_context[0]


def test_all_face_refuses_two_histories_for_one_case(server: FakeOpenAIServer) -> None:
    rows = [
        {
            "boxes": [[0, 0, 9, 9]],
            "caption": "Glioma.",
            "final_diagnosis": "GBM",
            "case_id": "c1",
            "clinical_history": history,
        }  # fmt: skip
        for history in ("Seizures.", "Headache.")
    ]
    predictions = [{"boxes": [], "caption": "Glioma.", "diagnoses": ["GBM"]}] * 2
    with pytest.raises(NovaInputError, match="two clinical histories"):
        evaluate.load(MODULE, "all").compute(
            predictions=predictions, references=rows, exclude=KEYWORDS_ONLY,
            case_judge=OpenAICaseJudge(server.base_url, "m", backoff=0.0),
        )  # fmt: skip
    assert server.n_requests == 0
    # The refused instance keeps evaluate's cache-file lock until it is collected (it lives in
    # the exception's reference cycle); collected now, the next load need not wait out the lock.
    gc.collect()
    # The offline matcher reads no history, so it scores the same rows.
    result = evaluate.load(MODULE, "all").compute(
        predictions=predictions, references=rows, exclude=KEYWORDS_ONLY
    )
    assert result["diagnosis"]["top1-lexicon"] == 1.0


def test_plain_all_task_passes_the_rows_clinical_history(server: FakeOpenAIServer) -> None:
    from novabench.metrics.tasks import compute_task

    rows = [{"boxes": [[0, 0, 9, 9]], "caption": "Glioma.", "final_diagnosis": "Glioblastoma",
             "case_id": "c1", "clinical_history": "Seizures."}]  # fmt: skip
    predictions = [{"boxes": [], "caption": "Glioma.", "diagnoses": ["GBM"]}]
    judge = OpenAICaseJudge(server.base_url, "judge-model", backoff=0.0)
    compute_task("all", predictions, rows, case_judge=judge, exclude=KEYWORDS_ONLY)
    assert server.n_requests == 1
    assert "Case context: Seizures.\n" in request_text(server.bodies[0])[0]


@pytest.mark.parametrize(
    ("task", "options", "message"),
    [
        ("diagnosis", {"case_judge": object()}, "judge_cases"),
        ("captioning", {"keyword_judge": "http://judge"}, "extract_pairs"),
        ("diagnosis", {"case_judge": "CASE", "matcher": str.__eq__}, "not both"),
        ("captioning", {"keyword_judge": "KEYWORDS", "keyword_extractor": str}, "not both"),
    ],
)
def test_bad_judge_options_fail_before_the_data_is_consumed(
    server: FakeOpenAIServer, task: str, options: dict[str, Any], message: str
) -> None:
    judges = {
        "CASE": OpenAICaseJudge(server.base_url, "m"),
        "KEYWORDS": OpenAIKeywordJudge(server.base_url, "m"),
    }
    options = {key: judges.get(value, value) if isinstance(value, str) else value
               for key, value in options.items()}  # fmt: skip
    metric = evaluate.load(MODULE, task)
    prediction = ["GBM"] if task == "diagnosis" else "Glioma."
    metric.add(prediction=prediction, reference="Glioblastoma")
    extra: dict[str, Any] = {"exclude": KEYWORDS_ONLY} if task == "captioning" else {}
    with pytest.raises(NovaInputError, match=message):
        metric.compute(**extra, **options)
    # The data is still there for a corrected call.
    assert metric.compute(**extra)
    assert server.n_requests == 0
