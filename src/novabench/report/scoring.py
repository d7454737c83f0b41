"""Scoring predictions into a NOVA report: predictions + release -> results with CIs.

:func:`evaluate_predictions` reads the release and the predictions, parses raw answers if
needed, scores every task present with the metric core (the same code the ``evaluate``
module runs), adds seeded bootstrap confidence intervals, and keeps the counts a reader
needs to trust the numbers: items missing, model errors, parse statuses, placeholder
diagnoses excluded. :func:`compare_predictions` scores two models on the same items with a
paired bootstrap.

Every choice of how to score is one :class:`ScoringOptions`, built once (``nova evaluate``
and ``nova compare`` build it from their shared options) and passed whole. Python callers
may pass ``options=`` or the same settings as keyword arguments (they override ``options``).

The report's metric keys are the metric module's, in fractions; :mod:`novabench.report.render`
shows them in percent.
"""

from __future__ import annotations

import datetime as _dt
import os
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from novabench import registry
from novabench._version import toolkit_record
from novabench.errors import N_RESAMPLES, TASKS, NovaInputError, Option
from novabench.progress import progress_bar
from novabench.tasks import behaviour, load_hook, tasks_where

if TYPE_CHECKING:
    from novabench.data.release_record import NovaRelease
    from novabench.lexicon.taxonomy import CategoryMap

__all__ = [
    "ScoredPredictions",
    "ScoringOptions",
    "answer_agreement",
    "compare_predictions",
    "evaluate_predictions",
    "judge_record",
    "nothing_answered_note",
    "score_predictions",
]

PredictionPaths = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]

#: Why ``jobs=`` / ``--jobs`` is refused: said in one line rather than "unknown option".
JOBS_REMOVED = (
    "the scoring option jobs was removed: scoring runs in one process (helper processes "
    "saved too little for what they cost); drop it"
)


#: Where COCO AP keys get intervals: the headline only, or breakdowns and human reference too.
COCO_AP_INTERVALS: tuple[str, ...] = ("headline", "all")

#: What the intervals of a release-backed report resample (its ``bootstrap.unit``): whole
#: cases, every scored image of each drawn case, since images of one case are not
#: independent (``novabench.metrics.stats``). A report without the field resampled images.
BOOTSTRAP_UNIT = "case"


@dataclass(frozen=True)
class ScoringOptions:
    """How predictions are scored: which tasks, how raw answers are read, the bootstrap,
    and the metric settings.

    Attributes:
        tasks: tasks to score (any spelling the registry accepts; kept as a tuple of
            canonical names); None: every task answered.
        box_convention: how raw localisation answers are read (see
            ``novabench.run.parsers.parse_localization``); None: the convention recorded in
            the run's manifest, else ``"auto"``.
        allow_other_release: score a run whose manifest records another release fingerprint
            (by default an error: the answers belong to other data).
        allow_running: score a run that another process is still writing (its manifest says
            ``running`` and a writer holds its lock; by default an error: the scores would
            change as answers arrive). A run whose status says ``running`` with no writer
            left (killed) is scored either way, as an interrupted one is: the report's first
            line says its status.
        n_resamples: bootstrap resamples for confidence intervals (0: none).
        confidence: confidence level of the intervals.
        seed: bootstrap seed.
        caption_options: options of ``score_captioning`` (``exclude``, ``bertscore_model``,
            ``bertscore_num_layers``, ``keyword_averaging``, ``meteor``...). ``meteor``
            ``"auto"`` (default) without the WordNet corpus scores ``METEOR-exact+stem`` and
            puts a note first in the task's notes; ``"wordnet"`` without it is refused before
            any scoring. BERTScore follows the
            functions' rule: roberta-large (or the Hub model given) is downloaded when not
            cached; offline (``HF_HUB_OFFLINE=1``) that is an error unless a local model is
            given or ``exclude`` names BERTScore-F1.
        matcher: a diagnosis matcher asked pair by pair (e.g. the pair judge
            ``OpenAIChatJudge``); None: the lexicon matcher.
        case_judge: instead of ``matcher``, a diagnosis judge asked once per case with the
            whole ranked list (protocol mode, ``OpenAICaseJudge``).
        keyword_judge: an LLM keyword judge for the captioning keyword F1s
            (``OpenAIKeywordJudge``); None: the offline lexicon extractor.
        answered_only: score only the items the predictions answer (a line, even one
            recording a model error, which still scores as a miss); by default an item
            without a line counts as "no prediction". For partial runs (``--limit``).
        category_map: a user's pathology-category overrides (a ``CategoryMap``, or the path
            of a file :func:`novabench.lexicon.taxonomy.load_category_map` reads); None: the
            built-in taxonomy.
        min_group_size: breakdown cells with fewer items are flagged ``too_small``.
        breakdowns: compute the per-group breakdowns (on by default). Off, the report's
            ``breakdowns`` is ``{}`` and ``breakdown_settings["computed"]`` is False: with
            intervals, the breakdowns take most of the scoring time.
        coco_ap_intervals: where the COCO AP keys get bootstrap intervals: ``"headline"``
            (default: the task's own scores only; breakdown cells and the human reference
            keep their COCO AP values without an interval, as rebuilding COCO's ranking per
            resample is most of their cost) or ``"all"``. Every other interval is the same
            either way.

    Example:
        >>> options = ScoringOptions(tasks=("Localisation",), n_resamples=0)
        >>> options.tasks, options.bootstrap
        (('localization',), {'n_resamples': 0, 'confidence': 0.95, 'seed': 0})
        >>> ScoringOptions.build(options, seed=3).seed
        3
    """

    tasks: Sequence[str] | None = None
    box_convention: str | None = None
    allow_other_release: bool = False
    allow_running: bool = False
    n_resamples: int = 1000
    confidence: float = 0.95
    seed: int = 0
    caption_options: Mapping[str, Any] = field(default_factory=dict)
    matcher: Callable[[str, str], bool] | None = None
    case_judge: Any = None
    keyword_judge: Any = None
    answered_only: bool = False
    category_map: CategoryMap | None = None
    min_group_size: int = 10
    breakdowns: bool = True
    coco_ap_intervals: str = "headline"

    def __post_init__(self) -> None:
        from novabench import checks

        checks.positive_int(self.min_group_size, field="min_group_size")
        # 0 means no intervals; a negative count used to pass here and fail in every output.
        n = self.n_resamples
        if not (isinstance(n, int) and not isinstance(n, bool) and n >= 0):
            raise NovaInputError(
                f"must be 0 (no intervals) or a positive integer, got {n!r}", field=N_RESAMPLES
            )
        checks.seed(self.seed)  # before any model is asked (evaluate_model), in its name
        checks.confidence_level(self.confidence)
        if self.coco_ap_intervals not in COCO_AP_INTERVALS:
            raise NovaInputError(
                f"coco_ap_intervals must be one of {', '.join(COCO_AP_INTERVALS)}, "
                f"got {self.coco_ap_intervals!r}",
                field="coco_ap_intervals",
            )
        if isinstance(self.category_map, (str, os.PathLike)):  # a mapping file's path
            from novabench.lexicon.taxonomy import load_category_map

            object.__setattr__(self, "category_map", load_category_map(self.category_map))
        if self.matcher is not None and self.case_judge is not None:
            raise NovaInputError(
                "give either a diagnosis matcher (pair judge) or a case judge, not both",
                field="case_judge",
            )
        if self.tasks is not None:
            names = [self.tasks] if isinstance(self.tasks, str) else list(self.tasks)
            canonical = []
            for name in names:
                try:
                    canonical.append(registry.canonical_task(name))
                except NovaInputError as error:
                    raise NovaInputError(error.message, field="tasks") from None
            object.__setattr__(self, "tasks", tuple(dict.fromkeys(canonical)) or None)
        # Frozen all the way down: the caption options cannot change under a running score.
        caption_options = MappingProxyType(dict(self.caption_options or {}))
        object.__setattr__(self, "caption_options", caption_options)

    @classmethod
    def build(cls, options: ScoringOptions | None = None, **overrides: Any) -> ScoringOptions:
        """``options`` (or the defaults) with some settings replaced, named as the attributes.

        Raises:
            TypeError: a keyword that is not a scoring option (``jobs``, removed, says so).

        Example:
            >>> ScoringOptions.build(n_resamples=10).n_resamples
            10
        """
        if "jobs" in overrides:
            raise TypeError(JOBS_REMOVED)
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(overrides) - known)
        if unknown:
            hint = (
                " (the bootstrap's resamples are n_resamples= in every Python face; "
                "bootstrap_resamples= was the evaluate module's old name)"
                if "bootstrap_resamples" in unknown
                else ""
            )
            raise TypeError(f"unknown scoring option(s): {', '.join(unknown)}{hint}")
        base = options if options is not None else cls()
        return replace(base, **overrides) if overrides else base

    @property
    def bootstrap(self) -> dict[str, Any]:
        """The bootstrap settings as the report records them."""
        return {"n_resamples": self.n_resamples, "confidence": self.confidence, "seed": self.seed}

    @property
    def judged_tasks(self) -> tuple[str, ...]:
        """The tasks scored with a judge (a matcher, case judge or keyword judge), in order.

        Example:
            >>> ScoringOptions().judged_tasks, ScoringOptions(matcher=str.__eq__).judged_tasks
            ((), ('diagnosis',))
        """
        return tuple(name for name in registry.TASK_NAMES if self.judge_of(name) is not None)

    def judge_of(self, task: str) -> Any:
        """The judge object that scores ``task`` (None: the offline default).

        Example:
            >>> ScoringOptions(matcher=str.__eq__).judge_of("diagnosis") is str.__eq__
            True
        """
        return behaviour(task).judge(self)[1]

    def judge_kind(self, task: str) -> str | None:
        """``"case"``, ``"pair"`` or ``"keyword"``: how the judge of ``task`` is asked.

        Example:
            >>> ScoringOptions(matcher=str.__eq__).judge_kind("diagnosis")
            'pair'
        """
        kind: str | None = behaviour(task).judge(self)[0]
        return kind

    def metric_options(self, task: str) -> tuple[dict[str, Any], list[str]]:
        """Keyword options of one task's metric, and notes on what was left out and why.

        Example:
            >>> ScoringOptions().metric_options("localization")
            ({}, [])
        """
        task_behaviour = behaviour(task)
        options, notes = task_behaviour.metric_options(self)
        if task_behaviour.settle_metric_options is not None:
            # Checked and fixed once, before any scoring (the task's module names how).
            options, settled_notes = load_hook(task_behaviour.settle_metric_options)(options)
            notes = [*settled_notes, *notes]
        return options, notes


