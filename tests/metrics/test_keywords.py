"""The lexicon keyword extractor: synonyms, spelling, plurals, negation, normality, lexicon integrity."""

from __future__ import annotations

import json

import pytest

from novabench.metrics.keywords import (
    CaptionKeywords,
    KeywordExtractor,
    LexiconKeywordExtractor,
    default_keyword_extractor,
    load_lexicon,
)


@pytest.fixture(scope="module")
def extract() -> LexiconKeywordExtractor:
    return default_keyword_extractor()


def test_lexicon_is_data_with_150_plus_terms_and_loads_without_conflicts():
    lexicon = load_lexicon()
    n_terms = sum(len(terms) for terms in lexicon["families"].values())
    assert n_terms >= 150
    assert (
        sum(len(synonyms) for terms in lexicon["families"].values() for synonyms in terms.values())
        > 500
    )
    LexiconKeywordExtractor(lexicon)  # raises on a phrase with two meanings


def test_conflicting_lexicon_is_refused():
    lexicon = load_lexicon()
    lexicon["families"]["finding"]["cyst"].append("lesion")  # "lesion" already means lesion
    with pytest.raises(ValueError, match="two meanings"):
        LexiconKeywordExtractor(lexicon)


def test_custom_lexicon_from_a_file(tmp_path):
    path = tmp_path / "tiny.json"
    path.write_text(
        json.dumps({"families": {"finding": {"blob": ["smudge"]}}, "negation_triggers": ["no"]})
    )
    keywords = LexiconKeywordExtractor(path)("A smudge, no blob.")
    assert keywords == CaptionKeywords(frozenset(), frozenset({"blob", "no:blob"}), True)


def test_extractor_keeps_the_protocol_contract(extract):
    # What score_captioning relies on from any KeywordExtractor: a caption in, a
    # CaptionKeywords of frozensets out (hashable, order-free), None when nothing is stated.
    as_protocol: KeywordExtractor = extract
    keywords = as_protocol("Axial FLAIR: hyperintense lesion in the left thalamus.")
    assert type(keywords) is CaptionKeywords
    assert type(keywords.modality) is frozenset and type(keywords.clinical) is frozenset
    clinical = frozenset({"hyperintensity", "lesion", "left", "thalamus"})
    assert keywords == CaptionKeywords(frozenset({"axial", "flair"}), clinical, True)
    assert as_protocol("") == CaptionKeywords(frozenset(), frozenset(), None)


@pytest.mark.parametrize(
    ("caption", "modality"),
    [
        ("T1-weighted", {"t1w"}),
        ("T1 weighted image", {"t1w"}),
        ("T1WI", {"t1w"}),
        ("t1", {"t1w"}),
        ("T2w", {"t2w"}),
        ("T2-FLAIR", {"flair"}),
        ("fluid-attenuated inversion recovery", {"flair"}),
        ("Diffusion-weighted imaging", {"dwi"}),
        ("T2*-weighted gradient echo", {"gre"}),
        ("T1+C", {"t1w", "contrast"}),
        ("post-gadolinium T1", {"contrast", "t1w"}),
        ("Axial, coronal and sagittal", {"axial", "coronal", "sagittal"}),
        ("susceptibility-weighted", {"swi"}),
        ("weighted", set()),
    ],
)
def test_modality_synonyms(extract, caption, modality):
    assert extract(caption).modality == modality


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("oedema", "edema"),
        ("haemorrhage", "hemorrhage"),
        ("haematoma", "hematoma"),
        ("ischaemic", "ischemic"),
        ("tumour", "tumor"),
        ("grey matter", "gray matter"),
        ("leucoencephalopathy", "leukoencephalopathy"),
        ("lesion", "lesions"),
        ("mass", "masses"),
        ("metastasis", "metastases"),
        ("thalamus", "thalami"),
        ("cyst", "CYSTS"),
        ("Hæmorrhage", "haemorrhage"),  # ligature spelt out
        ("Œdema", "oedema"),
        ("Lésion", "lesion"),  # accents removed
        ("hyperintense", "hyperintensities"),
        ("high signal", "increased signal intensity"),
        ("ring-enhancing", "rim enhancement"),
        ("restricted diffusion", "diffusion restriction"),
    ],
)
def test_synonyms_spellings_and_plurals_map_to_one_canonical_term(extract, first, second):
    assert extract(first).clinical == extract(second).clinical != frozenset()


