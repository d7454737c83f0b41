"""Diagnostic reasoning: Top-1 and Top-5 accuracy of ranked diagnoses.

A model answers each case with up to five diagnoses, most likely first. A case counts for
Top-1 when the first diagnosis matches the case's ``final_diagnosis``, for Top-5 when any
of the first five does. Whether two diagnoses "match" is decided by a *matcher*: any
callable ``(reference, candidate) -> bool``. The default, :class:`LexiconDiagnosisMatcher`,
is deterministic and offline; an LLM judge (:mod:`novabench.metrics.judge`) follows the
paper's protocol more closely and plugs in the same way.

One prediction names one diagnosis. The lexicon matcher does not count a disease the
prediction negates ("no evidence of X", "X ruled out", "not X", "without X", "X unlikely"),
and a prediction that names two or more different lexicon diseases as alternatives ("X or
Y", "X/Y", "X, Y, Z", "X vs Y", "X and/or Y") is a hedge that matches none of them, so
stuffing a differential into one slot cannot buy a Top-1 (or Top-5) hit. A disease with its
own subtype ("glioma, likely glioblastoma") is one diagnosis, and so is a disease with
qualifiers that are not diseases ("Glioblastoma, IDH-wildtype, left temporal"). A compound
("X with Y") counts as X unless the reference names both. See
:class:`LexiconDiagnosisMatcher` for every rule.

Cases whose reference is a placeholder ("Final diagnosis not found.", as recognised by
:func:`novabench.records.is_placeholder_diagnosis`), or a ``cases`` row whose
``final_diagnosis`` is null or blank (the dataset reader's rule), have no ground truth: they
are left out of both denominators and counted in ``n_cases_without_reference``. A plain
reference string that is None or blank is an input error.

Example:
    >>> result = score_diagnosis(
    ...     [["GBM", "metastasis"], ["meningioma", "Devic's disease"]],
    ...     ["Glioblastoma", "Neuromyelitis optica spectrum disorder"])
    >>> result["top1"], result["top5"], result["n_cases"]
    (0.5, 1.0, 2)
    >>> score_diagnosis([["Glioma or toxoplasmosis"]], ["Cerebral toxoplasmosis"])["top1"]
    0.0
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, Mapping, Protocol, Sequence, runtime_checkable

import numpy as np

from novabench import checks
from novabench.errors import NovaInputError
from novabench.lexicon.diagnoses import (
    _IGNORABLE_WORDS,
    DiagnosisLexicon,
    _key,
    _singular,
    diagnosis_aliases,
    load_diagnosis_lexicon,
    normalize_diagnosis,
    read_diagnosis,
)
from novabench.records import is_placeholder_diagnosis

__all__ = [
    "MAX_PREDICTIONS",
    "BatchDiagnosisMatcher",
    "DiagnosisCaseResult",
    "DiagnosisEvaluation",
    "DiagnosisMatcher",
    "LexiconDiagnosisMatcher",
    "MatchExplanation",
    "describe_matcher",
    "diagnosis_aliases",
    "edit_ratio",
    "normalize_diagnosis",
    "prepare_diagnosis",
    "score_diagnosis",
]

MAX_PREDICTIONS = 5


@runtime_checkable
class DiagnosisMatcher(Protocol):
    """Decides whether a candidate diagnosis names the reference diagnosis.

    Any callable with this signature works: a function, a lambda, an LLM judge.
    """

    def __call__(self, reference: str, candidate: str) -> bool:
        ...


@runtime_checkable
class BatchDiagnosisMatcher(Protocol):
    """A matcher that can also judge many pairs at once (e.g. concurrently over HTTP).

    :func:`prepare_diagnosis` calls ``match_many`` once with every distinct pair when a
    matcher has it; ``labels[i]`` names where pair ``i`` first occurs, for error messages.
    """

    def __call__(self, reference: str, candidate: str) -> bool:
        ...

    def match_many(
        self, pairs: Sequence[tuple[str, str]], *, labels: Sequence[str] | None = None
    ) -> Sequence[bool]:
        ...


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
        if min(current[low - 1:high + 1]) > limit:
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
_FUZZY_STOPWORDS = frozenset("""
    disease disorder syndrome of the a an and or with without in on to due from by for vs
    versus secondary associated related induced acute subacute chronic type grade who form
    variant lesion lesions process condition brain cerebral intracranial cns central nervous
    system early late stage