def evaluate_predictions(
    data: str | os.PathLike[str] | NovaRelease,
    predictions: PredictionPaths,
    options: ScoringOptions | None = None,
    **settings: Any,
) -> dict[str, Any]:
    """Score a predictions JSONL file (or several, one per task) against a NOVA release.

    Args:
        data: a release folder (official v1 or legacy layout, or a ``nova export`` folder),
            or a release already read (:func:`novabench.read_release`), used as it is.
        predictions: one predictions file, or several (e.g. one per task); items
            may not repeat across files.
        options: how to score (see :class:`ScoringOptions`); the defaults when None.
        **settings: any :class:`ScoringOptions` attribute as a keyword (``tasks=``,
            ``n_resamples=``, ``caption_options=``, ``matcher=``...), overriding ``options``.

    Returns:
        The report: ``{"toolkit", "data", "predictions", "bootstrap", "answered_only",
        "tasks": {task: {...}}, "human_reference", "breakdown_settings", "breakdowns"}``
        (see :func:`score_predictions`).

    Example:
        >>> import tempfile, pathlib, json
        >>> from novabench.data.sample import write_sample_release
        >>> root = pathlib.Path(tempfile.mkdtemp())
        >>> release = write_sample_release(root / "nova", n_cases=2, seed=0)
        >>> lines = [json.dumps({"case_id": "case0001", "diagnoses": ["glioma"]})]
        >>> _ = (root / "pred.jsonl").write_text("\\n".join(lines) + "\\n")
        >>> report = evaluate_predictions(release, root / "pred.jsonl", n_resamples=0)
        >>> sorted(report["tasks"]), report["tasks"]["diagnosis"]["coverage"]["missing"]
        (['diagnosis'], 1)
    """
    return score_predictions(data, predictions, options, **settings).report


@dataclass
class ScoredPredictions:
    """A scored run: the report and what it was computed from, for per-item tables.

    Attributes:
        report: what :func:`evaluate_predictions` returns.
        release: the release read.
        prediction_set: the predictions, parsed and aligned to the release.
        options: the scoring options used.
        evaluations: per task, the prepared evaluation the task's numbers come from.
        positions: per task, the release positions of its scored items (in
            ``release.images`` for image tasks, ``release.cases()`` for case tasks), in the
            evaluation's item order.
        cases: facts (category, images) of every case, in ``release.cases()`` order.
        images: facts (sequence, plane, boxes) of every image, in ``release.images`` order.
        human: the human reference on the localisation images (None without localisation).
    """

    report: dict[str, Any]
    release: Any
    prediction_set: Any
    options: ScoringOptions
    evaluations: dict[str, Any]
    positions: dict[str, list[int]]
    cases: list[Any]
    images: list[Any]
    human: Any = None


