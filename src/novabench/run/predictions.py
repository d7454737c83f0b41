"""Prediction files: JSON Lines read, validated, aligned to a release, parsed, written and merged.

One JSON object per line. An image line is keyed by ``filename`` and carries the answer to
localisation and/or captioning, either parsed or raw::

    {"filename": "case0001_001.png", "boxes": [[x, y, w, h], ...], "scores": [...], "caption": "..."}
    {"filename": "case0001_001.png", "raw_boxes": "...", "raw_caption": "...", "input_size": [w, h]}

A case line is keyed by ``case_id`` and carries the diagnoses::

    {"case_id": "case0001", "diagnoses": ["most likely", "other", ...]}
    {"case_id": "case0001", "raw_diagnoses": "..."}

Boxes are ``[x, y, width, height]`` in pixels of the original image; ``input_size`` (the size
of the image the model saw) goes only with a raw answer, whose pixels it rescales (beside
parsed boxes alone it is refused). Lines written by the
runner may also carry ``task`` (which task the line answers), ``latency_s``, ``model``,
``error`` (the item failed; no answer), ``parse_status`` (added by :func:`parse_raw`
beside the parsed answer it read from the raw one: a line holding both answers of a task
without it is refused, as two answers),
``raw_truncated_from`` (the answer was longer than ``registry.MAX_RAW_ANSWER_CHARS``: only
that prefix of the raw text is stored and this is the original length in characters; the
item is ``too_long``, never parsed), ``boxes_dropped`` and ``boxes_swapped`` (added by
:func:`parse_raw` beside a box answer it read: boxes written but not kept, of zero size or
past a float, and boxes whose corners it put in order), ``finish_reason`` (``"length"``: the
model stopped at the answer length limit, so the answer may be cut off) and a free-form ``meta`` object. Any other key is refused, so a typo such as ``"box"`` cannot
silently turn into "no prediction".

Each (task, item) may be answered once per file. The one exception makes reruns safe: a line
that records an ``error`` may be superseded by a later line for the same task and item.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from novabench import checks, registry
from novabench._files import UTF8_BOM, decode_utf8_line, is_novabench_report
from novabench.errors import NovaInputError

# The box-answer analysis lives in novabench.run.box_answers; its names stay importable here.
from novabench.run.box_answers import (  # noqa: F401
    UNRECORDED_PARSE,
    assumed_box_order_record,
    box_answer_summary,
    labelled_lines_read_y_first,
    recorded_y_first_reads,
)

# The manifest and merging live in novabench.run.manifest; their names stay importable here.
from novabench.run.manifest import (  # noqa: F401
    MANIFEST_SUFFIX,
    RECORDED_BACKEND_KEYS,
    SHARD_SPECIFIC_KEYS,
    PartialLine,
    RunManifest,
    backend_identity,
    check_replaceable_output,
    manifest_path_for,
    merge_prediction_files,
    read_manifest,
    release_identity,
    write_manifest,
)

# parse_raw and its checks live in novabench.run.raw_answers; its name stays importable here.
from novabench.run.raw_answers import parse_raw  # noqa: F401

# The records and sets live in novabench.run.records; their names stay importable here.
from novabench.run.records import (  # noqa: F401
    _ANSWER_FIELDS,
    _BOX_REPAIR_FIELDS,
    _PARSED_VALUE,
    _TASK_FIELDS,
    _UNIT_KEYS,
    _UNIT_TASKS,
    CASE_TASKS,
    IMAGE_TASKS,
    TASKS,
    TOKEN_LIMIT_FINISH,
    PredictionRecord,
    PredictionSet,
    _key_field,
    _release_keys,
    _too_long,
    unknown_key_message,
)

__all__ = [
    "CASE_TASKS",
    "IMAGE_TASKS",
    "TASKS",
    "TOKEN_LIMIT_FINISH",
    "UNRECORDED_PARSE",
    "PredictionRecord",
    "PredictionSet",
    "RunManifest",
    "backend_identity",
    "box_answer_summary",
    "cap_raw_answer",
    "assumed_box_order_record",
    "labelled_lines_read_y_first",
    "recorded_y_first_reads",
    "manifest_path_for",
    "merge_prediction_files",
    "parse_raw",
    "read_manifest",
    "read_predictions",
    "release_identity",
    "write_manifest",
    "write_predictions",
]


# --------------------------------------------------------------------------- reading


_is_number = checks.is_real_number  # booleans (numpy's too) are no numbers here either


def _is_finite_float(value: Any) -> bool:
    """A plain finite float: what ``_LineChecker.finite`` returns unchanged (the usual case)."""
    return type(value) is float and math.isfinite(value)


class _LineChecker:
    """Validates the fields of one parsed line; every complaint names file, line and field."""

    def __init__(self, source: str, line: int, key: str | None) -> None:
        self.source = source
        self.record = f"line {line}" + (f" ({key})" if key else "")

    def fail(self, message: str, field_name: str | None = None) -> NovaInputError:
        return NovaInputError(message, source=self.source, record=self.record, field=field_name)

    def string(self, value: Any, name: str, *, allow_empty: bool = True) -> str:
        if not isinstance(value, str):
            raise self.fail(f"must be a string, got {type(value).__name__}", name)
        if not allow_empty and not value.strip():
            raise self.fail("must not be empty", name)
        # A lone surrogate has no UTF-8: refused here, not when a report or table is written.
        return checks.text(
            value, source=self.source, record=self.record, field=name, allow_blank=True
        )

    def model_text(self, value: Any, name: str) -> str:
        """A raw answer or a server's error text: kept as the model gave it, lone surrogates
        too (the parsers replace them and ``write_predictions`` escapes them)."""
        if not isinstance(value, str):
            # A raw answer is the model's text; an answer already read has its own field.
            parsed = name.removeprefix("raw_")
            hint = (
                f" (the model's text as it answered; an answer already read goes under {parsed!r})"
                if parsed != name
                else ""
            )
            raise self.fail(f"must be a string, got {type(value).__name__}{hint}", name)
        return value

    def finite(self, value: Any, name: str) -> float:
        if not _is_number(value):
            raise self.fail(f"must be a number, got {type(value).__name__} {value!r}", name)
        return checks.number(value, source=self.source, record=self.record, field=name)

    def boxes(self, value: Any) -> list[list[float]]:
        if not isinstance(value, list):
            raise self.fail(
                f"must be a list of [x, y, width, height], got {type(value).__name__}", "boxes"
            )
        boxes = []
        for index, box in enumerate(value):
            name = f"boxes[{index}]"
            if not isinstance(box, list) or len(box) != 4:
                raise self.fail(f"must be [x, y, width, height], got {box!r}", name)
            if all(map(_is_finite_float, box)):  # as finite() gives them, without the names
                x, y, width, height = box
            else:
                x, y, width, height = (self.finite(v, f"{name}[{i}]") for i, v in enumerate(box))
            if width < 0 or height < 0:
                raise self.fail(f"width and height must not be negative, got {box!r}", name)
            if not math.isfinite((x + width) + (y + height) + width * height):
                # its far corner or area would overflow in every IoU: no box to score
                raise self.fail(
                    f"too large: its far corner or its area is past the largest float, got {box!r}",
                    name,
                )
            boxes.append([x, y, width, height])
        return boxes

    def scores(self, value: Any, n_boxes: int | None) -> list[float]:
        if not isinstance(value, list):
            raise self.fail(f"must be a list of numbers, got {type(value).__name__}", "scores")
        if all(map(_is_finite_float, value)):  # as finite() gives them, without the names
            scores = list(value)
        else:
            scores = [self.finite(v, f"scores[{i}]") for i, v in enumerate(value)]
        if n_boxes is None:
            raise self.fail("scores given without boxes", "scores")
        if len(scores) != n_boxes:
            raise self.fail(
                f"{len(scores)} scores for {n_boxes} boxes; give one score per box", "scores"
            )
        return scores

    def diagnoses(self, value: Any) -> list[str]:
        if not isinstance(value, list):
            raise self.fail(f"must be a list of strings, got {type(value).__name__}", "diagnoses")
        return [self.string(v, f"diagnoses[{i}]") for i, v in enumerate(value)]

    def input_size(self, value: Any) -> tuple[int, int]:
        return checks.image_size(value, source=self.source, record=self.record, field="input_size")


def _line_records(
    payload: Any, source: str, line: int, filenames: set[str] | None, case_ids: set[str] | None
) -> list[PredictionRecord]:
    """Validate one decoded line and split it into one record per task it answers."""
    if not isinstance(payload, dict):
        raise NovaInputError(
            f"must be a JSON object, got {type(payload).__name__}",
            source=source,
            record=f"line {line}",
        )
    present = [name for name in _UNIT_KEYS if name in payload]
    if len(present) != 1:
        raise NovaInputError(
            "needs exactly one of "
            + " or ".join(f"{name!r} ({', '.join(tasks)})" for name, tasks in _UNIT_TASKS.items()),
            source=source,
            record=f"line {line}",
            field=present[0] if present else list(_UNIT_KEYS)[-1],
        )
    key_field = present[0]
    check = _LineChecker(source, line, None)
    key = check.string(payload[key_field], key_field, allow_empty=False)
    check = _LineChecker(source, line, key)
    known = filenames if key_field == "filename" else case_ids
    if known is not None and key not in known:
        raise check.fail(unknown_key_message(key_field, key, known), key_field)
    allowed = _UNIT_KEYS[key_field]
    unknown = sorted(set(payload) - allowed)
    if unknown:
        raise check.fail(
            f"unknown key(s) {', '.join(map(repr, unknown))} on a {key_field} line; allowed: "
            + ", ".join(sorted(allowed)),
            unknown[0],
        )
    line_tasks = _UNIT_TASKS[key_field]

    # Common fields.
    task = payload.get("task")
    if task is not None:
        check.string(task, "task")
        if task not in line_tasks:
            raise check.fail(
                f"{task!r} is not a task of a {key_field} line; expected one of {line_tasks}",
                "task",
            )
    latency = payload.get("latency_s")
    if latency is not None:
        latency = check.finite(latency, "latency_s")
        if latency < 0:
            raise check.fail(f"must not be negative, got {latency}", "latency_s")
    model = check.string(payload["model"], "model") if payload.get("model") is not None else None
    error = (
        check.model_text(payload["error"], "error") if payload.get("error") is not None else None
    )
    finish_reason = payload.get("finish_reason")
    if finish_reason is not None:
        finish_reason = check.string(finish_reason, "finish_reason")
    meta = payload.get("meta")
    if meta is not None and not isinstance(meta, dict):
        raise check.fail(f"must be an object, got {type(meta).__name__}", "meta")
    status = payload.get("parse_status")
    if status is not None and not isinstance(status, (str, dict)):
        raise check.fail("must be a string or an object {task: status}", "parse_status")
    if isinstance(status, str):
        check.string(status, "parse_status")
    if isinstance(status, dict):
        for status_task, value in status.items():
            if status_task not in line_tasks:
                raise check.fail(f"unknown task {status_task!r}", f"parse_status.{status_task}")
            check.string(value, f"parse_status.{status_task}")

    tasks_here = [
        t for t in line_tasks if any(payload.get(name) is not None for name in _TASK_FIELDS[t])
    ]
    if task is not None:
        stray = [t for t in tasks_here if t != task]
        if stray:
            raise check.fail(
                f"line says task {task!r} but carries {stray[0]} fields", _TASK_FIELDS[stray[0]][0]
            )
        tasks_here = [task]
    if not tasks_here:
        if error is not None:
            raise check.fail("an error line must say which task failed", "task")
        expected = ", ".join(n for t in line_tasks for n in _TASK_FIELDS[t])
        nulls = [n for t in line_tasks for n in _TASK_FIELDS[t] if n in payload]
        if nulls:  # the field at fault is the one given as null, not the line's key
            raise check.fail(
                f"is null, so the line carries no prediction: expected one of {expected}",
                nulls[0],
            )
        raise check.fail(f"carries no prediction: expected one of {expected}", key_field)

    repairs = _box_repairs(check, payload, tasks_here)
    truncated_from = payload.get("raw_truncated_from")
    if truncated_from is not None and len(tasks_here) != 1:
        raise check.fail(
            "a line whose raw answer was cut must answer one task; give 'task'",
            "raw_truncated_from",
        )

    records: list[PredictionRecord] = []
    for current in tasks_here:
        boxes_line = current == registry.task_answered_in("boxes")
        values = _answer_values(check, payload, current)
        raw_field = _ANSWER_FIELDS[current][1]
        raw = (
            check.model_text(payload[raw_field], raw_field)
            if payload.get(raw_field) is not None
            else None
        )
        parsed_field = _ANSWER_FIELDS[current][0]
        if error is None and raw is None and parsed_field not in values:
            if raw_field in payload:  # written, as null: that field is the one to fix
                raise check.fail(
                    f"is null, and the line has no {parsed_field}: give the model's answer as "
                    f"text, or drop the line if the item was not asked",
                    raw_field,
                )
            raise check.fail(f"has no {parsed_field} and no {raw_field}", parsed_field)
        task_status = status.get(current) if isinstance(status, dict) else status
        parser_statuses = registry.TASKS[current].parse_statuses
        if task_status is not None and task_status not in parser_statuses:
            # A status no parser gives would be counted in the report's parse line as given.
            raise check.fail(
                f"{task_status!r} is not a {current} parse status "
                f"(one of {', '.join(parser_statuses)})",
                f"parse_status.{current}" if isinstance(status, dict) else "parse_status",
            )
        if raw is not None and parsed_field in values and task_status is None:
            # nova parse writes both with the parse_status it read the raw one with; without
            # it the line holds two answers and the parsed one would win unseen.
            raise check.fail(
                f"holds two answers for {current}: {parsed_field} and {raw_field}, and no "
                f"parse_status saying the first was read from the second (as nova parse "
                f"writes); keep one of them",
                f"{parsed_field}/{raw_field}",
            )
        if raw is None and parsed_field in values and "input_size" in values:
            # It rescales a raw answer's pixels; parsed boxes are already in the image's own.
            raise check.fail(
                f"applies only to a raw answer ({raw_field}, in pixels of the image the model "
                f"saw); {parsed_field} are read in pixels of the original image: drop "
                f"input_size, or give the model's answer as {raw_field}",
                "input_size",
            )
        if truncated_from is not None:
            truncated_from = _truncated_length(check, truncated_from, raw, raw_field)
        if truncated_from is not None or _too_long(values.get(parsed_field)):
            # Marked and counted as a failure; a cut answer's prefix is never taken as whole.
            values[parsed_field] = _PARSED_VALUE[parsed_field](None)
            task_status = registry.TOO_LONG
        records.append(
            PredictionRecord(
                task=current,
                key=key,
                source=source,
                line=line,
                raw=raw,
                latency_s=latency,
                model=model,
                error=error,
                parse_status=task_status,
                raw_truncated_from=truncated_from,
                boxes_dropped=repairs.get("boxes_dropped") if boxes_line else None,
                boxes_swapped=repairs.get("boxes_swapped") if boxes_line else None,
                finish_reason=finish_reason,
                **values,
            )
        )
    return records


def _box_repairs(
    check: _LineChecker, payload: Mapping[str, Any], tasks_here: Sequence[str]
) -> dict[str, int]:
    """A line's checked ``boxes_dropped`` / ``boxes_swapped``: counts beside a read box answer."""
    given = {name: payload[name] for name in _BOX_REPAIR_FIELDS if payload.get(name) is not None}
    if not given:
        return {}
    name = next(iter(given))
    boxes_task = registry.task_answered_in("boxes")
    if boxes_task not in tasks_here or payload.get(_ANSWER_FIELDS[boxes_task][1]) is None:
        raise check.fail(
            f"counts boxes the parser read in {_ANSWER_FIELDS[boxes_task][1]}, which this line "
            "does not hold",
            name,
        )
    return {
        name: checks.integer(value, minimum=0, source=check.source, record=check.record, field=name)
        for name, value in given.items()
    }


