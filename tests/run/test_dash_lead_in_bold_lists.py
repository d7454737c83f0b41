"""Diagnosis answer shapes reviewers found misread (dxparse21).

- Dash-numbered lists ("1- Glioblastoma\\n2- Lymphoma", "1 - X") were no list: each line was
  one bare name with its number ("1- Glioblastoma"), or cut at the spaced dash to "1".
- A numbered list after prose on its line ("My ranked list is: 1. A 2. B") was read as the
  one name "My ranked list is"; only a label (``Answer:``) or the line start opened one.
- ``**1. Glioblastoma:** ring enhancement`` (the colon inside the bold) kept the reason in
  the name: "Glioblastoma: ring enhancement".

Each is now read as the same list written the usual way ("1. X" one item per line), so every
pair below is compared with that form, whose reading dxlist19 and dxparse19 fixed.
"""

from __future__ import annotations

import json

import pytest

from novabench.metrics.diagnosis import score_diagnosis
from novabench.run.parsers import parse_diagnoses

THREE = ["Glioblastoma", "Primary CNS lymphoma", "Metastasis"]
DOTTED = "1. Glioblastoma\n2. Primary CNS lymphoma\n3. Metastasis"

# (answer, the same list as "1. X" lines, the names a reader sees in it)
DASH_LISTS = [
    ("1- Glioblastoma\n2- Primary CNS lymphoma\n3- Metastasis", DOTTED, THREE),
    ("1 - Glioblastoma\n2 - Primary CNS lymphoma\n3 - Metastasis", DOTTED, THREE),
    ("1\u2013 Glioblastoma\n2\u2013 Primary CNS lymphoma\n3\u2013 Metastasis", DOTTED, THREE),
    ("**1-** Glioblastoma\n**2-** Primary CNS lymphoma\n**3-** Metastasis", DOTTED, THREE),
    (  # a reason after a spaced dash, an indented explanation line between items
        "1 - Glioblastoma - ring enhancement with necrosis\n"
        "    most likely at this age\n"
        "2 - Primary CNS lymphoma - periventricular\n"
        "3 - Metastasis",
        DOTTED,
        THREE,
    ),
    (  # hyphenated names keep their hyphens
        "1- Creutzfeldt-Jakob disease\n2- Wernicke encephalopathy\n3- Hashimoto encephalopathy",
        "1. Creutzfeldt-Jakob disease\n2. Wernicke encephalopathy\n3. Hashimoto encephalopathy",
        ["Creutzfeldt-Jakob disease", "Wernicke encephalopathy", "Hashimoto encephalopathy"],
    ),
    (  # under a heading line
        "Differential diagnosis:\n1- Glioblastoma\n2- Primary CNS lymphoma\n3- Metastasis",
        "Differential diagnosis:\n" + DOTTED,
        THREE,
    ),
    # one line: read item by item under dxlist19's conditions for "1." lists
    ("1- Glioblastoma 2- Primary CNS lymphoma 3- Metastasis", DOTTED, THREE),
    (
        "Answer: 1 - Glioblastoma 2 - Primary CNS lymphoma 3 - Metastasis",
        "Answer:\n" + DOTTED,
        THREE,
    ),
]


@pytest.mark.parametrize(("answer", "dotted", "names"), DASH_LISTS)
def test_a_dash_numbered_list_reads_as_the_same_list_numbered_with_periods(
    answer: str, dotted: str, names: list[str]
) -> None:
    parsed = parse_diagnoses(answer)
    assert (parsed.diagnoses, parsed.status) == (names, "fallback_list")
    expected = parse_diagnoses(dotted)
    assert (parsed.diagnoses, parsed.status) == (expected.diagnoses, expected.status)


