"""Tests of the diagnosis metric, its normalisation and the lexicon matcher."""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest

from novabench.errors import NovaInputError
from novabench.lexicon.diagnoses import (
    DiagnosisEntry,
    DiagnosisLexicon,
    load_diagnosis_lexicon,
    read_diagnosis,
)
from novabench.metrics.diagnosis import (
    LexiconDiagnosisMatcher,
    describe_matcher,
    diagnosis_aliases,
    edit_ratio,
    normalize_diagnosis,
    prepare_diagnosis,
    score_diagnosis,
)


@pytest.fixture(scope="module")
def matcher() -> LexiconDiagnosisMatcher:
    return LexiconDiagnosisMatcher()


# ---------------------------------------------------------------------------------------
# Normalisation
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Glioblastoma", "glioblastoma"),
        ("  Most likely: Creutzfeldt-Jakob's disease.", "creutzfeldt jakob disease"),
        ("Probable haemorrhagic metastasis", "hemorrhagic metastasis"),
        ("Findings consistent with a tumour", "tumor"),
        ("Suggestive of oedema", "edema"),
        ("Final diagnosis: Behçet's disease", "behcet disease"),
        ("In keeping with the leucodystrophy", "leukodystrophy"),
        ("Neurofibromatosis type II", "neurofibromatosis type 2"),
        ("Chiari II", "chiari 2"),
        ("WHO grade IV astrocytoma", "who grade 4 astrocytoma"),
        ("X-linked adrenoleukodystrophy", "x linked adrenoleukodystrophy"),  # x stays a letter
        (
            "Progressive multifocal leukoencephalopathy (PML)",
            "progressive multifocal leukoencephalopathy",
        ),
        ("Glioma (low grade)", "glioma low grade"),  # a non-abbreviation parenthesis stays
        ("Sjögren’s syndrome", "sjogren syndrome"),
        ("Suspected ischaemic stroke?", "ischemic stroke"),
        # Greek letters are spelled, other scripts kept: none is dropped
        ("β-thalassemia", "beta thalassemia"),
        ("Α-Mannosidosis", "alpha mannosidosis"),
        ("脑膜瘤", "脑膜瘤"),
        ("ミトコンドリア病", "ミトコンドリア病"),  # a kana's voicing mark is part of it
        ("Aβ-related angiitis", "beta related angiitis"),  # a Greek letter is a word
        ("αβ T-cell lymphoma", "alpha beta t cell lymphoma"),
        ("Менингиома", "менингиома"),
        ("", ""),
        ("likely", ""),
    ],
)
def test_normalize_diagnosis(text: str, expected: str) -> None:
    assert normalize_diagnosis(text) == expected


def test_aliases_keep_parenthesised_abbreviations() -> None:
    assert diagnosis_aliases("Acute disseminated encephalomyelitis (ADEM)") == (
        "acute disseminated encephalomyelitis",
        "adem",
    )
    assert diagnosis_aliases("Atypical teratoid/rhabdoid tumour (AT/RT)") == (
        "atypical teratoid rhabdoid tumor",
        "at rt",
    )
    assert diagnosis_aliases("Neurofibromatosis (NF1)") == ("neurofibromatosis", "nf1")
    assert diagnosis_aliases("   ") == ()


def test_normalize_rejects_non_strings() -> None:
    with pytest.raises(NovaInputError, match="text"):
        normalize_diagnosis(None)  # type: ignore[arg-type]


def test_edit_ratio_matches_hand_counts() -> None:
    # glioblastoma -> glioblastom: one deletion over 12 letters.
    assert edit_ratio("glioblastoma", "glioblastom") == pytest.approx(1 - 1 / 12)
    # kitten -> sitting: 3 edits (k->s, e->i, +g) over 7 letters.
    assert edit_ratio("kitten", "sitting") == pytest.approx(1 - 3 / 7)
    assert edit_ratio("", "") == 1.0
    assert edit_ratio("abc", "") == 0.0
    assert edit_ratio("abc", "xyz") == 0.0


def test_banded_edit_distance_agrees_with_the_plain_recurrence() -> None:
    from novabench.metrics.diagnosis_matcher import _levenshtein

    def plain(a: str, b: str) -> int:  # textbook full-table Levenshtein, the reference
        previous = list(range(len(b) + 1))
        for i, char_a in enumerate(a, start=1):
            current = [i]
            for j, char_b in enumerate(b, start=1):
                current.append(
                    min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char_a != char_b))
                )
            previous = current
        return previous[-1]

    rng = np.random.default_rng(7)
    for _ in range(2000):
        a = "".join(rng.choice(list("abc"), size=int(rng.integers(0, 9))))
        b = "".join(rng.choice(list("abc"), size=int(rng.integers(0, 9))))
        limit = int(rng.integers(0, 10))
        distance = plain(a, b)
        assert _levenshtein(a, b, limit) == (distance if distance <= limit else limit + 1), (
            a,
            b,
            limit,
        )


# ---------------------------------------------------------------------------------------
# Lexicon
# ---------------------------------------------------------------------------------------


def test_lexicon_size_groups_and_fields() -> None:
    lexicon = load_diagnosis_lexicon()
    specific = [e for e in lexicon.entries if not e.is_category]
    assert len(specific) >= 200
    groups = {e.group for e in lexicon.entries}
    for group in (
        "demyelinating",
        "infectious",
        "inflammatory and autoimmune",
        "neoplastic",
        "vascular",
        "metabolic and toxic",
        "genetic and neurocutaneous",
        "congenital",
        "degenerative",
    ):
        assert group in groups
    # Every specific entry hangs in the tree or is a deliberate root with cue words.
    assert sum(1 for e in specific if e.parent is None) < 10
    assert sum(1 for e in specific if e.cues) > 0.9 * len(specific)


def test_every_name_and_synonym_resolves_to_its_own_entry() -> None:
    lexicon = load_diagnosis_lexicon()
    for entry in lexicon.entries:
        for name in entry.names:
            found = lexicon.lookup(name)
            assert found is not None and found.name == entry.name, (name, entry.name)


@pytest.mark.parametrize(
    ("alias", "canonical"),
    [
        ("MS", "multiple sclerosis"),
        ("ADEM", "acute disseminated encephalomyelitis"),
        ("PML", "progressive multifocal leukoencephalopathy"),
        ("PRES", "posterior reversible encephalopathy syndrome"),
        ("CADASIL", "CADASIL"),
        ("MELAS", "MELAS"),
        ("NMOSD", "neuromyelitis optica spectrum disorder"),
        ("CJD", "Creutzfeldt-Jakob disease"),
        ("HSV encephalitis", "herpes simplex encephalitis"),
        ("AVM", "arteriovenous malformation"),
        ("DVA", "developmental venous anomaly"),
        ("GBM", "glioblastoma"),
        ("PCNSL", "primary CNS lymphoma"),
        ("DNET", "dysembryoplastic neuroepithelial tumor"),
        ("Dysembryoplastic neuroepithelial tumour", "dysembryoplastic neuroepithelial tumor"),
        ("Haemangioblastoma", "hemangioblastoma"),
        ("Wilsons disease", "Wilson disease"),
        ("Devic's disease", "neuromyelitis optica spectrum disorder"),
        ("NF-1", "neurofibromatosis type 1"),
        ("von Recklinghausen's disease", "neurofibromatosis type 1"),
        ("brain metastases", "metastasis"),
        ("Chiari type II", "Chiari 2 malformation"),
        ("Guillain-Barré syndrome", "Guillain-Barre syndrome"),
    ],
)
def test_lookup_of_abbreviations_and_variants(alias: str, canonical: str) -> None:
    entry = load_diagnosis_lexicon().lookup(alias)
    assert entry is not None and entry.name == canonical