def _truncated_length(check: _LineChecker, value: Any, raw: str | None, raw_field: str) -> int:
    """A checked ``raw_truncated_from``: an integer longer than the stored prefix."""
    name = "raw_truncated_from"
    if raw is None:
        raise check.fail(f"given without {raw_field}, the prefix it describes", name)
    value = checks.integer(value, source=check.source, record=check.record, field=name)
    if value <= len(raw):
        raise check.fail(f"says the answer had {value} characters but {len(raw)} are stored", name)
    return value


def cap_raw_answer(text: str) -> tuple[str, int | None]:
    """The part of a raw answer that is stored, and its original length when it was cut.

    An answer of at most ``registry.MAX_RAW_ANSWER_CHARS`` characters is kept whole (the
    same string); a longer one keeps that many leading characters, and its length is
    returned so the line can record it as ``raw_truncated_from``. Every backend's answer
    goes through here (the runner writes its lines with it), so a runaway generation or a
    hostile server cannot fill the disk, nor make every later reader slow.

    Example:
        >>> from novabench import registry
        >>> cap_raw_answer("Glioma.")
        ('Glioma.', None)
        >>> kept, length = cap_raw_answer("x" * (registry.MAX_RAW_ANSWER_CHARS + 5))
        >>> len(kept) == registry.MAX_RAW_ANSWER_CHARS, length - registry.MAX_RAW_ANSWER_CHARS
        (True, 5)
    """
    if len(text) <= registry.MAX_RAW_ANSWER_CHARS:
        return text, None
    return text[: registry.MAX_RAW_ANSWER_CHARS], len(text)


