"""Correct diagnoses today's dxparse21 / dxfix22 rules still lost (user23, dxfix23).

Each rule now fires only where it is safe, and reads as the tree before dxparse21 (3d2d189)
did everywhere else:

1. A one-line lead-in list opens only when the lead-in starts the answer (its first non-empty
   line, nothing before the lead-in on that line but a bullet or markup).
2. A dash-numbered run ("1- A\\n2- B") is a list only when no earlier line names anything (a
   label or lead-in line such as "Differential:" may stand above it), and the unspaced form
   needs "1-" and "2-" with no skipped number, as the spaced one does.
3. After a declining clause in a label's value, a name is read only when a hedge word
   directly introduces it; "the lexicon finds a disease in it" no longer counts.

The expected readings are written by hand; those marked "as 3d2d189" were checked against
that tree's ``parse_diagnoses``.
"""

from __future__ import annotations

import pytest

from novabench.metrics.diagnosis import score_diagnosis
from novabench.run.parsers import parse_diagnoses

# 1. a lead-in after a name on its line: the name stays the answer (as 3d2d189)
LEAD_IN_AFTER_A_NAME = [
    (
        "Glioblastoma. The features are consistent with: 1. Ring enhancement 2. Central necrosis",
        ["Glioblastoma"],
    ),
    (
        "Likely glioblastoma; appearance is consistent with: 1. A necrotic core 2. Vasogenic edema",
        ["glioblastoma", "appearance is consistent with"],
    ),
    ("Glioblastoma. MRI is concerning for: 1. Mass effect 2. Midline shift", ["Glioblastoma"]),
    (
        "Glioblastoma. This appearance is typical of: 1. Aggressive tumors 2. High-grade lesions",
        ["Glioblastoma"],
    ),
    (
        "Glioblastoma, with features typical of: 1. WHO grade 4 2. IDH-wildtype",
        ["Glioblastoma, with features typical of"],
    ),
]


@pytest.mark.parametrize(("answer", "expected"), LEAD_IN_AFTER_A_NAME)
def test_a_lead_in_after_a_name_opens_no_list(answer: str, expected: list[str]) -> None:
    parsed = parse_diagnoses(answer)
    assert parsed.diagnoses == expected
    # one case, reference "Glioblastoma": the name before the lead-in is the top-1 hit
    assert score_diagnosis([parsed.diagnoses], ["Glioblastoma"])["top1-lexicon"] == 1.0


@pytest.mark.parametrize(
    "answer",
    [
        "These findings are concerning for: 1. Glioblastoma 2. Lymphoma",
        "- These findings are concerning for: 1. Glioblastoma 2. Lymphoma",
        "**These findings are concerning for:** 1. Glioblastoma 2. Lymphoma",
        "\n\nMy ranked list is: 1. Glioblastoma 2. Lymphoma",
    ],
)
def test_a_lead_in_that_starts_the_answer_still_opens_its_list(answer: str) -> None:
    assert parse_diagnoses(answer).diagnoses == ["Glioblastoma", "Lymphoma"]


def test_a_sentence_end_before_a_comma_is_before_the_lead_in() -> None:
    answer = "Final diagnosis not found., with features typical of: 1. WHO grade 4 2. IDH-wildtype"
    assert parse_diagnoses(answer).diagnoses != ["WHO grade 4", "IDH-wildtype"]


def test_a_lead_in_below_another_line_opens_no_list() -> None:
    # as 3d2d189: nothing read (the first line was no list either)
    answer = "Here is my answer.\nMy ranked list is: 1. Glioblastoma 2. Lymphoma"
    assert parse_diagnoses(answer).diagnoses == []


# 2. a dash-numbered run below a name, or unspaced without "2-": as written (as 3d2d189)
DASH_AS_WRITTEN = [
    ("Glioblastoma\n\nReasoning:\n1- Rim\n2- Necrosis", ["Glioblastoma", "1- Rim", "2- Necrosis"]),
    (
        "Glioblastoma\n1- Irregular enhancing rim\n2- Central necrosis",
        ["Glioblastoma", "1- Irregular enhancing rim", "2- Central necrosis"],
    ),
    ("1- Glioblastoma\n3- Lymphoma", ["1- Glioblastoma", "3- Lymphoma"]),
    ("1- Glioblastoma", ["1- Glioblastoma"]),
]