def test_canonical_terms_use_british_spelling(extract):
    assert extract("hemorrhage and edema").clinical == {"haemorrhage", "oedema"}


def test_sequence_inside_a_characteristic_counts_as_modality(extract):
    keywords = extract("T2 hyperintensity")
    assert keywords.modality == {"t2w"} and keywords.clinical == {"hyperintensity"}


def test_compound_location_gives_both_lobes(extract):
    assert extract("right fronto-parietal mass").clinical == {
        "right",
        "frontal lobe",
        "parietal lobe",
        "mass",
    }


@pytest.mark.parametrize(
    ("caption", "clinical"),
    [
        (
            "No haemorrhage, oedema or mass effect.",
            {"no:haemorrhage", "no:oedema", "no:mass effect"},
        ),
        ("Lesion without enhancement.", {"lesion", "no:enhancement"}),
        ("Absence of restricted diffusion", {"no:restricted diffusion"}),
        ("Negative for haemorrhage", {"no:haemorrhage"}),
        (
            "No midline shift and the ventricles are enlarged.",
            {"no:midline shift", "ventricular system", "enlargement"},
        ),
        ("No haemorrhage. Large cyst.", {"no:haemorrhage", "cyst"}),
        ("No haemorrhage but a cyst", {"no:haemorrhage", "cyst"}),
        ("No haemorrhage; cyst", {"no:haemorrhage", "cyst"}),
        ("Non-enhancing mass", {"no:enhancement", "mass"}),
        ("Oedema is absent", {"no:oedema"}),
        ("Haemorrhage is not seen, cyst in the pons", {"no:haemorrhage", "cyst", "pons"}),
        ("No change in the size of the tumour", {"mass"}),
        ("no lesion in the left frontal lobe", {"no:lesion", "left", "frontal lobe"}),
    ],
)
def test_negation_scope(extract, caption, clinical):
    assert extract(caption).clinical == clinical


@pytest.mark.parametrize(
    ("caption", "abnormal"),
    [
        ("Large ring-enhancing mass in the left temporal lobe.", True),
        ("T2 hyperintensity in the pons", True),  # a characteristic that implies abnormality
        ("Normal MRI.", False),
        ("Unremarkable study, no haemorrhage.", False),
        ("No abnormality detected.", False),
        ("Within normal limits", False),
        ("Normal ventricles; cyst in the pineal gland.", True),  # a finding beats a normal phrase
        ("No haemorrhage.", None),  # rules one thing out, states nothing normal
        ("Axial FLAIR image of the brain.", None),
        ("Homogeneous, well-defined, symmetric", None),  # neutral characteristics only
        ("", None),
    ],
)
def test_abnormal_label(extract, caption, abnormal):
    assert extract(caption).abnormal is abnormal


def test_explain_shows_the_matches(extract):
    matches, states_normal = extract.explain("No oedema; enhancing lesion.")
    assert [(m.family, m.term, m.negated) for m in matches] == [
        ("finding", "oedema", True),
        ("characteristic", "enhancement", False),
        ("finding", "lesion", False),
    ]
    assert states_normal is False


def test_extraction_is_deterministic_and_shared(extract):
    caption = (
        "Sagittal T1-weighted post-contrast image: ring-enhancing lesion with vasogenic oedema."
    )
    assert LexiconKeywordExtractor()(caption) == extract(caption)
    assert default_keyword_extractor() is extract


