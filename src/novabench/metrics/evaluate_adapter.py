"""The ``evaluate`` adapter: Features per task, normalisation of the face's inputs, the
Arrow fast path and early option checks.

This is the layer between the thin ``evaluate`` face
(``metrics/nova_metric/nova_metric.py``) and the functional metric families
(``localization``, ``captioning``, ``diagnosis``). It knows three input forms:

- plain: localisation ``{"boxes": [...], "scores": [...]}`` (scores optional),
  caption strings, lists of diagnosis strings (most likely first);
- dataset rows: mappings as produced by the ``images`` / ``cases``
  configurations of the NOVA dataset (only the needed fields are read);
- a whole ``datasets.Dataset``: only the needed columns are read, so images are
  never decoded.

The ``all`` task takes one prediction per image with ``boxes``, ``scores``
(optional), ``caption`` and ``diagnoses`` and ``images`` rows as references;
diagnosis is scored once per case (rows grouped by ``case_id``, in order of
first appearance; the diagnoses of a case must agree across its images), and a
case judge receives the rows' ``clinical_history`` as the case's context, as in
the ``diagnosis`` configuration.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence, Set
from dataclasses import dataclass
from typing import Any

import datasets
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from novabench import checks, registry
from novabench.errors import NovaInputError
from novabench.metrics.tasks import (
    _check_task,
    _compute_all,
    _finish,
    _only,
    _split_options,
    compute_task,
    examples_renamed,
    item_key_field,
    renamed_options,
    task_options,
)
from novabench.tasks.diagnosis import CaseRows

__all__ = [
    "case_rows",
    "check_options",
    "compute_stored",
    "compute_task_from_arrow",
    "examples_counted_from_one",
    "explain_bad_batch",
    "item_names",
    "metric_features",
    "normalize_batch",
    "normalize_predictions",
    "renamed_options",
    "normalize_references",
]

_BOXES = datasets.List(datasets.List(datasets.Value("float64")))
_SCORES = datasets.List(datasets.Value("float64"))
_STRING = datasets.Value("string")
_STRINGS = datasets.List(datasets.Value("string"))
# A diagnosis reference: the final diagnosis and the case's clinical history (None: none),
# which a case judge receives with the case.
# Its case_id ("": not given) puts the cases in case order (metrics.tasks.key_order).
_DIAGNOSIS_REFERENCE = {"final_diagnosis": _STRING, "clinical_history": _STRING, "case_id": _STRING}
# An image reference's filename ("": not given; evaluate's add_batch refuses None in a
# string field of a batch's first row, and a name is never blank), kept so that the items are scored in
# filename order and a repeated image is refused; its image's width and height (None: not
# given), against which predicted boxes are judged (past the image? another scale?).
_IMAGE_NAME = {"filename": _STRING}
_IMAGE_SIZE = {"width": datasets.Value("int64"), "height": datasets.Value("int64")}
# The item key an image prediction may carry (filename): the face pairs by position and
# checks a given key against the reference at the same position (normalize_batch).
_IMAGE_KEY = registry.TASKS[registry.task_answered_in("boxes")].key_field
_CASE_KEY = registry.TASKS[registry.task_answered_in("diagnoses")].key_field
# Keys a box prediction may carry; anything else is a mistake worth reporting (a misspelt
# "score" would otherwise silently mean "no scores").
_BOX_PREDICTION_KEYS = frozenset({"boxes", "scores", _IMAGE_KEY})
# How a misaligned list is put right, the end of every pairing refusal.
_PAIRING_FIX = (
    "predictions are paired with references by position; sort them as the references are "
    "(load_nova gives rows by {key})"
)


@dataclass(frozen=True)
class _InputForm:
    """How the face reads and stores one form of answer (a registry ``answer_field``).

    Attributes:
        prediction_feature: the Arrow type of a plain prediction.
        reference_feature: the Arrow type of a plain reference.
        read_predictions: ``(items, start_index) -> plain predictions``; raises naming the
            example.
        read_references: ``(items, start_index) -> plain references``.
        key_field: the item key (``filename`` or ``case_id``) a prediction may carry; when
            given it must name the reference at the same position. Never stored.
        prediction_columns: the dataset columns a prediction is read from (None: whole rows).
        boxes: the form carries boxes (checked per batch, read from Arrow buffers).
    """

    prediction_feature: Any
    reference_feature: Any
    read_predictions: Callable[[list[Any], int], list[Any]]
    read_references: Callable[[list[Any], int], list[Any]]
    key_field: str
    prediction_columns: tuple[str, ...] | None = None
    boxes: bool = False


def _example_counted_from_one(index: int, detail: str | None) -> str:
    """A metric's 0-based ``example N`` in the face's words: counted from 1 as the CLI counts
    lines, with the index a Python list takes (and the case id when it was given)."""
    return f"example {index + 1} (0-based index {index}{f', {detail}' if detail else ''})"


@contextlib.contextmanager
def examples_counted_from_one() -> Iterator[None]:
    """Name an error's example as the ``evaluate`` face does: from 1, index given.

    The metrics number examples from 0 (Python's list index); ``nova evaluate`` counts lines
    from 1. Inside this block an error naming ``example N`` (an input error's record, a
    judge error's case, a "while matching" note) names ``example N+1 (0-based index N)``
    instead, so neither reading can be taken for the other.

    Example:
        >>> with examples_counted_from_one():
        ...     raise NovaInputError("empty reference caption", record="example 0", field="references")
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: example 1 (0-based index 0), field 'references': empty reference caption
    """
    with examples_renamed(_example_counted_from_one):
        yield


def metric_features(task: str) -> datasets.Features:
    """The ``datasets.Features`` an ``evaluate`` module declares for ``task``.

    Args:
        task: one of ``localization``, ``captioning``, ``diagnosis``, ``all``.

    Returns:
        Features with ``predictions`` and ``references`` columns.

    Example:
        >>> sorted(metric_features("captioning"))
        ['predictions', 'references']
        >>> sorted(metric_features("diagnosis")["references"])
        ['case_id', 'clinical_history', 'final_diagnosis']
    """
    form = _form(task)
    return datasets.Features(
        {"predictions": form.prediction_feature, "references": form.reference_feature}
    )


@examples_counted_from_one()
def normalize_predictions(task: str, predictions: Any, *, start_index: int = 0) -> list[Any]:
    """Turn user predictions into the plain form ``metric_features(task)`` encodes.

    Missing ``scores`` mean "no scores" (given order), a single diagnosis string
    becomes a one-item list, numpy arrays become lists. Unknown keys raise. Box
    values are checked later, vectorised, by the metric core. An item key
    (``filename``, or ``case_id`` for diagnosis) is accepted and left out here: only
    :func:`normalize_batch`, which sees the references too, can check it.

    Args:
        task: the task name.
        predictions: a sequence (or ``datasets.Dataset``) of predictions.
        start_index: index of the first item in the whole evaluation, so errors
            name the example the user knows.

    Returns:
        A list of plain predictions.

    Example:
        >>> normalize_predictions("localization", [{"boxes": np.array([[1, 2, 3, 4]])}])
        [{'boxes': [[1, 2, 3, 4]], 'scores': []}]
        >>> normalize_predictions("diagnosis", ["glioma"])
        [['glioma']]
    """
    form = _form(task)
    out = form.read_predictions(_prediction_items(form, predictions), start_index)
    if form.boxes:
        checks.box_values(out, side="predictions", start_index=start_index)
    return out


@examples_counted_from_one()
def normalize_references(task: str, references: Any, *, start_index: int = 0) -> list[Any]:
    """Turn user references (plain values or NOVA dataset rows) into plain form.

    Args:
        task: the task name.
        references: a sequence (or ``datasets.Dataset``) of references: for
            localisation mappings with ``boxes``; for captioning strings or
            ``images`` rows (``caption``); for diagnosis strings or ``cases`` rows
            (``final_diagnosis``, and ``clinical_history`` when present, which a case
            judge receives); for ``all`` ``images`` rows.
        start_index: index of the first item in the whole evaluation.

    Returns:
        A list of plain references, each with its item's name (``filename``; ``case_id``
        for diagnosis) and, for boxes, its image's ``width`` and ``height`` when the row
        gives them. No clinical history and no name are ``""``, never None: evaluate's
        ``add_batch`` refuses None in a string field of a batch's first row, and every
        scorer reads a blank history as none.

    Example:
        >>> normalize_references("captioning", [{"caption": "Axial FLAIR.", "filename": "x.png"}])
        [{'caption': 'Axial FLAIR.', 'filename': 'x.png'}]
        >>> normalize_references("diagnosis", ["Glioma"])
        [{'final_diagnosis': 'Glioma', 'clinical_history': '', 'case_id': ''}]
    """
    form = _form(task)
    out = form.read_references(_reference_items(task, references), start_index)
    if form.boxes:
        checks.box_values(out, side="references", start_index=start_index)
    return out


@examples_counted_from_one()
def normalize_batch(
    task: str,
    predictions: Any,
    references: Any,
    *,
    start_index: int = 0,
    seen: Mapping[str, int] | None = None,
) -> tuple[list[Any], list[Any]]:
    """One batch of the ``evaluate`` face in plain form, its pairing checked.

    Predictions are paired with references by position. A prediction may name its item
    (``filename``; ``case_id`` for diagnosis, whose predictions are per case): the name
    must then be the reference's at the same position, else the batch is refused, naming
    the example and both names. It is never used to reorder: the same predictions with and
    without names score the same, or are refused.

    Args:
        task: the task name.
        predictions: a sequence (or ``datasets.Dataset``) of predictions, as for
            :func:`normalize_predictions`; image predictions may be mappings with a
            ``filename``, diagnosis ones ``{"diagnoses": [...], "case_id": ...}``, captions
            ``{"caption": ..., "filename": ...}``.
        references: as for :func:`normalize_references`; NOVA dataset rows carry the names.
        start_index: index of the batch's first item in the whole evaluation.
        seen: the items named by earlier batches (:func:`item_names`): an item given again,
            there or within this batch, is refused (each is scored once, as ``nova
            evaluate`` refuses a duplicate).

    Returns:
        ``(predictions, references)`` in plain form; the references keep their item's name
        (``filename``, ``case_id``; None when not given), which orders the items when they
        are scored (:func:`compute_stored`).

    Raises:
        NovaInputError: a bad item, unequal counts, a name that is not the reference's, a
            name with no name on the reference to check it against, or an item given twice.

    Example:
        >>> rows = [{"filename": "case0001_001.png", "boxes": []},
        ...         {"filename": "case0002_001.png", "boxes": [[10.0, 10.0, 5.0, 5.0]]}]
        >>> normalize_batch("localization", [{"filename": "case0001_001.png", "boxes": []},
        ...                                  {"boxes": [[10, 10, 5, 5]]}], rows)[0]
        [{'boxes': [], 'scores': None}, {'boxes': [[10, 10, 5, 5]], 'scores': None}]
        >>> normalize_batch("localization", [{"filename": "case0002_001.png", "boxes": []},
        ...                                  {"filename": "case0001_001.png", "boxes": []}], rows)
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: example 1 (0-based index 0), field 'predictions.filename': prediction for 'case0002_001.png', but the reference at this position is 'case0001_001.png': predictions are paired with references by position; sort them as the references are (load_nova gives rows by filename)
        >>> normalize_batch("localization", [{"filename": "case0009_001.png", "boxes": []}], rows[:1])
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: example 1 (0-based index 0), field 'predictions.filename': prediction for 'case0009_001.png', which none of the 1 references given names (the one at this position is 'case0001_001.png'): check the filename, or pass its reference row
    """
    form = _form(task)
    prediction_items = _prediction_items(form, predictions)
    reference_items = _reference_items(task, references)
    plain_predictions = form.read_predictions(prediction_items, start_index)
    if form.boxes:
        checks.box_values(plain_predictions, side="predictions", start_index=start_index)
    plain_references = form.read_references(reference_items, start_index)
    if form.boxes:
        checks.box_values(plain_references, side="references", start_index=start_index)
    if len(plain_predictions) != len(plain_references):
        raise NovaInputError(
            f"got {len(plain_predictions)} predictions but {len(plain_references)} references",
            field="predictions",
        )
    _check_pairing(form.key_field, task, prediction_items, reference_items, start_index)
    _refuse_repeats(task, plain_references, start_index, seen)
    return plain_predictions, plain_references


@examples_counted_from_one()
def case_rows(
    task: str,
    predictions: Sequence[Any],
    references: Sequence[Any],
    *,
    start_index: int = 0,
    known: CaseRows | None = None,
) -> CaseRows | None:
    """The cases of ``all`` read so far with a normalised batch's rows added: an image whose
    diagnoses (or final diagnosis) differ from an earlier image of its case, in this batch or
    an earlier one, is refused when its batch is added, not in ``compute()``, which loses
    every batch on an error (evaluate drops them). ``known`` is left as it was.

    Args:
        task: the task name; only ``all`` gives its diagnoses per image (None for the others).
        predictions, references: a batch as :func:`normalize_batch` returns it.
        start_index: index of the batch's first item in the whole evaluation.
        known: what earlier batches gave (this function's earlier answer), if any.

    Returns:
        A new record of the cases (None for a task other than ``all``).

    Raises:
        NovaInputError: naming the example and the field, as ``compute()`` would.

    Example:
        >>> rows = [{"case_id": "c1", "final_diagnosis": "MS"}]
        >>> known = case_rows("all", [{"diagnoses": ["MS"]}], rows)
        >>> case_rows("all", [{"diagnoses": ["ADEM"]}], rows, start_index=1, known=known)
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: example 2 (0-based index 1), field 'predictions.diagnoses': case c1 has different diagnoses on two of its images (an earlier one and this one); give every image of a case the same list
    """
    if task != "all":
        return None
    # Histories are checked in compute(), where a case judge (which reads them) is known.
    rows = known.copy() if known is not None else CaseRows()
    for offset, (prediction, reference) in enumerate(zip(predictions, references)):
        rows.add(start_index + offset, prediction, reference)
    return rows


def item_names(task: str, references: Sequence[Any], *, start_index: int = 0) -> dict[str, int]:
    """The names of the items of a normalised batch and their 0-based indices in the whole
    evaluation (unnamed items left out): what :func:`normalize_batch` takes as ``seen``.

    Example:
        >>> item_names("captioning", [{"caption": "x", "filename": "case0001_001.png"},
        ...                           {"caption": "y", "filename": ""}], start_index=3)
        {'case0001_001.png': 3}
    """
    key = item_key_field(task)
    return {
        name: start_index + offset
        for offset, reference in enumerate(references)
        if (name := _stored_name(reference, key)) is not None
    }


def _refuse_repeats(
    task: str, references: list[Any], start_index: int, seen: Mapping[str, int] | None
) -> None:
    """An item named twice, in earlier batches or in this one, is refused (naming it); with
    ``seen`` (the face's record of the ``start_index`` items added before), so is a named
    item beside unnamed ones, which no name can put in order."""
    key = item_key_field(task)
    earlier = dict(seen or {})
    named = len(earlier)
    unnamed = start_index - named if seen is not None else 0
    for offset, reference in enumerate(references):
        record = f"example {start_index + offset}"
        name = _stored_name(reference, key)
        if seen is not None and (name is None and named or name is not None and unnamed):
            raise NovaInputError(
                (f"no {key}" if name is None else f"{name!r} named")
                + f", though other references {'give theirs' if name is None else 'give none'}: "
                f"give every reference its {key} (NOVA rows do) or none, so that the items are "
                f"scored in {key} order",
                record=record,
                field=f"references.{key}",
            )
        if name is None:
            unnamed += 1
            continue
        if name in earlier:
            raise NovaInputError(
                f"{name!r} is given twice (first at 0-based index {earlier[name]}): each item "
                "is scored once, as nova evaluate does",
                record=record,
                field=f"references.{key}",
            )
        earlier[name] = start_index + offset
        named += 1


def compute_stored(
    task: str, predictions: list[Any], references: list[Any], *, processes: int = 1, **kwargs: Any
) -> dict[str, Any]:
    """Score what the ``evaluate`` face stored: :func:`compute_task` on the plain lists, the
    items in the order of their names when the references give them (NOVA rows: filename,
    or case_id for diagnosis; as ``nova evaluate`` does), else in the order added.

    Args:
        task: the task name.
        predictions: the stored predictions.
        references: the stored references (:func:`normalize_batch`'s form).
        processes: the metric's ``num_process``: above 1, the lists are every process's
            rows gathered on process 0 (in process order), and an item two processes added
            (each checks only its own batches) is refused saying so.
        **kwargs: as for ``compute_task``.

    Example:
        >>> stored = [{"caption": "Axial T2.", "filename": "case0002_001.png"},
        ...           {"caption": "Axial FLAIR.", "filename": "case0001_001.png"}]
        >>> compute_stored("captioning", ["Axial T2.", "Sagittal"], stored,
        ...                exclude=["BERTScore-F1"], meteor="exact+stem")["n_captions"]
        2
    """
    key = item_key_field(task)
    names = [_stored_name(reference, key) for reference in references]
    if processes > 1:
        _refuse_repeat_across_processes(names, key, processes)
    return compute_task(
        task,
        predictions,
        [_scored_reference(task, reference) for reference in references],
        item_keys=names,
        **kwargs,
    )


def _refuse_repeat_across_processes(names: list[str | None], key: str, processes: int) -> None:
    """An item named twice in the rows gathered from ``processes`` processes: refused with
    which rows, why no ``add_batch`` saw it, and how to score the data again.

    Example:
        >>> _refuse_repeat_across_processes(["a.png", "b.png", "a.png"], "filename", 2)
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: example 2, field 'references.filename': 'a.png' is given twice (first at 0-based index 0) in the rows of the 2 processes, gathered in process order: ...
    """
    first: dict[str, int] = {}
    for position, name in enumerate(names):
        if name is None:
            continue
        if name in first:
            raise NovaInputError(
                f"{name!r} is given twice (first at 0-based index {first[name]}) in the rows "
                f"of the {processes} processes, gathered in process order: each process "
                "added it (a process checks only its own batches), and evaluate has dropped "
                "every batch, as after any error in compute(); shard the items so that each "
                "process adds its own (e.g. rows.shard(num_shards=num_process, "
                "index=process_id)) and add them again, or score with "
                "novabench.metrics.tasks.compute_task or nova evaluate, which keep the data",
                record=f"example {position}",
                field=f"references.{key}",
            )
        first[name] = position


def _scored_reference(task: str, reference: Any) -> Any:
    """A stored reference as the task's scorer takes it: a caption as its text, an image
    size only where one was given."""
    if not isinstance(reference, Mapping):
        return reference
    if _form(task).reference_feature is _FORMS["caption"].reference_feature:
        return reference["caption"]
    key = item_key_field(task)
    kept = {k: v for k, v in reference.items() if k != key or task == registry.ALL_TASKS}
    if task == registry.ALL_TASKS or key == _CASE_KEY:
        kept[key] = _stored_name(reference, key)  # rows name their case (diagnosis reads it)
    if reference.get("width") is None:
        return {k: v for k, v in kept.items() if k not in _IMAGE_SIZE}
    return kept


def _check_pairing(
    key: str, task: str, predictions: list[Any], references: list[Any], start_index: int
) -> None:
    """Each prediction that names its item names the reference at its position."""
    for offset, prediction in enumerate(predictions):
        given = prediction.get(key) if isinstance(prediction, Mapping) else None
        if given is None:
            continue
        record = f"example {start_index + offset}"
        name = checks.text(given, record=record, field=f"predictions.{key}")
        reference = references[offset]
        expected = reference.get(key) if isinstance(reference, Mapping) else None
        if expected is None:
            unit = registry.TASKS[_BOX_TASK if task == registry.ALL_TASKS else task].unit
            raise NovaInputError(
                f"prediction for {name!r}, but the reference at this position has no {key} "
                f"to check it against: pass NOVA `{unit}s` rows (load_nova) as references, or "
                f"leave {key} out",
                record=record,
                field=f"predictions.{key}",
            )
        if name != expected:
            names = {item.get(key) for item in references if isinstance(item, Mapping)}
            if name not in names:  # no order puts it right: no reference holds that item
                raise NovaInputError(
                    f"prediction for {name!r}, which none of the {len(references)} references "
                    f"given names (the one at this position is {expected!r}): check the {key}, "
                    "or pass its reference row",
                    record=record,
                    field=f"predictions.{key}",
                )
            raise NovaInputError(
                f"prediction for {name!r}, but the reference at this position is "
                f"{expected!r}: " + _PAIRING_FIX.format(key=key),
                record=record,
                field=f"predictions.{key}",
            )


@examples_counted_from_one()
def compute_task_from_arrow(
    task: str, predictions: Any, references: Any, **kwargs: Any
) -> dict[str, Any]:
    """``compute_task`` on Arrow columns (what the ``evaluate`` face stores).

    Localisation boxes go from Arrow buffers to stacked numpy arrays without a
    Python object per box (``prepare_localization_from_arrays``); text columns
    are read as Python strings. References that name their images or give their sizes
    take the lists' path (:func:`compute_stored`: scored in filename order, boxes judged
    against each image).

    Args:
        task: the task name.
        predictions: a ``pyarrow`` (Chunked)Array of the task's prediction type.
        references: the same for references.
        **kwargs: as for ``compute_task``.

    Returns:
        The same result as ``compute_task`` on the equivalent Python lists.

    Example:
        >>> import pyarrow as pa
        >>> predictions = pa.array([{"boxes": [[0.0, 0.0, 10.0, 10.0]], "scores": []}])
        >>> references = pa.array([{"boxes": [[0.0, 0.0, 10.0, 10.0]]}])
        >>> compute_task_from_arrow("localization", predictions, references)["hit@50"]
        1.0
    """
    stats, options = _split_options(task, kwargs)
    if len(predictions) != len(references):
        raise NovaInputError(
            f"got {len(predictions)} predictions but {len(references)} references",
            field="predictions",
        )
    predictions, references = _combined(predictions), _combined(references)
    if not _form(task).boxes or _names_items(references):
        # Text, or items named (scored in their names' order, sizes read): the lists' path.
        return compute_stored(
            task, predictions.to_pylist(), references.to_pylist(), **stats, **options
        )
    localization = _localization_from_arrow(
        predictions, references, _only(options, task_options(_BOX_TASK))
    )
    if task != registry.ALL_TASKS:
        return _finish(localization, stats, task)
    text_predictions = [
        {"caption": c, "diagnoses": d}
        for c, d in zip(
            pc.struct_field(predictions, "caption").to_pylist(),
            pc.struct_field(predictions, "diagnoses").to_pylist(),
        )
    ]
    text_references = [
        {"caption": c, "final_diagnosis": f, "case_id": i, "clinical_history": h}
        for c, f, i, h in zip(
            pc.struct_field(references, "caption").to_pylist(),
            pc.struct_field(references, "final_diagnosis").to_pylist(),
            pc.struct_field(references, "case_id").to_pylist(),
            pc.struct_field(references, "clinical_history").to_pylist(),
        )
    ]
    return _compute_all(
        {_BOX_TASK: localization}, text_predictions, text_references, stats, options
    )


@examples_counted_from_one()
def explain_bad_batch(
    task: str, predictions: Sequence[Any], references: Sequence[Any], *, start_index: int = 0
) -> None:
    """Find and raise the precise error of a batch Arrow refused (the slow path, bad input only).

    Args:
        task: the task name.
        predictions: normalised predictions of the batch.
        references: normalised references of the batch.
        start_index: index of the batch's first item in the whole evaluation.

    Raises:
        NovaInputError: naming the example and the field.

    Example:
        >>> explain_bad_batch("localization", [{"boxes": [[1, 2, "x", 4]], "scores": []}], [{"boxes": []}])
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: example 1 (0-based index 0), field 'predictions.boxes[0]': ...
    """
    if not _form(task).boxes:
        return
    for offset, (prediction, reference) in enumerate(zip(predictions, references)):
        record = f"example {start_index + offset}"
        checks.box_list(prediction["boxes"], record=record, field="predictions.boxes")
        checks.box_list(reference["boxes"], record=record, field="references.boxes")
        _scores(prediction["scores"], record, "predictions.scores", strict=True)


def check_options(task: str, options: Mapping[str, Any]) -> None:
    """Validate the keyword options of ``compute`` before any scoring starts.

    The ``evaluate`` face calls this before handing its collected batches to
    ``evaluate``'s ``compute``, which discards them once it runs: a mistyped option must
    fail while the data can still be scored with a corrected call.

    Raises:
        NovaInputError: an unknown option, or a value its metric would refuse.

    Example:
        >>> check_options("localization", {"box_format": "xyxy", "max_detections": 10})
        >>> check_options("localization", {"box_fromat": "xyxy"})
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: unknown option(s) ['box_fromat'] for task 'localization'; valid: ['box_format', 'confidence', 'max_detections', 'n_resamples', 'reference_box_format', 'seed']
    """
    stats, rest = _split_options(task, options)
    for name in ("box_format", "reference_box_format"):
        if name in rest:
            checks.box_format(rest[name], field=name)
    if "max_detections" in rest:
        from novabench.metrics.localization import _check_max_detections

        _check_max_detections(rest["max_detections"])
    if "exclude" in rest:
        from novabench.metrics.captioning import _validated_exclude

        _validated_exclude(rest["exclude"])
    if "meteor" in rest:
        from novabench.metrics.captioning import _meteor_variant, _validated_exclude

        # Before any data is consumed: a bad setting, or "wordnet" without the corpus.
        _meteor_variant(rest["meteor"], _validated_exclude(rest.get("exclude") or ()))
    if rest.get("keyword_averaging", "sample") not in ("sample", "micro"):
        raise NovaInputError(
            f"must be 'sample' or 'micro', got {rest['keyword_averaging']!r}",
            field="keyword_averaging",
        )
    _check_judges(rest)
    if "bertscore_model" in task_options(task):
        excluded = rest.get("exclude") or ()
        if "BERTScore-F1" not in ([excluded] if isinstance(excluded, str) else list(excluded)):
            from novabench.metrics.bertscore import bertscore_metric_key

            # Before any data is consumed: the model exists locally ("minilm": its package is
            # installed), or can be downloaded (not offline), has the layer asked for, and a
            # name its key can carry. The download itself comes later.
            bertscore_metric_key(rest.get("bertscore_model"), rest.get("bertscore_num_layers"))
    if stats.get("n_resamples"):
        from novabench.metrics.stats import _check_settings

        _check_settings(stats["n_resamples"], stats.get("confidence", 0.95), stats.get("seed", 0))


def _check_judges(options: Mapping[str, Any]) -> None:
    """Judge objects (case judge, keyword judge) have the method their metric calls."""
    for name, method, rival in (
        ("case_judge", "judge_cases", "matcher"),
        ("keyword_judge", "extract_pairs", "keyword_extractor"),
    ):
        if options.get(name) is None:
            continue
        if not callable(getattr(options[name], method, None)):
            article = "an" if method[0] in "aeiou" else "a"
            raise NovaInputError(f"needs {article} {method}(..., labels=...) method", field=name)
        if options.get(rival) is not None:
            raise NovaInputError(f"give either {rival} or {name}, not both", field=name)


def _combined(column: Any) -> Any:
    return column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column


def _stacked_boxes(boxes: Any, field: str) -> tuple[np.ndarray, np.ndarray]:
    """``(n, 4)`` float64 boxes and per-item counts from an Arrow list<list<double>> column."""
    counts = (
        pc.list_value_length(boxes).fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
    )
    per_box = pc.list_flatten(boxes)
    lengths = pc.list_value_length(per_box).fill_null(-1).to_numpy(zero_copy_only=False)
    bad = np.flatnonzero(lengths != 4)
    if len(bad):
        ends = np.cumsum(counts)
        item = int(np.searchsorted(ends, bad[0], side="right"))
        position = int(bad[0] - (ends[item] - counts[item]))
        raise NovaInputError(
            f"a box must be 4 numbers [x, y, width, height], got {per_box[int(bad[0])].as_py()!r}",
            record=f"example {item}",
            field=f"{field}[{position}]",
        )
    coordinates = (
        pc.list_flatten(per_box).to_numpy(zero_copy_only=False).astype(np.float64, copy=False)
    )
    return coordinates.reshape(-1, 4), counts


def _names_items(references: Any) -> bool:
    """Whether stored box references name an image or give its size (not the fast path's)."""
    fields = {references.type.field(i).name for i in range(references.type.num_fields)}
    if _IMAGE_KEY in fields:
        names = pc.struct_field(references, _IMAGE_KEY).fill_null("")
        if pc.any(pc.not_equal(names, "")).as_py():
            return True
    if "width" in fields:
        sizes = pc.struct_field(references, "width")
        return bool(sizes.null_count < len(sizes))
    return False


def _localization_from_arrow(predictions: Any, references: Any, options: dict[str, Any]) -> Any:
    from novabench.metrics.localization import prepare_localization_from_arrays

    det_boxes, det_counts = _stacked_boxes(
        pc.struct_field(predictions, "boxes"), "predictions.boxes"
    )
    gold_boxes, gold_counts = _stacked_boxes(
        pc.struct_field(references, "boxes"), "references.boxes"
    )
    scores = pc.struct_field(predictions, "scores")
    score_counts = (
        pc.list_value_length(scores).fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
    )
    scored = score_counts == det_counts
    wrong = np.flatnonzero(~scored & (score_counts != 0))
    if len(wrong):
        item = int(wrong[0])
        raise NovaInputError(
            f"{score_counts[item]} scores for {det_counts[item]} boxes: give one score per box, or none",
            record=f"example {item}",
            field="predictions.scores",
        )
    det_scores = None
    if score_counts.any():
        # Images that gave no scores keep their given order (every score 1.0), as in the core.
        det_scores = np.ones(len(det_boxes), dtype=np.float64)
        det_scores[np.repeat(scored & (det_counts > 0), det_counts)] = (
            pc.list_flatten(scores).to_numpy(zero_copy_only=False).astype(np.float64, copy=False)
        )
    return prepare_localization_from_arrays(
        det_boxes,
        det_counts,
        gold_boxes,
        gold_counts,
        det_scores=det_scores,
        box_format=options.get("box_format", "xywh"),
        max_detections=options.get("max_detections", 100),
        reference_box_format=options.get("reference_box_format", "xywh"),
    )


_PER_CASE = (
    "diagnosis is scored per case: pass the `cases` configuration (rows), not `images` "
    "(one row per image would count a case once per image)"
)


def _reference_columns(task: str) -> list[str]:
    """The dataset columns a task's references come from: the registry's reference fields
    (``all``: every task's, ``case_id`` to group diagnoses by case and the case's
    ``clinical_history`` for a case judge)."""
    if task == registry.ALL_TASKS:
        fields = [spec.reference_field for spec in registry.TASKS.values()]
        return [*fields, "case_id", "clinical_history"]
    if _form(task).reference_feature is _DIAGNOSIS_REFERENCE:
        return list(_DIAGNOSIS_REFERENCE)
    return [registry.TASKS[task].reference_field]


def _prediction_items(form: _InputForm, predictions: Any) -> list[Any]:
    """A form's predictions as a list (a dataset's item key column read when it has one)."""
    columns = list(form.prediction_columns) if form.prediction_columns else None
    return _as_items(predictions, columns, optional=(form.key_field,))


def _reference_items(task: str, references: Any) -> list[Any]:
    """A task's references as a list (a dataset's item key column read too, and the image
    size columns for boxes)."""
    form = _form(task)
    sizes = tuple(_IMAGE_SIZE) if form.boxes else ()
    return _as_items(references, _reference_columns(task), optional=(form.key_field, *sizes))


def _as_items(values: Any, columns: list[str] | None, optional: Sequence[str] = ()) -> list[Any]:
    """A list of items; a ``datasets.Dataset`` is read column-wise (no image decoding), its
    ``columns`` that exist and, beside them, its ``optional`` ones that exist."""
    if isinstance(values, datasets.Dataset):
        if columns == list(_DIAGNOSIS_REFERENCE) and "filename" in values.column_names:
            raise NovaInputError(_PER_CASE, field="references")
        if columns and "boxes" in columns and "filenames" in values.column_names:
            raise NovaInputError(
                "localisation and captioning are scored per image: pass the `images` "
                "configuration, not `cases`",
                field="references",
            )
        wanted = [c for c in (columns or []) if c in values.column_names]
        if not wanted:
            raise NovaInputError(
                f"the dataset has none of the columns {columns}; it has {values.column_names}",
                field="references",
            )
        wanted += [c for c in optional if c in values.column_names and c not in wanted]
        table = values.select_columns(wanted).to_dict()
        if len(wanted) == 1 and columns and wanted[0] in ("caption", "final_diagnosis"):
            return [{wanted[0]: v} for v in table[wanted[0]]]
        return [dict(zip(wanted, row)) for row in zip(*(table[c] for c in wanted))]
    if values is None:
        raise NovaInputError("no values given", field="predictions/references")
    if isinstance(values, datasets.DatasetDict):
        raise NovaInputError(
            f"expected one split, got a DatasetDict with splits {list(values)}: pass e.g. "
            f"ds[{next(iter(values), 'test')!r}]",
            field="predictions/references",
        )
    if isinstance(values, (str, bytes, Mapping)):
        raise NovaInputError(
            f"expected a sequence of items, got a single {type(values).__name__}",
            field="predictions/references",
        )
    return list(values)


def _field(item: Any, key: str, record: str, field: str) -> Any:
    if not isinstance(item, Mapping):
        raise NovaInputError(
            f"expected a mapping with '{key}', got {type(item).__name__}",
            record=record,
            field=field,
        )
    if key not in item:
        raise NovaInputError(f"missing key '{key}'", record=record, field=f"{field}.{key}")
    return item[key]


def _row_diagnosis(value: Any) -> Any:
    """A dataset row's null or blank final diagnosis is the release saying "none" (counted)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        from novabench.metrics.diagnosis import NO_DIAGNOSIS_PLACEHOLDER

        return NO_DIAGNOSIS_PLACEHOLDER
    return value


def _text(value: Any, record: str, field: str, *, allow_empty: bool = False) -> str:
    return checks.text(
        value, record=record, field=field, allow_blank=allow_empty, none_as_empty=allow_empty
    )


def _diagnosis_list(value: Any, record: str, field: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, (Mapping, set, frozenset)) or not isinstance(value, Iterable):
        # A dict would be read as its keys (the prompt's JSON answer is a dict: parse it first)
        # and a set has no order, so neither is a ranked list of diagnoses.
        raise NovaInputError(
            f"expected a list of diagnoses, most likely first, got {type(value).__name__}"
            + (
                "; for the prompt's JSON answer pass [most_likely_diagnosis, *other_possible_diagnoses]"
                if isinstance(value, Mapping)
                else ""
            ),
            record=record,
            field=field,
        )
    items = list(value)
    for position, item in enumerate(items):
        checks.text(item, record=record, field=f"{field}[{position}]", allow_blank=True)
    return items


def _boxes(value: Any, record: str, field: str) -> Any:
    """Box lists pass through (values are checked later: booleans and NaN per batch); None is empty."""
    if value is None:
        return []
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise NovaInputError(
            f"expected a list of boxes, got {type(value).__name__}", record=record, field=field
        )
    return value if isinstance(value, list) else list(value)


def _scores(value: Any, record: str, field: str, *, strict: bool = False) -> Any:
    if value is None:
        return []
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise NovaInputError(
            f"scores must be a list of numbers, got {value!r}", record=record, field=field
        )
    value = value if isinstance(value, list) else list(value)
    if strict:
        for position, score in enumerate(value):
            checks.number(score, record=record, field=f"{field}[{position}]")
    return value


def _plain_box_prediction(item: Any, allowed: frozenset[str] | None) -> bool:
    """Whether a localisation prediction is already a dict of plain lists with known keys."""
    return (
        type(item) is dict
        and allowed is not None
        and allowed.issuperset(item)
        and type(item.get("boxes")) is list
        and type(item.get("scores", [])) is list
    )


def _box_prediction(item: Any, record: str, allowed: frozenset[str]) -> dict[str, Any]:
    if not isinstance(item, Mapping):
        raise NovaInputError(
            f"expected a mapping with 'boxes', got {type(item).__name__}",
            record=record,
            field="predictions",
        )
    _refuse_unknown_keys(item, allowed, record)
    return {
        "boxes": _boxes(item.get("boxes"), record, "predictions.boxes"),
        "scores": _scores(item.get("scores"), record, "predictions.scores"),
    }


# --------------------------------------------------------------------------- #
# The readers of each answer form, and the forms by the registry's answer_field
# --------------------------------------------------------------------------- #


def _each(read: Callable[[Any, int], Any]) -> Callable[[list[Any], int], list[Any]]:
    """A batch reader from an item reader ``(item, index)``."""

    def read_all(items: list[Any], start_index: int) -> list[Any]:
        return [read(item, start_index + offset) for offset, item in enumerate(items)]

    return read_all


# Box batches are the large ones: items already plain skip the per-item reader.
def _read_box_predictions(items: list[Any], start_index: int) -> list[Any]:
    out: list[Any] = []
    for offset, item in enumerate(items):
        if _plain_box_prediction(item, _BOX_PREDICTION_KEYS):
            # Already plain; evaluate's add_batch wants every key, so a missing "scores"
            # becomes None (no scores given), as the slow path below makes it. The item key
            # is checked by normalize_batch and never stored.
            plain = len(item) == 2 and "scores" in item
            out.append(item if plain else {"boxes": item["boxes"], "scores": item.get("scores")})
        else:
            record = f"example {start_index + offset}"
            out.append(_box_prediction(item, record, _BOX_PREDICTION_KEYS))
    return out


def _read_box_references(items: list[Any], start_index: int) -> list[Any]:
    out: list[Any] = []
    for offset, item in enumerate(items):
        record = f"example {start_index + offset}"
        if type(item) is dict and type(item.get("boxes")) is list:
            boxes = item["boxes"]
        else:
            boxes = _boxes(_field(item, "boxes", record, "references"), record, "references.boxes")
        out.append({"boxes": boxes, **_image_facts(item, record)})
    return out


def _item_name(item: Mapping[str, Any], key: str, record: str) -> str:
    """A reference row's item name as stored: its text, or "" when it gives none."""
    name = item.get(key)
    return "" if name is None else checks.text(name, record=record, field=f"references.{key}")


def _stored_name(reference: Any, key: str) -> str | None:
    """The item name a stored reference keeps (None: none given)."""
    name = reference.get(key) if isinstance(reference, Mapping) else None
    return name or None


def _image_facts(item: Mapping[str, Any], record: str) -> dict[str, Any]:
    """A reference row's filename ("" when not given) and image size (None when not given;
    both sides or neither, whole positive pixels)."""
    name = _item_name(item, _IMAGE_KEY, record)
    width, height = item.get("width"), item.get("height")
    if width is None and height is None:
        return {_IMAGE_KEY: name, "width": None, "height": None}
    side = "width" if width is None else "height"
    if width is None or height is None:
        raise NovaInputError(
            f"{'height' if side == 'width' else 'width'} given without {side}: give both "
            "(NOVA rows do) or neither",
            record=record,
            field=f"references.{side}",
        )
    width, height = checks.image_size(
        [width, height], record=record, field="references.width/height"
    )
    return {_IMAGE_KEY: name, "width": width, "height": height}


def _keyed_answer(item: Mapping[str, Any], answer: str, key: str, record: str) -> Any:
    """The answer of a prediction given as a mapping with its item key (``{"caption": ...,
    "filename": ...}``); unknown keys raise, as for boxes."""
    _refuse_unknown_keys(item, {answer, key}, record)
    return _field(item, answer, record, "predictions")


def _refuse_unknown_keys(item: Mapping[str, Any], allowed: Set[str], record: str) -> None:
    """A prediction's keys beyond ``allowed`` are a mistake to name, never to drop."""
    unknown = sorted(set(item) - allowed)
    if unknown:
        raise NovaInputError(
            f"unknown key(s) {unknown}; allowed: {sorted(allowed)}",
            record=record,
            field="predictions",
        )


def _read_caption_prediction(item: Any, index: int) -> str:
    record = f"example {index}"
    if isinstance(item, Mapping):
        value = _keyed_answer(item, "caption", _IMAGE_KEY, record)
        return _caption_prediction(value, record, "predictions.caption")
    return _caption_prediction(item, record, "predictions")


def _caption_prediction(value: Any, record: str, field: str) -> str:
    """A caption answer, by the rule of ``metrics.captioning``: a string, "" for no answer."""
    if not isinstance(value, str):
        raise NovaInputError(
            f'prediction must be a string (use "" for no answer), got {type(value).__name__}',
            record=record,
            field=field,
        )
    return checks.text(value, record=record, field=field, allow_blank=True)  # surrogates


def _read_caption_reference(item: Any, index: int) -> dict[str, Any]:
    record = f"example {index}"
    value = _field(item, "caption", record, "references") if isinstance(item, Mapping) else item
    name = _item_name(item, _IMAGE_KEY, record) if isinstance(item, Mapping) else ""
    # the plain functions' rule; the row's filename kept for the order ("": not given)
    return {"caption": _text(value, record, "references"), _IMAGE_KEY: name}


def _read_diagnoses_prediction(item: Any, index: int) -> list[str]:
    record = f"example {index}"
    if isinstance(item, Mapping) and "diagnoses" in item:  # {"diagnoses": [...], "case_id": ...}
        value = _keyed_answer(item, "diagnoses", _CASE_KEY, record)
        return _diagnosis_list(value, record, "predictions.diagnoses")
    return _diagnosis_list(item, record, "predictions")


def _read_diagnoses_reference(item: Any, index: int) -> dict[str, str]:
    record = f"example {index}"
    history, case = "", ""
    if isinstance(item, Mapping):
        if "filename" in item and "filenames" not in item:
            raise NovaInputError(_PER_CASE, record=record, field="references")
        value = _row_diagnosis(_field(item, "final_diagnosis", record, "references"))
        history = _row_history(item, record)
        case = _item_name(item, _CASE_KEY, record)
    else:
        value = item  # a plain reference that is None or blank is an error, as in diagnosis
    return {
        "final_diagnosis": _text(value, record, "references"),
        "clinical_history": history,
        _CASE_KEY: case,
    }


def _row_history(item: Mapping[str, Any], record: str) -> str:
    """A row's clinical history for a case judge: absent, null or blank is none, stored as ""."""
    history = item.get("clinical_history")
    if history is None:
        return ""
    history = _text(history, record, "references.clinical_history", allow_empty=True)
    return history if history.strip() else ""


def _read_all_prediction(item: Any, index: int) -> dict[str, Any]:
    record = f"example {index}"
    out = _box_prediction(item, record, _all_prediction_keys())
    # evaluate's Features would fill a missing key with None, "no answer", unseen: an
    # image of `all` answers every task, and only an explicit None says it gave none.
    for answer in _ALL_ANSWER_FIELDS:
        if answer not in item:
            raise NovaInputError(
                f"missing key '{answer}': every prediction of 'all' answers each task "
                "(None for no answer on this image)",
                record=record,
                field=f"predictions.{answer}",
            )
    out["caption"] = _text(item.get("caption"), record, "predictions.caption", allow_empty=True)
    out["diagnoses"] = _diagnosis_list(item.get("diagnoses"), record, "predictions.diagnoses")
    return out


def _read_all_reference(item: Any, index: int) -> dict[str, Any]:
    record = f"example {index}"
    if not isinstance(item, Mapping):
        raise NovaInputError(
            "the 'all' task takes NOVA `images` rows as references",
            record=record,
            field="references",
        )
    return {
        "boxes": _boxes(_field(item, "boxes", record, "references"), record, "references.boxes"),
        "caption": _text(
            _field(item, "caption", record, "references"),
            record,
            "references.caption",
            allow_empty=True,
        ),
        "final_diagnosis": _text(
            _row_diagnosis(_field(item, "final_diagnosis", record, "references")),
            record,
            "references.final_diagnosis",
            allow_empty=True,
        ),
        "case_id": _text(
            _field(item, "case_id", record, "references"), record, "references.case_id"
        ),
        "clinical_history": _row_history(item, record),
        **_image_facts(item, record),
    }


# One form per registry answer_field: a task is read by the form its declaration names.
_FORMS: dict[str, _InputForm] = {
    "boxes": _InputForm(
        prediction_feature={"boxes": _BOXES, "scores": _SCORES},
        reference_feature={"boxes": _BOXES, **_IMAGE_NAME, **_IMAGE_SIZE},
        read_predictions=_read_box_predictions,
        read_references=_read_box_references,
        key_field=_IMAGE_KEY,
        prediction_columns=("boxes", "scores"),
        boxes=True,
    ),
    "caption": _InputForm(
        _STRING,
        {"caption": _STRING, **_IMAGE_NAME},
        _each(_read_caption_prediction),
        _each(_read_caption_reference),
        key_field=registry.TASKS[registry.task_answered_in("caption")].key_field,
    ),
    "diagnoses": _InputForm(
        _STRINGS,
        _DIAGNOSIS_REFERENCE,
        _each(_read_diagnoses_prediction),
        _each(_read_diagnoses_reference),
        key_field=_CASE_KEY,
    ),
}

#: The task whose answers are boxes (its evaluation is built from Arrow buffers).
_BOX_TASK = next(name for name, spec in registry.TASKS.items() if _FORMS[spec.answer_field].boxes)


def _as_field(feature: Any, name: str) -> dict[str, Any]:
    """A form's feature as struct fields: a struct as it is, a single value under ``name``."""
    return dict(feature) if isinstance(feature, dict) else {name: feature}


def _all_form() -> _InputForm:
    """The ``all`` pseudo-task: every task's form side by side in one row per image."""
    predictions: dict[str, Any] = {}
    references: dict[str, Any] = {}
    for spec in registry.TASKS.values():
        form = _FORMS[spec.answer_field]
        predictions.update(_as_field(form.prediction_feature, spec.answer_field))
        # `all` reads images rows and groups diagnoses by case: a diagnosis reference is
        # flattened into the row's own columns (final_diagnosis, clinical_history).
        feature = form.reference_feature
        references.update(
            feature if feature is _DIAGNOSIS_REFERENCE else _as_field(feature, spec.reference_field)
        )
    references["case_id"] = _STRING
    return _InputForm(
        predictions,
        references,
        _each(_read_all_prediction),
        _each(_read_all_reference),
        key_field=_IMAGE_KEY,  # one row per image
        prediction_columns=tuple(predictions),
        boxes=True,
    )


_FORMS[registry.ALL_TASKS] = _all_form()


#: The keys every `all` prediction must hold (scores stay optional): each task's answer.
_ALL_ANSWER_FIELDS: tuple[str, ...] = tuple(spec.answer_field for spec in registry.TASKS.values())


def _all_prediction_keys() -> frozenset[str]:
    return frozenset({*_FORMS[registry.ALL_TASKS].prediction_feature, _IMAGE_KEY})


def _form(task: str) -> _InputForm:
    """The input form of a task, by the answer field its registry declaration names."""
    _check_task(task)
    if task == registry.ALL_TASKS:
        return _FORMS[task]
    return _FORMS[registry.TASKS[task].answer_field]
