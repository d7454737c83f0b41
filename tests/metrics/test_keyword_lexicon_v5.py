"""Keyword lexicon 5 (issue 20): general reading rules and term families.

Each case failed on main cc36a45 (checked by running this file against it), except the
guards marked as such. The captions are written for these tests, not taken from the gold sets.
"""

from __future__ import annotations

import pytest

from novabench.metrics.keywords import LexiconKeywordExtractor, default_keyword_extractor
from novabench.report.leaderboard import _setting_differences


@pytest.fixture(scope="module")
def extract() -> LexiconKeywordExtractor:
    return default_keyword_extractor()


@pytest.mark.parametrize(
    ("caption", "expected"),
    [
        ("Enlarged lateral and fourth ventricles.", {"lateral ventricle", "fourth ventricle"}),
        (
            "No leptomeningeal or dural enhancement.",
            {"no:leptomeningeal enhancement", "no:dural enhancement"},
        ),
        ("Dural thickening and enhancement along the falx.", {"thickening", "dural enhancement"}),
        ("Symmetric signal change of the grey and white matter.", {"gray matter", "white matter"}),
    ],
)
def test_coordinated_modifiers_share_their_head(
    extract: LexiconKeywordExtractor, caption: str, expected: set[str]
) -> None:
    assert expected <= extract(caption).clinical


def test_of_after_a_negated_finding_names_what_it_is_absent_from(
    extract: LexiconKeywordExtractor,
) -> None:
    assert extract("No enhancement of the mass.").clinical == {"no:enhancement", "mass"}


@pytest.mark.parametrize(
    ("caption", "expected"),
    [
        # A new item of the ruled-out list keeps the negation through its own "of".
        ("No oedema or areas of enhancement.", {"no:oedema", "no:enhancement"}),
        # "foci of" only counts what follows, which is what is ruled out.
        ("No foci of restricted diffusion.", {"no:restricted diffusion"}),
        # Guard (passed before): a term after the coordinator, then "of", names the place.
        (
            "No haemorrhage or restricted diffusion of the mass.",
            {"no:haemorrhage", "no:restricted diffusion", "mass"},
        ),
    ],
)
def test_of_in_a_ruled_out_list_item_keeps_the_negation(
    extract: LexiconKeywordExtractor, caption: str, expected: set[str]
) -> None:
    clinical = extract(caption).clinical
    assert expected <= clinical
    assert not {term for term in expected if term.startswith("no:")} & {
        f"no:{term}" for term in clinical if not term.startswith("no:")
    }, clinical


def test_evidence_against_a_finding_negates_it(extract: LexiconKeywordExtractor) -> None:
    keywords = extract("Smooth margins on SWI, arguing against haemorrhage.")
    assert "no:haemorrhage" in keywords.clinical
    assert "haemorrhage" not in keywords.clinical


@pytest.mark.parametrize(
    ("caption", "clinical"),
    [
        ("Haemorrhage is unlikely.", {"no:haemorrhage"}),
        ("Unlikely to represent an abscess.", {"no:abscess"}),
        ("Lymphoma is less likely.", {"no:lymphoma"}),
    ],
)
def test_a_finding_called_unlikely_is_negated(
    extract: LexiconKeywordExtractor, caption: str, clinical: set[str]
) -> None:
    assert extract(caption).clinical == clinical


def test_without_a_structure_is_agenesis(extract: LexiconKeywordExtractor) -> None:
    keywords = extract("Fused frontal lobes without a septum pellucidum.")
    assert {"agenesis", "septum pellucidum"} <= keywords.clinical
    # guard: "without" before a finding still negates it
    assert "no:mass effect" in extract("Cyst without a mass effect.").clinical


def test_both_before_a_plural_noun_is_bilateral(extract: LexiconKeywordExtractor) -> None:
    assert "bilateral" in extract("Subdural collections over both convexities.").clinical