def test_hierarchy() -> None:
    lexicon = load_diagnosis_lexicon()
    assert lexicon.is_ancestor("glioma", "glioblastoma")
    assert lexicon.is_ancestor("meningitis", "tuberculous meningitis")
    assert lexicon.is_ancestor("CNS tuberculosis", "tuberculous meningitis")  # second parent
    assert not lexicon.is_ancestor("glioblastoma", "glioma")
    assert not lexicon.is_ancestor("ependymoma", "subependymoma")
    assert lexicon.get("intracranial neoplasm").is_category
    assert lexicon.get("glioblastoma").parent == "high-grade glioma"


def _entry(
    name: str, synonyms: tuple[str, ...] = (), parents: tuple[str, ...] = ()
) -> DiagnosisEntry:
    return DiagnosisEntry(name=name, synonyms=synonyms, parents=parents, cues=(), group="test")


def test_lexicon_validation_rejects_broken_tables() -> None:
    with pytest.raises(NovaInputError, match="duplicate"):
        DiagnosisLexicon([_entry("a disease"), _entry("a disease")])
    with pytest.raises(NovaInputError, match="unknown parent"):
        DiagnosisLexicon([_entry("a disease", parents=("nothing",))])
    with pytest.raises(NovaInputError, match="cycle"):
        DiagnosisLexicon([_entry("alpha", parents=("beta",)), _entry("beta", parents=("alpha",))])
    with pytest.raises(NovaInputError, match="also names"):
        DiagnosisLexicon([_entry("alpha", synonyms=("XY",)), _entry("beta", synonyms=("xy",))])


def test_find_mentions_reports_leftover_words() -> None:
    found, leftover = load_diagnosis_lexicon().find_mentions(
        normalize_diagnosis("Left frontal glioblastoma with leptomeningeal metastases")
    )
    assert [e.name for e in found] == ["glioblastoma", "leptomeningeal carcinomatosis"]
    assert leftover == ["left", "frontal", "with"]


# ---------------------------------------------------------------------------------------
# The lexicon matcher: hand-labelled pairs
# ---------------------------------------------------------------------------------------

# (reference, candidate): each must match.
MATCHING_PAIRS = [
    # identical after normalisation, spelling variants, possessives, hedges
    ("Glioblastoma", "glioblastoma"),
    ("Subdural haematoma", "subdural hematoma"),
    ("Haemangioblastoma", "Hemangioblastoma"),
    ("Creutzfeldt-Jakob disease", "Creutzfeldt-Jakob's disease"),
    ("Metachromatic leukodystrophy", "metachromatic leucodystrophy"),
    ("Ischemic stroke", "Probable ischaemic stroke"),
    ("Neurosarcoidosis", "Findings are consistent with neurosarcoidosis"),
    ("Tuberous sclerosis complex", "suggestive of tuberous sclerosis"),
    ("Dysembryoplastic neuroepithelial tumor", "Dysembryoplastic neuroepithelial tumour (DNET)"),
    ("Neuro-Behçet disease", "neuro-Behcet disease"),
    # synonyms and abbreviations
    ("Glioblastoma", "GBM"),
    ("Glioblastoma multiforme", "Glioblastoma, IDH-wildtype"),
    ("Progressive multifocal leukoencephalopathy", "PML"),
    ("Progressive multifocal leukoencephalopathy (PML)", "pml"),
    ("Acute disseminated encephalomyelitis", "ADEM"),
    ("Neuromyelitis optica spectrum disorder", "Devic's disease"),
    ("Neuromyelitis optica", "NMOSD"),
    ("Posterior reversible encephalopathy syndrome", "PRES"),
    (
        "CADASIL",
        "Cerebral autosomal dominant arteriopathy with subcortical infarcts and leukoencephalopathy",
    ),
    ("MELAS", "mitochondrial encephalomyopathy, lactic acidosis and stroke-like episodes"),
    ("Herpes simplex encephalitis", "HSV encephalitis"),
    ("Creutzfeldt-Jakob disease", "likely CJD"),
    ("Arteriovenous malformation", "AVM"),
    ("Developmental venous anomaly", "venous angioma"),
    ("Primary CNS lymphoma", "PCNSL"),
    ("Osmotic demyelination syndrome", "central pontine myelinolysis"),
    ("Vestibular schwannoma", "acoustic neuroma"),
    ("Cavernous malformation", "cavernoma"),
    ("Neurofibromatosis type 1", "NF1"),
    ("Neurofibromatosis type 2", "NF-II"),
    ("Multiple sclerosis", "relapsing-remitting MS"),
    ("Moyamoya", "Moyamoya disease"),
    ("Chiari I malformation", "Chiari type 1"),
    ("Cerebral abscess", "brain abscess"),
    ("Idiopathic intracranial hypertension", "pseudotumor cerebri"),
    ("Spinocerebellar ataxia type 3", "SCA3"),
    ("Wernicke's encephalopathy", "Wernicke encephalopathy"),
    # specificity, both ways
    ("Glioblastoma", "glioma"),
    ("Glioma", "glioblastoma"),
    ("Tuberculous meningitis", "meningitis"),
    ("Meningitis", "tuberculous meningitis"),
    ("Tuberculous meningitis", "CNS tuberculosis"),
    ("Herpes simplex encephalitis", "viral encephalitis"),
    ("Anti-NMDA receptor encephalitis", "autoimmune encephalitis"),
    ("Pilocytic astrocytoma", "astrocytoma"),
    ("Lymphoma", "primary CNS lymphoma"),
    ("Leptomeningeal metastases", "metastatic disease"),
    ("Variant Creutzfeldt-Jakob disease", "CJD"),
    ("Spinocerebellar ataxia", "SCA3"),
    # qualifiers that do not change the disease
    ("Right temporal glioblastoma", "glioblastoma"),
    ("Pilocytic astrocytoma of the cerebellum", "juvenile pilocytic astrocytoma"),
    ("Glioblastoma", "glioblastoma WHO grade 4"),
    # typos (edit ratio >= 0.88)
    ("Oligodendroglioma", "oligodendrogliomma"),
    (
        "Leukoencephalopathy with vanishing white matter",
        "leukoencephalopaty with vanishing white matter",
    ),
    # outside the lexicon: fuzzy words, specificity by word coverage
    ("Bickerstaff brainstem encephalitis", "Bickerstaff encephalitis"),
    ("Erdheim syndrome variant xyz", "erdheim xyz"),
    ("Foix-Chavany-Marie opercular syndrome", "Foix-Chavany-Marie syndrome"),
    # a disease followed by context words that name no other disease (rule 6a)
    ("Glioblastoma", "gliosarcoma of the spine xyz"),
    ("Glioblastoma", "GBM with central necrosis"),
    ("Brain abscess", "cerebral abscess secondary to sinusitis"),
    ("Multiple sclerosis", "MS with Dawson fingers"),
    ("Subarachnoid hemorrhage", "subarachnoid bleed"),
    # a consequence stated with its cause names the cause
    ("Intracranial aneurysm", "subarachnoid hemorrhage due to a ruptured aneurysm"),
]