""".split())
# Head words too vague to be a diagnosis by themselves (never matched through fuzzy rules).
_GENERIC_WORDS = frozenset("""
    degeneration encephalopathy atrophy malformation anomaly abnormality injury damage edema
    necrosis mass tumor neoplasm cyst infection inflammation hemorrhage infarct infarction
    leukoencephalopathy myelopathy neuropathy vasculopathy angiopathy dysplasia hypoplasia
    calcification sclerosis gliosis lesion disease syndrome disorder process pathology
    encephalitis meningitis myelitis abscess hematoma stroke dementia ataxia epilepsy
    seizure seizures hydrocephalus leukodystrophy malignancy cancer carcinoma
""".split())
_QUALIFIER = re.compile(r"\d")
# Words that make a part outside the lexicon read as a disease of its own when only a comma,
# semicolon or slash sets it apart ("Glioblastoma, Menkes disease"); other words there read as
# qualifiers ("Glioblastoma, ring-enhancing").
_DISEASE_HEADS = frozenset("""
    disease diseases disorder syndrome malformation tumor neoplasm cancer carcinoma malignancy
    infection abscess cyst infarct infarction stroke hematoma dementia ataxia epilepsy
    leukodystrophy anomaly
""".split())
_DISEASE_ENDINGS = ("oma", "omas", "itis", "osis", "oses", "iasis", "pathy", "pathies", "plasia",
                    "trophy", "ectasia", "emia", "ism")
_NOT_DISEASES = frozenset({"diagnosis", "prognosis", "necrosis", "gliosis", "atrophy"})


@dataclass(frozen=True)
class MatchExplanation:
    """Why the lexicon matcher decided what it did.

    Attributes:
        match: the verdict.
        rule: which rule decided (``"exact"``, ``"lexicon"``, ``"lexicon-different"``,
            ``"mentions-different"``, ``"too-vague"``, ``"qualifier-mismatch"``, ``"fuzzy"``,
            ``"no-match"``, ``"empty"``, ``"negated"``, ``"several-diseases"``).
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
    diagnosis ("glioma, likely glioblastoma" names glioblastoma). Then, in order:

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
       hemorrhage" matches metastasis, not intracranial hemorrhage). Either way one
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
       ``glioma`` / ``glioblastoma``). A *category* (``brain tumor``, ``infection``...) is
       never accepted in place of a specific disease. Different entries that are not
       ancestor and descendant never match, whatever words they share
       (``neurofibromatosis type 1`` / ``type 2``, ``HSV encephalitis`` / ``autoimmune
       encephalitis``, ``ependymoma`` / ``subependymoma``).
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

    A miss whose reference the candidate mentions only under a negation is explained as
    ``"negated"`` ("Glioblastoma (toxoplasmosis ruled out)" for toxoplasmosis).

    Known limits: terms outside the lexicon joined by ``with`` or ``and``, or set apart by
    a comma when they do not read as diseases ("Cockayne, Aicardi"), count as
    one term with qualifiers, since the fuzzy rule cannot tell a second disease from a
    qualifier. A compound stated effect first names the effect: "hemorrhage due to AVM"
    does not match arteriovenous malformation. Negation is read clause by clause, so
    "lymphoma and toxoplasmosis ruled out" negates both.

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
    """

    def __init__(self, fuzzy_threshold: float = 0.88, *, lexicon: DiagnosisLexicon | None = None) -> None:
        if not isinstance(fuzzy_threshold, (int, float)) or not 0.0 < float(fuzzy_threshold) <= 1.0:
            raise NovaInputError(f"must be in (0, 1], got {fuzzy_threshold!r}",
                                 source="LexiconDiagnosisMatcher", field="fuzzy_threshold")
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
        return (f"lexicon matcher (nova-diagnosis-lexicon, {len(self.lexicon)} entries, "
                f"fuzzy_threshold={self.fuzzy_threshold:g}, one diagnosis per prediction)")

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
        best_ratio, best_names = 0.0, set()
        for other, entry in self.lexicon.keys_near_length(len(key), slack):
            if re.findall(r"\d+", other) != digits:
                continue
            longest = max(len(key), len(other))
            distance = _levenshtein(key, other, int((1.0 - self.fuzzy_threshold) * longest))
            ratio = 1.0 - distance / longest
            if ratio < self.fuzzy_threshold:
                continue
            if ratio > best_ratio:
                best_ratio, best_names = ratio, {entry.name}
            elif ratio == best_ratio:
                best_names.add(entry.name)
        return next(iter(best_names)) if len(best_names) == 1 else None

    def _most_specific(self, names: set[str] | frozenset[str]) -> frozenset[str]:
        """The entries no other entry of ``names`` descends from: one per is-a chain."""
        return frozenset(name for name in names if not any(
            other != name and self.lexicon.is_ancestor(name, other) for other in names))

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
                # Two-letter names ("MS") count only when they explain the rest of the text.
                short_found, short_leftover = self.lexicon.find_mentions(form, short_names=True)
                if self._explained(short_found, short_leftover):
                    found, leftover = short_found, short_leftover
            mentioned.update(entry.name for entry in found)
            first = first or (found[0].name if found else None)
            complete = complete and self._explained(found, leftover)
        if whole:  # an abbreviation names an entry: "Left frontal glioblastoma (GBM)"
            return _Resolution(self._most_specific(whole | mentioned), True,
                               first or next(iter(sorted(whole))))
        if mentioned:
            return _Resolution(self._most_specific(mentioned), complete, first)
        fuzzy = self._fuzzy_lookup(forms[0])
        return _Resolution(frozenset({fuzzy} if fuzzy else ()), fuzzy is not None, fuzzy)

    @staticmethod
    def _explained(found: list[Any], leftover: list[str]) -> bool:
        return bool(found) and not any(
            t not in _IGNORABLE_WORDS or _QUALIFIER.search(t) for t in leftover)

    def _names_a_term(self, normalized: str, explicit: bool) -> bool:
        """Whether a part outside the lexicon names something of its own (rule 8)."""
        tokens = normalized.split()
        if not any(t not in _IGNORABLE_WORDS and t not in _FUZZY_STOPWORDS and len(t) > 1
                   and not _QUALIFIER.search(t) for t in tokens):
            return False
        return explicit or any(
            t in _DISEASE_HEADS or (t.endswith(_DISEASE_ENDINGS) and t not in _NOT_DISEASES)
            for t in tokens)

    def _read_uncached(self, text: str) -> _Statement:
        reading = read_diagnosis(text)
        forms = diagnosis_aliases(reading.affirmed)
        resolution = self._resolve(forms) if forms else _Resolution(frozenset(), False)
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
        return _Statement(forms, resolution, frozenset(negated_entries), tuple(negated_words),
                          tuple(parts))

    def _related(self, a: str, b: str, *, allow_categories: bool) -> bool:
        if a == b:
            return True
        lexicon = self.lexicon
        if lexicon.is_ancestor(a, b):
            return allow_categories or not lexicon.get(a).is_category
        if lexicon.is_ancestor(b, a):
            return allow_categories or not lexicon.get(b).is_category
        return False

    def _any_related(self, left: frozenset[str], right: frozenset[str], *, allow_categories: bool) -> bool:
        return any(self._related(a, b, allow_categories=allow_categories) for a in left for b in right)

    def _only_categories(self, resolution: _Resolution) -> bool:
        return resolution.complete and bool(resolution.entries) and all(
            self.lexicon.get(name).is_category for name in resolution.entries)

    def _hedges_entries(self, statement: _Statement) -> bool:
        """Two alternatives of the statement name unrelated lexicon entries (rule 3)."""
        named = [entries for entries, _ in statement.parts if entries]
        return any(not self._related(a, b, allow_categories=True)
                   for i, left in enumerate(named) for right in named[i + 1:]
                   for a in left for b in right)

    def _hedges_terms(self, statement: _Statement) -> bool:
        """Two or more alternatives name something, not all one lexicon disease (rule 8)."""
        if len(statement.parts) < 2:
            return False
        entries = [named for named, _ in statement.parts]
        return not (all(entries) and len(self._most_specific(frozenset().union(*entries))) == 1)

    def _negates_reference(self, reference: _Statement, candidate: _Statement) -> bool:
        """The candidate mentions the reference's disease, but under a negation."""
        if self._any_related(candidate.negated_entries, reference.resolution.entries,
                             allow_categories=False):
            return True
        words = self._fuzzy_tokens(reference.forms[0])[0] if reference.forms else []
        return any(w not in _GENERIC_WORDS for w in words) and any(
            self._covered(words, list(negated)) for negated in candidate.negated_words)

    # -- fuzzy tokens ------------------------------------------------------------------

    def _fuzzy_tokens(self, normalized: str) -> tuple[list[str], set[str], set[str]]:
        tokens = normalized.split()
        qualifiers = {t for t in tokens if _QUALIFIER.search(t) or len(t) == 1}
        laterality = {t for t in tokens if t in _LATERALITY}
        content = [_singular(t) for t in tokens
                   if t not in qualifiers and t not in laterality and t not in _FUZZY_STOPWORDS]
        return content, qualifiers, laterality

    def _covered(self, words: list[str], by: list[str]) -> bool:
        return all(any(edit_ratio(w, other) >= self.fuzzy_threshold for other in by) for w in words)

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
            raise NovaInputError("reference and candidate must be strings", source="matcher",
                                 field="reference" if not isinstance(reference, str) else "candidate")
        reference_forms = diagnosis_aliases(reference)
        candidate_forms = diagnosis_aliases(candidate)
        if not reference_forms or not candidate_forms:
            return MatchExplanation(False, "empty")
        if reference_forms == candidate_forms:
            return MatchExplanation(True, "exact")
        ref, cand = self._read(reference), self._read(candidate)
        verdict = self._decide(ref, cand)
        if not verdict.match and verdict.rule != "negated" and self._negates_reference(ref, cand):
            return replace(verdict, rule="negated")
        return verdict

    def _decide(self, ref: _Statement, cand: _Statement) -> MatchExplanation:
        reference, candidate = ref.resolution, cand.resolution
        named = dict(reference_entries=tuple(sorted(reference.entries)),
                     candidate_entries=tuple(sorted(candidate.entries)),
                     negated_entries=tuple(sorted(cand.negated_entries)))
        if not cand.forms:
            return MatchExplanation(False, "negated", **named)
        if not ref.forms:
            return MatchExplanation(False, "empty", **named)
        if len(candidate.entries) > 1:
            if self._hedges_entries(cand):
                return MatchExplanation(False, "several-diseases", **named)
            if not all(any(self._related(c, r, allow_categories=True) for r in reference.entries)
                       for c in candidate.entries):
                # Not a compound the reference states in full: the compound names the
                # disease it states first ("metastasis with hemorrhage" names metastasis).
                head = frozenset(c for c in candidate.entries if candidate.first is not None
                                 and self._related(c, candidate.first, allow_categories=True))
                if not self._any_related(head, reference.entries, allow_categories=True):
                    # The reference is among the diseases stated besides (or none is).
                    return MatchExplanation(False, "several-diseases", **named)
                candidate = _Resolution(head, candidate.complete, candidate.first)
        if set(ref.forms) & set(cand.forms):
            return MatchExplanation(True, "exact", **named)
        if reference.complete and candidate.complete and reference.entries and candidate.entries:
            if self._any_related(reference.entries, candidate.entries, allow_categories=False):
                return MatchExplanation(True, "lexicon", **named)
            return MatchExplanation(False, "lexicon-different", **named)
        if reference.entries and candidate.entries and not self._any_related(
                reference.entries, candidate.entries, allow_categories=True):
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
                ref_sides and cand_sides and ref_sides != cand_sides):
            return MatchExplanation(False, "qualifier-mismatch", **named)
        if not ref_words or not cand_words:
            return MatchExplanation(False, "no-match", **named)
        for words, other in ((ref_words, cand_words), (cand_words, ref_words)):
            if any(w not in _GENERIC_WORDS for w in words) and self._covered(words, other):
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


