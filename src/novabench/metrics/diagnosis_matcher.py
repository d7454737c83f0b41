"""The lexicon diagnosis matcher: the default, offline judge of two diagnoses.

:class:`LexiconDiagnosisMatcher` decides whether a predicted diagnosis names the reference
diagnosis with the diagnosis lexicon (:mod:`novabench.lexicon.diagnoses`) and a few
reading rules; :func:`edit_ratio` is the word similarity its fuzzy rule uses, and
:func:`describe_matcher` the one-line description of any matcher for reports.
:mod:`novabench.metrics.diagnosis` scores Top-1/Top-5 with it and re-exports these names.

Example:
    >>> LexiconDiagnosisMatcher()("Glioblastoma", "GBM")
    True
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from novabench.errors import NovaInputError
from novabench.lexicon.diagnoses import (
    LEXICON_VERSION,
    DiagnosisLexicon,
    diagnosis_aliases,
    load_diagnosis_lexicon,
    normalize_diagnosis,
    read_diagnosis,
)
from novabench.lexicon.normalization import (
    _IGNORABLE_WORDS,
    _NON_ALNUM,
    _key,
    _key_from_tokens,
    _singular,
)

__all__ = [
    "LexiconDiagnosisMatcher",
    "MatchExplanation",
    "describe_matcher",
    "edit_ratio",
]

# ---------------------------------------------------------------------------------------
# Edit-distance similarity
# ---------------------------------------------------------------------------------------


def _levenshtein(a: str, b: str, limit: int) -> int:
    """Edit distance of ``a`` and ``b``, or ``limit + 1`` as soon as it must exceed ``limit``.

    Only the band of cells within ``limit`` of the diagonal is computed.
    """
    too_far = limit + 1
    if abs(len(a) - len(b)) > limit:
        return too_far
    if a == b:
        return 0
    previous = [j if j <= limit else too_far for j in range(len(b) + 1)]
    for i, char_a in enumerate(a, start=1):
        low, high = max(1, i - limit), min(len(b), i + limit)
        current = [too_far] * (len(b) + 1)
        current[0] = i if i <= limit else too_far
        for j in range(low, high + 1):
            cost = previous[j - 1] + (char_a != b[j - 1])
            if previous[j] + 1 < cost:
                cost = previous[j] + 1
            if current[j - 1] + 1 < cost:
                cost = current[j - 1] + 1
            current[j] = cost if cost <= limit else too_far
        if min(current[low - 1 : high + 1]) > limit:
            return too_far
        previous = current
    return previous[-1]


def edit_ratio(a: str, b: str) -> float:
    """Similarity of two strings: ``1 - levenshtein(a, b) / max(len(a), len(b))``.

    1.0 for identical strings (and for two empty strings), 0.0 for nothing in common.
    At the default matcher threshold 0.88, a word of 8 letters or fewer must be spelled
    exactly, 9 to 16 letters allow one edit, 17 to 24 two.

    Args:
        a: first string.
        b: second string.

    Returns:
        The similarity in [0, 1].

    Example:
        >>> edit_ratio("leukoencephalopathy", "leukoencephalopaty")  # 1 edit in 19 letters
        0.9473684210526316
        >>> round(edit_ratio("ependymoma", "subependymoma"), 4)  # 1 - 3 / 13
        0.7692
    """
    longest = max(len(a), len(b))
    if longest == 0:
        return 1.0
    return 1.0 - _levenshtein(a, b, longest) / longest


# ---------------------------------------------------------------------------------------
# The lexicon matcher
# ---------------------------------------------------------------------------------------

_LATERALITY = frozenset({"left", "right", "bilateral", "unilateral"})
# Words that carry no identity of a disease in the fuzzy comparison.
_FUZZY_STOPWORDS = frozenset(
    """
    disease disorder syndrome of the a an and or with without in on to due from by for vs
    versus secondary associated related induced acute subacute chronic type grade who form
    variant lesion lesions process condition brain cerebral intracranial cns central nervous
    system early late stage
""".split()
)
# Head words too vague to be a diagnosis by themselves (never matched through fuzzy rules).
_GENERIC_WORDS = frozenset(
    """
    degeneration encephalopathy atrophy malformation anomaly abnormality injury damage edema
    necrosis mass tumor neoplasm cyst infection inflammation hemorrhage infarct infarction
    leukoencephalopathy myelopathy neuropathy vasculopathy angiopathy dysplasia hypoplasia
    calcification sclerosis gliosis lesion disease syndrome disorder process pathology
    encephalitis meningitis myelitis abscess hematoma stroke dementia ataxia epilepsy
    seizure seizures hydrocephalus leukodystrophy malignancy cancer carcinoma
""".split()
)
_QUALIFIER = re.compile(r"\d")
# Greek letters by name (normalisation spells "α" alpha): a subtype's letter, as "type A" is.
_GREEK_LETTER_NAMES = frozenset(
    "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho "
    "sigma tau upsilon phi chi psi omega".split()
)
# Words that describe the patient, not the disease ("neonatal Citrobacter abscess", "HSV
# encephalitis in a child"): qualifiers like a location.
_PATIENT_WORDS = frozenset(
    """
    neonatal neonate neonates newborn newborns infant infants child children childhood
    pediatric adult adults adolescent adolescents elderly patient patients human toddler
    preterm immunocompromised immunosuppressed immunocompetent
""".split()
)
_QUALIFYING_WORDS = _IGNORABLE_WORDS | _PATIENT_WORDS | {"territory", "territorial"}
# "L MCA infarct", "R PCA territory infarct": a side as one letter beside an abbreviation.
_SIDE_LETTERS = frozenset({"l", "r"})
# Words an abbreviation leaves out of its initials ("MSGP": microcephaly with simplified
# gyral pattern).
_INITIALS_SKIPPED = frozenset(
    {"a", "an", "the", "of", "and", "with", "in", "for", "to", "on", "by"}
)
# Closing words an abbreviation may or may not spell ("HSES" and "HSE syndrome" alike).
_INITIALS_OPTIONAL = frozenset({"disease", "syndrome", "disorder"})
_ACRONYM = re.compile(r"^[A-Za-z]{3,8}$")
# Words that make a part outside the lexicon read as a disease of its own when only a comma,
# semicolon or slash sets it apart ("Glioblastoma, Menkes disease"); other words there read as
# qualifiers ("Glioblastoma, ring-enhancing").
_DISEASE_HEADS = frozenset(
    """
    disease diseases disorder syndrome malformation tumor neoplasm cancer carcinoma malignancy
    infection abscess cyst infarct infarction stroke hematoma dementia ataxia epilepsy
    leukodystrophy anomaly
""".split()
)
_DISEASE_ENDINGS = (
    "oma",
    "omas",
    "itis",
    "osis",
    "oses",
    "iasis",
    "pathy",
    "pathies",
    "plasia",
    "trophy",
    "ectasia",
    "emia",
    "ism",
)
_NOT_DISEASES = frozenset({"diagnosis", "prognosis", "necrosis", "gliosis", "atrophy"})
# Words after which the rest of a statement is context (a cause, a feature, the patient):
# "GBM with central necrosis", "PML in a patient on natalizumab", "PRES due to eclampsia".
_CONTEXT_MARKERS = frozenset(
    """
    with without in on at of due secondary caused causing from after following associated
    related complicated complicating involving extending compressing invading crossing
    because resulting including presenting given considering
""".split()
)
# Markers after which the text names the cause of what precedes it ("hemorrhage from AVM").
_CAUSE_MARKERS: tuple[tuple[str, ...], ...] = (
    ("due", "to"),
    ("secondary", "to"),
    ("caused", "by"),
    ("from",),
    ("because", "of"),
    ("resulting", "from"),
    ("after",),
    ("following",),
    ("related", "to"),
)
# Entries that are often the consequence of another disease: stated with a cause, the
# cause is the diagnosis ("subarachnoid hemorrhage due to a ruptured aneurysm").
_CONSEQUENCES = frozenset(
    {
        "intracranial hemorrhage",
        "hydrocephalus",
        "ischemic stroke",
        "superficial siderosis",
        "venous infarct",
    }
)
# Words that turn a disease into something else ("meningioma-like", "glioblastoma mimic").
_CHANGING_WORDS = frozenset(
    {
        "mimic",
        "mimics",
        "mimicking",
        "like",
        "simulating",
        "resembling",
        "masquerading",
        "lookalike",
        "pseudotumor",
        "pseudoprogression",
    }
)
# Location words that define a disease: the same word class on both sides must agree.
# Compartments: a bleed or collection in one is a different diagnosis from one in another.
_COMPARTMENTS = {
    "epidural": "epidural",
    "extradural": "epidural",
    "subdural": "subdural",
    "subarachnoid": "subarachnoid",
    "intraventricular": "intraventricular",
    "intraparenchymal": "parenchymal",
    "parenchymal": "parenchymal",
    "intracerebral": "parenchymal",
}
# Brain or spinal cord ("spinal cord infarction" is no cerebellar infarct).
_AXES = {
    "spinal": "spinal",
    "cord": "spinal",
    "intramedullary": "spinal",
    "conus": "spinal",
    "brain": "brain",
    "cerebral": "brain",
    "cerebellar": "brain",
    "cerebellum": "brain",
    "brainstem": "brain",
    "intracranial": "brain",
    "cranial": "brain",
    "frontal": "brain",
    "temporal": "brain",
    "parietal": "brain",
    "occipital": "brain",
    "thalamic": "brain",
    "pontine": "brain",
    "midbrain": "brain",
    "supratentorial": "brain",
    "infratentorial": "brain",
    "hemispheric": "brain",
    "medullary": "brain",
}


# Words that only place a disease (side, region of the brain or skull): a text that names a
# lexicon entry once they are left out names that entry ("EV71 brainstem encephalitis",
# "Nocardia brain abscess"). Words that also form disease names (multiple, central,
# superficial, cortical...) are not among them.
_PLACE_WORDS = frozenset(
    """
    left right bilateral unilateral brain cerebral cerebellar brainstem pontine midbrain
    medullary thalamic frontal temporal parietal occipital insular hemispheric supratentorial
    infratentorial intracranial calvarial calvarium skull