def _answer_values(check: _LineChecker, payload: Mapping[str, Any], task: str) -> dict[str, Any]:
    """The parsed answer of ``task`` and its extra fields on a line, each checked by its kind."""
    spec = registry.TASKS[task]
    values: dict[str, Any] = {}
    for name in (spec.answer_field, *spec.extra_fields):
        if payload.get(name) is None:
            continue
        if name == "scores":  # one per box: checked against the boxes read just before
            n_boxes = len(values["boxes"]) if "boxes" in values else None
            values[name] = check.scores(payload[name], n_boxes)
        elif name in ("boxes", "diagnoses", "input_size"):
            values[name] = getattr(check, name)(payload[name])
        else:
            values[name] = check.string(payload[name], name)
    return values


def _too_many_digits(text: str) -> str:
    """Why a line with an integer too long for Python to convert cannot be read, and where."""
    limit = sys.get_int_max_str_digits()
    found = re.search(rf"\d{{{limit + 1},}}", text)
    where = f" at column {found.start() + 1}" if found else ""
    digits = f"{len(found.group())} digits" if found else "too many digits"
    return f"a number of {digits}{where}, more than the {limit} a number can have here"


def _iter_json_lines(
    path: Path, *, unfinished_line: list[PartialLine] | None = None
) -> Iterator[tuple[int, Any]]:
    """Yield ``(line number, decoded object)`` of every non-blank line; broken JSON raises.

    Lines end at ``\\n`` only (as :func:`_count_lines` counts them); a UTF-8 byte order
    mark at the start is skipped; bytes that are not UTF-8 are an error naming the line.
    With ``unfinished_line`` (a file its writer is still appending to), a last line without
    its line break is one the writer is in the middle of: it is not read but described there.
    """
    source = str(path)
    with path.open("rb") as handle:
        for number, data in enumerate(handle, start=1):
            if unfinished_line is not None and not data.endswith(b"\n"):
                if data.strip():  # only the last line can lack its break
                    unfinished_line.append(PartialLine(line=number, size=len(data)))
                return
            if number == 1 and data.startswith(UTF8_BOM):
                data = data[len(UTF8_BOM) :]
            text = decode_utf8_line(data, source=source, record=f"line {number}")
            if not text.strip():
                continue
            try:
                # Without its line break, so that an error's column is on this line.
                yield number, json.loads(text.rstrip("\r\n"))
            except RecursionError:
                raise NovaInputError(
                    "JSON nested too deeply to read", source=source, record=f"line {number}"
                ) from None
            except json.JSONDecodeError as error:
                hint = ""
                if path.name.endswith(MANIFEST_SUFFIX):
                    hint = (
                        " (this is a run manifest; pass the predictions file beside it, "
                        f"{path.name[: -len(MANIFEST_SUFFIX)]})"
                    )
                elif not text.endswith("\n"):
                    hint = " (the last line is cut off, as after an interrupted run; `nova run` repairs it on resume)"
                raise NovaInputError(
                    # json's "Unterminated string starting at" ends in "at" already.
                    f"not valid JSON: {error.msg.removesuffix(' at')} at column {error.colno}{hint}",
                    source=source,
                    record=f"line {number}",
                ) from None
            except ValueError:  # Python's int() refuses more digits than it converts safely
                raise NovaInputError(
                    _too_many_digits(text), source=source, record=f"line {number}"
                ) from None