def score_predictions(
    data: str | os.PathLike[str] | NovaRelease,
    predictions: PredictionPaths,
    options: ScoringOptions | None = None,
    **settings: Any,
) -> ScoredPredictions:
    """Score predictions as :func:`evaluate_predictions` does, keeping the per-item state.

    Every number of the report comes from one prepared evaluation per task: the headline
    scores and their intervals, the breakdowns (the same evaluation on groups of items,
    :mod:`novabench.report.breakdowns`) and the per-item tables
    (:func:`novabench.report.items.item_tables`).

    Report keys beyond the scores: ``answered_only`` (True when only answered items were
    scored; each task's ``coverage["scored"]`` says how many), ``predictions.unfinished_run``
    (only for a run whose manifest holds an unfinished status or names a task asked that no
    line answers: ``runs``, ``asked_not_answered`` and the ``notice`` every output says first), ``human_reference``
    (``{"localization": ...}`` when localisation is scored, see
    :mod:`novabench.report.human_reference`), ``breakdown_settings`` and ``breakdowns``
    (``{task: {dimension: rows}}``, see :mod:`novabench.report.breakdowns`).

    Args:
        data: the release folder, or a release already read (not read again).
        predictions: one predictions file or several.
        options: how to score (see :class:`ScoringOptions`).
        **settings: :class:`ScoringOptions` attributes as keywords, overriding ``options``.

    Returns:
        A :class:`ScoredPredictions`.

    Raises:
        NovaInputError: bad predictions or options, (with ``answered_only``) a task chosen
            that no line answers, or a run another process is still writing (unless
            ``allow_running``).

    Example:
        >>> import tempfile, pathlib, json
        >>> from novabench.data.sample import write_sample_release
        >>> root = pathlib.Path(tempfile.mkdtemp())
        >>> release = write_sample_release(root / "nova", n_cases=3, seed=0, progress=False)
        >>> lines = [json.dumps({"case_id": "case0001", "diagnoses": ["glioma"]})]
        >>> _ = (root / "pred.jsonl").write_text("\\n".join(lines) + "\\n")
        >>> scored = score_predictions(release, root / "pred.jsonl", n_resamples=0,
        ...                            answered_only=True)
        >>> scored.positions["diagnosis"], scored.report["tasks"]["diagnosis"]["coverage"]["scored"]
        ([0], 1)
    """
    from novabench.metrics.tasks import prepare_task
    from novabench.report.breakdowns import (
        BOX_SIZE_THRESHOLDS,
        SubsetPreparer,
        case_facts,
        image_facts,
        result_with_intervals,
        task_breakdowns,
    )

    chosen = ScoringOptions.build(options, **settings)
    loaded = _load(data, predictions, chosen)
    _check_box_convention_reads(chosen.box_convention, [loaded])
    release = loaded.release
    summary = loaded.prediction_set.summary()
    cases = case_facts(release, chosen.category_map)
    images = image_facts(release, chosen.category_map, cases)
    task_reports: dict[str, Any] = {}
    evaluations: dict[str, Any] = {}
    positions = {
        task: _scored_positions(task, loaded, chosen.answered_only) for task in loaded.tasks
    }
    breakdowns: dict[str, Any] = {}
    for task in progress_bar(loaded.tasks, desc="scoring", unit="task"):
        spec = registry.TASKS[task]
        task_behaviour = behaviour(task)
        task_predictions, references = _task_inputs(task, loaded, positions[task])
        metric_options, notes = chosen.metric_options(task)
        scored_images = [release.images[p] for p in positions[task]] if spec.unit == "image" else []
        answer_notes = task_behaviour.answer_notes(task_predictions, scored_images)
        judge_before = _judge_counts(chosen.judge_of(task))
        with _items_named_as_in_release(task, release, positions[task]):
            evaluation = prepare_task(task, task_predictions, references, **metric_options)
        evaluations[task] = evaluation
        item_cases = _item_cases(task, release, positions[task])
        result = result_with_intervals(
            evaluation,
            n_resamples=chosen.n_resamples,
            confidence=chosen.confidence,
            seed=chosen.seed,
            clusters=item_cases,
        )
        if spec.unit == "image" and result.get("per_image_best_iou") is not None:
            filenames = [image.filename for image in scored_images]
            result["per_image_best_iou"] = dict(zip(filenames, result["per_image_best_iou"]))
        coverage = {**summary[task], "scored": len(positions[task])}
        if task_behaviour.answer_counts is not None:  # e.g. images answered with many boxes
            coverage.update(task_behaviour.answer_counts(task_predictions, scored_images))
        if task_behaviour.answer_summary is not None:  # e.g. out-of-image boxes
            coverage.update(
                load_hook(task_behaviour.answer_summary)(loaded.prediction_set, release)
            )
        answer_notes = task_behaviour.revise_answer_notes(  # advice from counts, not guesses
            answer_notes, coverage, loaded.box_answers
        )
        notes.extend(_without_convention_in_use(answer_notes, _conventions_in_use(loaded)))
        if coverage.get("hit_token_limit"):  # the server said so; the parse may not show it
            notes.append(
                f"{coverage['hit_token_limit']} answer(s) stopped at the model's answer length "
                "limit (finish_reason length) and may be cut off; a run with a higher "
                "--max-new-tokens may score otherwise"
            )
        nothing = nothing_answered_note(coverage)
        if nothing is not None:  # first: the reader must not take these zeros for a model's
            notes.insert(0, nothing)
        task_reports[task] = {
            "metrics": {k: v for k, v in result.items() if k != "confidence_intervals"},
            "confidence_intervals": result.get("confidence_intervals", {}),
            "notes": notes,
            "coverage": coverage,
        }
        if metric_options.get("exclude"):
            task_reports[task]["excluded"] = list(metric_options["exclude"])
        if chosen.judge_kind(task) is not None:
            task_reports[task]["judge"] = judge_record(chosen, task, since=judge_before)
        if chosen.breakdowns:
            breakdowns[task] = task_breakdowns(
                task,
                evaluation,
                _item_groups(task, evaluation, positions[task], cases, images),
                n_resamples=chosen.n_resamples,
                confidence=chosen.confidence,
                seed=chosen.seed,
                min_group_size=chosen.min_group_size,
                prepare_group=(
                    SubsetPreparer(task, task_predictions, references, metric_options)
                    if task_behaviour.groups_prepared_apart
                    else None
                ),
                coco_ap_intervals=chosen.coco_ap_intervals == "all",
                clusters=item_cases,
            )
    # The task whose release has a human reference (the raters' boxes), if it is scored.
    human_task = next((t for t in loaded.tasks if behaviour(t).human_reference), None)
    human = (
        None if human_task is None else _human(human_task, release, positions[human_task], chosen)
    )
    human_section = {} if human is None else {human_task: human.section}
    report = {
        **_provenance(data, loaded),
        "bootstrap": {**chosen.bootstrap, "unit": BOOTSTRAP_UNIT},
        "answered_only": chosen.answered_only,
        "tasks": task_reports,
        "human_reference": human_section,
        "breakdown_settings": {
            "computed": chosen.breakdowns,
            "min_group_size": chosen.min_group_size,
            "coco_ap_intervals": chosen.coco_ap_intervals,
            "gold_box_size_thresholds": dict(BOX_SIZE_THRESHOLDS),
            "category_map": chosen.category_map.source if chosen.category_map else None,
        },
        "breakdowns": breakdowns,
    }
    return ScoredPredictions(
        report,
        release,
        loaded.prediction_set,
        chosen,
        evaluations,
        positions,
        cases,
        images,
        human,
    )


