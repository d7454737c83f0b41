"""Diagnosis answers last session's rules still misread (dxfix24).

Each rule fires only on the answer shape it is written for; every other answer reads as the
tree before it (3482645) did. The expected readings are written by hand; those marked "as
3482645" were checked against that tree's ``parse_diagnoses``.
"""

from __future__ import annotations

import pytest

from novabench.metrics.diagnosis import score_diagnosis
from novabench.run.parsers import parse_diagnoses


def _read(answer: str) -> tuple[str, list[str]]:
    parsed = parse_diagnoses(answer)
    return parsed.status, parsed.diagnoses


# 1. an apology that then gives a diagnosis is an answer, not a refusal
@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("I'm sorry for the earlier error. Final answer: Glioblastoma", ["Glioblastoma"]),
        ("Sorry, correction: Glioblastoma", ["Glioblastoma"]),
        ("Apologies - the diagnosis is glioblastoma.", ["glioblastoma"]),  # as 3482645
        ("I apologize for the confusion. Final answer: Meningioma", ["Meningioma"]),
        ("My apologies. Diagnosis: Glioblastoma", ["Glioblastoma"]),
        ("Sorry about that - final answer: Glioblastoma", ["Glioblastoma"]),
    ],
)
def test_an_apology_then_a_diagnosis_is_the_diagnosis(answer: str, expected: list[str]) -> None:
    assert _read(answer) == ("fallback_list", expected)
    assert score_diagnosis([expected], [expected[0]])["top1-lexicon"] == 1.0


@pytest.mark.parametrize(
    "answer",
    [
        "I'm sorry, I can't provide a diagnosis.",
        "I'm sorry, but I cannot provide a diagnosis. Final answer: none",
        "I'm sorry, I cannot diagnose. Final answer: consult a radiologist",
        "Sorry, correction: I cannot provide a diagnosis",
        "Sorry, I can't help with that.",
        "I'm sorry for the confusion. That was wrong.",  # no label, no correction: no name
        # dxfix27: after an apology only one specific disease is read (as 3482645)
        "Sorry, correction: Multiple sclerosis; ADEM; NMOSD",
        "I'm sorry, correction: the answer is glioblastoma",  # a sentence, no name: as 3482645
        "Sorry for the confusion. Glioblastoma",  # a bare name, no correction: as 3482645
    ],
)
def test_an_apology_that_declines_or_names_nothing_stays_a_refusal(answer: str) -> None:
    assert _read(answer) == ("refusal", [])


# 2. "cannot exclude X" names X (a hedge, low confidence); declining a diagnosis is refusal
@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("I cannot exclude a glioma.", ["glioma"]),
        ("Glioma cannot be excluded.", ["Glioma"]),
        ("A glioma cannot be excluded.", ["glioma"]),
        ("I cannot rule out glioblastoma.", ["glioblastoma"]),
        ("Diagnosis: cannot be excluded: glioblastoma", ["glioblastoma"]),
        ("Diagnosis: glioma cannot be excluded", ["glioma"]),
        ("Diagnosis: Glioblastoma. Lymphoma cannot be excluded.", ["Glioblastoma"]),  # as 3482645
    ],
)
def test_a_disease_that_cannot_be_excluded_is_named(answer: str, expected: list[str]) -> None:
    assert _read(answer) == ("fallback_list", expected)


@pytest.mark.parametrize(
    ("answer", "status"),
    [
        ("Diagnosis: cannot be made", "refusal"),  # as 3482645
        ("Diagnosis: cannot be determined", "empty"),  # as 3482645
        ("I cannot exclude anything from a single slice.", "refusal"),  # names no disease
        ("I cannot exclude a glioma; please consult a radiologist.", "refusal"),
        ("I cannot exclude glioma or lymphoma.", "refusal"),  # a list: as 3482645
    ],
)
def test_cannot_exclude_without_a_disease_stays_as_it_was(answer: str, status: str) -> None:
    assert _read(answer) == (status, [])


