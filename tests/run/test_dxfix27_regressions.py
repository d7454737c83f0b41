"""Diagnosis answers a second hostile review found dxfix24/25's rules misread (dxfix27).

The project's rule: a parser rule lands only if, on every reviewed corpus, no answer the
tree before dxfix24 (3482645) read right reads wrong. The second review (295 new answers)
judged these reads "before right, after wrong" against 9912320 (dxfix25); each expected
read below is what 3482645's ``parse_diagnoses`` gives for the exact string (run on that
tree, not written by hand), so each test fails on 9912320 and passes once the rule is
narrowed or removed. The last tests pin what the narrowed rules still read.
"""

from __future__ import annotations

import pytest

from novabench.metrics.diagnosis import score_diagnosis
from novabench.run.parsers import parse_diagnoses

# (answer, status, diagnoses) as 3482645 reads them: the bracket rule (a finding outside
# the brackets, the disease inside), the reason-list rule (reasons swallowing the
# differentials), ranking lead-ins of no answer, "cannot exclude" with a tail, apologies
# before alternatives or a category, a hedged name above a one-line dash run of others and
# reason clauses after a category
REVIEWED_AS_BEFORE = [
    (
        "Ring-enhancing lesion (glioblastoma - most likely)",
        "fallback_list",
        ["Ring-enhancing lesion (glioblastoma"],
    ),
    (
        "1. Enhancing lesion (glioblastoma - most likely)\n2. Abscess",
        "fallback_list",
        ["Enhancing lesion (glioblastoma", "Abscess"],
    ),
    (
        "Diagnosis: Extra-axial mass (meningioma - dural tail present)",
        "fallback_list",
        ["Extra-axial mass (meningioma"],
    ),
    (
        "Posterior fossa mass (medulloblastoma - most likely in a child)",
        "fallback_list",
        ["Posterior fossa mass (medulloblastoma"],
    ),
    (
        "Final answer: Cystic lesion with mural nodule (pilocytic astrocytoma - classic)",
        "fallback_list",
        ["Cystic lesion with mural nodule (pilocytic astrocytoma"],
    ),
    (
        "Diagnosis: Periventricular white matter lesions (multiple sclerosis - Dawson fingers)",
        "fallback_list",
        ["Periventricular white matter lesions (multiple sclerosis"],
    ),
    (
        "**Diagnosis:** Temporal lobe signal abnormality (HSV encephalitis - typical)",
        "fallback_list",
        ["Temporal lobe signal abnormality (HSV encephalitis"],
    ),
    (
        "1. Cerebellopontine angle mass (vestibular schwannoma - ice cream cone)\n2. Meningioma",
        "fallback_list",
        ["Cerebellopontine angle mass (vestibular schwannoma", "Meningioma"],
    ),
    (
        "Lesion in the pons (DIPG - diffuse midline glioma)",
        "fallback_list",
        ["Lesion in the pons (DIPG"],
    ),
    ("Diagnosis: Mass (colloid cyst - third ventricle)", "fallback_list", ["Mass (colloid cyst"]),
    (
        "I can't rule out meningioma but this looks like a schwannoma",
        "fallback_list",
        ["schwannoma"],
    ),
    ("Sorry, correction: Glioblastoma? Or lymphoma.", "refusal", []),
    ("Sorry, correction: tumour", "unparseable", []),
    (
        "1. Glioblastoma\n   Key features:\n   1. Ring enhancement\n   2. Necrosis\n2. Lymphoma\n   Key features:\n   1. Homogeneous enhancement\n3. Metastasis",
        "fallback_list",
        [
            "Glioblastoma",
            "Ring enhancement",
            "Necrosis",
            "Lymphoma",
            "Homogeneous enhancement",
            "Metastasis",
        ],
    ),
    (
        "- **Glioblastoma**\n  **Key features:**\n  - Ring enhancement\n  - Necrosis\n- **Lymphoma**\n  **Key features:**\n  - Homogeneous enhancement\n- **Metastasis**",
        "fallback_list",
        [
            "Glioblastoma",
            "Ring enhancement",
            "Necrosis",
            "Lymphoma",
            "Homogeneous enhancement",
            "Metastasis",
        ],
    ),
    (
        "* Glioblastoma\nWhy:\n- Ring enhancement\n- Necrosis\n* Lymphoma\n* Metastasis",
        "fallback_list",
        ["Glioblastoma", "Ring enhancement", "Necrosis", "Lymphoma", "Metastasis"],
    ),
    (
        "Glioblastoma\nEvidence:\n1. Ring enhancement\n2. Necrosis\n3. Lymphoma\n4. Metastasis",
        "fallback_list",
        ["Ring enhancement", "Necrosis", "Lymphoma", "Metastasis"],
    ),
    (
        "Answer: Multiple sclerosis\nSupporting features:\n- Periventricular lesions\n- Dawson fingers\n- ADEM\n- NMOSD",
        "fallback_list",
        ["Multiple sclerosis", "Periventricular lesions", "Dawson fingers", "ADEM", "NMOSD"],
    ),
    (
        "Glioblastoma\nRationale:\n1. Typical appearance\n2. Lymphoma\n3. Metastasis",
        "fallback_list",
        ["Typical appearance", "Lymphoma", "Metastasis"],
    ),
    (
        "Meningioma\nWhy:\n1. Dural tail\n2. Extra-axial location\n3. Schwannoma (if near the CPA)",
        "fallback_list",
        ["Dural tail", "Extra-axial location", "Schwannoma (if near the CPA)"],
    ),
    (
        "Top 3 mimics to exclude: 1. Abscess 2. Lymphoma 3. Metastasis. Diagnosis: Glioblastoma",
        "unparseable",
        [],
    ),
    (
        "Top 3: 1. MRI with contrast 2. MR spectroscopy 3. Biopsy to confirm glioblastoma",
        "unparseable",
        [],
    ),
    (
        "Top 3 patients at risk: 1. Elderly 2. Immunocompromised 3. Children with medulloblastoma",
        "unparseable",
        [],
    ),
    ("The patient has a glioma.\nOthers: 1- Lymphoma 2- Metastasis", "unparseable", []),
    ("Glioblastoma (most likely)\nOthers: 1- Lymphoma 2- Metastasis", "unparseable", []),
    (
        "Diagnosis: Ring-enhancing mass (glioblastoma – favoured)",
        "fallback_list",
        ["Ring-enhancing mass (glioblastoma"],
    ),
    (
        "Impression: Enhancing lesion [glioblastoma - most likely]",
        "fallback_list",
        ["Enhancing lesion [glioblastoma"],
    ),
    (
        "1. Dural-based mass (meningioma - typical dural tail)\n2. Hemangiopericytoma\n3. Metastasis",
        "fallback_list",
        ["Dural-based mass (meningioma", "Hemangiopericytoma", "Metastasis"],
    ),
    (
        "Answer: Lesion (abscess - restricted diffusion centrally)",
        "fallback_list",
        ["Lesion (abscess"],
    ),
    (
        "Most likely: Suprasellar mass (craniopharyngioma - calcified, cystic)",
        "fallback_list",
        ["Suprasellar mass (craniopharyngioma"],
    ),
    (
        "The most likely diagnosis is a cystic lesion (epidermoid cyst - DWI bright).",
        "fallback_list",
        ["cystic lesion (epidermoid cyst"],
    ),
    (
        "**Final Answer:** Multiple lesions (metastases - given the grey-white junction location)",
        "fallback_list",
        ["Multiple lesions (metastases"],
    ),
    (
        "Diagnosis: White matter disease (PML - JC virus)",
        "fallback_list",
        ["White matter disease (PML"],
    ),
    (
        "Diagnosis: Hyperdense lesion (cavernoma - popcorn appearance)",
        "fallback_list",
        ["Hyperdense lesion (cavernoma"],
    ),
    (
        "Diagnosis: Intraventricular mass (central neurocytoma - bubbly appearance)",
        "fallback_list",
        ["Intraventricular mass (central neurocytoma"],
    ),
    (
        "Diagnosis: Sellar mass (pituitary macroadenoma - snowman shape)",
        "fallback_list",
        ["Sellar mass (pituitary macroadenoma"],
    ),
    (
        "Diagnosis: Pineal region mass (germinoma - young male)",
        "fallback_list",
        ["Pineal region mass (germinoma"],
    ),
    (
        "- Cortical lesion (DNET - bubbly, no enhancement)\n- Ganglioglioma",
        "fallback_list",
        ["Cortical lesion (DNET", "Ganglioglioma"],
    ),
    (
        "Diagnosis: Cerebellar mass (hemangioblastoma - cyst with mural nodule)",
        "fallback_list",
        ["Cerebellar mass (hemangioblastoma"],
    ),
    (
        "Diagnosis: Ring-enhancing lesion (toxoplasmosis - HIV patient)",
        "fallback_list",
        ["Ring-enhancing lesion (toxoplasmosis"],
    ),
    (
        "Final answer: Posterior fossa tumour (medulloblastoma – paediatric)",
        "fallback_list",
        ["Posterior fossa tumour (medulloblastoma"],
    ),
    (
        "1. **Glioblastoma**\nKey features:\n- Ring enhancement\n- Necrosis\n- **Lymphoma**\n- **Metastasis**",
        "fallback_list",
        ["Glioblastoma", "Ring enhancement", "Necrosis", "Lymphoma", "Metastasis"],
    ),
    (
        "Glioblastoma\nReasons:\n- Ring enhancement\n- Necrosis\n- Other possibilities: lymphoma, metastasis",
        "fallback_list",
        ["Ring enhancement", "Necrosis", "lymphoma", "metastasis"],
    ),
    (
        "Diagnosis: Glioblastoma\nFeatures:\n• Ring enhancement\n• Necrosis\n• Lymphoma\n• Metastasis",
        "fallback_list",
        ["Glioblastoma", "Ring enhancement", "Necrosis", "Lymphoma", "Metastasis"],
    ),
    (
        "Most likely: Multiple sclerosis\nKey features:\n1. Periventricular ovoid lesions\n2. Juxtacortical lesions\n3. NMOSD\n4. ADEM\n5. Small vessel disease",
        "fallback_list",
        [
            "Multiple sclerosis",
            "Periventricular ovoid lesions",
            "Juxtacortical lesions",
            "NMOSD",
            "ADEM",
            "Small vessel disease",
        ],
    ),
    (
        "Diagnosis: Meningioma\nKey findings:\n* Dural tail\n* Extra-axial\n* Schwannoma\n* Hemangiopericytoma",
        "fallback_list",
        ["Meningioma", "Dural tail", "Extra-axial", "Schwannoma", "Hemangiopericytoma"],
    ),
    (
        "1. Glioblastoma\nReasoning:\n1. Ring enhancement\n2. Necrosis\n2. Lymphoma\n3. Metastasis",
        "fallback_list",
        ["Glioblastoma", "Ring enhancement", "Necrosis", "Lymphoma", "Metastasis"],
    ),
    (
        "1) Glioblastoma\nWhy:\n1) Ring enhancement\n2) Necrosis\n2) Lymphoma\n3) Metastasis",
        "fallback_list",
        ["Glioblastoma", "Ring enhancement", "Necrosis", "Lymphoma", "Metastasis"],
    ),
    (
        "- Glioblastoma\n  Why:\n  - Ring enhancement\n- Lymphoma\n  Why:\n  - Periventricular\n- Metastasis",
        "fallback_list",
        ["Glioblastoma", "Ring enhancement", "Lymphoma", "Periventricular", "Metastasis"],
    ),
    (
        "Diagnosis: Glioblastoma\nRationale:\n- Clinical history of seizures\n- Lymphoma (less likely)\n- Metastasis (less likely)",
        "fallback_list",
        ["Glioblastoma", "Clinical history of seizures", "Lymphoma", "Metastasis"],
    ),
    (
        "Glioblastoma\nFindings:\n1. Enhancement\n2. Abscess\n3. Lymphoma\n4. Metastasis\n5. Tumefactive MS",
        "fallback_list",
        ["Enhancement", "Abscess", "Lymphoma", "Metastasis", "Tumefactive MS"],
    ),
    (
        "Likely diagnosis: Glioblastoma\nSupporting evidence:\n- Necrosis\n- Lymphoma\n- Metastasis",
        "fallback_list",
        ["Glioblastoma", "Necrosis", "Lymphoma", "Metastasis"],
    ),
    (
        "Diagnosis: Glioblastoma\nWhy:\n- Typical age\n- Or lymphoma\n- Or metastasis",
        "fallback_list",
        ["Glioblastoma", "Typical age", "Or lymphoma", "Or metastasis"],
    ),
    (
        "Diagnosis: Glioblastoma\nEvidence:\n1. Ring enhancement\n2. Necrosis\n3. Metastasis\n4. Abscess",
        "fallback_list",
        ["Glioblastoma", "Ring enhancement", "Necrosis", "Metastasis", "Abscess"],
    ),
    (
        "<think>The lesion enhances.</think>\nGlioblastoma\nWhy:\n1. Ring enhancement\n2. Lymphoma\n3. Metastasis",
        "fallback_list",
        ["Ring enhancement", "Lymphoma", "Metastasis"],
    ),
    (
        "Top 3 risk factors: 1. Age 2. Radiation 3. NF1 (neurofibromatosis)",
        "fallback_list",
        ["Top 3 risk factors"],
    ),
    (
        "Top 3 complications: 1. Herniation 2. Hydrocephalus 3. Hemorrhage",
        "fallback_list",
        ["Top 3 complications"],
    ),
    ("Top 2: 1. Glioblastoma 2. Lymphoma. Final answer: Lymphoma", "fallback_list", ["Top 2"]),
    (
        "I would rank them: 1. Lymphoma 2. Glioblastoma. On reflection, glioblastoma is the answer.",
        "unparseable",
        [],
    ),
    (
        "Top 3 least likely: 1. Abscess 2. Tumefactive MS 3. Glioblastoma",
        "fallback_list",
        ["Top 3 least likely"],
    ),
    (
        "Top 3 to rule out: 1. Abscess 2. Lymphoma 3. Metastasis",
        "fallback_list",
        ["Top 3 to rule out"],
    ),
    (
        "Top 3 excluded: 1. Abscess 2. Lymphoma 3. Metastasis. Answer: Glioblastoma",
        "fallback_list",
        ["Top 3 excluded"],
    ),
    (
        "I would rank them lower: 1. Abscess 2. Lymphoma. Answer: Glioblastoma",
        "fallback_list",
        ["I would rank them lower"],
    ),
    (
        "Glioblastoma (likely)\nDifferentials: 1- Lymphoma 2- Metastasis",
        "fallback_list",
        ["Glioblastoma"],
    ),
    ("Glioblastoma (most likely)\n\nOthers: 1- Lymphoma 2- Metastasis", "unparseable", []),
    ("Probably glioblastoma\nOthers: 1- Lymphoma 2- Metastasis", "unparseable", []),
    ("Probably glioblastoma (most likely)\nOthers: 1- Lymphoma 2- Metastasis", "unparseable", []),
    ("I'm sorry for the earlier error. Final answer: Glioblastoma (or lymphoma)", "refusal", []),
    ("Sorry, correction: tumefactive demyelination vs glioma", "refusal", []),
    (
        "Likely glioblastoma\nDifferentials: 1- Lymphoma 2- Metastasis",
        "fallback_list",
        ["Likely glioblastoma"],
    ),
    ("Most likely glioblastoma\nOthers: 1- Lymphoma 2- Metastasis", "unparseable", []),
    ("Consistent with glioblastoma\nOthers: 1- Lymphoma 2- Metastasis", "unparseable", []),
    ("Glioblastoma (most likely)\nOthers: 1 - Lymphoma 2 - Metastasis", "unparseable", []),
    (
        "Multiple sclerosis (likely)\nDifferentials: 1- ADEM 2- NMOSD",
        "fallback_list",
        ["Multiple sclerosis"],
    ),
    ("Meningioma (likely)\nOthers: 1- Schwannoma 2- Hemangiopericytoma", "unparseable", []),
    (
        "1. Hemorrhagic lesion (cavernoma - most likely)\n2. Hemorrhagic metastasis\n3. Amyloid angiopathy",
        "fallback_list",
        ["Hemorrhagic lesion (cavernoma", "Hemorrhagic metastasis", "Amyloid angiopathy"],
    ),
    (
        "Most likely a tumour given the enhancement\nDifferential: 1. Glioblastoma 2. Lymphoma",
        "fallback_list",
        ["Glioblastoma", "Lymphoma"],
    ),
    (
        "Most likely an infection given the ring enhancement\n1. Abscess\n2. Toxoplasmosis",
        "fallback_list",
        ["Abscess", "Toxoplasmosis"],
    ),
    (
        "Glioblastoma\nWhy:\n1. Ring enhancement\n\n2. Necrosis",
        "fallback_list",
        ["Ring enhancement", "Necrosis"],
    ),
    (
        "Glioblastoma\nEvidence:\n- Ring enhancement favouring glioblastoma over lymphoma\n- Lymphoma\n- Metastasis",
        "fallback_list",
        ["Ring enhancement favouring glioblastoma over lymphoma", "Lymphoma", "Metastasis"],
    ),
    (
        "Based on the axial post-contrast T1 image, there is a heterogeneously enhancing mass in the right frontal lobe with central necrosis and surrounding vasogenic oedema.\n\n**Diagnosis:** Right frontal necrotic mass (glioblastoma - most likely)\n\n**Differential:** metastasis, abscess",
        "fallback_list",
        ["Right frontal necrotic mass (glioblastoma", "metastasis", "abscess"],
    ),
    (
        "<think>\nOkay, the image shows a CP angle lesion extending into the IAC. That's classic.\n</think>\n\nFinal answer: CP angle mass (vestibular schwannoma – ice-cream-cone appearance)",
        "fallback_list",
        ["CP angle mass (vestibular schwannoma"],
    ),
    (
        "The MRI demonstrates multiple periventricular ovoid lesions perpendicular to the ventricles.\n\n1. Demyelinating lesions (multiple sclerosis - Dawson's fingers)\n2. ADEM\n3. Small vessel ischaemic disease",
        "fallback_list",
        ["Demyelinating lesions (multiple sclerosis", "ADEM", "Small vessel ischaemic disease"],
    ),
    (
        "Answer: Extra-axial dural-based lesion (meningioma - with dural tail)\nConfidence: high",
        "fallback_list",
        ["Extra-axial dural-based lesion (meningioma"],
    ),
    (
        "### Most likely diagnosis\n**Glioblastoma**\n\n#### Key features:\n- Thick irregular rim enhancement\n- Central necrosis\n- Crosses the corpus callosum\n- **Primary CNS lymphoma** - less likely given necrosis\n- **Metastasis** - solitary lesion argues against",
        "fallback_list",
        [
            "Thick irregular rim enhancement",
            "Central necrosis",
            "Crosses the corpus callosum",
            "Primary CNS lymphoma",
            "Metastasis",
        ],
    ),
    (
        "1. **Glioblastoma (IDH-wildtype)**\n   Key features:\n   - Necrosis\n   - Thick rim\n2. **Primary CNS lymphoma**\n   Key features:\n   - Homogeneous enhancement\n3. **Metastasis**",
        "fallback_list",
        [
            "Glioblastoma (IDH-wildtype)",
            "Necrosis",
            "Thick rim",
            "Primary CNS lymphoma",
            "Homogeneous enhancement",
            "Metastasis",
        ],
    ),
    (
        "Diagnosis: Glioblastoma\nReasoning:\n- Age > 50\n- Rim enhancement\n- Lymphoma would enhance homogeneously\n- Metastasis usually at grey-white junction",
        "fallback_list",
        [
            "Glioblastoma",
            "Age > 50",
            "Rim enhancement",
            "Lymphoma would enhance homogeneously",
            "Metastasis usually at grey-white junction",
        ],
    ),
    (
        "Most likely a neoplasm given the heterogeneous enhancement.\n\nDifferential diagnosis:\n1. Glioblastoma\n2. Metastasis\n3. Lymphoma",
        "fallback_list",
        ["Glioblastoma", "Metastasis", "Lymphoma"],
    ),
    (
        "Probably an infection given the restricted diffusion centrally\nDifferentials:\n1. Pyogenic abscess\n2. Toxoplasmosis\n3. Tuberculoma",
        "fallback_list",
        ["Pyogenic abscess", "Toxoplasmosis", "Tuberculoma"],
    ),
    (
        "Most likely glioblastoma\nOthers: 1- Primary CNS lymphoma 2- Metastasis 3- Abscess",
        "unparseable",
        [],
    ),
    (
        "Consistent with meningioma\nDifferentials: 1- Hemangiopericytoma 2- Dural metastasis",
        "fallback_list",
        ["Consistent with meningioma"],
    ),
    (
        "Top 3 emergencies to exclude: 1. Herniation 2. Haemorrhage 3. Hydrocephalus",
        "fallback_list",
        ["Top 3 emergencies to exclude"],
    ),
]


