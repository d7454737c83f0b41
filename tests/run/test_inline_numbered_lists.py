"""Numbered diagnosis lists written on one line keep every item (dxlist19).

Models often flatten the numbered list they were asked for onto one line: "1. Glioblastoma
2. Lymphoma 3. Metastasis", after a label ("Answer: 1. ..."), with markdown bold and an
explanation per item. The parser read "1." only at the start of a line, so such an answer
gave the junk name "Glioblastoma 2" and lost the others. A line (after any label) that opens
with marker 1 and holds markers 2, 3, ... in the same style is now read as the same list
written one item per line; numbers that belong to a name ("Neurofibromatosis type 1.",
"WHO grade 2.", "Type 2 diabetes") never cut it.
"""

from __future__ import annotations

import pytest

from novabench.metrics.diagnosis import score_diagnosis
from novabench.run.parsers import parse_diagnoses

# (answer on one line, the same answer one item per line, the names a reader sees in it)
INLINE_AND_MULTILINE = [
    (
        "1. Glioblastoma 2. Primary CNS lymphoma 3. Metastasis",
        "1. Glioblastoma\n2. Primary CNS lymphoma\n3. Metastasis",
        ["Glioblastoma", "Primary CNS lymphoma", "Metastasis"],
    ),
    (
        "Answer: 1. Glioblastoma 2. Lymphoma",
        "Answer:\n1. Glioblastoma\n2. Lymphoma",
        ["Glioblastoma", "Lymphoma"],
    ),
    (
        "1) Tumefactive demyelination 2) Glioblastoma",
        "1) Tumefactive demyelination\n2) Glioblastoma",
        ["Tumefactive demyelination", "Glioblastoma"],
    ),
    (
        "Diagnosis: 1. Cerebral abscess; 2. Glioblastoma; 3. Metastasis",
        "Diagnosis:\n1. Cerebral abscess;\n2. Glioblastoma;\n3. Metastasis",
        ["Cerebral abscess", "Glioblastoma", "Metastasis"],
    ),
    (
        "1. Susac syndrome, 2. Multiple sclerosis, 3. ADEM, 4. CADASIL",
        "1. Susac syndrome\n2. Multiple sclerosis\n3. ADEM\n4. CADASIL",
        ["Susac syndrome", "Multiple sclerosis", "ADEM", "CADASIL"],
    ),
    (
        "(1) Herpes simplex encephalitis (2) Limbic encephalitis (3) Status epilepticus",
        "(1) Herpes simplex encephalitis\n(2) Limbic encephalitis\n(3) Status epilepticus",
        ["Herpes simplex encephalitis", "Limbic encephalitis", "Status epilepticus"],
    ),
    (  # GPT-4o style: bold names, an explanation after a spaced dash
        "1. **Glioblastoma** - most likely given the ring enhancement and central necrosis "
        "2. **Primary CNS lymphoma** - periventricular location, but necrosis is atypical "
        "3. **Metastasis** - less likely with a single lesion",
        "1. **Glioblastoma** - most likely given the ring enhancement and central necrosis\n"
        "2. **Primary CNS lymphoma** - periventricular location, but necrosis is atypical\n"
        "3. **Metastasis** - less likely with a single lesion",
        ["Glioblastoma", "Primary CNS lymphoma", "Metastasis"],
    ),
    (  # the marker inside the bold, an explanation after the name's colon
        "**1. Pilocytic astrocytoma**: cyst with an enhancing mural nodule in a child "
        "**2. Hemangioblastoma**: less likely at this age **3. Medulloblastoma**: midline",
        "**1. Pilocytic astrocytoma**: cyst with an enhancing mural nodule in a child\n"
        "**2. Hemangioblastoma**: less likely at this age\n**3. Medulloblastoma**: midline",
        ["Pilocytic astrocytoma", "Hemangioblastoma", "Medulloblastoma"],
    ),
    (
        "**Final answer:** 1. Neurosarcoidosis 2. Tuberculous meningitis 3. Lymphoma",
        "**Final answer:**\n1. Neurosarcoidosis\n2. Tuberculous meningitis\n3. Lymphoma",
        ["Neurosarcoidosis", "Tuberculous meningitis", "Lymphoma"],
    ),
    (
        "Most likely diagnosis: 1. Creutzfeldt-Jakob disease 2. Wernicke encephalopathy",
        "Most likely diagnosis:\n1. Creutzfeldt-Jakob disease\n2. Wernicke encephalopathy",
        ["Creutzfeldt-Jakob disease", "Wernicke encephalopathy"],
    ),
    (
        "Differential diagnoses include: 1. Lymphoma 2. Metastasis 3. Abscess",
        "Differential diagnoses include:\n1. Lymphoma\n2. Metastasis\n3. Abscess",
        ["Lymphoma", "Metastasis", "Abscess"],
    ),
    (  # a lead line, then the others numbered on one line
        "Most likely: Glioblastoma. Differentials: 1. Lymphoma 2. Metastasis 3. Abscess",
        "Most likely: Glioblastoma.\nDifferentials:\n1. Lymphoma\n2. Metastasis\n3. Abscess",
        ["Glioblastoma", "Lymphoma", "Metastasis", "Abscess"],
    ),
    (  # a number inside an item's name is no marker: "type 3" then the marker "2."
        "1. Spinocerebellar ataxia type 3 2. Multiple system atrophy 3. Friedreich ataxia",
        "1. Spinocerebellar ataxia type 3\n2. Multiple system atrophy\n3. Friedreich ataxia",
        ["Spinocerebellar ataxia type 3", "Multiple system atrophy", "Friedreich ataxia"],
    ),
    (
        "1. Neurofibromatosis type 2 2. Schwannomatosis 3. Meningiomatosis",
        "1. Neurofibromatosis type 2\n2. Schwannomatosis\n3. Meningiomatosis",
        ["Neurofibromatosis type 2", "Schwannomatosis", "Meningiomatosis"],
    ),
    (  # a marker after a bracketed grade
        "1) Glioblastoma (WHO grade 4) 2) Anaplastic astrocytoma",
        "1) Glioblastoma (WHO grade 4)\n2) Anaplastic astrocytoma",
        ["Glioblastoma (WHO grade 4)", "Anaplastic astrocytoma"],
    ),
]