def _add_record(
    records: dict[str, dict[str, PredictionRecord]],
    record: PredictionRecord,
    *,
    keep_answer_over_later_error: bool = False,
) -> bool:
    """Insert ``record``; True when it superseded an error line (or, with
    ``keep_answer_over_later_error``, was itself a later error set aside). Duplicates raise."""
    previous = records[record.task].get(record.key)
    if previous is not None:
        if previous.error is None:
            if (
                keep_answer_over_later_error
                and record.error is not None
                and (record.source != previous.source)
            ):
                return True  # a failed attempt in another file never replaces an answer
            raise NovaInputError(
                f"duplicate {record.task} prediction for {record.key!r}: already given at {previous.where}",
                source=record.source,
                record=f"line {record.line} ({record.key})",
                field=_key_field(record.task),
            )
        del records[record.task][
            record.key
        ]  # keep file order: the answer sits where it was written
    records[record.task][record.key] = record
    return previous is not None


PathOrPaths = str | os.PathLike | Sequence[str | os.PathLike]


def _as_paths(path: PathOrPaths) -> list[Path]:
    """One path or several, as a list of paths (a lone string is one path, not characters)."""
    if isinstance(path, (str, os.PathLike)):
        return [Path(path)]
    return [Path(p) for p in path]


def read_predictions(
    path: PathOrPaths,
    release: Any = None,
    *,
    still_written: Mapping[Path, list[PartialLine]] | None = None,
) -> PredictionSet:
    """Read and validate a predictions JSONL file, or several as one set (e.g. one per task).

    Args:
        path: the ``.jsonl`` file, or a list of them. Across files an item may be answered
            once per task, as within one file: a repeat is an error naming both files. An
            answer in any file replaces a failed attempt (an ``error`` line) in another, and a
            failed attempt never replaces an answer (both are counted in ``superseded``).
        release: a ``NovaRelease`` (or anything with ``.images`` and ``.cases()``). When
            given, unknown filenames/case ids are errors and the predictions are aligned to
            the release order, with the items lacking a prediction listed as missing.
        still_written: files another process is still appending to (a running run scored
            with ``--allow-running``): each is read up to its last complete line, and the
            line its writer is in the middle of, if any, is added to its list, not read.

    Returns:
        A :class:`PredictionSet`; its ``source`` lists the files read, comma-separated.

    Raises:
        NovaInputError: broken JSON, unknown or duplicate item, wrong type, NaN or a negative
            size, unknown key; the message names the file, line number and field.

    Example:
        >>> import json, tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> path = folder / "pred.jsonl"
        >>> _ = path.write_text('{"case_id": "case0001", "diagnoses": ["glioma"]}\\n{"case_id": "case0001"}\\n')
        >>> read_predictions(path)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: ...pred.jsonl, line 2 (case0001), field 'case_id': carries no prediction: ...
        >>> _ = (folder / "a.jsonl").write_text('{"case_id": "case0001", "diagnoses": ["glioma"]}\\n')
        >>> _ = (folder / "b.jsonl").write_text('{"filename": "case0001_001.png", "caption": "Axial T2."}\\n')
        >>> both = read_predictions([folder / "a.jsonl", folder / "b.jsonl"])
        >>> both.diagnoses(), both.captions()
        ([['glioma']], ['Axial T2.'])
    """
    paths = _as_paths(path)
    if not paths:
        raise NovaInputError("no predictions file given", field="predictions")
    records, superseded = _read_records(
        paths, release, keep_answer_over_later_error=True, still_written=still_written
    )
    return _prediction_set(", ".join(map(str, paths)), records, release, superseded)