# --------------------------------------------------------------------------- #
# Lexicon v2: named signs, spectroscopy/perfusion, small anatomy, developmental, qualifiers
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize(
    ("variants", "sign"),
    [
        (["hot cross bun sign", "hot-cross-bun", "pontine cross sign"], "hot cross bun sign"),
        (["eye of the tiger", "eye-of-the-tiger sign"], "eye of the tiger sign"),
        (
            ["face of the giant panda", "giant panda sign", "double panda sign"],
            "face of the giant panda sign",
        ),
        (["Dawson's fingers", "Dawson fingers"], "dawson fingers"),
        (["dural tail", "dural tail sign"], "dural tail sign"),
        (["string of pearls"], "string of pearls sign"),
        (["ivy sign"], "ivy sign"),
        (["molar tooth sign", "molar tooth appearance"], "molar tooth sign"),
        (["target sign", "eccentric target sign", "target appearance"], "target sign"),
        (["open ring", "incomplete ring"], "open ring sign"),
        (["swirl sign"], "swirl sign"),
        (["empty delta sign", "empty triangle sign"], "empty delta sign"),
        (["hyperdense MCA sign", "dense middle cerebral artery sign"], "dense mca sign"),
        (["pulvinar sign", "hockey stick sign"], "pulvinar sign"),
    ],
)
def test_named_signs_are_one_finding_each(extract, variants, sign):
    for variant in variants:
        keywords = extract(variant)
        assert keywords.clinical == {sign}, variant
        assert keywords.abnormal is True


def test_signs_were_moved_out_of_their_broader_characteristics(extract):
    # Open-ring enhancement is the sign and a ring enhancement; a dural tail is no longer plain
    # dural enhancement.
    assert extract("open-ring enhancement").clinical == {"open ring sign", "ring enhancement"}
    assert extract("dural tail").clinical == {"dural tail sign"}
    assert extract("dural enhancement").clinical == {"dural enhancement"}


@pytest.mark.parametrize(
    ("caption", "clinical"),
    [
        ("elevated choline peak", {"elevated choline"}),
        ("choline peak with reduced NAA", {"elevated choline", "reduced naa"}),
        ("increased Cho/NAA ratio", {"elevated choline", "reduced naa"}),
        ("NAA reduction", {"reduced naa"}),
        ("inverted lactate doublet", {"lactate peak"}),
        ("lipid-lactate peak", {"lipid peak", "lactate peak"}),
        ("raised myo-inositol", {"elevated myo inositol"}),
        ("raised rCBV", {"hyperperfusion"}),
        ("low rCBV", {"hypoperfusion"}),
        ("hypoperfusion", {"hypoperfusion"}),
        ("prolonged Tmax", {"hypoperfusion"}),
    ],
)
def test_spectroscopy_and_perfusion_findings(extract, caption, clinical):
    keywords = extract(caption)
    assert keywords.clinical == clinical and keywords.abnormal is True


def test_perfusion_maps_are_still_a_sequence(extract):
    assert extract("rCBV map").modality == {"perfusion"}
    assert extract("MR spectroscopy").modality == {"spectroscopy"}


@pytest.mark.parametrize(
    ("caption", "anatomy"),
    [
        ("mammillary bodies", "mammillary bodies"),
        ("fornix", "fornix"),
        ("tectal plate", "tectum"),
        ("periaqueductal grey matter", "periaqueductal gray"),
        ("dentate nuclei", "dentate nucleus"),
        ("claustrum", "claustrum"),
        ("substantia nigra", "substantia nigra"),
        ("inferior olive", "inferior olivary nucleus"),
        ("Meckel's cave", "meckel cave"),
        ("cerebral peduncles", "cerebral peduncle"),
    ],
)
def test_small_anatomy(extract, caption, anatomy):
    assert extract(caption).clinical == {anatomy}


def test_periventricular_is_not_swallowed_by_white_matter(extract):
    assert extract("periventricular white matter").clinical == {"periventricular", "white matter"}
    assert extract("subcortical white matter").clinical == {"subcortical", "white matter"}
    assert extract("deep white matter").clinical == {"white matter"}