# (reference, candidate): each must NOT match.
NON_MATCHING_PAIRS = [
    # different diseases that share words
    ("Neurofibromatosis type 1", "neurofibromatosis type 2"),
    ("NF1", "NF2"),
    ("Herpes simplex encephalitis", "autoimmune encephalitis"),
    ("Ependymoma", "subependymoma"),
    ("Tuberculous meningitis", "bacterial meningitis"),
    ("Chiari I malformation", "Chiari II malformation"),
    ("Susac syndrome", "Sjogren syndrome"),
    ("Multiple sclerosis", "multiple system atrophy"),
    ("Multiple sclerosis", "systemic sclerosis"),
    ("Primary CNS lymphoma", "metastasis"),
    ("Pilocytic astrocytoma", "pilomyxoid xyz"),
    ("Sporadic Creutzfeldt-Jakob disease", "variant CJD"),
    ("Metachromatic leukodystrophy", "X-linked adrenoleukodystrophy"),
    ("Epidural hematoma", "subdural hematoma"),
    ("Choroid plexus papilloma", "choroid plexus carcinoma"),
    ("Anaplastic astrocytoma", "anaplastic oligodendroglioma"),
    # a generic ancestor outside a partly recognised disease is not the disease
    ("Bickerstaff brainstem encephalitis", "HSV encephalitis"),
    # numbers and laterality must agree
    ("Spinocerebellar ataxia type 3", "spinocerebellar ataxia type 6"),
    ("Right MCA infarct", "left MCA infarct"),
    ("Glutaric aciduria type 1", "glutaric aciduria type 2"),
    # categories and vague head words are not diagnoses
    ("Glioblastoma", "brain tumour"),
    ("Glioblastoma", "tumor"),
    ("Corticobasal degeneration", "degeneration"),
    ("Wernicke encephalopathy", "encephalopathy"),
    ("Colloid cyst", "cyst"),
    # unrelated or empty
    ("Glioblastoma", "xyz"),
    ("Glioblastoma", ""),
    ("Glioblastoma", "   "),
    ("Glioblastoma", "likely"),
]


@pytest.mark.parametrize(("reference", "candidate"), MATCHING_PAIRS)
def test_lexicon_matcher_accepts(
    matcher: LexiconDiagnosisMatcher, reference: str, candidate: str
) -> None:
    assert matcher(reference, candidate), matcher.explain(reference, candidate)


@pytest.mark.parametrize(("reference", "candidate"), NON_MATCHING_PAIRS)
def test_lexicon_matcher_rejects(
    matcher: LexiconDiagnosisMatcher, reference: str, candidate: str
) -> None:
    assert not matcher(reference, candidate), matcher.explain(reference, candidate)


@pytest.mark.parametrize(
    ("reference", "candidate", "rule"),
    [
        ("Glioblastoma", "glioblastoma", "exact"),
        ("Glioblastoma", "GBM", "lexicon"),
        ("Ependymoma", "subependymoma", "lexicon-different"),
        ("Foix-Chavany-Marie syndrome", "HSV encephalitis", "no-match"),
        ("Bickerstaff brainstem encephalitis", "glioblastoma xyz", "mentions-different"),
        ("Xyz syndrome", "brain tumor", "too-vague"),
        ("Right MCA infarct", "left MCA infarct", "qualifier-mismatch"),
        # A subtype's Greek letter, as "type A": beta is no alpha, spelled or written
        ("alpha-mannosidosis", "beta-mannosidosis", "qualifier-mismatch"),
        ("α-thalassemia", "β-thalassemia", "qualifier-mismatch"),
        ("α-mannosidosis", "Alpha mannosidosis", "exact"),
        ("Meningioma", "胶质瘤", "no-match"),
        ("Amyloid beta-related angiitis", "Aβ-related angiitis", "fuzzy"),
        ("Foix-Chavany-Marie opercular syndrome", "Foix-Chavany-Marie syndrome", "fuzzy"),
        ("Glioblastoma", "GBM with central necrosis", "lexicon-context"),
        ("Intraventricular hemorrhage", "intraventricular bleed", "lexicon"),
        ("Subarachnoid hemorrhage", "intraventricular hemorrhage", "lexicon-different"),
        ("Spinal cord infarction", "cerebellar infarct", "location-mismatch"),
        ("Intracranial aneurysm", "subarachnoid hemorrhage due to a ruptured aneurysm", "cause"),
        ("Glioblastoma", "", "empty"),
        ("Cerebral toxoplasmosis", "no evidence of toxoplasmosis", "negated"),
        ("Cerebral toxoplasmosis", "Glioma or toxoplasmosis", "several-diseases"),
    ],
)
def test_explain_names_the_deciding_rule(
    matcher: LexiconDiagnosisMatcher, reference: str, candidate: str, rule: str
) -> None:
    assert matcher.explain(reference, candidate).rule == rule


def test_matcher_is_symmetric_on_the_table(matcher: LexiconDiagnosisMatcher) -> None:
    # Between single diagnoses every rule is symmetric (specificity is accepted both ways),
    # so swapping must agree. (The several-diseases rule reads the candidate only.)
    for reference, candidate in MATCHING_PAIRS + NON_MATCHING_PAIRS:
        if candidate.strip() and normalize_diagnosis(candidate):
            assert matcher(reference, candidate) == matcher(candidate, reference), (
                reference,
                candidate,
            )


# ---------------------------------------------------------------------------------------
# One prediction names one diagnosis: negation, hedges, compounds
# ---------------------------------------------------------------------------------------

