"""The diagnosis lexicon: neurological diseases with synonyms, abbreviations and a hierarchy.

This module holds two things the diagnosis metric and the floor baseline share:

- the text normalisation of diagnosis strings (:func:`normalize_diagnosis`,
  :func:`diagnosis_aliases`), so a name reads the same wherever it is looked up;
- :class:`DiagnosisLexicon`, our own list of rare and common neurological diseases
  (demyelinating, infectious, inflammatory, neoplastic, vascular, metabolic/toxic,
  genetic/neurocutaneous, congenital, degenerative, traumatic). Each entry has a canonical
  name, synonyms and abbreviations, one or more parents (``glioblastoma`` is-a ``glioma``)
  and a few cue words of typical history and findings that a baseline can rank entries by.

Entries marked as *categories* (``intracranial neoplasm``, ``cns infection``...) group the
tree; they are too vague to count as a diagnosis, so the matcher never accepts a category
in place of a specific disease.

British and American spellings are folded by the normalisation (``haemorrhage`` and
``hemorrhage``, ``tumour`` and ``tumor``, ``leucodystrophy`` and ``leukodystrophy``), accents
are dropped (``Behçet``), possessives removed (``Creutzfeldt-Jakob's``), roman numerals after
``type``/``grade``/``Chiari``... become digits, and lookup keys ignore spaces and plural ``s``
(``NF-1`` == ``NF1`` == ``neurofibromatosis type I``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from itertools import pairwise

from novabench.errors import NovaInputError

__all__ = [
    "DiagnosisEntry",
    "DiagnosisLexicon",
    "DiagnosisReading",
    "LEXICON_VERSION",
    "diagnosis_aliases",
    "load_diagnosis_lexicon",
    "normalize_diagnosis",
    "read_diagnosis",
]

LEXICON_VERSION = "nova-diagnosis-lexicon-4"  # 4: 867 entries, merged diseases split (issue 20)
# The table itself is a data file beside the keyword lexicon (neuro_lexicon.json).
_TABLE_RESOURCE = "diagnosis_lexicon.txt"

# --------------------------------------------------------------------------------------
# Text normalisation
# --------------------------------------------------------------------------------------

_SPECIAL_LETTERS = str.maketrans(
    {
        "ß": "ss",
        "æ": "ae",
        "Æ": "ae",
        "ø": "o",
        "Ø": "o",
        "œ": "oe",
        "Œ": "oe",
        "ł": "l",
        "đ": "d",
        "’": "'",
        "‘": "'",
        "ʼ": "'",
    }
)

# British -> American, applied per token; ordered, each a (pattern, replacement).
_SPELLING_RULES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), replacement)
    for pattern, replacement in (
        (r"aem", "em"),  # haemorrhage, ischaemic, leukaemia, hyperammonaemia
        (r"^aesth|aesth", "esth"),
        (r"^ae", "e"),  # aetiology
        (r"^oe", "e"),  # oedema, oesophagus
        (r"oeb", "eb"),  # amoebic
        (r"coel", "cel"),  # coeliac
        (r"foet", "fet"),
        (r"rhoe", "rhe"),  # diarrhoea
        (r"pnoe", "pne"),  # apnoea
        (r"^(tum|behavi|fav|col|hum)our", r"\1or"),
        (r"^leuco", "leuko"),
        (r"^paed", "ped"),
        (r"sulph", "sulf"),
        (r"^grey$", "gray"),
        (r"^ageing$", "aging"),
        (r"^centre(s?)$", r"center\1"),
        (r"^fibre(s?)$", r"fiber\1"),
        (r"^haem", "hem"),
    )
)

_ROMAN = {
    "i": "1",
    "ii": "2",
    "iii": "3",
    "iv": "4",
    "v": "5",
    "vi": "6",
    "vii": "7",
    "viii": "8",
    "ix": "9",
    "x": "10",
    "xi": "11",
    "xii": "12",
}
# A roman numeral is read as a number only right after one of these words, so that the
# letters "i", "v" and "x" elsewhere ("x linked") stay letters.
_ROMAN_TRIGGERS = frozenset(
    {
        "type",
        "grade",
        "stage",
        "class",
        "group",
        "chiari",
        "who",
        "neurofibromatosis",
        "nf",
        "mps",
        "sca",
        "phase",
        "aciduria",
        "acidemia",
        "mucopolysaccharidosis",
        "fort",  # Le Fort II fracture
    }
)

_ARTICLES = frozenset({"a", "an", "the"})
_LETTER_TRIGGERS = _ROMAN_TRIGGERS | {"vitamin", "hepatitis", "influenza", "factor"}

# Hedges and report boilerplate removed wherever they occur (longest first).
_HEDGE_PHRASES: tuple[tuple[str, ...], ...] = tuple(
    sorted(
        (
            tuple(phrase.split())
            for phrase in (
                "most likely",
                "more likely",
                "likely",
                "most probably",
                "probable",
                "probably",
                "possible",
                "possibly",
                "presumed",
                "presumptive",
                "suspected",
                "suspicion of",
                "consistent with",
                "compatible with",
                "in keeping with",
                "suggestive of",
                "suggesting",
                "suspicious for",
                "suspicious of",
                "concerning for",
                "favor",
                "favored",
                "favoring",
                "highly",
                "cannot exclude",
                "cannot be excluded",
                "rule out",
                "radiological diagnosis",
                "imaging diagnosis",
                "features of",
                "findings of",
                "in favor of",
            )
        ),
        key=len,
        reverse=True,
    )
)
# Report labels removed only at the start of the text ("Final diagnosis: glioma").
_LEADING_LABELS: tuple[tuple[str, ...], ...] = (
    ("final", "diagnosis"),
    ("most", "likely", "diagnosis"),
    ("differential", "diagnosis"),
    ("primary", "diagnosis"),
    ("working", "diagnosis"),
    ("diagnosis",),
    ("answer",),
    ("dx",),
    ("imaging", "findings", "are"),
    ("findings", "are"),
    ("imaging", "findings"),
    ("findings",),
)

_PARENTHESIS = re.compile(r"[(\[]([^()\[\]]*)[)\]]")
_ABBREVIATION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9/\-]{0,11}$")
_POSSESSIVE = re.compile(r"(\w)'s\b")
_NON_ALNUM = re.compile(r"[^a-z0-9]+")


def _fold(text: str) -> str:
    """Lower-case, fold accents and special letters, unify apostrophes."""
    if text.isascii():  # nothing to fold: the same as the steps below, without them
        return text.lower()
    text = unicodedata.normalize("NFKC", text).translate(_SPECIAL_LETTERS)
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()


# Every spelling rule's pattern contains one of these: a token without any is left as it is,
# and most tokens are (the rules then cost one search instead of one per rule).
_SPELLING_TRIGGER = re.compile(r"ae|oe|our|leuco|sulph|grey|ageing|centre|fibre")


@lru_cache(maxsize=65536)
def _fix_spelling(token: str) -> str:
    if _SPELLING_TRIGGER.search(token) is None:
        return token
    for pattern, replacement in _SPELLING_RULES:
        token = pattern.sub(replacement, token)
    return token


def _phrases_by_first_word(
    phrases: Iterable[tuple[str, ...]],
) -> dict[str, tuple[tuple[str, ...], ...]]:
    """The phrases grouped by their first word, each group in the order given."""
    grouped: dict[str, list[tuple[str, ...]]] = {}
    for phrase in phrases:
        grouped.setdefault(phrase[0], []).append(phrase)
    return {word: tuple(group) for word, group in grouped.items()}


_HEDGES_BY_FIRST_WORD = _phrases_by_first_word(_HEDGE_PHRASES)


def _remove_phrases(
    tokens: list[str], phrases_by_first_word: dict[str, tuple[tuple[str, ...], ...]]
) -> list[str]:
    """``tokens`` without the phrases, the first one listed winning where several start."""
    kept: list[str] = []
    i = 0
    while i < len(tokens):
        for phrase in phrases_by_first_word.get(tokens[i], ()):
            if tuple(tokens[i : i + len(phrase)]) == phrase:
                i += len(phrase)
                break
        else:
            kept.append(tokens[i])
            i += 1
    return kept


def _normalize_tokens(text: str) -> list[str]:
    return list(_normalized_tuple(text))


@lru_cache(maxsize=65536)
def _normalized_tuple(text: str) -> tuple[str, ...]:
    folded = _fold(text)
    folded = _POSSESSIVE.sub(r"\1", folded).replace("'", "")
    tokens = [_fix_spelling(t) for t in _NON_ALNUM.sub(" ", folded).split()]
    for i in range(1, len(tokens)):
        if tokens[i] in _ROMAN and tokens[i - 1] in _ROMAN_TRIGGERS:
            tokens[i] = _ROMAN[tokens[i]]
    for label in _LEADING_LABELS:
        if tuple(tokens[: len(label)]) == label:
            tokens = tokens[len(label) :]
            break
    tokens = _remove_phrases(tokens, _HEDGES_BY_FIRST_WORD)
    # "a" after "type", "group", "vitamin"... is a letter, not an article ("type A").
    return tuple(
        t
        for i, t in enumerate(tokens)
        if t not in _ARTICLES or (t == "a" and i and tokens[i - 1] in _LETTER_TRIGGERS)
    )


def _split_abbreviations(text: str) -> tuple[str, list[str]]:
    """Take parenthesised abbreviations out of ``text``; other parentheses stay as words."""
    abbreviations: list[str] = []

    def replace(match: re.Match[str]) -> str:
        inner = match.group(1).strip()
        if _ABBREVIATION.match(inner) and (
            any(c.isupper() for c in inner) or any(c.isdigit() for c in inner)
        ):
            abbreviations.append(inner)
            return " "
        return f" {inner} "

    return _PARENTHESIS.sub(replace, text), abbreviations


def _check_text(text: object, name: str) -> str:
    if not isinstance(text, str):
        raise NovaInputError(f"expected a string, got {type(text).__name__}", field=name)
    return text


def normalize_diagnosis(text: str) -> str:
    """Normalise a diagnosis string for comparison.

    Lower-cases; folds accents and British spellings (``haemorrhage`` -> ``hemorrhage``,
    ``tumour`` -> ``tumor``, ``oedema`` -> ``edema``, ``leucodystrophy`` -> ``leukodystrophy``);
    drops possessives (``Creutzfeldt-Jakob's`` -> ``creutzfeldt jakob``), punctuation,
    articles, hedges anywhere (``likely``, ``probable``, ``possible``, ``suspected``,
    ``consistent with``, ``suggestive of``, ``in keeping with``, ``concerning for``...) and a
    leading label (``Final diagnosis:``); turns roman numerals after ``type``, ``grade``,
    ``Chiari``, ``NF``... into digits. A parenthesised abbreviation (``(PML)``) is removed
    from the text: :func:`diagnosis_aliases` keeps it as an alias. Other parenthesised
    words stay as words.

    Args:
        text: a diagnosis as written by a model or in the release.

    Returns:
        Space-separated lower-case tokens (possibly empty).

    Raises:
        NovaInputError: ``text`` is not a string.

    Example:
        >>> normalize_diagnosis("Most likely: Creutzfeldt-Jakob's disease (CJD).")
        'creutzfeldt jakob disease'
        >>> normalize_diagnosis("Consistent with a haemorrhagic tumour, WHO grade IV")
        'hemorrhagic tumor who grade 4'
    """
    text = _check_text(text, "text")
    main, _ = _split_abbreviations(text)
    return " ".join(_normalize_tokens(main))


def diagnosis_aliases(text: str) -> tuple[str, ...]:
    """The normalised forms under which a diagnosis string can be recognised.

    The first form is :func:`normalize_diagnosis` of the text; each parenthesised
    abbreviation follows as its own form, so ``"Progressive multifocal
    leukoencephalopathy (PML)"`` is known both by its name and by ``pml``. Empty forms
    and repeats are left out.

    Args:
        text: a diagnosis as written by a model or in the release.

    Returns:
        The normalised forms, main text first.

    Example:
        >>> diagnosis_aliases("Progressive multifocal leukoencephalopathy (PML)")
        ('progressive multifocal leukoencephalopathy', 'pml')
        >>> diagnosis_aliases("(GBM)")
        ('gbm',)
    """
    text = _check_text(text, "text")
    main, abbreviations = _split_abbreviations(text)
    forms: list[str] = []
    for form in [main, *abbreviations]:
        normalized = " ".join(_normalize_tokens(form))
        if normalized and normalized not in forms:
            forms.append(normalized)
    return tuple(forms)


# Words a lookup key leaves out when other words remain: "Krabbe" == "Krabbe disease",
# "West Nile virus encephalitis" == "West Nile encephalitis", "anti-LGI1 encephalitis" ==
# "LGI1 antibody encephalitis".
_KEY_OPTIONAL = frozenset(
    {"disease", "syndrome", "disorder", "virus", "anti", "antibody", "antibodies"}
)
# Words that name the same thing in a lookup key: poisoning by a substance is its
# intoxication and its toxicity ("cyanide intoxication" == "cyanide poisoning"); blood in
# a compartment is a hemorrhage ("intraventricular blood").
_SAME_WORD = {"intoxication": "poisoning", "toxicity": "poisoning", "blood": "hemorrhage"}
_PLURALS = {
    "metastases": "metastasis",
    "stenoses": "stenosis",
    "thromboses": "thrombosis",
    "sclerosis": "sclerosis",
    "fistulae": "fistula",
    "fistulas": "fistula",
}


def _singular(token: str) -> str:
    if token in _SAME_WORD:
        return _SAME_WORD[token]
    if token in _PLURALS:
        return _PLURALS[token]
    if token.endswith("sses"):
        return token[:-2]
    if len(token) > 4 and token.endswith("s") and not token.endswith(("ss", "is", "us", "ys")):
        return token[:-1]
    return token


def _key_from_tokens(tokens: Iterable[str]) -> str:
    tokens = list(tokens)
    words = [_singular(t) for t in tokens]
    core = [w for t, w in zip(tokens, words) if w not in _KEY_OPTIONAL and t not in _KEY_OPTIONAL]
    return "".join(core if core else words)


def _key(normalized: str) -> str:
    return _key_from_tokens(normalized.split())


# Words that may surround a recognised disease name without changing which disease it is:
# location, laterality, course, grade and molecular qualifiers, connectors.
_IGNORABLE_WORDS = frozenset(
    """
    with without and or vs versus of in on at to from by for due secondary associated related
    induced complicated complicating plus involving involvement extending
    left right bilateral unilateral midline multiple multifocal solitary single isolated primary
    acute subacute chronic early late recurrent recurrence relapsing residual progressive
    large small giant mild moderate severe extensive focal diffuse partial partially
    cystic solid hemorrhagic calcified necrotic enhancing nonenhancing ruptured unruptured
    thrombosed infiltrating infiltrative invasive exophytic
    type grade who low high stage form pattern variant subtype component phase
    idh wildtype wild mutant mutated mutation codeleted codeletion 1p 19q 1p19q h3 k27m k27
    altered mgmt methylated unmethylated braf v600e
    lesion lesions process changes change finding findings
    brain cerebral cerebrum cerebellar cerebellum brainstem stem pontine pons midbrain
    mesencephalic medulla medullary thalamic thalamus thalami basal ganglia ganglionic
    frontal temporal parietal occipital insular insula lobe lobes lobar hemispheric hemisphere
    callosal corpus callosum splenium genu periventricular intraventricular ventricle
    ventricles ventricular third fourth lateral sellar suprasellar parasellar pineal region
    spinal cord cervical thoracic lumbar conus intramedullary extramedullary intradural
    extradural dural leptomeningeal meningeal skull base cranial intracranial extra axial
    intra cns central nervous system supratentorial infratentorial posterior anterior fossa
    cerebellopontine angle cpa orbit orbital hippocampal hippocampus mesial deep
    superficial cortical subcortical juxtacortical white gray matter calvarial calvarium calvaria
""".split()
)


# --------------------------------------------------------------------------------------
# Reading a statement: negated mentions and alternatives
# --------------------------------------------------------------------------------------

# A chunk is a run of characters between white space and the punctuation below; hyphens,
# apostrophes and full stops stay inside it ("graft-versus-host", "Behçet's", "vs.").
_CHUNK = re.compile(r"[^\s,;:/()\[\]{}|?!]+")
# Punctuation that ends a negation's scope (a clause), and punctuation that separates
# alternatives ("glioma, lymphoma", "glioma/lymphoma", "glioma; lymphoma").
_CLAUSE_PUNCTUATION = frozenset(",;.?!()[]{}|\n")
_ALTERNATIVE_PUNCTUATION = frozenset(",;/|\n")
# Words that set alternatives apart whatever surrounds them.
_ALTERNATIVE_WORDS = frozenset({"or", "vs", "versus"})
# Words that end a clause like punctuation does ("not toxoplasmosis but lymphoma").
_CLAUSE_WORDS = frozenset({"but", "however", "although", "though", "whereas"})
# Words that carry no content of their own around a negation ("X has been ruled out").
_FILLERS = frozenset(
    {
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "has",
        "have",
        "had",
        "it",
        "this",
        "very",
        "highly",
        "much",
        "far",
        "considered",
        "felt",
    }
)
# A part after a comma that starts with one of these continues the diagnosis before it
# ("glioblastoma, with necrosis"): it is not a new alternative.
_CONTINUATIONS = frozenset(
    """
    with without in secondary due associated complicated complicating involving extending
    from plus and of on at to by for including eg ie such affecting causing caused related
    induced
""".split()
)

_NEGATE_FORWARD, _NEGATE_BACKWARD, _NEUTRAL = "forward", "backward", "neutral"
# Negation cues. A forward cue negates the rest of its clause ("no evidence of X", "not X",
# "without X", "X rather than Y"); a backward cue the clause before it ("X ruled out",
# "X is unlikely"). Either turns round when its own side of the clause is empty
# ("unlikely X", "X: no"). Neutral phrases are double negatives and boilerplate that
# negate nothing ("cannot be excluded", "not ruled out", "not otherwise specified").
# "absent", "absence of", "lack of" and "negative" are no cues: they name congenital
# diagnoses ("absent septum pellucidum") more often than they negate one.
_CUES: dict[tuple[str, ...], str] = {
    **{
        tuple(p.split()): _NEGATE_FORWARD
        for p in (
            "no",
            "not",
            "without",
            "negative for",
            "free of",
            "neither",
            "nor",
            "rather than",
            "instead of",
            "than",
            "excluding",
            "rules out",
            "ruling out",
        )
    },
    **{
        tuple(p.split()): _NEGATE_BACKWARD
        for p in (
            "ruled out",
            "excluded",
            "unlikely",
            "less likely",
            "not likely",
            "improbable",
            "not favored",
            "not favoured",
            "not supported",
            "not seen",
            "not present",
            "not identified",
        )
    },
    **{
        tuple(p.split()): _NEUTRAL
        for p in (
            "not only",
            "not otherwise specified",
            "not elsewhere classified",
            "no change",
            "no significant change",
            "no interval change",
        )
    },
}
_CUE_LENGTH = max(len(p) for p in _CUES)
# "cannot [be] excluded", "can't rule out", "not excluded", "not unlikely": negated negations.
_DOUBLE_NEGATORS = (
    ("cannot",),
    ("cant",),
    ("can", "not"),
    ("could", "not"),
    ("couldnt",),
    ("not",),
    ("never",),
)
_DOUBLE_FILLERS = frozenset(
    {
        "be",
        "been",
        "to",
        "yet",
        "completely",
        "entirely",
        "definitely",
        "fully",
        "safely",
        "reliably",
        "confidently",
        "firmly",
    }
)
_NEGATED_NEGATIONS = (("excluded",), ("exclude",), ("ruled", "out"), ("rule", "out"), ("unlikely",))


@dataclass(frozen=True)
class DiagnosisReading:
    """What a diagnosis statement affirms, what it negates, and its alternatives.

    Attributes:
        affirmed: the text with negated words and neutral double negatives blanked out
            (the text itself when nothing is negated).
        negated: the negated spans of the text, cue words included, in text order.
        segments: the affirmed text cut at separators of alternatives (``or``, ``vs``,
            ``versus``, ``,``, ``;``, ``/``), except where the next part continues the
            diagnosis ("with ...", "secondary to ..."); unnormalised. Parts without
            letters or digits are left out.
        explicit: the segments are set apart by an explicit ``or``, ``vs`` or ``versus``
            (so each is an alternative whatever its words); when only punctuation
            separates them, a part may be a qualifier ("Glioblastoma, IDH-wildtype").
    """

    affirmed: str
    negated: tuple[str, ...]
    segments: tuple[str, ...]
    explicit: bool = False


def _chunk_key(chunk: str) -> str:
    return _NON_ALNUM.sub("", _fold(chunk).replace("'", ""))


def _phrase_at(keys: list[str], position: int, end: int) -> tuple[int, str]:
    """The longest cue (or negated negation) starting at ``position``: (length, kind)."""
    for negator in _DOUBLE_NEGATORS:
        if tuple(keys[position : position + len(negator)]) == negator:
            after = position + len(negator)
            while after < end and keys[after] in _DOUBLE_FILLERS:
                after += 1
            for tail in _NEGATED_NEGATIONS:
                if after + len(tail) <= end and tuple(keys[after : after + len(tail)]) == tail:
                    return after + len(tail) - position, _NEUTRAL
    for length in range(min(_CUE_LENGTH, end - position), 0, -1):
        kind = _CUES.get(tuple(keys[position : position + length]))
        if kind is not None:
            return length, kind
    return 0, ""


@lru_cache(maxsize=16384)
def _read_diagnosis(text: str) -> DiagnosisReading:
    spans = [
        (m.start(), m.end(), key) for m in _CHUNK.finditer(text) if (key := _chunk_key(m.group()))
    ]
    if not spans:
        return DiagnosisReading(text, (), ())
    keys = [key for _, _, key in spans]
    count = len(spans)
    # A parenthesised abbreviation belongs to its clause: "no progressive multifocal
    # leukoencephalopathy (PML)" negates the PML too.
    transparent = []
    for i, (start, end, _) in enumerate(spans):
        before = text[spans[i - 1][1] if i else 0 : start]
        after = text[end : spans[i + 1][0] if i + 1 < count else len(text)]
        chunk = text[start:end]
        transparent.append(
            "(" in before
            and ")" in after
            and _ABBREVIATION.match(chunk) is not None
            and any(c.isupper() or c.isdigit() for c in chunk)
        )

    def clause_break(i: int) -> bool:
        """Whether a clause ends between chunk ``i - 1`` and chunk ``i``."""
        gap = set(text[spans[i - 1][1] : spans[i][0]])
        if transparent[i]:
            gap.discard("(")
        if transparent[i - 1]:
            gap.discard(")")
        previous = text[spans[i - 1][0] : spans[i - 1][1]]
        sentence_end = previous.endswith(".") and len(keys[i - 1]) >= 4
        return bool(gap & _CLAUSE_PUNCTUATION) or sentence_end

    clauses: list[list[int]] = [[]]
    for i in range(count):
        if keys[i] in _CLAUSE_WORDS:
            clauses.append([])
            continue
        if i and clause_break(i) and clauses[-1]:
            clauses.append([])
        clauses[-1].append(i)

    negated: set[int] = set()
    neutral: set[int] = set()
    for clause in clauses:
        words = [keys[i] for i in clause]
        position = 0
        while position < len(words):
            length, kind = _phrase_at(words, position, len(words))
            if not length:
                position += 1
                continue
            cue_end = position + length
            if kind == _NEUTRAL:
                neutral.update(clause[position:cue_end])
                position = cue_end
                continue
            words_before = any(w not in _FILLERS for w in words[:position])
            words_after = any(w not in _FILLERS for w in words[cue_end:])
            forward = words_after if kind == _NEGATE_FORWARD else not words_before
            if forward:
                negated.update(clause[position:])
                break
            # A backward cue reaches back to the clause start or to a "with": "glioblastoma
            # with toxoplasmosis ruled out" keeps the glioblastoma.
            start = max((at + 1 for at in range(position) if words[at] == "with"), default=0)
            negated.update(clause[start:cue_end])
            position = cue_end

    if negated:  # "not toxoplasmosis but lymphoma": the "but" goes with the negation
        neutral.update(i for i in range(count) if keys[i] in _CLAUSE_WORDS)
    blanked = list(text)
    for i in negated | neutral:
        start, end, _ = spans[i]
        blanked[start:end] = " " * (end - start)
    affirmed = "".join(blanked) if negated or neutral else text
    negated_spans: list[str] = []
    run: list[int] = []
    for i in sorted(negated) + [count + 1]:
        if run and i != run[-1] + 1:
            end = spans[run[-1]][1]
            if transparent[run[-1]]:  # the abbreviation's closing parenthesis
                end = text.index(")", end) + 1
            negated_spans.append(text[spans[run[0]][0] : end])
            run = []
        run.append(i)

    # Cut the affirmed text at separators of alternatives.
    kept = [i for i in range(count) if i not in negated and i not in neutral]
    cuts: list[tuple[int, int, bool]] = [(0, 0, False)]  # (start, end, an explicit word)
    for position, i in enumerate(kept):
        start, end, key = spans[i]
        if position:
            gap_start = spans[kept[position - 1]][1]
            marks = [at for at in range(gap_start, start) if text[at] in _ALTERNATIVE_PUNCTUATION]
            if marks:
                cuts.append((marks[0], marks[-1] + 1, False))
        if key in _ALTERNATIVE_WORDS:
            cuts.append((start, end, True))
    cuts.append((len(affirmed), len(affirmed), False))
    pieces: list[tuple[int, int]] = []
    after_word = False  # the last cut was an explicit word ("glioma and/or lymphoma")
    for (_, start, word), (end, _, _) in pairwise(cuts):
        after_word = after_word or word
        part = affirmed[start:end]
        if not _NON_ALNUM.sub("", _fold(part)):
            continue
        words = normalize_diagnosis(part).split()
        if pieces and not after_word and words and words[0] in _CONTINUATIONS:
            pieces[-1] = (pieces[-1][0], end)
        else:
            pieces.append((start, end))
        after_word = False
    segments = tuple(affirmed[start:end] for start, end in pieces)
    explicit = any(word for _, _, word in cuts) and len(segments) > 1
    return DiagnosisReading(affirmed, tuple(negated_spans), segments, explicit)


def read_diagnosis(text: str) -> DiagnosisReading:
    """Split a diagnosis statement into what it affirms, what it negates, and alternatives.

    Negation works on clauses: a clause ends at ``, ; . ? ! ( ) [ ] |`` or at ``but``,
    ``however``, ``although``..., while a parenthesised abbreviation stays in its clause.
    A forward cue (``no``, ``not``, ``without``, ``no evidence of``, ``negative for``,
    ``free of``, ``neither``/``nor``, ``rather than``, ``instead of``, ``excluding``...)
    negates the rest of its clause; a backward cue (``ruled out``, ``excluded``,
    ``unlikely``, ``less likely``, ``not seen``...) negates the clause before it, back to
    a ``with`` at most ("glioblastoma with toxoplasmosis ruled out"). A cue with nothing on its own side turns round (``unlikely X``,
    ``X: no``). Double negatives (``cannot be excluded``, ``can't rule out``, ``not
    ruled out``, ``not unlikely``) and boilerplate (``not otherwise specified``) negate
    nothing and are dropped.

    Args:
        text: a diagnosis as written by a model or in the release.

    Returns:
        A :class:`DiagnosisReading`.

    Raises:
        NovaInputError: ``text`` is not a string.

    Example:
        >>> reading = read_diagnosis("Glioblastoma (toxoplasmosis ruled out)")
        >>> normalize_diagnosis(reading.affirmed), reading.negated
        ('glioblastoma', ('toxoplasmosis ruled out',))
        >>> reading = read_diagnosis("Glioma, abscess or toxoplasmosis")
        >>> [part.strip() for part in reading.segments], reading.explicit
        (['Glioma', 'abscess', 'toxoplasmosis'], True)
        >>> read_diagnosis("Glioblastoma, with necrosis").segments
        ('Glioblastoma, with necrosis',)
        >>> normalize_diagnosis(read_diagnosis("Toxoplasmosis cannot be ruled out").affirmed)
        'toxoplasmosis'
    """
    return _read_diagnosis(_check_text(text, "text"))


# --------------------------------------------------------------------------------------
# Lexicon
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DiagnosisEntry:
    """One disease of the lexicon.

    Attributes:
        name: canonical name (American spelling, lower case except eponyms).
        synonyms: other names, abbreviations and spelling variants.
        parents: more general entries this one is a kind of (first one is the main parent).
        cues: typical history and imaging words, for ranking entries by a case text.
        group: the section of the lexicon (``"neoplastic"``, ``"vascular"``...).
        is_category: a grouping node too vague to count as a diagnosis on its own.
    """

    name: str
    synonyms: tuple[str, ...]
    parents: tuple[str, ...]
    cues: tuple[str, ...]
    group: str
    is_category: bool = False

    @property
    def parent(self) -> str | None:
        """The main parent's name, or ``None`` for a root."""
        return self.parents[0] if self.parents else None

    @property
    def names(self) -> tuple[str, ...]:
        """The canonical name followed by every synonym."""
        return (self.name, *self.synonyms)


class DiagnosisLexicon:
    """Disease entries with an alias index and the is-a hierarchy.

    Build it with :func:`load_diagnosis_lexicon` (cached); the constructor validates that
    names are unique, parents exist, the hierarchy has no cycle and no alias names two
    different entries.

    Args:
        entries: the entries, in table order.

    Raises:
        NovaInputError: on a duplicate name, an unknown parent, a cycle or an ambiguous alias.

    Example:
        >>> lexicon = load_diagnosis_lexicon()
        >>> lexicon.lookup("GBM").name
        'glioblastoma'
        >>> lexicon.is_ancestor("glioma", "glioblastoma")
        True
    """

    def __init__(self, entries: Iterable[DiagnosisEntry]) -> None:
        self.entries: tuple[DiagnosisEntry, ...] = tuple(entries)
        self._by_name: dict[str, DiagnosisEntry] = {}
        for entry in self.entries:
            if entry.name in self._by_name:
                raise NovaInputError(
                    "duplicate lexicon entry",
                    source="diagnosis lexicon",
                    record=entry.name,
                    field="name",
                )
            self._by_name[entry.name] = entry
        for entry in self.entries:
            for parent in entry.parents:
                if parent not in self._by_name:
                    raise NovaInputError(
                        f"unknown parent {parent!r}",
                        source="diagnosis lexicon",
                        record=entry.name,
                        field="parents",
                    )
        self._ancestors: dict[str, frozenset[str]] = {}
        for entry in self.entries:
            self._ancestors[entry.name] = self._collect_ancestors(entry.name, ())
        self._index: dict[str, str] = {}
        self.max_alias_tokens = 1
        for entry in self.entries:
            for alias in entry.names:
                normalized = normalize_diagnosis(alias)
                key = _key(normalized)
                if not key:
                    continue
                owner = self._index.setdefault(key, entry.name)
                if owner != entry.name:
                    raise NovaInputError(
                        f"alias {alias!r} also names {owner!r}",
                        source="diagnosis lexicon",
                        record=entry.name,
                        field="synonyms",
                    )
                self.max_alias_tokens = max(self.max_alias_tokens, len(normalized.split()))
        self._keys_by_length: dict[int, list[str]] = {}
        for key in self._index:
            self._keys_by_length.setdefault(len(key), []).append(key)

    def _collect_ancestors(self, name: str, path: tuple[str, ...]) -> frozenset[str]:
        if name in path:
            raise NovaInputError(
                "cycle in the hierarchy: " + " -> ".join((*path, name)),
                source="diagnosis lexicon",
                record=name,
                field="parents",
            )
        found: set[str] = set()
        for parent in self._by_name[name].parents:
            found.add(parent)
            found |= self._collect_ancestors(parent, (*path, name))
        return frozenset(found)

    def __len__(self) -> int:
        return len(self.entries)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def get(self, name: str) -> DiagnosisEntry:
        """The entry with this canonical name.

        Args:
            name: a canonical name.

        Raises:
            KeyError: no entry has that name.

        Example:
            >>> load_diagnosis_lexicon().get("tuberculous meningitis").parents
            ('meningitis', 'CNS tuberculosis')
        """
        return self._by_name[name]

    def ancestors(self, name: str) -> frozenset[str]:
        """Names of every entry above ``name`` in the hierarchy (all paths).

        Example:
            >>> sorted(load_diagnosis_lexicon().ancestors("pilomyxoid astrocytoma"))[:3]
            ['astrocytoma', 'glioma', 'intracranial neoplasm']
        """
        return self._ancestors[name]

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        """Whether ``ancestor`` lies above ``descendant`` in the hierarchy.

        Example:
            >>> load_diagnosis_lexicon().is_ancestor("meningitis", "tuberculous meningitis")
            True
        """
        return ancestor in self._ancestors[descendant]

    def lookup(self, text: str) -> DiagnosisEntry | None:
        """The entry whose name or alias is exactly ``text`` (after normalisation).

        Spaces, plural ``s`` and a trailing ``disease``/``syndrome``/``disorder`` do not
        matter; nothing else is guessed.

        Example:
            >>> load_diagnosis_lexicon().lookup("Wilson's").name
            'Wilson disease'
            >>> load_diagnosis_lexicon().lookup("glioma of the left frontal lobe") is None
            True
        """
        name = self._index.get(_key(normalize_diagnosis(text)))
        return self._by_name[name] if name else None

    def lookup_key(self, key: str) -> DiagnosisEntry | None:
        """The entry indexed under a lookup key built like the index (internal helper).

        Example:
            >>> load_diagnosis_lexicon().lookup_key("nf1").name
            'neurofibromatosis type 1'
        """
        name = self._index.get(key)
        return self._by_name[name] if name else None

    def keys_near_length(self, length: int, slack: int) -> Iterable[tuple[str, DiagnosisEntry]]:
        """Index keys whose length is within ``slack`` of ``length`` (for fuzzy lookups).

        Example:
            >>> any(e.name == "glioma" for _, e in load_diagnosis_lexicon().keys_near_length(6, 0))
            True
        """
        for size in range(max(1, length - slack), length + slack + 1):
            for key in self._keys_by_length.get(size, ()):
                yield key, self._by_name[self._index[key]]

    def find_mentions(
        self, normalized: str, *, short_names: bool = False
    ) -> tuple[list[DiagnosisEntry], list[str]]:
        """Disease names mentioned inside a normalised text, and the words left over.

        Spans are matched longest first and never overlap. Names of fewer than three
        letters (``ms``, ``ad``) are only looked for with ``short_names=True``, since they
        collide with ordinary words.

        Args:
            normalized: output of :func:`normalize_diagnosis`.
            short_names: also match names of one or two letters.

        Returns:
            ``(entries in text order, tokens not covered by any mention)``.

        Example:
            >>> found, rest = load_diagnosis_lexicon().find_mentions("right temporal glioblastoma")
            >>> [e.name for e in found], rest
            (['glioblastoma'], ['right', 'temporal'])
        """
        tokens = normalized.split()
        used = [False] * len(tokens)
        found: list[tuple[int, str]] = []
        for length in range(min(self.max_alias_tokens, len(tokens)), 0, -1):
            for start in range(len(tokens) - length + 1):
                if any(used[start : start + length]):
                    continue
                span = tokens[start : start + length]
                key = _key_from_tokens(span)
                if key not in self._index:
                    continue
                if len(key) < 3 and not short_names:
                    continue
                found.append((start, self._index[key]))
                used[start : start + length] = [True] * length
        found.sort()
        leftover = [t for t, u in zip(tokens, used) if not u]
        return [self._by_name[name] for _, name in found], leftover


def _parse_table(table: str, source: str = _TABLE_RESOURCE) -> list[DiagnosisEntry]:
    entries: list[DiagnosisEntry] = []
    group = ""
    for line_number, raw in enumerate(table.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("##"):
            group = line.lstrip("#").strip()
            continue
        if line.startswith("#"):
            continue
        fields = [f.strip() for f in line.split("|")]
        if len(fields) != 4 or not fields[0]:
            raise NovaInputError(
                "expected 'name | synonyms | parents | cues'",
                source=source,
                record=f"line {line_number}",
            )
        name, synonyms, parents, cues = fields
        is_category = name.startswith("*")

        def split(cell: str) -> tuple[str, ...]:
            return tuple(part.strip() for part in cell.split(";") if part.strip())

        entries.append(
            DiagnosisEntry(
                name=name.lstrip("*").strip(),
                synonyms=split(synonyms),
                parents=split(parents),
                cues=split(cues),
                group=group,
                is_category=is_category,
            )
        )
    return entries


@lru_cache(maxsize=1)
def load_diagnosis_lexicon() -> DiagnosisLexicon:
    """The built-in diagnosis lexicon (built once, then cached).

    Returns:
        A :class:`DiagnosisLexicon`; ``.entries`` lists every disease with its canonical
        name, synonyms, parents and cue words.

    Example:
        >>> lexicon = load_diagnosis_lexicon()
        >>> len(lexicon.entries) > 200
        True
        >>> entry = lexicon.lookup("Devic's disease")
        >>> entry.name, entry.parent
        ('neuromyelitis optica spectrum disorder', 'demyelinating disease')
    """
    table = resources.files("novabench").joinpath("resources").joinpath(_TABLE_RESOURCE)
    return DiagnosisLexicon(_parse_table(table.read_text(encoding="utf-8")))
