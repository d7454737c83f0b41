"""Task dispatch: route options and score plain predictions with each task's scorer.

The scorer of a task is read from :mod:`novabench.registry` (``TaskSpec.scorer``); the
evaluate face's pseudo-task ``registry.ALL_TASKS`` (``"all"``) scores every task from one
row per image, diagnosis once per case (rows grouped by ``case_id``, in order of first
appearance; the diagnoses of a case must agree across its images, and so must its clinical
history, which a case judge receives). The evaluate adapter
(Features, input normalisation, Arrow) is :mod:`novabench.metrics.evaluate_adapter`.
"""

from __future__ import annotations

import contextlib
import re
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from novabench import registry
from novabench.errors import NovaError, NovaInputError
from novabench.tasks.captioning import portable_bertscore_hash

__all__ = ["TASKS", "compute_task", "examples_renamed", "prepare_task", "task_options"]

#: The tasks the evaluate face takes: the registry's, then its pseudo-task "all".
TASKS: tuple[str, ...] = (*registry.TASK_NAMES, registry.ALL_TASKS)

_STATS_KWARGS = frozenset({"bootstrap_resamples", "confidence", "seed"})


# "example 3", "example 3 (case0004)", "example 3 (case0004), prediction 2": how the
# metrics name an item of the lists they were given, by its 0-based list index.
_EXAMPLE = re.compile(r"example (\d+)(?: \(([^)]*)\))?")
# An item named inside a warning's text, "... (first: example 3, references.boxes[0])".
_EXAMPLE_IN_TEXT = re.compile(r"(?<=first: )example \d+")
_MATCHING_NOTE = re.compile(r"^while matching (example \d+(?: \([^)]*\))?)")


@contextlib.contextmanager
def examples_renamed(rename: Callable[[int, str | None], str]) -> Iterator[None]:
    """Name the items an error raised inside names as ``example N`` as ``rename(N, detail)``.

    The metrics name an item by its 0-based index in the lists they were given (``example
    3``, with its case id when known: ``example 3 (case0004)``), which is all they know. A
    caller that knows more names it better: ``nova evaluate`` by the item's filename or
    case id, the ``evaluate`` face counted from 1. Renamed: the item of an error that names
    one (its ``item_attribute``: a :class:`~novabench.errors.NovaInputError`'s record, a
    :class:`~novabench.metrics.judge.JudgeError`'s case) and a "while matching example N" note.
    An error is renamed once, by the innermost block. A warning raised inside that names an
    item (``first: example 3``) is renamed the same way and raised again as it was caught.

    Args:
        rename: ``(index, detail) -> name``; ``detail`` is what the parentheses held, or None.

    Example:
        >>> with examples_renamed(lambda index, detail: ["case0001", "case0002"][index]):
        ...     raise NovaInputError("unreadable", record="example 1 (case0002), prediction 3")
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: case0002, prediction 3: unreadable
    """
    # The caller's filters still decide inside ("error" raises, "ignore" drops): the block
    # only collects what they let through, to name its items before passing it on.
    with warnings.catch_warnings(record=True) as caught:
        try:
            yield
        except Exception as error:
            if not getattr(error, "_examples_renamed", False):
                _rename_examples(error, rename)
            raise
    for warning in caught:
        text = _EXAMPLE_IN_TEXT.sub(
            lambda m: _renamed(m.group(0), rename) or "", str(warning.message)
        )
        warnings.warn_explicit(text, warning.category, warning.filename, warning.lineno)


def _renamed(text: str | None, rename: Callable[[int, str | None], str]) -> str | None:
    match = _EXAMPLE.match(text or "")
    if text is None or match is None:
        return text
    return rename(int(match.group(1)), match.group(2)) + text[match.end() :]