# (reference, candidate, match, deciding rule)
ONE_DIAGNOSIS_CASES = [
    # negated mentions do not name the disease
    ("Cerebral toxoplasmosis", "Glioblastoma (toxoplasmosis ruled out)", False, "negated"),
    ("Cerebral toxoplasmosis", "no evidence of toxoplasmosis", False, "negated"),
    ("Cerebral toxoplasmosis", "not toxoplasmosis", False, "negated"),
    ("Cerebral toxoplasmosis", "without toxoplasmosis", False, "negated"),
    ("Cerebral toxoplasmosis", "excluded toxoplasmosis", False, "negated"),
    ("Cerebral toxoplasmosis", "toxoplasmosis excluded", False, "negated"),
    ("Cerebral toxoplasmosis", "unlikely toxoplasmosis", False, "negated"),
    ("Cerebral toxoplasmosis", "Toxoplasmosis is unlikely", False, "negated"),
    ("Cerebral toxoplasmosis", "Toxoplasmosis has been ruled out", False, "negated"),
    ("Cerebral toxoplasmosis", "Lymphoma rather than toxoplasmosis", False, "negated"),
    ("Cerebral toxoplasmosis", "Lymphoma; toxoplasmosis less likely", False, "negated"),
    ("Cerebral toxoplasmosis", "negative for toxoplasmosis", False, "negated"),
    (
        "Progressive multifocal leukoencephalopathy",
        "No progressive multifocal leukoencephalopathy (PML)",
        False,
        "negated",
    ),
    ("PML", "No progressive multifocal leukoencephalopathy (PML)", False, "negated"),
    ("Glioblastoma", "Not glioblastoma (GBM)", False, "negated"),
    ("Erdheim syndrome variant xyz", "no erdheim xyz", False, "negated"),
    # what the candidate affirms still counts
    ("Glioblastoma", "Glioblastoma (toxoplasmosis ruled out)", True, "exact"),
    ("Glioblastoma", "Glioblastoma, no evidence of toxoplasmosis", True, "exact"),
    ("Primary CNS lymphoma", "Lymphoma rather than toxoplasmosis", True, "lexicon"),
    ("Glioblastoma", "Glioblastoma with toxoplasmosis ruled out", True, "lexicon"),
    ("Lymphoma", "not toxoplasmosis but lymphoma", True, "exact"),
    # double negatives are hedges, not negations
    ("Cerebral toxoplasmosis", "Toxoplasmosis cannot be excluded", True, "lexicon"),
    ("Cerebral toxoplasmosis", "toxoplasmosis cannot be ruled out", True, "lexicon"),
    ("Cerebral toxoplasmosis", "toxoplasmosis not ruled out", True, "lexicon"),
    # hedges: several diseases as alternatives match none of them
    ("Cerebral toxoplasmosis", "Glioma or toxoplasmosis", False, "several-diseases"),
    (
        "Cerebral toxoplasmosis",
        "Glioma, Cerebral toxoplasmosis, Lymphoma",
        False,
        "several-diseases",
    ),
    (
        "Progressive multifocal leukoencephalopathy",
        "Multiple sclerosis or PML",
        False,
        "several-diseases",
    ),
    ("PML", "Multiple sclerosis or PML", False, "several-diseases"),
    ("Multiple sclerosis", "Multiple sclerosis or PML", False, "several-diseases"),
    ("Cerebral toxoplasmosis", "Glioma/toxoplasmosis", False, "several-diseases"),
    ("Cerebral toxoplasmosis", "Glioma; toxoplasmosis", False, "several-diseases"),
    ("Cerebral toxoplasmosis", "Glioma vs. toxoplasmosis", False, "several-diseases"),
    ("Cerebral toxoplasmosis", "Glioma versus toxoplasmosis", False, "several-diseases"),
    ("Cerebral toxoplasmosis", "Glioma and/or toxoplasmosis", False, "several-diseases"),
    ("Cerebral toxoplasmosis", "either glioma or toxoplasmosis", False, "several-diseases"),
    ("Primary CNS lymphoma", "Glioma or lymphoma (PCNSL)", False, "several-diseases"),
    ("Glioma", "Glioblastoma or oligodendroglioma", False, "several-diseases"),
    (
        "Glioblastoma",
        "Final diagnosis: glioblastoma. Differential: metastasis, lymphoma",
        False,
        "several-diseases",
    ),
    # one diagnosis: a disease with its own subtype or supertype, or with qualifiers
    ("Glioblastoma", "glioma, likely glioblastoma", True, "lexicon"),
    ("Glioma", "glioma, likely glioblastoma", True, "lexicon"),
    ("Oligodendroglioma", "glioma, likely glioblastoma", False, "lexicon-different"),
    ("Glioblastoma", "Glioblastoma or glioma", True, "lexicon"),
    ("Glioblastoma", "Glioma or brain tumour", True, "lexicon"),
    ("Glioblastoma", "Glioblastoma, IDH-wildtype, left temporal", True, "lexicon"),
    ("Glioblastoma", "Glioblastoma, with necrosis", True, "lexicon-context"),
    (
        "MELAS",
        "Mitochondrial encephalomyopathy, lactic acidosis and stroke-like episodes",
        True,
        "lexicon",
    ),
    (
        "Atypical teratoid rhabdoid tumor",
        "Atypical teratoid/rhabdoid tumour (AT/RT)",
        True,
        "exact",
    ),
    # compounds name the disease stated first, or match a reference naming them all
    ("Cerebral toxoplasmosis", "Glioma with toxoplasmosis", False, "several-diseases"),
    ("Cerebral toxoplasmosis", "Glioma and toxoplasmosis", False, "several-diseases"),
    ("Metastasis", "Melanoma metastasis with hemorrhage", True, "lexicon"),
    ("Intracranial hemorrhage", "Metastasis with hemorrhage", False, "several-diseases"),
    (
        "Glioblastoma with leptomeningeal metastases",
        "Leptomeningeal metastases from glioblastoma",
        True,
        "lexicon",
    ),
    (
        "Glioblastoma with leptomeningeal metastases",
        "Glioblastoma or leptomeningeal metastases",
        False,
        "several-diseases",
    ),
    # a reference may name several diseases; a candidate naming one of them matches
    ("Glioblastoma with leptomeningeal metastases", "Glioblastoma", True, "lexicon"),
    ("Glioma or toxoplasmosis", "Cerebral toxoplasmosis", True, "lexicon"),
    # outside the lexicon: single terms still match fuzzily, alternatives do not
    ("Bickerstaff brainstem encephalitis", "Bickerstaff encephalitis", True, "lexicon"),
    ("Foix-Chavany-Marie opercular syndrome", "Foix-Chavany-Marie syndrome", True, "fuzzy"),
    (
        "Opsoclonus myoclonus syndrome",
        "Opsoclonus myoclonus syndrome or Kluver-Bucy syndrome",
        False,
        "several-diseases",
    ),
    (
        "Opsoclonus myoclonus syndrome",
        "Opsoclonus myoclonus or Kluver-Bucy",
        False,
        "several-diseases",
    ),
    ("Glioblastoma", "Glioblastoma, Kluver-Bucy syndrome", False, "several-diseases"),
    (
        "Bickerstaff brainstem encephalitis",
        "Bickerstaff brainstem encephalitis or Miller Fisher syndrome",
        False,
        "several-diseases",
    ),
    ("Cockayne syndrome", "Cockayne syndrome or Aicardi syndrome", False, "several-diseases"),
    ("Cockayne syndrome", "Cockayne or Aicardi", False, "several-diseases"),
    ("Menkes disease", "Glioblastoma, Menkes disease", False, "several-diseases"),
    ("Glioblastoma", "Glioblastoma, Menkes disease", False, "several-diseases"),
    ("Glioblastoma", "Glioblastoma, ring-enhancing", True, "lexicon-context"),
    ("Cockayne syndrome", "Cockayne syndrome, left", True, "lexicon"),
    ("Foix-Chavany-Marie syndrome", "Foix-Chavany-Marie syndrome, left", True, "fuzzy"),
    ("Cockayne syndrome", "Cockayne syndrome without retinopathy", True, "exact"),
]


