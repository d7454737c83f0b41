"""How each NOVA task is scored, judged, broken down and ranked: one module per task.

The registry (:mod:`novabench.registry`) says what a task is (its unit, fields, prompt,
parser, scorer); the task's own module here says how the toolkit treats its answers:

- ``localization.py``, ``captioning.py``, ``diagnosis.py``: each defines ``BEHAVIOUR``, a
  :class:`TaskBehaviour`, which the task's ``TaskSpec.behaviour`` names.

Scoring, breakdowns, the leaderboard, the HTML page, prompts, baselines and the evaluate
adapter read a task's behaviour through :func:`behaviour` and never compare task names.

These modules sit in the bottom layer beside the registry: they import nothing of the
package but the bottom modules (``errors``, ``records``, ``registry``). Code of a higher
layer that a task needs (its floor baseline, its human reference, its metric's option
check) is named as ``"module:function"`` and imported by the layer that runs it, as the
registry names parsers and scorers.

Example:
    >>> from novabench.tasks import behaviour
    >>> behaviour("localisation").rank_metric, behaviour("diagnosis").rank_metric
    ('mAP@30', 'top1')
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from novabench import registry

__all__ = [
    "BREAKDOWN_DIMENSIONS",
    "ItemTablesMismatch",
    "JudgeKind",
    "RESCORE_ADVICE",
    "TaskBehaviour",
    "behaviour",
    "load_hook",
    "tasks_where",
]

#: Every dimension a task can be broken down by (the per-item facts of
#: ``report/breakdowns.py``), in report order: a task's ``breakdown_dimensions`` are some of
#: these, in this order.
BREAKDOWN_DIMENSIONS: tuple[str, ...] = (
    "pathology_category",
    "sequence",
    "plane",
    "n_gold_boxes",
    "gold_box_size",
    "images_per_case",
)

#: How a task's judge is asked: per pair of names, once per case, or once per caption pair.
JudgeKind = Literal["pair", "case", "keyword"]

#: What a report is told whose old keys do not say which reading they scored.
RESCORE_ADVICE = "re-score it with `nova evaluate` (today's keys name the reading)"


class ItemTablesMismatch(ValueError):
    """A report's per-item tables do not hold the reading of the ranking metric it claims."""


def _no_judge(options: Any) -> tuple[JudgeKind | None, Any]:
    return None, None


def _no_metric_options(options: Any) -> tuple[dict[str, Any], list[str]]:
    return {}, []


def _no_answer_notes(predictions: Sequence[Any], items: Sequence[Any]) -> list[str]:
    return []


def _notes_as_given(
    notes: Sequence[str], coverage: Mapping[str, Any], readers: Mapping[str, Any] | None
) -> list[str]:
    return list(notes)


def _no_item_mean_terms(tables: Mapping[str, Any], key: str, recorded: Mapping[str, Any]) -> None:
    return None


def _items_are_cases(tables: Mapping[str, Any], key: str) -> None:
    return None


def _no_legacy_keys(
    metrics: Mapping[str, Any], source: str, folders: Collection[str]
) -> dict[str, str]:
    return {}


def _no_renamed_key_warnings(
    metrics: Mapping[str, Any], renamed: Mapping[str, str], source: str
) -> list[str]:
    return []