def _read_records(
    paths: Sequence[Path],
    release: Any,
    *,
    keep_answer_over_later_error: bool,
    lines: list[Any] | None = None,
    still_written: Mapping[Path, list[PartialLine]] | None = None,
) -> tuple[dict[str, dict[str, PredictionRecord]], int]:
    """Every record of ``paths`` in file order (the one reading loop of reader and merger).

    Decoded lines are appended to ``lines`` when given, so a merger can copy them verbatim.
    A path in ``still_written`` is read up to its last complete line; the line its writer is
    in the middle of, if any, is described in that path's list instead.
    """
    filenames = case_ids = None
    if release is not None:
        release_filenames, release_case_ids = _release_keys(release)
        filenames, case_ids = set(release_filenames), set(release_case_ids)
    records: dict[str, dict[str, PredictionRecord]] = {task: {} for task in TASKS}
    superseded = 0
    for path in paths:
        if not path.is_file():
            raise NovaInputError("no such predictions file", source=str(path))
        try:
            unfinished = (still_written or {}).get(path)
            for number, payload in _iter_json_lines(path, unfinished_line=unfinished):
                line_records = _line_records(payload, str(path), number, filenames, case_ids)
                for record in line_records:
                    superseded += _add_record(
                        records, record, keep_answer_over_later_error=keep_answer_over_later_error
                    )
                if lines is not None:
                    lines.append(payload)
        except NovaInputError as error:
            # What is wrong with the whole file, when it is that, before the line's own error.
            _refuse_wrong_file(path, release, error)
            if filenames is not None and str(error.message).startswith("unknown "):
                _refuse_another_release(path, filenames, case_ids or set())
            raise
    return records, superseded


