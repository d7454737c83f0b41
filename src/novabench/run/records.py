"""Prediction records: one task's answer for one item (:class:`PredictionRecord`) and a file's
answers per task, optionally aligned to a release (:class:`PredictionSet`), with the keys a
line may carry.

What reading a predictions file gives (:mod:`novabench.run.predictions`), what ``parse_raw``
(:mod:`novabench.run.raw_answers`) and the box-answer analysis
(:mod:`novabench.run.box_answers`) read, and what scoring takes; it imports none of them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from novabench import registry
from novabench.errors import NovaInputError

# The task lists are the registry's; these names stay for the modules that import them here.
TASKS: tuple[str, ...] = registry.TASK_NAMES
IMAGE_TASKS: tuple[str, ...] = registry.IMAGE_TASKS
CASE_TASKS: tuple[str, ...] = registry.CASE_TASKS

#: The ``finish_reason`` of an answer that stopped at the answer length limit (OpenAI's
#: word): the runner records it on the answer's line, and reports count such answers, since
#: they may be cut off.
TOKEN_LIMIT_FINISH = "length"

# Which keys of a line belong to which task; the first key of each group is the raw answer.
_TASK_FIELDS: dict[str, tuple[str, ...]] = {
    name: spec.fields for name, spec in registry.TASKS.items()
}
_ANSWER_FIELDS: dict[str, tuple[str, str]] = {  # task -> (parsed answer, raw answer)
    name: (spec.answer_field, spec.raw_field) for name, spec in registry.TASKS.items()
}
# What the box parser did to an answer's boxes, kept on its line (counts; see parse_raw).
_BOX_REPAIR_FIELDS = ("boxes_dropped", "boxes_swapped")
_COMMON_FIELDS = (
    "task",
    "latency_s",
    "model",
    "error",
    "parse_status",
    "meta",
    "raw_truncated_from",
    *_BOX_REPAIR_FIELDS,
    "finish_reason",
)
# The keys a line of each unit may carry: its key field, the common fields, its tasks' fields.
_UNIT_KEYS: dict[str, frozenset[str]] = {
    key_field: frozenset(
        (
            key_field,
            *_COMMON_FIELDS,
            *(
                f
                for spec in registry.TASKS.values()
                if spec.key_field == key_field
                for f in spec.fields
            ),
        )
    )
    for key_field in dict.fromkeys(spec.key_field for spec in registry.TASKS.values())
}
_UNIT_TASKS: dict[str, tuple[str, ...]] = {
    key_field: tuple(n for n, spec in registry.TASKS.items() if spec.key_field == key_field)
    for key_field in _UNIT_KEYS
}


def _key_field(task: str) -> str:
    return registry.TASKS[task].key_field


@dataclass(frozen=True)
class PredictionRecord:
    """One task's answer for one item, as read from one line of a predictions file.

    Attributes:
        task: ``"localization"``, ``"captioning"`` or ``"diagnosis"``.
        key: the filename (image tasks) or case id (diagnosis).
        source: the file it came from.
        line: its 1-based line number in that file.
        boxes: parsed boxes ``[[x, y, w, h], ...]`` (localisation), or None when not parsed.
        scores: one confidence per box, or None.
        caption: parsed caption (captioning), or None.
        diagnoses: parsed diagnoses, most likely first (diagnosis), or None.
        raw: the model's raw answer text, or None.
        input_size: ``(width, height)`` of the image the model saw, when recorded.
        latency_s: seconds the model took for this item, when recorded.
        model: the model that answered, when recorded.
        error: why the item has no answer (the model call failed), or None.
        parse_status: the parser's verdict on ``raw``, or None when not parsed.
        raw_truncated_from: the original length (characters) of an answer stored only as a
            prefix of ``registry.MAX_RAW_ANSWER_CHARS`` characters, or None when ``raw`` is
            whole. Such an item is ``too_long`` and its prefix is never parsed.
        boxes_dropped: boxes the parser read in ``raw`` but dropped (zero width or height,
            a value that is not a finite number, a size past a float, or box_2d beside
            readable boxes under a pixel convention; not scored), or None when no parser read
            a box answer here (parsed boxes given as such, or a file parsed before this was
            recorded).
        boxes_swapped: boxes whose corners the parser put in order (scored), None alike.
        finish_reason: why the model stopped, when the run recorded it (``"length"``: at the
            answer length limit, so the answer may be cut off).
        parse_error: why the parser read nothing (or not everything) from ``raw``, when it
            read it in this process (never written to a file: None for answers parsed
            earlier and not read again).
        boxes_dropped_why: ``boxes_dropped`` per reason (the parser's words: "with a value
            that is not a finite number"...), when the parser read ``raw`` in this process
            (never written either; None otherwise).
    """

    task: str
    key: str
    source: str
    line: int
    boxes: list[list[float]] | None = None
    scores: list[float] | None = None
    caption: str | None = None
    diagnoses: list[str] | None = None
    raw: str | None = None
    input_size: tuple[int, int] | None = None
    latency_s: float | None = None
    model: str | None = None
    error: str | None = None
    parse_status: str | None = None
    raw_truncated_from: int | None = None
    boxes_dropped: int | None = None
    boxes_swapped: int | None = None
    finish_reason: str | None = None
    # What the parser said of raw in this process: for messages only, never written or compared.
    parse_error: str | None = field(default=None, compare=False)
    boxes_dropped_why: dict[str, int] | None = field(default=None, compare=False)

    @property
    def is_parsed(self) -> bool:
        """True when the record holds a parsed answer usable by the metrics."""
        return getattr(self, registry.TASKS[self.task].answer_field) is not None

    @property
    def where(self) -> str:
        """``"<file>, line N"``, for messages."""
        return f"{self.source}, line {self.line}"


def _release_keys(release: Any) -> tuple[list[str], list[str]]:
    """Filenames and case ids of a release, in its order (images sorted by filename)."""
    filenames = [image.filename for image in release.images]
    case_ids = [case.case_id for case in release.cases()]
    return filenames, case_ids


def unknown_key_message(key_field: str, key: str, known: Iterable[str]) -> str:
    """The refusal of an item ``key`` the release does not hold, with the release's own
    name for it when the key differs from one only by a folder or by letter case (a path
    written where the bare filename goes, an upper-cased name).

    Example:
        >>> unknown_key_message("filename", "images/CASE0001_001.PNG", ["case0001_001.png"])
        "unknown filename 'images/CASE0001_001.PNG': not in the release; did you mean 'case0001_001.png'? (filenames are the release's, without a folder)"
        >>> unknown_key_message("case_id", "case9999", ["case0001"])
        "unknown case id 'case9999': not in the release"
    """
    message = f"unknown {key_field.replace('_', ' ')} {key!r}: not in the release"
    wanted = key.replace("\\", "/").rsplit("/", 1)[-1].casefold()
    match = next((name for name in known if name.casefold() == wanted), None)
    if match is None:
        return message
    return (
        f"{message}; did you mean {match!r}? ({key_field.replace('_', ' ')}s are the "
        "release's, without a folder)"
    )


@dataclass
class PredictionSet:
    """The predictions of one file (or several merged), per task, optionally aligned to a release.

    Attributes:
        source: the file(s) the predictions came from.
        records: ``{task: {item key: PredictionRecord}}`` in file order.
        filenames: the release's filenames (release order), or the file's when no release was given.
        case_ids: the release's case ids, or the file's when no release was given.
        aligned: True when ``filenames``/``case_ids`` come from a release.
        superseded: error lines replaced by a later answer for the same task and item.

    Example:
        >>> import json, tempfile, pathlib
        >>> from novabench.run.predictions import read_predictions
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "pred.jsonl"
        >>> _ = path.write_text(json.dumps({"filename": "case0001_001.png", "boxes": [[1, 2, 3, 4]]}) + "\\n")
        >>> predictions = read_predictions(path)
        >>> predictions.localization()
        [{'boxes': [[1.0, 2.0, 3.0, 4.0]]}]
    """

    source: str
    records: dict[str, dict[str, PredictionRecord]]
    filenames: list[str]
    case_ids: list[str]
    aligned: bool = False
    superseded: int = 0

    def _keys(self, task: str) -> list[str]:
        if task not in TASKS:
            raise NovaInputError(
                f"unknown task {task!r}; expected one of {', '.join(TASKS)}", field="task"
            )
        return self.case_ids if task in CASE_TASKS else self.filenames

    @property
    def missing_images(self) -> list[str]:
        """Filenames with no line at all (no localisation and no caption answer)."""
        answered = {key for task in IMAGE_TASKS for key in self.records[task]}
        return [name for name in self.filenames if name not in answered]

    @property
    def missing_cases(self) -> list[str]:
        """Case ids with no diagnosis line."""
        answered = {key for task in CASE_TASKS for key in self.records[task]}
        return [case_id for case_id in self.case_ids if case_id not in answered]

    def missing(self, task: str) -> list[str]:
        """Items without a usable answer for ``task``: no line, or a line that records an error.

        Example:
            >>> PredictionSet("x", {t: {} for t in TASKS}, ["a.png"], [], aligned=True).missing("captioning")
            ['a.png']
        """
        records = self.records[task] if task in self.records else {}
        return [
            key for key in self._keys(task) if key not in records or records[key].error is not None
        ]

    def errors(self, task: str) -> dict[str, str]:
        """``{item: error message}`` of the items of ``task`` whose model call failed."""
        self._keys(task)
        return {
            key: record.error
            for key, record in self.records[task].items()
            if record.error is not None
        }

    def parse_counts(self, task: str) -> dict[str, int]:
        """How many answers of ``task`` got each parse status (empty when nothing was parsed)."""
        self._keys(task)
        counts = Counter(
            record.parse_status
            for record in self.records[task].values()
            if record.parse_status is not None
        )
        return dict(sorted(counts.items()))

    def summary(self) -> dict[str, dict[str, Any]]:
        """Per task: items expected, answered, missing, errors and parse-status counts, and
        (only when some did) ``hit_token_limit``: answers whose line says the model stopped at
        the answer length limit (``finish_reason`` ``length``), so they may be cut off,
        ``first_error``: the first failed item (in item order) and its model error, and
        ``first_failure``: per failure status (``TaskSpec.failure_statuses``), its first item
        (in item order) and the parser's error (None for an answer parsed earlier).

        Example:
            >>> PredictionSet("x", {t: {} for t in TASKS}, ["a.png"], ["case0001"]).summary()["diagnosis"]
            {'items': 1, 'answered': 0, 'missing': 1, 'errors': 0, 'parse_status': {}}
        """
        report: dict[str, dict[str, Any]] = {}
        for task in TASKS:
            missing = self.missing(task)
            errors = self.errors(task)
            report[task] = {
                "items": len(self._keys(task)),
                "answered": len(self._keys(task)) - len(missing),
                "missing": len(missing),
                "errors": len(errors),
                "parse_status": self.parse_counts(task),
            }
            cut = sum(
                record.error is None and record.finish_reason == TOKEN_LIMIT_FINISH
                for record in self.records[task].values()
            )
            if cut:
                report[task]["hit_token_limit"] = cut
            if errors:  # which item failed first, and how: the file alone said so before
                first = min(errors)
                report[task]["first_error"] = {"item": first, "error": errors[first]}
            failures = self._first_failures(task)
            if failures:  # which answer the parser could not use, and why: named, not counted
                report[task]["first_failure"] = failures
        return report

    def _first_failures(self, task: str) -> dict[str, dict[str, Any]]:
        """Per failure status of ``task``, its first item in item order and the parser's error."""
        failing = registry.TASKS[task].failure_statuses
        first: dict[str, dict[str, Any]] = {}
        for key in sorted(self.records[task]):
            record = self.records[task][key]
            status = record.parse_status
            if status in failing and status not in first and record.error is None:
                first[str(status)] = {"item": key, "error": record.parse_error}
        return dict(sorted(first.items()))

    def _answers(self, task: str) -> Iterator[PredictionRecord | None]:
        """The record of each item in order (None when missing or failed); refuses unparsed raw."""
        for key in self._keys(task):
            record = self.records[task].get(key)
            if record is None or record.error is not None:
                yield None
                continue
            if not record.is_parsed:
                raise NovaInputError(
                    f"holds only the raw {task} answer; parse it first with "
                    "novabench.run.predictions.parse_raw(...) or `nova parse`",
                    source=record.source,
                    record=f"line {record.line} ({key})",
                    field=_ANSWER_FIELDS[task][1],
                )
            yield record

    def answers(self, task: str) -> list[Any]:
        """The answers of ``task`` in item order, as its metric takes them.

        Example:
            >>> PredictionSet("x", {t: {} for t in TASKS}, ["a.png"], ["case0001"]).answers("diagnosis")
            [[]]
        """
        self._keys(task)
        return _ANSWERS_BY_FIELD[registry.TASKS[task].answer_field](self)

    def localization(self) -> list[dict[str, list]]:
        """One ``{"boxes": [...], "scores"?: [...]}`` per image, in order; missing images get no box.

        A missing prediction counts as "the model found nothing", the same as ``no target``.
        """
        predictions: list[dict[str, list]] = []
        for record in self._answers(registry.task_answered_in("boxes")):
            if record is None:
                predictions.append({"boxes": []})
                continue
            prediction: dict[str, list] = {"boxes": [list(box) for box in record.boxes or []]}
            if record.scores is not None:
                prediction["scores"] = list(record.scores)
            predictions.append(prediction)
        return predictions

    def captions(self) -> list[str]:
        """One caption per image, in order; missing images get the empty caption."""
        return [
            "" if record is None else str(record.caption)
            for record in self._answers(registry.task_answered_in("caption"))
        ]

    def diagnoses(self) -> list[list[str]]:
        """One list of diagnoses (most likely first) per case, in order; missing cases get ``[]``."""
        return [
            [] if record is None else list(record.diagnoses or [])
            for record in self._answers(registry.task_answered_in("diagnoses"))
        ]


# Which accessor gives a task's answers, per answer field.
_ANSWERS_BY_FIELD: dict[str, Callable[[PredictionSet], list[Any]]] = {
    "boxes": PredictionSet.localization,
    "caption": PredictionSet.captions,
    "diagnoses": PredictionSet.diagnoses,
}


def _too_long(answer: Any) -> bool:
    """Whether a parsed caption or diagnosis list is beyond ``registry.MAX_CAPTION_CHARS``."""
    if isinstance(answer, str):
        return len(answer) > registry.MAX_CAPTION_CHARS
    if isinstance(answer, list) and answer and isinstance(answer[0], str):
        return sum(map(len, answer)) > registry.MAX_CAPTION_CHARS
    return False


# A parser's answer as a predictions record holds it, per answer field.
_PARSED_VALUE: dict[str, Callable[[Any], Any]] = {
    "boxes": lambda boxes: [[float(v) for v in box] for box in boxes or []],
    "caption": lambda caption: caption or "",
    "diagnoses": lambda diagnoses: [str(d) for d in diagnoses or []],
}