def _human(task: str, release: Any, positions: Sequence[int], options: ScoringOptions) -> Any:
    """The human reference of ``task`` on the items at ``positions``, with the report's bootstrap."""
    target = behaviour(task).human_reference
    assert target is not None  # only tasks with one are asked
    return load_hook(target)(
        release,
        positions,
        n_resamples=options.n_resamples,
        confidence=options.confidence,
        seed=options.seed,
        coco_ap_intervals=options.coco_ap_intervals == "all",
    )


#: Settings the scoring's refusals name (Python argument and ``nova evaluate`` option).
_ANSWERED_ONLY = Option("answered_only", "--answered-only", "True")
_ALLOW_OTHER_RELEASE = Option("allow_other_release", "--allow-other-release", "True")


def _item_cases(task: str, release: Any, positions: Sequence[int]) -> list[str] | None:
    """The case id of each item of an image task's evaluation (its bootstrap resamples whole
    cases); None for a case task, whose items are cases already."""
    if registry.TASKS[task].unit != "image":
        return None
    return [release.images[position].case_id for position in positions]


def _scored_positions(task: str, loaded: _Loaded, answered_only: bool) -> list[int]:
    """Release positions of the items of ``task`` to score: all, or those with a line."""
    spec = registry.TASKS[task]
    prediction_set = loaded.prediction_set
    keys = prediction_set.filenames if spec.unit == "image" else prediction_set.case_ids
    if not answered_only:
        return list(range(len(keys)))
    answered = prediction_set.records[task]
    chosen = [position for position, key in enumerate(keys) if key in answered]
    if not chosen:
        raise NovaInputError(
            (
                f"no line answers {task}, so ",
                _ANSWERED_ONLY,
                " leaves nothing to score; leave the task out (",
                TASKS,
                ") or score without ",
                _ANSWERED_ONLY,
            ),
            source=", ".join(str(p) for p in loaded.paths),
            field=spec.key_field,
        )
    return chosen


def _item_groups(
    task: str, evaluation: Any, positions: list[int], cases: list[Any], images: list[Any]
) -> list[dict[str, str]]:
    """The breakdown groups of each item of a task's evaluation, in item order."""
    if registry.TASKS[task].unit == "image":
        return [images[position].groups for position in positions]
    # A case evaluation's items are its scored cases (placeholders left out).
    indices = getattr(evaluation, "item_indices", range(len(positions)))
    return [cases[positions[int(index)]].groups for index in indices]


def compare_predictions(
    data: str | os.PathLike[str],
    predictions_a: PredictionPaths,
    predictions_b: PredictionPaths,
    options: ScoringOptions | None = None,
    **settings: Any,
) -> dict[str, Any]:
    """Compare two models on the same NOVA items with a paired bootstrap.

    Both prediction sets are aligned to the release (missing items are "no
    prediction" for either), so every resample draws the same cases for A and B
    (every image of each drawn case, for an image task): the interval is of the
    difference A - B, not of two separate scores, and is much tighter than
    comparing two unpaired intervals.

    Args:
        data: the release folder.
        predictions_a: predictions file(s) of model A.
        predictions_b: predictions file(s) of model B.
        options: as in :func:`evaluate_predictions`; both models get the same. ``tasks``
            None means every task both answer; the box convention is per run (from its
            manifest) unless given.
        **settings: :class:`ScoringOptions` attributes as keywords, overriding ``options``.

    Returns:
        ``{"a": provenance, "b": provenance, "tasks": {task: {metric: {"a", "b", "difference",
        "ci", "p_value"}}}, "settings": {task: {name: value}}, "answer_agreement": {task:
        {"items", "identical"}}, ...}``; ``settings`` holds the metric settings both models
        were scored with (METEOR variant, BERTScore model, keyword extractor and averaging,
        diagnosis matcher), as a report's metrics do; ``answer_agreement`` counts the items
        both answer alike (:func:`answer_agreement`).

    Example:
        >>> import tempfile, pathlib, json
        >>> from novabench.data.sample import write_sample_release
        >>> root = pathlib.Path(tempfile.mkdtemp())
        >>> release = write_sample_release(root / "nova", n_cases=3, seed=0, progress=False)
        >>> _ = (root / "a.jsonl").write_text(json.dumps({"case_id": "case0001", "diagnoses": ["glioma"]}) + "\\n")
        >>> comparison = compare_predictions(release, root / "a.jsonl", root / "a.jsonl", n_resamples=50)
        >>> comparison["tasks"]["diagnosis"]["top1-lexicon"]["difference"]
        0.0
    """
    from novabench.data.release import read_release
    from novabench.metrics.stats import paired_bootstrap
    from novabench.metrics.tasks import prepare_task
    from novabench.report.agreement import agreement_counts

    chosen = ScoringOptions.build(options, **settings)
    release = read_release(data)  # read, validated and fingerprinted once for both models
    fingerprint = release.fingerprint()
    loaded_a = _load(data, predictions_a, chosen, release=release, fingerprint=fingerprint)
    loaded_b = _load(data, predictions_b, chosen, release=release, fingerprint=fingerprint)
    _check_box_convention_reads(chosen.box_convention, [loaded_a, loaded_b])
    shared = [task for task in loaded_a.tasks if task in loaded_b.tasks]
    if not shared:
        raise NovaInputError(
            "the two prediction sets answer no task in common", field="predictions"
        )
    compared: dict[str, Any] = {}
    metric_settings: dict[str, dict[str, str]] = {}
    notes: dict[str, list[str]] = {}
    judges: dict[str, Any] = {}
    answer_counts: dict[str, dict[str, dict[str, int]]] = {}
    for task in progress_bar(shared, desc="comparing", unit="task"):
        metric_options, notes[task] = chosen.metric_options(task)
        judge_before = _judge_counts(chosen.judge_of(task))
        inputs_a, inputs_b = _task_inputs(task, loaded_a), _task_inputs(task, loaded_b)
        with _items_named_as_in_release(task, release):
            evaluation_a = prepare_task(task, *inputs_a, **metric_options)
            evaluation_b = prepare_task(task, *inputs_b, **metric_options)
        counts = behaviour(task).answer_counts  # e.g. images answered with many boxes
        if counts is not None:
            images = list(release.images) if registry.TASKS[task].unit == "image" else []
            answer_counts[task] = {
                "a": counts(inputs_a[0], images),
                "b": counts(inputs_b[0], images),
            }
        compared[task] = paired_bootstrap(
            evaluation_a,
            evaluation_b,
            **chosen.bootstrap,
            clusters=_item_cases(task, release, range(len(release.images))),
        )
        # One set of options scores both sides: A's settings are B's.
        named = {
            key: value for key, value in evaluation_a.result().items() if isinstance(value, str)
        }
        if named:
            metric_settings[task] = named
        if chosen.judge_kind(task) is not None:
            judges[task] = judge_record(chosen, task, since=judge_before)
    summaries = {"a": loaded_a.prediction_set.summary(), "b": loaded_b.prediction_set.summary()}
    for side, loaded in (("a", loaded_a), ("b", loaded_b)):
        for task in shared:  # the same extra counts as `nova evaluate` (which convention reads)
            extra = behaviour(task).answer_summary
            if extra is not None:
                summaries[side][task].update(load_hook(extra)(loaded.prediction_set, release))
            summaries[side][task].update(answer_counts.get(task, {}).get(side, {}))
    return {
        "a": _provenance(data, loaded_a),
        "b": _provenance(data, loaded_b),
        "bootstrap": {**chosen.bootstrap, "paired": True, "unit": BOOTSTRAP_UNIT},
        "tasks": compared,
        "settings": metric_settings,
        # Missing answers score as misses; a difference can come from coverage alone.
        "coverage": {task: {side: summaries[side][task] for side in ("a", "b")} for task in shared},
        "notes": notes,
        # Identical answers make A - B zero by construction: the outputs say so in words.
        "answer_agreement": agreement_counts(
            loaded_a.prediction_set, loaded_b.prediction_set, shared
        ),
        **({"judges": judges} if judges else {}),
    }