@pytest.mark.parametrize(
    ("caption", "finding"),
    [
        ("grey matter heterotopia", "heterotopia"),
        ("band heterotopia", "heterotopia"),
        ("agenesis", "agenesis"),
        ("hypoplastic", "hypoplasia"),
        ("open-lip schizencephaly", "schizencephaly"),
        ("polymicrogyria", "polymicrogyria"),
        ("pachygyria", "lissencephaly"),
        ("focal cortical dysplasia", "cortical dysplasia"),
        ("Chiari I malformation", "chiari malformation"),
        ("Dandy-Walker malformation", "dandy walker malformation"),
    ],
)
def test_developmental_findings_are_their_own_terms(extract, caption, finding):
    assert extract(caption).clinical == {finding}


def test_developmental_findings_no_longer_match_each_other(extract):
    # All used to fold into "malformation": lissencephaly scored perfect against polymicrogyria.
    assert extract("polymicrogyria").clinical != extract("lissencephaly").clinical
    assert extract("agenesis of the corpus callosum").clinical == {"agenesis", "corpus callosum"}
    assert extract("callosal agenesis").clinical == {"agenesis", "corpus callosum"}


@pytest.mark.parametrize(
    ("caption", "clinical", "abnormal"),
    [
        ("No abnormal enhancement.", {"no:enhancement"}, None),  # negated finding, not normal
        (
            "No abnormal enhancement or restricted diffusion.",
            {"no:enhancement", "no:restricted diffusion"},
            None,
        ),
        ("Lesion with no abnormal enhancement.", {"lesion", "no:enhancement"}, True),
        ("Abnormal enhancement of the dura.", {"enhancement", "dura mater"}, True),
        ("Without restricted diffusion.", {"no:restricted diffusion"}, None),
        ("The mass does not enhance.", {"mass", "no:enhancement"}, True),
        ("The lesion does not restrict diffusion.", {"lesion", "no:restricted diffusion"}, True),
        ("Abnormal signal in the pons.", {"abnormality", "pons"}, True),  # alone: still a finding
        ("No abnormality.", set(), False),
    ],
)
def test_abnormal_qualifies_and_negated_findings_are_not_a_normal_study(
    extract, caption, clinical, abnormal
):
    keywords = extract(caption)
    assert keywords.clinical == clinical
    assert keywords.abnormal is abnormal


@pytest.mark.parametrize(
    ("caption", "clinical"),
    [
        # "both" before a structure states laterality; elsewhere it is a plain word
        (
            "Restricted diffusion in both caudate nuclei.",
            {"restricted diffusion", "bilateral", "caudate nucleus"},
        ),
        ("Lesion seen on both T1 and T2.", {"lesion"}),
        # "absent" before a structure is a missing structure, before a finding a negation
        (
            "Absent septum pellucidum and hypoplastic optic nerves.",
            {"agenesis", "septum pellucidum", "hypoplasia", "optic nerve"},
        ),
        ("Absent enhancement and oedema.", {"no:enhancement", "no:oedema"}),
    ],
)
def test_both_and_absent_before_a_structure(extract, caption, clinical):
    assert extract(caption).clinical == clinical


@pytest.mark.parametrize(
    ("caption", "clinical", "abnormal"),
    [
        ("Relative cerebral blood volume is markedly elevated.", {"hyperperfusion"}, True),
        (
            "rCBF was reduced in the right frontal lobe.",
            {"hypoperfusion", "right", "frontal lobe"},
            True,
        ),
        ("Signal change in the left pulvinar.", {"abnormality", "left", "thalamus"}, True),
        (
            "Lemon-shaped skull and banana-shaped cerebellum.",
            {"lemon sign", "skull", "banana sign", "cerebellum"},
            True,
        ),
    ],
)
def test_perfusion_stated_after_its_measure_and_signal_change(extract, caption, clinical, abnormal):
    keywords = extract(caption)
    assert (keywords.clinical, keywords.abnormal) == (clinical, abnormal)