def _rename_examples(error: Exception, rename: Callable[[int, str | None], str]) -> None:
    # Errors that name an item (NovaInputError's record, JudgeError's case) say which attribute.
    if isinstance(error, NovaError) and error.item_attribute is not None:
        item = getattr(error, error.item_attribute)
        renamed = _renamed(item, rename)
        if renamed is not None and renamed != item:
            error.rename_item(renamed)
    notes = getattr(error, "__notes__", None)
    if notes:
        notes[:] = [  # the list add_note appends to, renamed in place
            _MATCHING_NOTE.sub(lambda m: f"while matching {_renamed(m.group(1), rename)}", note)
            for note in notes
        ]
    error._examples_renamed = True  # type: ignore[attr-defined]


def task_options(task: str) -> frozenset[str]:
    """The metric options a task takes, as the registry declares them (``all``: every task's).

    Example:
        >>> sorted(task_options("diagnosis"))
        ['case_judge', 'contexts', 'matcher']
        >>> task_options("all") >= task_options("localization") | task_options("captioning")
        True
    """
    if task == registry.ALL_TASKS:
        return frozenset().union(*(spec.metric_options for spec in registry.TASKS.values()))
    return frozenset(registry.TASKS[task].metric_options)


def compute_task(
    task: str,
    predictions: Sequence[Any],
    references: Sequence[Any],
    **kwargs: Any,
) -> dict[str, Any]:
    """Score plain predictions against plain references for one NOVA task.

    Keyword arguments are routed to the metric family that takes them:
    ``box_format``, ``max_detections`` (localisation); ``exclude``,
    ``bertscore_model``, ``bertscore_num_layers``, ``bertscore_batch_size``,
    ``keyword_extractor``, ``keyword_averaging``, ``keyword_judge``, ``meteor`` (captioning;
    ``meteor="auto"`` without WordNet gives ``METEOR-exact+stem`` and a ``UserWarning``);
    ``matcher``, ``case_judge``, ``contexts`` (diagnosis; ``contexts`` is one clinical
    history per case for the case judge; by default the references' ``clinical_history``,
    for ``all`` the history of each case's rows). ``bootstrap_resamples`` (default
    0: none), ``confidence`` (0.95) and ``seed`` (0) add a ``confidence_intervals`` mapping
    ``{key: [low, high]}`` of seeded percentile-bootstrap intervals and ``bootstrap_unit``,
    what they resample: ``"case"`` (whole cases: for ``all``, whose rows name their case,
    and for diagnosis, scored per case) or ``"image"`` (localisation and captioning alone,
    which read no case from their references: too narrow for NOVA, and a warning says so).
    ``BERTScore_hash`` names a local model folder by its last two path parts, as a written
    report does, so one setting gives one hash on every machine.

    Args:
        task: the task name.
        predictions: plain predictions (see ``normalize_predictions``).
        references: plain references (see ``normalize_references``).
        **kwargs: options listed above.

    Returns:
        The result dict; for ``all`` the three task dicts under their names.

    Example:
        >>> compute_task("diagnosis", [["multiple sclerosis"]], ["Multiple sclerosis"])["top1-lexicon"]
        1.0
    """
    stats, options = _split_options(task, kwargs)
    if len(predictions) != len(references):
        raise NovaInputError(
            f"got {len(predictions)} predictions but {len(references)} references",
            field="predictions",
        )
    if task == registry.ALL_TASKS:
        localization = _prepare(
            "localization",
            [{"boxes": p["boxes"], "scores": p.get("scores")} for p in predictions],
            [{"boxes": r["boxes"]} for r in references],
            _only(options, task_options("localization")),
        )
        return _compute_all(localization, list(predictions), list(references), stats, options)
    evaluation = _prepare(task, list(predictions), list(references), options)
    return _finish(evaluation, stats, task)