def answer_agreement(
    data: str | os.PathLike[str],
    predictions_a: PredictionPaths,
    predictions_b: PredictionPaths,
    options: ScoringOptions | None = None,
    *,
    tasks: Sequence[str] | None = None,
) -> dict[str, dict[str, int]]:
    """Per task both sets answer, how many items get the same parsed answer from both.

    Args:
        data: the release folder.
        predictions_a: predictions file(s) of A.
        predictions_b: predictions file(s) of B.
        options: the comparison's scoring options (box convention, tasks, other release).
        tasks: only these tasks (default: every task both sets answer).

    Returns:
        ``{task: {"items": n, "identical": k}}``: ``k`` of the task's ``n`` items (images or
        cases) have equal answers in A and B.

    Example:
        >>> import tempfile, pathlib, json
        >>> from novabench.data.sample import write_sample_release
        >>> root = pathlib.Path(tempfile.mkdtemp())
        >>> release = write_sample_release(root / "nova", n_cases=3, seed=0, progress=False)
        >>> line = {"case_id": "case0001", "diagnoses": ["glioma"]}
        >>> _ = (root / "a.jsonl").write_text(json.dumps(line) + "\\n")
        >>> _ = (root / "b.jsonl").write_text(json.dumps({**line, "diagnoses": ["abscess"]}))
        >>> answer_agreement(release, root / "a.jsonl", root / "a.jsonl")
        {'diagnosis': {'items': 3, 'identical': 3}}
        >>> answer_agreement(release, root / "a.jsonl", root / "b.jsonl")
        {'diagnosis': {'items': 3, 'identical': 2}}
    """
    from novabench.data.release import read_release
    from novabench.report.agreement import agreement_counts

    chosen = ScoringOptions.build(options)
    release = read_release(data)
    fingerprint = release.fingerprint()
    loaded_a = _load(data, predictions_a, chosen, release=release, fingerprint=fingerprint)
    loaded_b = _load(data, predictions_b, chosen, release=release, fingerprint=fingerprint)
    shared = [task for task in loaded_a.tasks if task in loaded_b.tasks]
    if tasks is not None:
        shared = [task for task in shared if task in tasks]
    return agreement_counts(loaded_a.prediction_set, loaded_b.prediction_set, shared)


def judge_record(
    options: ScoringOptions, task: str, *, since: Mapping[str, int] | None = None
) -> dict[str, Any]:
    """What a report keeps about the judge of ``task``: kind, model, prompt, cache, counters.

    ``stats`` are the judge's counters (calls, cache hits, requests, retries, failures...)
    minus ``since`` (a snapshot taken before scoring), so they describe this scoring only.

    Example:
        >>> record = judge_record(ScoringOptions(matcher=str.__eq__), "diagnosis")
        >>> record["kind"], record["model"], record["stats"]
        ('pair', None, {})
    """
    judge = options.judge_of(task)
    counts = _judge_counts(judge)
    before = since or {}
    text = {
        name: getattr(judge, name, None)
        for name in (
            "description",
            "model",
            "endpoint",
            "prompt_version",
            "prompt_sha256",
            "cache_folder",
        )
    }
    return {
        "kind": options.judge_kind(task),
        **{name: value if isinstance(value, str) else None for name, value in text.items()},
        "stats": {name: value - before.get(name, 0) for name, value in counts.items()},
    }


def _judge_counts(judge: Any) -> dict[str, int]:
    """The judge's counters as a dict (empty for a judge without ``stats``)."""
    stats = getattr(judge, "stats", None)
    if stats is None or not hasattr(stats, "__dataclass_fields__"):
        return {}
    return {name: int(value) for name, value in asdict(stats).items()}


@dataclass
class _ManifestPrompts:
    """A run manifest's prompts, as :func:`_prompt_convention` reads them from a manifest."""

    prompts: Any


@dataclass
class _Loaded:
    release: Any
    paths: list[Path]
    prediction_set: Any
    manifests: list[Any]
    box_convention: str
    tasks: list[str]
    fingerprint: str  # of the release; hashing every image is the costly part, so once
    prompt_convention: str | None = None  # the box order the runs' prompt asked for
    unfinished: dict[str, Any] | None = None  # unfinished statuses, tasks never answered
    # Who read the box answers: {"read_here": n, "parsed_earlier": {convention: n}}
    box_answers: dict[str, Any] | None = None
    # Per file, the SHA-256 of its bytes as read (None: it changed while read, a run at work)
    sha256: list[str | None] | None = None
    # Per file with a manifest, how much of it the manifest's SHA-256 verified
    file_checks: list[dict[str, Any]] | None = None
    # Per file, the distinct models its lines name (the report's name when no manifest has one)
    line_models: list[list[str]] | None = None


