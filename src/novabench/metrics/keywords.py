"""Neuroradiology keywords of a caption: the sets behind ClinicalF1, ModalityF1 and BinaryF1.

The NOVA paper extracts keywords with an LLM judge; that is neither offline
nor deterministic, so the default here is :class:`LexiconKeywordExtractor`: a
phrase matcher over our own lexicon (``novabench/resources/neuro_lexicon.json``,
about 820 canonical terms with about 4,500 synonyms). Any callable that follows the
:class:`KeywordExtractor` protocol (an LLM judge, a stricter lexicon) can
replace it in :func:`novabench.metrics.captioning.score_captioning`.

What the lexicon extractor returns for one caption:

- ``modality``: sequences and planes. The NOVA modality vocabulary
  ``{flair, axial, sagittal, t1, t2, coronal, dwi, t1w, t2w, weighted}`` folds
  into canonical terms: ``T1``, ``T1w``, ``T1-weighted``, ``T1WI``, ``MPRAGE``
  -> ``t1w``; ``T2``, ``T2w``, ``T2-weighted`` -> ``t2w``; ``FLAIR``, ``T2-FLAIR``
  -> ``flair``; ``DWI``, ``diffusion-weighted`` -> ``dwi``; the three planes
  keep their names; ``weighted`` on its own is not a keyword (it only
  qualifies a sequence). Further sequences count too: ``adc``, ``swi``, ``gre``
  (T2*), ``contrast`` (post-gadolinium, ``T1+C``), ``pd``, ``stir``, ``mra``,
  ``mrv``, ``perfusion``, ``spectroscopy``.
- ``clinical``: anatomy (lobes, sides, deep grey nuclei, ventricles, posterior
  fossa, meninges, vessels, and small structures such as the mammillary bodies,
  fornix, tectum, periaqueductal grey, dentate nucleus, claustrum), signal and
  enhancement characteristics, and findings, each as its canonical term
  (British spelling: ``oedema``, ``haemorrhage``); characteristics and findings
  under negation as ``"no:<term>"``. Findings include the named signs of
  neuroradiology, each one term with its variants (``hot cross bun sign``,
  ``eye of the tiger sign``, ``face of the giant panda sign``, ``dawson
  fingers``, ``dural tail sign``, ``ivy sign``, ``molar tooth sign``,
  ``target sign``, ``open ring sign``, ``swirl sign``, ``empty delta sign``,
  ``dense mca sign``, ``pulvinar sign`` (hockey stick), ...), spectroscopy
  (``elevated choline``, ``reduced naa``, ``lactate peak``, ``lipid peak``,
  ``elevated myo inositol``) and perfusion (``hyperperfusion`` for raised rCBV,
  ``hypoperfusion``) findings, and developmental entities as their own terms
  (``heterotopia``, ``agenesis``, ``hypoplasia``, ``schizencephaly``,
  ``polymicrogyria``, ``lissencephaly``, ...), not one broad "malformation".
  A sequence named inside a characteristic ("T2 hyperintensity") gives the
  modality ``t2w`` *and* the characteristic ``hyperintensity``; a compound
  keeps its specific part ("periventricular white matter" gives
  ``periventricular`` and ``white matter``).
- ``abnormal``: True when a finding, or a characteristic that implies
  abnormality (``hyperintensity``, ``enhancement``, ``restricted diffusion``,
  ...), is present and not negated; False when no such term is present and the
  caption states normality (``normal``, ``unremarkable``, ``no abnormality``,
  ..., a statement of symmetry such as "symmetric in volume and signal", or the
  generic finding ``abnormality`` negated in any wording: "shows no signal
  abnormality", "without a focal signal abnormality", "abnormality is not
  seen"); None otherwise (nothing decides it, e.g. "Axial FLAIR image.", "No
  haemorrhage." or "No abnormal enhancement.": ruling one finding out is a
  negated finding, not a statement that the study is normal). The ruled-out
  generic finding is a statement, not a keyword: every wording of it ("no focal
  abnormality", "without a focal signal abnormality") gives no keyword at all,
  its negated qualifiers ("focal") included. A negated neutral characteristic
  right before another negated term only qualifies it ("no focal lesion" is
  ``no:lesion``), and a normal phrase opened by ``no`` negates what its list goes
  on to name ("no abnormal signal or enhancement" gives ``no:enhancement``). A normal structure whose absence is
  a finding (``flow void``, ``posterior pituitary bright spot``, ``myelination``:
  the lexicon's ``abnormal_when_negated``) makes the caption abnormal when
  negated ("absent flow void"). See :mod:`novabench.metrics.captioning` for how
  None enters BinaryF1.

Matching: the caption is normalised (Unicode compatibility form, accents
removed, lowercase, ``œ``/``æ`` spelt out, a few rewrites such as ``T2*`` ->
``t2star`` and ``T1+C`` -> ``t1 postcontrast``), split into words and clause
punctuation (hyphens, slashes and other symbols separate words; decimals stay
one word), each word's British spelling folded to American for matching, and
phrases matched longest first, left to right. Plurals of anatomy,
characteristic and finding phrases are generated, classical ones too ("nuclei",
"cochleae", "infundibula", "stenoses", "cavernomata"). A qualifier (``abnormal``,
``pathological``) names the finding ``abnormality`` only when it stands alone:
directly before a characteristic or finding it only qualifies it
("abnormal enhancement" is ``enhancement``).

Landmarks: a finding named after a location reference (``above``, ``below``,
``superior to``, ``remote from``, ``contralateral to``, ...; the lexicon's
``location_references``), past articles and words such as ``known`` or ``level of``,
anatomy and the landmark's own characteristics, is where this image is, not what
it shows: it is not extracted ("a level above the lesion" gives no ``lesion``;
"above the right frontal enhancing mass" keeps ``right`` and ``frontal lobe``).
A direction after a finding of the same clause relates two findings of this image
("oedema below the mass" keeps ``mass``); only the ``remote_references`` (``remote
from``, ``distant from``, ``contralateral to``, ...) name a landmark there too.
Other relations keep it ("oedema surrounding the lesion", "adjacent to the mass").

Signs the lexicon does not know: the plain words right before ``sign`` (at most three,
back to an article, a verb such as ``shows``, a qualifier such as ``typical``, a matched
term or punctuation) name a finding ``<words> sign`` ("the claw sign" gives ``claw
sign``; "no sign of haemorrhage" names no sign).

Coordination: modifiers joined by ``and``/``or`` share their head when the phrase
they make with it is a term of its own: "lateral and third ventricles" gives
``lateral ventricle`` and ``third ventricle``, "leptomeningeal or dural
enhancement" both enhancements, "dural thickening and enhancement" ``dural
enhancement``.

Laterality and absence: ``both`` directly before a structure or a plural noun gives
``bilateral`` ("both globi pallidi", "both convexities"); ``absent`` directly before a
structure, or ``without a``/``without an`` before one, names the finding ``agenesis``
("absent septum pellucidum", "without a vermis") and negates nothing.

Negation: a trigger (``no``, ``not``, ``without``, ``absence of``, ``negative
for``, ``free of``, ``no evidence of``, ...) negates the characteristics and
findings after it up to a clause boundary: ``. ; : ! ?``, a terminator
(``but``, ``however``, ``although``, ``which``, ``there is``, ...), or a comma or
``and`` that is not followed directly by another characteristic or finding
(so "no haemorrhage, oedema or mass effect" negates all three, "no
haemorrhage and the ventricles are enlarged" only the first). Once the scope has
negated a term, ``in``, ``within``, ``inside``, ``into`` or ``of`` ends it: what follows
says where or of what the finding is absent ("no restricted diffusion within the cyst"
keeps the cyst, "no enhancement of the lesion" the lesion), unless ``of`` follows a
partitive ("no foci of restricted diffusion") or a coordinator began another item of the
ruled-out list ("no oedema or areas of enhancement"). Hedged evidence against a
finding negates it ("arguing against calcification", "haemorrhage is unlikely").
A prefix
(``non-enhancing``) negates the next term only. A post-negation (``is absent``,
``not seen``, ``ruled out``, ``resolved``, ...) negates the characteristics and
findings of its clause before it. Pseudo-negations (``no change``, ``not
only``) negate nothing.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

__all__ = [
    "CLINICAL_FAMILIES",
    "NEGATED_PREFIX",
    "CaptionKeywords",
    "KeywordExtractor",
    "KeywordMatch",
    "LexiconKeywordExtractor",
    "default_keyword_extractor",
    "load_lexicon",
]

Family = Literal["modality", "anatomy", "characteristic", "finding"]
FAMILIES: tuple[Family, ...] = ("modality", "anatomy", "characteristic", "finding")
CLINICAL_FAMILIES: tuple[Family, ...] = ("anatomy", "characteristic", "finding")
NEGATABLE_FAMILIES: frozenset[str] = frozenset({"characteristic", "finding"})
NEGATED_PREFIX = "no:"


@dataclass(frozen=True)
class CaptionKeywords:
    """The keywords of one caption.

    Attributes:
        modality: canonical sequence and plane terms.
        clinical: canonical anatomy, characteristic and finding terms;
            negated characteristics and findings as ``"no:<term>"``.
        abnormal: True (abnormal), False (stated normal), None (undecidable).
    """

    modality: frozenset[str]
    clinical: frozenset[str]
    abnormal: bool | None


@runtime_checkable
class KeywordExtractor(Protocol):
    """Anything that turns a caption into :class:`CaptionKeywords`.

    It must be deterministic for scores to be reproducible; it is called once
    per distinct caption.
    """

    def __call__(self, text: str) -> CaptionKeywords:  # pragma: no cover - protocol
        ...


@dataclass(frozen=True)
class KeywordMatch:
    """One matched term, for inspecting why a caption got its keywords.

    Attributes:
        family: ``"modality"``, ``"anatomy"``, ``"characteristic"`` or ``"finding"``.
        term: the canonical term.
        negated: whether a negation applies.
        phrase: the normalised words that matched.
    """

    family: str
    term: str
    negated: bool
    phrase: str


# --------------------------------------------------------------------------- #
# Lexicon loading
# --------------------------------------------------------------------------- #

_LEXICON_RESOURCE = "neuro_lexicon.json"
_WORD_OR_PUNCTUATION = re.compile(r"[a-z0-9]+(?:[.,][0-9]+)*|[.;:!?,]")
_CLAUSE_END = frozenset(".;:!?")
_PUNCTUATION = _CLAUSE_END | {","}  # the tokens that are no words
_SPELT_OUT = str.maketrans({"œ": "oe", "æ": "ae", "ß": "ss", "ø": "o", "đ": "d", "ł": "l"})
# "both" directly before a structure states laterality ("both globi pallidi": bilateral).
_BOTH = "both"
# "absent" directly before a structure names a missing structure, not a ruled-out finding
# ("absent septum pellucidum" is agenesis; "absent enhancement" stays a negation).
_ABSENT = "absent"
# After a negated finding, these words introduce where (or of what) it is absent, not a
# second finding: "no restricted diffusion within the cyst", "no enhancement of the lesion"
# rule out the restriction and the enhancement, not the cyst or the lesion.
_PLACE_PREPOSITIONS = frozenset({"in", "within", "inside", "into", "of"})
# ... except "of" after a word that only counts or bounds what follows: "no foci of restricted
# diffusion" rules out the diffusion restriction itself.
_PARTITIVES = frozenset(
    "focus foci area areas region regions zone zones spot spots amount evidence".split()
)
# "without a vermis": a missing structure (agenesis), as "absent vermis" is.
_WITHOUT = "without"
_ARTICLES = frozenset({"a", "an"})
# Words that join two coordinated modifiers of one head ("lateral and third ventricles").
_COORDINATORS = frozenset({"and", "or"})
# A named sign the lexicon does not know ("the claw sign") is still a finding, named by the
# plain words before "sign" (at most three), back to one of these.
_SIGN = "sign"
_LONGEST_SIGN_NAME = 3
_NOT_SIGN_NAMES = frozenset(
    """
    a an the this that these those its their his her our of with without and or but no not
    nor is are was were be been being has have had shows show showing shown demonstrates
    demonstrate demonstrating demonstrated reveals revealing revealed displays depicts
    illustrates note noted positive negative typical classic classical characteristic
    characteristically so called known as in on at by for to from into onto within via
    producing giving forming creating called termed also again clear clearly subtle
    obvious definite possible probable image images figure slice section level