@pytest.mark.parametrize(("inline", "multiline", "names"), INLINE_AND_MULTILINE)
def test_a_numbered_list_on_one_line_reads_as_the_same_list_one_item_per_line(
    inline: str, multiline: str, names: list[str]
) -> None:
    parsed = parse_diagnoses(inline)
    assert parsed.diagnoses == names
    one_per_line = parse_diagnoses(multiline)
    assert (parsed.diagnoses, parsed.status) == (one_per_line.diagnoses, one_per_line.status)
    assert parsed.status == "fallback_list"


def test_an_inline_list_among_other_lines_keeps_its_place_in_the_ranking() -> None:
    answer = (
        "Based on the clinical history and the MRI findings:\n"
        "1. Glioblastoma 2. Primary CNS lymphoma\n"
        "3. Metastasis\n"
        "Clinical correlation and biopsy are recommended."
    )
    parsed = parse_diagnoses(answer)
    assert parsed.diagnoses == ["Glioblastoma", "Primary CNS lymphoma", "Metastasis"]


@pytest.mark.parametrize(
    ("answer", "first"),
    [
        # No marker 1 opens the line: "type 1." ends a name, the line is no list.
        ("Neurofibromatosis type 1. Schwannoma 2. Meningioma", "Neurofibromatosis type 1"),
        ("Answer: Neurofibromatosis type 1. Schwannoma 2. Meningioma", "Neurofibromatosis type 1"),
        # The "2." after "grade" belongs to the grade, so the list has one item.
        (
            "1. Diffuse astrocytoma, WHO grade 2. Oligodendroglioma",
            "Diffuse astrocytoma, WHO grade 2",
        ),
        ("Type 2 diabetes", "Type 2 diabetes"),
        ("Spinocerebellar ataxia type 3", "Spinocerebellar ataxia type 3"),
        ("Diagnosis: Spinocerebellar ataxia type 3", "Spinocerebellar ataxia type 3"),
    ],
)
def test_a_number_that_belongs_to_a_name_never_cuts_it(answer: str, first: str) -> None:
    parsed = parse_diagnoses(answer)
    assert parsed.diagnoses[0] == first


@pytest.mark.parametrize(
    "answer",
    [
        "1. Glioblastoma 2) Lymphoma",  # two styles: one item, as before
        "1. Glioblastoma 3. Lymphoma",  # no marker 2: the 3 may belong to the name
    ],
)
def test_markers_out_of_sequence_or_style_leave_the_line_one_item(answer: str) -> None:
    assert len(parse_diagnoses(answer).diagnoses) == 1


def test_a_numbered_list_of_findings_on_one_line_names_no_diagnosis() -> None:
    answer = (
        "Findings: 1. Ring-enhancing lesion in the left frontal lobe 2. Perilesional edema\n"
        "Diagnosis: Glioblastoma"
    )
    assert parse_diagnoses(answer).diagnoses == ["Glioblastoma"]


def test_a_json_value_written_as_one_numbered_line_is_cut_like_one_item_per_line() -> None:
    answer = (
        '{"most_likely_diagnosis": "Glioblastoma", "other_possible_diagnoses": '
        '"1. Primary CNS lymphoma 2. Metastasis 3. Abscess 4. Tumefactive demyelination"}'
    )
    parsed = parse_diagnoses(answer)
    expected = [
        "Glioblastoma",
        "Primary CNS lymphoma",
        "Metastasis",
        "Abscess",
        "Tumefactive demyelination",
    ]
    assert (parsed.diagnoses, parsed.status) == (expected, "ok")
    one_per_line = parse_diagnoses(answer.replace(" 2.", "\\n2.").replace(" 3.", "\\n3."))
    assert one_per_line.diagnoses == expected
    # An item of a JSON list is never cut, numbered or not.
    listed = parse_diagnoses('{"differentials": ["1. Lymphoma 2. Metastasis"]}')
    assert listed.diagnoses == ["Lymphoma 2. Metastasis"]


def test_the_reference_second_in_an_inline_list_is_a_top5_hit_not_a_top1_hit() -> None:
    # By hand: the case's answer ranks Glioblastoma first and the reference second, so
    # Top-1 misses (0 of 1 case) and Top-5 hits (1 of 1).
    answer = "1. Glioblastoma 2. Primary CNS lymphoma 3. Metastasis"
    result = score_diagnosis([parse_diagnoses(answer).diagnoses], ["Primary CNS lymphoma"])
    assert (result["top1-lexicon"], result["top5-lexicon"]) == (0.0, 1.0)
