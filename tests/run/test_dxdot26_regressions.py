"""A bare diagnosis above a labelled list of differentials is the model's first choice (dxdot26).

Before dxdot26 only the one-line dash form ("Glioblastoma\\nOthers: 1- A 2- B", dxfix24/25)
kept the name above the label; every other marker style dropped it (3482645 and 9912320
read ``["Lymphoma", "Metastasis"]``), and the multi-line dash form kept the junk markers
(``["Glioblastoma", "1- Lymphoma", "2- Metastasis"]``). The protocol's Top-1 is the
model's first diagnosis. The expected readings below are written by hand.
"""

from __future__ import annotations

import pytest

from novabench.metrics.diagnosis import score_diagnosis
from novabench.run.parsers import parse_diagnoses

_FIRST = ["Glioblastoma", "Lymphoma", "Metastasis"]


def _read(answer: str) -> tuple[str, list[str]]:
    parsed = parse_diagnoses(answer)
    return parsed.status, parsed.diagnoses


# every marker style under every label of the others
@pytest.mark.parametrize(
    "answer",
    [
        "Glioblastoma\nDifferentials:\n1. Lymphoma\n2. Metastasis",
        "Glioblastoma\nDifferential:\n1) Lymphoma\n2) Metastasis",
        "Glioblastoma\nOthers: 1. Lymphoma 2. Metastasis",
        "Glioblastoma\nDifferential diagnoses:\n- Lymphoma\n- Metastasis",
        "Glioblastoma\nDifferential diagnosis:\n* Lymphoma\n* Metastasis",
        "Glioblastoma\nDifferentials: Lymphoma; Metastasis",
        "Glioblastoma\nDifferentials: Lymphoma, Metastasis",
        "Glioblastoma\n**Differentials:**\n1. Lymphoma\n2. Metastasis",
        "Glioblastoma\n**Differentials**:\n1. Lymphoma\n2. Metastasis",
        "**Glioblastoma**\n\n**Differential diagnoses:**\n- Lymphoma\n- Metastasis",
        "Glioblastoma\nDifferentials:\n1- Lymphoma\n2- Metastasis",
        "Glioblastoma\nDifferentials:\n1 - Lymphoma\n2 - Metastasis",
        "Glioblastoma\nDDx:\n1. Lymphoma\n2. Metastasis",
        "Glioblastoma\nOther possibilities:\n1. Lymphoma\n2. Metastasis",
        "Glioblastoma\nAlternatives:\n- Lymphoma\n- Metastasis",
        "Glioblastoma\nAlso consider:\n1. Lymphoma\n2. Metastasis",
        # as dxfix24/25 (unchanged)
        "Glioblastoma\nOthers: 1- Lymphoma 2- Metastasis",
    ],
)
def test_a_bare_name_above_a_list_of_differentials_is_first(answer: str) -> None:
    assert _read(answer) == ("fallback_list", _FIRST)


def test_the_name_repeated_as_item_one_appears_once() -> None:
    assert _read("Glioblastoma\nDifferentials:\n1. Glioblastoma\n2. Metastasis") == (
        "fallback_list",
        ["Glioblastoma", "Metastasis"],
    )
    assert _read("Glioblastoma\nDifferentials:\n1- glioblastoma\n2- Metastasis") == (
        "fallback_list",
        ["Glioblastoma", "Metastasis"],
    )


def test_the_reference_first_now_scores_top1() -> None:
    names = _read("Glioblastoma\nDifferentials:\n1. Lymphoma\n2. Metastasis")[1]
    scores = score_diagnosis([names], ["Glioblastoma"])
    assert (scores["top1-lexicon"], scores["top5-lexicon"]) == (1.0, 1.0)


# guard 1: the line above must be a bare name the lexicon knows as a disease
@pytest.mark.parametrize(
    "first",
    [
        "Sure!",
        "Impression",
        "**Assessment**",
        "Brain MRI",
        "Axial FLAIR MRI of the brain",
        "Left frontal lesion",
        "T2 hyperintense lesion",
        "Here is my answer.",
        "Mass",
    ],
)
@pytest.mark.parametrize(
    "below",
    [
        "Differentials:\n1. Lymphoma\n2. Metastasis",
        "Differential diagnoses:\n- Lymphoma\n- Metastasis",
        "Others: 1. Lymphoma 2. Metastasis",
        "Differentials: Lymphoma; Metastasis",
    ],
)
def test_a_line_above_that_names_no_disease_is_not_first(first: str, below: str) -> None:
    assert _read(f"{first}\n{below}") == ("fallback_list", ["Lymphoma", "Metastasis"])