def _load(
    data: str | os.PathLike[str] | NovaRelease,
    predictions: PredictionPaths,
    options: ScoringOptions,
    *,
    release: Any = None,
    fingerprint: str | None = None,
) -> _Loaded:
    """Release (unless given) and predictions read, raw answers parsed, tasks to score decided."""
    from novabench._files import file_sha256
    from novabench.data.release import NovaRelease, read_release
    from novabench.run.predictions import (
        RunManifest,
        labelled_lines_read_y_first,
        parse_raw,
        read_predictions,
        recorded_y_first_reads,
    )

    if release is None:
        release = data if isinstance(data, NovaRelease) else read_release(data)
    paths = (
        [Path(predictions)]
        if isinstance(predictions, (str, os.PathLike))
        else [Path(p) for p in predictions]
    )
    if not paths:
        raise NovaInputError("no predictions file given", field="predictions")
    # The manifests first: a run that ends meanwhile records the bytes hashed next.
    manifests = [RunManifest.read(p) for p in paths]
    before = [file_sha256(path) if path.is_file() else None for path in paths]
    unfinished = _unfinished_runs(paths, manifests, options.allow_running)
    file_checks = _check_recorded_files(paths, manifests, before)
    # A file its writer still appends to is read to its last complete line (as nova merge
    # --allow-running reads it): the line being written is set aside and said so.
    still_written: dict[Path, list[Any]] = {
        Path(run["path"]): [] for run in unfinished if run.get("writer") is not None
    }
    prediction_set = read_predictions(paths, release, still_written=still_written)
    for run in unfinished:
        partial = still_written.get(Path(run["path"]))
        if partial:
            run["set_aside"] = partial[0].describe("scored")
    # The same bytes before and after reading are the bytes read; a file written meanwhile
    # (a running run scored with --allow-running) gets no digest rather than a wrong one.
    digests = [
        digest if digest == file_sha256(path) else None for digest, path in zip(before, paths)
    ]
    _check_manifests_describe(paths, manifests, prediction_set)
    line_models = _line_models(paths, prediction_set)
    _check_one_model(paths, manifests, line_models)
    if fingerprint is None:
        fingerprint = release.fingerprint()
    if not options.allow_other_release:
        for path, manifest in zip(paths, manifests):
            recorded = manifest.release_fingerprint if manifest is not None else None
            if recorded is not None and recorded != fingerprint:
                # Answers to other images or text would be scored against this ground truth.
                raise NovaInputError(
                    (
                        f"the run was made on other data (release fingerprint {recorded}, this "
                        f"one {fingerprint}); score it against the data it was run on, or pass ",
                        _ALLOW_OTHER_RELEASE,
                        " if the change is intended",
                    ),
                    source=str(path),
                    field="release.fingerprint",
                )
    box_convention = options.box_convention
    if box_convention is None:
        recorded_conventions = {m.box_convention for m in manifests if m and m.box_convention}
        if len(recorded_conventions) > 1:
            raise NovaInputError(
                f"the runs record different box conventions {sorted(recorded_conventions)}; "
                "pass one explicitly",
                field="box_convention",
            )
        box_convention = recorded_conventions.pop() if recorded_conventions else "auto"
    prompt_convention = (
        _prompt_convention(manifests, custom=True) if box_convention == "auto" else None
    )
    box_answers = _box_answers_readers(prediction_set, paths, manifests)
    read = prediction_set
    prediction_set = parse_raw(
        prediction_set,
        release,
        box_convention=box_convention,
        prompt_convention=prompt_convention,
        parsed_with=_parsed_with(paths, manifests),
    )
    # Labelled lines read y-first for want of a prompt on record: said first, as nova parse
    # says it. (Parsed files never load the parser: none of their answers is read here.)
    assumed = labelled_lines_read_y_first(
        read,
        prediction_set,
        release,
        box_convention=box_convention,
        prompt_convention=prompt_convention,
    )
    # Those a nova parse read y-first: its manifest records them, said again here.
    assumed += recorded_y_first_reads(paths, manifests)
    if assumed:
        box_answers["labelled_read_y_first"] = assumed
    wanted = options.tasks or [t for t in registry.TASK_NAMES if prediction_set.records[t]]
    if not wanted:
        raise NovaInputError("the predictions answer no task", source=", ".join(map(str, paths)))
    ordered = [t for t in registry.TASK_NAMES if t in wanted]
    return _Loaded(
        release,
        paths,
        prediction_set,
        [None if m is None else m.to_dict() for m in manifests],
        box_convention,
        ordered,
        fingerprint,
        prompt_convention,
        _unfinished_record(unfinished, _asked_not_answered(manifests, prediction_set)),
        box_answers,
        digests,
        file_checks,
        line_models,
    )


def _parsed_with(
    paths: Sequence[Path], manifests: Sequence[Any]
) -> dict[str, tuple[str, str | None]]:
    """Per file ``nova parse`` wrote, the box convention and prompt order it read with."""
    from novabench.run.defaults import CONVENTIONS

    recorded = {}
    for path, manifest in zip(paths, manifests):
        parsed = manifest.parsed if manifest is not None else None
        convention = (parsed or {}).get("box_convention")
        if convention in CONVENTIONS:
            order = (parsed or {}).get("box_order_from_prompt")
            recorded[str(path)] = (convention, order if isinstance(order, str) else None)
    return recorded


def _check_recorded_files(
    paths: Sequence[Path], manifests: Sequence[Any], digests: Sequence[str | None]
) -> list[dict[str, Any]]:
    """Refuse a file that is not the one its manifest records (edited or swapped since the
    run wrote it); per file with a manifest, what was checked (``predictions.file_checks``)."""
    from novabench.run.manifest import check_recorded_file

    checked = []
    for path, manifest, digest in zip(paths, manifests, digests):
        if manifest is None or not path.is_file():
            continue
        checked.append(check_recorded_file(path, manifest, sha256=digest).to_dict())
    return checked


def _line_models(paths: Sequence[Path], prediction_set: Any) -> list[list[str]]:
    """Per file, the distinct ``model`` values its lines give, in the order first met."""
    named: dict[str, dict[str, None]] = {str(path): {} for path in paths}
    for task in registry.TASK_NAMES:
        for record in prediction_set.records[task].values():
            if record.model is not None and str(record.source) in named:
                named[str(record.source)][record.model] = None
    return [list(named[str(path)]) for path in paths]


def _check_one_model(
    paths: Sequence[Path], manifests: Sequence[Any], line_models: Sequence[Sequence[str]]
) -> None:
    """Refuse predictions files that name different models (user19): ``--predictions A B``
    joins per-task files of one model, and a report of two models' answers says nothing true.

    A file's model is the one its manifest names (else its backend's), or, without one, the
    ones its lines name; a file that names none takes no part.

    Raises:
        NovaInputError: two files, or the lines of one file without a manifest model, name
            different models.
    """
    named: list[tuple[Path, list[str]]] = []
    for path, manifest, from_lines in zip(paths, manifests, line_models):
        recorded = None
        if manifest is not None:
            recorded = manifest.model or (manifest.backend or {}).get("model")
        names = [str(recorded)] if recorded else list(from_lines)
        if len(names) > 1:
            raise NovaInputError(
                f"its lines name different models ({names[0]!r} and {names[1]!r}) and no run "
                "manifest names one: a report scores the answers of one model; split the "
                "file by model and score each on its own",
                source=str(path),
                field="model",
            )
        if names:
            named.append((path, names))
    for path, names in named[1:]:
        first_path, first = named[0]
        if names != first:
            raise NovaInputError(
                f"the files name different models, {first[0]!r} and {names[0]!r} in that "
                "order; several predictions files are scored as the per-task files of one "
                "model, so score each model's files on their own",
                source=f"{first_path}, {path}",
                field="model",
            )