def prepare_task(
    task: str, predictions: Sequence[Any], references: Sequence[Any], **options: Any
) -> Any:
    """The evaluation object of one task (``localization``, ``captioning`` or ``diagnosis``).

    Its ``aggregate(indices)`` rescores any resample of items, which is what
    ``novabench.metrics.stats`` needs for bootstrap intervals and paired comparisons.

    Example:
        >>> evaluation = prepare_task("diagnosis", [["glioma"], []], ["Glioma", "Meningioma"])
        >>> evaluation.n_items, evaluation.aggregate()["top1-lexicon"]
        (2, 0.5)
    """
    if task not in registry.TASK_NAMES:
        raise NovaInputError(f"prepare_task takes a single task, not {task!r}", field="task")
    _, options = _split_options(task, options)
    if len(predictions) != len(references):
        raise NovaInputError(
            f"got {len(predictions)} predictions but {len(references)} references",
            field="predictions",
        )
    return _prepare(task, list(predictions), list(references), options)


def _split_options(task: str, kwargs: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    _check_task(task)
    allowed = _STATS_KWARGS | task_options(task)
    unknown = sorted(set(kwargs) - allowed)
    if unknown:
        raise NovaInputError(
            f"unknown option(s) {unknown} for task '{task}'; valid: {sorted(allowed)}"
        )
    stats = {key: value for key, value in kwargs.items() if key in _STATS_KWARGS}
    options = {key: value for key, value in kwargs.items() if key not in _STATS_KWARGS}
    return stats, options


def _only(options: Mapping[str, Any], keys: frozenset[str]) -> dict[str, Any]:
    return {key: value for key, value in options.items() if key in keys}


def _compute_all(
    localization: Any,
    predictions: Sequence[Mapping[str, Any]],
    references: Sequence[Mapping[str, Any]],
    stats: dict[str, Any],
    options: dict[str, Any],
) -> dict[str, Any]:
    captioning = _prepare(
        "captioning",
        [p.get("caption") or "" for p in predictions],
        [r["caption"] for r in references],
        _only(options, task_options("captioning")),
    )
    diagnosis_options = _only(options, task_options("diagnosis"))
    # The rows' clinical histories reach a case judge as in the diagnosis configuration.
    with_histories = (
        diagnosis_options.get("case_judge") is not None and "contexts" not in diagnosis_options
    )
    case_predictions, case_references, case_histories = _group_by_case(
        predictions, references, with_histories=with_histories
    )
    if any(case_histories):
        diagnosis_options["contexts"] = case_histories
    diagnosis = _prepare("diagnosis", case_predictions, case_references, diagnosis_options)
    # One row per image, each naming its case: image intervals resample whole cases.
    cases = [str(reference["case_id"]) for reference in references]
    return {
        "localization": _finish(localization, stats, "localization", cases),
        "captioning": _finish(captioning, stats, "captioning", cases),
        "diagnosis": _finish(diagnosis, stats, "diagnosis"),
    }


def _spaced_alike(diagnoses: Sequence[Any]) -> list[Any]:
    """A case's list as the diagnosis scorer tells its items apart: the matcher reads each
    item's words (``normalize_diagnosis``), so surrounding and repeated whitespace do not
    count; a blank item keeps its rank (scored as a miss), so it stays in place."""
    return [" ".join(item.split()) if isinstance(item, str) else item for item in diagnoses]


def _group_by_case(
    predictions: Sequence[Mapping[str, Any]],
    references: Sequence[Mapping[str, Any]],
    *,
    with_histories: bool = False,
) -> tuple[list[list[str]], list[str], list[str | None]]:
    """One diagnosis item per case, in order of first appearance, with its clinical history
    (None: none on any of its rows, or ``with_histories`` False)."""
    by_case: dict[str, tuple[list[str], str, int]] = {}
    histories: dict[str, str | None] = {}
    for index, (prediction, reference) in enumerate(zip(predictions, references)):
        case_id = reference["case_id"]
        diagnoses = list(prediction.get("diagnoses") or [])
        history = reference.get("clinical_history") if with_histories else None
        history = history if isinstance(history, str) and history.strip() else None
        known_history = histories.setdefault(case_id, history)
        if history is not None and known_history is None:
            histories[case_id] = history
        elif history is not None and history != known_history:
            raise NovaInputError(
                f"case {case_id} has two clinical histories (the other one on an earlier image)",
                record=f"example {index}",
                field="references.clinical_history",
            )
        if case_id not in by_case:
            by_case[case_id] = (diagnoses, reference["final_diagnosis"], index)
            continue
        known, truth, first = by_case[case_id]
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
    cases = by_case.values()
    return [v[0] for v in cases], [v[1] for v in cases], [histories[c] for c in by_case]


def _prepare(
    task: str, predictions: list[Any], references: list[Any], options: dict[str, Any]
) -> Any:
    spec = registry.get_task(task)
    plain = _PLAIN_FORM.get(spec.answer_field)
    scorer = spec.load_scorer()
    return scorer(plain(predictions) if plain else predictions, references, **options)


def _restore_missing_scores(predictions: list[Any]) -> list[dict[str, Any]]:
    # Arrow stores "no scores" as an empty list; boxes without scores keep their given order.
    restored = []
    for prediction in predictions:
        boxes = prediction["boxes"]
        scores = prediction.get("scores")
        unscored = scores is None or (len(scores) == 0 and len(boxes) > 0)
        restored.append({"boxes": boxes} if unscored else {"boxes": boxes, "scores": scores})
    return restored


# Per answer form, the reading of the plain form before scoring (what Arrow cannot say directly).
_PLAIN_FORM = {"boxes": _restore_missing_scores}


#: Said once per computation whose image-level intervals resample images one by one.
IMAGE_BOOTSTRAP_WARNING = (
    "{task}: the intervals resample images one by one, as this task alone reads no case_id "
    "from its references: images of one NOVA case are not independent, so they are too "
    "narrow; score task 'all' with NOVA `images` rows, or use nova evaluate, for intervals "
    "that resample cases"
)


def _finish(
    evaluation: Any, stats: dict[str, Any], task: str, cases: Sequence[str] | None = None
) -> dict[str, Any]:
    """The evaluation's result and, with resamples, its intervals and what they resampled
    (``bootstrap_unit``: ``"case"``, whole cases, when ``cases`` gives each image's case or
    the task's items are cases; else ``"image"``, with a warning)."""
    for note in getattr(evaluation, "notes", ()):  # e.g. METEOR-exact+stem given for METEOR
        warnings.warn(note, UserWarning, stacklevel=3)
    input_notes = getattr(evaluation, "input_notes", None)  # e.g. boxes in another scale
    for note in input_notes() if input_notes is not None else ():
        warnings.warn(f"{task}: {note}", UserWarning, stacklevel=3)
    result = dict(evaluation.result())
    if isinstance(result.get("BERTScore_hash"), str):  # as a written report gives it
        result["BERTScore_hash"] = portable_bertscore_hash(result["BERTScore_hash"])
    n_resamples = int(stats.get("bootstrap_resamples", 0) or 0)
    if n_resamples > 0:
        from novabench.metrics.stats import bootstrap_confidence_intervals

        by_image = cases is None and registry.TASKS[task].unit == "image"
        if by_image:
            warnings.warn(IMAGE_BOOTSTRAP_WARNING.format(task=task), UserWarning, stacklevel=3)
        intervals = bootstrap_confidence_intervals(
            evaluation,
            n_resamples=n_resamples,
            confidence=float(stats.get("confidence", 0.95)),
            seed=int(stats.get("seed", 0)),
            clusters=cases,
        )
        result["confidence_intervals"] = {
            key: [low, high] for key, (low, high) in intervals.items()
        }
        result["bootstrap_unit"] = "image" if by_image else "case"
    return result


def _check_task(task: str) -> None:
    if task not in TASKS:
        raise NovaInputError(f"unknown NOVA task {task!r}; choose one of {list(TASKS)}")