@pytest.mark.parametrize(("answer", "status", "expected"), REVIEWED_AS_BEFORE)
def test_a_reviewed_regression_reads_as_before(
    answer: str, status: str, expected: list[str]
) -> None:
    parsed = parse_diagnoses(answer)
    assert (parsed.status, parsed.diagnoses) == (status, expected)


def test_the_reviewed_bracket_answers_keep_their_top1_hit() -> None:
    names = parse_diagnoses("Ring-enhancing lesion (glioblastoma - most likely)").diagnoses
    assert score_diagnosis([names], ["Glioblastoma"])["top1-lexicon"] == 1.0


def test_a_hedged_name_above_a_dash_run_keeps_its_top1_hit() -> None:
    for answer, gold in [
        ("Likely glioblastoma\nDifferentials: 1- Lymphoma 2- Metastasis", "Glioblastoma"),
        (
            "Consistent with meningioma\nDifferentials: 1- Hemangiopericytoma 2- Dural metastasis",
            "Meningioma",
        ),
        ("Multiple sclerosis (likely)\nDifferentials: 1- ADEM 2- NMOSD", "Multiple sclerosis"),
    ]:
        names = parse_diagnoses(answer).diagnoses
        assert score_diagnosis([names], [gold])["top1-lexicon"] == 1.0, answer