# 3. dxfix27 removed the reason-list rule (a hostile review: the reasons' end swallowed the
# differentials, 22 Top-5 losses): a reason list under a name reads as 3482645 read it
@pytest.mark.parametrize(
    ("answer", "expected"),
    [  # as 3482645
        ("Glioblastoma\nWhy:\n1. Rim\n2. Necrosis", ["Rim", "Necrosis"]),
        (
            "Glioblastoma\nReasons for this diagnosis:\n1. Rim enhancement\n2. Necrosis",
            ["Rim enhancement", "Necrosis"],
        ),
        (
            "Glioblastoma\n\nRationale:\n1. Rim enhancement\n2. Necrosis",
            ["Rim enhancement", "Necrosis"],
        ),
        ("**Glioblastoma**\nWhy:\n1. Rim\n2. Necrosis", ["Rim", "Necrosis"]),
        (
            "Glioblastoma\nKey features:\n- Rim enhancement\n- Necrosis",
            ["Rim enhancement", "Necrosis"],
        ),
        (
            "Glioblastoma\nFindings supporting this:\n1. Rim enhancement\n2. Necrosis",
            ["Rim enhancement", "Necrosis"],
        ),
        ("Diagnosis: Glioblastoma\nWhy:\n1. Rim\n2. Necrosis", ["Glioblastoma", "Rim", "Necrosis"]),
        (
            "Glioblastoma\n\nReasoning:\n1- Rim\n2- Necrosis",
            ["Glioblastoma", "1- Rim", "2- Necrosis"],
        ),
    ],
)
def test_a_reason_list_under_a_name_reads_as_before(answer: str, expected: list[str]) -> None:
    assert _read(answer) == ("fallback_list", expected)


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        # as 3482645: a differential list is diagnoses; a reason list with nothing above it
        # stays as it was
        ("Differential diagnosis:\n1. Glioblastoma\n2. Lymphoma", ["Glioblastoma", "Lymphoma"]),
        ("Why:\n1. Rim\n2. Necrosis", ["Rim", "Necrosis"]),
        ("Here is my analysis.\nWhy:\n1. Rim\n2. Necrosis", ["Rim", "Necrosis"]),
        (
            "Glioblastoma\nReasoning:\n1. Rim\n2. Necrosis\nDifferentials:\n1. Lymphoma",
            # the reasons sit between the name and the label: read as 3482645 reads it
            ["Rim", "Necrosis", "Lymphoma"],
        ),
    ],
)
def test_lists_that_are_not_reasons_under_a_name_read_as_before(
    answer: str, expected: list[str]
) -> None:
    assert _read(answer) == ("fallback_list", expected)


# 4. a first-line lead-in that ranks
@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (
            "My top 3 are: 1. Glioblastoma 2. Lymphoma 3. Metastasis",
            ["Glioblastoma", "Lymphoma", "Metastasis"],
        ),
        ("I would rank them: 1. Glioblastoma 2. Lymphoma", ["Glioblastoma", "Lymphoma"]),
        (
            "Top 5: 1. Glioblastoma 2. Lymphoma 3. Metastasis 4. Abscess 5. Tumefactive MS",
            ["Glioblastoma", "Lymphoma", "Metastasis", "Abscess", "Tumefactive MS"],
        ),
    ],
)
def test_a_ranking_lead_in_opens_its_list(answer: str, expected: list[str]) -> None:
    assert _read(answer) == ("fallback_list", expected)


def test_a_ranking_lead_in_after_a_name_opens_none() -> None:  # as 3482645
    assert _read("Glioblastoma. I would rank them: 1. Rim 2. Necrosis") == (
        "fallback_list",
        ["Glioblastoma"],
    )


@pytest.mark.parametrize(
    "answer",
    [  # as 3482645: a ranking of findings or features is no list of diagnoses
        "Top 3 features: 1. Rim 2. Necrosis",
        "I would rank the findings: 1. Rim 2. Necrosis",
    ],
)
def test_a_ranking_of_findings_opens_no_list(answer: str) -> None:
    assert _read(answer) == ("unparseable", [])


# 5. findings after a hedge lead-in: the rule is removed (dxfix25): the parser's lexicon
# does not know every disease the scorer matches ("Consistent with: 1. Encephalomalacia
# 2. Gliosis" lost a Top-1 hit), so a hedge lead-in's list reads as 3482645 read it
def test_findings_after_a_hedge_lead_in_read_as_before() -> None:  # as 3482645
    assert _read("Findings consistent with: 1. Ring enhancement 2. Necrosis") == (
        "fallback_list",
        ["Ring enhancement", "Necrosis"],
    )
    assert _read("Findings consistent with: 1. Glioblastoma 2. Lymphoma") == (
        "fallback_list",
        ["Glioblastoma", "Lymphoma"],
    )