""".split()
)
# Distinct words whose spelling fold an extractor remembers (captions reuse few words).
_FOLD_CACHE_LIMIT = 1 << 16


def load_lexicon(source: str | Path | Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Read a keyword lexicon: ours by default, or a JSON file / mapping of the same shape.

    Args:
        source: None for the bundled ``neuro_lexicon.json``, a path to a JSON
            file, or an already-loaded mapping.

    Returns:
        The lexicon as a dict.

    Example:
        >>> lexicon = load_lexicon()
        >>> sorted(lexicon["families"])
        ['anatomy', 'characteristic', 'finding', 'modality']
        >>> "oedema" in lexicon["families"]["finding"]
        True
    """
    if source is None:
        text = (
            resources.files("novabench")
            .joinpath("resources")
            .joinpath(_LEXICON_RESOURCE)
            .read_text("utf-8")
        )
        return json.loads(text)
    if isinstance(source, Mapping):
        return dict(source)
    return json.loads(Path(source).read_text("utf-8"))


@dataclass(frozen=True)
class _Rewrite:
    """A lexicon rewrite, with the characters every match of its pattern contains."""

    pattern: re.Pattern[str]
    replacement: str
    required: tuple[str, ...]

    @classmethod
    def compile(cls, pattern: str, replacement: str) -> _Rewrite:
        compiled = re.compile(pattern)
        return cls(compiled, replacement, _required_characters(compiled))

    def apply(self, text: str) -> str:
        for character in self.required:
            if character not in text:
                return text  # the pattern cannot match: no scan
        return self.pattern.sub(self.replacement, text)


