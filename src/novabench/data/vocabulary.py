"""Vocabulary of the synthetic sample: rare neurological pathologies, regions, sequences.

Each pathology says where its lesions typically sit, what they look like on each
sequence, a few clinical-history phrases and typical differential diagnoses, so the
sample's captions, histories and diagnoses are coherent with the lesion actually drawn.
The text is our own summary of textbook descriptions, written for demonstration data only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["PATHOLOGIES", "REGIONS", "SEQUENCES", "MriSequence", "Pathology", "Region"]


@dataclass(frozen=True)
class Region:
    """An anatomical site: caption wording and its centre in MNI space (mm, right hemisphere).

    Example:
        >>> REGIONS["thalamus"].plural
        'thalami'
    """

    name: str
    plural: str
    mni_right: tuple[float, float, float]
    midline: bool = False


REGIONS: dict[str, Region] = {
    region.name: region
    for region in (
        Region("frontal lobe", "frontal lobes", (30, 28, 28)),
        Region("parietal lobe", "parietal lobes", (34, -50, 40)),
        Region("temporal lobe", "temporal lobes", (44, -16, -14)),
        Region("medial temporal lobe", "medial temporal lobes", (28, -20, -16)),
        Region("occipital lobe", "occipital lobes", (22, -80, 8)),
        Region("periventricular white matter", "periventricular white matter", (24, -12, 24)),
        Region("centrum semiovale", "centrum semiovale", (26, -20, 36)),
        Region("basal ganglia", "basal ganglia", (22, 4, 2)),
        Region("thalamus", "thalami", (12, -18, 6)),
        Region("cerebellar hemisphere", "cerebellar hemispheres", (24, -62, -34)),
        Region("dentate nucleus", "dentate nuclei", (14, -56, -32)),
        Region("pons", "pons", (0, -28, -30), midline=True),
        Region("medulla oblongata", "medulla oblongata", (0, -40, -48), midline=True),
        Region(
            "splenium of the corpus callosum",
            "splenium of the corpus callosum",
            (0, -36, 14),
            midline=True,
        ),
    )
}


@dataclass(frozen=True)
class MriSequence:
    """An MRI sequence as captions name it, and the contrast the sample renders for it.

    Example:
        >>> SEQUENCES["flair"].wording
        'FLAIR'
    """

    key: str
    wording: str
    contrast: str  # "t1", "t1c", "t2", "flair" or "dwi": how the template is transformed


SEQUENCES: dict[str, MriSequence] = {
    s.key: s
    for s in (
        MriSequence("t1", "T1-weighted", "t1"),
        MriSequence("t1c", "T1-weighted post-contrast", "t1c"),
        MriSequence("t2", "T2-weighted", "t2"),
        MriSequence("flair", "FLAIR", "flair"),
        MriSequence("dwi", "diffusion-weighted (DWI)", "dwi"),
    )
}


@dataclass(frozen=True)
class Pathology:
    """A rare pathology and how its lesions look.

    Attributes:
        name: final diagnosis wording.
        regions: typical sites (keys of ``REGIONS``).
        shape: ``"ovoid"``, ``"round"`` or ``"lobulated"``.
        radius_mm: (min, max) radius of a lesion.
        t2: ``"hyperintense"`` or ``"hypointense"`` on T2/FLAIR.
        t1: ``"hypointense"`` or ``"hyperintense"`` on T1.
        enhancement: ``"none"``, ``"ring"``, ``"solid"`` or ``"incomplete ring"``.
        restricted_diffusion: bright on DWI.
        bilateral: lesions are symmetric in both hemispheres.
        age: (min, max) patient age in years.
        histories: clinical-history phrases (after "<age>-year-old <sex> with ").
        finding: a phrase appended to captions (may be empty).
        differentials: typical differential diagnoses.

    Example:
        >>> any(p.name == "Susac syndrome" for p in PATHOLOGIES)
        True
    """

    name: str
    regions: tuple[str, ...]
    shape: str
    radius_mm: tuple[float, float]
    t2: str
    t1: str
    enhancement: str
    restricted_diffusion: bool
    bilateral: bool
    age: tuple[int, int]
    histories: tuple[str, ...]
    finding: str
    differentials: tuple[str, ...]


def _p(
    name: str,
    regions: Sequence[str],
    shape: str,
    radius: tuple[float, float],
    t2: str,
    t1: str,
    enhancement: str,
    dwi: bool,
    bilateral: bool,
    age: tuple[int, int],
    histories: Sequence[str],
    finding: str,
    differentials: Sequence[str],
) -> Pathology:
    return Pathology(
        name,
        tuple(regions),
        shape,
        radius,
        t2,
        t1,
        enhancement,
        dwi,
        bilateral,
        age,
        tuple(histories),
        finding,
        tuple(differentials),
    )


HYPER, HYPO = "hyperintense", "hypointense"

PATHOLOGIES: tuple[Pathology, ...] = (
    _p(
        "Rasmussen encephalitis",
        ["frontal lobe", "temporal lobe"],
        "lobulated",
        (9, 14),
        HYPER,
        HYPO,
        "none",
        False,
        False,
        (5, 14),
        [
            "drug-resistant focal seizures and progressive hemiparesis",
            "epilepsia partialis continua over two years",
        ],
        "with adjacent cortical atrophy",
        [
            "Hemimegalencephaly",
            "Sturge-Weber syndrome",
            "Cortical dysplasia",
            "Herpes simplex encephalitis",
        ],
    ),
    _p(
        "Susac syndrome",
        ["splenium of the corpus callosum"],
        "round",
        (3, 5),
        HYPER,
        HYPO,
        "none",
        True,
        False,
        (20, 40),
        [
            "headache, hearing loss and branch retinal artery occlusions",
            "encephalopathy with bilateral sensorineural hearing loss",
        ],
        "with a central 'snowball' appearance",
        ["Multiple sclerosis", "ADEM", "Primary CNS vasculitis", "Neurosarcoidosis"],
    ),
    _p(
        "CADASIL",
        ["temporal lobe", "periventricular white matter"],
        "ovoid",
        (6, 10),
        HYPER,
        HYPO,
        "none",
        False,
        True,
        (35, 60),
        [
            "migraine with aura and recurrent subcortical strokes",
            "cognitive decline and a family history of early strokes",
        ],
        "with confluent involvement of the white matter",
        ["Small vessel disease", "Multiple sclerosis", "CARASIL", "Fabry disease"],
    ),
    _p(
        "Lhermitte-Duclos disease",
        ["cerebellar hemisphere"],
        "lobulated",
        (10, 15),
        HYPER,
        HYPO,
        "none",
        False,
        False,
        (25, 55),
        [
            "headache, ataxia and known Cowden syndrome",
            "progressive gait unsteadiness and macrocephaly",
        ],
        "with a striated 'tiger-striped' pattern",
        ["Medulloblastoma", "Cerebellar infarct", "Ganglioglioma", "Cerebellitis"],
    ),
    _p(
        "Balo concentric sclerosis",
        ["centrum semiovale", "frontal lobe"],
        "round",
        (9, 14),
        HYPER,
        HYPO,
        "ring",
        True,
        False,
        (20, 40),
        [
            "subacute hemiparesis and confusion",
            "rapidly progressive focal deficit over three weeks",
        ],
        "with alternating concentric layers",
        ["Tumefactive demyelination", "Glioblastoma", "Brain abscess", "Lymphoma"],
    ),
    _p(
        "Neurocysticercosis",
        ["frontal lobe", "parietal lobe"],
        "round",
        (4, 7),
        HYPER,
        HYPO,
        "ring",
        False,
        False,
        (15, 45),
        [
            "a first generalised seizure after living in an endemic area",
            "headache and new-onset seizures",
        ],
        "with an eccentric dot representing the scolex",
        ["Tuberculoma", "Brain abscess", "Metastasis", "Toxoplasmosis"],
    ),
    _p(
        "Erdheim-Chester disease",
        ["dentate nucleus", "pons"],
        "ovoid",
        (5, 8),
        HYPER,
        HYPO,
        "solid",
        False,
        True,
        (40, 70),
        [
            "bone pain, diabetes insipidus and cerebellar ataxia",
            "progressive ataxia and exophthalmos",
        ],
        "",
        [
            "Langerhans cell histiocytosis",
            "Neurosarcoidosis",
            "Cerebrotendinous xanthomatosis",
            "Lymphoma",
        ],
    ),
    _p(
        "Progressive multifocal leukoencephalopathy",
        ["parietal lobe", "occipital lobe"],
        "lobulated",
        (10, 15),
        HYPER,
        HYPO,
        "none",
        False,
        False,
        (30, 60),
        [
            "HIV infection with a low CD4 count and progressive cognitive decline",
            "multiple sclerosis treated with natalizumab and new visual field loss",
        ],
        "involving the subcortical U-fibres without mass effect",
        ["HIV encephalopathy", "ADEM", "PRES", "Lymphoma"],
    ),
    _p(
        "Tumefactive demyelinating lesion",
        ["frontal lobe", "periventricular white matter"],
        "ovoid",
        (10, 15),
        HYPER,
        HYPO,
        "incomplete ring",
        False,
        False,
        (20, 45),
        ["subacute hemiparesis", "headache and progressive speech disturbance"],
        "with little mass effect for its size",
        ["Glioblastoma", "Primary CNS lymphoma", "Brain abscess", "Metastasis"],
    ),
    _p(
        "Creutzfeldt-Jakob disease",
        ["basal ganglia"],
        "ovoid",
        (5, 8),
        HYPER,
        "hypointense",
        "none",
        True,
        True,
        (50, 75),
        [
            "rapidly progressive dementia and myoclonus",
            "ataxia and cognitive decline over two months",
        ],
        "involving the caudate and putamen",
        [
            "Wernicke encephalopathy",
            "Hypoxic-ischaemic injury",
            "Autoimmune encephalitis",
            "Wilson disease",
        ],
    ),
    _p(
        "Wernicke encephalopathy",
        ["thalamus"],
        "ovoid",
        (4, 6),
        HYPER,
        HYPO,
        "solid",
        True,
        True,
        (30, 60),
        [
            "chronic alcohol use, confusion, ophthalmoplegia and ataxia",
            "hyperemesis and acute confusion",
        ],
        "in the medial thalami",
        [
            "Artery of Percheron infarct",
            "Creutzfeldt-Jakob disease",
            "Deep venous thrombosis",
            "Lymphoma",
        ],
    ),
    _p(
        "Osmotic demyelination syndrome",
        ["pons"],
        "ovoid",
        (6, 9),
        HYPER,
        HYPO,
        "none",
        True,
        False,
        (35, 65),
        [
            "rapid correction of severe hyponatraemia followed by quadriparesis",
            "alcohol use disorder and locked-in state after hospital admission",
        ],
        "with a trident shape sparing the periphery",
        ["Pontine infarct", "Pontine glioma", "Multiple sclerosis", "Neuro-Behcet disease"],
    ),
    _p(
        "Marchiafava-Bignami disease",
        ["splenium of the corpus callosum"],
        "ovoid",
        (4, 7),
        HYPER,
        HYPO,
        "none",
        True,
        False,
        (40, 65),
        [
            "chronic alcoholism, confusion and gait disturbance",
            "malnutrition and interhemispheric disconnection signs",
        ],
        "",
        ["Susac syndrome", "Multiple sclerosis", "Reversible splenial lesion syndrome", "Lymphoma"],
    ),
    _p(
        "Fahr disease",
        ["basal ganglia"],
        "ovoid",
        (5, 8),
        HYPO,
        "hyperintense",
        "none",
        False,
        True,
        (30, 60),
        [
            "parkinsonism and neuropsychiatric symptoms",
            "progressive dystonia and cognitive decline",
        ],
        "in keeping with dense calcification",
        [
            "Hypoparathyroidism",
            "Mitochondrial disease",
            "Physiological calcification",
            "Toxoplasmosis",
        ],
    ),
    _p(
        "Hypertrophic olivary degeneration",
        ["medulla oblongata"],
        "round",
        (3, 5),
        HYPER,
        HYPO,
        "none",
        False,
        False,
        (40, 70),
        ["palatal tremor months after a pontine haemorrhage", "oscillopsia and palatal myoclonus"],
        "with enlargement of the inferior olive",
        ["Medullary infarct", "Demyelination", "Glioma", "Neuro-Behcet disease"],
    ),
    _p(
        "Dysembryoplastic neuroepithelial tumour",
        ["temporal lobe"],
        "lobulated",
        (8, 12),
        HYPER,
        HYPO,
        "none",
        False,
        False,
        (8, 25),
        [
            "long-standing drug-resistant temporal lobe epilepsy",
            "complex partial seizures since childhood",
        ],
        "with a bubbly cortical appearance",
        [
            "Ganglioglioma",
            "Low-grade glioma",
            "Focal cortical dysplasia",
            "Pleomorphic xanthoastrocytoma",
        ],
    ),
    _p(
        "Pleomorphic xanthoastrocytoma",
        ["temporal lobe", "parietal lobe"],
        "round",
        (10, 14),
        HYPER,
        HYPO,
        "ring",
        False,
        False,
        (10, 30),
        ["new-onset seizures", "headache and seizures for six months"],
        "with an enhancing mural nodule abutting the meninges",
        ["Ganglioglioma", "Pilocytic astrocytoma", "Glioblastoma", "Hemangioblastoma"],
    ),
    _p(
        "Primary central nervous system lymphoma",
        ["periventricular white matter", "basal ganglia"],
        "ovoid",
        (9, 13),
        HYPO,
        HYPO,
        "solid",
        True,
        False,
        (55, 80),
        [
            "subacute cognitive change and personality change",
            "progressive confusion and weight loss",
        ],
        "with surrounding oedema",
        ["Glioblastoma", "Metastasis", "Tumefactive demyelination", "Toxoplasmosis"],
    ),
    _p(
        "Tuberculoma",
        ["cerebellar hemisphere", "frontal lobe"],
        "round",
        (6, 10),
        HYPO,
        HYPO,
        "ring",
        False,
        False,
        (20, 50),
        ["fever, weight loss and seizures", "pulmonary tuberculosis and headache"],
        "with a T2-hypointense rim",
        ["Neurocysticercosis", "Brain abscess", "Metastasis", "Fungal granuloma"],
    ),
    _p(
        "Cerebral toxoplasmosis",
        ["basal ganglia", "thalamus"],
        "round",
        (7, 11),
        HYPER,
        HYPO,
        "ring",
        False,
        False,
        (25, 50),
        [
            "HIV infection, fever and hemiparesis",
            "immunosuppression after transplantation and confusion",
        ],
        "with an eccentric target sign",
        ["Primary CNS lymphoma", "Tuberculoma", "Brain abscess", "Metastasis"],
    ),
    _p(
        "Nocardia brain abscess",
        ["frontal lobe", "parietal lobe"],
        "lobulated",
        (10, 14),
        HYPER,
        HYPO,
        "ring",
        True,
        False,
        (40, 70),
        [
            "long-term corticosteroid therapy, fever and a pulmonary nodule",
            "renal transplantation and progressive headache",
        ],
        "with multiloculated rim enhancement",
        ["Glioblastoma", "Metastasis", "Tuberculoma", "Aspergillosis"],
    ),
    _p(
        "Neurosarcoidosis",
        ["basal ganglia", "periventricular white matter"],
        "ovoid",
        (5, 9),
        HYPER,
        HYPO,
        "solid",
        False,
        False,
        (30, 55),
        [
            "known pulmonary sarcoidosis and cranial nerve palsies",
            "hilar lymphadenopathy and new headache",
        ],
        "with nodular enhancement",
        ["Tuberculosis", "Lymphoma", "Metastasis", "IgG4-related disease"],
    ),
    _p(
        "Neuro-Behcet disease",
        ["pons", "thalamus"],
        "ovoid",
        (7, 11),
        HYPER,
        HYPO,
        "solid",
        False,
        False,
        (20, 40),
        [
            "recurrent oral and genital ulcers and a brainstem syndrome",
            "uveitis and subacute ataxia",
        ],
        "with mild swelling",
        ["Multiple sclerosis", "Glioma", "Neurosarcoidosis", "CLIPPERS"],
    ),
    _p(
        "Acute disseminated encephalomyelitis",
        ["centrum semiovale", "thalamus"],
        "ovoid",
        (7, 11),
        HYPER,
        HYPO,
        "incomplete ring",
        False,
        True,
        (4, 15),
        [
            "encephalopathy two weeks after a viral illness",
            "fever, drowsiness and multifocal deficits after vaccination",
        ],
        "with poorly defined margins",
        ["Multiple sclerosis", "Viral encephalitis", "MOG antibody disease", "Vasculitis"],
    ),
    _p(
        "Posterior reversible encephalopathy syndrome",
        ["occipital lobe", "parietal lobe"],
        "lobulated",
        (10, 14),
        HYPER,
        HYPO,
        "none",
        False,
        True,
        (20, 60),
        [
            "severe hypertension, headache and visual disturbance",
            "eclampsia with seizures and cortical blindness",
            "tacrolimus therapy and a first seizure",
        ],
        "in keeping with vasogenic oedema",
        ["Posterior circulation infarct", "PML", "Hypoglycaemia", "Cerebral venous thrombosis"],
    ),
    _p(
        "Anti-LGI1 limbic encephalitis",
        ["medial temporal lobe"],
        "ovoid",
        (6, 9),
        HYPER,
        HYPO,
        "none",
        False,
        False,
        (50, 75),
        ["faciobrachial dystonic seizures and hyponatraemia", "subacute memory loss and confusion"],
        "with swelling of the hippocampus",
        [
            "Herpes simplex encephalitis",
            "Low-grade glioma",
            "Status epilepticus",
            "Paraneoplastic encephalitis",
        ],
    ),
    _p(
        "Hemangioblastoma",
        ["cerebellar hemisphere"],
        "round",
        (10, 14),
        HYPER,
        HYPO,
        "ring",
        False,
        False,
        (25, 50),
        ["von Hippel-Lindau disease and ataxia", "headache, vomiting and polycythaemia"],
        "with an enhancing mural nodule",
        ["Pilocytic astrocytoma", "Metastasis", "Cerebellar abscess", "Arachnoid cyst"],
    ),
    _p(
        "Adult-onset Alexander disease",
        ["medulla oblongata"],
        "ovoid",
        (5, 8),
        HYPER,
        HYPO,
        "none",
        False,
        False,
        (30, 60),
        [
            "progressive bulbar symptoms and spastic paraparesis",
            "dysphagia, dysphonia and palatal tremor",
        ],
        "with atrophy of the medulla",
        [
            "Multiple system atrophy",
            "Neuromyelitis optica spectrum disorder",
            "Brainstem glioma",
            "Adrenomyeloneuropathy",
        ],
    ),
    _p(
        "X-linked adrenoleukodystrophy",
        ["occipital lobe", "splenium of the corpus callosum"],
        "lobulated",
        (10, 14),
        HYPER,
        HYPO,
        "incomplete ring",
        False,
        False,
        (5, 12),
        [
            "behavioural change, declining school performance and skin hyperpigmentation",
            "visual loss and adrenal insufficiency",
        ],
        "with an enhancing leading edge",
        ["Metachromatic leukodystrophy", "Krabbe disease", "ADEM", "Alexander disease"],
    ),
    _p(
        "Metachromatic leukodystrophy",
        ["periventricular white matter"],
        "lobulated",
        (10, 13),
        HYPER,
        HYPO,
        "none",
        True,
        False,
        (2, 20),
        [
            "motor regression and peripheral neuropathy",
            "psychiatric symptoms and progressive gait disorder",
        ],
        "with a tigroid pattern sparing the subcortical U-fibres",
        [
            "X-linked adrenoleukodystrophy",
            "Krabbe disease",
            "Periventricular leukomalacia",
            "Vanishing white matter disease",
        ],
    ),
    _p(
        "Cerebrotendinous xanthomatosis",
        ["dentate nucleus"],
        "ovoid",
        (4, 7),
        HYPER,
        HYPO,
        "none",
        True,
        False,
        (20, 45),
        [
            "tendon xanthomas, juvenile cataracts and chronic diarrhoea",
            "spastic paraparesis and ataxia",
        ],
        "",
        [
            "Erdheim-Chester disease",
            "Langerhans cell histiocytosis",
            "Metronidazole toxicity",
            "Wilson disease",
        ],
    ),
    _p(
        "Langerhans cell histiocytosis",
        ["dentate nucleus", "basal ganglia"],
        "ovoid",
        (4, 7),
        HYPER,
        HYPO,
        "none",
        True,
        False,
        (5, 30),
        ["diabetes insipidus and progressive ataxia", "lytic skull lesions and tremor"],
        "in keeping with neurodegenerative involvement",
        [
            "Erdheim-Chester disease",
            "Cerebrotendinous xanthomatosis",
            "Paraneoplastic syndrome",
            "Toxic encephalopathy",
        ],
    ),
    _p(
        "Rosai-Dorfman disease",
        ["frontal lobe", "parietal lobe"],
        "ovoid",
        (9, 13),
        HYPO,
        HYPO,
        "solid",
        False,
        False,
        (20, 50),
        ["painless cervical lymphadenopathy and headache", "a seizure and fever"],
        "with a broad dural base",
        ["Meningioma", "Lymphoma", "Neurosarcoidosis", "IgG4-related disease"],
    ),
    _p(
        "Cerebral amyloid angiopathy-related inflammation",
        ["parietal lobe", "occipital lobe"],
        "lobulated",
        (10, 14),
        HYPER,
        HYPO,
        "none",
        False,
        False,
        (60, 85),
        ["subacute cognitive decline and seizures", "headache, confusion and multiple microbleeds"],
        "with asymmetric subcortical oedema",
        ["PRES", "PML", "Glioma", "Primary CNS vasculitis"],
    ),
    _p(
        "Neuromyelitis optica spectrum disorder",
        ["medulla oblongata", "thalamus"],
        "ovoid",
        (4, 7),
        HYPER,
        HYPO,
        "none",
        False,
        False,
        (25, 50),
        [
            "intractable hiccups and vomiting",
            "optic neuritis and longitudinally extensive myelitis",
        ],
        "adjacent to the ependymal surface",
        ["Multiple sclerosis", "MOG antibody disease", "Neuro-Behcet disease", "Brainstem glioma"],
    ),
    _p(
        "Bickerstaff brainstem encephalitis",
        ["pons"],
        "ovoid",
        (5, 8),
        HYPER,
        HYPO,
        "none",
        False,
        False,
        (20, 50),
        [
            "ophthalmoplegia, ataxia and drowsiness after a diarrhoeal illness",
            "anti-GQ1b antibodies and reduced consciousness",
        ],
        "",
        [
            "Wernicke encephalopathy",
            "Brainstem infarct",
            "Listeria rhombencephalitis",
            "Neuro-Behcet disease",
        ],
    ),
    _p(
        "Subacute sclerosing panencephalitis",
        ["parietal lobe", "periventricular white matter"],
        "lobulated",
        (9, 13),
        HYPER,
        HYPO,
        "none",
        True,
        False,
        (6, 18),
        [
            "myoclonic jerks and school failure years after measles",
            "behavioural change and periodic myoclonus",
        ],
        "without mass effect",
        ["ADEM", "Leukodystrophy", "HIV encephalopathy", "PML"],
    ),
    _p(
        "Gliosarcoma",
        ["temporal lobe", "frontal lobe"],
        "lobulated",
        (12, 16),
        HYPER,
        HYPO,
        "ring",
        True,
        False,
        (50, 70),
        ["progressive headache and dysphasia", "new-onset seizures and weight loss"],
        "with central necrosis and surrounding oedema",
        ["Glioblastoma", "Meningioma", "Metastasis", "Brain abscess"],
    ),
    _p(
        "Ganglioglioma",
        ["temporal lobe", "medial temporal lobe"],
        "round",
        (7, 11),
        HYPER,
        HYPO,
        "ring",
        False,
        False,
        (8, 25),
        ["chronic temporal lobe epilepsy", "complex partial seizures"],
        "with a cystic component and an enhancing nodule",
        [
            "Dysembryoplastic neuroepithelial tumour",
            "Pleomorphic xanthoastrocytoma",
            "Pilocytic astrocytoma",
            "Low-grade glioma",
        ],
    ),
    _p(
        "Anti-Ma2 paraneoplastic encephalitis",
        ["medial temporal lobe", "thalamus"],
        "ovoid",
        (5, 8),
        HYPER,
        HYPO,
        "solid",
        False,
        False,
        (25, 60),
        [
            "a testicular germ cell tumour and excessive daytime sleepiness",
            "vertical gaze palsy and memory loss",
        ],
        "",
        [
            "Herpes simplex encephalitis",
            "Wernicke encephalopathy",
            "Lymphoma",
            "Anti-LGI1 limbic encephalitis",
        ],
    ),
    _p(
        "CLIPPERS",
        ["pons"],
        "ovoid",
        (7, 10),
        HYPER,
        HYPO,
        "solid",
        False,
        False,
        (30, 60),
        [
            "subacute diplopia, ataxia and dysarthria responsive to steroids",
            "relapsing brainstem symptoms",
        ],
        "with punctate 'peppering' enhancement",
        ["Neurosarcoidosis", "Lymphoma", "Neuro-Behcet disease", "Multiple sclerosis"],
    ),
    _p(
        "Cryptococcal meningoencephalitis",
        ["basal ganglia"],
        "round",
        (4, 7),
        HYPER,
        HYPO,
        "none",
        True,
        False,
        (30, 55),
        ["HIV infection, headache and fever", "renal transplantation and confusion"],
        "in keeping with gelatinous pseudocysts",
        ["Toxoplasmosis", "Tuberculosis", "Lacunar infarcts", "Enlarged perivascular spaces"],
    ),
    _p(
        "Schistosomal granuloma of the brain",
        ["cerebellar hemisphere", "parietal lobe"],
        "lobulated",
        (8, 12),
        HYPER,
        HYPO,
        "solid",
        False,
        False,
        (15, 40),
        ["travel to an endemic region, headache and ataxia", "eosinophilia and seizures"],
        "with arborised nodular enhancement",
        ["Glioma", "Metastasis", "Tuberculoma", "Lymphoma"],
    ),
    _p(
        "Primary angiitis of the central nervous system",
        ["frontal lobe", "centrum semiovale"],
        "ovoid",
        (6, 10),
        HYPER,
        HYPO,
        "none",
        False,
        True,
        (35, 60),
        [
            "recurrent headaches and stepwise focal deficits",
            "cognitive decline and strokes of different ages",
        ],
        "in keeping with an acute infarct",
        [
            "Reversible cerebral vasoconstriction syndrome",
            "CADASIL",
            "Susac syndrome",
            "Moyamoya disease",
        ],
    ),
    _p(
        "MELAS",
        ["occipital lobe", "parietal lobe"],
        "lobulated",
        (10, 14),
        HYPER,
        HYPO,
        "none",
        False,
        True,
        (10, 35),
        [
            "stroke-like episodes, short stature and hearing loss",
            "episodic vomiting, lactic acidosis and hemianopia",
        ],
        "not respecting vascular territories",
        ["Posterior cerebral artery infarct", "PRES", "Herpes encephalitis", "Status epilepticus"],
    ),
)