@pytest.mark.parametrize(
    ("caption", "clinical"),
    [
        # spinal and head-and-neck anatomy added for issue 20; "nerve roots" is no cranial nerve
        (
            "Enhancing thickened nerve roots of the cauda equina.",
            {"enhancement", "thickening", "nerve root", "cauda equina"},
        ),
        ("Absent olfactory bulbs.", {"agenesis", "olfactory bulb"}),
        (
            "Dorsal indentation of the thoracic cord, the scalpel sign.",
            {"spinal cord", "scalpel sign"},
        ),
        ("Corduroy appearance of a vertebral body.", {"corduroy sign", "vertebra"}),
        ("Mass of the right parotid gland.", {"mass", "right", "parotid gland"}),
    ],
)
def test_spinal_and_head_and_neck_anatomy(extract, caption, clinical):
    assert extract(caption).clinical == clinical


@pytest.mark.parametrize(
    ("caption", "clinical", "abnormal"),
    [
        # A slice cut away from the lesion names it as a landmark only.
        ("Coronal T2-weighted slice at a level above the lesion.", set(), None),
        ("Axial DWI image below the known pontine lesion.", {"pons"}, None),
        (
            "Sagittal T1 image of the posterior fossa, remote from the tumour.",
            {"infratentorial"},
            None,
        ),
        # The landmark's own qualifiers go with it; the place words are still anatomy.
        (
            "Axial FLAIR section superior to the right frontal enhancing mass.",
            {"right", "frontal lobe"},
            None,
        ),
        # A finding of this image stays one even beside a landmark.
        ("Vasogenic oedema distant from the haematoma.", {"oedema"}, True),
        ("Normal cortex contralateral to the mass.", {"cortex"}, False),
        # Other relations keep the finding: the lesion is in this image.
        ("Perilesional oedema surrounding the lesion.", {"oedema", "lesion"}, True),
        ("Enhancing mass adjacent to the falx.", {"enhancement", "mass", "falx"}, True),
        (
            "Hyperintense lesion above the lateral ventricle.",
            {"hyperintensity", "lesion", "lateral ventricle"},
            True,
        ),
    ],
)
def test_a_finding_named_as_a_location_reference_is_not_a_finding_of_the_image(
    extract, caption, clinical, abnormal
):
    keywords = extract(caption)
    assert keywords.clinical == clinical
    assert keywords.abnormal is abnormal


@pytest.mark.parametrize(
    "caption",
    [
        "Axial T2 image through the vertex shows no signal abnormality.",
        "Brain MRI without a focal signal abnormality.",
        "Coronal FLAIR: no abnormality is seen in either hippocampus.",
        "Signal abnormality is not identified.",
        "The pons is without abnormal signal change.",
        # The sample's normal slices: the landmark lesion used to make them abnormal.
        "Axial T1-weighted image at a level below the lesion shows no focal abnormality.",
    ],
)
def test_ruling_out_any_abnormality_states_a_normal_study(extract, caption):
    assert extract(caption).abnormal is False


@pytest.mark.parametrize(
    ("caption", "abnormal"),
    [
        ("No signal abnormality; ring-enhancing lesion in the left parietal lobe.", True),
        ("No abnormal enhancement.", None),  # one finding ruled out, not every one
        ("No restricted diffusion within the lesion.", True),
    ],
)
def test_a_present_finding_or_one_ruled_out_finding_is_not_a_normal_study(
    extract, caption, abnormal
):
    assert extract(caption).abnormal is abnormal


def test_sample_normal_slice_references_are_labelled_normal(extract):
    from novabench.data.sample import SEQUENCES, _normal_caption

    for sequence in SEQUENCES:
        for relation in ("above", "below"):
            caption = _normal_caption(sequence, relation)
            assert extract(caption).abnormal is False, caption