def _required_characters(pattern: re.Pattern[str]) -> tuple[str, ...]:
    """Characters that every match of ``pattern`` contains, punctuation first ((): unknown).

    Read from the pattern's parse tree: literals of its top-level sequence, of groups and
    of repeats that occur at least once; branches, classes and lookarounds are not
    looked into, and a case-insensitive pattern or group requires nothing.
    """
    if pattern.flags & re.IGNORECASE:
        return ()
    # The standard library's own regex parser (private: any failure, e.g. on another Python,
    # means no shortcut, which changes no keyword: the pattern is then always applied).
    try:
        try:
            parser: Any = importlib.import_module("re._parser")  # Python 3.11+
        except ImportError:  # pragma: no cover - Python 3.10
            parser = importlib.import_module("sre_parse")
        tree = parser.parse(pattern.pattern, pattern.flags)
    except Exception:
        return ()
    required: set[str] = set()
    pending = [list(tree)]
    while pending:
        for operator, argument in pending.pop():
            if operator is parser.LITERAL:
                required.add(chr(argument))
            elif operator is parser.SUBPATTERN:
                _group, added_flags, _removed_flags, sequence = argument
                if not added_flags & re.IGNORECASE:
                    pending.append(list(sequence))
            elif operator in (parser.MAX_REPEAT, parser.MIN_REPEAT):
                minimum, _maximum, sequence = argument
                if minimum >= 1:
                    pending.append(list(sequence))
    return tuple(sorted(required, key=lambda character: (character.isalnum(), character)))


