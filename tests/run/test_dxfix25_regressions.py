"""Diagnosis answers dxfix24's rules misread (a hostile review of 446 answers, dxfix25).

The house rule: a rule fires only on the shape it is written for, and an answer the tree
before dxfix24 (3482645) read right reads as it did. Readings marked "as 3482645" were
checked against that tree's ``parse_diagnoses``; the others are written by hand.
"""

from __future__ import annotations

import pytest

from novabench.metrics.diagnosis import score_diagnosis
from novabench.run.parsers import parse_diagnoses


def _read(answer: str) -> tuple[str, list[str]]:
    parsed = parse_diagnoses(answer)
    return parsed.status, parsed.diagnoses


def _top(names: list[str], gold: str) -> tuple[float, float]:
    scores = score_diagnosis([names], [gold])
    return scores["top1-lexicon"], scores["top5-lexicon"]


# 1. a hedge lead-in's list is read as before, whatever the lexicon knows of its items
@pytest.mark.parametrize(
    ("answer", "expected"),
    [  # as 3482645
        ("Consistent with: 1. Encephalomalacia 2. Gliosis", ["Encephalomalacia", "Gliosis"]),
        (
            "Suggestive of: 1. Cerebral atrophy 2. Encephalomalacia",
            ["Cerebral atrophy", "Encephalomalacia"],
        ),
        (
            "Suggestive of: 1. Hypomyelination 2. Delayed myelination",
            ["Hypomyelination", "Delayed myelination"],
        ),
        (
            "Findings consistent with: 1. Ring enhancement 2. Necrosis",
            ["Ring enhancement", "Necrosis"],
        ),
    ],
)
def test_a_hedge_lead_in_list_reads_as_before(answer: str, expected: list[str]) -> None:
    assert _read(answer) == ("fallback_list", expected)


def test_a_hedge_lead_in_list_of_unlisted_diseases_keeps_its_top1_hit() -> None:
    assert _top(
        _read("Consistent with: 1. Encephalomalacia 2. Gliosis")[1], "Encephalomalacia"
    ) == (
        1.0,
        1.0,
    )


# 2. dxfix27 removed the bracket rule (a second hostile review: a finding outside the brackets
# with the disease inside, "Ring-enhancing lesion (glioblastoma - most likely)", lost its
# Top-1 hit): a spaced dash inside brackets ends the name as 3482645 read it
@pytest.mark.parametrize(
    ("answer", "expected"),
    [  # as 3482645
        (
            "Diagnosis: Glioblastoma (differential - lymphoma, metastasis)",
            ["Glioblastoma (differential"],
        ),
        ("1. Glioblastoma (alternatives - lymphoma or metastasis)", ["Glioblastoma (alternatives"]),
        (
            "1. Glioblastoma (vs lymphoma - less likely)\n2. Metastasis",
            ["Glioblastoma (vs lymphoma", "Metastasis"],
        ),
        (
            "1. Vestibular schwannoma (or schwannoma - less likely)\n2. Meningioma",
            ["Vestibular schwannoma (or schwannoma", "Meningioma"],
        ),
        (
            "1. Glioblastoma (mimics - lymphoma, metastasis)\n2. Abscess",
            ["Glioblastoma (mimics", "Abscess"],
        ),
        ("Diagnosis: Glioblastoma (vs lymphoma - less likely)", ["Glioblastoma (vs lymphoma"]),
        (
            "1. NMOSD (AQP4-IgG positive, 1 - 2 lesions)\n2. Multiple sclerosis",
            ["NMOSD (AQP4-IgG positive, 1", "Multiple sclerosis"],
        ),
    ],
)
def test_a_spaced_dash_in_brackets_ends_the_name_as_before(
    answer: str, expected: list[str]
) -> None:
    assert _read(answer) == ("fallback_list", expected)


# 3. a reason clause that may name the diagnosis is kept: the line reads as before
@pytest.mark.parametrize(
    "answer",
    [  # as 3482645
        "Most likely cerebral edema due to hyponatremia",
        "Most likely hemorrhage due to venous thrombosis",
    ],
)
def test_a_reason_clause_that_may_be_the_diagnosis_stays(answer: str) -> None:
    assert _read(answer) == ("fallback_list", [answer])


def test_a_reason_clause_of_imaging_findings_is_cut() -> None:
    assert _read("Probably meningioma because of the dural tail") == (
        "fallback_list",
        ["meningioma"],
    )