@pytest.mark.parametrize(
    ("caption", "clinical"),
    [
        # a direction after a finding relates two findings of this image
        ("Oedema below the mass.", {"oedema", "mass"}),
        ("Small cyst superior to the enhancing lesion.", {"cyst", "enhancement", "lesion"}),
        # guards: after the image itself, or remote from it, the finding is a landmark
        ("Axial image below the mass.", set()),
        ("Oedema remote from the mass.", {"oedema"}),
    ],
)
def test_a_direction_after_a_finding_keeps_the_other_finding(
    extract: LexiconKeywordExtractor, caption: str, clinical: set[str]
) -> None:
    assert extract(caption).clinical == clinical


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("No focal abnormality.", "Without a focal signal abnormality."),
        ("The pons shows no focal abnormality.", "The pons is without a focal abnormality."),
        ("Brain MRI: no abnormality.", "Brain MRI without a signal abnormality."),
    ],
)
def test_every_wording_of_no_abnormality_reads_alike(
    extract: LexiconKeywordExtractor, first: str, second: str
) -> None:
    assert extract(first) == extract(second)
    assert extract(second).abnormal is False
    assert not any(term.startswith("no:") for term in extract(second).clinical)


@pytest.mark.parametrize(
    ("caption", "clinical", "abnormal"),
    [
        # a normal statement opened by "no" rules out what the list goes on to name
        ("No abnormal signal or enhancement.", {"no:enhancement"}, False),
        ("No acute intracranial findings.", set(), False),
        ("Nothing abnormal detected.", set(), False),
        # a ruled-out neutral qualifier goes with the negated term it qualifies
        ("No focal lesion.", {"no:lesion"}, None),
        ("No acute infarct in the pons.", {"no:infarct", "pons"}, None),
    ],
)
def test_normal_statements_and_ruled_out_qualifiers(
    extract: LexiconKeywordExtractor, caption: str, clinical: set[str], abnormal: bool | None
) -> None:
    keywords = extract(caption)
    assert keywords.clinical == clinical
    assert keywords.abnormal is abnormal


def test_a_present_focal_abnormality_keeps_its_qualifier(extract: LexiconKeywordExtractor) -> None:
    # guard: only a ruled-out abnormality takes its qualifiers with it
    keywords = extract("Focal signal abnormality in the pons.")
    assert keywords.clinical == {"focal", "abnormality", "pons"}
    assert keywords.abnormal is True


def test_symmetry_of_size_and_signal_states_a_normal_study(
    extract: LexiconKeywordExtractor,
) -> None:
    keywords = extract("The caudate nuclei are symmetric in size and signal.")
    assert keywords.abnormal is False
    assert {"symmetric", "caudate nucleus"} <= keywords.clinical


@pytest.mark.parametrize(
    ("caption", "negated"),
    [
        ("Absent flow void in the right vertebral artery.", "no:flow void"),
        ("Absent posterior pituitary bright spot.", "no:posterior pituitary bright spot"),
    ],
)
def test_a_missing_normal_structure_is_abnormal(
    extract: LexiconKeywordExtractor, caption: str, negated: str
) -> None:
    keywords = extract(caption)
    assert negated in keywords.clinical
    assert keywords.abnormal is True


