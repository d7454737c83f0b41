"""Labelled diagnosis answers keep their diagnosis, not their label (dxparse19, user18).

``Answer: Meningioma``, ``Likely diagnosis: CADASIL``, ``**Final answer:** X`` were read as the
diagnoses "Answer", "Likely diagnosis", "Final answer" (the bare one-line rule cut the line at
its colon); ``Diagnosis: A; B; C`` kept only A, while the unlabelled line gave all three;
``Diagnosis: N/A`` gave a diagnosis named "N/A"; a JSON ``other_possible_diagnoses`` written as
one comma string stayed one diagnosis; and a refusal was ``unparseable``. A label is now
``<words>:`` or ``<words> -`` at the start of a line whose words are a label (not a disease);
its value is read as the same line without the label would be.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from novabench import registry
from novabench.run.parsers import parse_diagnoses
from novabench.run.parsers.stats import ParseStats
from novabench.run.predictions import parse_raw, read_predictions

# The labels models put before their one answer (GPT-4o, Gemini, Qwen2.5-VL, LLaVA, MedGemma).
LEAD_LABELS = [
    "Answer",
    "Impression",
    "Assessment",
    "Conclusion",
    "Likely diagnosis",
    "Final answer",
    "Diagnosis",
    "Primary diagnosis",
    "Top diagnosis",
    "Leading diagnosis",
    "Working diagnosis",
    "Clinical impression",
    "Radiological diagnosis",
    "Final impression",
    "Best guess",
    "Most likely diagnosis",
    "DDx",
]


@pytest.mark.parametrize("label", LEAD_LABELS)
@pytest.mark.parametrize(
    "written",
    [
        "{label}: Meningioma",
        "**{label}:** Meningioma",
        "**{label}**: Meningioma",
        "{label} - Meningioma",
    ],
)
def test_a_labelled_one_line_answer_is_its_diagnosis_never_its_label(
    label: str, written: str
) -> None:
    parsed = parse_diagnoses(written.format(label=label))
    assert (parsed.status, parsed.diagnoses) == ("fallback_list", ["Meningioma"])


@pytest.mark.parametrize(
    "answer",
    [
        "Diagnosis: Unknown",
        "Diagnosis: none",
        "Diagnosis: N/A",
        "**Final answer:** N/A",
        "Answer: Undetermined",
        "Impression: no definitive diagnosis. Clinical correlation is recommended.",
        "Unknown",
    ],
)
def test_a_label_followed_by_no_diagnosis_is_an_answer_without_one(answer: str) -> None:
    parsed = parse_diagnoses(answer)
    assert (parsed.status, parsed.diagnoses) == ("empty", [])
    assert str(parsed.error).startswith("the answer names no diagnosis: ")


# Lines as a model writes them without a label, and what each holds (read by hand with the
# README's rule: semicolons cut; 3+ comma pieces without a qualifier cut; two known diseases
# cut; a qualifier or a name the lexicon knows with its commas stays whole).
LINES = [
    (
        "Glioblastoma; Lymphoma; Metastasis",
        ["Glioblastoma", "Lymphoma", "Metastasis"],
        "fallback_list",
    ),
    (
        "Glioblastoma, lymphoma, metastasis, abscess, tumefactive MS",
        ["Glioblastoma", "lymphoma", "metastasis", "abscess", "tumefactive MS"],
        "fallback_list",
    ),
    (
        "Lymphoma, Abscess, Glioma, CADASIL",
        ["Lymphoma", "Abscess", "Glioma", "CADASIL"],
        "fallback_list",
    ),
    ("Susac syndrome, CADASIL", ["Susac syndrome", "CADASIL"], "fallback_list"),
    ("Meningioma, atypical", ["Meningioma, atypical"], "fallback_comma_one_name"),
    (
        "Astrocytoma, IDH-mutant, CNS WHO grade 2",
        ["Astrocytoma, IDH-mutant, CNS WHO grade 2"],
        "fallback_list",
    ),
    ("Hand, foot and mouth disease", ["Hand, foot and mouth disease"], "fallback_list"),
    (
        "Glioblastoma, IDH-wildtype; lymphoma",
        ["Glioblastoma, IDH-wildtype", "lymphoma"],
        "fallback_list",
    ),
]


@pytest.mark.parametrize(("line", "names", "status"), LINES)
@pytest.mark.parametrize(
    "label", ["Diagnosis: ", "**Answer:** ", "Likely diagnosis - ", "Diagnoses: "]
)
def test_a_label_does_not_change_how_a_line_is_cut(
    line: str, names: list[str], status: str, label: str
) -> None:
    bare = parse_diagnoses(line)
    labelled = parse_diagnoses(label + line)
    assert (bare.diagnoses, bare.status) == (names, status)
    assert (labelled.diagnoses, labelled.status) == (names, status)


# Whole answers as the models write them, and the diagnoses in them (read by hand).
ANSWERS = [
    (  # GPT-4o, markdown headings and a numbered list under a label
        "**Most Likely Diagnosis:** Primary CNS lymphoma\n\n**Other Possible Diagnoses:**\n"
        "1. Glioblastoma\n2. Metastasis\n3. Tumefactive demyelination\n4. Toxoplasmosis",
        [
            "Primary CNS lymphoma",
            "Glioblastoma",
            "Metastasis",
            "Tumefactive demyelination",
            "Toxoplasmosis",
        ],
    ),
    (  # Gemini: findings first, then the answer
        "Findings: A ring-enhancing lesion in the right frontal lobe with surrounding oedema.\n"
        "Impression: Glioblastoma\nDifferentials: Metastasis, abscess",
        ["Glioblastoma", "Metastasis", "abscess"],
    ),
    (  # Qwen2.5-VL
        "Final answer: Herpes simplex encephalitis",
        ["Herpes simplex encephalitis"],
    ),
    (  # LLaVA: a label, a dash and an explanation
        "Diagnosis - Meningioma. The lesion is extra-axial with a dural tail.",
        ["Meningioma"],
    ),
    (  # MedGemma: bold label on each line
        "**Likely diagnosis:** CADASIL\n**Other possibilities:** Susac syndrome, small vessel "
        "disease, multiple sclerosis",
        ["CADASIL", "Susac syndrome", "small vessel disease", "multiple sclerosis"],
    ),
    (  # bullets of findings above the diagnosis: a findings line names no diagnosis
        "- Location: left frontal lobe\n- Signal: T2 hyperintense, no enhancement\n"
        "- Diagnosis: Oligodendroglioma",
        ["Oligodendroglioma"],
    ),
    (
        "Answer: Neurosarcoidosis; Tuberculous meningitis; Lymphoma; IgG4-related disease; "
        "Metastasis",
        [
            "Neurosarcoidosis",
            "Tuberculous meningitis",
            "Lymphoma",
            "IgG4-related disease",
            "Metastasis",
        ],
    ),
    (  # a statement after the label still ranks the names it gives
        "Most likely: Glioblastoma, followed by lymphoma and metastasis",
        ["Glioblastoma", "lymphoma", "metastasis"],
    ),
    (  # a clause after the comma is no second name
        "Diagnosis: Glioblastoma, given the ring enhancement and central necrosis",
        ["Glioblastoma"],
    ),
    (  # GPT-4o: a sentence after the label; its statement names the diagnosis
        "Answer: Based on the MRI findings and clinical history, the most likely diagnosis is "
        "glioblastoma.",
        ["glioblastoma"],
    ),
    (
        "Impression: Findings are most consistent with a cerebral abscess. Differential "
        "includes necrotic glioblastoma and metastasis.",
        ["cerebral abscess", "necrotic glioblastoma", "metastasis"],
    ),
    (  # a remark in brackets after the label
        "Diagnosis (most likely): Ependymoma",
        ["Ependymoma"],
    ),
]


@pytest.mark.parametrize(("answer", "names"), ANSWERS)
def test_labelled_answers_of_chat_models(answer: str, names: list[str]) -> None:
    parsed = parse_diagnoses(answer)
    assert (parsed.status, parsed.diagnoses) == ("fallback_list", names)


@pytest.mark.parametrize(
    "answer",
    [
        "Imaging findings: ring-enhancing lesion in the left frontal lobe",
        "Key findings: restricted diffusion",
    ],
)
def test_a_findings_line_alone_is_no_diagnosis(answer: str) -> None:
    assert parse_diagnoses(answer).status == "unparseable"


@pytest.mark.parametrize("answer", ["Meningioma: most likely", "Glioblastoma - favoured"])
def test_a_disease_before_a_colon_is_a_name_not_a_label(answer: str) -> None:
    assert parse_diagnoses(answer).diagnoses == [answer.split(":")[0].split(" - ")[0]]


def test_other_diagnoses_written_as_one_comma_string_are_cut_as_a_line() -> None:
    answer = json.dumps(
        {
            "most_likely_diagnosis": "Meningioma",
            "other_possible_diagnoses": "Lymphoma, Metastasis, Sarcoidosis, Tuberculosis",
        }
    )
    parsed = parse_diagnoses(answer)
    assert (parsed.status, parsed.diagnoses) == (
        "ok",
        ["Meningioma", "Lymphoma", "Metastasis", "Sarcoidosis", "Tuberculosis"],
    )
    # A name with a qualifier stays whole, as on a line; a list item is never cut.
    kept = json.dumps(
        {
            "most_likely_diagnosis": "Meningioma, atypical",
            "other_possible_diagnoses": ["Glioblastoma, IDH-wildtype", "Lymphoma"],
        }
    )
    assert parse_diagnoses(kept).diagnoses == [
        "Meningioma, atypical",
        "Glioblastoma, IDH-wildtype",
        "Lymphoma",
    ]


REFUSALS = [
    "I cannot help with medical diagnosis.",
    "I cannot provide a diagnosis without clinical correlation",
    "I'm sorry, but I can't provide medical diagnoses. Please consult a qualified physician.",
    "As an AI language model, I am not able to diagnose medical conditions.",
    "I\u2019m unable to provide a diagnosis.",
]


@pytest.mark.parametrize("answer", REFUSALS)
def test_a_refusal_is_counted_as_a_refusal(answer: str) -> None:
    parsed = parse_diagnoses(answer)
    assert (parsed.status, parsed.diagnoses) == ("refusal", [])
    assert str(parsed.error).startswith("the model declined to give a diagnosis: ")


def test_a_disclaimer_before_a_diagnosis_is_no_refusal() -> None:
    answer = "I cannot give a definitive diagnosis, but the most likely diagnosis is glioblastoma."
    assert parse_diagnoses(answer).diagnoses == ["glioblastoma"]


def test_a_refusal_is_a_non_answer_in_the_counts_of_a_raw_file(tmp_path: Path) -> None:
    assert "refusal" in registry.TASKS["diagnosis"].failure_statuses
    stats = ParseStats.from_results(parse_diagnoses(a) for a in [REFUSALS[0], "Answer: Glioma"])
    assert stats.status_counts == {"refusal": 1, "fallback_list": 1} and stats.n_failed == 1

    cases = [SimpleNamespace(case_id=f"case000{i}", final_diagnosis="Glioma") for i in (1, 2, 3)]
    images = [
        SimpleNamespace(
            filename=f"{case.case_id}_001.png", case_id=case.case_id, width=480, height=480
        )
        for case in cases
    ]
    release = SimpleNamespace(images=images, cases=lambda: cases)
    raw = tmp_path / "raw.jsonl"
    answers = [REFUSALS[2], "Likely diagnosis: Glioma", "Diagnosis: N/A"]
    raw.write_text(
        "".join(
            json.dumps({"case_id": case.case_id, "raw_diagnoses": answer}) + "\n"
            for case, answer in zip(cases, answers, strict=True)
        ),
        encoding="utf-8",
    )
    parsed = parse_raw(read_predictions(raw, release), release)
    assert parsed.parse_counts("diagnosis") == {"empty": 1, "fallback_list": 1, "refusal": 1}
    assert parsed.diagnoses() == [[], ["Glioma"], []]