@dataclass(frozen=True)
class TaskBehaviour:
    """How the toolkit treats one task's answers, from scoring to the leaderboard.

    Attributes:
        task: the canonical task name (the registry's).
        reference: a release item (``ImageRecord`` or ``CaseRecord``, by the task's unit)
            -> the reference the task's metric takes.
        reference_required: a release item without a reference refuses the task (naming the
            item); otherwise the metric counts it (e.g. a placeholder diagnosis).
        judge: scoring options -> ``(kind, judge object)`` of the LLM judge scoring the task,
            ``(None, None)`` when it is scored offline.
        metric_options: scoring options -> ``(keyword options of the task's metric, notes)``.
        settle_metric_options: ``"module:function"`` taking those options and returning them
            fixed for this machine plus notes (checks run before any scoring); None: none.
        answer_notes: (the task's predictions, the release items) -> report notes on the
            answers themselves (e.g. boxes past their image).
        answer_summary: ``"module:function"`` (prediction set, release) -> extra coverage
            counts of the task's answers; None: none.
        answer_counts: (the task's predictions, the scored release items) -> extra coverage
            counts of the answers against the references (localisation: images answered with
            many more boxes than gold); None: none.
        revise_answer_notes: (``answer_notes``' notes, the task's coverage with those
            counts, the report's ``box_answers`` or None) -> the notes, their advice taken
            from the counts (e.g. the conventions that, read again, fit the answers).
        prompt_placeholders: placeholders the task's prompt template must hold.
        prompt_sets_box_order: the task's prompt fixes the box order its answers use.
        baseline_answer: ``"module:function"`` (request, detector settings) -> (text,
            input size or None): the floor baseline's answer to one request.
        baseline_name: the name of the baseline answering the task alone (``nova run
            --baseline NAME``); ``floor`` answers every task.
        breakdown_dimensions: the dimensions the task is broken down by: some of
            :data:`BREAKDOWN_DIMENSIONS`, in that order (checked when declared).
        groups_prepared_apart: a breakdown group's evaluation is prepared on its own items
            (cheaper when the whole set takes part in each score, as COCO's ranking does).
        human_reference: ``"module:function"`` scoring the release's raters on the task's
            items; None: the task has no human reference.
        hit_rate_curve: the task's per-item tables carry the best IoU a hit-rate curve draws.
        rank_metric: the leaderboard's ranking metric (a mean over items).
        rank_item_column: ``(table, column)`` of the per-item tables that metric needs.
        rank_item_values: (per-item tables, the reading the report holds: the rank metric or
            one of ``rank_metric_readings``) -> (item keys, per-item values whose mean is
            that reading's value), items the report did not score left out; raises
            :class:`ItemTablesMismatch` when the tables hold another reading or none.
        stand_in_notes: ``(stand-in key, what it is and how to get the paper's key)`` pairs:
            the warning every report output gives when it shows that stand-in (see
            ``TaskSpec.paper_key_stand_ins``).
        rank_metric_readings: other keys of the rank metric's measure (stand-ins); the
            leaderboard ranks on the one the reports hold and leaves the task unranked,
            each value under its own key, when the reports hold two.
        rank_readings_advice: how to score every report under one reading of the rank
            metric (the commands and options of the CLI), the leaderboard's advice when
            the reports hold several; empty: the task has no other reading.
        comparability_settings: ``(setting, metrics it affects)`` pairs: the settings a
            report records whose difference makes two reports' metrics incomparable
            (``"*"``: every metric of the task).
        mean_keys: the headline keys that are means over the task's items (hit rates, top-1,
            per-caption scores): a percentile CI of one contains its value. Not COCO-AP,
            corpus BLEU or ratios of corpus counts.
        item_mean_terms: (per-item tables, a headline key, the settings the report
            recorded in the task's metrics, e.g. ``keyword_averaging``) -> ``(numerators,
            weights)``, two float arrays with one entry per item ``nova evaluate`` resampled
            for the key, in its order: the key's value is ``sum(numerators) / sum(weights)``
            over all of them and over each bootstrap resample (weights are 1 for a plain
            mean; 0 for an item drawn but not counted, as an image without a gold box in
            ``hit@30``). None when the tables carry no column for the key, or when the
            recorded settings make it another ratio than the tables' columns give (micro
            keyword averaging); raises :class:`ItemTablesMismatch` when they hold another
            reading's column instead.
        item_case_ids: (per-item tables, a headline key) -> the case id of each item of
            ``item_mean_terms`` (same rows, same order), which ``nova evaluate`` resamples
            case by case; None when the items are cases already (or the tables say none).
        reading_settings: the comparability settings that decide which reading's keys a
            report holds (the diagnosis matcher: ``top1`` or ``top1-lexicon``...). Reports
            holding different readings are already told apart by their keys (the task is
            left unranked), so a key is marked as scored with differing settings only when
            the reports holding that key differ.
        answer_reading: the fields of a report's ``predictions`` section that say how the
            task's raw answers were read (the box convention...): the same answers read
            with another value are another reading of one run, not a copy of it.
        table_rescoring: ``"module:function"`` (per-item tables, the headline keys wanted)
            -> an evaluation rebuilt from the tables' own columns (the boxes and scores, the
            two captions) by the task's metric, over the items ``nova evaluate`` scored, in
            its order, giving at least those keys through ``aggregate`` and
            ``aggregate_resamples`` (what :mod:`novabench.metrics.stats` resamples); None
            when the tables lack those columns. None: the task has none to rescore.
        rescored_keys: the headline keys :attr:`table_rescoring` recomputes, those no ratio
            of per-item sums gives (COCO-AP and the box-count ratios, which need the ranked
            boxes and their one-to-one matches; corpus BLEU-4).
        inputs_from_rows: the evaluate face's pseudo-task ``all`` (rows of one image each,
            every task's fields; references naming their case) -> ``(predictions,
            references, metric options)`` as the task's metric takes them (e.g. one item per
            case), its options given only those of the task's metric.
        plain_predictions: the task's predictions in their plain (evaluate, Arrow) form ->
            as its metric reads them (e.g. an empty score list as no scores); None: as given.
        legacy_key_names: (the task's metrics in an old report, the report's name, models
            known to be local folders) -> each key written before it named its reading and
            the key it is read under today (``METEOR`` -> ``METEOR-exact+stem``...); raises
            ``NovaInputError`` naming the report and the setting when the recorded settings
            do not say which reading it scored.
        renamed_key_warnings: (the task's metrics in an old report, ``legacy_key_names``'
            renaming, the report's name) -> the leaderboard's warning lines for keys it
            shows under another name than the report's (another scale...).
        warned_notes: how the task's notes begin that a report's first lines repeat as a
            warning (``"warning: <task>: <note>"``), so the note lists leave them out.

    Example:
        >>> spec = behaviour("captioning")
        >>> spec.breakdown_dimensions
        ('pathology_category', 'sequence', 'plane', 'images_per_case')
        >>> spec.judge(type("Options", (), {"keyword_judge": None})())
        (None, None)
    """

    task: str
    reference: Callable[[Any], Any]
    rank_metric: str
    rank_item_column: tuple[str, str]
    rank_item_values: Callable[[Mapping[str, Any], str], tuple[list[str], Any]]
    breakdown_dimensions: tuple[str, ...]
    baseline_answer: str
    baseline_name: str
    inputs_from_rows: Callable[
        [Sequence[Mapping[str, Any]], Sequence[Mapping[str, Any]], Mapping[str, Any]],
        tuple[list[Any], list[Any], dict[str, Any]],
    ]
    reference_required: bool = False
    judge: Callable[[Any], tuple[JudgeKind | None, Any]] = _no_judge
    metric_options: Callable[[Any], tuple[dict[str, Any], list[str]]] = _no_metric_options
    settle_metric_options: str | None = None
    answer_notes: Callable[[Sequence[Any], Sequence[Any]], list[str]] = _no_answer_notes
    answer_summary: str | None = None
    answer_counts: Callable[[Sequence[Any], Sequence[Any]], dict[str, int]] | None = None
    revise_answer_notes: Callable[
        [Sequence[str], Mapping[str, Any], Mapping[str, Any] | None], list[str]
    ] = _notes_as_given
    prompt_placeholders: tuple[str, ...] = ()
    prompt_sets_box_order: bool = False
    groups_prepared_apart: bool = False
    human_reference: str | None = None
    hit_rate_curve: bool = False
    comparability_settings: tuple[tuple[str, tuple[str, ...]], ...] = (("answered_only", ("*",)),)
    stand_in_notes: tuple[tuple[str, str], ...] = ()
    rank_metric_readings: tuple[str, ...] = ()
    rank_readings_advice: str = ""
    reading_settings: tuple[str, ...] = ()
    mean_keys: tuple[str, ...] = ()
    item_mean_terms: Callable[[Mapping[str, Any], str, Mapping[str, Any]], Any] = (
        _no_item_mean_terms
    )
    answer_reading: tuple[str, ...] = ()
    table_rescoring: str | None = None
    rescored_keys: tuple[str, ...] = ()
    item_case_ids: Callable[[Mapping[str, Any], str], list[str] | None] = _items_are_cases
    plain_predictions: Callable[[list[Any]], list[Any]] | None = None
    legacy_key_names: Callable[[Mapping[str, Any], str, Collection[str]], dict[str, str]] = (
        _no_legacy_keys
    )
    renamed_key_warnings: Callable[[Mapping[str, Any], Mapping[str, str], str], list[str]] = (
        _no_renamed_key_warnings
    )
    warned_notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        in_report_order = [d for d in BREAKDOWN_DIMENSIONS if d in self.breakdown_dimensions]
        if in_report_order != list(self.breakdown_dimensions):
            raise ValueError(
                f"task {self.task!r}: breakdown_dimensions {self.breakdown_dimensions} must be "
                f"some of {BREAKDOWN_DIMENSIONS}, each once, in that order"
            )

    def rank_value(self, tables: Mapping[str, Any], reading: str) -> float | None:
        """The ranking metric recomputed from per-item tables: the mean the ranking resamples.

        None when the tables score no item of it.

        Raises:
            ItemTablesMismatch: the tables hold another reading of the metric, or none.

        Example:
            >>> import pandas as pd
            >>> images = pd.DataFrame({"filename": ["a.png", "b.png"], "best_iou": [0.5, 0.1]})
            >>> behaviour("localization").rank_value({"images": images}, "mAP@30")
            0.5
        """
        _, values = self.rank_item_values(tables, reading)
        return float(values.mean()) if len(values) else None


def behaviour(task: str) -> TaskBehaviour:
    """The behaviour of a task, by any spelling the registry accepts.

    Raises:
        ValueError (``NovaInputError``): an unknown task.

    Example:
        >>> "gold_box_size" in behaviour("Localisation").breakdown_dimensions
        True
    """
    found: TaskBehaviour = registry.get_task(task).load_behaviour()
    return found


def tasks_where(predicate: Callable[[TaskBehaviour], Any]) -> tuple[str, ...]:
    """The tasks (registry order) whose behaviour satisfies ``predicate``.

    Example:
        >>> tasks_where(lambda spec: spec.human_reference)
        ('localization',)
    """
    return tuple(name for name in registry.TASK_NAMES if predicate(behaviour(name)))


def load_hook(target: str) -> Callable[..., Any]:
    """Import the function a behaviour names as ``"module:function"``.

    Example:
        >>> load_hook(behaviour("diagnosis").baseline_answer).__name__
        'answer_diagnosis'
    """
    module_name, _, attribute = target.partition(":")
    function: Callable[..., Any] = getattr(importlib.import_module(module_name), attribute)
    return function