# 4. a declining clause anywhere keeps "cannot exclude" a refusal
@pytest.mark.parametrize(
    "answer",
    [  # as 3482645
        "I cannot exclude a glioma so I cannot give a diagnosis.",
        "I cannot exclude malignancy so I cannot give a diagnosis",
        "I can't rule out stroke but I can't make a diagnosis.",
        "I cannot exclude malignancy, so I cannot give a diagnosis",
    ],
)
def test_cannot_exclude_then_declining_is_a_refusal(answer: str) -> None:
    assert _read(answer) == ("refusal", [])


# 5. dxfix27 removed the reason-list rule: per-item reasons read as 3482645 read them
@pytest.mark.parametrize(
    ("answer", "expected"),
    [  # as 3482645
        (
            "**1. Glioblastoma**\n*Key features:*\n- Ring enhancement\n- Necrosis\n\n**2. Lymphoma**\n"
            "*Key features:*\n- Periventricular\n\n**3. Metastasis**\n*Key features:*\n- Multiple lesions",
            [
                "Glioblastoma",
                "Ring enhancement",
                "Necrosis",
                "Lymphoma",
                "Periventricular",
                "Metastasis",
                "Multiple lesions",
            ],
        ),
        (
            "1. Glioblastoma\nReasoning:\n- Ring enhancement\n- Necrosis\n2. Lymphoma\nReasoning:\n"
            "- Periventricular\n3. Metastasis",
            [
                "Glioblastoma",
                "Ring enhancement",
                "Necrosis",
                "Lymphoma",
                "Periventricular",
                "Metastasis",
            ],
        ),
        (
            "Most likely: Glioblastoma\nReasons:\n- Ring enhancement\n- Necrosis\n2. Lymphoma\n"
            "3. Metastasis",
            ["Glioblastoma", "Ring enhancement", "Necrosis", "Lymphoma", "Metastasis"],
        ),
    ],
)
def test_per_item_reasons_read_as_before(answer: str, expected: list[str]) -> None:
    assert _read(answer) == ("fallback_list", expected)


# 6. only an exact short reason heading opens a reason list
@pytest.mark.parametrize(
    "heading",
    [
        "Ranked list with rationale:",
        "Ranking and rationale:",
        "Explanation of ranking:",
        "Evidence for each:",
        "Feature-matched list:",
        "Findings-based ranking:",
        "Evidence-based ranking:",
        "Supporting ranked list:",
    ],
)
def test_a_ranked_list_heading_with_a_reason_word_keeps_the_list(heading: str) -> None:
    answer = (
        f"Most likely: Glioblastoma\n\n{heading}\n1. Glioblastoma - rim\n"
        "2. Lymphoma - periventricular\n3. Metastasis - multiple"
    )
    assert _read(answer) == ("fallback_list", ["Glioblastoma", "Lymphoma", "Metastasis"])


@pytest.mark.parametrize(
    "heading", ["Reasons to also consider:", "Less likely but supported by findings:"]
)
def test_a_heading_of_other_diagnoses_keeps_the_list(heading: str) -> None:
    answer = (
        f"Most likely: Glioblastoma\n\n{heading}\n1. Lymphoma - periventricular\n"
        "2. Metastasis - multiple"
    )
    assert _read(answer) == ("fallback_list", ["Glioblastoma", "Lymphoma", "Metastasis"])


# 7. reasons on the hedged line itself: the list below is diagnoses
def test_same_line_reasons_leave_the_list_below() -> None:
    answer = (
        "Most likely glioblastoma due to: ring enhancement with necrosis\n\n1. Glioblastoma\n"
        "2. Lymphoma\n3. Metastasis"
    )
    status, names = _read(answer)
    assert status == "fallback_list"
    assert [name.lower() for name in names] == ["glioblastoma", "lymphoma", "metastasis"]


# 8. after an apology, only a disease the lexicon knows is read
@pytest.mark.parametrize(
    ("answer", "status"),
    [  # as 3482645
        ("Sorry, correction: see above", "refusal"),
        ("Sorry, correction: as above", "refusal"),
        ("Sorry, correction: same as before", "refusal"),
        ("Sorry, correction: my previous answer stands", "refusal"),
        ("Sorry, correction: please disregard", "refusal"),
        ("Sorry, correction: needs biopsy", "refusal"),
        ("Sorry, correction: further imaging needed", "refusal"),
        ("Sorry, correction: I'm not sure", "refusal"),
        ("Sorry, correction: none of the above", "refusal"),
        ("Sorry, correction: insufficient information", "refusal"),
        ("Sorry, correction: Not a tumor", "unparseable"),
        ("Sorry, correction: it's a tumor", "unparseable"),
    ],
)
def test_an_apology_before_no_disease_reads_as_before(answer: str, status: str) -> None:
    assert _read(answer) == (status, [])