#: How many leading characters of a fingerprint a message shows (as ``git`` shows commits).
_SHORT_FINGERPRINT = 8


def _refuse_wrong_file(path: Path, release: Any, error: NovaInputError) -> None:
    """Name the file's own mistake, if any, when one of its lines failed: a nova report passed
    for predictions, or a run whose manifest records another release than ``release``.

    Returns when neither holds; a manifest that cannot be read leaves the line's error.
    """
    if is_novabench_report(path):
        raise NovaInputError(
            "this is a nova report, not predictions: pass the run file (the .jsonl that "
            "nova run wrote)",
            source=str(path),
        ) from None
    current = getattr(release, "fingerprint", None)
    if not callable(current):
        return
    try:
        manifest = RunManifest.read(path)
    except NovaInputError:
        return  # the line's error is still the truest thing to say
    recorded = manifest.release_fingerprint if manifest is not None else None
    if recorded is None:
        return
    fingerprint = str(current())
    if recorded == fingerprint:
        return
    folder = getattr(release, "root", None)
    where = f"the release in {folder}" if folder is not None else "this release"
    raise NovaInputError(
        f"the run was made for another release: its manifest records release fingerprint "
        f"{recorded[:_SHORT_FINGERPRINT]}, {where} has {fingerprint[:_SHORT_FINGERPRINT]}; "
        f"score it against the data it was run on (first problem: {error.record or 'file'}: "
        f"{error.message})",
        source=str(path),
        field="release.fingerprint",
    ) from None