@pytest.mark.parametrize(("reference", "candidate", "expected", "rule"), ONE_DIAGNOSIS_CASES)
def test_one_diagnosis_per_prediction(
    matcher: LexiconDiagnosisMatcher, reference: str, candidate: str, expected: bool, rule: str
) -> None:
    explanation = matcher.explain(reference, candidate)
    assert (explanation.match, explanation.rule) == (expected, rule), explanation
    assert matcher(reference, candidate) is expected


def test_every_alternative_of_a_hedge_is_a_miss(matcher: LexiconDiagnosisMatcher) -> None:
    # Whichever alternative is the truth, the hedge earns nothing; each alone would.
    hedge = "Glioma, Cerebral toxoplasmosis, Lymphoma"
    for reference in ("Glioma", "Cerebral toxoplasmosis", "Lymphoma", "Primary CNS lymphoma"):
        assert not matcher(reference, hedge), reference
    for single in ("Glioma", "Cerebral toxoplasmosis", "Lymphoma"):
        assert matcher(single, single) and matcher(single, single.lower())


def test_explanation_lists_named_and_negated_entries(matcher: LexiconDiagnosisMatcher) -> None:
    explanation = matcher.explain(
        "Cerebral toxoplasmosis", "Glioblastoma (toxoplasmosis ruled out)"
    )
    assert explanation.candidate_entries == ("glioblastoma",)
    assert explanation.negated_entries == ("toxoplasmosis",)
    # lexicon 6 keeps cerebral (acquired) toxoplasmosis apart from the congenital one
    assert explanation.reference_entries == ("cerebral toxoplasmosis",)
    # A chain names its most specific member.
    assert matcher.explain("Glioma", "glioma, likely glioblastoma").candidate_entries == (
        "glioblastoma",
    )
    hedge = matcher.explain("PML", "Multiple sclerosis or PML")
    assert hedge.candidate_entries == (
        "multiple sclerosis",
        "progressive multifocal leukoencephalopathy",
    )


def test_read_diagnosis_negation_scope_and_alternatives() -> None:
    reading = read_diagnosis("Glioblastoma (toxoplasmosis ruled out)")
    assert normalize_diagnosis(reading.affirmed) == "glioblastoma"
    assert reading.negated == ("toxoplasmosis ruled out",)
    # A forward cue runs to the end of its clause, through "or", not past a comma.
    reading = read_diagnosis("no toxoplasmosis or lymphoma, glioma")
    assert reading.negated == ("no toxoplasmosis or lymphoma",)
    assert normalize_diagnosis(reading.affirmed) == "glioma"
    # A parenthesised abbreviation stays in its clause.
    assert read_diagnosis("no progressive multifocal leukoencephalopathy (PML)").negated == (
        "no progressive multifocal leukoencephalopathy (PML)",
    )
    # Double negatives and boilerplate negate nothing and are dropped.
    for text in (
        "Toxoplasmosis cannot be excluded",
        "Toxoplasmosis can't be ruled out",
        "Toxoplasmosis not ruled out",
        "Toxoplasmosis, not otherwise specified",
    ):
        reading = read_diagnosis(text)
        assert reading.negated == () and normalize_diagnosis(reading.affirmed) == "toxoplasmosis", (
            text
        )
    # Without a cue the text is untouched.
    assert read_diagnosis("Glioma or lymphoma").affirmed == "Glioma or lymphoma"
    # Alternatives: explicit words, punctuation, and parts that continue the one before.
    reading = read_diagnosis("Glioma, abscess or toxoplasmosis")
    assert [part.strip() for part in reading.segments] == ["Glioma", "abscess", "toxoplasmosis"]
    assert reading.explicit
    reading = read_diagnosis("Glioma and/or lymphoma")
    assert [part.strip() for part in reading.segments] == ["Glioma and", "lymphoma"]
    assert read_diagnosis("Glioblastoma, with necrosis").segments == (
        "Glioblastoma, with necrosis",
    )
    assert read_diagnosis("graft-versus-host disease").segments == ("graft-versus-host disease",)
    assert not read_diagnosis("Glioblastoma, IDH-wildtype").explicit
    with pytest.raises(NovaInputError):
        read_diagnosis(None)  # type: ignore[arg-type]


def test_fuzzy_threshold_controls_typo_tolerance() -> None:
    # "oligodendrogliomma": 1 insertion over 18 letters -> ratio 1 - 1/18 = 0.944.
    assert LexiconDiagnosisMatcher(0.88)("Oligodendroglioma", "oligodendrogliomma")
    assert not LexiconDiagnosisMatcher(0.95)("Oligodendroglioma", "oligodendrogliomma")
    assert LexiconDiagnosisMatcher(1.0)("Oligodendroglioma", "oligodendroglioma")


@pytest.mark.parametrize("threshold", [0.0, -0.1, 1.5, "0.9", None])
def test_fuzzy_threshold_is_validated(threshold: object) -> None:
    with pytest.raises(NovaInputError, match="fuzzy_threshold"):
        LexiconDiagnosisMatcher(threshold)  # type: ignore[arg-type]


def test_matcher_rejects_non_strings(matcher: LexiconDiagnosisMatcher) -> None:
    with pytest.raises(NovaInputError, match="candidate"):
        matcher("glioma", None)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------
# Scoring
# ---------------------------------------------------------------------------------------


def test_top1_top5_hand_computation() -> None:
    predictions = [
        ["GBM", "metastasis"],  # hit at rank 1
        [
            "meningioma",
            "abscess",
            "lymphoma",
            "PCNSL",
            "x",
        ],  # hit at rank 3 (lymphoma is an ancestor)
        ["stroke", "MS", "ADEM", "glioma", "abscess"],  # no hit
        [],  # empty: miss
    ]
    references = ["Glioblastoma", "Primary CNS lymphoma", "Susac syndrome", "Krabbe disease"]
    result = score_diagnosis(predictions, references)
    # top1 = 1 hit / 4 cases = 0.25; top5 = 2 hits (cases 0 and 1) / 4 = 0.5
    assert result["top1-lexicon"] == pytest.approx(1 / 4)
    assert result["top5-lexicon"] == pytest.approx(2 / 4)
    assert result["n_cases"] == 4
    assert result["n_empty_predictions"] == 1
    assert result["n_cases_without_reference"] == 0
    assert result["n_predictions_truncated"] == 0
    assert result["matcher"].startswith("lexicon matcher")