# 9. "X - Y cannot be excluded": X, then Y
@pytest.mark.parametrize(
    "answer",
    [
        "Diagnosis: Glioblastoma - lymphoma cannot be excluded",
        "Glioblastoma - lymphoma cannot be excluded",
        "Glioblastoma but lymphoma cannot be excluded",
    ],
)
def test_a_name_then_one_not_excluded_gives_both(answer: str) -> None:
    assert _read(answer) == ("fallback_list", ["Glioblastoma", "lymphoma"])


# 10. a ranking lead-in over things that are no diseases reads as before
@pytest.mark.parametrize(
    ("answer", "expected"),
    [  # as 3482645
        (
            "Top 3 things to check: 1. DWI 2. SWI 3. Post-contrast T1",
            ("fallback_list", ["Top 3 things to check"]),
        ),
        (
            "Top 3 lesions to review: 1. Left frontal 2. Right parietal 3. Cerebellum",
            ("unparseable", []),
        ),
        (
            "Top 3 red flags: 1. Ring enhancement 2. Necrosis 3. Edema",
            ("fallback_list", ["Top 3 red flags"]),
        ),
        ("My picks: 1. Ring enhancement 2. Necrosis", ("fallback_list", ["My picks"])),
    ],
)
def test_a_ranking_lead_in_over_no_disease_reads_as_before(
    answer: str, expected: tuple[str, list[str]]
) -> None:
    assert _read(answer) == expected


def test_a_ranking_lead_in_over_diseases_still_opens_its_list() -> None:
    assert _read("My top 3 are: 1. Glioblastoma 2. Lymphoma 3. Metastasis") == (
        "fallback_list",
        ["Glioblastoma", "Lymphoma", "Metastasis"],
    )


# 11. the line above a dash run of others stays first only when it names a disease
def test_a_line_above_a_dash_run_that_names_no_disease_is_not_first() -> None:
    assert _read("Sure!\nDifferentials: 1- Glioblastoma 2- Lymphoma") == (
        "fallback_list",
        ["Glioblastoma", "Lymphoma"],
    )
    assert _read("Okay.\nOthers: 1- Lymphoma 2- Metastasis") == (
        "fallback_list",
        ["Lymphoma", "Metastasis"],
    )
    assert _read("Glioblastoma\nOthers: 1- Lymphoma 2- Metastasis") == (
        "fallback_list",
        ["Glioblastoma", "Lymphoma", "Metastasis"],
    )


# found rerunning the reviewer's answers after the fixes above
@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("I cannot rule out a tumor on this single image.", ["tumor"]),
        ("I cannot exclude glioma without further imaging.", ["glioma"]),
        ("I cannot exclude a glioma based on this image alone.", ["glioma"]),
        ("I cannot exclude the possibility of glioma.", ["glioma"]),
        ("I cannot exclude possible glioma.", ["glioma"]),
    ],
)
def test_what_cannot_be_excluded_is_named_without_its_limitation(
    answer: str, expected: list[str]
) -> None:
    assert _read(answer) == ("fallback_list", expected)


@pytest.mark.parametrize(
    "first",
    ["**Assessment**", "Impression", "Brain MRI", "T2 hyperintense lesion", "Left frontal lesion"],
)
def test_a_heading_or_finding_above_a_dash_run_is_not_first(first: str) -> None:
    assert _read(f"{first}\nDifferentials: 1- Glioblastoma 2- Lymphoma") == (
        "fallback_list",
        ["Glioblastoma", "Lymphoma"],
    )


def test_a_ranking_of_concerns_reads_as_before() -> None:  # as 3482645
    assert _read("Top 3 concerns: 1. Herniation 2. Hydrocephalus 3. Hemorrhage") == (
        "fallback_list",
        ["Top 3 concerns"],
    )


def test_a_reason_heading_over_diseases_reads_as_before() -> None:  # as 3482645
    answer = (
        "Glioblastoma\nRationale:\n- Lymphoma: less likely due to necrosis\n- Metastasis: solitary"
    )
    assert _read(answer) == ("fallback_list", ["Lymphoma", "Metastasis"])


def test_a_reason_heading_over_an_unlisted_disease_reads_as_before() -> None:  # as 3482645
    # the lexicon does not know the first item: it may be a differential, not a reason
    answer = (
        "Glioblastoma\nRationale:\n- Schistosomal granuloma: less likely\n- Metastasis: solitary"
    )
    assert _read(answer) == ("fallback_list", ["Schistosomal granuloma", "Metastasis"])