#: Unknown items from which a file that is mostly unknown is said to be another release's.
_FOREIGN_FILE_LINES = 5


def _refuse_another_release(path: Path, filenames: set[str], case_ids: set[str]) -> None:
    """Say that a file belongs to another release when most of its items are not in this one.

    Called at the first unknown item; returns (and that line's own error follows) when most
    items are this release's: a stray line is that line's fault, not the file's.
    """
    known = unknown = 0
    try:
        for _, payload in _iter_json_lines(path):
            key = (
                payload.get("filename", payload.get("case_id"))
                if isinstance(payload, dict)
                else None
            )
            if isinstance(key, str):
                known += key in filenames or key in case_ids
                unknown += not (key in filenames or key in case_ids)
    except NovaInputError:
        pass  # a broken line further on: judge by the lines before it
    # Most of the file, and more than a handful of lines (a few could be typos).
    if unknown > known and unknown >= _FOREIGN_FILE_LINES:
        raise NovaInputError(
            f"{unknown} of {known + unknown} lines name images or cases this release does not "
            "have: the file was made for another release (or another version of NOVA); score "
            "it against the data it was run on",
            source=str(path),
        )


def _prediction_set(
    source: str,
    records: dict[str, dict[str, PredictionRecord]],
    release: Any,
    superseded: int,
    *,
    sort_keys: bool = False,
) -> PredictionSet:
    """A set over ``records``: in release order when a release is given, else in file order
    (or sorted, for merged shards whose file order means nothing)."""
    if release is not None:
        filenames, case_ids = _release_keys(release)
        return PredictionSet(source, records, filenames, case_ids, True, superseded)
    image_keys = list(dict.fromkeys(key for task in IMAGE_TASKS for key in records[task]))
    case_keys = list(dict.fromkeys(key for task in CASE_TASKS for key in records[task]))
    if sort_keys:
        image_keys, case_keys = sorted(image_keys), sorted(case_keys)
    return PredictionSet(source, records, image_keys, case_keys, False, superseded)