# 6. dxfix27 removed the bracket rule (a hostile review: "Ring-enhancing lesion (glioblastoma -
# most likely)" lost its Top-1 hit, 31 in all): a spaced dash ends the name as 3482645 read it
@pytest.mark.parametrize(
    ("answer", "expected"),
    [  # as 3482645
        ("NMOSD (AQP4-IgG positive, 1 - 2 lesions)", ["NMOSD (AQP4-IgG positive, 1"]),
        (
            "1. NMOSD (AQP4-IgG positive - longitudinally extensive)\n2. Multiple sclerosis",
            ["NMOSD (AQP4-IgG positive", "Multiple sclerosis"],
        ),
        ("Diagnosis: NMOSD (AQP4-IgG positive, 1 - 2 lesions)", ["NMOSD (AQP4-IgG positive, 1"]),
        ("Glioblastoma - necrotic rim", ["Glioblastoma"]),
        ("1. Glioblastoma - necrotic rim (ring - enhancing)", ["Glioblastoma"]),
        ("Multiple sclerosis (2 - 3 lesions) vs ADEM", ["Multiple sclerosis (2"]),
    ],
)
def test_a_spaced_dash_inside_brackets_ends_the_name_as_before(
    answer: str, expected: list[str]
) -> None:
    assert _read(answer)[1] == expected


# 7. a one-line dash list after an "Others:" label under a name
@pytest.mark.parametrize(
    "answer",
    [
        "Glioblastoma\nOthers: 1- Lymphoma 2- Metastasis",
        "Glioblastoma\nOthers: 1 - Lymphoma 2 - Metastasis",
        "Glioblastoma\nDifferentials: 1- Lymphoma 2- Metastasis",
        "Most likely: Glioblastoma\nOthers: 1- Lymphoma 2- Metastasis",
    ],
)
def test_a_dash_list_after_an_others_label_is_read(answer: str) -> None:
    assert _read(answer) == ("fallback_list", ["Glioblastoma", "Lymphoma", "Metastasis"])


# 8. the reason clause after a hedge and a name on the first line
@pytest.mark.parametrize(
    "answer",
    [
        "Most likely glioblastoma due to: 1. Ring enhancement 2. Necrosis",
        "Most likely glioblastoma due to: 1. Ring enhancement with central necrosis and "
        "surrounding vasogenic edema 2. Mass effect",
        "Most likely glioblastoma because of the necrotic rim",
        "Most likely glioblastoma given the necrotic rim",
        "Most likely glioblastoma as evidenced by: 1. Ring enhancement 2. Necrosis",
        "Likely glioblastoma due to the irregular enhancing rim and central necrosis",
    ],
)
def test_a_reason_clause_after_a_hedged_name_is_cut(answer: str) -> None:
    assert _read(answer) == ("fallback_list", ["glioblastoma"])


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        # as 3482645: no hedge before the name, or no name before the clause
        (
            "Hypoxic ischemic injury due to cardiac arrest",
            ["Hypoxic ischemic injury due to cardiac arrest"],
        ),
        ("Most likely due to: 1. Ring enhancement 2. Necrosis", ["Most likely due to"]),
        (
            "Most likely the lesion is due to: 1. Rim 2. Necrosis",
            ["Most likely the lesion is due to"],
        ),
        # the clause names a disease: the line stays whole
        (
            "Most likely hydrocephalus due to aqueductal stenosis",
            ["Most likely hydrocephalus due to aqueductal stenosis"],
        ),
    ],
)
def test_a_reason_clause_without_a_hedged_name_reads_as_before(
    answer: str, expected: list[str]
) -> None:
    assert _read(answer) == ("fallback_list", expected)


_ALL = ["Glioblastoma", "Lymphoma", "Metastasis"]


# 7b. a bare name above a dash list after "Others:" stays first (3482645 read it first, with
# the junk name "Others" after it); above any other labelled list, as 3482645
@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        # dxdot26: every marker style keeps the name above (3482645: Lymphoma, Metastasis)
        ("Glioblastoma\nDifferentials:\n1. Lymphoma\n2. Metastasis", _ALL),
        ("Glioblastoma\nOthers: 1. Lymphoma 2. Metastasis", _ALL),
        ("Glioblastoma. Differential: metastasis, lymphoma", ["metastasis", "lymphoma"]),
        ("Here is my answer.\nOthers: lymphoma, metastasis", ["lymphoma", "metastasis"]),
        ("Answer\nOthers: 1- Lymphoma 2- Metastasis", ["Lymphoma", "Metastasis"]),
        ("Glioblastoma\n1. Lymphoma\n2. Metastasis", ["Lymphoma", "Metastasis"]),
        (
            "Schistosomal granuloma of the brain\nOthers: 1- Lymphoma 2- Metastasis",
            ["Schistosomal granuloma of the brain", "Lymphoma", "Metastasis"],
        ),
    ],
)
def test_a_bare_name_above_a_dash_list_of_others_stays_first(
    answer: str, expected: list[str]
) -> None:
    assert _read(answer) == ("fallback_list", expected)
