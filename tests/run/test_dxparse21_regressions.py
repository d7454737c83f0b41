"""Correct diagnoses dxparse21's new rules turned into misses (user22, dxfix22).

1. A one-line numbered list after a lead-in of reasons, evidence or limitations ("Glioblastoma.
   Why: 1. Irregular rim enhancement 2. Central necrosis") was read as the diagnoses, and the
   diagnosis before the lead-in lost. A lead-in opens a list only when it introduces
   diagnoses; when unsure it opens none (the reading before dxparse21).
2. A single ``1 - 2 ...`` range line was read as a one-item dash list ("Multiple sclerosis\\n1 -
   2 new lesions ..." gave "2 new lesions ..."). A dash list needs "1 -" and "2 -", and a
   number range is no marker.
3. A labelled value that declines but then names a diagnosis ("Diagnosis: cannot be made
   definitively; likely glioblastoma") was a ``refusal``; the name after it is read now.
4. A hedge ending a lead-in ("These findings are concerning for: 1. A 2. B") introduces
   diagnoses, as "concerning for X" does in a sentence.

Every expected reading is written by hand from the answer; scores are counted by hand
(one case, reference "Glioblastoma").
"""

from __future__ import annotations

import pytest

from novabench.metrics.diagnosis import score_diagnosis
from novabench.run.parsers import parse_diagnoses

REASONS = ["Irregular rim enhancement", "Central necrosis"]

# (answer, the names read): the diagnosis before the lead-in, never the reasons
REASON_LEAD_INS = [
    ("Glioblastoma. Why: 1. Irregular rim enhancement 2. Central necrosis", ["Glioblastoma"]),
    (
        "Glioblastoma. Key differential features are: 1. Irregular rim enhancement "
        "2. Central necrosis",
        ["Glioblastoma"],
    ),
    (
        "Glioblastoma. What supports the diagnosis: 1. Irregular rim enhancement "
        "2. Central necrosis",
        ["Glioblastoma"],
    ),
    # read as before dxparse21: a bare line (the lexicon matcher reads its head)
    (
        "Most likely glioblastoma due to: 1. Irregular rim enhancement 2. Central necrosis",
        ["Most likely glioblastoma due to"],
    ),
    (
        "Glioblastoma, because: 1. Irregular rim enhancement 2. Central necrosis",
        ["Glioblastoma, because"],
    ),
    (
        "Glioblastoma\nKey points: 1. Irregular rim enhancement 2. Central necrosis",
        ["Glioblastoma", "Key points"],
    ),
    ("Glioblastoma\nCaveats: 1. Single slice 2. No DWI available", ["Glioblastoma", "Caveats"]),
    (
        "Glioblastoma\nWhy: 1. Irregular rim enhancement 2. Central necrosis",
        ["Glioblastoma", "Why"],
    ),
]


@pytest.mark.parametrize(("answer", "names"), REASON_LEAD_INS)
def test_a_lead_in_of_reasons_opens_no_diagnosis_list(answer: str, names: list[str]) -> None:
    parsed = parse_diagnoses(answer)
    assert parsed.diagnoses == names
    assert not set(REASONS) & set(parsed.diagnoses)
    # By hand: the first name is the reference (or its head): Top-1 1 of 1.
    assert score_diagnosis([parsed.diagnoses], ["Glioblastoma"])["top1-lexicon"] == 1.0


def test_the_reasons_were_read_as_the_two_names_before_this_fix() -> None:
    # The shape the regression had (kept as the baseline the test above moves from): the
    # same reasons one item per line under a heading are read as items, as they were
    # before dxparse21 too; only the one-line lead-in rule changed.
    parsed = parse_diagnoses("Why:\n1. Irregular rim enhancement\n2. Central necrosis")
    assert parsed.diagnoses == REASONS


@pytest.mark.parametrize(
    "answer",
    [
        "Features supporting this diagnosis are: 1. Irregular rim enhancement 2. Central necrosis",
        "What I see is: 1. A ring-enhancing mass 2. Central necrosis 3. Surrounding edema",
        "Limitations: 1. Single slice 2. No contrast-enhanced sequence",
        "Characteristic signs are: 1. Ring enhancement 2. Central necrosis",
        "Key points: 1. Ring enhancement 2. Necrosis 3. Mass effect",
    ],
)
def test_findings_reasons_and_limitations_never_become_diagnoses(answer: str) -> None:
    listed = answer.split(": ", 1)[1]
    items = [item.strip() for item in listed.replace(" 2. ", "|").replace(" 3. ", "|").split("|")]
    items[0] = items[0].removeprefix("1. ")
    parsed = parse_diagnoses(answer)
    assert not set(items) & set(parsed.diagnoses), parsed.diagnoses