""".split()
)


# The nouns among them: "a meningioma mimic" and "a mimic of meningioma" name a lookalike
# of meningioma, and so no disease of their own.
_LIKENESS_NOUNS = frozenset({"mimic", "mimics", "mimicker", "mimickers", "lookalike", "lookalikes"})


def _drop_likeness(form: str, known: Callable[[str], bool] = lambda _form: False) -> str:
    """Leave out a disease a text only compares with: "glioblastoma-like metastasis" names
    metastasis, "metastasis mimicking meningioma" too; "meningioma mimic" and "mimic of
    meningioma" name nothing (a mimic of a disease is not that disease), "dural lymphoma
    meningioma mimic" the longest start that ``known`` (the lexicon) names, else nothing."""
    tokens = form.split()
    for index, token in enumerate(tokens):
        if token == "like" and index:
            return " ".join(tokens[index + 1 :])
        if token in _LIKENESS_NOUNS and (index + 1 == len(tokens) or tokens[index + 1] == "of"):
            # "X mimic of Y" keeps X; in "X Y mimic" the words right before are Y, the
            # disease mimicked: keep the longest start the lexicon names.
            last = index if index + 1 < len(tokens) else index - 1
            for end in range(last, 0, -1):
                if known(" ".join(tokens[:end])):
                    return " ".join(tokens[:end])
            return ""
        if token in _CHANGING_WORDS and token != "like" and index:
            return " ".join(tokens[:index])
    return form


# A clause that only keeps a second disease open ("metastasis cannot be excluded", "although
# lymphoma is possible") ranks it below the main one. A list of differentials stays a hedge.
_SUBORDINATE_CUES = re.compile(
    r"\b(?:can ?not|can't|could not|not)\s+(?:yet\s+)?(?:be\s+)?"
    r"(?:entirely\s+|completely\s+|fully\s+|definitely\s+)?(?:excluded|ruled out)\b"
    r"|\b(?:is|are|remains?)\s+(?:also\s+|still\s+)?"
    r"(?:possible|a possibility|considered|a consideration|in the differential)\b"
    r"|\balso\s+(?:possible|considered)\b",
    re.IGNORECASE,
)
# A choice made between alternatives: "ependymoma vs medulloblastoma, favouring ependymoma",
# "schwannoma (favoured) vs meningioma". The cue before the chosen words, and the cue after them.
_CHOICE_BEFORE = re.compile(
    r"(?<!\bnot )(?<!\bless )\b(?:in\s+favou?r\s+of|favou?r(?:s|ing)?|prefer(?:s|ring)?"
    r"|(?:favou?red|preferred)\s+diagnosis(?:\s+is)?)\s*:?\s+"
    r"(?:(?:the|a|an|diagnosis|of|is)\s+|:\s*)*(?P<chosen>[^,;.()\[\]]+)",
    re.IGNORECASE,
)
_CHOICE_AFTER = re.compile(
    r"(?P<chosen>[^,;()\[\]]+?)\s*[(\[]?\s*(?:is\s+|being\s+)?(?<!\bnot )(?<!\bless )"
    r"(?:favou?red|preferred)\b\s*[)\]]?(?=\s*(?:$|[,;]|(?:vs|versus|over|or|to)\b))",
    re.IGNORECASE,
)
# "pilocytic astrocytoma over hemangioblastoma": the first disease chosen over the second.
_CHOICE_OVER = re.compile(r"^(?P<chosen>.+?)\s+over\s+(?P<other>.+)$", re.IGNORECASE)
# Clinical shorthand whose slash would read as a separator of alternatives ("ICH w/ IVH").
_SHORTHAND = (
    (re.compile(r"(?<![A-Za-z0-9])w/o(?![A-Za-z0-9])", re.I), "without"),
    (re.compile(r"(?<![A-Za-z0-9])w/(?![A-Za-z0-9/])", re.I), "with"),
    (re.compile(r"(?<![A-Za-z0-9])s/p(?![A-Za-z0-9])", re.I), "after"),
)


# An artery's abbreviation before a vascular word names the artery ("PCA stroke", "MCA
# territory infarct"), whatever else the letters abbreviate (PCA: posterior cortical atrophy).
_ARTERIES = {
    "ACA": "anterior cerebral artery",
    "MCA": "middle cerebral artery",
    "PCA": "posterior cerebral artery",
    "ICA": "internal carotid artery",
    "PICA": "posterior inferior cerebellar artery",
    "AICA": "anterior inferior cerebellar artery",
    "SCA": "superior cerebellar artery",
    "VA": "vertebral artery",
    "BA": "basilar artery",
}
_ARTERY_BEFORE_VASCULAR_WORD = re.compile(
    r"(?<![A-Za-z0-9/-])(" + "|".join(_ARTERIES) + r")(?=\s+(?:territory|infarcts?|infarctions?"
    r"|strokes?|aneurysms?|occlusions?|stenos[ie]s|dissections?|thrombosis)\b)"
)


def _expand_shorthand(text: str) -> str:
    """``text`` with "w/", "w/o" and "s/p" written out (with, without, after), and an
    artery's abbreviation before a vascular word ("PCA stroke") written as the artery."""
    text = _ARTERY_BEFORE_VASCULAR_WORD.sub(lambda m: _ARTERIES[m.group(1)], text)
    if "/" not in text:
        return text
    for pattern, words in _SHORTHAND:
        text = pattern.sub(words, text)
    return text


# A metastasis, and a primary cancer named after it ("metastases, likely melanoma").
_METASTASIS = re.compile(r"\bmetasta(?:sis|ses|tic)\b", re.I)
_PRIMARY_CANCER = re.compile(
    r"\b(?:carcinoma|cancer|adenocarcinoma|melanoma|sarcoma|primary|neoplasm)s?\b", re.I
)
_SEPARATOR = re.compile(r"^[\s;,(\[]*")
# Where a clause of a statement starts: punctuation or a contrasting word.
_CLAUSE_START = re.compile(r"[;,(\[]|\b(?:although|though|but|however|whereas|while)\b", re.I)
# Organisms by kind, so that a kind names its organisms ("fungal abscess" / "Aspergillus
# abscess"): a difference in specificity of the cause, not another disease.
_ORGANISM_KINDS = {
    "fungal": """
        aspergillus aspergillosis aspergillary candida candidal candidiasis cryptococcal
        cryptococcus cryptococcosis mucor mucormycosis mucorales rhizopus zygomycosis
        histoplasma histoplasmosis coccidioides coccidioidal coccidioidomycosis blastomyces
        blastomycosis scedosporium scedosporiosis fusarium cladophialophora phaeohyphomycosis
    """,
    "bacterial": """
        pneumococcal pneumococcus streptococcal streptococcus staphylococcal staphylococcus
        meningococcal meningococcus hemophilus haemophilus listeria listerial klebsiella
        escherichia citrobacter pseudomonas enterococcal enterococcus nocardia nocardial
        nocardiosis proteus salmonella fusobacterium bacteroides actinomyces actinomycotic
        pyogenic
    """,
    "viral": """
        herpes herpetic hsv cmv cytomegalovirus varicella zoster vzv ebv enterovirus
        enteroviral parechovirus adenovirus influenza measles rubella jcv polyomavirus
        rabies arbovirus arboviral dengue zika hiv
    """,
    "parasitic": """
        toxoplasma toxoplasmosis cysticercosis cysticercal taenia echinococcus echinococcal
        hydatid schistosoma schistosomal plasmodium malaria amoebic naegleria acanthamoeba
        balamuthia trypanosoma
    """,
}
_ORGANISM_KIND = {word: kind for kind, words in _ORGANISM_KINDS.items() for word in words.split()}
_KIND_WORDS = {
    "fungal": "fungal",
    "fungus": "fungal",
    "bacterial": "bacterial",
    "viral": "viral",
    "parasitic": "parasitic",
}


