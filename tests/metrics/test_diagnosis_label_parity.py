"""The evaluate module and `nova evaluate` score a labelled diagnosis answer alike (dxparse19).

``evaluate.load(metric_path(), "diagnosis")`` hands a plain string to the matcher, which
drops a leading label; the CLI reads raw answers with ``parse_diagnoses``, which kept the
label as the diagnosis ("Likely diagnosis: CADASIL" scored 1.0 in the module, 0.0 in the
CLI). Both now read the diagnosis after the label. One difference is the module's rule: a
plain string is ONE diagnosis there (never cut into a list), so a one-line list gives the CLI
its five names and the module one string; passed as a list, the module scores it as the CLI.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from types import SimpleNamespace

import pytest

from novabench import metric_path
from novabench.metrics.diagnosis import score_diagnosis
from novabench.run.parsers import parse_diagnoses
from novabench.run.predictions import parse_raw, read_predictions
from tests.lazy_import import LazyModule

evaluate = LazyModule("evaluate")

# (raw answer, final diagnosis, whether the answer names it): written as chat models answer.
LABELLED = [
    ("Likely diagnosis: CADASIL", "CADASIL", True),
    (
        "Answer: Neuromyelitis optica spectrum disorder",
        "Neuromyelitis optica spectrum disorder",
        True,
    ),
    ("Final answer: Herpes simplex encephalitis", "Herpes simplex encephalitis", True),
    ("**Final Answer:** Moyamoya disease", "Moyamoya disease", True),
    ("Impression: Balo concentric sclerosis", "Balo concentric sclerosis", True),
    (
        "Clinical impression: Progressive multifocal leukoencephalopathy",
        "Progressive multifocal leukoencephalopathy",
        True,
    ),
    ("Assessment: Susac syndrome", "Susac syndrome", True),
    ("Conclusion: Neurosarcoidosis", "Neurosarcoidosis", True),
    ("**Diagnosis:** Creutzfeldt-Jakob disease", "Creutzfeldt-Jakob disease", True),
    ("Diagnosis - Tuberculous meningitis", "Tuberculous meningitis", True),
    ("Final impression - Osmotic demyelination syndrome", "Osmotic demyelination syndrome", True),
    ("Diagnosis: Meningioma, atypical", "Atypical meningioma", True),
    ("Likely diagnosis: CADASIL", "Susac syndrome", False),
    ("Answer: Glioblastoma", "Primary CNS lymphoma", False),
    ("Diagnosis: N/A", "Glioma", False),
]


@pytest.fixture(scope="module")
def module() -> evaluate.EvaluationModule:
    return evaluate.load(metric_path(), "diagnosis")


def _module_scores(module: evaluate.EvaluationModule, prediction: object, reference: str) -> tuple:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the proxy's "not the paper's top1" warning
        result = module.compute(predictions=[prediction], references=[reference])
    return result["top1-lexicon"], result["top5-lexicon"]


def _cli_diagnoses(tmp_path: Path, answers: list[str]) -> list[list[str]]:
    """The diagnoses `nova evaluate` reads from a raw predictions file of these answers."""
    cases = [SimpleNamespace(case_id=f"case{i + 1:04d}") for i in range(len(answers))]
    images = [
        SimpleNamespace(filename=f"{c.case_id}_001.png", case_id=c.case_id, width=480, height=480)
        for c in cases
    ]
    release = SimpleNamespace(images=images, cases=lambda: cases)
    raw = tmp_path / "raw.jsonl"
    raw.write_text(
        "".join(
            json.dumps({"case_id": c.case_id, "raw_diagnoses": a}) + "\n"
            for c, a in zip(cases, answers, strict=True)
        ),
        encoding="utf-8",
    )
    return parse_raw(read_predictions(raw, release), release).diagnoses()


def test_the_module_and_the_cli_agree_on_labelled_answers(
    module: evaluate.EvaluationModule, tmp_path: Path
) -> None:
    read = _cli_diagnoses(tmp_path, [answer for answer, _, _ in LABELLED])
    for (answer, reference, names_it), diagnoses in zip(LABELLED, read, strict=True):
        cli = score_diagnosis([diagnoses], [reference])
        expected = (float(names_it), float(names_it))
        assert (cli["top1-lexicon"], cli["top5-lexicon"]) == expected, answer
        assert _module_scores(module, answer, reference) == expected, answer


def test_a_one_line_list_is_cut_by_the_cli_and_one_string_in_the_module(
    module: evaluate.EvaluationModule, tmp_path: Path
) -> None:
    answer = "Diagnosis: Glioblastoma; Lymphoma; CADASIL"
    [diagnoses] = _cli_diagnoses(tmp_path, [answer])
    assert diagnoses == parse_diagnoses(answer).diagnoses == ["Glioblastoma", "Lymphoma", "CADASIL"]
    cli = score_diagnosis([diagnoses], ["CADASIL"])
    assert (cli["top1-lexicon"], cli["top5-lexicon"]) == (0.0, 1.0)
    # Given as a list (the metric card's advice), the module scores what the CLI scores.
    assert _module_scores(module, diagnoses, "CADASIL") == (0.0, 1.0)