def test_top1_top5_hand_computation_with_hedges_and_negations() -> None:
    predictions = [
        ["Glioma or toxoplasmosis", "Cerebral toxoplasmosis"],  # hedge, then hit at rank 2
        ["no evidence of toxoplasmosis", "lymphoma"],  # negated, other: no hit
        ["Glioma, Cerebral toxoplasmosis, Lymphoma"],  # one hedged slot: no hit
        ["Multiple sclerosis or PML", "PML"],  # hedge, then hit at rank 2
        ["glioma, likely glioblastoma"],  # one chain: hit at rank 1
        ["Glioblastoma, IDH-wildtype, left temporal"],  # qualifiers: hit at rank 1
        ["Glioblastoma (toxoplasmosis ruled out)", "toxoplasmosis"],  # negated, hit at rank 2
    ]
    references = [
        "Cerebral toxoplasmosis",
        "Cerebral toxoplasmosis",
        "Cerebral toxoplasmosis",
        "Progressive multifocal leukoencephalopathy",
        "Glioblastoma",
        "Glioblastoma",
        "Cerebral toxoplasmosis",
    ]
    evaluation = prepare_diagnosis(predictions, references)
    assert [case.first_hit_rank for case in evaluation.cases] == [2, None, None, 2, 1, 1, 2]
    result = evaluation.result()
    # top1: cases 4 and 5 -> 2/7; top5: cases 0, 3, 4, 5 and 6 -> 5/7.
    # (Counting hedged and negated mentions as hits, as before, gave 7/7 for both.)
    assert result["top1-lexicon"] == pytest.approx(2 / 7)
    assert result["top5-lexicon"] == pytest.approx(5 / 7)
    assert result["n_cases"] == 7


def test_placeholders_are_excluded_and_counted() -> None:
    predictions = [["glioma"], ["anything"], ["abscess"], ["x"]]
    references = [
        "Glioma",
        "Final diagnosis not found.",
        "Lymphoma",
        {"case_id": "case0004", "final_diagnosis": "N/A"},
    ]
    result = score_diagnosis(predictions, references)
    # 2 scored cases (0 and 2); one hit -> top1 = top5 = 1/2.
    assert result["n_cases"] == 2
    assert result["n_cases_without_reference"] == 2
    assert result["top1-lexicon"] == pytest.approx(0.5) and result["top5-lexicon"] == pytest.approx(
        0.5
    )


def test_rows_with_a_null_or_blank_diagnosis_are_missing_ground_truth_like_placeholders() -> None:
    # The dataset reader reads a null or blank final diagnosis as "no ground truth"
    # (is_placeholder_diagnosis); the metric agrees for dataset rows rather than abort.
    # (A plain None or "" reference is a user's error: see the bad-input table.)
    predictions = [["glioma"], ["a"], ["b"]]
    references = [
        {"case_id": "case0001", "final_diagnosis": "Glioma"},
        {"case_id": "case0002", "final_diagnosis": None},
        {"case_id": "case0003", "final_diagnosis": "  "},
    ]
    result = score_diagnosis(predictions, references)
    assert result["n_cases"] == 1 and result["n_cases_without_reference"] == 2
    assert result["top1-lexicon"] == 1.0
    evaluation = prepare_diagnosis(predictions, references)
    assert [case.has_reference for case in evaluation.cases] == [True, False, False]
    assert evaluation.cases[1].case_id == "case0002"


def test_all_placeholders_give_nan_not_zero() -> None:
    result = score_diagnosis([["glioma"]], ["Final diagnosis not found."])
    assert (
        result["n_cases"] == 0
        and math.isnan(result["top1-lexicon"])
        and math.isnan(result["top5-lexicon"])
    )


def test_only_the_first_five_count_and_truncation_is_reported() -> None:
    six = ["a", "b", "c", "d", "e", "Glioblastoma"]
    result = score_diagnosis([six, six[:5], ["GBM"] * 7], ["Glioblastoma"] * 3)
    # case 0: the hit is 6th -> not counted; case 1: no hit; case 2: hit at rank 1.
    assert result["top5-lexicon"] == pytest.approx(1 / 3)
    assert result["top1-lexicon"] == pytest.approx(1 / 3)
    assert result["n_predictions_truncated"] == 2
    evaluation = prepare_diagnosis([six], ["Glioblastoma"])
    assert evaluation.cases[0].predictions == tuple(six[:5])
    assert evaluation.cases[0].truncated


def test_plain_string_prediction_is_a_one_item_list() -> None:
    assert score_diagnosis(["GBM", "abscess"], ["Glioblastoma", "Glioma"])[
        "top1-lexicon"
    ] == pytest.approx(0.5)


def test_empty_strings_are_misses_and_never_reach_the_matcher() -> None:
    seen: list[tuple[str, str]] = []

    def recording(reference: str, candidate: str) -> bool:
        seen.append((reference, candidate))
        return True

    evaluation = prepare_diagnosis(
        [["", "  ", "glioma"], [""]], ["Glioma", "Lymphoma"], matcher=recording
    )
    assert evaluation.cases[0].verdicts == (False, False, True)
    assert evaluation.cases[0].first_hit_rank == 3
    assert evaluation.cases[1].verdicts == (False,)
    assert seen == [("Glioma", "glioma")]
    assert evaluation.result()["n_empty_predictions"] == 1