# the line above is one name, no hedge, negation or history around it
@pytest.mark.parametrize(
    "first",
    [
        "Glioblastoma unlikely",
        "Glioblastoma?",
        "Glioma vs lymphoma",
        "Glioblastoma or lymphoma",
        "Rule out glioblastoma",
        "Probable glioblastoma",
        "Glioblastoma (suspected)",
        "Consider glioblastoma",
        "Prior stroke",
        "Patient with multiple sclerosis",
        "Status post resection of glioblastoma",
        "History of breast cancer",
    ],
)
def test_a_hedged_negated_or_historical_line_above_is_not_first(first: str) -> None:
    assert _read(f"{first}\nDifferentials:\n1. Lymphoma\n2. Metastasis") == (
        "fallback_list",
        ["Lymphoma", "Metastasis"],
    )


@pytest.mark.parametrize(
    ("first", "name"),
    [
        ("**Glioblastoma**", "Glioblastoma"),
        ("Glioblastoma.", "Glioblastoma"),
        ("Glioblastoma, IDH-wildtype", "Glioblastoma, IDH-wildtype"),
        ("Glioblastoma (WHO grade 4)", "Glioblastoma (WHO grade 4)"),
        ("Multiple sclerosis", "Multiple sclerosis"),
    ],
)
def test_one_name_with_its_qualifiers_above_is_first(first: str, name: str) -> None:
    assert _read(f"{first}\nDifferentials:\n1. Lymphoma\n2. Metastasis") == (
        "fallback_list",
        [name, "Lymphoma", "Metastasis"],
    )


def test_a_heading_above_a_multiline_dash_list_is_not_first() -> None:
    assert _read("Impression\nDifferentials:\n1- Lymphoma\n2- Metastasis") == (
        "fallback_list",
        ["Impression", "1- Lymphoma", "2- Metastasis"],  # as 3482645
    )


# guard 2: the label between them names the others; below a reason heading the list reads
# as 3482645 reads it (dxfix27 removed the reason-list rule)
@pytest.mark.parametrize(
    ("answer", "expected"),
    [  # as 3482645
        ("Glioblastoma\nWhy:\n1. Rim\n2. Necrosis", ["Rim", "Necrosis"]),
        (
            "Glioblastoma\nKey features:\n- Rim enhancement\n- Necrosis",
            ["Rim enhancement", "Necrosis"],
        ),
        ("Glioblastoma\nWhy:\n1. Lymphoma\n2. Metastasis", ["Lymphoma", "Metastasis"]),
        ("Glioblastoma\nReasons:\n1. Lymphoma\n2. Metastasis", ["Lymphoma", "Metastasis"]),
        ("Glioblastoma\nRationale:\n1. Lymphoma\n2. Metastasis", ["Lymphoma", "Metastasis"]),
        ("Glioblastoma\nFindings:\n1. Lymphoma\n2. Metastasis", ["Lymphoma", "Metastasis"]),
        ("Glioblastoma\n1. Lymphoma\n2. Metastasis", ["Lymphoma", "Metastasis"]),
        ("Glioblastoma. Differential: metastasis, lymphoma", ["metastasis", "lymphoma"]),
    ],
)
def test_no_label_of_the_others_between_them_reads_as_before(
    answer: str, expected: list[str]
) -> None:
    assert _read(answer) == ("fallback_list", expected)


def test_a_line_between_the_name_and_the_label_keeps_the_old_reading() -> None:
    answer = "Glioblastoma\nThe rim enhances.\nDifferentials:\n1. Lymphoma\n2. Metastasis"
    assert _read(answer)[1][0] != "Glioblastoma"


def test_a_lead_label_above_is_read_as_before() -> None:
    assert _read("Diagnosis: Glioblastoma\nDifferentials:\n1. Lymphoma\n2. Metastasis") == (
        "fallback_list",
        _FIRST,
    )