def test_the_reason_lead_in_sample_scores_as_before_dxparse21() -> None:
    # user22's 40-case sample wrote "<reference>. Why: 1. ... 2. ..."; its Top-1 fell from
    # 92.3 to 0.0. By hand: each case's first name is its reference again.
    references = ["Glioblastoma", "Multiple sclerosis", "Primary CNS lymphoma"]
    answers = [
        f"{name}. Why: 1. Irregular rim enhancement 2. Central necrosis" for name in references
    ]
    predictions = [parse_diagnoses(answer).diagnoses for answer in answers]
    assert predictions == [[name] for name in references]
    scores = score_diagnosis(predictions, references)
    assert (scores["top1-lexicon"], scores["top5-lexicon"]) == (1.0, 1.0)


@pytest.mark.parametrize(
    ("answer", "names"),
    [
        (
            "These findings are concerning for: 1. Glioblastoma 2. Primary CNS lymphoma "
            "3. Metastasis",
            ["Glioblastoma", "Primary CNS lymphoma", "Metastasis"],
        ),
        (
            "The imaging features are consistent with: 1. Glioblastoma 2. Lymphoma 3. Metastasis",
            ["Glioblastoma", "Lymphoma", "Metastasis"],
        ),
        (
            "The findings suggest: 1. Glioblastoma 2. Lymphoma 3. Abscess",
            ["Glioblastoma", "Lymphoma", "Abscess"],
        ),
        (
            "The MRI appearance is typical of: 1. Glioblastoma 2. Lymphoma",
            ["Glioblastoma", "Lymphoma"],
        ),
        # lead-ins to diagnoses dxparse21 read still open their lists
        ("The two possibilities are: 1. Glioblastoma 2. Lymphoma", ["Glioblastoma", "Lymphoma"]),
        (
            "In order of likelihood: 1. Glioblastoma 2. Lymphoma 3. Metastasis",
            ["Glioblastoma", "Lymphoma", "Metastasis"],
        ),
    ],
)
def test_a_hedge_or_words_of_diagnoses_open_a_lead_in_list(answer: str, names: list[str]) -> None:
    parsed = parse_diagnoses(answer)
    assert (parsed.diagnoses, parsed.status) == (names, "fallback_list")
    # the same list one item per line under its lead-in reads alike
    lead_in, listed = answer.split(": ", 1)
    own_lines = lead_in + ":\n" + listed.replace(" 2. ", "\n2. ").replace(" 3. ", "\n3. ")
    assert parse_diagnoses(own_lines).diagnoses == names


@pytest.mark.parametrize(
    ("answer", "names"),
    [
        # the range line is no list: read as before dxparse21 (the bare lines, cut at the
        # spaced dash)
        (
            "Multiple sclerosis\n1 - 2 new lesions since the prior scan would support this.",
            ["Multiple sclerosis", "1"],
        ),
        (
            "Subacute infarct\n1 - 2 weeks old given the enhancement pattern",
            ["Subacute infarct", "1"],
        ),
        ("1 - 2 ring-enhancing lesions are seen.\nDiagnosis: Metastases", ["Metastases"]),
        (
            "Answer: Cavernous malformation\n1 - 2 mm foci of blooming on SWI",
            ["Cavernous malformation"],
        ),
        # a range does not count as an item of a run either
        (
            "1 - 2 cm ring-enhancing lesion in the right parietal lobe.\n"
            "2 - Surrounding vasogenic edema.\nMost likely diagnosis: Glioblastoma",
            ["Glioblastoma"],
        ),
        # a run must reach "2 -"; a number that skips ends it
        ("1 - Glioblastoma\n2 - Lymphoma\n4 - 5 cm lesion", ["Glioblastoma", "Lymphoma"]),
    ],
)
def test_a_number_range_line_is_no_dash_list(answer: str, names: list[str]) -> None:
    assert parse_diagnoses(answer).diagnoses == names