def test_a_case_result_cannot_be_changed_after_scoring() -> None:
    # The per-case tables and the aggregate read the same verdicts: neither may edit them.
    import dataclasses

    case = prepare_diagnosis([["glioma"]], ["Glioma"]).cases[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        case.verdicts = (False,)  # type: ignore[misc]
    assert case.verdicts == (True,)


def test_a_placeholder_reference_is_never_sent_to_the_matcher() -> None:
    # An LLM judge costs a call per pair: a case that is not scored must not spend one.
    seen: list[tuple[str, str]] = []

    def recording(reference: str, candidate: str) -> bool:
        seen.append((reference, candidate))
        return True

    evaluation = prepare_diagnosis(
        [["glioma"], ["meningioma", "abscess"]],
        ["Glioma", "Final diagnosis not found."],
        matcher=recording,
    )
    assert seen == [("Glioma", "glioma")]
    assert evaluation.result()["n_cases_without_reference"] == 1


def test_each_distinct_pair_is_judged_once() -> None:
    calls: list[tuple[str, str]] = []

    def recording(reference: str, candidate: str) -> bool:
        calls.append((reference, candidate))
        return reference.lower() == candidate.lower()

    prepare_diagnosis(
        [["glioma", "glioma"], ["glioma"], ["abscess"]], ["Glioma"] * 3, matcher=recording
    )
    assert sorted(calls) == [("Glioma", "abscess"), ("Glioma", "glioma")]


def test_custom_matcher_and_description() -> None:
    def same_text(reference: str, candidate: str) -> bool:
        return reference == candidate

    result = score_diagnosis([["Glioma"], ["glioma"]], ["Glioma", "Glioma"], matcher=same_text)
    assert result["top1-pairwise"] == pytest.approx(0.5)
    assert result["matcher"] == "callable test_custom_matcher_and_description.<locals>.same_text"
    assert describe_matcher(LexiconDiagnosisMatcher()) == LexiconDiagnosisMatcher().description


def test_batch_matcher_receives_all_pairs_with_labels() -> None:
    class Batch:
        description = "batch test matcher"

        def __init__(self) -> None:
            self.received: list[tuple[list[tuple[str, str]], list[str]]] = []

        def __call__(self, reference: str, candidate: str) -> bool:
            raise AssertionError("match_many must be used")

        def match_many(self, pairs, *, labels=None):  # type: ignore[no-untyped-def]
            self.received.append((list(pairs), list(labels)))
            return [reference == candidate for reference, candidate in pairs]

    batch = Batch()
    rows = [
        {"case_id": "case0001", "final_diagnosis": "A"},
        {"case_id": "case0002", "final_diagnosis": "B"},
    ]
    result = score_diagnosis([["x", "A"], ["B"]], rows, matcher=batch)
    assert result["top1-pairwise"] == pytest.approx(0.5) and result[
        "top5-pairwise"
    ] == pytest.approx(1.0)
    assert result["matcher"] == "batch test matcher"
    pairs, labels = batch.received[0]
    assert pairs == [("A", "x"), ("A", "A"), ("B", "B")]
    assert labels == [
        "example 0 (case0001), prediction 1",
        "example 0 (case0001), prediction 2",
        "example 1 (case0002), prediction 1",
    ]


def test_matcher_errors_name_the_case() -> None:
    def broken(reference: str, candidate: str) -> bool:
        raise RuntimeError("endpoint down")

    with pytest.raises(RuntimeError, match="endpoint down") as info:
        score_diagnosis([["a"], ["b"]], ["X", "Y"], matcher=broken)
    if sys.version_info >= (3, 11):  # add_note exists from Python 3.11: the note must be there
        assert info.value.__notes__ == [
            "while matching example 0, prediction 1: reference 'X', candidate 'a'"
        ]


# ---------------------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("predictions", "references", "record", "field"),
    [
        ([["a"]], [None], "example 0", "reference"),
        ([["a"], ["b"]], ["X", ""], "example 1", "reference"),
        ([["a"], ["b"]], ["X", "   "], "example 1", "reference"),
        ([["a"]], [{"case_id": "case0007"}], "example 0 (case0007)", "final_diagnosis"),
        ([["a"]], [3], "example 0", "reference"),
        ([["a", None]], ["X"], "example 0", "predictions[1]"),
        ([["a"], ["b", 7]], ["X", "Y"], "example 1", "predictions[1]"),
        ([None], ["X"], "example 0", "predictions"),
        ([{"a"}], ["X"], "example 0", "predictions"),
        ([{"diagnoses": ["a"]}], ["X"], "example 0", "predictions"),
    ],
)
def test_bad_inputs_name_the_example_and_field(
    predictions: list, references: list, record: str, field: str
) -> None:
    with pytest.raises(NovaInputError) as info:
        score_diagnosis(predictions, references)
    assert info.value.record == record
    assert info.value.field == field


def test_mismatched_lengths() -> None:
    with pytest.raises(NovaInputError, match="2 prediction lists for 1 references"):
        score_diagnosis([["a"], ["b"]], ["X"])


@pytest.mark.parametrize(
    ("predictions", "references"), [("glioma", ["X"]), ([["a"]], "X"), (None, ["X"])]
)
def test_top_level_must_be_lists(predictions: object, references: object) -> None:
    with pytest.raises(NovaInputError, match="expected a list with one entry per case") as info:
        score_diagnosis(predictions, references)  # type: ignore[arg-type]
    assert info.value.field == ("references" if isinstance(predictions, list) else "predictions")


def test_matcher_must_return_bool_and_be_callable() -> None:
    with pytest.raises(NovaInputError, match="must return a bool") as info:
        score_diagnosis([["a"]], ["X"], matcher=lambda reference, candidate: "yes")  # type: ignore[arg-type, return-value]
    assert info.value.record == "example 0, prediction 1"
    with pytest.raises(NovaInputError, match="callable"):
        score_diagnosis([["a"]], ["X"], matcher="judge")  # type: ignore[arg-type]


def test_numpy_bools_are_accepted() -> None:
    result = score_diagnosis([["a"]], ["a"], matcher=lambda r, c: np.bool_(r == c))  # type: ignore[arg-type, return-value]
    assert result["top1-pairwise"] == 1.0


# ---------------------------------------------------------------------------------------
# Resampling protocol
# ---------------------------------------------------------------------------------------


def _random_cases(seed: int, n: int) -> tuple[list[list[str]], list[str]]:
    rng = np.random.default_rng(seed)
    names = ["Glioblastoma", "GBM", "meningioma", "abscess", "lymphoma", "PML", "ADEM", "MS", ""]
    references = [
        str(
            rng.choice(
                [
                    "Glioblastoma",
                    "Meningioma",
                    "Lymphoma",
                    "Multiple sclerosis",
                    "Final diagnosis not found.",
                ]
            )
        )
        for _ in range(n)
    ]
    predictions = [
        [str(x) for x in rng.choice(names, size=int(rng.integers(0, 7)))] for _ in range(n)
    ]
    return predictions, references


def test_aggregate_over_all_items_equals_the_full_result() -> None:
    predictions, references = _random_cases(0, 60)
    evaluation = prepare_diagnosis(predictions, references)
    full = score_diagnosis(predictions, references)
    assert evaluation.aggregate(np.arange(evaluation.n_items)) == {
        "top1-lexicon": full["top1-lexicon"],
        "top5-lexicon": full["top5-lexicon"],
    }
    assert evaluation.aggregate() == {
        "top1-lexicon": full["top1-lexicon"],
        "top5-lexicon": full["top5-lexicon"],
    }


def test_resample_equals_the_score_of_the_repeated_list() -> None:
    predictions, references = _random_cases(1, 40)
    evaluation = prepare_diagnosis(predictions, references)
    rng = np.random.default_rng(2)
    indices = rng.integers(0, evaluation.n_items, size=evaluation.n_items)
    positions = evaluation.item_indices[indices]
    repeated = score_diagnosis(
        [predictions[i] for i in positions], [references[i] for i in positions]
    )
    assert evaluation.aggregate(indices) == pytest.approx(
        {"top1-lexicon": repeated["top1-lexicon"], "top5-lexicon": repeated["top5-lexicon"]}
    )


@pytest.mark.parametrize(
    "indices", [np.array([0, 5]), np.array([-1]), np.array([0.5]), np.zeros((1, 1), int)]
)
def test_aggregate_rejects_bad_indices(indices: np.ndarray) -> None:
    evaluation = prepare_diagnosis([["a"], ["b"]], ["a", "b"])
    with pytest.raises(NovaInputError, match="indices"):
        evaluation.aggregate(indices)


def test_per_case_records() -> None:
    rows = [
        {"case_id": "case0001", "final_diagnosis": "Glioblastoma"},
        {"case_id": "case0002", "final_diagnosis": "Final diagnosis not found."},
    ]
    records = prepare_diagnosis([["meningioma", "GBM"], ["x"]], rows).per_case()
    assert records[0]["case_id"] == "case0001"
    assert records[0]["verdicts"] == [False, True] and records[0]["first_hit_rank"] == 2
    assert records[1]["has_reference"] is False and records[1]["verdicts"] == [False]


