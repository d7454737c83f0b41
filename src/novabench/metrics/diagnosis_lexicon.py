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
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise
from typing import Iterable

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

LEXICON_VERSION = "nova-diagnosis-lexicon-1"

# --------------------------------------------------------------------------------------
# Text normalisation
# --------------------------------------------------------------------------------------

_SPECIAL_LETTERS = str.maketrans({"ß": "ss", "æ": "ae", "Æ": "ae", "ø": "o", "Ø": "o", "œ": "oe",
                                  "Œ": "oe", "ł": "l", "đ": "d", "’": "'", "‘": "'", "ʼ": "'"})

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

_ROMAN = {"i": "1", "ii": "2", "iii": "3", "iv": "4", "v": "5", "vi": "6", "vii": "7",
          "viii": "8", "ix": "9", "x": "10", "xi": "11", "xii": "12"}
# A roman numeral is read as a number only right after one of these words, so that the
# letters "i", "v" and "x" elsewhere ("x linked") stay letters.
_ROMAN_TRIGGERS = frozenset({"type", "grade", "stage", "class", "group", "chiari", "who",
                             "neurofibromatosis", "nf", "mps", "sca", "phase", "aciduria",
                             "acidemia", "mucopolysaccharidosis"})

_ARTICLES = frozenset({"a", "an", "the"})

# Hedges and report boilerplate removed wherever they occur (longest first).
_HEDGE_PHRASES: tuple[tuple[str, ...], ...] = tuple(
    sorted(
        (tuple(phrase.split()) for phrase in (
            "most likely", "more likely", "likely", "most probably", "probable", "probably",
            "possible", "possibly", "presumed", "presumptive", "suspected", "suspicion of",
            "consistent with", "compatible with", "in keeping with", "suggestive of",
            "suggesting", "suspicious for", "suspicious of", "concerning for", "favor",
            "favored", "favoring", "highly", "cannot exclude", "cannot be excluded",
            "rule out", "radiological diagnosis", "imaging diagnosis", "features of",
            "findings of", "in favor of",
        )),
        key=len,
        reverse=True,
    )
)
# Report labels removed only at the start of the text ("Final diagnosis: glioma").
_LEADING_LABELS: tuple[tuple[str, ...], ...] = (
    ("final", "diagnosis"), ("most", "likely", "diagnosis"), ("differential", "diagnosis"),
    ("primary", "diagnosis"), ("working", "diagnosis"), ("diagnosis",), ("answer",), ("dx",),
    ("imaging", "findings", "are"), ("findings", "are"), ("imaging", "findings"), ("findings",),
)

_PARENTHESIS = re.compile(r"[(\[]([^()\[\]]*)[)\]]")
_ABBREVIATION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9/\-]{0,11}$")
_POSSESSIVE = re.compile(r"(\w)'s\b")
_NON_ALNUM = re.compile(r"[^a-z0-9]+")


def _fold(text: str) -> str:
    """Lower-case, fold accents and special letters, unify apostrophes."""
    text = unicodedata.normalize("NFKC", text).translate(_SPECIAL_LETTERS)
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()


def _fix_spelling(token: str) -> str:
    for pattern, replacement in _SPELLING_RULES:
        token = pattern.sub(replacement, token)
    return token


def _remove_phrases(tokens: list[str], phrases: Iterable[tuple[str, ...]]) -> list[str]:
    phrases = tuple(phrases)
    kept: list[str] = []
    i = 0
    while i < len(tokens):
        for phrase in phrases:
            if tuple(tokens[i:i + len(phrase)]) == phrase:
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
        if tuple(tokens[:len(label)]) == label:
            tokens = tokens[len(label):]
            break
    tokens = _remove_phrases(tokens, _HEDGE_PHRASES)
    return tuple(t for t in tokens if t not in _ARTICLES)


def _split_abbreviations(text: str) -> tuple[str, list[str]]:
    """Take parenthesised abbreviations out of ``text``; other parentheses stay as words."""
    abbreviations: list[str] = []

    def replace(match: re.Match[str]) -> str:
        inner = match.group(1).strip()
        if _ABBREVIATION.match(inner) and (any(c.isupper() for c in inner) or any(c.isdigit() for c in inner)):
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


# Words a lookup key leaves out when other words remain: "Krabbe" == "Krabbe disease".
_KEY_OPTIONAL = frozenset({"disease", "syndrome", "disorder"})
_PLURALS = {"metastases": "metastasis", "stenoses": "stenosis", "thromboses": "thrombosis",
            "sclerosis": "sclerosis", "fistulae": "fistula", "fistulas": "fistula"}


def _singular(token: str) -> str:
    if token in _PLURALS:
        return _PLURALS[token]
    if token.endswith("sses"):
        return token[:-2]
    if len(token) > 4 and token.endswith("s") and not token.endswith(("ss", "is", "us", "ys")):
        return token[:-1]
    return token


def _key_from_tokens(tokens: Iterable[str]) -> str:
    words = [_singular(t) for t in tokens]
    core = [w for w in words if w not in _KEY_OPTIONAL]
    return "".join(core if core else words)


def _key(normalized: str) -> str:
    return _key_from_tokens(normalized.split())


# Words that may surround a recognised disease name without changing which disease it is:
# location, laterality, course, grade and molecular qualifiers, connectors.
_IGNORABLE_WORDS = frozenset("""
    with without and or vs versus of in on at to from by for due secondary associated related
    induced complicated complicating plus involving involvement extending
    left right bilateral unilateral midline multiple multifocal solitary single isolated
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
    superficial cortical subcortical juxtacortical white gray matter
""".split())


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
_FILLERS = frozenset({"is", "are", "was", "were", "be", "been", "being", "has", "have", "had",
                      "it", "this", "very", "highly", "much", "far", "considered", "felt"})
# A part after a comma that starts with one of these continues the diagnosis before it
# ("glioblastoma, with necrosis"): it is not a new alternative.
_CONTINUATIONS = frozenset("""
    with without in secondary due associated complicated complicating involving extending
    from plus and of on at to by for including eg ie such affecting causing caused related
    induced
""".split())

_NEGATE_FORWARD, _NEGATE_BACKWARD, _NEUTRAL = "forward", "backward", "neutral"
# Negation cues. A forward cue negates the rest of its clause ("no evidence of X", "not X",
# "without X", "X rather than Y"); a backward cue the clause before it ("X ruled out",
# "X is unlikely"). Either turns round when its own side of the clause is empty
# ("unlikely X", "X: no"). Neutral phrases are double negatives and boilerplate that
# negate nothing ("cannot be excluded", "not ruled out", "not otherwise specified").
# "absent", "absence of", "lack of" and "negative" are no cues: they name congenital
# diagnoses ("absent septum pellucidum") more often than they negate one.
_CUES: dict[tuple[str, ...], str] = {
    **{tuple(p.split()): _NEGATE_FORWARD for p in (
        "no", "not", "without", "negative for", "free of", "neither", "nor", "rather than",
        "instead of", "than", "excluding", "rules out", "ruling out")},
    **{tuple(p.split()): _NEGATE_BACKWARD for p in (
        "ruled out", "excluded", "unlikely", "less likely", "not likely", "improbable",
        "not favored", "not favoured", "not supported", "not seen", "not present",
        "not identified")},
    **{tuple(p.split()): _NEUTRAL for p in (
        "not only", "not otherwise specified", "not elsewhere classified", "no change",
        "no significant change", "no interval change")},
}
_CUE_LENGTH = max(len(p) for p in _CUES)
# "cannot [be] excluded", "can't rule out", "not excluded", "not unlikely": negated negations.
_DOUBLE_NEGATORS = ((("cannot",), ("cant",), ("can", "not"), ("could", "not"), ("couldnt",),
                     ("not",), ("never",)))
_DOUBLE_FILLERS = frozenset({"be", "been", "to", "yet", "completely", "entirely", "definitely",
                             "fully", "safely", "reliably", "confidently", "firmly"})
