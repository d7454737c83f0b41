"""How diagnostic reasoning is scored, broken down and ranked.

Its reference is a case row (final diagnosis and clinical history: a placeholder diagnosis
is counted and left out by the metric, not refused); its judge is a case judge (once per
case) or a pair matcher, else the offline lexicon matcher; only the case judge (the paper's
procedure) gives the paper's keys ``top1`` / ``top5``, the lexicon matcher gives
``top1-lexicon`` / ``top5-lexicon`` and a pair matcher ``top1-pairwise`` / ``top5-pairwise``;
its prompt template must hold the clinical history and findings placeholders; the
leaderboard ranks it on the Top-1 key the reports hold over the cases with a final
diagnosis (leaving it unranked, with how to re-score, when reports hold different readings),
and two reports are incomparable where their matchers differ.

Example:
    >>> BEHAVIOUR.rank_metric, BEHAVIOUR.prompt_placeholders
    ('top1', ('{clinical_history}', '{findings}'))
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from novabench.errors import NovaInputError
from novabench.records import is_placeholder_diagnosis
from novabench.tasks import RESCORE_ADVICE, ItemTablesMismatch, JudgeKind, TaskBehaviour

__all__ = [
    "BEHAVIOUR",
    "CaseRows",
    "PROMPT_PLACEHOLDERS",
    "TOP1_READINGS",
    "inputs_from_rows",
    "judge",
    "legacy_key_names",
    "metric_options",
    "item_mean_terms",
    "rank_item_values",
]

#: What a diagnosis prompt template must hold: filled per case by ``render_diagnosis_prompt``.
PROMPT_PLACEHOLDERS: tuple[str, ...] = ("{clinical_history}", "{findings}")
#: The Top-1 keys of the three readings: the paper's (case judge), the lexicon's, a pair matcher's.
TOP1_READINGS: tuple[str, ...] = ("top1", "top1-lexicon", "top1-pairwise")
# Every reading's Top-1 and Top-5: per-case hits in the cases table, means over cases.
_HIT_KEYS = (*TOP1_READINGS, "top5", "top5-lexicon", "top5-pairwise")
_CASE_JUDGE_HINT = (
    "the paper's need the case judge (nova evaluate --judge-endpoint URL --judge-model NAME)"
)
_LEXICON_NOTE = f"the offline lexicon matcher's proxy: another quantity; {_CASE_JUDGE_HINT}"
_PAIRWISE_NOTE = (
    "one verdict per (reference, prediction) pair, not the paper's one call per case: another "
    "quantity; the paper's need the case judge (nova evaluate --judge-mode case, the default "
    "with --judge-endpoint)"
)


def judge(options: Any) -> tuple[JudgeKind | None, Any]:
    """The case judge (asked once per case) or else the pair matcher of the scoring options.

    Example:
        >>> from types import SimpleNamespace
        >>> judge(SimpleNamespace(case_judge=None, matcher=str.__eq__))[0]
        'pair'
        >>> judge(SimpleNamespace(case_judge=None, matcher=None))
        (None, None)
    """
    if options.case_judge is not None:
        return "case", options.case_judge
    if options.matcher is not None:
        return "pair", options.matcher
    return None, None


def metric_options(options: Any) -> tuple[dict[str, Any], list[str]]:
    """The judge as the metric takes it: ``case_judge=`` or ``matcher=`` (none: the lexicon).

    Example:
        >>> from types import SimpleNamespace
        >>> metric_options(SimpleNamespace(case_judge="j", matcher=None))
        ({'case_judge': 'j'}, [])
    """
    kind, chosen = judge(options)
    if kind is None:
        return {}, []
    return {"case_judge" if kind == "case" else "matcher": chosen}, []


def rank_item_values(tables: Mapping[str, Any], reading: str = "top1") -> tuple[list[str], Any]:
    """Case ids and per-case top-1 hits of ``reading``'s column, placeholders left out.

    The cases table names its column after the reading it scored (``top1``, ``top1-lexicon``
    or ``top1-pairwise``, as the report's key): the column must be ``reading``, never
    another reading's hits. Cases without a value were not scored (``--answered-only``).

    Raises:
        ItemTablesMismatch: the table holds another reading's column, or none.

    Example:
        >>> import pandas as pd
        >>> cases = pd.DataFrame({"case_id": ["case0001", "case0002"], "top1-lexicon": [True, True],
        ...                       "final_diagnosis": ["Glioma", "Final diagnosis not found."]})
        >>> keys, hits = rank_item_values({"cases": cases}, "top1-lexicon")
        >>> keys, hits.tolist()
        (['case0001'], [1.0])
        >>> rank_item_values({"cases": cases}, "top1")
        Traceback (most recent call last):
        ...
        novabench.tasks.ItemTablesMismatch: the cases table holds top1-lexicon, not top1
    """
    cases = tables["cases"]
    if reading not in cases.columns:
        held = [key for key in TOP1_READINGS if key in cases.columns]
        raise ItemTablesMismatch(
            f"the cases table holds {', '.join(held)}, not {reading}"
            if held
            else f"the cases table has no {reading} column"
        )
    scored = cases[~cases["final_diagnosis"].map(is_placeholder_diagnosis)]
    scored = scored[scored[reading].notna()]
    return list(scored["case_id"]), scored[reading].astype(bool).to_numpy(float)


def item_mean_terms(
    tables: Mapping[str, Any], key: str, recorded: Mapping[str, Any] | None = None
) -> tuple[Any, Any] | None:
    """Per scored case (placeholders and unscored cases left out; the table's order, the
    evaluation's) the terms of ``key`` (top1/top5 of any reading): its hit, weight 1; None
    when the cases table has no top-k column of ``key``'s k. No recorded setting changes
    what a hit column's mean is (``recorded`` is not read).

    Raises:
        ItemTablesMismatch: the table holds another reading's column of the same k.

    Example:
        >>> import pandas as pd
        >>> cases = pd.DataFrame({"case_id": ["case0001", "case0002"],
        ...                       "top5-lexicon": [True, False],
        ...                       "final_diagnosis": ["Glioma", "Meningioma"]})
        >>> [terms.tolist() for terms in item_mean_terms({"cases": cases}, "top5-lexicon")]
        [[1.0, 0.0], [1.0, 1.0]]
        >>> item_mean_terms({"cases": cases}, "top5")
        Traceback (most recent call last):
        ...
        novabench.tasks.ItemTablesMismatch: the cases table holds top5-lexicon, not top5
    """
    import numpy as np

    if key not in _HIT_KEYS:
        return None
    cases = tables["cases"]
    same_k = [other for other in _HIT_KEYS if other[:4] == key[:4] and other in cases.columns]
    if not same_k:
        return None
    if key not in cases.columns:
        raise ItemTablesMismatch(f"the cases table holds {', '.join(same_k)}, not {key}")
    scored = cases[~cases["final_diagnosis"].map(is_placeholder_diagnosis)]
    hits = scored.loc[scored[key].notna(), key].astype(bool).to_numpy(float)
    return hits, np.ones(len(hits))


def inputs_from_rows(
    predictions: Sequence[Mapping[str, Any]],
    references: Sequence[Mapping[str, Any]],
    options: Mapping[str, Any],
) -> tuple[list[list[str]], list[str], dict[str, Any]]:
    """The evaluate face's ``all`` rows (one per image) as the diagnosis metric takes them:
    one item per case (rows grouped by ``case_id``, in order of first appearance); the
    diagnoses and final diagnosis of a case must agree across its images, and so must its
    clinical history, which reaches a case judge (``contexts``) as in the diagnosis
    configuration unless ``options`` give contexts of their own.

    Raises:
        NovaInputError: two images of one case disagree (naming the later row as ``example N``).

    Example:
        >>> rows = [{"case_id": "case0001", "final_diagnosis": "Glioma"},
        ...         {"case_id": "case0001", "final_diagnosis": "Glioma"},
        ...         {"case_id": "case0002", "final_diagnosis": "Meningioma"}]
        >>> inputs_from_rows([{"diagnoses": ["glioma"]}] * 2 + [{"diagnoses": None}], rows, {})
        ([['glioma'], []], ['Glioma', 'Meningioma'], {})
    """
    chosen = dict(options)
    # The rows' clinical histories reach a case judge as in the diagnosis configuration.
    with_histories = chosen.get("case_judge") is not None and "contexts" not in chosen
    case_predictions, case_references, case_histories = _group_by_case(
        predictions, references, with_histories=with_histories
    )
    if any(case_histories):
        chosen["contexts"] = case_histories
    return case_predictions, case_references, chosen


def _spaced_alike(diagnoses: Sequence[Any]) -> list[Any]:
    """A case's list as the diagnosis scorer tells its items apart: the matcher reads each
    item's words (``normalize_diagnosis``), so surrounding and repeated whitespace do not
    count; a blank item keeps its rank (scored as a miss), so it stays in place."""
    return [" ".join(item.split()) if isinstance(item, str) else item for item in diagnoses]


class CaseRows:
    """The rows of ``all`` read one by one into one diagnosis item per case: an image that
    contradicts an earlier image of its case is refused as it comes (the ``evaluate`` face
    checks each batch as it is added, while the earlier batches can still be kept).

    Args:
        with_histories: keep each case's clinical history (for a case judge): two different
            ones on a case are refused; without it histories are not read.

    Example:
        >>> rows = CaseRows()
        >>> rows.add(0, {"diagnoses": ["MS"]}, {"case_id": "c1", "final_diagnosis": "MS"})
        >>> rows.add(1, {"diagnoses": ["ADEM"]}, {"case_id": "c1", "final_diagnosis": "MS"})
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: example 1, field 'predictions.diagnoses': case c1 has different diagnoses on two of its images (an earlier one and this one); give every image of a case the same list
        >>> rows.items()
        ([['MS']], ['MS'], [None])
    """

    def __init__(self, *, with_histories: bool = False) -> None:
        self._with_histories = with_histories
        self._by_case: dict[str, tuple[list[str], str]] = {}
        self._histories: dict[str, str | None] = {}

    def copy(self) -> CaseRows:
        """An independent copy (to check a batch without touching this one)."""
        other = CaseRows(with_histories=self._with_histories)
        other._by_case = dict(self._by_case)
        other._histories = dict(self._histories)
        return other

    def add(self, index: int, prediction: Mapping[str, Any], reference: Mapping[str, Any]) -> None:
        """Read one image's row; refuse it (``example {index}``) if it contradicts its case."""
        case_id = reference["case_id"]
        diagnoses = list(prediction.get("diagnoses") or [])
        history = reference.get("clinical_history") if self._with_histories else None
        history = history if isinstance(history, str) and history.strip() else None
        known_history = self._histories.get(case_id)
        if history is not None and known_history is not None and history != known_history:
            raise NovaInputError(
                f"case {case_id} has two clinical histories (the other one on an earlier image)",
                record=f"example {index}",
                field="references.clinical_history",
            )
        if case_id in self._by_case:
            self._check(case_id, diagnoses, reference, index)
        else:
            self._by_case[case_id] = (diagnoses, reference["final_diagnosis"])
        if known_history is None:
            self._histories[case_id] = history

    def _check(
        self, case_id: str, diagnoses: list[str], reference: Mapping[str, Any], index: int
    ) -> None:
        known, truth = self._by_case[case_id]
        # The earlier row is named by its case alone: an index in the message would escape
        # the renaming the faces apply to the record (counted from 1, or a filename).
        if truth != reference["final_diagnosis"]:
            raise NovaInputError(
                f"case {case_id} has two final diagnoses: {truth!r} on an earlier image of the "
                f"case, {reference['final_diagnosis']!r} on this one",
                record=f"example {index}",
                field="references.final_diagnosis",
            )
        if diagnoses and known and _spaced_alike(diagnoses) != _spaced_alike(known):
            raise NovaInputError(
                f"case {case_id} has different diagnoses on two of its images (an earlier one "
                "and this one); give every image of a case the same list",
                record=f"example {index}",
                field="predictions.diagnoses",
            )
        if bool(diagnoses) != bool(known):
            # One image with none and another with a list would score the case by whichever
            # was given: the images of a case answer it once, with one list.
            raise NovaInputError(
                f"case {case_id} has diagnoses on one of its images and none (an empty list "
                "or None) on another; give every image of a case the same list",
                record=f"example {index}",
                field="predictions.diagnoses",
            )

    def items(self) -> tuple[list[list[str]], list[str], list[str | None]]:
        """The cases' lists, final diagnoses and clinical histories (None: none on any of
        its rows, or not kept), in order of first appearance."""
        cases = self._by_case
        return (
            [v[0] for v in cases.values()],
            [v[1] for v in cases.values()],
            [self._histories.get(c) for c in cases],
        )


def _group_by_case(
    predictions: Sequence[Mapping[str, Any]],
    references: Sequence[Mapping[str, Any]],
    *,
    with_histories: bool = False,
) -> tuple[list[list[str]], list[str], list[str | None]]:
    """One diagnosis item per case, in order of first appearance, with its clinical history
    (None: none on any of its rows, or ``with_histories`` False)."""
    rows = CaseRows(with_histories=with_histories)
    for index, (prediction, reference) in enumerate(zip(predictions, references)):
        rows.add(index, prediction, reference)
    return rows.items()


#: Old reports' recorded diagnosis matcher (its description's start) -> the key suffix it
#: scored; the case judge's keys are the paper's and stay.
_LEGACY_MATCHERS = (
    ("lexicon matcher", "-lexicon"),
    ("LLM case judge", ""),
    ("LLM judge ", "-pairwise"),
    ("cached judge ", "-pairwise"),
    ("callable ", "-pairwise"),
)


def legacy_key_names(
    metrics: Mapping[str, Any], source: str = "report", folders: Collection[str] = ()
) -> dict[str, str]:
    """``top1`` / ``top5`` of a report written before the keys named their reading (no
    ``match_rule`` recorded), and the keys they are read under today by the recorded
    ``matcher``: the lexicon matcher's ``-lexicon``, a pair judge's or a function's
    ``-pairwise``; the case judge's stay (``folders`` is not read).

    Raises:
        NovaInputError: the recorded matcher does not say which reading the report scored
            (naming ``source`` and the setting).

    Example:
        >>> legacy_key_names({"top1": 0.4, "matcher": "LLM judge gpt-4o (pairwise)"})
        {'top1': 'top1-pairwise'}
        >>> legacy_key_names({"top1": 0.4, "matcher": "LLM case judge gpt-4o"})
        {}
    """
    old = [key for key in ("top1", "top5") if key in metrics]
    if not old or "match_rule" in metrics:
        return {}
    matcher = metrics.get("matcher")
    suffix = next(
        (end for start, end in _LEGACY_MATCHERS if str(matcher or "").startswith(start)), None
    )
    if matcher is None or suffix is None:
        raise NovaInputError(
            f"its diagnosis top1/top5 were written before the keys named their reading, and "
            f"the recorded matcher {matcher!r} does not say whether they are the paper's "
            f"(case judge) or a proxy: {RESCORE_ADVICE}",
            source=source,
            field="tasks.diagnosis.metrics.matcher",
        )
    return {key: key + suffix for key in old if suffix}


BEHAVIOUR = TaskBehaviour(
    task="diagnosis",
    # Rows, not strings: a null diagnosis in the release is "no ground truth" (counted); the
    # clinical history goes to a case judge with the case.
    reference=lambda case: {
        "case_id": case.case_id,
        "final_diagnosis": case.final_diagnosis,
        "clinical_history": case.clinical_history,
    },
    judge=judge,
    metric_options=metric_options,
    prompt_placeholders=PROMPT_PLACEHOLDERS,
    baseline_answer="novabench.run.baselines:answer_diagnosis",
    baseline_name="lexicon-ranking",
    inputs_from_rows=inputs_from_rows,
    legacy_key_names=legacy_key_names,
    breakdown_dimensions=("pathology_category", "images_per_case"),
    rank_metric="top1",
    rank_item_column=("cases", "top1"),
    rank_item_values=rank_item_values,
    mean_keys=_HIT_KEYS,
    item_mean_terms=item_mean_terms,
    rank_metric_readings=TOP1_READINGS[1:],
    rank_readings_advice=(
        "score every report with nova evaluate and the same --judge-mode: case for top1, the "
        "paper's, or pair for top1-pairwise (both with the same --judge-endpoint URL "
        "--judge-model NAME), or lexicon for top1-lexicon (offline, the default without "
        "--judge-endpoint)"
    ),
    # The matcher decides the keys (top1 or top1-lexicon...): reports of two readings are
    # told apart by them, so only the reports holding one key are compared on it.
    reading_settings=("matcher",),
    comparability_settings=(
        (
            "matcher",
            ("top1", "top1-lexicon", "top1-pairwise", "top5", "top5-lexicon", "top5-pairwise"),
        ),
        ("answered_only", ("*",)),
    ),
    stand_in_notes=(
        ("top1-lexicon", _LEXICON_NOTE),
        ("top5-lexicon", _LEXICON_NOTE),
        ("top1-pairwise", _PAIRWISE_NOTE),
        ("top5-pairwise", _PAIRWISE_NOTE),
    ),
)