def _with_kinds(words: tuple[str, ...] | list[str]) -> list[str]:
    """``words`` and the kind of each organism among them ("aspergillus": fungal)."""
    kinds = [_ORGANISM_KIND[w] for w in words if w in _ORGANISM_KIND]
    return [*words, *kinds]


def _only_kinds(words: tuple[str, ...], named: list[str]) -> bool:
    """Every word is a kind of organism (``fungal``) that an organism of ``named`` has, or
    an organism (``pneumococcal``) of a kind ``named`` states ("bacterial meningitis")."""
    organism_kinds = {_ORGANISM_KIND[w] for w in named if w in _ORGANISM_KIND}
    stated_kinds = {_KIND_WORDS[w] for w in named if w in _KIND_WORDS}
    return bool(words) and all(
        _KIND_WORDS.get(w) in organism_kinds or _ORGANISM_KIND.get(w) in stated_kinds for w in words
    )


# A place and the wider place (or the noun) it lies in: a side that writes the narrower one
# covers the wider one ("gout of a lumbar facet joint" / "spinal gout", "melanoma of the nasal
# cavity" / "sinonasal melanoma", "vacuolar myelopathy of AIDS" / "HIV vacuolar myelopathy").
_WIDER_PLACES = {
    "lumbar": "spinal",
    "cervical": "spinal",
    "thoracic": "spinal",
    "sacral": "spinal",
    "lumbosacral": "spinal",
    "vertebral": "spinal",
    "vertebra": "spinal",
    "facet": "spinal",
    "spine": "spinal",
    "nasal": "sinonasal",
    "paranasal": "sinonasal",
    "sinus": "sinonasal",
    "mandibular": "mandible",
    "maxillary": "maxilla",
    "calvarial": "skull",
    "calvarium": "skull",
    "calvaria": "skull",
    "orbital": "orbit",
    "hypophyseal": "pituitary",
    "sellar": "pituitary",
    "cerebellar": "cerebellum",
    "pontine": "pons",
    "thalamic": "thalamus",
    "aids": "hiv",
}


def _with_places(words: list[str]) -> list[str]:
    """``words`` and the wider place of each ("lumbar": spinal), for the fuzzy rule."""
    return [*words, *(_WIDER_PLACES[w] for w in words if w in _WIDER_PLACES)]


# "X-associated Y": Y is the disease, X its context ("VHL-associated hemangioblastoma").
_LINKS = {"associated": "with", "related": "to", "induced": "by", "mediated": "by"}
_ALTERNATIVE_LINKS = frozenset({"and", "or"})


def _single_letters(normalized: str) -> list[str]:
    """The one-letter words of a normalised text, in order ("type c", "l 2 ...": c, l)."""
    return [t for t in normalized.split() if len(t) == 1 and t.isalpha()]


# Prefixes of opposite meaning: one letter apart, they are no typo of each other
# ("microcystic" / "macrocystic", "hypertrophic" / "hypotrophic").
_OPPOSITE_PREFIXES = (
    ("micro", "macro"),
    ("hyper", "hypo"),
    ("intra", "extra"),
    ("supra", "infra"),
    ("endo", "exo"),
    ("pre", "post"),
    ("ante", "post"),
    ("hemi", "semi"),
)