# What the narrowed rules still read (each was wrong on 3482645).
@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        # a bare name above a one-line dash run of others stays first (3482645: X, "Others")
        (
            "Glioblastoma\nOthers: 1- Lymphoma 2- Metastasis",
            ["Glioblastoma", "Lymphoma", "Metastasis"],
        ),
        # chatter above it is no name (3482645: "Sure!")
        ("Sure!\nDifferentials: 1- Glioblastoma 2- Lymphoma", ["Glioblastoma", "Lymphoma"]),
        # a ranking lead-in over diseases (3482645: "My top 3 are", "Top 3 (most to least likely)")
        (
            "My top 3 are: 1. Glioblastoma 2. Lymphoma 3. Metastasis",
            ["Glioblastoma", "Lymphoma", "Metastasis"],
        ),
        (
            "Top 3 (most to least likely): 1. Glioblastoma 2. Lymphoma 3. Metastasis",
            ["Glioblastoma", "Lymphoma", "Metastasis"],
        ),
        # a specific disease before an imaging reason clause (3482645: the whole line)
        ("Most likely glioblastoma because of the necrotic rim", ["glioblastoma"]),
        # one specific disease after an apology (3482645: refusal)
        ("Sorry, correction: Glioblastoma", ["Glioblastoma"]),
        # exactly "cannot exclude X" (3482645: refusal)
        ("I cannot exclude a glioma.", ["glioma"]),
        ("I cannot rule out a glioma on this single image.", ["glioma"]),
    ],
)
def test_the_narrowed_rules_still_read(answer: str, expected: list[str]) -> None:
    parsed = parse_diagnoses(answer)
    assert (parsed.status, parsed.diagnoses) == ("fallback_list", expected)


@pytest.mark.parametrize(
    "answer",
    [
        "Sorry, correction: Glioblastoma (or lymphoma)",  # alternatives: as 3482645
        "I'm sorry for the confusion. Final answer: Glioblastoma or lymphoma",
        "Sorry, correction: a tumour",  # a category: as 3482645
    ],
)
def test_an_apology_before_no_single_disease_reads_as_before(answer: str) -> None:
    assert parse_diagnoses(answer).status in ("refusal", "unparseable")