@pytest.mark.parametrize(
    ("answer", "names"),
    [
        # A dash inside a line is no marker: no marker 1 opens it.
        ("Type 1- diabetes", ["Type 1- diabetes"]),
        (
            "Neurofibromatosis type 1- Schwannoma 2- Meningioma",
            ["Neurofibromatosis type 1- Schwannoma 2- Meningioma"],
        ),
        # "2." after "grade" belongs to the grade, dash or period; with no "2-" marker the
        # lone "1-" is no list marker either (dxfix23): the line stays as written.
        (
            "1- Diffuse astrocytoma, WHO grade 2- Oligodendroglioma",
            ["1- Diffuse astrocytoma, WHO grade 2- Oligodendroglioma"],
        ),
        # A range opening a line, with no "1 -" run before it, is no list item.
        ("Findings:\n2 - 3 ring-enhancing lesions\nDiagnosis: Metastases", ["Metastases"]),
        # A number that skips ends the run: "4 - B" after "2 - A" is no item.
        ("1 - Glioblastoma\n2 - Lymphoma\n4 - 5 cm lesion", ["Glioblastoma", "Lymphoma"]),
    ],
)
def test_dashes_that_are_no_list_markers_cut_nothing(answer: str, names: list[str]) -> None:
    assert parse_diagnoses(answer).diagnoses == names


def test_dash_markers_of_json_values_and_items_are_markers_too() -> None:
    answer = json.dumps(
        {
            "most_likely_diagnosis": "Glioblastoma",
            "other_possible_diagnoses": "1- Primary CNS lymphoma 2- Metastasis 3- Abscess",
        }
    )
    expected = ["Glioblastoma", "Primary CNS lymphoma", "Metastasis", "Abscess"]
    assert parse_diagnoses(answer).diagnoses == expected
    listed = parse_diagnoses(json.dumps(["1 - Glioblastoma", "2 - Metastasis"]))
    assert listed.diagnoses == ["Glioblastoma", "Metastasis"]
    # no space after the dash: a name, not a marker
    assert parse_diagnoses(json.dumps(["5-ALA fluorescence"])).diagnoses == ["5-ALA fluorescence"]


# (answer, the same list with its lead-in on a line of its own, the names)
LEAD_IN_LISTS = [
    (
        "My ranked list is: 1. Glioblastoma 2. Primary CNS lymphoma 3. Metastasis",
        "My ranked list is:\n" + DOTTED,
        THREE,
    ),
    (
        "Based on the findings, the differential is 1) Glioblastoma 2) Primary CNS lymphoma "
        "3) Metastasis",
        "Based on the findings, the differential is\n"
        "1) Glioblastoma\n2) Primary CNS lymphoma\n3) Metastasis",
        THREE,
    ),
    (
        "The most likely diagnoses are 1. Glioblastoma 2. Primary CNS lymphoma 3. Metastasis",
        "The most likely diagnoses are\n" + DOTTED,
        THREE,
    ),
    (
        "Based on the clinical history and imaging findings: 1. Glioblastoma "
        "2. Primary CNS lymphoma 3. Metastasis",
        "Based on the clinical history and imaging findings:\n" + DOTTED,
        THREE,
    ),
    (
        "In order of likelihood, my answer is: **1. Glioblastoma** - necrotic rim "
        "**2. Primary CNS lymphoma** - periventricular **3. Metastasis** - less likely",
        "In order of likelihood, my answer is:\n**1. Glioblastoma** - necrotic rim\n"
        "**2. Primary CNS lymphoma** - periventricular\n**3. Metastasis** - less likely",
        THREE,
    ),
    (  # after a label, a lead-in of its own
        "Answer: the differential is 1) Glioblastoma 2) Primary CNS lymphoma 3) Metastasis",
        "Answer: the differential is\n1) Glioblastoma\n2) Primary CNS lymphoma\n3) Metastasis",
        THREE,
    ),
]


@pytest.mark.parametrize(("answer", "multiline", "names"), LEAD_IN_LISTS)
def test_a_numbered_list_after_a_lead_in_on_its_line_is_read_item_by_item(
    answer: str, multiline: str, names: list[str]
) -> None:
    parsed = parse_diagnoses(answer)
    assert (parsed.diagnoses, parsed.status) == (names, "fallback_list")
    own_line = parse_diagnoses(multiline)
    assert (parsed.diagnoses, parsed.status) == (own_line.diagnoses, own_line.status)