def _normalise(text: str, rewrites: list[_Rewrite]) -> str:
    if text.isascii():
        # For ASCII, casefold is lower, the spelt-out letters and NFKD change nothing and
        # no character is combining: the same text without three passes over it.
        text = text.lower()
    else:
        text = unicodedata.normalize("NFKD", text.casefold().translate(_SPELT_OUT))
        if not text.isascii():
            text = "".join(character for character in text if not unicodedata.combining(character))
    for rewrite in rewrites:  # rewrite.apply(text), inlined: this runs for every text
        for character in rewrite.required:
            if character not in text:
                break  # the pattern cannot match: no scan
        else:
            text = rewrite.pattern.sub(rewrite.replacement, text)
    return text


# Latin and Greek plurals of anatomy and pathology ("nuclei", "foramina", "metastases").
_CLASSICAL_PLURALS: tuple[tuple[str, str], ...] = (
    ("oma", "omata"),
    ("us", "i"),
    ("um", "a"),
    ("on", "a"),
    ("a", "ae"),
    ("ex", "ices"),
    ("ix", "ices"),
    ("is", "es"),
    ("en", "ina"),
    ("nx", "nges"),
)
_CLASSICAL_ENDINGS = tuple(ending for ending, _ in _CLASSICAL_PLURALS)


def _plurals(word: str) -> tuple[str, ...]:
    """The English plural of ``word`` and, for a classical ending, its classical plural too."""
    if word.endswith(("s", "x", "z", "ch", "sh")):
        english = word + "es"
    elif word.endswith("y") and len(word) > 1 and word[-2] not in "aeiou":
        english = word[:-1] + "ies"
    else:
        english = word + "s"
    if not word.endswith(_CLASSICAL_ENDINGS):  # no classical ending: the English plural only
        return (english,)
    classical = next(
        (
            word[: -len(ending)] + plural
            for ending, plural in _CLASSICAL_PLURALS
            if word.endswith(ending) and len(word) > len(ending) + 2
        ),
        None,
    )
    return (english,) if classical is None or classical == english else (english, classical)


@dataclass(frozen=True)
class _Entry:
    kind: str  # term, trigger, prefix, post, pseudo, terminator, normal
    emits: tuple[tuple[str, str], ...] = ()
    # A term that emits a characteristic or finding (what a negation scope continues into).
    negatable: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        negatable = self.kind == "term" and any(
            family in NEGATABLE_FAMILIES for family, _ in self.emits
        )
        object.__setattr__(self, "negatable", negatable)


