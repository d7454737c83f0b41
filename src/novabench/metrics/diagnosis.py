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
    >>> result["top1-lexicon"], result["top5-lexicon"], result["n_cases"]
    (0.5, 1.0, 2)
    >>> score_diagnosis([["Glioma or toxoplasmosis"]], ["Cerebral toxoplasmosis"])["top1-lexicon"]
    0.0

Keys name the reading (one key, one quantity): ``top1`` / ``top5`` are the paper's Top-1 and
Top-5 and come only from a case judge (``case_judge=``, the paper's procedure: one verdict per
case on all five predictions); the offline lexicon matcher gives ``top1-lexicon`` /
``top5-lexicon`` (a proxy, not comparable with the paper); any other ``matcher=`` (a pair judge
such as :class:`novabench.metrics.judge.OpenAIChatJudge`, or a function) gives
``top1-pairwise`` / ``top5-pairwise``. ``match_rule`` in the result says which reading ran.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from novabench import checks
from novabench.errors import NovaInputError
from novabench.lexicon.diagnoses import diagnosis_aliases, normalize_diagnosis
from novabench.metrics.diagnosis_matcher import (
    LexiconDiagnosisMatcher,
    MatchExplanation,
    describe_matcher,
    edit_ratio,
)
from novabench.records import is_placeholder_diagnosis