# ---------------------------------------------------------------------------------------
# Scoring
# ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class DiagnosisCaseResult:
    """The verdicts on one case.

    Attributes:
        index: position of the case in the inputs.
        case_id: the case id when the reference was a dataset row, else ``None``.
        reference: the reference diagnosis, as given.
        predictions: the counted predictions (at most five), as given.
        verdicts: one verdict per counted prediction (``False`` for empty strings).
        has_reference: ``False`` for a placeholder reference (case not scored).
        truncated: the prediction list had more than five items.
    """

    index: int
    case_id: str | None
    reference: str
    predictions: tuple[str, ...]
    verdicts: tuple[bool, ...]
    has_reference: bool
    truncated: bool

    @property
    def first_hit_rank(self) -> int | None:
        """1-based rank of the first matching prediction, ``None`` when none matches."""
        return next((rank for rank, hit in enumerate(self.verdicts, start=1) if hit), None)


class DiagnosisEvaluation:
    """Verdicts of every case, ready to aggregate on any resample of the scored cases.

    Items are the scored cases (reference present), in input order; ``item_indices``
    maps them back to input positions. Build it with :func:`prepare_diagnosis`.

    Attributes:
        cases: one :class:`DiagnosisCaseResult` per input example.
        item_indices: input positions of the scored cases.
        n_cases_without_reference: examples left out because the reference is a placeholder.
        n_empty_predictions: scored cases with no non-empty prediction.
        n_predictions_truncated: scored cases whose list had more than five predictions.
        matcher: description of the matcher used.
    """

    def __init__(self, cases: Sequence[DiagnosisCaseResult], matcher: str) -> None:
        self.cases: tuple[DiagnosisCaseResult, ...] = tuple(cases)
        self.matcher = matcher
        scored = [case for case in self.cases if case.has_reference]
        self.item_indices = np.array([case.index for case in scored], dtype=np.int64)
        ranks = np.array([case.first_hit_rank or 0 for case in scored], dtype=np.int64)
        self._top1 = (ranks == 1).astype(np.float64)
        self._top5 = (ranks >= 1).astype(np.float64)
        self.n_cases_without_reference = len(self.cases) - len(scored)
        self.n_empty_predictions = sum(
            1 for case in scored if not any(p.strip() for p in case.predictions))
        self.n_predictions_truncated = sum(1 for case in scored if case.truncated)

    @property
    def n_items(self) -> int:
        """Number of scored cases (the unit a bootstrap resamples)."""
        return int(self.item_indices.size)

    def aggregate(self, indices: np.ndarray | None = None) -> dict[str, float]:
        """Top-1 and Top-5 accuracy over the scored cases, or over a resample of them.

        Args:
            indices: positions among the scored cases (``0 .. n_items - 1``, repeats allowed);
                ``None`` for all of them.

        Returns:
            ``{"top1": ..., "top5": ...}`` as fractions; NaN when there is no case.

        Raises:
            NovaInputError: indices that are not integers or fall outside the items.

        Example:
            >>> evaluation = prepare_diagnosis([["glioma"], ["abscess"]], ["glioma", "lymphoma"])
            >>> evaluation.aggregate(np.array([0, 0, 1]))
            {'top1': 0.6666666666666666, 'top5': 0.6666666666666666}
        """
        if indices is None:
            top1, top5 = self._top1, self._top5
        else:
            chosen = np.asarray(indices)
            if chosen.ndim != 1 or (chosen.size and not np.issubdtype(chosen.dtype, np.integer)):
                raise NovaInputError("must be a 1-D array of integers", source="aggregate",
                                     field="indices")
            if chosen.size and (chosen.min() < 0 or chosen.max() >= self.n_items):
                raise NovaInputError(f"must lie in [0, {self.n_items}), got {chosen.min()}..{chosen.max()}",
                                     source="aggregate", field="indices")
            top1, top5 = self._top1[chosen], self._top5[chosen]
        if top1.size == 0:
            return {"top1": float("nan"), "top5": float("nan")}
        return {"top1": float(top1.mean()), "top5": float(top5.mean())}

    def result(self) -> dict[str, Any]:
        """The full result dictionary returned by :func:`score_diagnosis`.

        Example:
            >>> prepare_diagnosis([["x"]], ["Final diagnosis not found."]).result()["n_cases_without_reference"]
            1
        """
        return {
            **self.aggregate(),
            "n_cases": self.n_items,
            "n_cases_without_reference": self.n_cases_without_reference,
            "n_empty_predictions": self.n_empty_predictions,
            "n_predictions_truncated": self.n_predictions_truncated,
            "matcher": self.matcher,
        }

    def per_case(self) -> list[dict[str, Any]]:
        """One plain dictionary per input example, for reports and inspection.

        Example:
            >>> prepare_diagnosis([["meningioma", "GBM"]], ["glioblastoma"]).per_case()[0]["first_hit_rank"]
            2
        """
        return [
            {"index": case.index, "case_id": case.case_id, "reference": case.reference,
             "predictions": list(case.predictions), "verdicts": list(case.verdicts),
             "first_hit_rank": case.first_hit_rank, "has_reference": case.has_reference,
             "truncated": case.truncated}
            for case in self.cases
        ]