_NEGATED_NEGATIONS = (("excluded",), ("exclude",), ("ruled", "out"), ("rule", "out"),
                      ("unlikely",))


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
        if tuple(keys[position:position + len(negator)]) == negator:
            after = position + len(negator)
            while after < end and keys[after] in _DOUBLE_FILLERS:
                after += 1
            for tail in _NEGATED_NEGATIONS:
                if after + len(tail) <= end and tuple(keys[after:after + len(tail)]) == tail:
                    return after + len(tail) - position, _NEUTRAL
    for length in range(min(_CUE_LENGTH, end - position), 0, -1):
        kind = _CUES.get(tuple(keys[position:position + length]))
        if kind is not None:
            return length, kind
    return 0, ""


@lru_cache(maxsize=16384)
def _read_diagnosis(text: str) -> DiagnosisReading:
    spans = [(m.start(), m.end(), key) for m in _CHUNK.finditer(text)
             if (key := _chunk_key(m.group()))]
    if not spans:
        return DiagnosisReading(text, (), ())
    keys = [key for _, _, key in spans]
    count = len(spans)
    # A parenthesised abbreviation belongs to its clause: "no progressive multifocal
    # leukoencephalopathy (PML)" negates the PML too.
    transparent = []
    for i, (start, end, _) in enumerate(spans):
        before = text[spans[i - 1][1] if i else 0:start]
        after = text[end:spans[i + 1][0] if i + 1 < count else len(text)]
        chunk = text[start:end]
        transparent.append("(" in before and ")" in after and _ABBREVIATION.match(chunk) is not None
                           and any(c.isupper() or c.isdigit() for c in chunk))

    def clause_break(i: int) -> bool:
        """Whether a clause ends between chunk ``i - 1`` and chunk ``i``."""
        gap = set(text[spans[i - 1][1]:spans[i][0]])
        if transparent[i]:
            gap.discard("(")
        if transparent[i - 1]:
            gap.discard(")")
        previous = text[spans[i - 1][0]:spans[i - 1][1]]
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
            negated_spans.append(text[spans[run[0]][0]:end])
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
                raise NovaInputError("duplicate lexicon entry", source="diagnosis lexicon",
                                     record=entry.name, field="name")
            self._by_name[entry.name] = entry
        for entry in self.entries:
            for parent in entry.parents:
                if parent not in self._by_name:
                    raise NovaInputError(f"unknown parent {parent!r}", source="diagnosis lexicon",
                                         record=entry.name, field="parents")
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
                    raise NovaInputError(f"alias {alias!r} also names {owner!r}",
                                         source="diagnosis lexicon", record=entry.name,
                                         field="synonyms")
                self.max_alias_tokens = max(self.max_alias_tokens, len(normalized.split()))
        self._keys_by_length: dict[int, list[str]] = {}
        for key in self._index:
            self._keys_by_length.setdefault(len(key), []).append(key)

    def _collect_ancestors(self, name: str, path: tuple[str, ...]) -> frozenset[str]:
        if name in path:
            raise NovaInputError("cycle in the hierarchy: " + " -> ".join((*path, name)),
                                 source="diagnosis lexicon", record=name, field="parents")
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
                if any(used[start:start + length]):
                    continue
                span = tokens[start:start + length]
                key = _key_from_tokens(span)
                if key not in self._index:
                    continue
                if len(key) < 3 and not short_names:
                    continue
                found.append((start, self._index[key]))
                used[start:start + length] = [True] * length
        found.sort()
        leftover = [t for t, u in zip(tokens, used) if not u]
        return [self._by_name[name] for _, name in found], leftover