# --------------------------------------------------------------------------- writing


def _record_payload(record: PredictionRecord) -> dict[str, Any]:
    """The JSON object of one record (one task per line, so lines stay independent)."""
    spec = registry.TASKS[record.task]
    payload: dict[str, Any] = {spec.key_field: record.key}
    payload["task"] = record.task
    # The answer and its companions, the raw text, then what the model saw (the files' key order).
    answer = [spec.answer_field, *(f for f in spec.extra_fields if f != "input_size")]
    seen = ["input_size"] if "input_size" in spec.extra_fields else []
    for name in (*answer, spec.raw_field, *seen):
        value = record.raw if name == spec.raw_field else getattr(record, name)
        if value is not None:
            payload[name] = list(value) if isinstance(value, tuple) else value
        if name == spec.raw_field and record.raw_truncated_from is not None:
            payload["raw_truncated_from"] = record.raw_truncated_from
    for name in (
        "parse_status",
        *_BOX_REPAIR_FIELDS,
        "latency_s",
        "model",
        "error",
        "finish_reason",
    ):
        if getattr(record, name) is not None:
            payload[name] = getattr(record, name)
    return payload


_SURROGATE = re.compile("[\ud800-\udfff]")


def _dump(payload: Mapping[str, Any]) -> str:
    # allow_nan=False: a NaN must never reach a file that the reader would then refuse.
    text = json.dumps(payload, ensure_ascii=False, allow_nan=False, default=_plain)
    if _SURROGATE.search(text):  # a lone surrogate has no UTF-8: keep it as its \u escape
        text = json.dumps(payload, ensure_ascii=True, allow_nan=False, default=_plain)
    return text + "\n"


def _plain(value: Any) -> Any:
    """A numpy scalar or array (checked numbers from user code) as the JSON value it holds."""
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def write_predictions(
    path: str | os.PathLike, predictions: PredictionSet | Iterable[Mapping[str, Any]]
) -> int:
    """Append predictions to a JSONL file, one line each, flushed line by line.

    Args:
        path: the ``.jsonl`` file; created when absent, appended to otherwise (nothing
            already written is ever rewritten).
        predictions: a :class:`PredictionSet` (written one task per line) or plain line
            objects such as ``{"filename": ..., "boxes": [...]}``.

    Returns:
        The number of lines written.

    Example:
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "pred.jsonl"
        >>> write_predictions(path, [{"filename": "case0001_001.png", "caption": "Axial FLAIR."}])
        1
        >>> read_predictions(path).captions()
        ['Axial FLAIR.']
    """
    path = Path(path)
    if isinstance(predictions, PredictionSet):
        items: Iterable[Mapping[str, Any]] = (
            _record_payload(record)
            for task in TASKS
            for record in predictions.records[task].values()
        )
    else:
        items = predictions
    path.parent.mkdir(parents=True, exist_ok=True)
    line = _count_lines(path)
    written = 0
    with path.open("a", encoding="utf-8") as handle:
        for payload in items:
            line += 1
            # Refuse a bad line before it reaches the file, naming the line it would have been.
            _line_records(payload, str(path), line, None, None)
            _append_line(handle, payload)
            written += 1
    return written


def _count_lines(path: Path) -> int:
    """Number of complete lines already in ``path`` (0 when it does not exist)."""
    if not path.exists():
        return 0
    with path.open("rb") as handle:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 20), b""))


def _append_line(handle: TextIO, payload: Mapping[str, Any]) -> None:
    """Write one line and push it to the OS, so a crash loses at most the line being written."""
    handle.write(_dump(payload))
    handle.flush()