def test_a_lone_one_dash_line_is_read_as_before() -> None:
    # "1 - X" without "2 -": no list; the line reads as it did before dxparse21 (the bare
    # line cut at its spaced dash), so the diagnosis above it stays first.
    parsed = parse_diagnoses("Multiple sclerosis\n1 - 2 new lesions since the prior scan")
    assert parsed.diagnoses[0] == "Multiple sclerosis"
    scores = score_diagnosis([parsed.diagnoses], ["Multiple sclerosis"])
    assert (scores["top1-lexicon"], scores["top5-lexicon"]) == (1.0, 1.0)


@pytest.mark.parametrize(
    ("answer", "names"),
    [
        ("Diagnosis: cannot be made definitively; likely glioblastoma", ["glioblastoma"]),
        (
            "Diagnosis: cannot be made definitively; likely glioblastoma. Consult a radiologist.",
            ["glioblastoma"],
        ),
        (
            "Final diagnosis: cannot be established on imaging alone; leading consideration "
            "glioblastoma.",
            ["glioblastoma"],
        ),
        ("Diagnosis: I cannot be certain, but most likely glioblastoma", ["glioblastoma"]),
        (
            "Final answer: Unable to confirm without histology - most likely glioblastoma",
            ["glioblastoma"],
        ),
        ("Diagnosis: cannot be made with certainty (favor glioblastoma)", ["glioblastoma"]),
    ],
)
def test_a_diagnosis_named_after_a_declining_clause_is_read(answer: str, names: list[str]) -> None:
    parsed = parse_diagnoses(answer)
    assert (parsed.status, parsed.diagnoses) == ("fallback_list", names)
    # By hand: the first name is the reference: Top-1 and Top-5 1 of 1 (a refusal: 0 and 0).
    scores = score_diagnosis([parsed.diagnoses], ["Glioblastoma"])
    assert (scores["top1-lexicon"], scores["top5-lexicon"]) == (1.0, 1.0)


@pytest.mark.parametrize(
    "answer",
    [
        "Diagnosis: I cannot provide one from this MRI image; please consult a radiologist.",
        "Diagnosis: cannot be made from this MRI image - consult a neuroradiologist",
        "Diagnosis: I cannot provide one, but a radiologist can.",
        # a reason or a next step after the clause names no diagnosis
        "Diagnosis: cannot be made (insufficient information)",
        "Diagnosis: cannot be made; further imaging needed",
        "Diagnosis: cannot be given from a single slice, but MRI with contrast would help",
        # dxfix23: no hedge introduces the name (the lexicon finding one, or a hedge after
        # it, no longer counts: "biopsy to exclude lymphoma" names a disease too)
        "Most likely diagnosis: cannot be made definitively from a single slice; "
        "glioblastoma vs lymphoma.",
        "Diagnosis: cannot be made definitively without histology; glioblastoma favoured",
        "Diagnosis: cannot be made on imaging alone; glioblastoma",
    ],
)
def test_a_declining_value_that_names_nothing_after_it_stays_a_refusal(answer: str) -> None:
    parsed = parse_diagnoses(answer)
    assert (parsed.status, parsed.diagnoses) == ("refusal", [])


@pytest.mark.parametrize(
    ("answer", "first"),
    [
        # a bare name above: the list below it would take its place, so no lead-in list
        ("Glioblastoma\nDifferentials to exclude: 1. Abscess 2. Lymphoma", "Glioblastoma"),
    ],
)
def test_a_lead_in_list_below_a_bare_name_does_not_replace_it(answer: str, first: str) -> None:
    parsed = parse_diagnoses(answer)
    assert parsed.diagnoses[0] == first
    # By hand: the reference is first, Top-1 1 of 1.
    assert score_diagnosis([parsed.diagnoses], ["Glioblastoma"])["top1-lexicon"] == 1.0


@pytest.mark.parametrize(
    ("answer", "names"),
    [
        # dxfix23: below any line (a sentence, a labelled line) a lead-in opens no list
        # either; the answer reads as before dxparse21 (3d2d189)
        ("Here is my answer.\nMy ranked list is: 1. Glioblastoma 2. Lymphoma", []),
        (
            "Findings: ring enhancement.\nMy ranked list is: 1. Glioblastoma 2. Abscess",
            ["My ranked list is"],
        ),
    ],
)
def test_a_lead_in_list_below_any_line_opens_no_list(answer: str, names: list[str]) -> None:
    assert parse_diagnoses(answer).diagnoses == names
