"""Task dispatch: route options and score plain predictions with each task's scorer.

The scorer of a task is read from :mod:`novabench.registry` (``TaskSpec.scorer``); the
evaluate face's pseudo-task ``registry.ALL_TASKS`` (``"all"``) scores every task from one
row per image, each as its task module reads the rows (``TaskBehaviour.inputs_from_rows``:
diagnosis once per case, rows grouped by ``case_id``, in order of first appearance; the
diagnoses of a case must agree across its images, and so must its clinical history, which
a case judge receives). The evaluate adapter
(Features, input normalisation, Arrow) is :mod:`novabench.metrics.evaluate_adapter`.
"""

from __future__ import annotations

import contextlib
import re
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from novabench import checks, registry
from novabench.errors import NovaError, NovaInputError, pass_on, warn_at_caller
from novabench.tasks import behaviour
from novabench.tasks.captioning import portable_bertscore_hash

__all__ = [
    "TASKS",
    "compute_task",
    "examples_renamed",
    "item_key_field",
    "key_order",
    "prepare_task",
    "renamed_options",
    "task_options",
]

#: The tasks the evaluate face takes: the registry's, then its pseudo-task "all".
TASKS: tuple[str, ...] = (*registry.TASK_NAMES, registry.ALL_TASKS)

_STATS_KWARGS = frozenset({"n_resamples", "confidence", "seed"})
#: The old name of ``n_resamples`` in ``compute_task`` and the evaluate module's ``compute``,
#: still taken, with a FutureWarning (every other face already said ``n_resamples``).
OLD_N_RESAMPLES = "bootstrap_resamples"