def _check_manifests_describe(
    paths: Sequence[Path], manifests: Sequence[Any], prediction_set: Any
) -> None:
    """Refuse a manifest that cannot be the record of the file beside it (user15).

    Its box convention, prompts, release and status would be applied to answers it never
    recorded: another run's manifest copied (or uploaded) beside a file.
    """
    from novabench.run.manifest import RunManifest, manifest_mismatch

    for path, manifest in zip(paths, manifests):
        if manifest is None:
            continue
        answered: dict[str, int] = {}
        with_lines = []
        for task in registry.TASK_NAMES:
            mine = [r for r in prediction_set.records[task].values() if r.source == str(path)]
            if mine:
                with_lines.append(task)
            answered[task] = sum(1 for record in mine if record.error is None)
        reason = manifest_mismatch(manifest, answered, with_lines)
        if reason is not None:
            raise NovaInputError(
                f"{RunManifest.path_for(path).name} is not the record of {path.name}: {reason}; "
                f"give {path.name} with the manifest written beside it, or without a manifest",
                source=str(RunManifest.path_for(path)),
                field="counts",
            )


def _unfinished_runs(
    paths: Sequence[Path], manifests: Sequence[Any], allow_running: bool
) -> list[dict[str, Any]]:
    """The files whose manifest holds an unfinished status, with their writer if running.

    Raises:
        NovaInputError: a run another process is still writing, unless ``allow_running``.
    """
    from novabench.run.lock import active_writer, ended_writer
    from novabench.run.manifest import finished_status, is_running_status, still_being_written

    runs = []
    for path, manifest in zip(paths, manifests):
        status = None if manifest is None else manifest.status
        if finished_status(status):
            continue
        run: dict[str, Any] = {"path": str(path), "status": status}
        if is_running_status(status):
            run["writer"] = active_writer(path)
            if run["writer"] is None:
                # Said "ended" only when known: a file without a lock may be written elsewhere.
                run["writer_ended"] = ended_writer(path)
            if run["writer"] is not None and not allow_running:
                # Scores of a file still growing change without the user choosing.
                raise still_being_written(
                    path,
                    status,
                    run["writer"],
                    action="score the answers so far",
                    consequence="its scores would change as answers arrive",
                )
        runs.append(run)
    return runs


def _asked_not_answered(manifests: Sequence[Any], prediction_set: Any) -> list[str]:
    """Tasks a run manifest says were asked that no line of the predictions answers."""
    asked = set()
    for manifest in manifests:
        for name in (manifest.tasks or []) if manifest is not None else []:
            try:
                asked.add(registry.canonical_task(name))
            except (NovaInputError, TypeError):  # not a task name: nothing asked of it
                continue
    return [t for t in registry.TASK_NAMES if t in asked and not prediction_set.records[t]]


def _unfinished_record(
    runs: list[dict[str, Any]], asked_not_answered: list[str]
) -> dict[str, Any] | None:
    """What a report keeps of an unfinished run (None when there is nothing to say)."""
    from novabench.run.manifest import unfinished_run_notice

    notice = unfinished_run_notice(runs, asked_not_answered)
    if not notice:
        return None
    return {"runs": runs, "asked_not_answered": asked_not_answered, "notice": notice}


def _box_answers_readers(
    prediction_set: Any, paths: Sequence[Path], manifests: Sequence[Any]
) -> dict[str, Any]:
    """Which convention governs the box answers: the raw ones are read here (with this
    evaluation's ``box_convention``); the ones already parsed are not read again, so the
    convention their ``nova parse`` recorded in the file's manifest governs them."""
    from novabench.run.predictions import UNRECORDED_PARSE

    recorded = {
        str(path): (manifest.parsed or {}).get("box_convention") if manifest else None
        for path, manifest in zip(paths, manifests)
    }
    read_here = checked_here = 0
    parsed_earlier: Counter[str] = Counter()
    for record in prediction_set.records[registry.task_answered_in("boxes")].values():
        if record.is_parsed:
            parse = recorded.get(str(record.source))
            parsed_earlier[parse or UNRECORDED_PARSE] += 1
            # No parse on record, raw answer kept: read again with this evaluation's
            # convention, which must give the parsed boxes (else the line is refused).
            checked_here += parse is None and record.error is None and record.raw is not None
        elif record.error is None and record.raw is not None:
            read_here += 1
    readers: dict[str, Any] = {
        "read_here": read_here,
        "parsed_earlier": dict(parsed_earlier.most_common()),
    }
    if checked_here:
        readers["checked_here"] = checked_here
    return readers


def _prompt_convention(manifests: Sequence[Any], *, custom: bool = False) -> str | None:
    """The box order all the runs' localisation prompts asked for; None unless one and known.

    A file without a manifest says nothing of its prompt, so it leaves the order open; a
    manifest that records prompts but none for localisation does not take part. With
    ``custom``, a run whose manifest records a prompt the toolkit does not know makes it
    ``CUSTOM_PROMPT`` (what the parser is given: that prompt may have asked any order).
    """
    from novabench.run.defaults import CUSTOM_PROMPT
    from novabench.run.prompts import prompt_box_convention, prompt_box_order

    read = prompt_box_order if custom else prompt_box_convention
    asked = {
        read(manifest.prompts if manifest is not None else None)
        for manifest in manifests
        if manifest is None
        or not manifest.prompts
        or any(
            task in manifest.prompts
            for task in tasks_where(lambda spec: spec.prompt_sets_box_order)
        )
    }
    if CUSTOM_PROMPT in asked:
        return CUSTOM_PROMPT
    return asked.pop() if len(asked) == 1 else None


def _items_named_as_in_release(
    task: str, release: Any, positions: Sequence[int] | None = None
) -> AbstractContextManager[None]:
    """A block whose metric and judge errors name an item by its filename or case id.

    The metrics know an item only by its index in the lists they were given (``example
    17``), which a user cannot find in a predictions file; the release knows its name.
    """
    from novabench.metrics.tasks import examples_renamed

    spec = registry.TASKS[task]

    def name(index: int, detail: str | None) -> str:
        items = list(release.images) if spec.unit == "image" else release.cases()
        if positions is not None:
            items = [items[position] for position in positions]
        if 0 <= index < len(items):
            return str(getattr(items[index], spec.key_field))
        return f"example {index}" + (f" ({detail})" if detail else "")  # not an item of ours

    return examples_renamed(name)


def _task_inputs(
    task: str, loaded: _Loaded, positions: Sequence[int] | None = None
) -> tuple[list[Any], list[Any]]:
    """Plain predictions and references of one task, in release order (at ``positions``)."""
    spec = registry.TASKS[task]
    release = loaded.release
    items = list(release.images) if spec.unit == "image" else release.cases()
    answers = loaded.prediction_set.answers(task)
    if positions is not None:
        items = [items[position] for position in positions]
        answers = [answers[position] for position in positions]
    task_behaviour = behaviour(task)
    references = [task_behaviour.reference(item) for item in items]
    if task_behaviour.reference_required:
        for item, reference in zip(items, references):
            if reference is None or not str(reference).strip():
                # The metric would name only an index; name the item and the way out.
                others = ", ".join(t for t in registry.TASK_NAMES if t != task)
                raise NovaInputError(
                    (
                        f"the release has no reference {spec.reference_field} for this "
                        f"{spec.unit}, so {task} cannot be scored; score the other tasks "
                        f"({others}) with ",
                        TASKS,
                    ),
                    source=str(release.root),
                    record=getattr(item, spec.key_field),
                    field=spec.reference_field,
                )
    return answers, references


