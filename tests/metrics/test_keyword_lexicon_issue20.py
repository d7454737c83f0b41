"""Keyword extractor changes of issue 20: negation scope, merged terms, new terms.

Each case failed on main 05d8827 (checked by running this file against it). The captions are
written for these tests, not taken from the gold sets.
"""

from __future__ import annotations

import pytest

from novabench.metrics.keywords import LexiconKeywordExtractor, default_keyword_extractor


@pytest.fixture(scope="module")
def extract() -> LexiconKeywordExtractor:
    return default_keyword_extractor()


def test_soft_tissue_is_no_scalp(extract: LexiconKeywordExtractor) -> None:
    keywords = extract("Enhancing soft tissue in the left parapharyngeal space.")
    assert "scalp" not in keywords.clinical
    assert {"enhancement", "left", "parapharyngeal space"} <= keywords.clinical
    assert "scalp" in extract("Subgaleal collection over the scalp.").clinical


@pytest.mark.parametrize(
    ("caption", "clinical"),
    [
        # once something is negated, "within"/"in" says where it is absent
        ("No restricted diffusion within the cyst.", {"no:restricted diffusion", "cyst"}),
        ("No enhancement in the nodule.", {"no:enhancement", "nodule"}),
        # before anything is negated the scope goes on ("no evidence of ... in")
        ("No evidence of haemorrhage in the thalamus.", {"no:haemorrhage", "thalamus"}),
        ("No lesion in the pons or cerebellum.", {"no:lesion", "pons", "cerebellum"}),
    ],
)
def test_a_place_after_a_negated_finding_is_not_negated(
    extract: LexiconKeywordExtractor, caption: str, clinical: set[str]
) -> None:
    assert extract(caption).clinical == clinical


def test_an_enhancing_nodule_is_enhancement_and_a_nodule(extract: LexiconKeywordExtractor) -> None:
    assert extract("Enhancing nodule in the vermis.").clinical == {
        "enhancement",
        "nodule",
        "vermis",
    }
    # a mural nodule stays nodular enhancement
    assert "nodular enhancement" in extract("Cyst with a mural nodule.").clinical


@pytest.mark.parametrize(
    ("caption", "expected"),
    [
        ("Mass widening the right pterygopalatine fossa.", {"pterygopalatine fossa"}),
        ("Abscess in the masticator space.", {"masticator space"}),
        ("Enlarged lacrimal glands.", {"lacrimal gland"}),
        ("Fatty thickened filum terminale.", {"filum terminale", "lipoma", "thickening"}),
        ("Sagittal T2 of the lumbar spine.", {"spine"}),
        ("Erosion of C2 and the L5 endplate.", {"vertebra"}),
        ("L4-L5 disc extrusion.", {"intervertebral disc", "herniation"}),
        ("Opacified maxillary sinus.", {"paranasal sinus"}),
        ("Fluid-fluid levels in an expansile lesion.", {"fluid fluid level"}),
        ("Radially arranged veins, the caput medusae sign.", {"caput medusae sign"}),
        ("Fried egg appearance of the lesion.", {"fried egg sign"}),
        ("Intramedullary lesion with a haemosiderin cap.", {"spinal cord", "cap sign"}),
        ("Modic type 1 endplate change.", {"modic changes"}),
        ("Hair-on-end appearance of the calvarium.", {"hair on end appearance", "skull"}),
        ("Reduced flow in the left thalamus on ASL.", {"hypoperfusion"}),
        ("Lesions typical of Susac syndrome.", {"susac syndrome"}),
    ],
)
def test_new_terms(extract: LexiconKeywordExtractor, caption: str, expected: set[str]) -> None:
    assert expected <= extract(caption).clinical


@pytest.mark.parametrize(
    ("caption", "clinical", "modality"),
    [
        ("Heterogeneous tumour in the sella.", {"heterogeneous", "mass", "sella turcica"}, set()),
        ("MRS shows 2-hydroxyglutarate.", {"2 hydroxyglutarate peak"}, {"spectroscopy"}),
        ("Sagittal 3D CISS.", set(), {"sagittal", "t2w"}),
    ],
)
def test_merged_and_renamed_terms(
    extract: LexiconKeywordExtractor, caption: str, clinical: set[str], modality: set[str]
) -> None:
    keywords = extract(caption)
    assert keywords.clinical == clinical
    assert keywords.modality == modality


@pytest.mark.parametrize(
    ("caption", "expected"),
    [
        ("Symmetric white matter changes typical of Krabbe disease.", {"krabbe disease"}),
        ("Frontal predominance in keeping with Alexander disease.", {"alexander disease"}),
        ("Ring lesions from cerebral nocardiosis.", {"nocardiosis"}),
    ],
)
def test_a_disease_named_in_a_caption_is_a_finding(
    extract: LexiconKeywordExtractor, caption: str, expected: set[str]
) -> None:
    keywords = extract(caption)
    assert expected <= keywords.clinical
    assert keywords.abnormal is True


def test_a_disease_the_lexicon_splits_stays_split(extract: LexiconKeywordExtractor) -> None:
    # the name is read as its parts, as a reader lists them
    assert extract("Agenesis of the corpus callosum.").clinical == {"agenesis", "corpus callosum"}


@pytest.mark.parametrize(
    ("caption", "expected"),
    [
        # a sign is also written as an appearance or a pattern, where its first words
        # alone name something else ("cord" is the spinal cord)
        ("Cord appearance of a thrombosed cortical vein.", "cord sign"),
        ("Spot pattern within the haematoma.", "spot sign"),
        # named signs new to the lexicon
        ("Loss of the swallow tail sign on SWI.", "swallow tail sign"),
        ("Dual rim sign of an abscess.", "dual rim sign"),
        ("Split fat sign around the mass.", "split fat sign"),
        (
            "Ice cream cone appearance of the tumour in the internal auditory canal.",
            "ice cream cone sign",
        ),
    ],
)
def test_named_signs_and_their_variants(
    extract: LexiconKeywordExtractor, caption: str, expected: str
) -> None:
    assert expected in extract(caption).clinical


@pytest.mark.parametrize(
    ("caption", "expected"),
    [
        ("Erosion of the scutum and the ossicles.", {"middle ear"}),
        ("Mass in the jugular bulb.", {"jugular foramen"}),
        ("Disc extrusion narrowing the left neural foramen.", {"neural foramen"}),
        ("T2 hyperintensity of the dorsal columns.", {"spinal cord"}),
        ("Fused thalami.", {"holoprosencephaly", "thalamus"}),
        ("Fused cerebellar hemispheres.", {"rhombencephalosynapsis", "cerebellum"}),
    ],
)
def test_small_structures_name_their_region(
    extract: LexiconKeywordExtractor, caption: str, expected: set[str]
) -> None:
    assert expected <= extract(caption).clinical