@pytest.mark.parametrize(
    ("reference", "candidate"),
    [
        # "with" left out (RVCL, the earlier example, is a lexicon name since lexicon 6)
        ("Microcephaly with simplified gyral pattern", "MSGP"),
        ("Hemorrhagic shock and encephalopathy syndrome", "HSES"),  # closing word spelled
        ("Hemiconvulsion-hemiplegia-epilepsy syndrome", "HHE syndrome"),  # hyphens, tail word
        ("NORSE", "new-onset refractory status epilepticus"),  # abbreviation as the reference
    ],
)
def test_an_abbreviation_spelling_the_initials_matches(reference: str, candidate: str) -> None:
    explanation = LexiconDiagnosisMatcher().explain(reference, candidate)
    assert (explanation.match, explanation.rule) == (True, "initials")


@pytest.mark.parametrize(
    ("reference", "candidate"),
    [
        ("Hemorrhagic shock and encephalopathy syndrome", "HSE"),  # a lexicon abbreviation
        ("Hemorrhagic shock and encephalopathy syndrome", "HSSE"),  # wrong initials
        ("Spinal muscular atrophy", "Sma"),  # one capital: may be an ordinary word
        ("Acute flaccid myelitis", "AF"),  # too short to be told from chance
        ("Acute flaccid myelitis", "AFM ruled out"),  # negated
        ("Neurofibromatosis type 2", "NT"),  # a number is no initial
    ],
)
def test_initials_never_stretch_to_other_readings(reference: str, candidate: str) -> None:
    assert not LexiconDiagnosisMatcher()(reference, candidate)


# Rare diseases added to the lexicon for issue 20: a sample of synonyms, eponyms and
# abbreviations per group (neoplastic, metabolic, degenerative, inflammatory, infectious,
# vascular, congenital, head and neck, spine), each resolving to its own entry.
@pytest.mark.parametrize(
    ("alias", "name"),
    [
        ("PLNTY", "polymorphous low-grade neuroepithelial tumor of the young"),
        ("lipomatous medulloblastoma", "cerebellar liponeurocytoma"),
        ("RELA fusion-positive ependymoma", "supratentorial ependymoma ZFTA fusion-positive"),
        ("glomus tympanicum", "tympanic paraganglioma"),
        ("Batten disease", "neuronal ceroid lipofuscinosis"),
        ("glycine encephalopathy", "nonketotic hyperglycinemia"),
        ("infantile neuroaxonal dystrophy", "PLA2G6-associated neurodegeneration"),
        ("MPS type II", "Hunter syndrome"),
        ("Naito-Oyanagi disease", "dentatorubral-pallidoluysian atrophy"),
        ("Strumpell-Lorrain disease", "hereditary spastic paraplegia"),
        ("Churg-Strauss syndrome", "eosinophilic granulomatosis with polyangiitis"),
        ("Kinsbourne syndrome", "opsoclonus-myoclonus syndrome"),
        ("tropical spastic paraparesis", "HTLV-1-associated myelopathy"),
        ("Pott's disease", "tuberculous spondylitis"),
        ("Dejerine syndrome", "medial medullary syndrome"),
        ("Möbius syndrome", "Moebius syndrome"),
        ("Mondini malformation", "incomplete partition type 2"),
        ("Graves orbitopathy", "thyroid eye disease"),
        ("Forestier disease", "diffuse idiopathic skeletal hyperostosis"),
        ("Kümmell disease", "Kummell disease"),
    ],
)
def test_rare_disease_synonyms_resolve_to_their_entry(alias: str, name: str) -> None:
    entry = load_diagnosis_lexicon().lookup(alias)
    assert entry is not None and entry.name == name


@pytest.mark.parametrize(
    ("reference", "candidate"),
    [
        # eponyms that were synonyms of one group entry and so matched each other
        ("Hurler syndrome", "Hunter syndrome"),
        ("Tay-Sachs disease", "Sandhoff disease"),
        ("Walker-Warburg syndrome", "Fukuyama congenital muscular dystrophy"),
        ("Glomus jugulare", "glomus tympanicum"),
        # related rare diseases with a shared word or eponym
        ("Eosinophilic granulomatosis with polyangiitis", "granulomatosis with polyangiitis"),
        ("Pelizaeus-Merzbacher disease", "Pelizaeus-Merzbacher-like disease"),
        ("Glutaric aciduria type 1", "glutaric aciduria type 2"),
        ("Dejerine syndrome", "Dejerine-Roussy syndrome"),
        ("Incontinentia pigmenti", "incontinentia pigmenti achromians"),
        ("Cholesteatoma", "cholesterol granuloma"),
        ("Tuberculous spondylitis", "pyogenic spondylodiscitis"),
        ("Medulloblastoma, WNT-activated", "medulloblastoma, SHH-activated"),
    ],
)
def test_related_rare_diseases_stay_apart(
    matcher: LexiconDiagnosisMatcher, reference: str, candidate: str
) -> None:
    assert not matcher(reference, candidate), matcher.explain(reference, candidate)
    assert not matcher(candidate, reference), matcher.explain(candidate, reference)


@pytest.mark.parametrize(
    ("reference", "candidate"),
    [
        ("Mucopolysaccharidosis", "Sanfilippo syndrome"),
        ("Cobblestone lissencephaly", "Walker-Warburg syndrome"),
        ("Paraganglioma", "carotid body tumour"),
        ("Spinocerebellar ataxia", "SCA2"),
    ],
)
def test_a_rare_subtype_matches_its_group(
    matcher: LexiconDiagnosisMatcher, reference: str, candidate: str
) -> None:
    assert matcher.explain(reference, candidate).rule == "lexicon"


# ---------------------------------------------------------------------------------------
# Keys name the reading: the paper's top1/top5 only from the case judge (test_case_judge.py)
# ---------------------------------------------------------------------------------------


def test_the_lexicon_matcher_gives_top1_lexicon_never_the_paper_key() -> None:
    result = score_diagnosis([["GBM", "abscess"], ["abscess"]], ["Glioblastoma", "Lymphoma"])
    # case 0: GBM is glioblastoma at rank 1; case 1: no match -> 1/2 for both.
    assert (result["top1-lexicon"], result["top5-lexicon"]) == (0.5, 0.5)
    assert "top1" not in result and "top5" not in result
    assert result["match_rule"] == "matcher"


def test_a_pair_judge_or_a_function_gives_top1_pairwise() -> None:
    class PairJudge:
        """Answers as OpenAIChatJudge does: one verdict per distinct pair, in a batch."""

        description = "LLM judge m at http://127.0.0.1:9/v1 (prompt nova-judge-2)"

        def __call__(self, reference: str, candidate: str) -> bool:
            return reference.lower() == candidate.lower()

        def match_many(self, pairs, *, labels=None):
            return [self(reference, candidate) for reference, candidate in pairs]

    for matcher, rule in ((PairJudge(), "pair-judge"), (str.__eq__, "callable")):
        result = score_diagnosis([["x", "glioma"]], ["glioma"], matcher=matcher)  # type: ignore[arg-type]
        # rank 2 matches (case-insensitively for the judge, exactly for str.__eq__): Top-5 only.
        assert (result["top1-pairwise"], result["top5-pairwise"]) == (0.0, 1.0)
        assert not {"top1", "top5", "top1-lexicon", "top5-lexicon"} & set(result)
        assert result["match_rule"] == rule