def nothing_answered_note(coverage: Mapping[str, Any]) -> str | None:
    """The note of a task none of whose items was answered; None when one was (or none exist).

    Such a task scores as if the model had said nothing, so its zeros (and its FNR of 100)
    are not a model's scores: typically every request of the run failed.

    Args:
        coverage: the task's coverage (``items``, ``answered``, ``missing``, ``errors``).

    Example:
        >>> print(nothing_answered_note({"items": 37, "answered": 0, "missing": 37, "errors": 37}))
        nothing was answered (37 model errors, 0 without a line): these scores are those of no \
prediction, not the model's
        >>> nothing_answered_note({"items": 37, "answered": 1, "missing": 36, "errors": 0}) is None
        True
    """
    if coverage.get("answered") or not coverage.get("items"):
        return None
    errors = int(coverage.get("errors", 0))
    without_line = int(coverage.get("missing", coverage["items"])) - errors
    return (
        f"nothing was answered ({errors} model error{'' if errors == 1 else 's'}, "
        f"{without_line} without a line): these scores are those of no prediction, "
        "not the model's"
    )


def _check_box_convention_reads(asked: str | None, loaded: Sequence[_Loaded]) -> None:
    """Refuse a box convention the user chose that reads no box answer (user19).

    Box answers parsed earlier are scored as parsed; the report would record the convention
    as the one that read them (and a board would call two reports of one run's boxes
    differently read). The same convention as every parse recorded changes nothing: kept.

    Raises:
        NovaInputError: ``asked`` is set, box answers were given, none of them is raw, and
            some were parsed under another convention by a ``nova parse`` on record (boxes
            with no parse on record are checked against their raw answers read under
            ``asked``, so it is used).
    """
    from novabench.errors import BOX_CONVENTION
    from novabench.run.predictions import UNRECORDED_PARSE

    if asked is None:
        return
    answers = [one.box_answers or {"read_here": 0, "parsed_earlier": {}} for one in loaded]
    earlier: Counter[str] = Counter()
    for one in answers:
        earlier.update(one.get("parsed_earlier") or {})
    # Parsed answers with no parse on record are read again with it: it decides them too.
    if (
        any(one.get("read_here") or one.get("checked_here") for one in answers)
        or not earlier
        or set(earlier) == {asked}
    ):
        return
    if UNRECORDED_PARSE in earlier:
        # No parse on record: the raw answers beside those boxes are read again under the
        # convention asked, to check them (a check that reads, so the convention is used).
        return
    how = ", ".join(
        f"{n} given as boxes with no parse on record"
        if convention == UNRECORDED_PARSE
        else f"{n} parsed by nova parse with box convention {convention}"
        for convention, n in earlier.most_common()
    )
    files = ", ".join(str(path) for one in loaded for path in one.paths)
    raise NovaInputError(
        (
            f"every box answer is already parsed ({how}, as recorded) and scored as parsed, "
            f"so box convention {asked} would read none of them; leave out ",
            BOX_CONVENTION,
            f", or parse the raw answers again with it (nova parse --box-convention {asked})",
        ),
        source=files,
        field="box_convention",
    )


def _conventions_in_use(loaded: _Loaded) -> list[str]:
    """The conventions the box answers were read with: this evaluation's for the raw ones it
    read, and each one a ``nova parse`` recorded for the answers parsed earlier."""
    from novabench.run.predictions import UNRECORDED_PARSE

    answers = loaded.box_answers or {"read_here": 1, "parsed_earlier": {}}
    used = [loaded.box_convention] if answers["read_here"] or answers.get("checked_here") else []
    return used + [c for c in answers["parsed_earlier"] if c != UNRECORDED_PARSE]


def _without_convention_in_use(notes: list[str], conventions: Sequence[str]) -> list[str]:
    """The notes, a suggestion of a ``--box-convention`` already in use replaced.

    Suggesting the convention the answers were read with (here, or by the ``nova parse``
    that wrote the file) sends the reader in a circle.

    Example:
        >>> _without_convention_in_use(["2 boxes ... (raw answers: --box-convention xyxy_pixel)"],
        ...                            ["xyxy_pixel"])[0]
        '2 boxes ... (the raw answers were read with --box-convention xyxy_pixel already: another convention may fit, see the first lines)'
    """
    for convention in conventions:
        in_use = f"(raw answers: --box-convention {convention})"
        instead = (
            f"(the raw answers were read with --box-convention {convention} already: another "
            "convention may fit, see the first lines)"
        )
        notes = [note.replace(in_use, instead) for note in notes]
    return notes


def _provenance(data: str | os.PathLike[str] | NovaRelease, loaded: _Loaded) -> dict[str, Any]:
    from novabench.data.release_record import NovaRelease

    # a release already read is named by its folder, as when the folder is given
    path = data.root if isinstance(data, NovaRelease) else Path(data)
    return {
        "toolkit": toolkit_record(),
        "created_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "data": {
            "path": str(path),
            "layout": loaded.release.layout,
            "n_images": len(loaded.release.images),
            "n_cases": len(loaded.release.cases()),
            "fingerprint": loaded.fingerprint,
            # what made the data (e.g. the synthetic sample), so every output can say so first
            "provenance": loaded.release.provenance,
            # what reading the ground truth noticed (nova info lists it): said first too
            **({"warnings": list(loaded.release.warnings)} if loaded.release.warnings else {}),
        },
        "predictions": {
            "paths": [str(p) for p in loaded.paths],
            # what identifies the answers scored, wherever the file travels (a board refuses
            # two reports of the same bytes scored alike)
            "sha256": loaded.sha256,
            "manifests": loaded.manifests,
            "box_convention": loaded.box_convention,
            # what governs the box answers: read here with box_convention, or parsed earlier
            "box_answers": loaded.box_answers,
            "box_order_from_prompt": loaded.prompt_convention,
            # per file, the models its lines name (the model's name when no manifest gives one)
            "line_models": loaded.line_models,
            # the box order the runs' prompt asked for, whatever convention read the answers
            "prompt_box_convention": _prompt_convention(
                [
                    None if m is None else _ManifestPrompts(m.get("prompts"))
                    for m in loaded.manifests
                ]
            ),
            # an interrupted or running run, and tasks asked but never answered: said first
            **({"unfinished_run": loaded.unfinished} if loaded.unfinished else {}),
            # per file with a manifest, what its recorded SHA-256 verified of it
            **({"file_checks": loaded.file_checks} if loaded.file_checks else {}),
        },
    }