class LexiconKeywordExtractor:
    """Deterministic, offline keyword extractor over a neuroradiology lexicon.

    The matching, negation and normality rules are described in the module
    docstring of :mod:`novabench.metrics.keywords`.

    Args:
        lexicon: None for our bundled lexicon, a JSON path or a mapping of the same shape.

    Raises:
        ValueError: the lexicon maps one phrase to two different meanings.

    Example:
        >>> extract = LexiconKeywordExtractor()
        >>> keywords = extract("Axial T2-weighted image: hyperintense lesion in the left thalamus "
        ...                    "without haemorrhage.")
        >>> sorted(keywords.modality)
        ['axial', 't2w']
        >>> sorted(keywords.clinical)
        ['hyperintensity', 'left', 'lesion', 'no:haemorrhage', 'thalamus']
        >>> keywords.abnormal
        True
        >>> extract("Unremarkable brain MRI, no hemorrhage.").abnormal
        False
        >>> landmark = extract("Coronal FLAIR image below the lesion without a signal abnormality.")
        >>> sorted(landmark.clinical), landmark.abnormal
        ([], False)
        >>> sorted(extract("Oedema below the mass; no enhancement of the lesion.").clinical)
        ['lesion', 'mass', 'no:enhancement', 'oedema']
        >>> sorted(extract("Dilated lateral and third ventricles.").clinical)
        ['enlargement', 'lateral ventricle', 'third ventricle']
    """

    def __init__(self, lexicon: str | Path | Mapping[str, Any] | None = None) -> None:
        data = load_lexicon(lexicon)
        if lexicon is None:
            self.lexicon_name = f"nova-keyword-lexicon-{data.get('version')}"
        else:  # a user's lexicon: named by its content, so two of them never look alike
            digest = hashlib.sha256(json.dumps(data, sort_keys=True).encode("utf-8")).hexdigest()
            self.lexicon_name = f"custom keyword lexicon sha256:{digest[:12]}"
        # word -> its folded spelling; punctuation tokens are never folded.
        self._folded: dict[str, str] = {mark: mark for mark in (*_CLAUSE_END, ",")}
        self._rewrites = [
            _Rewrite.compile(pattern, replacement)
            for pattern, replacement in data.get("rewrites", [])
        ]
        self._folds = [tuple(pair) for pair in data.get("spelling_folds", [])]
        # Matches where any fold's British spelling occurs: a word without one keeps its
        # spelling (most do), found in one search instead of a test per fold.
        self._fold_trigger = (
            re.compile("|".join(re.escape(british) for british, _ in self._folds))
            if self._folds
            else None
        )
        neutral = set(data.get("neutral_characteristics", []))
        no_plural = set(data.get("no_plural", []))
        self._phrases: dict[tuple[str, ...], _Entry] = {}
        self._abnormal_terms: set[tuple[str, str]] = set()

        generated: list[tuple[tuple[str, ...], _Entry]] = []
        for family, terms in data["families"].items():
            if family not in FAMILIES:
                raise ValueError(f"unknown keyword family {family!r}; expected one of {FAMILIES}")
            for term, synonyms in terms.items():
                entry = _Entry("term", ((family, term),))
                if family == "finding" or (family == "characteristic" and term not in neutral):
                    self._abnormal_terms.add((family, term))
                for phrase in {term, *synonyms}:
                    words = self._phrase_words(phrase)
                    self._add(words, entry, phrase)
                    if family != "modality" and term not in no_plural:
                        generated.extend(
                            ((*words[:-1], self._fold(plural)), entry)
                            for plural in _plurals(words[-1])
                        )
        for phrase, emits in data.get("compounds", {}).items():
            self._add(
                self._phrase_words(phrase), _Entry("term", tuple((f, t) for f, t in emits)), phrase
            )
        for kind, key in (
            ("trigger", "negation_triggers"),
            ("prefix", "negation_prefixes"),
            ("post", "post_negation_triggers"),
            ("pseudo", "pseudo_negations"),
            ("terminator", "scope_terminators"),
            ("normal", "normal_phrases"),
        ):
            for phrase in data.get(key, []):
                self._add(self._phrase_words(phrase), _Entry(kind), phrase)
        for phrase, emits in data.get("normal_statements", {}).items():
            self._add(
                self._phrase_words(phrase),
                _Entry("normal", tuple((f, t) for f, t in emits)),
                phrase,
            )
        for words, entry in generated:  # a generated plural never overrides a listed phrase
            self._phrases.setdefault(words, entry)
        # A finding after "above the", "remote from the", ... is a landmark, not in the image.
        self._trigger_words = frozenset(
            words[0]
            for words in (self._phrase_words(p) for p in data.get("negation_triggers", []))
            if len(words) == 1
        )
        self._references = frozenset(
            self._phrase_words(phrase) for phrase in data.get("location_references", [])
        )
        self._longest_reference = max((len(words) for words in self._references), default=0)
        # Every reference ends in one of these: a plain word outside them ends none.
        self._reference_ends = frozenset(words[-1] for words in self._references)
        # "remote from the mass" always names a landmark; "below the mass" after a finding
        # relates two findings of this image ("a cyst below the mass" shows both).
        self._remote_references = frozenset(
            self._phrase_words(phrase) for phrase in data.get("remote_references", [])
        )
        self._reference_words = frozenset(
            " ".join(self._phrase_words(phrase)) for phrase in data.get("reference_words", [])
        )
        self._neutral = frozenset(("characteristic", term) for term in neutral)
        # Ruling out the generic finding ("no signal abnormality") rules out every finding.
        self._normal_when_negated = frozenset(
            ("finding", term) for term in data.get("normal_when_negated", [])
        )
        # Normal structures whose absence is abnormal ("absent flow void").
        self._abnormal_when_negated = frozenset(
            (family, term)
            for term in data.get("abnormal_when_negated", [])
            for family in ("characteristic", "finding")
            if term in data["families"].get(family, {})
        )
        # "abnormal" names a finding on its own, but in "abnormal enhancement" it only qualifies.
        self._qualifiers = frozenset(
            " ".join(self._phrase_words(phrase)) for phrase in data.get("qualifiers", [])
        )
        # Per first word, the lengths of the phrases it starts, longest first: most words
        # start none and are passed over, the others try only lengths that exist.
        lengths_from: dict[str, set[int]] = {}
        for words in self._phrases:
            lengths_from.setdefault(words[0], set()).add(len(words))
        self._lengths_from = {
            word: tuple(sorted(lengths, reverse=True)) for word, lengths in lengths_from.items()
        }
        self.n_terms = sum(len(terms) for terms in data["families"].values())

    @property
    def description(self) -> str:
        """What reports record as the ``keyword_extractor`` setting: the lexicon and its version.

        A report scored with another lexicon version records another description, so a
        leaderboard does not compare the keyword metrics of the two silently.

        Example:
            >>> LexiconKeywordExtractor().description
            'lexicon (offline, nova-keyword-lexicon-5)'
        """
        return f"lexicon (offline, {self.lexicon_name})"

    # -- construction helpers ------------------------------------------------ #

    def _fold(self, word: str) -> str:
        folded = self._folded.get(word)
        if folded is None:
            folded = word
            if self._fold_trigger is not None and self._fold_trigger.search(word) is not None:
                for british, american in self._folds:
                    if british in folded:
                        folded = folded.replace(british, american)
            if len(self._folded) < _FOLD_CACHE_LIMIT:
                self._folded[word] = folded
        return folded

    def _words(self, text: str) -> list[str]:
        known = self._folded  # holds the punctuation tokens, which stay as they are
        return [
            known[token] if token in known else self._fold(token)
            for token in _WORD_OR_PUNCTUATION.findall(_normalise(text, self._rewrites))
        ]

    def _phrase_words(self, phrase: str) -> tuple[str, ...]:
        words = tuple(self._words(phrase))
        if not words or not _PUNCTUATION.isdisjoint(words):
            raise ValueError(f"lexicon phrase {phrase!r} must be words only")
        return words

    def _add(self, words: tuple[str, ...], entry: _Entry, phrase: str) -> None:
        existing = self._phrases.get(words)
        if existing is not None and existing != entry:
            raise ValueError(f"lexicon phrase {phrase!r} has two meanings: {existing} and {entry}")
        self._phrases[words] = entry

    # -- extraction ---------------------------------------------------------- #

    def _segments(self, words: list[str]) -> list[tuple[str, _Entry | None]]:
        """Longest-first phrase matching: (matched text, entry or None for a plain word)."""
        segments: list[tuple[str, _Entry | None]] = []
        phrases, lengths_from = self._phrases, self._lengths_from
        n_words = len(words)
        position = 0
        while position < n_words:
            word = words[position]
            for length in lengths_from.get(word, ()):
                if length > n_words - position:
                    continue
                entry = phrases.get(tuple(words[position : position + length]))
                if entry is not None:
                    phrase = word if length == 1 else " ".join(words[position : position + length])
                    segments.append((phrase, entry))
                    position += length
                    break
            else:
                segments.append((word, None))
                position += 1
        self._share_coordinated_heads(segments)
        return segments

    def _share_coordinated_heads(self, segments: list[tuple[str, _Entry | None]]) -> None:
        """Read coordinated modifiers with the head they share, in place.

        "lateral and third ventricles" names the lateral ventricles too, "leptomeningeal or
        dural enhancement" leptomeningeal enhancement, and "dural thickening and enhancement"
        dural enhancement: a modifier joined by ``and``/``or`` takes the other side's head
        (or the head takes the other side's modifier) when that phrase is a term of its own.
        """
        phrases = self._phrases
        for index in range(len(segments) - 2):
            joiner, joiner_entry = segments[index + 1]
            if joiner_entry is not None or joiner not in _COORDINATORS:
                continue
            phrase, entry = segments[index]
            next_phrase, next_entry = segments[index + 2]
            if next_entry is None or next_entry.kind != "term":
                continue
            words, next_words = phrase.split(), next_phrase.split()
            if entry is None or entry.kind == "term":
                # "lateral and third ventricles"; "amino acid and lactate peaks" (plain words
                # before the modifier may belong to it)
                plain_before = 0
                while (
                    entry is None
                    and plain_before < 2
                    and index - plain_before > 0
                    and segments[index - plain_before - 1][1] is None
                ):
                    plain_before += 1
                found = False
                for first in range(index - plain_before, index + 1):
                    modifier = [
                        word for part, _ in segments[first : index + 1] for word in part.split()
                    ]
                    for start in range(1, len(next_words)):
                        joined = (*modifier, *next_words[start:])
                        candidate = phrases.get(joined)
                        if (
                            candidate is not None
                            and candidate.kind == "term"
                            and candidate != entry
                        ):
                            segments[first : index + 1] = [(" ".join(joined), candidate)] + [
                                ("", None)
                            ] * (index - first)
                            found = True
                            break
                    if found:
                        break
            if entry is not None and entry.kind == "term" and len(next_words) == 1:
                for end in range(len(words) - 1, 0, -1):  # "dural thickening and enhancement"
                    joined = (*words[:end], *next_words)
                    candidate = phrases.get(joined)
                    if (
                        candidate is not None
                        and candidate.kind == "term"
                        and candidate != next_entry
                    ):
                        segments[index + 2] = (" ".join(joined), candidate)
                        break

    def explain(self, text: str) -> tuple[list[KeywordMatch], bool]:
        """Every matched term with its negation, and whether normality is stated.

        Args:
            text: one caption.

        Returns:
            ``(matches, states_normal)``.

        Example:
            >>> matches, normal = LexiconKeywordExtractor().explain("Non-enhancing mass; oedema is absent.")
            >>> [(m.term, m.negated, m.phrase) for m in matches], normal
            ([('enhancement', True, 'enhancing'), ('mass', False, 'mass'), ('oedema', True, 'edema')], False)
        """
        matches, states_normal = self._scan(text)
        return [KeywordMatch(*match) for match in matches], states_normal

    def _scan(self, text: str) -> tuple[list[tuple[str, str, bool, str]], bool]:
        """:meth:`explain` with plain ``(family, term, negated, phrase)`` tuples (cheaper)."""
        segments = self._segments(self._words(text))
        matches: list[tuple[str, str, bool, str]] = []
        states_normal = False
        in_scope = False  # inside a negation trigger's scope
        negated_in_scope = False  # the scope has negated a term already
        listing = False  # a coordinator since the scope's last negated term: a new list item
        prefix_pending = False  # "non-" waits for its term
        clause_start = 0  # index in matches where the current clause began
        referring = False  # after "above the", "remote from the": a landmark follows
        plain_run: tuple[str, ...] = ()  # the plain words just before this segment
        finding_in_clause = False  # a finding of this image was named earlier in the clause
        positions: list[int] = []  # the segment of each match

        def starts_negatable(index: int) -> bool:
            entry = segments[index][1] if index < len(segments) else None
            return entry is not None and entry.negatable

        def starts_plain_plural(index: int) -> bool:
            phrase, entry = segments[index] if index < len(segments) else ("", None)
            return entry is None and len(phrase) > 3 and phrase.endswith("s") and phrase[-2] != "s"

        def starts_structure(index: int) -> bool:
            entry = segments[index][1] if index < len(segments) else None
            return (
                entry is not None
                and entry.kind == "term"
                and all(family == "anatomy" for family, _ in entry.emits)
            )

        for index, (phrase, entry) in enumerate(segments):
            if self._references:
                if entry is None:
                    plain_run = (*plain_run, phrase)[-self._longest_reference :]
                    reference = (
                        next(
                            (
                                plain_run[start:]
                                for start in range(len(plain_run))
                                if plain_run[start:] in self._references
                            ),
                            None,
                        )
                        if phrase in self._reference_ends
                        else None
                    )
                    if reference is not None and (
                        not finding_in_clause or reference in self._remote_references
                    ):
                        referring = True
                        continue
                    if referring and phrase in self._reference_words:
                        continue
                    referring = False
                else:
                    plain_run = ()
                    if referring:
                        if entry.kind == "term" and all(
                            family == "anatomy" or (family, term) in self._neutral
                            for family, term in entry.emits
                        ):
                            pass  # "above the left thalamic lesion": the place is still named
                        elif entry.kind == "term" and any(
                            pair in self._abnormal_terms for pair in entry.emits
                        ):
                            # The landmark ("the enhancing tumour") is not a finding of this
                            # image; a finding ends it, a characteristic may qualify what follows.
                            referring = all(family != "finding" for family, _ in entry.emits)
                            continue
                        else:
                            referring = False
            if entry is None:  # a plain word: only clause marks, commas, "and", "both" act
                if phrase == _BOTH and (
                    starts_structure(index + 1) or starts_plain_plural(index + 1)
                ):
                    matches.append(("anatomy", "bilateral", False, phrase))
                    positions.append(index)
                elif phrase in _CLAUSE_END:
                    in_scope = prefix_pending = finding_in_clause = listing = False
                    clause_start = len(matches)
                elif phrase in (",", "and") and not starts_negatable(index + 1):
                    in_scope = False
                elif (
                    phrase in _PLACE_PREPOSITIONS
                    and negated_in_scope
                    and not listing
                    and not (phrase == "of" and matches and matches[-1][3] in _PARTITIVES)
                ):
                    in_scope = False
                elif phrase in _COORDINATORS or phrase == ",":
                    # "no microbleeds or areas of blooming": what follows is another ruled-out
                    # item, so its "of" does not end the negation.
                    listing = negated_in_scope and in_scope
                elif phrase == _SIGN and (name := _sign_name(segments, index)):
                    negated = in_scope or prefix_pending
                    negated_in_scope = negated_in_scope or (negated and in_scope)
                    matches.append(("finding", name, negated, name))
                    positions.append(index)
                    finding_in_clause = True
                    prefix_pending = False
                continue
            kind = entry.kind
            if phrase in _CLAUSE_END or kind == "terminator":
                in_scope = prefix_pending = finding_in_clause = listing = False
                clause_start = len(matches)
            elif phrase in (",", "and"):
                if not starts_negatable(index + 1):
                    in_scope = False
            elif kind == "trigger":
                if (phrase == _ABSENT and starts_structure(index + 1)) or (
                    phrase == _WITHOUT
                    and index + 1 < len(segments)
                    and segments[index + 1][0] in _ARTICLES
                    and starts_structure(index + 2)
                ):
                    matches.append(("finding", "agenesis", False, phrase))
                    positions.append(index)
                else:
                    in_scope, negated_in_scope, listing = True, False, False
            elif kind == "prefix":
                prefix_pending = True
            elif kind == "post":
                for earlier in range(clause_start, len(matches)):
                    family, term, negated, matched = matches[earlier]
                    if family in NEGATABLE_FAMILIES and not negated:
                        matches[earlier] = (family, term, True, matched)
            elif kind == "normal":
                states_normal = True
                if phrase.split(" ", 1)[0] in self._trigger_words:
                    # "no abnormal signal or enhancement" rules out the enhancement too
                    in_scope = negated_in_scope = True
                for family, term in entry.emits:  # "symmetric in volume" keeps "symmetric"
                    matches.append((family, term, False, phrase))
                    positions.append(index)
            elif kind == "term":
                if phrase in self._qualifiers and starts_negatable(index + 1):
                    continue
                for family, term in entry.emits:
                    negated = family in NEGATABLE_FAMILIES and (in_scope or prefix_pending)
                    negated_in_scope = negated_in_scope or (negated and in_scope)
                    listing = listing and not (negated and in_scope)
                    matches.append((family, term, negated, phrase))
                    positions.append(index)
                    finding_in_clause = finding_in_clause or (family, term) in self._abnormal_terms
                prefix_pending = False
        # Ruling out the generic finding, in any wording, is a statement of normality:
        # "without a focal signal abnormality" reads as "no focal abnormality" does (normal,
        # no keyword). A negated neutral characteristic right before another negated term
        # only qualifies it ("no focal lesion" rules out a lesion, not focality).
        dropped: set[int] = set()
        for at in range(len(matches) - 1, -1, -1):
            family, term, negated, _ = matches[at]
            if not negated:
                continue
            if (family, term) in self._normal_when_negated:
                states_normal = True
                dropped.add(at)
            elif (
                (family, term) in self._neutral
                and at + 1 < len(matches)
                and matches[at + 1][2]
                and positions[at + 1] == positions[at] + 1
            ):
                dropped.add(at)
        if dropped:
            matches = [match for at, match in enumerate(matches) if at not in dropped]
        return matches, states_normal

    def __call__(self, text: str) -> CaptionKeywords:
        """Extract the keywords of one caption (see the class example)."""
        matches, states_normal = self._scan(text)
        modality = frozenset(term for family, term, _, _ in matches if family == "modality")
        clinical = frozenset(
            f"{NEGATED_PREFIX}{term}" if negated else term
            for family, term, negated, _ in matches
            if family in CLINICAL_FAMILIES
        )
        if any(
            (family, term) in (self._abnormal_when_negated if negated else self._abnormal_terms)
            for family, term, negated, _ in matches
        ):
            abnormal: bool | None = True
        elif states_normal:
            abnormal = False
        else:
            abnormal = None
        return CaptionKeywords(modality=modality, clinical=clinical, abnormal=abnormal)


def _sign_name(segments: list[tuple[str, _Entry | None]], index: int) -> str:
    """The name of a sign the lexicon does not know: "claw sign" from "the claw sign" ("": none).

    The plain words of two letters or more right before ``segments[index]`` ("sign"), back to
    a word of :data:`_NOT_SIGN_NAMES`, a matched term or punctuation, at most three.
    """
    words: list[str] = []
    before = index - 1
    while before >= 0 and len(words) < _LONGEST_SIGN_NAME:
        word, entry = segments[before]
        if entry is not None or not word.isalpha() or len(word) < 2 or word in _NOT_SIGN_NAMES:
            break
        words.insert(0, word)
        before -= 1
    return f"{' '.join(words)} {_SIGN}" if words else ""


_DEFAULT: LexiconKeywordExtractor | None = None


def default_keyword_extractor() -> LexiconKeywordExtractor:
    """The shared :class:`LexiconKeywordExtractor` over our bundled lexicon (built once per process).

    Returns:
        The extractor.

    Example:
        >>> default_keyword_extractor() is default_keyword_extractor()
        True
    """
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = LexiconKeywordExtractor()
    return _DEFAULT