@pytest.mark.parametrize(("answer", "expected"), DASH_AS_WRITTEN)
def test_a_dash_run_that_is_not_the_answer_reads_as_written(
    answer: str, expected: list[str]
) -> None:
    assert parse_diagnoses(answer).diagnoses == expected


@pytest.mark.parametrize(
    "answer",
    [
        "1- Glioblastoma\n2- Lymphoma",
        "1 - Glioblastoma\n2 - Lymphoma",
        "Differential:\n1- Glioblastoma\n2- Lymphoma",
        "**Answer:**\n\n1 - Glioblastoma\n2 - Lymphoma",
        "Likely diagnosis:\n1- Glioblastoma\n2- Lymphoma",
    ],
)
def test_a_dash_run_that_is_the_answer_is_a_list(answer: str) -> None:
    assert parse_diagnoses(answer).diagnoses == ["Glioblastoma", "Lymphoma"]


# 3. after a declining clause: a hedged name is read, anything else is a refusal
HEDGED_AFTER_DECLINING = [
    ("Diagnosis: cannot be made, but features favour a high-grade glioma", "high-grade glioma"),
    ("Diagnosis: I cannot be certain, but it is probably glioblastoma", "glioblastoma"),
    ("Diagnosis: I cannot be certain, but this is probably a glioblastoma", "glioblastoma"),
    ("I cannot be sure, but this looks like a meningioma", "meningioma"),
    ("Diagnosis: cannot be made; consistent with glioblastoma", "glioblastoma"),
    ("Diagnosis: cannot be made definitively; likely glioblastoma", "glioblastoma"),
    ("Diagnosis: cannot be made, suspected glioblastoma", "glioblastoma"),
]


def test_consider_introduces_the_names_after_declining() -> None:
    # 3d2d189 read "consider glioblastoma", "lymphoma" (a top-1 hit for Glioblastoma)
    answer = (
        "Diagnosis: Not possible to determine without contrast; consider glioblastoma vs lymphoma"
    )
    parsed = parse_diagnoses(answer)
    assert (parsed.diagnoses, parsed.status) == (["glioblastoma", "lymphoma"], "fallback_list")
    # a long name is still a name (281-case release: six such cases were refusals)
    long = answer.replace("glioblastoma", "Primary angiitis of the central nervous system")
    assert parse_diagnoses(long).diagnoses == [
        "Primary angiitis of the central nervous system",
        "lymphoma",
    ]


@pytest.mark.parametrize(("answer", "name"), HEDGED_AFTER_DECLINING)
def test_a_hedged_name_after_declining_is_read(answer: str, name: str) -> None:
    parsed = parse_diagnoses(answer)
    assert (parsed.diagnoses, parsed.status) == ([name], "fallback_list")


@pytest.mark.parametrize(
    "answer",
    [
        "Diagnosis: cannot be made; biopsy to exclude lymphoma",
        "Diagnosis: cannot be made definitively; biopsy to exclude lymphoma",
        "Diagnosis: cannot be made; DWI would help distinguish abscess from tumor",
        "Diagnosis: unable to determine - stroke should be ruled out clinically",
        # a hedged reason, not a name
        "Diagnosis: cannot be made; likely due to motion artefact",
        "Diagnosis: cannot be made, likely because of lymphoma-like motion artefact",
    ],
)
def test_a_next_step_after_declining_is_no_diagnosis(answer: str) -> None:
    parsed = parse_diagnoses(answer)
    assert (parsed.diagnoses, parsed.status) == ([], "refusal")
    # a reference named in the next step is no top-1 hit
    assert score_diagnosis([parsed.diagnoses], ["Lymphoma"])["top5-lexicon"] == 0.0