# The official release's own wording for a case without a diagnosis; a `cases` row whose
# final_diagnosis is null or blank stands for the same thing (is_placeholder_diagnosis).
NO_DIAGNOSIS_PLACEHOLDER = "Final diagnosis not found."


def _read_reference(index: int, reference: Any) -> tuple[str, str | None]:
    """The reference text and case id.

    A dataset row with a null or blank ``final_diagnosis`` has no ground truth (the
    reader's rule); a plain reference that is None or blank is an input error.
    """
    record = f"example {index}"
    case_id = None
    if isinstance(reference, Mapping):
        case_id = reference.get("case_id")
        case_id = str(case_id) if case_id is not None else None
        if case_id:
            record = f"example {index} ({case_id})"
        if "final_diagnosis" not in reference:
            raise NovaInputError("a reference row needs a 'final_diagnosis'", source="references",
                                 record=record, field="final_diagnosis")
        reference = reference["final_diagnosis"]
        field = "final_diagnosis"
        if reference is None or (isinstance(reference, str) and not reference.strip()):
            return NO_DIAGNOSIS_PLACEHOLDER, case_id
    else:
        field = "reference"
    checks.text(reference, source="references", record=record, field=field)
    return reference, case_id


def _read_predictions(index: int, predictions: Any) -> tuple[list[str], bool]:
    record = f"example {index}"
    if isinstance(predictions, str):
        predictions = [predictions]
    if not isinstance(predictions, (list, tuple, np.ndarray)):
        raise NovaInputError(
            f"expected a list of diagnoses (most likely first), got {type(predictions).__name__}",
            source="predictions", record=record, field="predictions")
    items = list(predictions)
    for position, item in enumerate(items):
        checks.text(item, source="predictions", record=record, field=f"predictions[{position}]",
                    allow_blank=True)
    return items[:MAX_PREDICTIONS], len(items) > MAX_PREDICTIONS