def renamed_options(kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """``kwargs`` with the old ``bootstrap_resamples`` renamed ``n_resamples``, with a warning.

    One setting, one name: the bootstrap's resamples are ``n_resamples=`` in every Python
    face (``evaluate_predictions``, ``evaluate``, ``compute_task``, the evaluate module's
    ``compute``, as ``evaluate``'s own ``Evaluator.compute`` and ``scipy.stats.bootstrap``
    name them) and ``--bootstrap`` on the command line.

    Raises:
        NovaInputError: both names given.

    Example:
        >>> import warnings
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     renamed_options({"bootstrap_resamples": 100, "seed": 1})
        {'n_resamples': 100, 'seed': 1}
        >>> print(caught[0].message)
        bootstrap_resamples= is deprecated: pass n_resamples=100 (the same setting as evaluate_predictions(n_resamples=) and nova evaluate --bootstrap); the old name will be removed
    """
    if OLD_N_RESAMPLES not in kwargs:
        return dict(kwargs)
    if "n_resamples" in kwargs:
        raise NovaInputError(
            "n_resamples= and bootstrap_resamples= name the same setting; pass n_resamples= "
            "only (bootstrap_resamples= is its old name)",
            field=OLD_N_RESAMPLES,
        )
    value = kwargs[OLD_N_RESAMPLES]
    warn_at_caller(
        f"{OLD_N_RESAMPLES}= is deprecated: pass n_resamples={value!r} (the same setting as "
        "evaluate_predictions(n_resamples=) and nova evaluate --bootstrap); the old name will "
        "be removed",
        FutureWarning,
    )
    return {
        ("n_resamples" if key == OLD_N_RESAMPLES else key): item for key, item in kwargs.items()
    }


# "example 3", "example 3 (case0004)", "example 3 (case0004), prediction 2": how the
# metrics name an item of the lists they were given, by its 0-based list index.
_EXAMPLE = re.compile(r"example (\d+)(?: \(([^)]*)\))?")
# An item named inside a warning's text, "... (first: example 3, references.boxes[0])".
_EXAMPLE_IN_TEXT = re.compile(r"(?<=first: )example \d+")
_MATCHING_NOTE = re.compile(r"^while matching (example \d+(?: \([^)]*\))?)")


@contextlib.contextmanager
def examples_renamed(
    rename: Callable[[int, str | None], str], *, final: bool = True
) -> Iterator[None]:
    """Name the items an error raised inside names as ``example N`` as ``rename(N, detail)``.

    The metrics name an item by its 0-based index in the lists they were given (``example
    3``, with its case id when known: ``example 3 (case0004)``), which is all they know. A
    caller that knows more names it better: ``nova evaluate`` by the item's filename or
    case id, the ``evaluate`` face counted from 1. Renamed: the item of an error that names
    one (its ``item_attribute``: a :class:`~novabench.errors.NovaInputError`'s record, a
    :class:`~novabench.metrics.judge.JudgeError`'s case) and a "while matching example N" note.
    An error is renamed once, by the innermost block. A warning raised inside that names an
    item (``first: example 3``) is renamed the same way and passed on as it was caught (at
    the line it names: :func:`~novabench.errors.pass_on`).

    Args:
        rename: ``(index, detail) -> name``; ``detail`` is what the parentheses held, or None.
        final: False when ``rename`` gives ``example M`` again (another index, as
            :func:`compute_task` does when it scored the items in another order): an outer
            block then renames the error too.

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
                _rename_examples(error, rename, final=final)
            raise
    for warning in caught:
        text = _EXAMPLE_IN_TEXT.sub(
            lambda m: _renamed(m.group(0), rename) or "", str(warning.message)
        )
        pass_on(warning, None if text == str(warning.message) else warning.category(text))


def _renamed(text: str | None, rename: Callable[[int, str | None], str]) -> str | None:
    match = _EXAMPLE.match(text or "")
    if text is None or match is None:
        return text
    return rename(int(match.group(1)), match.group(2)) + text[match.end() :]


def _rename_examples(
    error: Exception, rename: Callable[[int, str | None], str], *, final: bool = True
) -> None:
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
    if final:
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
    *,
    item_keys: Sequence[str | None] | None = None,
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
    for ``all`` the history of each case's rows). ``n_resamples`` (default
    0: none; ``nova evaluate --bootstrap``; its old name ``bootstrap_resamples`` is still
    taken, with a FutureWarning), ``confidence`` (0.95) and ``seed`` (0; an integer >= 0) add a
    ``confidence_intervals`` mapping
    ``{key: [low, high]}`` of seeded percentile-bootstrap intervals and ``bootstrap_unit``,
    what they resample: ``"case"`` (whole cases: for ``all``, whose rows name their case,
    and for diagnosis, scored per case) or ``"image"`` (localisation and captioning alone,
    which read no case from their references: too narrow for NOVA, and a warning says so).
    ``BERTScore_hash`` names a local model folder by its last two path parts, as a written
    report does, so one setting gives one hash on every machine.

    Order: items that name themselves (``item_keys``, else each reference row's
    ``filename``, or ``case_id`` for diagnosis: NOVA rows always do) are scored in the
    order of their names, as ``nova evaluate`` scores a release, so the same pairs give the
    same numbers in any order (COCO AP ranks equal scores by image order, the bootstrap
    draws by position); a name given twice is refused. Items that name none are scored in
    the order given. Per-item values of the result (``per_image_best_iou``) follow the
    order given, and errors name the items by their given positions.

    Args:
        task: the task name.
        predictions: plain predictions (see ``normalize_predictions``).
        references: plain references (see ``normalize_references``).
        item_keys: each item's name (``filename`` per image, ``case_id`` per case; None for
            none); by default read from the references that are mappings.
        **kwargs: options listed above.

    Returns:
        The result dict; for ``all`` the three task dicts under their names.

    Raises:
        NovaInputError: a bad option, unequal lengths, a name given twice, or names on
            some items only.

    Example:
        >>> compute_task("diagnosis", [["multiple sclerosis"]], ["Multiple sclerosis"])["top1-lexicon"]
        1.0
        >>> rows = [{"filename": "case0002_001.png", "boxes": [[0, 0, 10, 10]]},
        ...         {"filename": "case0001_001.png", "boxes": [[0, 0, 10, 10]]}]
        >>> compute_task("localization", [{"boxes": [[0, 0, 10, 10]]}, {"boxes": []}],
        ...              rows)["per_image_best_iou"]
        [1.0, 0.0]
        >>> compute_task("localization", [{"boxes": []}] * 2, [rows[0], rows[0]])
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: example 1, field 'references.filename': 'case0002_001.png' is given twice (first at 0-based index 0): each item is scored once, as nova evaluate does
    """
    stats, options = _split_options(task, kwargs)
    if len(predictions) != len(references):
        raise NovaInputError(
            f"got {len(predictions)} predictions but {len(references)} references",
            field="predictions",
        )
    order = key_order(task, references, item_keys)
    predictions, references = list(predictions), list(references)
    if order is None:
        return _compute_in_order(task, predictions, references, stats, options)
    with examples_renamed(
        lambda index, detail: f"example {order[index]}" + (f" ({detail})" if detail else ""),
        final=False,
    ):
        result = _compute_in_order(
            task,
            [predictions[i] for i in order],
            [references[i] for i in order],
            stats,
            options,
        )
    return _per_item_in_given_order(task, result, order)


def _compute_in_order(
    task: str,
    predictions: list[Any],
    references: list[Any],
    stats: dict[str, Any],
    options: dict[str, Any],
) -> dict[str, Any]:
    if task == registry.ALL_TASKS:
        return _compute_all({}, predictions, references, stats, options)
    evaluation = _prepare(task, predictions, references, options)
    return _finish(evaluation, stats, task)


def item_key_field(task: str) -> str:
    """The field naming a task's items: ``filename`` (images; ``all``: one row per image) or
    ``case_id`` (diagnosis), as the registry declares it.

    Example:
        >>> item_key_field("all"), item_key_field("diagnosis")
        ('filename', 'case_id')
    """
    _check_task(task)
    if task == registry.ALL_TASKS:
        return next(spec.key_field for spec in registry.TASKS.values() if spec.unit == "image")
    return registry.TASKS[task].key_field


def key_order(
    task: str, references: Sequence[Any], item_keys: Sequence[str | None] | None = None
) -> list[int] | None:
    """The given positions of the items in the order of their names, or None (no names).

    Args:
        task: the task name.
        references: the references (mappings carrying :func:`item_key_field` give names).
        item_keys: the names, when known apart from the references (None: none).

    Raises:
        NovaInputError: a name given twice (naming the later item and the name), names on
            some items only, or a name that is not text.

    Example:
        >>> key_order("diagnosis", [{"case_id": "case0002"}, {"case_id": "case0001"}])
        [1, 0]
        >>> key_order("captioning", ["Axial FLAIR."]) is None
        True
    """
    key = item_key_field(task)
    if item_keys is None:
        item_keys = [
            reference.get(key) if isinstance(reference, Mapping) else None
            for reference in references
        ]
    elif len(item_keys) != len(references):
        raise NovaInputError(
            f"got {len(item_keys)} item keys but {len(references)} references", field="item_keys"
        )
    named = [position for position, name in enumerate(item_keys) if name is not None]
    if not named:
        return None
    field = f"references.{key}"
    if len(named) < len(item_keys):
        missing = next(position for position, name in enumerate(item_keys) if name is None)
        raise NovaInputError(
            f"no {key}, though other references give theirs: give every reference its {key} "
            f"(NOVA rows do) or none, so that the items are scored in {key} order",
            record=f"example {missing}",
            field=field,
        )
    first: dict[str, int] = {}
    for position, name in enumerate(item_keys):
        text = checks.text(name, record=f"example {position}", field=field)
        if text in first:
            raise NovaInputError(
                f"{text!r} is given twice (first at 0-based index {first[text]}): each item is "
                "scored once, as nova evaluate does",
                record=f"example {position}",
                field=field,
            )
        first[text] = position
    names = list(first)  # each name once, in the order given
    return [first[name] for name in sorted(names)]


def _per_item_in_given_order(
    task: str, result: dict[str, Any], order: Sequence[int]
) -> dict[str, Any]:
    """A result scored in key order with its per-item lists put back in the order given
    (for ``all``: the tasks scored per image, whose items are the rows)."""
    if task == registry.ALL_TASKS:
        return {
            name: _given_order(section, order) if registry.TASKS[name].unit == "image" else section
            for name, section in result.items()
        }
    return _given_order(result, order)


def _given_order(result: dict[str, Any], order: Sequence[int]) -> dict[str, Any]:
    out = dict(result)
    for name, value in result.items():
        if isinstance(value, list) and len(value) == len(order):
            restored: list[Any] = [None] * len(order)
            for sorted_position, given in enumerate(order):
                restored[given] = value[sorted_position]
            out[name] = restored
    return out


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
    kwargs = renamed_options(kwargs)
    allowed = _STATS_KWARGS | task_options(task)
    unknown = sorted(set(kwargs) - allowed)
    if unknown:
        raise NovaInputError(
            f"unknown option(s) {unknown} for task '{task}'; valid: {sorted(allowed)}"
        )
    stats = {key: value for key, value in kwargs.items() if key in _STATS_KWARGS}
    if "seed" in stats:  # checked whether or not intervals are asked for
        checks.seed(stats["seed"])
    options = {key: value for key, value in kwargs.items() if key not in _STATS_KWARGS}
    return stats, options


def _only(options: Mapping[str, Any], keys: frozenset[str]) -> dict[str, Any]:
    return {key: value for key, value in options.items() if key in keys}


def _compute_all(
    prepared: Mapping[str, Any],
    predictions: Sequence[Mapping[str, Any]],
    references: Sequence[Mapping[str, Any]],
    stats: dict[str, Any],
    options: dict[str, Any],
) -> dict[str, Any]:
    """Every task scored from the ``all`` rows (one per image), in registry order: each
    task's evaluation from ``prepared`` when given (the evaluate face's Arrow path), else
    prepared from the rows as the task reads them (``TaskBehaviour.inputs_from_rows``)."""
    # One row per image, each naming its case: image intervals resample whole cases.
    cases = [str(reference["case_id"]) for reference in references]
    results = {}
    for name in registry.TASK_NAMES:
        per_image = registry.TASKS[name].unit == "image"
        # A per-case task's items are the cases, in order of first appearance: its
        # "example K" (the K-th case) is named as its case's first row, and the case.
        evaluation = prepared.get(name)
        if evaluation is None:
            # Read from the rows (an error here names its row: two images of a case differ).
            task_predictions, task_references, task_options_given = behaviour(
                name
            ).inputs_from_rows(predictions, references, _only(options, task_options(name)))
        with contextlib.nullcontext() if per_image else _cases_named_by_row(references):
            if evaluation is None:
                evaluation = _prepare(name, task_predictions, task_references, task_options_given)
            results[name] = _finish(evaluation, stats, name, cases if per_image else None)
    return results


def _cases_named_by_row(references: Sequence[Mapping[str, Any]]) -> Any:
    """Inside, the ``example K`` of a per-case task (its K-th case, in order of first
    appearance) is named ``example R (CASE)``: R the row of that case's first image, the
    rows' numbering an outer block renames.

    Example:
        >>> rows = [{"case_id": "c1"}, {"case_id": "c1"}, {"case_id": "c2"}]
        >>> with _cases_named_by_row(rows):
        ...     raise NovaInputError("bad", record="example 1")
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: example 2 (c2): bad
    """
    first_rows: dict[Any, int] = {}
    for row, reference in enumerate(references):
        first_rows.setdefault(reference["case_id"], row)
    by_case = list(first_rows.items())

    def rename(index: int, detail: str | None) -> str:
        if index >= len(by_case):  # no case of that number: left as it was
            return f"example {index}" + (f" ({detail})" if detail else "")
        case_id, row = by_case[index]
        named = detail or (str(case_id) if case_id not in (None, "") else None)
        return f"example {row}" + (f" ({named})" if named else "")

    return examples_renamed(rename, final=False)


def _prepare(
    task: str, predictions: list[Any], references: list[Any], options: dict[str, Any]
) -> Any:
    spec = registry.get_task(task)
    # The plain form read as the metric reads it (what Arrow cannot say directly).
    plain = behaviour(task).plain_predictions
    scorer = spec.load_scorer()
    return scorer(plain(predictions) if plain else predictions, references, **options)


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
        warn_at_caller(note, UserWarning)
    input_notes = getattr(evaluation, "input_notes", None)  # e.g. boxes in another scale
    for note in input_notes() if input_notes is not None else ():
        warn_at_caller(f"{task}: {note}", UserWarning)
    result = dict(evaluation.result())
    if isinstance(result.get("BERTScore_hash"), str):  # as a written report gives it
        result["BERTScore_hash"] = portable_bertscore_hash(result["BERTScore_hash"])
    n_resamples = int(stats.get("n_resamples", 0) or 0)
    if n_resamples > 0:
        from novabench.metrics.stats import bootstrap_confidence_intervals

        by_image = cases is None and registry.TASKS[task].unit == "image"
        if by_image:
            warn_at_caller(IMAGE_BOOTSTRAP_WARNING.format(task=task), UserWarning)
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