def _opposite_prefixes(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` start with two prefixes of opposite meaning."""
    return any(
        (a.startswith(x) and b.startswith(y)) or (a.startswith(y) and b.startswith(x))
        for x, y in _OPPOSITE_PREFIXES
    )


def _head_tokens(tokens: list[str]) -> list[str]:
    """The tokens before the first context marker (all of them when the first is one)."""
    for index, token in enumerate(tokens):
        if index and token in _CONTEXT_MARKERS:
            return tokens[:index]
    return tokens


@dataclass(frozen=True)
class MatchExplanation:
    """Why the lexicon matcher decided what it did.

    Attributes:
        match: the verdict.
        rule: which rule decided (``"exact"``, ``"lexicon"``, ``"lexicon-different"``,
            ``"lexicon-context"``, ``"cause"``, ``"mentions-different"``, ``"too-vague"``,
            ``"qualifier-mismatch"``, ``"location-mismatch"``, ``"fuzzy"``, ``"no-match"``,
            ``"empty"``, ``"negated"``, ``"several-diseases"``, ``"initials"``).
        reference_entries: lexicon entries the reference names (the most specific of each
            is-a chain, negated mentions left out).
        candidate_entries: lexicon entries the candidate names, likewise.
        negated_entries: lexicon entries the candidate mentions only under a negation.
    """

    match: bool
    rule: str
    reference_entries: tuple[str, ...] = ()
    candidate_entries: tuple[str, ...] = ()
    negated_entries: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Resolution:
    entries: frozenset[str]  # the most specific entry of each is-a chain named
    complete: bool  # every word of the text is a lexicon name or an ignorable qualifier
    first: str | None = None  # the entry the main text mentions first


@dataclass(frozen=True)
class _Statement:
    """One side of a comparison, read by the matcher."""

    forms: tuple[str, ...]  # normalised forms of the affirmed text (negations removed)
    resolution: _Resolution
    negated_entries: frozenset[str]
    negated_words: tuple[tuple[str, ...], ...]  # fuzzy content words of each negated span
    # The parts set apart as alternatives (read_diagnosis) that name something: the entries
    # each names (empty for a term outside the lexicon) and its normalised text. Empty
    # when the text has a single part.
    parts: tuple[tuple[frozenset[str], str], ...]
    # Words of the main text before any context marker that no lexicon name explains and
    # that are not qualifiers: what the statement adds to the diseases it names.
    head_words: tuple[str, ...] = ()
    # The head names something else: a disease outside the lexicon or a changing word.
    head_names_other: bool = False
    # Entries named after a cause marker ("... due to X"): the stated cause.
    cause_entries: frozenset[str] = frozenset()


class LexiconDiagnosisMatcher:
    """The default diagnosis matcher: deterministic, offline, rule-based.

    **One prediction names one diagnosis.** Each string is first *read*
    (:func:`~novabench.lexicon.diagnoses.read_diagnosis`): negated mentions ("no
    evidence of X", "X ruled out", "not X", "without X", "excluded X", "X unlikely", "rather
    than X"...) are set aside, since they do not name X; double negatives ("cannot be
    excluded", "not ruled out") are hedges and negate nothing. The affirmed rest is
    normalised (:func:`normalize_diagnosis`; parenthesised abbreviations are kept as
    aliases) and looked up in the lexicon. A side *names* the most specific entry of each
    is-a chain it mentions: a disease stated with its own subtype or supertype is one
    diagnosis ("glioma, likely glioblastoma" names glioblastoma). A disease the text only
    compares with is not named ("glioblastoma-like metastasis", "metastasis mimicking
    meningioma" name metastasis). Then, in order:

    1. **Empty**: an empty candidate never matches; **exact**: two statements that
       normalise alike always match.
    2. **Negated**: a candidate whose every mention is negated never matches.
    3. **Several diseases** (the candidate names two or more lexicon entries, none an
       ancestor of another): a *hedge*, where an alternative separates two of them
       (``or``, ``vs``, ``versus``, ``and/or``, ``,``, ``;``, ``/``: "Glioma or
       toxoplasmosis", "Glioma, cerebral toxoplasmosis, lymphoma"), matches none of them:
       stuffing alternatives into one prediction buys no hit. A *compound* that states them
       together ("X with Y", "X in Y", "X secondary to Y", "X and Y") matches a reference
       that names every one of them (up to specificity: "glioblastoma with leptomeningeal
       metastases"); otherwise it names the disease it states first, the rest being
       context, and is judged as that disease by the rules below ("metastasis with
       hemorrhage" matches metastasis, not intracranial hemorrhage), except that a
       consequence (a hemorrhage, hydrocephalus, an infarct...) stated with its cause
       after ``due to``, ``secondary to``, ``from``, ``after``... names the cause
       ("subarachnoid hemorrhage due to a ruptured aneurysm" matches aneurysm). Either way one
       prediction earns at most what one diagnosis would. Words that are not diseases are
       not alternatives: "Glioblastoma, IDH-wildtype, left temporal" names glioblastoma.
       This rule reads the candidate only: a reference that names several diseases still
       matches a candidate naming one of them.
    4. **Exact forms**: any normalised form of the reference equals any form of the
       candidate.
    5. **Lexicon** (both sides fully recognised): each side is *recognised* when it is a
       lexicon name or alias as a whole, or when lexicon names found inside it (longest
       first) leave over only qualifiers that do not change the disease (laterality,
       location, acute/chronic, grade and molecular words; a left-over number does not
       qualify). A typo of a whole lexicon name (edit ratio >= ``fuzzy_threshold`` on the
       space-free name, same digits, one best entry) also counts. When both sides are
       recognised, they match iff some reference entry and some candidate entry are the
       same entry or one is an ancestor of the other (a difference in specificity:
       ``glioma`` / ``glioblastoma``), and the sides they state, when both state one, agree
       ("right MCA infarct" is no left MCA infarct). A *category* (``brain tumor``, ``infection``...) is
       never accepted in place of a specific disease. Different entries that are not
       ancestor and descendant never match, whatever words they share
       (``neurofibromatosis type 1`` / ``type 2``, ``HSV encephalitis`` / ``autoimmune
       encephalitis``, ``ependymoma`` / ``subependymoma``).
    6a. **Same disease in context** (a side only partly recognised): both sides name
       related entries as in rule 5 and the words that no lexicon name explains name no
       other disease. Only the words before the first context marker (``with``, ``in``,
       ``of``, ``due``, ``secondary``, ``from``, ``after``, ``associated``...) count: what
       follows is a cause, a feature or the patient ("GBM with central necrosis", "PML in
       a patient on natalizumab", "left MCA infarct"). Those head words must not read as a
       disease outside the lexicon (``-oma``, ``-itis``, ``syndrome`` with a name...) or a
       comparison (``-like``, ``mimic``, ``pseudo-``); when both sides have some, one
       side's must cover the other's (fuzzily), laterality must agree, and the less
       specific side may not have any ("fungal meningitis" is no tuberculous meningitis).
    6. **Different diseases mentioned**: if both sides mention lexicon entries (even
       partly recognised) and no pair is related as in rule 5, no match.
    7. **Too vague**: a side recognised as categories only does not match.
    8. **Several terms** (before the fuzzy rule, so for text outside the lexicon): a
       candidate with two or more alternatives that each name something is a hedge and
       does not match, unless the lexicon shows they are one disease. A part outside the
       lexicon names something when an explicit ``or``/``vs``/``versus`` sets it apart and
       it has a word that is not a qualifier ("Cockayne or Aicardi"), or, when
       only a comma, semicolon or slash does, when it reads as a disease (``disease``,
       ``syndrome``, ``tumor``, ``cyst``..., or a word ending in ``-oma``, ``-itis``,
       ``-osis``, ``-pathy``...: "Glioblastoma, Menkes disease"); other words after a comma
       are qualifiers ("Glioblastoma, ring-enhancing"). A part that starts with ``with``,
       ``in``, ``secondary to``, ``due to``, ``and``... continues the one before it.
    9. **Fuzzy tokens** (a side not recognised): numbers and single letters (``type 3``,
       ``type c``) must be identical when both sides state some, and laterality likewise;
       the content words (stopwords such as disease/syndrome/of/the/acute/chronic/brain
       removed, plural ``s`` dropped) of one side must all be *covered* by the other's: each
       has a word on the other side with :func:`edit_ratio` >= ``fuzzy_threshold``.
       Either direction suffices (specificity again), but the covered side needs a
       content word that is not a vague head word alone (``encephalopathy``,
       ``degeneration``, ``cyst``, ``tumor``...).
    10. **Initials** (only when rule 9 finds no match): an abbreviation outside the lexicon,
       3 to 8 letters with at least two capitals, matches the other side when it spells
       that side's initials, hyphenated parts counted apart and ``of``/``with``/``and``...
       left out, a closing ``disease``/``syndrome``/``disorder`` spelled or not ("MSGP" is
       microcephaly with simplified gyral pattern, "HHE syndrome" the
       hemiconvulsion-hemiplegia-epilepsy syndrome). An abbreviation the lexicon knows is
       judged by the lexicon ("HSE" is herpes simplex encephalitis, never the initials of
       something else).

    **Location** vetoes any match but an exact one: a compartment (epidural, subdural,
    subarachnoid, intraventricular, intraparenchymal) or the brain/spinal axis stated by
    both sides, in the text or in the name of an entry named (``SAH`` is subarachnoid),
    must agree: "intraventricular hemorrhage" is no subdural hematoma, "spinal cord
    infarction" no cerebellar infarct (rule ``"location-mismatch"``).

    A miss whose reference the candidate mentions only under a negation is explained as
    ``"negated"`` ("Glioblastoma (toxoplasmosis ruled out)" for toxoplasmosis), and so is a
    match vetoed because the candidate denies a specific word of the reference
    ("rhombencephalitis, Listeria unlikely" for Listeria rhombencephalitis).

    **Reading a name.** Before these rules, a text that is no lexicon name as it stands is
    read as one when: its two comma-separated parts, swapped, are one (an index heading,
    "Leukoencephalopathy, progressive multifocal"); a disease follows ``associated``,
    ``related``, ``induced`` or ``mediated`` (it is the diagnosis, the rest its context:
    "VHL-associated hemangioblastoma"); or it is one without its place words ("EV71
    brainstem encephalitis"). A one-letter word (``type A``) must agree for a whole-name
    typo, and letters and numbers must agree when both sides state them in context;
    prefixes of opposite meaning (``micro``/``macro``, ``hyper``/``hypo``...) are no typo.

    **Model answers.** A clause that only keeps a second disease open ("metastasis cannot
    be excluded", "although lymphoma is possible", "tuberculosis is also considered") ranks
    it below the main diagnosis and is left out when the rest names a specific disease;
    equal alternatives ("X versus Y", "X or Y") and a list of differentials stay a hedge
    (rule 3), unless the statement chooses one of them ("X vs Y, favouring X", "X (favoured)
    vs Y", "preferred diagnosis: X", "X over Y" for two diseases): the chosen one is its
    diagnosis. "X, given Y" (or "considering Y") gives Y as the reason for X, not as a second
    disease. ``non-X`` is one word and never names X. Words about the patient
    (``neonatal``, ``in a child``, ``immunocompromised``) qualify like a location. A kind of
    organism names its organisms (``fungal`` / ``cryptococcal``, ``bacterial`` /
    ``pneumococcal``: a difference in specificity of the cause; ``tuberculous`` is a kind of
    its own). "Metastatic X" names a metastasis, X its primary, and so does a cancer
    set apart after a metastasis ("metastases, likely melanoma"). A word set apart from the
    one disease it qualifies names its kind when the lexicon knows the pair ("basal
    meningitis, likely tuberculous" is tuberculous meningitis). A category named beside a
    specific disease qualifies it ("hyaline-vascular Castleman disease"), and so does a part
    set apart by a comma that names only a category ("cystic lesion with a mural nodule,
    likely hemangioblastoma"). When nothing
    matches, an abbreviation outside the lexicon (3 to 8 letters, two capitals) that
    spells consecutive words of the other side is read as those words and the pair judged
    again, provided the abbreviating side adds no word of its own before its context ("EAC
    cholesteatoma" is an external auditory canal cholesteatoma; "PCA infarct" is no
    posterior cortical atrophy; a side letter may stand beside it: "L MCA infarct").
    Clinical shorthand is written out first: "w/" with, "w/o" without, "s/p" after. An
    abbreviation inside a longer text is written as its entry's name when that makes a
    lexicon name ("giant cell GBM" is giant cell glioblastoma).

    Known limits: terms outside the lexicon joined by ``with`` or ``and``, or set apart by
    a comma when they do not read as diseases, count as one term with qualifiers, since
    the fuzzy rule cannot tell a second disease from a qualifier. A primary tumour named
    beside a metastasis reads as a second disease ("metastatic breast cancer"). Negation
    is read clause by clause, so "lymphoma and toxoplasmosis ruled out" negates both.

    Args:
        fuzzy_threshold: minimum :func:`edit_ratio` for two words (or two whole lexicon
            names) to count as the same, in (0, 1]. 0.88 tolerates one typo in 9 to 16
            letters and two in 17 to 24, and nothing in words of 8 letters or fewer.
        lexicon: the lexicon to use; the built-in one by default.

    Raises:
        NovaInputError: ``fuzzy_threshold`` outside (0, 1].

    Example:
        >>> match = LexiconDiagnosisMatcher()
        >>> match("Glioblastoma, IDH-wildtype", "likely GBM")
        True
        >>> match("Neurofibromatosis type 1", "NF2")
        False
        >>> match.explain("Tuberculous meningitis", "meningitis").rule
        'lexicon'
        >>> match("Progressive multifocal leukoencephalopathy", "Multiple sclerosis or PML")
        False
        >>> match.explain("Cerebral toxoplasmosis", "no evidence of toxoplasmosis").rule
        'negated'
        >>> match("Glioblastoma", "glioma, likely glioblastoma")
        True
        >>> match("Glioblastoma", "GBM with central necrosis")
        True
        >>> match.explain("Intraventricular hemorrhage", "subdural hematoma").match
        False
    """

    def __init__(
        self, fuzzy_threshold: float = 0.88, *, lexicon: DiagnosisLexicon | None = None
    ) -> None:
        if not isinstance(fuzzy_threshold, (int, float)) or not 0.0 < float(fuzzy_threshold) <= 1.0:
            raise NovaInputError(
                f"must be in (0, 1], got {fuzzy_threshold!r}",
                source="LexiconDiagnosisMatcher",
                field="fuzzy_threshold",
            )
        self.fuzzy_threshold = float(fuzzy_threshold)
        self.lexicon = lexicon if lexicon is not None else load_diagnosis_lexicon()
        self._resolve = lru_cache(maxsize=16384)(self._resolve_uncached)
        self._read = lru_cache(maxsize=16384)(self._read_uncached)

    @property
    def description(self) -> str:
        """A one-line description for reports.

        Example:
            >>> LexiconDiagnosisMatcher().description.startswith("lexicon matcher")
            True
        """
        return (
            f"lexicon matcher ({LEXICON_VERSION}, {len(self.lexicon)} entries, "
            f"fuzzy_threshold={self.fuzzy_threshold:g}, one diagnosis per prediction)"
        )

    def __repr__(self) -> str:
        return f"LexiconDiagnosisMatcher(fuzzy_threshold={self.fuzzy_threshold:g})"

    def __call__(self, reference: str, candidate: str) -> bool:
        """Whether ``candidate`` names the ``reference`` diagnosis (see the class docstring).

        Example:
            >>> LexiconDiagnosisMatcher()("Herpes simplex encephalitis", "autoimmune encephalitis")
            False
        """
        return self.explain(reference, candidate).match

    # -- resolution ------------------------------------------------------------------

    def _fuzzy_lookup(self, normalized: str) -> str | None:
        key = _key(normalized)
        if len(key) < 5:
            return None
        slack = int((1.0 - self.fuzzy_threshold) * len(key) / self.fuzzy_threshold)
        digits = re.findall(r"\d+", key)
        letters = _single_letters(normalized)
        best_ratio, best_names = 0.0, set()
        for other, entry in self.lexicon.keys_near_length(len(key), slack):
            if re.findall(r"\d+", other) != digits:
                continue
            longest = max(len(key), len(other))
            distance = _levenshtein(key, other, int((1.0 - self.fuzzy_threshold) * longest))
            ratio = 1.0 - distance / longest
            if ratio < self.fuzzy_threshold:
                continue
            if not any(
                _single_letters(form) == letters and self._words_agree(form, normalized)
                for name in entry.names
                if _key(form := normalize_diagnosis(name)) == other
            ):
                continue  # "D-2-" is no typo of "L-2-hydroxyglutaric", nor ethanol of methanol
            if ratio > best_ratio:
                best_ratio, best_names = ratio, {entry.name}
            elif ratio == best_ratio:
                best_names.add(entry.name)
        return next(iter(best_names)) if len(best_names) == 1 else None

    def _words_agree(self, name: str, text: str) -> bool:
        """Word by word, each pair is a typo at most (when both have as many words).

        The fuzzy rule's tolerance then holds per word, as :func:`edit_ratio` describes it:
        a word of 8 letters or fewer must be spelled exactly. Texts that split or join
        words ("leuko encephalopathy") are compared as a whole.
        """
        name_words, text_words = name.split(), text.split()
        if len(name_words) != len(text_words):
            return True
        return all(
            edit_ratio(a, b) >= self.fuzzy_threshold and not _opposite_prefixes(a, b)
            for a, b in zip(name_words, text_words)
        )

    def _most_specific(self, names: set[str] | frozenset[str]) -> frozenset[str]:
        """The entries no other entry of ``names`` descends from: one per is-a chain."""
        return frozenset(
            name
            for name in names
            if not any(other != name and self.lexicon.is_ancestor(name, other) for other in names)
        )

    def _named(self, names: set[str] | frozenset[str]) -> frozenset[str]:
        """The most specific entries; a category beside a specific disease is its qualifier
        ("hyaline-vascular Castleman disease" names no vascular disease besides)."""
        most_specific = self._most_specific(names)
        specific = frozenset(n for n in most_specific if not self.lexicon.get(n).is_category)
        return specific or most_specific

    def _resolve_uncached(self, forms: tuple[str, ...]) -> _Resolution:
        whole = {entry.name for form in forms if (entry := self.lexicon.lookup_key(_key(form)))}
        main = self.lexicon.lookup_key(_key(forms[0]))
        if main is not None:
            return _Resolution(self._most_specific(whole), True, main.name)
        mentioned: set[str] = set()
        first: str | None = None
        complete = True
        for form in forms:
            found, leftover = self.lexicon.find_mentions(form)
            if not self._explained(found, leftover):
                # Two-letter names ("MS") count only when they explain the rest of the text,
                # or the text before its context ("MS with Dawson fingers").
                short_found, short_leftover = self.lexicon.find_mentions(form, short_names=True)
                if self._explained(short_found, short_leftover):
                    found, leftover = short_found, short_leftover
                elif not found:
                    head = " ".join(_head_tokens(form.split()))
                    if head != form and self._explained(
                        *self.lexicon.find_mentions(head, short_names=True)
                    ):
                        found, leftover = short_found, short_leftover
            mentioned.update(entry.name for entry in found)
            first = first or (found[0].name if found else None)
            complete = complete and self._explained(found, leftover)
        if not complete or not mentioned:
            # Place words inside a name: "EV71 brainstem encephalitis" is EV71 encephalitis.
            compact = [t for t in forms[0].split() if t not in _PLACE_WORDS]
            placed = self.lexicon.lookup_key(_key_from_tokens(compact)) if compact else None
            if placed is not None and len(compact) < len(forms[0].split()):
                return _Resolution(self._named(whole | {placed.name}), True, placed.name)
        if whole:  # an abbreviation names an entry: "Left frontal glioblastoma (GBM)"
            return _Resolution(
                self._named(whole | mentioned), True, first or next(iter(sorted(whole)))
            )
        if mentioned:
            named = self._named(mentioned)
            if first is not None and first not in named:
                first = next(
                    (n for n in named if self._related(n, first, allow_categories=True)), min(named)
                )
            return _Resolution(named, complete, first)
        fuzzy = self._fuzzy_lookup(forms[0])
        return _Resolution(frozenset({fuzzy} if fuzzy else ()), fuzzy is not None, fuzzy)

    @staticmethod
    def _explained(found: list[Any], leftover: list[str]) -> bool:
        return bool(found) and not any(
            t not in _QUALIFYING_WORDS or _QUALIFIER.search(t) for t in leftover
        )

    def _names_a_term(self, normalized: str, explicit: bool) -> bool:
        """Whether a part outside the lexicon names something of its own (rule 8)."""
        tokens = normalized.split()
        if not any(
            t not in _QUALIFYING_WORDS
            and t not in _FUZZY_STOPWORDS
            and len(t) > 1
            and not _QUALIFIER.search(t)
            for t in tokens
        ):
            return False
        return explicit or any(
            t in _DISEASE_HEADS or (t.endswith(_DISEASE_ENDINGS) and t not in _NOT_DISEASES)
            for t in tokens
        )

    def _main_clauses(self, text: str) -> str:
        """``text`` without the clauses that only keep another disease open.

        "Glioblastoma; metastasis cannot be excluded" and "Glioblastoma, although lymphoma is
        possible" name glioblastoma: such a clause ranks its disease below the main one.
        Only when the rest names a specific lexicon disease; otherwise the text is kept.
        """
        starts = [0, *(m.start() for m in _CLAUSE_START.finditer(text) if m.start()), len(text)]
        clauses = [text[a:b] for a, b in zip(starts, starts[1:]) if text[a:b].strip()]
        if len(clauses) < 2:
            return text
        if _METASTASIS.search(clauses[0]):
            # "metastases, likely melanoma": a cancer after the metastasis is its primary
            clauses = [
                clauses[0],
                *(
                    " from " + _SEPARATOR.sub("", clause)
                    if _PRIMARY_CANCER.search(clause) and not _SUBORDINATE_CUES.search(clause)
                    else clause
                    for clause in clauses[1:]
                ),
            ]
            text = "".join(clauses)
        main = [c for c in clauses if not _SUBORDINATE_CUES.search(c)]
        if len(main) == len(clauses) or not main:
            return text
        kept = "".join(main)
        forms = diagnosis_aliases(read_diagnosis(kept).affirmed)
        if forms and any(
            not self.lexicon.get(name).is_category for name in self._resolve(forms).entries
        ):
            return kept
        return text

    def _chosen(self, text: str) -> str:
        """The alternative a statement chooses, or ``text`` when it chooses none.

        "Ependymoma vs medulloblastoma, favouring ependymoma", "vestibular schwannoma
        (favoured) vs meningioma" and "pilocytic astrocytoma over hemangioblastoma" name the
        chosen disease: the other alternatives are ranked below it, as a differential is.
        Only when the rest offers alternatives (two or more parts), and, for "X over Y", when
        both sides name specific lexicon diseases ("meningioma over the convexity" is a place).
        """
        for pattern in (_CHOICE_BEFORE, _CHOICE_AFTER):
            match = pattern.search(text)
            if match is None:
                continue
            chosen = match.group("chosen").strip()
            rest = (text[: match.start()] + " " + text[match.end() :]).strip(" ,;")
            if (
                _NON_ALNUM.sub("", chosen)
                and rest
                and (len(read_diagnosis(rest).segments) > 1 or pattern is _CHOICE_AFTER)
                and len(read_diagnosis(text).segments) > 1
            ):
                return chosen
        match = _CHOICE_OVER.match(text.strip())
        if match is not None:
            sides = [self._specific_entries(match.group(g)) for g in ("chosen", "other")]
            if all(sides):
                return match.group("chosen")
        return text

    def _specific_entries(self, text: str) -> frozenset[str]:
        """The specific (non-category) lexicon entries ``text`` names as a whole."""
        forms = diagnosis_aliases(read_diagnosis(text).affirmed)
        if not forms:
            return frozenset()
        resolution = self._resolve(forms)
        if not resolution.complete:
            return frozenset()
        return frozenset(
            name for name in resolution.entries if not self.lexicon.get(name).is_category
        )

    def _only_categories_of(self, entries: frozenset[str]) -> bool:
        """Whether every entry named is a category (none, too, counts as no specific one)."""
        return all(self.lexicon.get(name).is_category for name in entries)

    def _qualified(self, form: str, resolution: _Resolution) -> _Resolution:
        """A word set apart from the one disease it qualifies, read into its name when that
        names a kind of it: "basal meningitis, likely tuberculous" is tuberculous meningitis."""
        if len(resolution.entries) != 1:
            return resolution
        (named,) = resolution.entries
        found, leftover = self.lexicon.find_mentions(" ".join(_head_tokens(form.split())))
        for word in leftover:
            if word in _QUALIFYING_WORDS or _QUALIFIER.search(word):
                continue
            for name in self.lexicon.get(named).names:
                entry = self.lexicon.lookup_key(_key(f"{word} {normalize_diagnosis(name)}"))
                if entry is not None and self.lexicon.is_ancestor(named, entry.name):
                    rest = [w for w in leftover if w != word]
                    return _Resolution(
                        frozenset({entry.name}), self._explained(found, rest), entry.name
                    )
        return resolution

    def _spelled_out(self, form: str) -> str:
        """``form`` with an abbreviation inside it written as its entry's name, when that
        makes a lexicon name: "giant cell GBM" is giant cell glioblastoma."""
        tokens = form.split()
        if len(tokens) < 2:
            return form
        for index, token in enumerate(tokens):
            entry = self.lexicon.lookup_key(token) if len(token) >= 3 else None
            if entry is None or entry.is_category or token == _key(entry.name):
                continue
            spelled = [*tokens[:index], normalize_diagnosis(entry.name), *tokens[index + 1 :]]
            if self.lexicon.lookup_key(_key(" ".join(spelled))) is not None:
                return " ".join(spelled)
        return form

    def _metastasis_first(self, form: str) -> str:
        """ "metastatic X" read as "metastasis from X": X is the primary, not the diagnosis."""
        tokens = form.split()
        if len(tokens) < 2 or tokens[0] != "metastatic":
            return form
        metastasis = self.lexicon.lookup("metastasis")
        if metastasis is None:
            return form
        found, _ = self.lexicon.find_mentions(" ".join(tokens[1:]))
        if any(
            e.name == metastasis.name or self.lexicon.is_ancestor(metastasis.name, e.name)
            for e in found
        ):
            return form  # "metastatic leptomeningeal disease" is a kind of metastasis itself
        return " ".join(["metastasis", "from", *tokens[1:]])

    def _read_uncached(self, text: str) -> _Statement:
        reading = read_diagnosis(self._main_clauses(self._chosen(_expand_shorthand(text))))
        forms = tuple(
            form
            for form in (
                alias
                if self.lexicon.lookup_key(_key(alias))
                else _drop_likeness(
                    alias, lambda form: self.lexicon.lookup_key(_key(form)) is not None
                )
                for alias in diagnosis_aliases(reading.affirmed)
            )
            if form
        )
        if (
            len(reading.segments) == 2
            and not reading.explicit
            and forms
            and self.lexicon.lookup_key(_key(forms[0])) is None
        ):
            # An index heading, its head word first: "Leukoencephalopathy, progressive
            # multifocal" is progressive multifocal leukoencephalopathy.
            head, rest = (normalize_diagnosis(segment) for segment in reading.segments)
            if self.lexicon.lookup_key(_key(f"{rest} {head}")) is not None:
                forms = (f"{rest} {head}", *forms[1:])
        if forms and self.lexicon.lookup_key(_key(forms[0])) is None:
            forms = (self._spelled_out(forms[0]), *forms[1:])
        if forms and self.lexicon.lookup_key(_key(forms[0])) is None:
            forms = (self._head_first(self._metastasis_first(forms[0])), *forms[1:])
        resolution = self._resolve(forms) if forms else _Resolution(frozenset(), False)
        if forms and not resolution.complete:
            resolution = self._qualified(forms[0], resolution)
        negated_entries: set[str] = set()
        negated_words: list[tuple[str, ...]] = []
        for span in reading.negated:
            span_forms = diagnosis_aliases(span)
            if span_forms:
                negated_entries.update(self._resolve(span_forms).entries)
                negated_words.append(tuple(self._fuzzy_tokens(span_forms[0])[0]))
        parts: list[tuple[frozenset[str], str]] = []
        if len(reading.segments) > 1 and forms and self.lexicon.lookup_key(_key(forms[0])) is None:
            # A whole lexicon name is one diagnosis even with commas inside (MELAS spelt out).
            for segment in reading.segments:
                segment_forms = diagnosis_aliases(segment)
                if not segment_forms:
                    continue
                entries = self._resolve(segment_forms).entries
                if entries or self._names_a_term(segment_forms[0], reading.explicit):
                    parts.append((entries, segment_forms[0]))
            if not reading.explicit and any(not self._only_categories_of(e) for e, _ in parts):
                # "cystic lesion with a mural nodule, likely hemangioblastoma": a part naming
                # only a category (a mass, a cyst) describes the specific disease beside it
                parts = [(e, f) for e, f in parts if not (e and self._only_categories_of(e))]
        head_words, head_names_other = self._head_words(forms[0]) if forms else ((), False)
        return _Statement(
            forms,
            resolution,
            frozenset(negated_entries),
            tuple(negated_words),
            tuple(parts),
            head_words,
            head_names_other,
            self._cause_entries(forms[0]) if forms else frozenset(),
        )

    def _head_first(self, form: str) -> str:
        """``form`` with a disease named right after a link word put first, its context after.

        "von hippel lindau associated hemangioblastoma" reads as "hemangioblastoma associated
        with von hippel lindau". Only when a specific lexicon disease starts right after the
        link word, and the link word does not follow a connector ("with associated X").
        """
        tokens = form.split()
        for index in range(1, len(tokens) - 1):
            link = _LINKS.get(tokens[index])
            if link is None or tokens[index - 1] in _CONTEXT_MARKERS | _ALTERNATIVE_LINKS:
                continue
            starts_disease = any(
                (entry := self.lexicon.lookup_key(_key_from_tokens(tokens[index + 1 : end])))
                is not None
                and not entry.is_category
                for end in range(
                    index + 2, min(len(tokens), index + 1 + self.lexicon.max_alias_tokens) + 1
                )
            )
            if starts_disease:
                return " ".join([*tokens[index + 1 :], tokens[index], link, *tokens[:index]])
        return form

    def _head_words(self, form: str) -> tuple[tuple[str, ...], bool]:
        """What the text before its context adds to the diseases it names (see _Statement)."""
        if self.lexicon.lookup_key(_key(form)) is not None:
            # a whole lexicon name adds nothing, "with" inside it included ("progressive
            # encephalomyelitis with rigidity and myoclonus")
            return (), False
        tokens = form.split()
        head = _head_tokens(tokens)
        found, leftover = self.lexicon.find_mentions(" ".join(head))
        if not found:
            short_found, short_leftover = self.lexicon.find_mentions(
                " ".join(head), short_names=True
            )
            if short_found:
                leftover = short_leftover
        words = tuple(
            _singular(t)
            for t in leftover
            if t not in _QUALIFYING_WORDS
            and t not in _FUZZY_STOPWORDS
            and t not in _GENERIC_WORDS
            and t not in _DISEASE_HEADS
        )
        names_other = (
            any(t in _CHANGING_WORDS for t in tokens)
            # "pseudo-" outside a lexicon name ("pseudoaneurysm" is one) makes a lookalike
            or any(t.startswith("pseudo") for t in leftover)
            or any(
                w.endswith(_DISEASE_ENDINGS) and w not in _NOT_DISEASES and not _QUALIFIER.search(w)
                for w in words
            )
            or bool(
                # a name outside the lexicon: "Glioblastoma, Kluver-Bucy syndrome"
                any(t in _DISEASE_HEADS for t in leftover)
                and any(not _QUALIFIER.search(w) for w in words)
            )
        )
        return words, names_other

    def _cause_entries(self, form: str) -> frozenset[str]:
        """Entries the text names after a cause marker ("hemorrhage due to AVM": AVM)."""
        tokens = form.split()
        for start in range(1, len(tokens)):
            for marker in _CAUSE_MARKERS:
                if tuple(tokens[start : start + len(marker)]) == marker:
                    found, _ = self.lexicon.find_mentions(" ".join(tokens[start + len(marker) :]))
                    return frozenset(entry.name for entry in found)
        return frozenset()

    def _spells_initials(self, short_text: str, short: _Statement, long: _Statement) -> bool:
        """``short_text`` is an abbreviation outside the lexicon spelling ``long``'s initials.

        The abbreviation is a first word of 3 to 8 letters written with at least two
        capitals (so that no ordinary word reads as one); words after it must end the long
        side too ("HHE syndrome"). The initials are those of the long side's words, hyphenated
        parts counted apart and words such as "of", "with", "and" left out; a closing
        "disease"/"syndrome"/"disorder" may be spelled or not. The abbreviation may not be a
        lexicon name (the lexicon judges those), neither side may negate anything, and the
        long side must be a single statement.
        """
        if short.resolution.entries or len(long.parts) > 1:
            return False
        if short.negated_entries or long.negated_entries or long.negated_words:
            return False
        raw_words = short_text.split()
        if not raw_words or not _ACRONYM.match(raw_words[0]):
            return False
        if sum(char.isupper() for char in raw_words[0]) < 2:
            return False
        short_tokens, long_tokens = short.forms[0].split(), long.forms[0].split()
        acronym, tail = short_tokens[0], short_tokens[1:]
        if len(short_tokens) != len(raw_words) or acronym != raw_words[0].lower():
            return False  # the first word did not survive normalisation as one token
        if tail:
            if long_tokens[-len(tail) :] != tail:
                return False
            long_tokens = long_tokens[: -len(tail)]
        words = [w for w in long_tokens if w not in _INITIALS_SKIPPED]
        if any(not w.isalpha() for w in words):
            return False  # a number or code is no initial ("type 2")
        candidates = [words]
        if words and words[-1] in _INITIALS_OPTIONAL:
            candidates.append(words[:-1])
        return any(
            len(option) >= 3 and "".join(w[0] for w in option) == acronym for option in candidates
        )

    def _is_consequence(self, name: str) -> bool:
        return name in _CONSEQUENCES or bool(self.lexicon.ancestors(name) & _CONSEQUENCES)

    def _relaxed_match(
        self, ref: _Statement, cand: _Statement, reference: _Resolution, candidate: _Resolution
    ) -> bool:
        """Both sides name the same disease and their extra words name no other (rule 6a)."""
        if ref.head_names_other or cand.head_names_other or self._hedges_terms(cand):
            return False
        ref_sides = {t for t in ref.forms[0].split() if t in _LATERALITY}
        cand_sides = {t for t in cand.forms[0].split() if t in _LATERALITY}
        if ref_sides and cand_sides and ref_sides != cand_sides:
            return False  # "right MCA infarct" is no left one
        ref_qualifiers = self._fuzzy_tokens(ref.forms[0])[1]
        cand_qualifiers = self._fuzzy_tokens(cand.forms[0])[1]
        if ref_qualifiers and cand_qualifiers and ref_qualifiers != cand_qualifiers:
            return False  # "type A aortic dissection" is no type B one
        for r in reference.entries:
            for c in candidate.entries:
                if not self._related(r, c, allow_categories=False):
                    continue
                if r == c:
                    if (
                        not (ref.head_words and cand.head_words)
                        or self._covered(list(ref.head_words), _with_kinds(cand.head_words))
                        or self._covered(list(cand.head_words), _with_kinds(ref.head_words))
                    ):
                        return True
                elif self.lexicon.is_ancestor(r, c):
                    # The less specific side may not specify anything of its own
                    # ("fungal meningitis" is no tuberculous meningitis), but the kind of
                    # the other side's organism ("fungal" / "cryptococcal meningitis").
                    if not ref.head_words or _only_kinds(ref.head_words, self._words_of(cand, c)):
                        return True
                elif not cand.head_words or _only_kinds(cand.head_words, self._words_of(ref, r)):
                    return True
        return False

    @staticmethod
    def _words_of(statement: _Statement, entry: str) -> list[str]:
        """The words of a statement and of the name of an entry it names."""
        return [*statement.forms[0].split(), *normalize_diagnosis(entry).split()]

    def _location_conflict(
        self, ref: _Statement, cand: _Statement, reference: _Resolution, candidate: _Resolution
    ) -> bool:
        """The two sides put the disease in different places (a defining location)."""
        for classes in (_COMPARTMENTS, _AXES):
            # what each side writes, and what the names of the entries it names say
            # ("SAH" is subarachnoid)
            places = [
                {
                    classes[w]
                    for text in (*statement.forms, *resolution.entries)
                    for w in normalize_diagnosis(text).split()
                    if w in classes
                }
                for statement, resolution in ((ref, reference), (cand, candidate))
            ]
            if places[0] and places[1] and not places[0] & places[1]:
                return True
        return False

    def _related(self, a: str, b: str, *, allow_categories: bool) -> bool:
        if a == b:
            return True
        lexicon = self.lexicon
        if lexicon.is_ancestor(a, b):
            return allow_categories or not lexicon.get(a).is_category
        if lexicon.is_ancestor(b, a):
            return allow_categories or not lexicon.get(b).is_category
        return False

    def _any_related(
        self, left: frozenset[str], right: frozenset[str], *, allow_categories: bool
    ) -> bool:
        return any(
            self._related(a, b, allow_categories=allow_categories) for a in left for b in right
        )

    def _only_categories(self, resolution: _Resolution) -> bool:
        return (
            resolution.complete
            and bool(resolution.entries)
            and all(self.lexicon.get(name).is_category for name in resolution.entries)
        )

    def _hedges_entries(self, statement: _Statement) -> bool:
        """Two alternatives of the statement name unrelated lexicon entries (rule 3)."""
        named = [entries for entries, _ in statement.parts if entries]
        return any(
            not self._related(a, b, allow_categories=True)
            for i, left in enumerate(named)
            for right in named[i + 1 :]
            for a in left
            for b in right
        )

    def _hedges_terms(self, statement: _Statement) -> bool:
        """Two or more alternatives name something, not all one lexicon disease (rule 8)."""
        if len(statement.parts) < 2:
            return False
        entries = [named for named, _ in statement.parts]
        return not (all(entries) and len(self._most_specific(frozenset().union(*entries))) == 1)

    def _negates_reference(self, reference: _Statement, candidate: _Statement) -> bool:
        """The candidate mentions the reference's disease, but under a negation."""
        if self._any_related(
            candidate.negated_entries, reference.resolution.entries, allow_categories=False
        ):
            return True
        words = self._fuzzy_tokens(reference.forms[0])[0] if reference.forms else []
        return any(w not in _GENERIC_WORDS for w in words) and any(
            self._covered(words, list(negated)) for negated in candidate.negated_words
        )

    def _denies_part_of(self, reference: _Statement, candidate: _Statement) -> bool:
        """The candidate negates a specific word of the reference that it does not affirm."""
        if not reference.forms or not candidate.negated_words:
            return False
        reference_words = self._fuzzy_tokens(reference.forms[0])[0]
        affirmed = self._fuzzy_tokens(candidate.forms[0])[0] if candidate.forms else []
        for negated in candidate.negated_words:
            denied = [
                w
                for w in negated
                if w not in _GENERIC_WORDS and self._covered([w], reference_words)
            ]
            if denied and not any(self._covered([w], affirmed) for w in denied):
                return True
        return False

    # -- fuzzy tokens ------------------------------------------------------------------

    def _fuzzy_tokens(self, normalized: str) -> tuple[list[str], set[str], set[str]]:
        tokens = normalized.split()
        qualifiers = {
            t for t in tokens if _QUALIFIER.search(t) or len(t) == 1 or t in _GREEK_LETTER_NAMES
        }
        laterality = {t for t in tokens if t in _LATERALITY}
        content = [
            _singular(t)
            for t in tokens
            if t not in qualifiers
            and t not in laterality
            and t not in _FUZZY_STOPWORDS
            and t not in _PATIENT_WORDS
        ]
        return content, qualifiers, laterality

    def _covered(self, words: list[str], by: list[str]) -> bool:
        return all(
            any(
                edit_ratio(w, other) >= self.fuzzy_threshold and not _opposite_prefixes(w, other)
                for other in by
            )
            for w in words
        )

    def explain(self, reference: str, candidate: str) -> MatchExplanation:
        """The verdict together with the rule that decided it.

        Args:
            reference: the ground-truth diagnosis.
            candidate: a predicted diagnosis.

        Returns:
            A :class:`MatchExplanation`.

        Raises:
            NovaInputError: either argument is not a string.

        Example:
            >>> explanation = LexiconDiagnosisMatcher().explain("Ependymoma", "subependymoma")
            >>> explanation.match, explanation.rule
            (False, 'lexicon-different')
            >>> explanation = LexiconDiagnosisMatcher().explain("Lymphoma", "Glioma, lymphoma")
            >>> explanation.match, explanation.rule, explanation.candidate_entries
            (False, 'several-diseases', ('glioma', 'lymphoma'))
        """
        if not isinstance(reference, str) or not isinstance(candidate, str):
            raise NovaInputError(
                "reference and candidate must be strings",
                source="matcher",
                field="reference" if not isinstance(reference, str) else "candidate",
            )
        verdict = self._explain(reference, candidate)
        if verdict.match or verdict.rule in ("negated", "empty"):
            return verdict
        # An abbreviation spelling words the other side writes out ("EAC cholesteatoma" /
        # "external auditory canal cholesteatoma"): judged again with those words.
        for short, long, swap in ((candidate, reference, False), (reference, candidate, True)):
            expanded = self._expand_initials(short, long)
            if expanded is not None:
                pair = (expanded, long) if swap else (long, expanded)
                again = self._explain(*pair)
                if again.match:
                    return replace(again, rule="initials")
        return verdict

    def _expand_initials(self, short: str, long: str) -> str | None:
        """``short`` with each abbreviation outside the lexicon that spells the initials of
        consecutive words of ``long`` written as those words, or None when none does.

        An abbreviation is a word of 3 to 8 letters with at least two capitals (parts of a
        hyphenated word apart: "CM-AVM"); "of", "and", "with"... inside the run are skipped.
        A ``short`` that is a lexicon name as a whole is judged by the lexicon: "ICA aneurysm"
        is an internal carotid artery aneurysm, never an inferior cerebellar artery one.
        """
        if self.lexicon.lookup(short) is not None:
            return None
        long_words = [w for w in normalize_diagnosis(long).split() if w not in _INITIALS_SKIPPED]
        changed = False

        def expand(match: re.Match[str]) -> str:
            nonlocal changed
            word = match.group()
            if sum(c.isupper() for c in word) < 2 or self.lexicon.lookup(word) is not None:
                return word
            letters = word.lower()
            for start in range(len(long_words) - len(letters) + 1):
                run = long_words[start : start + len(letters)]
                if all(w.isalpha() for w in run) and "".join(w[0] for w in run) == letters:
                    changed = True
                    return " ".join(run)
            return word

        expanded = re.sub(r"(?<![A-Za-z0-9])[A-Za-z]{3,8}(?![A-Za-z0-9])", expand, short)
        if not changed:
            return None
        # The other words before any context must be the long side's own or qualifiers:
        # "PCA infarct" adds an infarct to whatever PCA spells.
        head = _head_tokens(normalize_diagnosis(expanded).split())
        if any(
            w not in long_words
            and w not in _QUALIFYING_WORDS
            and w not in _FUZZY_STOPWORDS
            and w not in _SIDE_LETTERS
            for w in head
        ):
            return None
        return expanded

    def _explain(self, reference: str, candidate: str) -> MatchExplanation:
        reference_forms = diagnosis_aliases(reference)
        candidate_forms = diagnosis_aliases(candidate)
        if not reference_forms or not candidate_forms:
            return MatchExplanation(False, "empty")
        if reference_forms == candidate_forms:
            return MatchExplanation(True, "exact")
        ref, cand = self._read(reference), self._read(candidate)
        verdict = self._decide(ref, cand)
        if verdict.rule == "no-match" and (
            self._spells_initials(candidate, cand, ref)
            or self._spells_initials(reference, ref, cand)
        ):
            verdict = replace(verdict, match=True, rule="initials")
        if (
            verdict.match
            and verdict.rule != "exact"
            and self._location_conflict(ref, cand, ref.resolution, cand.resolution)
        ):
            verdict = replace(verdict, match=False, rule="location-mismatch")
        if verdict.match and verdict.rule != "exact" and self._denies_part_of(ref, cand):
            # "rhombencephalitis, Listeria unlikely" rules out the Listeria of the reference
            verdict = replace(verdict, match=False, rule="negated")
        if not verdict.match and verdict.rule != "negated" and self._negates_reference(ref, cand):
            return replace(verdict, rule="negated")
        return verdict

    def _decide(self, ref: _Statement, cand: _Statement) -> MatchExplanation:
        reference, candidate = ref.resolution, cand.resolution
        named = dict(
            reference_entries=tuple(sorted(reference.entries)),
            candidate_entries=tuple(sorted(candidate.entries)),
            negated_entries=tuple(sorted(cand.negated_entries)),
        )
        if not cand.forms:
            return MatchExplanation(False, "negated", **named)
        if not ref.forms:
            return MatchExplanation(False, "empty", **named)
        if len(candidate.entries) > 1:
            if self._hedges_entries(cand):
                return MatchExplanation(False, "several-diseases", **named)
            if not all(
                any(self._related(c, r, allow_categories=True) for r in reference.entries)
                for c in candidate.entries
            ):
                # Not a compound the reference states in full: the compound names the
                # disease it states first ("metastasis with hemorrhage" names metastasis).
                head = frozenset(
                    c
                    for c in candidate.entries
                    if candidate.first is not None
                    and self._related(c, candidate.first, allow_categories=True)
                )
                if not self._any_related(head, reference.entries, allow_categories=True):
                    if (
                        head
                        and all(self._is_consequence(h) for h in head)
                        and self._any_related(
                            cand.cause_entries, reference.entries, allow_categories=False
                        )
                    ):
                        # A consequence stated with its cause names the cause:
                        # "subarachnoid hemorrhage due to a ruptured aneurysm".
                        return MatchExplanation(True, "cause", **named)
                    # The reference is among the diseases stated besides (or none is).
                    return MatchExplanation(False, "several-diseases", **named)
                candidate = _Resolution(head, candidate.complete, candidate.first)
        if set(ref.forms) & set(cand.forms):
            return MatchExplanation(True, "exact", **named)
        if reference.complete and candidate.complete and reference.entries and candidate.entries:
            if not self._any_related(reference.entries, candidate.entries, allow_categories=False):
                return MatchExplanation(False, "lexicon-different", **named)
            # sides stated on both must agree here too ("right MCA infarct" / "left MCA infarct")
            ref_sides = {t for t in ref.forms[0].split() if t in _LATERALITY}
            cand_sides = {t for t in cand.forms[0].split() if t in _LATERALITY}
            if ref_sides and cand_sides and ref_sides != cand_sides:
                return MatchExplanation(False, "qualifier-mismatch", **named)
            return MatchExplanation(True, "lexicon", **named)
        if (
            reference.entries
            and candidate.entries
            and self._relaxed_match(ref, cand, reference, candidate)
        ):
            return MatchExplanation(True, "lexicon-context", **named)
        if (
            reference.entries
            and candidate.entries
            and not self._any_related(reference.entries, candidate.entries, allow_categories=True)
        ):
            return MatchExplanation(False, "mentions-different", **named)
        if self._only_categories(reference) or self._only_categories(candidate):
            return MatchExplanation(False, "too-vague", **named)
        if self._hedges_terms(cand):
            return MatchExplanation(False, "several-diseases", **named)
        # With one part naming something, the other parts are its qualifiers: the fuzzy
        # rule compares that part ("Cockayne, Fahr disease" names Fahr disease).
        cand_form = cand.parts[0][1] if len(cand.parts) == 1 else cand.forms[0]
        ref_words, ref_qualifiers, ref_sides = self._fuzzy_tokens(ref.forms[0])
        cand_words, cand_qualifiers, cand_sides = self._fuzzy_tokens(cand_form)
        if (ref_qualifiers and cand_qualifiers and ref_qualifiers != cand_qualifiers) or (
            ref_sides and cand_sides and ref_sides != cand_sides
        ):
            return MatchExplanation(False, "qualifier-mismatch", **named)
        if not ref_words or not cand_words:
            return MatchExplanation(False, "no-match", **named)
        for words, other in ((ref_words, cand_words), (cand_words, ref_words)):
            if any(w not in _GENERIC_WORDS for w in words) and self._covered(
                words, _with_places(other)
            ):
                return MatchExplanation(True, "fuzzy", **named)
        return MatchExplanation(False, "no-match", **named)


def describe_matcher(matcher: Any) -> str:
    """A one-line description of a matcher, for reports.

    Uses the matcher's ``description`` attribute when it has one, otherwise its
    qualified name.

    Example:
        >>> describe_matcher(LexiconDiagnosisMatcher()).split(" (")[0]
        'lexicon matcher'
        >>> def same(reference, candidate): return reference == candidate
        >>> describe_matcher(same)
        'callable same'
    """
    description = getattr(matcher, "description", None)
    if isinstance(description, str) and description:
        return description
    name = getattr(matcher, "__qualname__", None) or type(matcher).__qualname__
    return f"callable {name}"