def _judge_pairs(matcher: Any, pairs: list[tuple[str, str]], labels: list[str]) -> list[bool]:
    if isinstance(matcher, BatchDiagnosisMatcher):
        verdicts = list(matcher.match_many(pairs, labels=labels))
        if len(verdicts) != len(pairs):
            raise NovaInputError(f"match_many returned {len(verdicts)} verdicts for {len(pairs)} pairs",
                                 source="matcher", field="match_many")
    else:
        verdicts = []
        for pair, label in zip(pairs, labels):
            try:
                verdicts.append(matcher(*pair))
            except Exception as error:
                if hasattr(error, "add_note"):
                    error.add_note(f"while matching {label}: reference {pair[0]!r}, candidate {pair[1]!r}")
                raise
    for verdict, label in zip(verdicts, labels):
        if not isinstance(verdict, (bool, np.bool_)):
            raise NovaInputError(f"the matcher must return a bool, got {type(verdict).__name__}",
                                 source="matcher", record=label, field="verdict")
    return [bool(v) for v in verdicts]


def prepare_diagnosis(
    predictions: Sequence[Sequence[str] | str],
    references: Sequence[str | Mapping[str, Any]],
    *,
    matcher: DiagnosisMatcher | None = None,
) -> DiagnosisEvaluation:
    """Validate the inputs and judge every prediction, keeping per-case verdicts.

    Each distinct (reference, prediction) pair is judged once; a matcher with a
    ``match_many`` method (such as the LLM judges) receives all pairs in one call.
    Empty or blank predictions are misses and are never sent to the matcher.

    Args:
        predictions: per case, the predicted diagnoses, most likely first. A plain string
            counts as a one-item list; only the first five items count; an empty list is
            legal (a miss).
        references: per case, the final diagnosis: a string or a ``cases`` row (a mapping
            with ``final_diagnosis``, optionally ``case_id`` for messages). A reference
            without ground truth (a placeholder such as "Final diagnosis not found.", see
            ``novabench.records.is_placeholder_diagnosis``, or a row whose
            ``final_diagnosis`` is null or blank, as the dataset reader counts it) is
            excluded and counted. A plain reference that is None or blank is an error.
        matcher: any callable ``(reference, candidate) -> bool``; defaults to
            :class:`LexiconDiagnosisMatcher`.

    Returns:
        A :class:`DiagnosisEvaluation`.

    Raises:
        NovaInputError: different lengths, a reference row without a ``final_diagnosis``
            key, a plain reference that is not a string or is blank, a prediction list that is not a list, a prediction that is not a
            string, or a matcher verdict that is not a bool. The message names the example
            index and field.

    Example:
        >>> evaluation = prepare_diagnosis(
        ...     [["meningioma", "glioblastoma"], "anything"],
        ...     [{"case_id": "case0001", "final_diagnosis": "Glioblastoma"},
        ...      {"case_id": "case0002", "final_diagnosis": "Final diagnosis not found."}])
        >>> evaluation.n_items, evaluation.cases[0].verdicts
        (1, (False, True))
    """
    if isinstance(predictions, (str, Mapping)) or not isinstance(predictions, (Sequence, np.ndarray)):
        raise NovaInputError("expected a list with one entry per case", source="predictions",
                             field="predictions")
    if isinstance(references, (str, Mapping)) or not isinstance(references, (Sequence, np.ndarray)):
        raise NovaInputError("expected a list with one entry per case", source="references",
                             field="references")
    if len(predictions) != len(references):
        raise NovaInputError(f"{len(predictions)} prediction lists for {len(references)} references",
                             source="predictions", field="length")
    matcher = matcher if matcher is not None else LexiconDiagnosisMatcher()
    if not callable(matcher):
        raise NovaInputError("the matcher must be callable as matcher(reference, candidate)",
                             source="matcher", field="matcher")

    parsed = []
    pair_ids: dict[tuple[str, str], int] = {}
    labels: list[str] = []
    for index, (case_predictions, reference) in enumerate(zip(predictions, references)):
        reference_text, case_id = _read_reference(index, reference)
        items, truncated = _read_predictions(index, case_predictions)
        has_reference = not is_placeholder_diagnosis(reference_text)
        parsed.append((index, case_id, reference_text, items, truncated, has_reference))
        if not has_reference:
            continue
        for rank, item in enumerate(items, start=1):
            if item.strip() and (reference_text, item) not in pair_ids:
                pair_ids[(reference_text, item)] = len(labels)
                where = f"example {index}" + (f" ({case_id})" if case_id else "")
                labels.append(f"{where}, prediction {rank}")

    pairs = list(pair_ids)
    verdicts = _judge_pairs(matcher, pairs, labels) if pairs else []
    cases = []
    for index, case_id, reference_text, items, truncated, has_reference in parsed:
        case_verdicts = tuple(
            has_reference and bool(item.strip()) and verdicts[pair_ids[(reference_text, item)]]
            for item in items)
        cases.append(DiagnosisCaseResult(index, case_id, reference_text, tuple(items),
                                         case_verdicts, has_reference, truncated))
    return DiagnosisEvaluation(cases, describe_matcher(matcher))