@pytest.mark.parametrize(
    ("caption", "present", "absent"),
    [
        ("Axial fractional anisotropy map.", {"m:dti", "m:axial"}, {"m:dwi"}),
        ("Phase-contrast MR angiography.", {"m:mra"}, {"m:contrast"}),
        (
            "Oblique coronal image along the long axis of the brainstem.",
            {"brainstem"},
            {"vertebra"},
        ),
        ("Intraparenchymal haematoma in the right thalamus.", {"haemorrhage", "thalamus"}, set()),
        ("Cystic lesion in the left cerebellar hemisphere.", {"cystic", "lesion"}, {"cyst"}),
        ("Prominent cortical veins over the left hemisphere.", {"left"}, {"enlargement"}),
        ("Curvilinear hypointensity along the sulci.", {"hypointensity"}, {"linear"}),
        ("Markedly depressed creatine peak on MRS.", {"reduced creatine"}, set()),
        ("Phenylalanine peak at 7.37 ppm.", {"phenylalanine peak"}, set()),
        ("The rCBV was not increased in the mass.", {"no:hyperperfusion", "mass"}, set()),
        ("Heterogeneous enhancement of the mass.", {"heterogeneous", "enhancement"}, set()),
        ("Signal dropout on SWI.", {"blooming", "m:swi"}, set()),
        ("Non-contrast axial T1.", {"m:axial", "m:t1w"}, {"m:contrast"}),
        ("Non-enhanced T1 of the sella.", {"m:t1w"}, {"no:enhancement", "m:contrast"}),
        ("Gd-enhanced T1 of the sella.", {"m:contrast", "m:t1w"}, {"enhancement"}),
        ("Axial VIBE and SWAN images.", {"m:axial", "m:t1w", "m:swi"}, set()),
        ("Thrombus in the SSS.", {"thrombosis", "dural venous sinus"}, set()),
        # abbreviations of anatomy and diseases
        (
            "T2 hyperintensity of the PLIC and CST.",
            {"internal capsule", "corticospinal tract"},
            set(),
        ),
        ("Enhancement of CN III.", {"cranial nerve", "enhancement"}, set()),
        ("Multifocal PML lesions.", {"progressive multifocal leukoencephalopathy"}, set()),
        ("Findings of CVT.", {"cerebral venous thrombosis"}, set()),
        ("Lollipop sign at the vertex.", {"lollipop sign"}, set()),
        ("Crossed cerebellar diaschisis on perfusion.", {"crossed cerebellar diaschisis"}, set()),
        ("Split cord malformation at the lumbar level.", {"diastematomyelia"}, set()),
    ],
)
def test_term_families_of_lexicon_5(
    extract: LexiconKeywordExtractor, caption: str, present: set[str], absent: set[str]
) -> None:
    keywords = extract(caption)
    found = keywords.clinical | {f"m:{term}" for term in keywords.modality}
    assert present <= found
    assert not absent & found


@pytest.mark.parametrize(
    ("caption", "clinical", "abnormal"),
    [
        ("The wasp-waist sign at the margin of the mass.", {"wasp waist sign", "mass"}, True),
        ("No keyhole sign.", {"no:keyhole sign"}, None),
        ("No sign of haemorrhage.", {"no:haemorrhage"}, None),  # guard: no sign named
    ],
)
def test_a_sign_the_lexicon_does_not_know_is_a_finding(
    extract: LexiconKeywordExtractor, caption: str, clinical: set[str], abnormal: bool | None
) -> None:
    keywords = extract(caption)
    assert keywords.clinical == clinical
    assert keywords.abnormal is abnormal


@pytest.mark.parametrize(
    ("caption", "term"),
    [
        ("Stenoses of both ICAs.", "stenosis"),
        ("Hypoplastic cochleae.", "inner ear"),
        ("Small infundibula.", "pituitary stalk"),
        ("Multiple cavernomata.", "cavernoma"),
    ],
)
def test_classical_plurals(extract: LexiconKeywordExtractor, caption: str, term: str) -> None:
    assert term in extract(caption).clinical


def test_the_septa_of_a_lesion_are_no_septum_pellucidum(extract: LexiconKeywordExtractor) -> None:
    # guard: the classical plural of the synonym "septum" must not name the septum pellucidum
    assert extract("Septa within the cyst.").clinical == {"cyst"}


def test_reports_record_the_keyword_lexicon_version(tmp_path) -> None:
    assert LexiconKeywordExtractor().description == "lexicon (offline, nova-keyword-lexicon-5)"
    custom = tmp_path / "lexicon.json"
    custom.write_text('{"families": {"finding": {"cyst": ["cyst"]}}}', encoding="utf-8")
    assert LexiconKeywordExtractor(custom).description.startswith(
        "lexicon (offline, custom keyword lexicon sha256:"
    )
    # A leaderboard does not compare the keyword metrics of reports of two versions.
    reports = [
        {"tasks": {"captioning": {"metrics": {"ClinicalF1": 0.3, "keyword_extractor": value}}}}
        for value in ("lexicon (offline)", LexiconKeywordExtractor().description)
    ]
    differences = _setting_differences(reports, ["old.json", "new.json"])
    assert [difference["setting"] for difference in differences] == ["keyword_extractor"]
    assert "ClinicalF1 not comparable" in differences[0]["sentence"]
