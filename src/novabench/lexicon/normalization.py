"""Normalisation of diagnosis strings, so a name reads the same wherever it is looked up.

:func:`normalize_diagnosis` and :func:`diagnosis_aliases` are shared by the diagnosis
lexicon (:mod:`novabench.lexicon.diagnoses`), the statement reader
(:mod:`novabench.lexicon.statements`), the diagnosis metric and the parsers.

British and American spellings are folded (``haemorrhage`` and ``hemorrhage``, ``tumour``
and ``tumor``, ``leucodystrophy`` and ``leukodystrophy``), accents are dropped
(``Behçet``), possessives removed (``Creutzfeldt-Jakob's``), roman numerals after
``type``/``grade``/``Chiari``... become digits, and lookup keys (``_key``) ignore spaces
and plural ``s`` (``NF-1`` == ``NF1`` == ``neurofibromatosis type I``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache

from novabench.errors import NovaInputError

__all__ = ["diagnosis_aliases", "normalize_diagnosis"]


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
        # Greek letters by name, as most texts write them ("β-thalassemia" is beta
        # thalassemia, not thalassemia), a word of their own ("Aβ" is A beta, "αβ" alpha beta).
        **{
            letter: f" {name} "
            for pair in (
                "αalpha βbeta γgamma δdelta εepsilon ζzeta ηeta θtheta ιiota κkappa λlambda "
                "μmu νnu ξxi οomicron πpi ρrho σsigma ςsigma τtau υupsilon φphi χchi ψpsi "
                "ωomega"
            ).split()
            for letter, name in ((pair[0], pair[1:]), (pair[0].upper(), pair[1:]))
        },
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
        (r"^neurone(s?)$", r"neuron\1"),  # motor neurone disease
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
# Separators: anything but a letter or a digit of any script. Letters without an ASCII
# form (Cyrillic, CJK...) stay as words: dropping them made every answer in such a script
# the same empty diagnosis, one cache entry and one lexicon reading for all of them.
_NON_ALNUM = re.compile(r"[\W_]+")


def _fold(text: str) -> str:
    """Lower-case, fold the accents of Latin letters and special letters, spell Greek letters,
    unify apostrophes.

    Only a mark on a Latin letter is an accent to fold (``é`` is ``e``); the marks of other
    scripts are letters' parts (kana voicing, ``ド`` is no ``ト``; Thai tones; Devanagari
    vowels) and stay, recomposed.
    """
    if text.isascii():  # nothing to fold: the same as the steps below, without them
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text).translate(_SPECIAL_LETTERS)
    kept: list[str] = []
    base = ""
    for ch in decomposed:
        if unicodedata.combining(ch):
            if base.isascii() and base.isalpha():
                continue  # an accent of a Latin letter
        else:
            base = ch
        kept.append(ch)
    return unicodedata.normalize("NFC", "".join(kept)).casefold()


# Every spelling rule's pattern contains one of these: a token without any is left as it is,
# and most tokens are (the rules then cost one search instead of one per rule).
_SPELLING_TRIGGER = re.compile(r"ae|oe|our|leuco|sulph|grey|ageing|centre|fibre|neurone")


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


def _join_non(tokens: list[str]) -> list[str]:
    """``non`` joined to the word it negates: "non-obstructive" is one word, never "obstructive"."""
    if "non" not in tokens[:-1]:
        return tokens
    joined: list[str] = []
    for token in tokens:
        if joined and joined[-1] == "non":
            joined[-1] = "non" + token
        else:
            joined.append(token)
    return joined


def _normalize_tokens(text: str) -> list[str]:
    return list(_normalized_tuple(text))


# The first words of the leading labels and of the hedges: a text that starts with none of
# the former, or holds none of the latter, skips that step (most names do).
_LABEL_FIRST_WORDS = frozenset(label[0] for label in _LEADING_LABELS)
_HEDGE_WORDS = frozenset(_HEDGES_BY_FIRST_WORD)


@lru_cache(maxsize=65536)
def _normalized_tuple(text: str) -> tuple[str, ...]:
    folded = _fold(text)
    if "'" in folded:
        folded = _POSSESSIVE.sub(r"\1", folded).replace("'", "")
    tokens = _join_non([_fix_spelling(t) for t in _NON_ALNUM.sub(" ", folded).split()])
    if not _ROMAN.keys().isdisjoint(tokens):
        for i in range(1, len(tokens)):
            if tokens[i] in _ROMAN and tokens[i - 1] in _ROMAN_TRIGGERS:
                tokens[i] = _ROMAN[tokens[i]]
    if tokens and tokens[0] in _LABEL_FIRST_WORDS:
        for label in _LEADING_LABELS:
            if tuple(tokens[: len(label)]) == label:
                tokens = tokens[len(label) :]
                break
    if not _HEDGE_WORDS.isdisjoint(tokens):
        tokens = _remove_phrases(tokens, _HEDGES_BY_FIRST_WORD)
    if _ARTICLES.isdisjoint(tokens):
        return tuple(tokens)
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
    if "(" in text or "[" in text:  # else there is no parenthesis to take out
        text, _ = _split_abbreviations(text)
    return " ".join(_normalized_tuple(text))


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


@lru_cache(maxsize=65536)
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
    if _KEY_OPTIONAL.isdisjoint(tokens) and _KEY_OPTIONAL.isdisjoint(words):
        return "".join(words)  # every word is kept: the core below is all of them
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