def _parse_table(table: str) -> list[DiagnosisEntry]:
    entries: list[DiagnosisEntry] = []
    group = ""
    for line_number, raw in enumerate(table.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("##"):
            group = line.lstrip("#").strip()
            continue
        fields = [f.strip() for f in line.split("|")]
        if len(fields) != 4 or not fields[0]:
            raise NovaInputError("expected 'name | synonyms | parents | cues'",
                                 source="diagnosis lexicon", record=f"line {line_number}")
        name, synonyms, parents, cues = fields
        is_category = name.startswith("*")

        def split(cell: str) -> tuple[str, ...]:
            return tuple(part.strip() for part in cell.split(";") if part.strip())

        entries.append(DiagnosisEntry(
            name=name.lstrip("*").strip(), synonyms=split(synonyms), parents=split(parents),
            cues=split(cues), group=group, is_category=is_category,
        ))
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
    return DiagnosisLexicon(_parse_table(_LEXICON_TABLE))


# One entry per line: name | synonyms; ... | parents; ... | cue words; ...
# A leading "*" marks a category (a grouping node, too vague to count as a diagnosis).
_LEXICON_TABLE = """
## categories
*intracranial neoplasm | brain tumor; brain tumour; tumor; neoplasm; intracranial tumor; brain neoplasm; cns tumor; brain mass; intracranial mass; mass; neoplastic lesion; malignancy | | mass effect
*cns infection | infection; intracranial infection; infectious disease; central nervous system infection; neuroinfection | | fever
*fungal infection | fungal cerebritis; cns fungal infection; neuromycosis; mycosis | cns infection | immunocompromised
*inflammatory disease | autoimmune disease; inflammation; neuroinflammatory disease; inflammatory disorder | |
*demyelinating disease | demyelination; demyelinating disorder; demyelinating lesion | |
*cerebrovascular disease | vascular disease; vascular lesion; cerebrovascular disorder | |
*metabolic disorder | metabolic disease; inborn error of metabolism; metabolic encephalopathy | |
*genetic disorder | genetic syndrome; hereditary disease; inherited disorder | |
*congenital malformation | malformation; congenital anomaly; developmental anomaly; brain malformation | |
*neurodegenerative disease | neurodegeneration; neurodegenerative disorder | |
*neurocutaneous syndrome | phakomatosis; neurocutaneous disorder | genetic disorder |
*intracranial cyst | cyst; cystic lesion; intracranial cystic lesion | |

## demyelinating
multiple sclerosis | MS; disseminated sclerosis; relapsing remitting multiple sclerosis; RRMS; relapsing-remitting MS | demyelinating disease | young woman; optic neuritis; periventricular; dawson fingers; ovoid; relapsing
tumefactive multiple sclerosis | tumefactive demyelination; tumefactive demyelinating lesion; tumefactive MS | multiple sclerosis | incomplete ring enhancement; large; little mass effect
Balo concentric sclerosis | Balo disease; concentric sclerosis | multiple sclerosis | concentric rings; lamellar
Marburg multiple sclerosis | Marburg variant multiple sclerosis; acute fulminant multiple sclerosis | multiple sclerosis | fulminant; rapid deterioration
primary progressive multiple sclerosis | PPMS | multiple sclerosis | progressive
clinically isolated syndrome | | demyelinating disease | first episode
Schilder disease | myelinoclastic diffuse sclerosis | demyelinating disease | child; large bilateral lesions
neuromyelitis optica spectrum disorder | NMOSD; NMO; neuromyelitis optica; Devic disease; aquaporin-4 antibody disease; AQP4 positive NMOSD | demyelinating disease | longitudinally extensive myelitis; area postrema; hiccups; optic neuritis; aquaporin-4
MOG antibody-associated disease | MOGAD; MOG antibody disease; anti-MOG disease; MOG-associated disease; myelin oligodendrocyte glycoprotein antibody-associated disease | demyelinating disease | child; optic neuritis; conus
acute disseminated encephalomyelitis | ADEM; postinfectious encephalomyelitis; postvaccinal encephalomyelitis | demyelinating disease | child; after infection; vaccination; encephalopathy; fever
acute hemorrhagic leukoencephalitis | AHLE; Hurst disease; Weston Hurst syndrome | acute disseminated encephalomyelitis | fulminant; hemorrhage
osmotic demyelination syndrome | ODS; central pontine myelinolysis; CPM; extrapontine myelinolysis; EPM; osmotic demyelination | demyelinating disease; metabolic disorder | hyponatremia; rapid correction; alcoholism; trident; pons
optic neuritis | | demyelinating disease | visual loss; painful eye movement
myelitis | | demyelinating disease; inflammatory disease | paraparesis; sensory level
transverse myelitis | acute transverse myelitis | myelitis | paraparesis; sensory level
progressive multifocal leukoencephalopathy | PML; JC virus leukoencephalopathy; JC virus infection | demyelinating disease; cns infection | immunosuppressed; HIV; natalizumab; subcortical u fibers; no enhancement
Susac syndrome | retinocochleocerebral vasculopathy | inflammatory disease | snowball lesions corpus callosum; hearing loss; branch retinal artery occlusion; young woman
CLIPPERS | chronic lymphocytic inflammation with pontine perivascular enhancement responsive to steroids | inflammatory disease | punctate pontine enhancement; steroid responsive

## infectious
meningitis | leptomeningitis | cns infection | fever; neck stiffness; headache; leptomeningeal enhancement
bacterial meningitis | pyogenic meningitis; purulent meningitis | meningitis | fever; neck stiffness; sulcal fluid restriction
tuberculous meningitis | TBM; tb meningitis; tubercular meningitis | meningitis; CNS tuberculosis | basal meningeal enhancement; hydrocephalus; tuberculosis; infarcts
cryptococcal meningitis | cryptococcosis; cryptococcal meningoencephalitis; cerebral cryptococcosis | meningitis; fungal infection | HIV; gelatinous pseudocysts; dilated perivascular spaces
viral meningitis | | meningitis | fever; headache
CNS tuberculosis | neurotuberculosis; intracranial tuberculosis; cerebral tuberculosis; tuberculosis | cns infection | tuberculosis; immigrant; weight loss
tuberculoma | cerebral tuberculoma; intracranial tuberculoma | CNS tuberculosis | ring enhancement; t2 hypointense; tuberculosis
encephalitis | | cns infection; inflammatory disease | fever; confusion; seizures
meningoencephalitis | | encephalitis | fever; confusion; meningism
viral encephalitis | | encephalitis | fever; confusion
herpes simplex encephalitis | HSV encephalitis; HSE; herpes encephalitis; herpes simplex virus encephalitis; HSV-1 encephalitis; herpetic encephalitis; herpes simplex virus type 1 encephalitis | viral encephalitis | fever; confusion; seizures; mesial temporal; insula; limbic; asymmetric
varicella zoster virus vasculopathy | VZV vasculopathy; varicella zoster encephalitis; VZV encephalitis; herpes zoster encephalitis | viral encephalitis | zoster rash; stroke; child
Japanese encephalitis | Japanese B encephalitis | viral encephalitis | thalami; endemic area; mosquito
West Nile virus encephalitis | West Nile encephalitis; WNV encephalitis; West Nile neuroinvasive disease | viral encephalitis | flaccid paralysis; thalami
rabies encephalitis | rabies | viral encephalitis | animal bite; hydrophobia
enterovirus 71 rhombencephalitis | EV71 encephalitis; enterovirus encephalitis; enteroviral rhombencephalitis | viral encephalitis | child; hand foot mouth; dorsal pons
cytomegalovirus encephalitis | CMV encephalitis; CMV ventriculitis; cytomegalovirus ventriculitis | viral encephalitis | immunocompromised; ependymal enhancement
HIV encephalopathy | HIV encephalitis; HIV-associated neurocognitive disorder; HAND; AIDS dementia complex; HIV leukoencephalopathy | viral encephalitis | HIV; cognitive decline; symmetric white matter
subacute sclerosing panencephalitis | SSPE; Dawson encephalitis | viral encephalitis | measles; myoclonus; child
COVID-19 encephalopathy | COVID-19 associated encephalopathy; SARS-CoV-2 encephalitis; COVID encephalitis | viral encephalitis | covid; microbleeds
acute necrotizing encephalopathy | ANE; acute necrotizing encephalopathy of childhood; ANEC | encephalitis | influenza; bilateral thalami; child
listeria rhombencephalitis | listeriosis; neurolisteriosis; listeria monocytogenes rhombencephalitis; listeria meningoencephalitis | encephalitis | brainstem; cerebellum; immunocompromised
congenital cytomegalovirus infection | congenital CMV infection; congenital CMV | cns infection | periventricular calcification; polymicrogyria; infant; microcephaly
toxoplasmosis | cerebral toxoplasmosis; toxoplasma encephalitis; CNS toxoplasmosis; toxoplasmic encephalitis | cns infection | HIV; eccentric target sign; basal ganglia; multiple ring enhancing
congenital toxoplasmosis | | toxoplasmosis | infant; calcifications; hydrocephalus
brain abscess | cerebral abscess; intracranial abscess; pyogenic abscess; pyogenic brain abscess; abscess | cns infection | ring enhancement; restricted diffusion; fever; smooth wall
nocardiosis | cerebral nocardiosis; nocardia abscess | brain abscess | immunocompromised; multiloculated abscess
subdural empyema | | cns infection | sinusitis; fever; restricted diffusion
epidural abscess | epidural empyema; spinal epidural abscess | cns infection | back pain; fever
ventriculitis | ependymitis; pyogenic ventriculitis | cns infection | intraventricular debris; ependymal enhancement
septic embolism | septic emboli; septic cerebral emboli | cns infection | endocarditis; multiple small lesions
neurocysticercosis | NCC; cysticercosis; cerebral cysticercosis | cns infection | scolex; cyst with dot; seizures; endemic area
racemose neurocysticercosis | racemose cysticercosis | neurocysticercosis | basal cisterns; grape-like cysts
hydatid disease | echinococcosis; cerebral hydatid cyst; hydatid cyst; cystic echinococcosis | cns infection | large unilocular cyst; child; endemic area
cerebral aspergillosis | aspergillosis; invasive aspergillosis; CNS aspergillosis | fungal infection | neutropenia; hemorrhagic lesions
mucormycosis | rhinocerebral mucormycosis; zygomycosis; rhino-orbital-cerebral mucormycosis | fungal infection | diabetes; ketoacidosis; sinusitis
neurosyphilis | cerebral syphilis; syphilitic gumma; meningovascular syphilis; syphilis | cns infection | HIV; men who have sex with men; gumma
Lyme neuroborreliosis | neuroborreliosis; Lyme disease; borreliosis | cns infection | tick bite; facial palsy; erythema migrans
Whipple disease | CNS Whipple disease; cerebral Whipple disease | cns infection | diarrhea; arthralgia; oculomasticatory myorhythmia
cerebral malaria | | cns infection | travel; fever; microhemorrhages
amebic encephalitis | granulomatous amebic encephalitis; primary amebic meningoencephalitis; naegleria infection | encephalitis | freshwater swimming
prion disease | transmissible spongiform encephalopathy; TSE; prion disorder | neurodegenerative disease; cns infection | rapidly progressive dementia
Creutzfeldt-Jakob disease | CJD; Creutzfeldt Jakob | prion disease | rapidly progressive dementia; cortical ribboning; myoclonus; restricted diffusion
sporadic Creutzfeldt-Jakob disease | sCJD; sporadic CJD | Creutzfeldt-Jakob disease | rapidly progressive dementia; cortical ribboning
variant Creutzfeldt-Jakob disease | vCJD; variant CJD | Creutzfeldt-Jakob disease | pulvinar sign; young; psychiatric
Gerstmann-Straussler-Scheinker syndrome | GSS | prion disease | ataxia; family history
fatal familial insomnia | FFI | prion disease | insomnia; family history

## inflammatory and autoimmune
autoimmune encephalitis | | encephalitis | subacute; psychiatric; seizures; memory
anti-NMDA receptor encephalitis | NMDA receptor encephalitis; anti-NMDAR encephalitis; NMDAR encephalitis | autoimmune encephalitis | young woman; ovarian teratoma; psychiatric; dyskinesia
limbic encephalitis | autoimmune limbic encephalitis | autoimmune encephalitis | memory loss; seizures; mesial temporal
anti-LGI1 encephalitis | LGI1 encephalitis; LGI1 antibody encephalitis | limbic encephalitis | faciobrachial dystonic seizures; hyponatremia; elderly man
paraneoplastic limbic encephalitis | paraneoplastic encephalitis | limbic encephalitis | lung cancer; smoker; memory loss
autoimmune GFAP astrocytopathy | GFAP astrocytopathy; autoimmune glial fibrillary acidic protein astrocytopathy | autoimmune encephalitis | radial perivascular enhancement
Hashimoto encephalopathy | SREAT; steroid-responsive encephalopathy associated with autoimmune thyroiditis | autoimmune encephalitis | thyroid antibodies; steroid responsive
Rasmussen encephalitis | Rasmussen syndrome | encephalitis | epilepsia partialis continua; hemispheric atrophy; child
neurosarcoidosis | sarcoidosis; CNS sarcoidosis; neurosarcoid | inflammatory disease | leptomeningeal enhancement; hilar lymphadenopathy; pituitary stalk; cranial nerve palsy
IgG4-related disease | IgG4-related hypertrophic pachymeningitis; IgG4 related disease | inflammatory disease | dural thickening; elevated IgG4
hypertrophic pachymeningitis | pachymeningitis | inflammatory disease | headache; dural thickening
Tolosa-Hunt syndrome | painful ophthalmoplegia | inflammatory disease | cavernous sinus; retro-orbital pain
immune reconstitution inflammatory syndrome | IRIS | inflammatory disease | HIV; antiretroviral therapy started
Sjogren syndrome | primary Sjogren syndrome | inflammatory disease | dry eyes; dry mouth
Guillain-Barre syndrome | GBS; acute inflammatory demyelinating polyneuropathy; AIDP | inflammatory disease | ascending weakness; nerve root enhancement; after infection
chronic inflammatory demyelinating polyneuropathy | CIDP | inflammatory disease | nerve root hypertrophy
lymphocytic hypophysitis | hypophysitis; autoimmune hypophysitis | inflammatory disease | postpartum; pituitary stalk thickening; diabetes insipidus
vasculitis | cerebral vasculitis; CNS vasculitis | cerebrovascular disease; inflammatory disease | multiple infarcts; beading
primary angiitis of the CNS | PACNS; primary CNS vasculitis; primary angiitis of the central nervous system; isolated angiitis of the CNS; primary cerebral vasculitis | vasculitis | headache; multiple infarcts; cognitive decline
neuro-Behcet disease | neuro-Behcet syndrome; Behcet disease; neuro Behcet | vasculitis | oral ulcers; genital ulcers; brainstem; uveitis
neuropsychiatric systemic lupus erythematosus | NPSLE; CNS lupus; neurolupus; systemic lupus erythematosus; SLE; lupus cerebritis; lupus | vasculitis | young woman; malar rash; antinuclear antibodies
giant cell arteritis | temporal arteritis; GCA | vasculitis | elderly; jaw claudication; visual loss
granulomatosis with polyangiitis | GPA; Wegener granulomatosis | vasculitis | sinusitis; pachymeningitis; ANCA

## neoplastic
glioma | glial tumor; glial neoplasm | intracranial neoplasm | infiltrative; seizures
diffuse glioma | diffusely infiltrating glioma; infiltrative glioma | glioma | infiltrative; non enhancing
low-grade glioma | LGG; low grade glioma | glioma | seizures; non enhancing; young adult
high-grade glioma | HGG; high grade glioma; malignant glioma | glioma | enhancing; necrosis; edema
astrocytoma | astrocytic tumor; astrocytic glioma | glioma | infiltrative
glioblastoma | GBM; glioblastoma multiforme; glioblastoma IDH-wildtype | high-grade glioma; diffuse glioma; astrocytoma | elderly; ring enhancement; necrosis; butterfly; corpus callosum; edema
gliosarcoma | | glioblastoma | dural attachment; elderly
giant cell glioblastoma | | glioblastoma | well circumscribed
epithelioid glioblastoma | | glioblastoma | young adult; braf
diffuse astrocytoma | low-grade astrocytoma; grade 2 astrocytoma; fibrillary astrocytoma; astrocytoma IDH-mutant | astrocytoma; diffuse glioma; low-grade glioma | young adult; t2 flair mismatch; seizures
anaplastic astrocytoma | grade 3 astrocytoma | astrocytoma; diffuse glioma; high-grade glioma | adult; patchy enhancement
oligodendroglioma | oligodendroglial tumor; oligodendroglioma IDH-mutant and 1p/19q-codeleted | diffuse glioma | calcification; frontal lobe; cortical; seizures
anaplastic oligodendroglioma | grade 3 oligodendroglioma | oligodendroglioma; high-grade glioma | calcification; enhancement
oligoastrocytoma | mixed glioma | diffuse glioma |
diffuse midline glioma | DMG; diffuse midline glioma H3 K27-altered; diffuse intrinsic pontine glioma; DIPG; H3 K27M-mutant glioma | diffuse glioma; high-grade glioma | child; pons; thalamus; cranial nerve palsies
brainstem glioma | brain stem glioma | glioma | child; pons; cranial nerve palsies
gliomatosis cerebri | | diffuse glioma | three lobes; diffuse infiltration
optic pathway glioma | optic nerve glioma; optic glioma; optic chiasm glioma; chiasmatic glioma | glioma | child; visual loss; neurofibromatosis
pilocytic astrocytoma | juvenile pilocytic astrocytoma; JPA | astrocytoma; low-grade glioma | child; cerebellum; cyst with mural nodule
pilomyxoid astrocytoma | PMA | pilocytic astrocytoma | infant; hypothalamus
pleomorphic xanthoastrocytoma | PXA | astrocytoma | temporal lobe; seizures; cyst; superficial; young
subependymal giant cell astrocytoma | SEGA; subependymal giant-cell astrocytoma | astrocytoma | tuberous sclerosis; foramen of monro; enlarging
astroblastoma | | glioma | young woman; bubbly; peripheral
chordoid glioma | chordoid glioma of third ventricle | glioma | third ventricle; adult woman
angiocentric glioma | | glioma | child; epilepsy; cortical
ependymal tumor | ependymal neoplasm | glioma |
ependymoma | anaplastic ependymoma; supratentorial ependymoma; posterior fossa ependymoma; spinal ependymoma | ependymal tumor | child; fourth ventricle; plastic; extends through foramina
subependymoma | | ependymal tumor | elderly; fourth ventricle; non enhancing; incidental
myxopapillary ependymoma | | ependymoma | conus; filum terminale; back pain
choroid plexus tumor | choroid plexus neoplasm | intracranial neoplasm | intraventricular; child
choroid plexus papilloma | CPP | choroid plexus tumor | infant; trigone; hydrocephalus; fronds
choroid plexus carcinoma | CPC | choroid plexus tumor | infant; invasion; heterogeneous
glioneuronal tumor | neuronal and mixed neuronal-glial tumor; neuronal tumor | intracranial neoplasm | epilepsy
ganglioglioma | | glioneuronal tumor | child; temporal lobe; seizures; cyst; calcification
gangliocytoma | | glioneuronal tumor | seizures
Lhermitte-Duclos disease | dysplastic cerebellar gangliocytoma; dysplastic gangliocytoma of cerebellum; LDD | glioneuronal tumor | tiger striped; cerebellum; Cowden
dysembryoplastic neuroepithelial tumor | DNET; DNT | glioneuronal tumor | child; seizures; bubbly; cortical; temporal lobe
central neurocytoma | neurocytoma | glioneuronal tumor | lateral ventricle; young adult; bubbly; septum pellucidum
papillary glioneuronal tumor | PGNT | glioneuronal tumor | young; cyst with nodule
rosette-forming glioneuronal tumor | RGNT | glioneuronal tumor | fourth ventricle; young adult
diffuse leptomeningeal glioneuronal tumor | DLGNT | glioneuronal tumor | child; leptomeningeal cysts
multinodular and vacuolating neuronal tumor | MVNT; multinodular vacuolating neuronal tumor | glioneuronal tumor | incidental; clustered nodules; subcortical
embryonal tumor | embryonal neoplasm; primitive neuroectodermal tumor; PNET; CNS PNET | intracranial neoplasm | child
medulloblastoma | | embryonal tumor | child; fourth ventricle; cerebellar vermis; restricted diffusion; drop metastases
atypical teratoid/rhabdoid tumor | ATRT; AT/RT; atypical teratoid rhabdoid tumor; rhabdoid tumor | embryonal tumor | infant; heterogeneous; restricted diffusion
embryonal tumor with multilayered rosettes | ETMR | embryonal tumor | infant; large; little edema
pineal parenchymal tumor | pineal parenchymal tumor of intermediate differentiation; PPTID | intracranial neoplasm | pineal region
pineoblastoma | | embryonal tumor; pineal parenchymal tumor | child; pineal region; hydrocephalus
pineocytoma | | pineal parenchymal tumor | adult; pineal region
germ cell tumor | intracranial germ cell tumor; CNS germ cell tumor | intracranial neoplasm | young male; pineal region
germinoma | intracranial germinoma; pineal germinoma; suprasellar germinoma | germ cell tumor | young male; pineal; diabetes insipidus; engulfed calcification
teratoma | intracranial teratoma; mature teratoma | germ cell tumor | fat; calcification; infant
meningioma | meningeal tumor | intracranial neoplasm | dural tail; extra-axial; middle-aged woman; calcification
atypical meningioma | grade 2 meningioma | meningioma | brain invasion; edema
anaplastic meningioma | malignant meningioma; grade 3 meningioma | meningioma | invasion; bone destruction
meningiomatosis | multiple meningiomas | meningioma | neurofibromatosis type 2
solitary fibrous tumor | hemangiopericytoma; SFT | intracranial neoplasm | dural; flow voids; lobulated
hemangioblastoma | capillary hemangioblastoma | intracranial neoplasm | cyst with mural nodule; von hippel lindau; cerebellum; flow voids
nerve sheath tumor | peripheral nerve sheath tumor | intracranial neoplasm |
schwannoma | neurilemmoma; neurinoma | nerve sheath tumor | extra-axial; cranial nerve
vestibular schwannoma | acoustic neuroma; acoustic schwannoma | schwannoma | hearing loss; tinnitus; cerebellopontine angle; internal auditory canal
trigeminal schwannoma | | schwannoma | facial numbness; dumbbell
facial nerve schwannoma | | schwannoma | facial palsy
neurofibroma | plexiform neurofibroma | nerve sheath tumor | neurofibromatosis type 1; target sign
malignant peripheral nerve sheath tumor | MPNST | nerve sheath tumor | neurofibromatosis type 1; rapid growth
lymphoma | CNS lymphoma; lymphoma of central nervous system | intracranial neoplasm | restricted diffusion; homogeneous enhancement
primary CNS lymphoma | PCNSL; primary central nervous system lymphoma; primary cerebral lymphoma; primary brain lymphoma | lymphoma | elderly; periventricular; restricted diffusion; immunocompromised; corpus callosum; steroids
secondary CNS lymphoma | secondary lymphoma; secondary central nervous system lymphoma | lymphoma | known systemic lymphoma; leptomeningeal
intravascular lymphoma | intravascular large B-cell lymphoma; angiotropic lymphoma | lymphoma | multiple infarcts; elderly; skin lesions
lymphomatosis cerebri | | primary CNS lymphoma | diffuse white matter; cognitive decline
histiocytosis | histiocytic disorder | intracranial neoplasm |
Langerhans cell histiocytosis | LCH; histiocytosis X; eosinophilic granuloma | histiocytosis | child; diabetes insipidus; pituitary stalk; lytic skull lesion
Erdheim-Chester disease | ECD | histiocytosis | adult; long bone sclerosis; hairy kidney
Rosai-Dorfman disease | sinus histiocytosis with massive lymphadenopathy; RDD | histiocytosis | dural masses; lymphadenopathy
hemophagocytic lymphohistiocytosis | HLH | histiocytosis | child; fever; cytopenia
metastasis | brain metastasis; cerebral metastasis; metastatic disease; brain metastases; secondary brain tumor; intracranial metastasis; metastatic tumor | intracranial neoplasm | known primary; multiple; grey-white junction; lung cancer; breast cancer; melanoma; edema
leptomeningeal carcinomatosis | leptomeningeal metastasis; carcinomatous meningitis; meningeal carcinomatosis; neoplastic meningitis | metastasis | known cancer; cranial nerve palsies; leptomeningeal enhancement
melanoma metastasis | metastatic melanoma | metastasis | t1 hyperintense; hemorrhagic; melanoma
dural metastasis | | metastasis | breast cancer; prostate cancer; dural thickening
myeloid sarcoma | granulocytic sarcoma; chloroma | intracranial neoplasm | leukemia; child
plasmacytoma | | intracranial neoplasm | multiple myeloma; skull
sellar tumor | sellar mass; suprasellar mass; sellar neoplasm | intracranial neoplasm | visual field defect; hormonal
pituitary adenoma | pituitary neuroendocrine tumor; PitNET | sellar tumor | visual field defect; hormonal; snowman
pituitary macroadenoma | macroadenoma | pituitary adenoma | bitemporal hemianopia; snowman
pituitary microadenoma | microadenoma | pituitary adenoma | prolactinoma; hypoenhancing
pituitary apoplexy | | pituitary adenoma | sudden headache; visual loss; hemorrhage
craniopharyngioma | adamantinomatous craniopharyngioma; papillary craniopharyngioma | sellar tumor | child; calcified; cystic; suprasellar; machinery oil
pituicytoma | | sellar tumor | posterior pituitary
skull base tumor | skull base neoplasm | intracranial neoplasm |
chordoma | clival chordoma; skull base chordoma | skull base tumor | clivus; t2 hyperintense; midline
chondrosarcoma | skull base chondrosarcoma | skull base tumor | petroclival; chondroid calcification
paraganglioma | glomus jugulare; glomus tumor; jugulotympanic paraganglioma | skull base tumor | pulsatile tinnitus; salt and pepper
esthesioneuroblastoma | olfactory neuroblastoma | skull base tumor | anosmia; epistaxis; cribriform plate
radiation-induced brain injury | radiation injury; radiation encephalopathy; radiation leukoencephalopathy | | prior radiotherapy
radiation necrosis | radiation-induced necrosis; cerebral radiation necrosis; radionecrosis; treatment-related necrosis | radiation-induced brain injury | prior radiotherapy; soap bubble enhancement
SMART syndrome | stroke-like migraine attacks after radiation therapy | radiation-induced brain injury | prior radiotherapy; gyral enhancement

## cysts
epidermoid cyst | epidermoid; intracranial epidermoid; epidermoid tumor | intracranial cyst | restricted diffusion; cerebellopontine angle
dermoid cyst | dermoid; ruptured dermoid cyst | intracranial cyst | fat droplets; midline
colloid cyst | colloid cyst of third ventricle | intracranial cyst | foramen of monro; headache; sudden death
arachnoid cyst | | intracranial cyst | csf signal; middle cranial fossa; incidental
neuroglial cyst | glioependymal cyst; neuroepithelial cyst | intracranial cyst | non enhancing
neurenteric cyst | enterogenous cyst | intracranial cyst | prepontine; proteinaceous
Rathke cleft cyst | | intracranial cyst | sellar; intracystic nodule; non enhancing
pineal cyst | | intracranial cyst | incidental; pineal region
porencephalic cyst | porencephaly | intracranial cyst; congenital malformation | prior insult; communicates with ventricle

## vascular
ischemic stroke | stroke; cerebral infarction; brain infarction; infarct; cerebral infarct; infarction; acute ischemic stroke; acute infarct; ischemic infarct | cerebrovascular disease | sudden onset; hemiparesis; aphasia; restricted diffusion; vascular territory; atrial fibrillation
lacunar infarct | lacunar stroke; lacune; lacunar infarction | ischemic stroke | hypertension; small deep infarct
watershed infarct | border zone infarct; borderzone infarction; watershed infarction | ischemic stroke | hypotension; carotid stenosis
cardioembolic stroke | embolic stroke; embolic infarct; cardioembolic infarct | ischemic stroke | atrial fibrillation; multiple territories
artery of Percheron infarct | artery of Percheron infarction; Percheron infarct; bilateral paramedian thalamic infarct | ischemic stroke | coma; bilateral thalami
spinal cord infarction | spinal cord infarct; spinal cord ischemia; spinal cord stroke | ischemic stroke | sudden paraplegia; owl eyes; aortic surgery
hypoxic-ischemic encephalopathy | HIE; hypoxic ischemic injury; anoxic brain injury; global hypoxic injury; anoxic encephalopathy; hypoxic brain injury | cerebrovascular disease | cardiac arrest; drowning; neonate; asphyxia
periventricular leukomalacia | PVL; white matter injury of prematurity | hypoxic-ischemic encephalopathy | preterm; spastic diplegia
delayed post-hypoxic leukoencephalopathy | DPHL | hypoxic-ischemic encephalopathy | weeks after hypoxia; relapse
cerebral venous thrombosis | CVT; cerebral venous sinus thrombosis; CVST; dural sinus thrombosis; venous sinus thrombosis; sinus thrombosis; cortical vein thrombosis; deep cerebral venous thrombosis | cerebrovascular disease | headache; oral contraceptives; postpartum; empty delta; seizures
venous infarct | venous infarction; hemorrhagic venous infarct | cerebral venous thrombosis | headache; hemorrhagic; non arterial territory
intracranial hemorrhage | hemorrhage; bleed; brain bleed; cerebral bleed | cerebrovascular disease | sudden headache; reduced consciousness
intracerebral hemorrhage | ICH; intraparenchymal hemorrhage; cerebral hemorrhage; hemorrhagic stroke; hypertensive hemorrhage; brain hemorrhage; parenchymal hematoma | intracranial hemorrhage | hypertension; anticoagulation; basal ganglia
subarachnoid hemorrhage | SAH | intracranial hemorrhage | thunderclap headache; aneurysm
subdural hematoma | SDH; subdural hemorrhage; chronic subdural hematoma | intracranial hemorrhage | elderly; fall; anticoagulation; crescent
epidural hematoma | EDH; extradural hematoma; epidural hemorrhage; extradural hemorrhage | intracranial hemorrhage; traumatic brain injury | skull fracture; lucid interval; biconvex
germinal matrix hemorrhage | intraventricular hemorrhage of prematurity; germinal matrix-intraventricular hemorrhage | intracranial hemorrhage | preterm
superficial siderosis | superficial siderosis of CNS | cerebrovascular disease | hearing loss; ataxia; hemosiderin rim
cerebral amyloid angiopathy | CAA; amyloid angiopathy; congophilic angiopathy | cerebrovascular disease | elderly; lobar hemorrhage; microbleeds; cortical superficial siderosis
cerebral amyloid angiopathy-related inflammation | CAA-related inflammation; CAA-RI; amyloid beta-related angiitis; ABRA | cerebral amyloid angiopathy; inflammatory disease | elderly; cognitive decline; microbleeds; asymmetric edema
aneurysm | intracranial aneurysm; cerebral aneurysm; berry aneurysm; saccular aneurysm | cerebrovascular disease | subarachnoid hemorrhage; flow void
giant aneurysm | giant intracranial aneurysm; partially thrombosed giant aneurysm | aneurysm | mass effect; onion skin
mycotic aneurysm | infectious aneurysm | aneurysm | endocarditis; distal
vascular malformation | cerebrovascular malformation; intracranial vascular malformation | cerebrovascular disease |
arteriovenous malformation | AVM; brain AVM; cerebral arteriovenous malformation; pial AVM | vascular malformation | flow voids; nidus; hemorrhage; young; seizures
vein of Galen malformation | vein of Galen aneurysmal malformation; VGAM; vein of Galen aneurysm | vascular malformation | neonate; heart failure; macrocephaly
dural arteriovenous fistula | DAVF; dural AV fistula | vascular malformation | pulsatile tinnitus; venous congestion; dilated cortical veins
spinal dural arteriovenous fistula | SDAVF; Foix-Alajouanine syndrome; spinal dural AV fistula | dural arteriovenous fistula | elderly man; progressive myelopathy; flow voids; cord edema
carotid-cavernous fistula | CCF; caroticocavernous fistula | vascular malformation | proptosis; chemosis; enlarged superior ophthalmic vein
cavernous malformation | cavernoma; cavernous angioma; cavernous hemangioma; cerebral cavernous malformation; CCM | vascular malformation | popcorn; hemosiderin rim; blooming; seizures
familial cerebral cavernous malformations | familial cavernomatosis; cavernomatosis; multiple cavernomas | cavernous malformation | family history; multiple microbleeds
developmental venous anomaly | DVA; venous angioma; venous malformation | vascular malformation | caput medusae; incidental
capillary telangiectasia | capillary telangiectasis; brainstem capillary telangiectasia | vascular malformation | pons; faint enhancement; incidental
moyamoya disease | moyamoya; moyamoya angiopathy | cerebrovascular disease | ivy sign; puff of smoke; child; recurrent stroke; asian
reversible cerebral vasoconstriction syndrome | RCVS; Call-Fleming syndrome | cerebrovascular disease | thunderclap headache; postpartum; vasoconstrictive drugs
posterior reversible encephalopathy syndrome | PRES; reversible posterior leukoencephalopathy syndrome; RPLS; hypertensive encephalopathy | cerebrovascular disease | hypertension; eclampsia; parieto-occipital; vasogenic edema; immunosuppression; chemotherapy
small vessel disease | cerebral small vessel disease; microangiopathy; small vessel ischemic disease; leukoaraiosis; chronic small vessel ischemia; Binswanger disease; subcortical arteriosclerotic encephalopathy | cerebrovascular disease | elderly; hypertension; white matter hyperintensities; lacunes
CADASIL | cerebral autosomal dominant arteriopathy with subcortical infarcts and leukoencephalopathy; NOTCH3 arteriopathy | small vessel disease; genetic disorder | anterior temporal poles; external capsule; migraine; family history
CARASIL | cerebral autosomal recessive arteriopathy with subcortical infarcts and leukoencephalopathy; HTRA1 arteriopathy | small vessel disease; genetic disorder | alopecia; back pain; young
COL4A1 angiopathy | COL4A1-related small vessel disease; COL4A1 mutation | small vessel disease; genetic disorder | porencephaly; hemorrhage; family history
arterial dissection | cervical artery dissection; carotid artery dissection; vertebral artery dissection; dissection; internal carotid artery dissection | cerebrovascular disease | neck pain; Horner; trauma; crescent sign
Sneddon syndrome | | cerebrovascular disease | livedo reticularis; young woman; strokes
Fabry disease | Anderson-Fabry disease | metabolic disorder; cerebrovascular disease; genetic disorder | pulvinar t1 hyperintensity; renal failure; angiokeratoma
fat embolism syndrome | cerebral fat embolism; fat embolism | cerebrovascular disease | long bone fracture; starfield pattern; petechiae
air embolism | cerebral air embolism; gas embolism | cerebrovascular disease | central line; diving; procedure

## metabolic and toxic
toxic encephalopathy | toxic leukoencephalopathy | metabolic disorder | drug exposure
Wernicke encephalopathy | thiamine deficiency; Wernicke-Korsakoff syndrome; Wernicke Korsakoff | metabolic disorder | alcoholism; mammillary bodies; medial thalami; hyperemesis; ataxia; ophthalmoplegia; confusion
Marchiafava-Bignami disease | Marchiafava Bignami; MBD | toxic encephalopathy | alcoholism; corpus callosum
hepatic encephalopathy | acquired hepatocerebral degeneration | metabolic disorder | cirrhosis; globus pallidus t1 hyperintensity; hyperammonemia
hyperammonemic encephalopathy | hyperammonemia | metabolic disorder | insula; cingulate; elevated ammonia
hypoglycemic encephalopathy | hypoglycemic brain injury; hypoglycemia; neonatal hypoglycemia | metabolic disorder | diabetes; insulin; occipital; restricted diffusion
diabetic striatopathy | nonketotic hyperglycemic hemichorea; hyperglycemic hemichorea; chorea-hyperglycemia-basal ganglia syndrome | metabolic disorder | elderly diabetic; putamen t1 hyperintensity; hemichorea
uremic encephalopathy | | metabolic disorder | renal failure; lentiform fork
carbon monoxide poisoning | CO poisoning; carbon monoxide intoxication | toxic encephalopathy | globus pallidus; smoke; suicide attempt; heater
methanol poisoning | methanol intoxication; methanol toxicity | toxic encephalopathy | putaminal necrosis; visual loss; metabolic acidosis
heroin leukoencephalopathy | chasing the dragon; inhaled heroin leukoencephalopathy; toxic spongiform leukoencephalopathy | toxic encephalopathy | drug use; cerebellar white matter; posterior limb
metronidazole-induced encephalopathy | metronidazole toxicity; metronidazole encephalopathy | toxic encephalopathy | dentate nuclei; antibiotic
methotrexate leukoencephalopathy | methotrexate toxicity; methotrexate-induced leukoencephalopathy | toxic encephalopathy | leukemia; chemotherapy; restricted diffusion
cytotoxic lesion of corpus callosum | CLOCC; mild encephalitis/encephalopathy with reversible splenial lesion; reversible splenial lesion syndrome; RESLES; transient splenial lesion | toxic encephalopathy | splenium; restricted diffusion; reversible
kernicterus | bilirubin encephalopathy | metabolic disorder | neonate; jaundice; globus pallidus
vitamin B12 deficiency | subacute combined degeneration; subacute combined degeneration of spinal cord; cobalamin deficiency | metabolic disorder | inverted v sign; dorsal columns; pernicious anemia
copper deficiency myelopathy | copper deficiency | metabolic disorder | gastric surgery; zinc; dorsal columns
Wilson disease | hepatolenticular degeneration | metabolic disorder; genetic disorder | face of giant panda; Kayser-Fleischer; young; liver disease
Fahr disease | primary familial brain calcification; idiopathic basal ganglia calcification; Fahr syndrome; bilateral striopallidodentate calcinosis | metabolic disorder; genetic disorder | basal ganglia calcification; dentate calcification
mitochondrial disease | mitochondrial disorder; mitochondrial encephalopathy; mitochondrial cytopathy | metabolic disorder; genetic disorder | lactate peak
Leigh syndrome | subacute necrotizing encephalomyelopathy | mitochondrial disease | child; lactate; basal ganglia; brainstem; developmental regression
MELAS | mitochondrial encephalomyopathy lactic acidosis and stroke-like episodes; mitochondrial encephalomyopathy with lactic acidosis and stroke-like episodes | mitochondrial disease | stroke-like episodes; lactate peak; not vascular territory; young; migraine
MERRF | myoclonic epilepsy with ragged red fibers | mitochondrial disease | myoclonus; ataxia
Kearns-Sayre syndrome | KSS | mitochondrial disease | ophthalmoplegia; retinitis pigmentosa; heart block
leukodystrophy | hereditary leukoencephalopathy | metabolic disorder; genetic disorder | child; symmetric white matter
metachromatic leukodystrophy | MLD; arylsulfatase A deficiency | leukodystrophy | tigroid; child; periventricular
X-linked adrenoleukodystrophy | X-ALD; ALD; adrenoleukodystrophy; adrenomyeloneuropathy; AMN | leukodystrophy | boy; parieto-occipital; splenium; adrenal insufficiency; enhancing edge
Krabbe disease | globoid cell leukodystrophy; galactosylceramidase deficiency | leukodystrophy | infant; irritability; thalami hyperdense
Alexander disease | fibrinoid leukodystrophy | leukodystrophy | macrocephaly; frontal predominance; periventricular rim
Canavan disease | aspartoacylase deficiency; spongiform leukodystrophy | leukodystrophy | NAA peak; macrocephaly; subcortical u fibers
Pelizaeus-Merzbacher disease | PMD | leukodystrophy | hypomyelination; nystagmus; boy
vanishing white matter disease | VWM; childhood ataxia with central hypomyelination; CACH | leukodystrophy | csf-like white matter; deterioration after fever
megalencephalic leukoencephalopathy with subcortical cysts | MLC; van der Knaap disease | leukodystrophy | macrocephaly; anterior temporal cysts
hypomyelination with atrophy of basal ganglia and cerebellum | H-ABC | leukodystrophy | hypomyelination; small putamen
Aicardi-Goutieres syndrome | AGS | leukodystrophy | calcifications; infant; interferon
cerebrotendinous xanthomatosis | CTX | leukodystrophy | dentate nuclei; tendon xanthomas; cataracts; diarrhea
adult-onset leukoencephalopathy with axonal spheroids | ALSP; hereditary diffuse leukoencephalopathy with spheroids; HDLS; CSF1R-related leukoencephalopathy | leukodystrophy | adult; frontal white matter; calcifications; dementia
glutaric aciduria type 1 | glutaric acidemia type 1; GA1; glutaryl-CoA dehydrogenase deficiency | metabolic disorder | bat wing; macrocephaly; widened sylvian fissures; subdural hematoma
maple syrup urine disease | MSUD | metabolic disorder | neonate; edema of myelinated tracts; sweet smelling urine
phenylketonuria | PKU | metabolic disorder | periventricular white matter; diet
L-2-hydroxyglutaric aciduria | L2HGA; L-2-hydroxyglutaric acidemia | metabolic disorder | subcortical u fibers; dentate nuclei
methylmalonic acidemia | methylmalonic aciduria; MMA | metabolic disorder | globus pallidus; metabolic crisis
propionic acidemia | | metabolic disorder | basal ganglia; metabolic crisis
urea cycle disorder | ornithine transcarbamylase deficiency; OTC deficiency | metabolic disorder | hyperammonemia; neonate
mucopolysaccharidosis | MPS; Hurler syndrome; Hunter syndrome; Sanfilippo syndrome | metabolic disorder; genetic disorder | enlarged perivascular spaces; macrocephaly; coarse facies
GM2 gangliosidosis | Tay-Sachs disease; Sandhoff disease | metabolic disorder; genetic disorder | infant; hyperdense thalami; cherry red spot

## degenerative
dementia | neurocognitive disorder | neurodegenerative disease | cognitive decline; memory
Alzheimer disease | AD; Alzheimer dementia; dementia of Alzheimer type | dementia | hippocampal atrophy; memory loss; elderly; precuneus
frontotemporal dementia | FTD; frontotemporal lobar degeneration; FTLD; Pick disease; behavioral variant frontotemporal dementia | dementia | knife-blade atrophy; behaviour change; aphasia
dementia with Lewy bodies | DLB; Lewy body dementia; diffuse Lewy body disease | dementia | hallucinations; parkinsonism; fluctuations
Parkinson disease | PD; idiopathic Parkinson disease | neurodegenerative disease | tremor; rigidity; loss of swallow tail sign
multiple system atrophy | MSA; MSA-C; MSA-P; olivopontocerebellar atrophy; Shy-Drager syndrome | neurodegenerative disease | hot cross bun; putaminal rim; ataxia; autonomic failure
progressive supranuclear palsy | PSP; Steele-Richardson-Olszewski syndrome | neurodegenerative disease | hummingbird sign; midbrain atrophy; vertical gaze palsy; falls
corticobasal degeneration | CBD; corticobasal syndrome | neurodegenerative disease | asymmetric atrophy; alien limb
amyotrophic lateral sclerosis | ALS; motor neuron disease; MND; Lou Gehrig disease | neurodegenerative disease | corticospinal tract hyperintensity; motor band sign; weakness; fasciculations
spinocerebellar ataxia | SCA; hereditary ataxia; autosomal dominant cerebellar ataxia | neurodegenerative disease; genetic disorder | cerebellar atrophy; family history; ataxia
spinocerebellar ataxia type 3 | SCA3; SCA type 3; Machado-Joseph disease | spinocerebellar ataxia | pontine atrophy; dentate; family history
Friedreich ataxia | | neurodegenerative disease; genetic disorder | cervical cord atrophy; cardiomyopathy; ataxia
fragile X-associated tremor/ataxia syndrome | FXTAS | neurodegenerative disease; genetic disorder | middle cerebellar peduncle sign; tremor; elderly man
Huntington disease | Huntington chorea; HD | neurodegenerative disease; genetic disorder | chorea; caudate atrophy; family history
neurodegeneration with brain iron accumulation | NBIA | neurodegenerative disease; genetic disorder | globus pallidus hypointensity; dystonia
pantothenate kinase-associated neurodegeneration | PKAN; Hallervorden-Spatz disease | neurodegeneration with brain iron accumulation | eye of tiger; dystonia; child
hypertrophic olivary degeneration | HOD; olivary hypertrophy | neurodegenerative disease | Guillain-Mollaret triangle; palatal tremor; prior brainstem lesion
Wallerian degeneration | | neurodegenerative disease | prior infarct; corticospinal tract
hydrocephalus | obstructive hydrocephalus; communicating hydrocephalus; ventriculomegaly | | headache; vomiting; enlarged ventricles
normal pressure hydrocephalus | NPH; idiopathic normal pressure hydrocephalus; iNPH | hydrocephalus | gait disturbance; incontinence; dementia; DESH
idiopathic intracranial hypertension | IIH; pseudotumor cerebri; benign intracranial hypertension | | obese woman; headache; papilledema; empty sella; flattened globes
intracranial hypotension | spontaneous intracranial hypotension; SIH; CSF leak | | orthostatic headache; pachymeningeal enhancement; sagging brain
mesial temporal sclerosis | hippocampal sclerosis; MTS; Ammon horn sclerosis | | epilepsy; hippocampal atrophy; t2 hyperintensity
peri-ictal MRI changes | postictal changes; seizure-related changes; status epilepticus changes | | seizures; status epilepticus; cortical restricted diffusion; pulvinar

## genetic and neurocutaneous
neurofibromatosis | | neurocutaneous syndrome | cafe au lait spots
neurofibromatosis type 1 | NF1; NF type 1; von Recklinghausen disease; peripheral neurofibromatosis | neurofibromatosis | cafe au lait spots; optic glioma; focal areas of signal intensity; plexiform neurofibroma
neurofibromatosis type 2 | NF2; NF type 2; bilateral acoustic neurofibromatosis; central neurofibromatosis; NF2-related schwannomatosis | neurofibromatosis | bilateral vestibular schwannomas; meningiomas; ependymomas
schwannomatosis | | neurofibromatosis | multiple schwannomas; pain
tuberous sclerosis complex | tuberous sclerosis; TSC; Bourneville disease; Bourneville-Pringle disease | neurocutaneous syndrome | cortical tubers; subependymal nodules; seizures; facial angiofibromas
Sturge-Weber syndrome | encephalotrigeminal angiomatosis; SWS | neurocutaneous syndrome | port-wine stain; leptomeningeal angioma; tram-track calcification; seizures
von Hippel-Lindau disease | VHL; von Hippel Lindau syndrome | neurocutaneous syndrome | hemangioblastomas; renal cell carcinoma; pheochromocytoma
ataxia telangiectasia | Louis-Bar syndrome | neurocutaneous syndrome | cerebellar atrophy; telangiectasias; infections
hereditary hemorrhagic telangiectasia | HHT; Osler-Weber-Rendu disease; Rendu-Osler-Weber syndrome | neurocutaneous syndrome; vascular malformation | epistaxis; pulmonary AVM; brain abscess
neurocutaneous melanosis | neurocutaneous melanocytosis | neurocutaneous syndrome | giant congenital nevus; t1 hyperintense amygdala
PHACE syndrome | PHACES | neurocutaneous syndrome | facial hemangioma; posterior fossa; arterial anomalies
encephalocraniocutaneous lipomatosis | ECCL; Haberland syndrome | neurocutaneous syndrome | scalp lipoma; nevus psiloliparus
incontinentia pigmenti | Bloch-Sulzberger syndrome | neurocutaneous syndrome | skin blisters; girl; infarcts
basal cell nevus syndrome | Gorlin syndrome; Gorlin-Goltz syndrome; nevoid basal cell carcinoma syndrome | neurocutaneous syndrome | falx calcification; jaw cysts; medulloblastoma
Cowden syndrome | PTEN hamartoma tumor syndrome | genetic disorder | macrocephaly; Lhermitte-Duclos; breast cancer

## congenital
Chiari malformation | Chiari | congenital malformation | tonsillar descent
Chiari 1 malformation | Chiari type 1; Chiari type 1 malformation; Chiari 1 | Chiari malformation | tonsillar descent; syrinx; headache
Chiari 2 malformation | Arnold-Chiari malformation; Chiari type 2; Chiari type 2 malformation; Chiari 2 | Chiari malformation | myelomeningocele; small posterior fossa; tectal beaking
Chiari 3 malformation | Chiari type 3; Chiari 3 | Chiari malformation | occipital encephalocele
posterior fossa malformation | posterior fossa anomaly | congenital malformation |
Dandy-Walker malformation | Dandy-Walker syndrome; Dandy Walker; DWM | posterior fossa malformation | cystic fourth ventricle; vermian hypoplasia; elevated torcula
Blake pouch cyst | | posterior fossa malformation | tetraventricular hydrocephalus
mega cisterna magna | | posterior fossa malformation | incidental
Joubert syndrome | | posterior fossa malformation; genetic disorder | molar tooth sign; vermian hypoplasia; breathing abnormalities
rhombencephalosynapsis | | posterior fossa malformation | fused cerebellar hemispheres; absent vermis
pontocerebellar hypoplasia | PCH | posterior fossa malformation; genetic disorder | dragonfly cerebellum; microcephaly
malformation of cortical development | MCD; cortical malformation | congenital malformation | epilepsy; developmental delay
focal cortical dysplasia | FCD; cortical dysplasia; Taylor dysplasia | malformation of cortical development | epilepsy; transmantle sign; blurred grey-white junction
lissencephaly | agyria; pachygyria; agyria-pachygyria complex | malformation of cortical development | smooth brain; figure of eight; seizures
polymicrogyria | PMG | malformation of cortical development | perisylvian; irregular cortex
schizencephaly | open-lip schizencephaly; closed-lip schizencephaly | malformation of cortical development | grey matter lined cleft
heterotopia | gray matter heterotopia; periventricular nodular heterotopia; PVNH; subcortical heterotopia; band heterotopia; double cortex | malformation of cortical development | epilepsy; nodules along ventricles
hemimegalencephaly | unilateral megalencephaly | malformation of cortical development | enlarged hemisphere; infant; seizures
holoprosencephaly | alobar holoprosencephaly; semilobar holoprosencephaly; lobar holoprosencephaly | congenital malformation | fused hemispheres; single ventricle; facial anomalies
septo-optic dysplasia | de Morsier syndrome; SOD | congenital malformation | absent septum pellucidum; optic nerve hypoplasia; pituitary
corpus callosum agenesis | agenesis of corpus callosum; callosal agenesis; ACC; corpus callosum dysgenesis; dysgenesis of corpus callosum | congenital malformation | parallel ventricles; colpocephaly; Probst bundles
hypothalamic hamartoma | hamartoma of tuber cinereum; tuber cinereum hamartoma | congenital malformation | gelastic seizures; precocious puberty
intracranial lipoma | lipoma; pericallosal lipoma; corpus callosum lipoma | congenital malformation | fat signal; midline
encephalocele | cephalocele; meningoencephalocele; occipital encephalocele | congenital malformation | skull defect
hydranencephaly | | congenital malformation | absent cerebral hemispheres; infant
aqueductal stenosis | aqueduct stenosis; aqueductal obstruction | congenital malformation | triventricular hydrocephalus
myelomeningocele | meningomyelocele; spina bifida; open spinal dysraphism | congenital malformation | Chiari 2; neonate
tethered cord syndrome | tethered spinal cord; tethered cord | congenital malformation | low-lying conus; thick filum
syringomyelia | syrinx; hydromyelia; syringohydromyelia | congenital malformation | Chiari; cape-like sensory loss
diastematomyelia | split cord malformation | congenital malformation | bony spur; scoliosis

## traumatic
traumatic brain injury | TBI; head injury; head trauma; brain trauma | | trauma; motor vehicle accident; fall
diffuse axonal injury | DAI; traumatic axonal injury; shear injury | traumatic brain injury | microbleeds; grey-white junction; corpus callosum; motor vehicle accident; coma
cerebral contusion | hemorrhagic contusion; brain contusion; contusion | traumatic brain injury | fall; frontal; temporal poles
abusive head trauma | non-accidental injury; non-accidental trauma; shaken baby syndrome; NAI; child abuse | traumatic brain injury | infant; subdural hematoma; retinal hemorrhages
"""
