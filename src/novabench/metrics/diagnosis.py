"""Diagnostic reasoning: Top-1 and Top-5 accuracy of ranked diagnoses.

A model answers each case with up to five diagnoses, most likely first. A case counts for
Top-1 when the first diagnosis matches the case's ``final_diagnosis``, for Top-5 when any
of the first five does. Whether two diagnoses "match" is decided by a *matcher*: any
callable ``(reference, candidate) -> bool``. The default, :class:`LexiconDiagnosisMatcher`,
is deterministic and offline; an LLM judge (:mod:`novabench.metrics.judge`) follows the
paper's protocol more closely and plugs in the same way.

Cases whose reference is a placeholder ("Final diagnosis not found.", as recognised by
:func:`novabench.data.release.is_placeholder_diagnosis`), or a ``cases`` row whose
``final_diagnosis`` is null or blank (the dataset reader's rule), have no ground truth: they
are left out of both denominators and counted in ``n_cases_without_reference``. A plain
reference string that is None or blank is an input error.

Example:
    >>> result = score_diagnosis(
    ...     [["GBM", "metastasis"], ["meningioma", "Devic's disease"]],
    ...     ["Glioblastoma", "Neuromyelitis optica spectrum disorder"])
    >>> result["top1"], result["top5"], result["n_cases"]
    (0.5, 1.0, 2)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Mapping, Protocol, Sequence, runtime_checkable

import numpy as np

from novabench.data.release import is_placeholder_diagnosis
from novabench.errors import NovaInputError
from novabench.metrics.diagnosis_lexicon import (
    _IGNORABLE_WORDS,
    DiagnosisLexicon,
    _key,
    _singular,
    diagnosis_aliases,
    load_diagnosis_lexicon,
    normalize_diagnosis,
)

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


@dataclass(frozen=True)
class MatchExplanation:
    """Why the lexicon matcher decided what it did.

    Attributes:
        match: the verdict.
        rule: which rule decided (``"exact"``, ``"lexicon"``, ``"lexicon-different"``,
            ``"mentions-different"``, ``"too-vague"``, ``"qualifier-mismatch"``, ``"fuzzy"``,
            ``"no-match"``, ``"empty"``).
        reference_entries: lexicon entries recognised in the reference.
        candidate_entries: lexicon entries recognised in the candidate.
    """

    match: bool
    rule: str
    reference_entries: tuple[str, ...] = ()
    candidate_entries: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Resolution:
    entries: frozenset[str]
    complete: bool  # every word of the text is a lexicon name or an ignorable qualifier


class LexiconDiagnosisMatcher:
    """The default diagnosis matcher: deterministic, offline, rule-based.

    Both strings are normalised (:func:`normalize_diagnosis`; parenthesised abbreviations
    are kept as aliases). Then, in order:

    1. **Empty**: an empty candidate never matches.
    2. **Exact**: any normalised form of the reference equals any form of the candidate.
    3. **Lexicon** (both sides fully recognised): each side is *recognised* when it is a
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
    4. **Different diseases mentioned**: if both sides mention lexicon entries (even
       partly recognised) and no pair is related as in rule 3, no match.
    5. **Too vague**: a side recognised as categories only does not match.
    6. **Fuzzy tokens** (a side not recognised): numbers and single letters (``type 3``,
       ``type c``) must be identical when both sides state some, and laterality likewise;
       the content words (stopwords such as disease/syndrome/of/the/acute/chronic/brain
       removed, plural ``s`` dropped) of one side must all be *covered* by the other's: each
       has a word on the other side with :func:`edit_ratio` >= ``fuzzy_threshold``.
       Either direction suffices (specificity again), but the covered side needs a
       content word that is not a vague head word alone (``encephalopathy``,
       ``degeneration``, ``cyst``, ``tumor``...).

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
    """

    def __init__(self, fuzzy_threshold: float = 0.88, *, lexicon: DiagnosisLexicon | None = None) -> None:
        if not isinstance(fuzzy_threshold, (int, float)) or not 0.0 < float(fuzzy_threshold) <= 1.0:
            raise NovaInputError(f"must be in (0, 1], got {fuzzy_threshold!r}",
                                 source="LexiconDiagnosisMatcher", field="fuzzy_threshold")
        self.fuzzy_threshold = float(fuzzy_threshold)
        self.lexicon = lexicon if lexicon is not None else load_diagnosis_lexicon()
        self._resolve = lru_cache(maxsize=16384)(self._resolve_uncached)

    @property
    def description(self) -> str:
        """A one-line description for reports.

        Example:
            >>> LexiconDiagnosisMatcher().description.startswith("lexicon matcher")
            True
        """
        return (f"lexicon matcher (nova-diagnosis-lexicon, {len(self.lexicon)} entries, "
                f"fuzzy_threshold={self.fuzzy_threshold:g})")

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

    def _resolve_uncached(self, text: str) -> _Resolution:
        forms = diagnosis_aliases(text)
        whole = {entry.name for form in forms if (entry := self.lexicon.lookup_key(_key(form)))}
        if whole:
            return _Resolution(frozenset(whole), True)
        mentioned: set[str] = set()
        complete = True
        for form in forms:
            found, leftover = self.lexicon.find_mentions(form)
            if not self._explained(found, leftover):
                # Two-letter names ("MS") count only when they explain the rest of the text.
                short_found, short_leftover = self.lexicon.find_mentions(form, short_names=True)
                if self._explained(short_found, short_leftover):
                    found, leftover = short_found, short_leftover
            mentioned.update(entry.name for entry in found)
            complete = complete and self._explained(found, leftover)
        if mentioned:
            return _Resolution(frozenset(mentioned), complete)
        fuzzy = self._fuzzy_lookup(forms[0]) if forms else None
        return _Resolution(frozenset({fuzzy} if fuzzy else ()), fuzzy is not None)

    @staticmethod
    def _explained(found: list[Any], leftover: list[str]) -> bool:
        return bool(found) and not any(
            t not in _IGNORABLE_WORDS or _QUALIFIER.search(t) for t in leftover)

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
        """
        if not isinstance(reference, str) or not isinstance(candidate, str):
            raise NovaInputError("reference and candidate must be strings", source="matcher",
                                 field="reference" if not isinstance(reference, str) else "candidate")
        reference_forms = diagnosis_aliases(reference)
        candidate_forms = diagnosis_aliases(candidate)
        if not reference_forms or not candidate_forms:
            return MatchExplanation(False, "empty")
        if set(reference_forms) & set(candidate_forms):
            return MatchExplanation(True, "exact")
        ref, cand = self._resolve(reference), self._resolve(candidate)
        named = dict(reference_entries=tuple(sorted(ref.entries)),
                     candidate_entries=tuple(sorted(cand.entries)))
        if ref.complete and cand.complete and ref.entries and cand.entries:
            if self._any_related(ref.entries, cand.entries, allow_categories=False):
                return MatchExplanation(True, "lexicon", **named)
            return MatchExplanation(False, "lexicon-different", **named)
        if ref.entries and cand.entries and not self._any_related(
                ref.entries, cand.entries, allow_categories=True):
            return MatchExplanation(False, "mentions-different", **named)
        if self._only_categories(ref) or self._only_categories(cand):
            return MatchExplanation(False, "too-vague", **named)
        ref_words, ref_qualifiers, ref_sides = self._fuzzy_tokens(reference_forms[0])
        cand_words, cand_qualifiers, cand_sides = self._fuzzy_tokens(candidate_forms[0])
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
    if not isinstance(reference, str):
        raise NovaInputError(f"expected a string, got {type(reference).__name__}",
                             source="references", record=record, field=field)
    if not reference.strip():
        raise NovaInputError("the reference diagnosis is empty", source="references",
                             record=record, field=field)
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
        if not isinstance(item, str):
            raise NovaInputError(f"expected a string, got {type(item).__name__}",
                                 source="predictions", record=record, field=f"predictions[{position}]")
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
            ``novabench.data.release.is_placeholder_diagnosis``, or a row whose
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
