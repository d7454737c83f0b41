"""Floor baselines: answers in the task formats, deterministic, and parseable by our parsers."""

from __future__ import annotations

import json

from novabench.run.baselines import (
    describe_findings,
    diagnosis_answer,
    localization_answer,
    rank_diagnoses,
)
from tests.run.test_detector import phantom


def test_localization_answer_is_protocol_lines_that_round_trip() -> None:
    from novabench.run.parsers import parse_localization

    image = phantom(lesion=(60, 55, 8))
    answer = localization_answer(image)
    assert answer != "no target"
    parsed = parse_localization(answer, image_size=(160, 160), convention="protocol")
    assert len(parsed.boxes) >= 1
    x, y, w, h = parsed.boxes[0]
    assert x <= 55 <= x + w and y <= 60 <= y + h


def test_no_lesion_gives_no_target() -> None:
    assert localization_answer(phantom()) == "no target"


def test_caption_names_side_by_radiological_convention() -> None:
    # Lesion on the image's left half (column 55 < centre 80): the patient's right.
    caption = describe_findings(phantom(lesion=(60, 55, 8)))
    assert "right" in caption and "hyperintense" in caption and "frontal" in caption
    mirrored = describe_findings(phantom(lesion=(60, 105, 8)))
    assert "left" in mirrored


def test_caption_without_finding() -> None:
    assert "without a focal" in describe_findings(phantom())


def test_rank_diagnoses_is_deterministic_and_uses_the_history() -> None:
    history = "Young woman with optic neuritis, relapsing-remitting weakness and oligoclonal bands."
    findings = ["Axial FLAIR: periventricular ovoid demyelinating plaques (Dawson fingers)."]
    first = rank_diagnoses(history, findings, k=5)
    assert first == rank_diagnoses(history, findings, k=5)
    assert len(first) == len(set(first)) == 5
    from novabench.metrics.diagnosis import LexiconDiagnosisMatcher

    matcher = LexiconDiagnosisMatcher()
    assert any(matcher("multiple sclerosis", name) for name in first)


def test_diagnosis_answer_is_the_protocol_json() -> None:
    from novabench.run.parsers import parse_diagnoses

    answer = diagnosis_answer(
        "Seizures and facial angiofibromas.", ["Cortical tubers and subependymal nodules."]
    )
    payload = json.loads(answer)
    assert len(payload["other_possible_diagnoses"]) == 4
    assert parse_diagnoses(answer).diagnoses[0] == payload["most_likely_diagnosis"]