def score_diagnosis(
    predictions: Sequence[Sequence[str] | str],
    references: Sequence[str | Mapping[str, Any]],
    *,
    matcher: DiagnosisMatcher | None = None,
) -> dict[str, Any]:
    """Top-1 and Top-5 diagnostic accuracy.

    See :func:`prepare_diagnosis` for the inputs and the rules.

    Returns:
        ``top1`` and ``top5`` (fractions of the scored cases; NaN when none), ``n_cases``
        (scored cases), ``n_cases_without_reference`` (references without ground truth, excluded),
        ``n_empty_predictions`` and ``n_predictions_truncated`` (among scored cases), and
        ``matcher`` (its description).

    Raises:
        NovaInputError: see :func:`prepare_diagnosis`.

    Example:
        >>> # case 0: hit at rank 1; case 1: hit at rank 3; case 2: no hit
        >>> result = score_diagnosis(
        ...     [["PML"], ["glioma", "abscess", "Tuberculous meningitis"], ["stroke"]],
        ...     ["Progressive multifocal leukoencephalopathy", "TB meningitis", "Susac syndrome"])
        >>> round(result["top1"], 4), round(result["top5"], 4)
        (0.3333, 0.6667)
    """
    return prepare_diagnosis(predictions, references, matcher=matcher).result()