@pytest.mark.parametrize(
    "findings",
    [
        "Findings: 1. Ring-enhancing lesion 2. Perilesional edema",  # dxlist19's rule, kept
        "Summary: 1. Ring-enhancing lesion 2. Perilesional edema",
        "The findings are: 1. Ring-enhancing lesion 2. Perilesional edema",
        "Key imaging features include: 1. Ring-enhancing lesion 2. Perilesional edema",
        "The lesion shows: 1. Ring enhancement 2. Restricted diffusion",
        "MRI reveals: 1. Ring enhancement 2. Restricted diffusion",
        "Next steps: 1. Biopsy 2. MR spectroscopy",
        "Management: 1. Surgery 2. Radiotherapy",
    ],
)
def test_a_lead_in_to_findings_names_no_diagnosis(findings: str) -> None:
    assert parse_diagnoses(f"{findings}\nDiagnosis: Glioblastoma").diagnoses == ["Glioblastoma"]


@pytest.mark.parametrize(
    "answer",
    [
        "Neurofibromatosis type 1. Schwannoma 2. Meningioma",  # no lead-in ends before "1."
        "Answer: Neurofibromatosis type 1. Schwannoma 2. Meningioma",
    ],
)
def test_a_number_after_a_name_still_opens_no_list(answer: str) -> None:
    assert parse_diagnoses(answer).diagnoses[0] == "Neurofibromatosis type 1"


BOLD_COLON = [
    (
        "**1. Glioblastoma:** ring enhancement and necrosis\n"
        "**2. Primary CNS lymphoma:** periventricular, homogeneous\n"
        "**3. Metastasis:** less likely with a single lesion"
    ),
    (
        "**1. Glioblastoma:** ring enhancement and necrosis "
        "**2. Primary CNS lymphoma:** periventricular, homogeneous "
        "**3. Metastasis:** less likely with a single lesion"
    ),
    (
        "1. **Glioblastoma:** ring enhancement and necrosis\n"
        "2. **Primary CNS lymphoma:** periventricular, homogeneous\n"
        "3. **Metastasis:** less likely with a single lesion"
    ),
    (
        "1. **Glioblastoma**: ring enhancement and necrosis\n"
        "2. **Primary CNS lymphoma**: periventricular, homogeneous\n"
        "3. **Metastasis**: less likely with a single lesion"
    ),
    (
        "__1. Glioblastoma:__ ring enhancement and necrosis\n"
        "__2. Primary CNS lymphoma:__ periventricular, homogeneous\n"
        "__3. Metastasis:__ less likely with a single lesion"
    ),
]


@pytest.mark.parametrize("answer", BOLD_COLON)
def test_a_bold_name_with_its_colon_leaves_the_reason_out(answer: str) -> None:
    parsed = parse_diagnoses(answer)
    assert (parsed.diagnoses, parsed.status) == (THREE, "fallback_list")


def test_the_reference_first_in_a_bold_colon_list_is_a_top1_hit() -> None:
    # By hand: the first name is now exactly the reference, so Top-1 hits (1 of 1 case);
    # read with its reason, "Glioblastoma: ring enhancement and necrosis", it was not the
    # name alone.
    parsed = parse_diagnoses(BOLD_COLON[0])
    assert parsed.most_likely == "Glioblastoma"
    result = score_diagnosis([parsed.diagnoses], ["Glioblastoma"])
    assert result["top1-lexicon"] == 1.0


def test_the_reference_second_in_a_dash_list_is_a_top5_hit_not_a_top1_hit() -> None:
    # By hand: Glioblastoma first, the reference second: Top-1 0 of 1, Top-5 1 of 1.
    parsed = parse_diagnoses("1- Glioblastoma\n2- Primary CNS lymphoma\n3- Metastasis")
    result = score_diagnosis([parsed.diagnoses], ["Primary CNS lymphoma"])
    assert (result["top1-lexicon"], result["top5-lexicon"]) == (0.0, 1.0)