__all__ = [
    "DIAGNOSIS_KEYS",
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

#: The (Top-1, Top-5) keys of each way of matching (``DiagnosisEvaluation.match_rule``): the
#: paper's names only for the case judge, the paper's procedure.
DIAGNOSIS_KEYS: dict[str, tuple[str, str]] = {
    "case-judge": ("top1", "top5"),
    "matcher": ("top1-lexicon", "top5-lexicon"),
    "pair-judge": ("top1-pairwise", "top5-pairwise"),
    "callable": ("top1-pairwise", "top5-pairwise"),
}


@runtime_checkable
class DiagnosisMatcher(Protocol):
    """Decides whether a candidate diagnosis names the reference diagnosis.

    Any callable with this signature works: a function, a lambda, an LLM judge.
    """

    def __call__(self, reference: str, candidate: str) -> bool: ...


@runtime_checkable
class BatchDiagnosisMatcher(Protocol):
    """A matcher that can also judge many pairs at once (e.g. concurrently over HTTP).

    :func:`prepare_diagnosis` calls ``match_many`` once with every distinct pair when a
    matcher has it; ``labels[i]`` names where pair ``i`` first occurs, for error messages.
    """

    def __call__(self, reference: str, candidate: str) -> bool: ...

    def match_many(
        self, pairs: Sequence[tuple[str, str]], *, labels: Sequence[str] | None = None
    ) -> Sequence[bool]: ...


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
        match_rule: how verdicts were reached, for per-case tables: ``"matcher"`` (the
            lexicon matcher), ``"pair-judge"`` (a judge of (reference, candidate) pairs, such
            as the LLM judges), ``"callable"`` (another matcher function) or ``"case-judge"``
            (one verdict per case, protocol mode).
        keys: the (Top-1, Top-5) keys of that reading (:data:`DIAGNOSIS_KEYS`): ``top1`` /
            ``top5`` for the case judge only.
    """

    def __init__(
        self, cases: Sequence[DiagnosisCaseResult], matcher: str, match_rule: str = "matcher"
    ) -> None:
        self.cases: tuple[DiagnosisCaseResult, ...] = tuple(cases)
        self.matcher = matcher
        self.match_rule = match_rule
        self.keys: tuple[str, str] = DIAGNOSIS_KEYS[match_rule]
        scored = [case for case in self.cases if case.has_reference]
        self.item_indices = np.array([case.index for case in scored], dtype=np.int64)
        ranks = np.array([case.first_hit_rank or 0 for case in scored], dtype=np.int64)
        self._top1 = (ranks == 1).astype(np.float64)
        self._top5 = (ranks >= 1).astype(np.float64)
        self.n_cases_without_reference = len(self.cases) - len(scored)
        self.n_empty_predictions = sum(
            1 for case in scored if not any(p.strip() for p in case.predictions)
        )
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
            ``{top1 key: ..., top5 key: ...}`` as fractions (the keys of :attr:`keys`); NaN
            when there is no case.

        Raises:
            NovaInputError: indices that are not integers or fall outside the items.

        Example:
            >>> evaluation = prepare_diagnosis([["glioma"], ["abscess"]], ["glioma", "lymphoma"])
            >>> evaluation.aggregate(np.array([0, 0, 1]))
            {'top1-lexicon': 0.6666666666666666, 'top5-lexicon': 0.6666666666666666}
        """
        if indices is None:
            top1, top5 = self._top1, self._top5
        else:
            chosen = np.asarray(indices)
            if chosen.ndim != 1 or (chosen.size and not np.issubdtype(chosen.dtype, np.integer)):
                raise NovaInputError(
                    "must be a 1-D array of integers", source="aggregate", field="indices"
                )
            if chosen.size and (chosen.min() < 0 or chosen.max() >= self.n_items):
                raise NovaInputError(
                    f"must lie in [0, {self.n_items}), got {chosen.min()}..{chosen.max()}",
                    source="aggregate",
                    field="indices",
                )
            top1, top5 = self._top1[chosen], self._top5[chosen]
        top1_key, top5_key = self.keys
        if top1.size == 0:
            return {top1_key: float("nan"), top5_key: float("nan")}
        return {top1_key: float(top1.mean()), top5_key: float(top5.mean())}

    def aggregate_resamples(self, indices: np.ndarray) -> dict[str, np.ndarray]:
        """:meth:`aggregate` of every row of ``indices`` at once (the bootstrap's fast path).

        Example:
            >>> evaluation = prepare_diagnosis([["glioma"], ["abscess"]], ["glioma", "lymphoma"])
            >>> evaluation.aggregate_resamples(np.array([[0, 1], [0, 0]]))["top1-lexicon"].tolist()
            [0.5, 1.0]
        """
        chosen = np.asarray(indices)
        if chosen.ndim != 2 or (chosen.size and not np.issubdtype(chosen.dtype, np.integer)):
            raise NovaInputError(
                "must be a 2-D array of integers, one resample per row",
                source="aggregate_resamples",
                field="indices",
            )
        if chosen.size and (chosen.min() < 0 or chosen.max() >= self.n_items):
            raise NovaInputError(
                f"must lie in [0, {self.n_items}), got {chosen.min()}..{chosen.max()}",
                source="aggregate_resamples",
                field="indices",
            )
        top1_key, top5_key = self.keys
        if chosen.shape[1] == 0:
            return {top1_key: np.full(len(chosen), np.nan), top5_key: np.full(len(chosen), np.nan)}
        return {
            top1_key: self._top1[chosen].mean(axis=1),
            top5_key: self._top5[chosen].mean(axis=1),
        }

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
            "match_rule": self.match_rule,
        }

    def per_case(self) -> list[dict[str, Any]]:
        """One plain dictionary per input example, for reports and inspection.

        Example:
            >>> prepare_diagnosis([["meningioma", "GBM"]], ["glioblastoma"]).per_case()[0]["first_hit_rank"]
            2
        """
        return [
            {
                "index": case.index,
                "case_id": case.case_id,
                "reference": case.reference,
                "predictions": list(case.predictions),
                "verdicts": list(case.verdicts),
                "first_hit_rank": case.first_hit_rank,
                "has_reference": case.has_reference,
                "truncated": case.truncated,
            }
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
            raise NovaInputError(
                "a reference row needs a 'final_diagnosis'",
                source="references",
                record=record,
                field="final_diagnosis",
            )
        reference = reference["final_diagnosis"]
        field = "final_diagnosis"
        if reference is None or (isinstance(reference, str) and not reference.strip()):
            return NO_DIAGNOSIS_PLACEHOLDER, case_id
    else:
        field = "reference"
    checks.text(reference, source="references", record=record, field=field)
    return reference, case_id


def _read_context(index: int, reference: Any, contexts: Sequence[Any] | None) -> str | None:
    """The case's clinical context: ``contexts[index]`` when given, else the row's history."""
    record = f"example {index}"
    if contexts is not None:
        context, field = contexts[index], "contexts"
    elif isinstance(reference, Mapping):
        context, field = reference.get("clinical_history"), "clinical_history"
    else:
        return None
    if context is not None and not isinstance(context, str):
        raise NovaInputError(
            f"expected a string or None, got {type(context).__name__}",
            source="references",
            record=record,
            field=field,
        )
    return context if context is not None and context.strip() else None


def _read_predictions(index: int, predictions: Any) -> tuple[list[str], bool]:
    record = f"example {index}"
    if isinstance(predictions, str):
        predictions = [predictions]
    if not isinstance(predictions, (list, tuple, np.ndarray)):
        raise NovaInputError(
            f"expected a list of diagnoses (most likely first), got {type(predictions).__name__}",
            source="predictions",
            record=record,
            field="predictions",
        )
    items = list(predictions)
    for position, item in enumerate(items):
        checks.text(
            item,
            source="predictions",
            record=record,
            field=f"predictions[{position}]",
            allow_blank=True,
        )
    return items[:MAX_PREDICTIONS], len(items) > MAX_PREDICTIONS


def _judge_pairs(matcher: Any, pairs: list[tuple[str, str]], labels: list[str]) -> list[bool]:
    if isinstance(matcher, BatchDiagnosisMatcher):
        verdicts = list(matcher.match_many(pairs, labels=labels))
        if len(verdicts) != len(pairs):
            raise NovaInputError(
                f"match_many returned {len(verdicts)} verdicts for {len(pairs)} pairs",
                source="matcher",
                field="match_many",
            )
    else:
        verdicts = []
        for pair, label in zip(pairs, labels):
            try:
                verdicts.append(matcher(*pair))
            except Exception as error:
                if hasattr(error, "add_note"):
                    error.add_note(
                        f"while matching {label}: reference {pair[0]!r}, candidate {pair[1]!r}"
                    )
                raise
    for verdict, label in zip(verdicts, labels):
        if not isinstance(verdict, (bool, np.bool_)):
            raise NovaInputError(
                f"the matcher must return a bool, got {type(verdict).__name__}",
                source="matcher",
                record=label,
                field="verdict",
            )
    return [bool(v) for v in verdicts]


def _check_per_case(values: Any, name: str, entry: str) -> None:
    """Refuse ``values`` unless it is a list-like of one ``entry`` per case (not a str or dict)."""
    if isinstance(values, (str, Mapping)) or not isinstance(values, (Sequence, np.ndarray)):
        raise NovaInputError(f"expected a list with one {entry} per case", source=name, field=name)


def prepare_diagnosis(
    predictions: Sequence[Sequence[str] | str],
    references: Sequence[str | Mapping[str, Any]],
    *,
    matcher: DiagnosisMatcher | None = None,
    case_judge: Any = None,
    contexts: Sequence[str | None] | None = None,
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
        case_judge: instead of a matcher, a judge with ``judge_cases`` (such as
            :class:`novabench.metrics.judge.OpenAICaseJudge`): one verdict per scored case
            with a non-blank prediction gives its Top-1 and Top-5 (protocol mode). The
            judge also receives each case's clinical context (``contexts=`` of its
            ``judge_cases``).
        contexts: per case, the clinical history sent to the case judge (None or blank:
            none). By default a reference row's ``clinical_history``; a plain string
            reference has none. Matchers do not use it.

    Returns:
        A :class:`DiagnosisEvaluation`.

    Raises:
        NovaInputError: different lengths, a reference row without a ``final_diagnosis``
            key, a plain reference that is not a string or is blank, a prediction list that
            is not a list, a prediction that is not a string, a context that is not a
            string or None, contexts of another length than the references, or a matcher
            verdict that is not a bool. The message names the example index and field.

    Example:
        >>> evaluation = prepare_diagnosis(
        ...     [["meningioma", "glioblastoma"], "anything"],
        ...     [{"case_id": "case0001", "final_diagnosis": "Glioblastoma"},
        ...      {"case_id": "case0002", "final_diagnosis": "Final diagnosis not found."}])
        >>> evaluation.n_items, evaluation.cases[0].verdicts
        (1, (False, True))
    """
    _check_per_case(predictions, "predictions", "entry")
    _check_per_case(references, "references", "entry")
    if len(predictions) != len(references):
        raise NovaInputError(
            f"{len(predictions)} prediction lists for {len(references)} references",
            source="predictions",
            field="length",
        )
    if contexts is not None:
        _check_per_case(contexts, "contexts", "context")
        if len(contexts) != len(references):
            raise NovaInputError(
                f"{len(contexts)} contexts for {len(references)} references",
                source="contexts",
                field="length",
            )
    if case_judge is not None:
        if matcher is not None:
            raise NovaInputError(
                "give either a matcher or a case judge, not both",
                source="matcher",
                field="case_judge",
            )
        if not callable(getattr(case_judge, "judge_cases", None)):
            raise NovaInputError(
                "the case judge needs a judge_cases(cases, labels=...) method",
                source="matcher",
                field="case_judge",
            )
    matcher = matcher if matcher is not None else LexiconDiagnosisMatcher()
    if case_judge is None and not callable(matcher):
        raise NovaInputError(
            "the matcher must be callable as matcher(reference, candidate)",
            source="matcher",
            field="matcher",
        )

    parsed = []
    pair_ids: dict[tuple[str, str], int] = {}
    labels: list[str] = []
    case_contexts: list[str | None] = []
    for index, (case_predictions, reference) in enumerate(zip(predictions, references)):
        reference_text, case_id = _read_reference(index, reference)
        context = _read_context(index, reference, contexts)
        items, truncated = _read_predictions(index, case_predictions)
        has_reference = not is_placeholder_diagnosis(reference_text)
        parsed.append((index, case_id, reference_text, items, truncated, has_reference))
        case_contexts.append(context)
        if not has_reference or case_judge is not None:
            continue
        for rank, item in enumerate(items, start=1):
            if item.strip() and (reference_text, item) not in pair_ids:
                pair_ids[(reference_text, item)] = len(labels)
                where = f"example {index}" + (f" ({case_id})" if case_id else "")
                labels.append(f"{where}, prediction {rank}")

    if case_judge is not None:
        return _judge_by_case(case_judge, parsed, case_contexts)
    pairs = list(pair_ids)
    verdicts = _judge_pairs(matcher, pairs, labels) if pairs else []
    cases = []
    for index, case_id, reference_text, items, truncated, has_reference in parsed:
        case_verdicts = tuple(
            has_reference and bool(item.strip()) and verdicts[pair_ids[(reference_text, item)]]
            for item in items
        )
        cases.append(
            DiagnosisCaseResult(
                index,
                case_id,
                reference_text,
                tuple(items),
                case_verdicts,
                has_reference,
                truncated,
            )
        )
    return DiagnosisEvaluation(cases, describe_matcher(matcher), _match_rule(matcher))


def _match_rule(matcher: Any) -> str:
    if isinstance(matcher, LexiconDiagnosisMatcher):
        return "matcher"
    return "pair-judge" if isinstance(matcher, BatchDiagnosisMatcher) else "callable"


def _judge_by_case(
    case_judge: Any, parsed: list[Any], contexts: list[str | None]
) -> DiagnosisEvaluation:
    """Protocol mode: one case-judge verdict per scored case with a non-blank prediction.

    The cases' contexts go with them only when one is known, so a judge without a
    ``contexts`` argument still works on references without a history.
    """
    asked = [
        (index, case_id, reference_text, items)
        for index, case_id, reference_text, items, _, has_reference in parsed
        if has_reference and any(item.strip() for item in items)
    ]
    labels = [
        f"example {index}" + (f" ({case_id})" if case_id else "") for index, case_id, _, _ in asked
    ]
    asked_contexts = [contexts[index] for index, _, _, _ in asked]
    context_option = (
        {"contexts": asked_contexts} if any(c is not None for c in asked_contexts) else {}
    )
    verdicts = case_judge.judge_cases(
        [(reference_text, items) for _, _, reference_text, items in asked],
        labels=labels,
        **context_option,
    )
    if len(verdicts) != len(asked):
        raise NovaInputError(
            f"judge_cases returned {len(verdicts)} verdicts for {len(asked)} cases",
            source="matcher",
            field="judge_cases",
        )
    slots = {entry[0]: verdict.matched_slot for entry, verdict in zip(asked, verdicts)}
    cases = []
    for index, case_id, reference_text, items, truncated, has_reference in parsed:
        slot = slots.get(index)
        # A slot naming a blank prediction is not a hit: blanks are misses in every mode.
        case_verdicts = tuple(
            has_reference and bool(item.strip()) and rank == slot
            for rank, item in enumerate(items, start=1)
        )
        cases.append(
            DiagnosisCaseResult(
                index,
                case_id,
                reference_text,
                tuple(items),
                case_verdicts,
                has_reference,
                truncated,
            )
        )
    description = getattr(case_judge, "description", None)
    return DiagnosisEvaluation(
        cases,
        description if isinstance(description, str) else type(case_judge).__name__,
        "case-judge",
    )


def score_diagnosis(
    predictions: Sequence[Sequence[str] | str],
    references: Sequence[str | Mapping[str, Any]],
    *,
    matcher: DiagnosisMatcher | None = None,
    case_judge: Any = None,
    contexts: Sequence[str | None] | None = None,
) -> dict[str, Any]:
    """Top-1 and Top-5 diagnostic accuracy.

    See :func:`prepare_diagnosis` for the inputs and the rules.

    Returns:
        Top-1 and Top-5 (fractions of the scored cases; NaN when none) under the keys of the
        reading (``top1`` / ``top5`` with ``case_judge``, ``top1-lexicon`` / ``top5-lexicon``
        with the default lexicon matcher, ``top1-pairwise`` / ``top5-pairwise`` with any other
        ``matcher``), ``n_cases`` (scored cases), ``n_cases_without_reference`` (references
        without ground truth, excluded), ``n_empty_predictions`` and
        ``n_predictions_truncated`` (among scored cases), ``matcher`` (its description) and
        ``match_rule`` (``"case-judge"``, ``"matcher"``, ``"pair-judge"`` or ``"callable"``).

    Raises:
        NovaInputError: see :func:`prepare_diagnosis`.

    Example:
        >>> # case 0: hit at rank 1; case 1: hit at rank 3; case 2: no hit
        >>> result = score_diagnosis(
        ...     [["PML"], ["glioma", "abscess", "Tuberculous meningitis"], ["stroke"]],
        ...     ["Progressive multifocal leukoencephalopathy", "TB meningitis", "Susac syndrome"])
        >>> round(result["top1-lexicon"], 4), round(result["top5-lexicon"], 4)
        (0.3333, 0.6667)
    """
    return prepare_diagnosis(
        predictions, references, matcher=matcher, case_judge=case_judge, contexts=contexts
    ).result()
