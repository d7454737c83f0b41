"""Raw answers read into parsed ones (:func:`parse_raw`, what ``nova parse`` and scoring run),
and a parsed line checked against its raw answer: stored and fresh readings must agree
(numbers up to a JSON writer's round-off), or the line is refused, naming the field and the
box conventions that would read it as stored.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from novabench import registry
from novabench.errors import NovaInputError
from novabench.progress import progress_bar
from novabench.run.defaults import CONVENTIONS
from novabench.run.records import (
    _BOX_REPAIR_FIELDS,
    _PARSED_VALUE,
    CASE_TASKS,
    TASKS,
    PredictionRecord,
    PredictionSet,
    _key_field,
    _release_keys,
    _too_long,
    unknown_key_message,
)

__all__ = ["moved_lines_phrases", "parse_raw", "reparsed_lines"]


def parse_raw(
    predictions: PredictionSet,
    release: Any,
    *,
    box_convention: str = "auto",
    prompt_convention: str | None = None,
    parsed_with: Mapping[str, tuple[str, str | None]] | None = None,
    reparse: bool = False,
) -> PredictionSet:
    """Parse every raw answer into boxes, captions and diagnoses; counts land in ``parse_status``.

    Records that already hold a parsed answer are kept as they are; when they hold their
    raw answer too (as ``nova parse`` writes them), it is read again and must give the same
    parsed answer, status and box repairs. Localisation answers are
    rescaled to pixels of the original image, using the size of the image the model saw
    (``input_size``) when the answer is in absolute pixels of that input.

    Args:
        predictions: a set read with :func:`read_predictions`.
        release: the release the predictions answer (image sizes come from it).
        box_convention: passed to ``parse_localization(convention=...)``.
        prompt_convention: under ``box_convention="auto"``, the convention the run's prompt
            asked for (``novabench.run.prompts.prompt_box_convention`` of its manifest);
            None when no prompt on record fixes one: bare box lists are then
            ``ambiguous_convention``.
        parsed_with: per predictions file (a record's ``source``), the box convention and
            prompt order its ``nova parse`` recorded (its manifest's ``parsed``), under which
            its parsed answers are read again; a file not named is read again with
            ``box_convention`` and ``prompt_convention``.
        reparse: a parsed line whose fields are not what its raw answer reads as takes the
            raw answer's reading instead of being refused (``nova parse PARSED.jsonl
            --reparse``, which writes a new file and says how many lines it read again:
            :func:`reparsed_lines` finds them). Never the default: a number must not change
            without the user choosing it.

    Returns:
        A new :class:`PredictionSet` aligned to the release; ``parse_counts(task)`` gives the
        parse statistics. A localisation answer with a box reaching past the image (kept as
        given) gets the status ``ok_out_of_image`` (a frequent sign of a wrong
        ``box_convention``); an ``ok_order_from_keys`` answer keeps its status (its boxes
        past the image are counted by :func:`box_answer_summary` all the same).

    Raises:
        NovaInputError: ``box_convention`` is not one of ``CONVENTIONS``, or a line's parsed
            answer, ``parse_status`` or box repairs are not what its raw answer reads as
            (the message names the first such line, its item, task and field, how many lines
            differ, and the command that reads them again), unless ``reparse``.

    Example:
        >>> import json, tempfile, pathlib, types
        >>> from novabench.run.predictions import read_predictions
        >>> image = types.SimpleNamespace(filename="case0001_001.png", case_id="case0001", width=480, height=480)
        >>> release = types.SimpleNamespace(images=[image], cases=lambda: [])
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "raw.jsonl"
        >>> _ = path.write_text(json.dumps({"filename": "case0001_001.png", "raw_caption": "Axial T2."}) + "\\n")
        >>> parsed = parse_raw(read_predictions(path, release), release)
        >>> parsed.captions(), parsed.parse_counts("captioning")
        (['Axial T2.'], {'ok': 1})
    """
    if box_convention not in CONVENTIONS:  # refused up front, even when no answer is raw
        raise NovaInputError(
            f"box_convention={box_convention!r}: unknown box convention; choose one of "
            f"{', '.join(CONVENTIONS)}",
            field="box_convention",
        )
    sizes = {image.filename: (int(image.width), int(image.height)) for image in release.images}
    aligned = predictions if predictions.aligned else _realign(predictions, release)
    records: dict[str, dict[str, PredictionRecord]] = {task: {} for task in TASKS}
    # Lines whose parsed fields are not what their raw answer reads as: all of them are
    # counted before the first is refused (the user learns the size of the problem at once).
    differing: list[tuple[PredictionRecord, PredictionRecord, str, bool]] = []
    for task in TASKS:
        spec = registry.TASKS[task]
        parser: list[Any] = []  # loaded at the first raw answer: parsed predictions never import it
        answers = aligned.records[task].items()
        for key, record in progress_bar(answers, desc=f"parsing {task}", unit="answer"):
            if record.error is not None or record.raw is None:
                records[task][key] = record
                continue
            if not parser:
                parser.append(spec.load_parser())
            if record.is_parsed:
                # Written by nova parse beside its raw answer: the parsed fields must be what
                # that answer reads as, under the convention that parse recorded.
                recorded = (parsed_with or {}).get(str(record.source))
                convention, order = recorded or (box_convention, prompt_convention)
                fresh = _read_raw_answer(record, spec, parser[0], sizes, convention, order)
                if not _parse_agrees(record, fresh):
                    if reparse:  # asked for: the raw answer's reading, said by the caller
                        records[task][key] = fresh
                        continue
                    differing.append((record, fresh, convention, recorded is not None))
                    continue
                # Equal up to a JSON writer's round-off: the raw answer's own reading is
                # scored, so how the file was written cannot move a score.
                answer_field = spec.answer_field
                records[task][key] = replace(
                    record,
                    **{answer_field: getattr(fresh, answer_field)},
                    parse_error=fresh.parse_error,
                    boxes_dropped_why=fresh.boxes_dropped_why,
                )
                continue
            records[task][key] = _read_raw_answer(
                record, spec, parser[0], sizes, box_convention, prompt_convention
            )
    if differing:
        first, fresh, convention, was_recorded = differing[0]
        others = () if was_recorded else _conventions_reading_as_stored(first, sizes)
        option = ""
        if not was_recorded and "input_size" in registry.TASKS[first.task].extra_fields:
            # The way out must read as the kept parse did: the first of the differing lines
            # (a few dozen looked at) that some explicit convention reads as stored names it.
            found = others or next(
                (
                    conventions
                    for record, _, _, recorded in differing[1:_LINES_SEARCHED_FOR_CONVENTION]
                    if not recorded
                    and (conventions := _conventions_reading_as_stored(record, sizes))
                ),
                (),
            )
            option = _reparse_convention(convention, found)
        _refuse_disagreement(
            first,
            fresh,
            convention,
            was_recorded,
            others,
            [(r, f) for r, f, _, _ in differing],
            option,
        )
    return replace(aligned, records=records)


def reparsed_lines(
    read: PredictionSet, parsed: PredictionSet
) -> list[tuple[PredictionRecord, list[str]]]:
    """The parsed lines of ``read`` that :func:`parse_raw` (``reparse=True``) gave another
    reading in ``parsed``, each with the fields that moved, in file order.

    Example:
        >>> from novabench.run.records import PredictionSet
        >>> stored = PredictionRecord(task="localization", key="case0001_001.png",
        ...     source="old.jsonl", line=1, raw="[nan, 1, 2, 3]", boxes=[],
        ...     parse_status="unparseable")
        >>> def one(record):
        ...     records = {task: {} for task in TASKS}
        ...     records["localization"][record.key] = record
        ...     return PredictionSet("old.jsonl", records, [record.key], [])
        >>> fresh = replace(stored, parse_status="invalid_boxes", boxes_dropped=1)
        >>> [(r.line, fields) for r, fields in reparsed_lines(one(stored), one(fresh))]
        [(1, ['parse_status'])]
        >>> reparsed_lines(one(stored), one(stored))
        []
    """
    moved = []
    for task in TASKS:
        after = parsed.records[task]
        for key, before in read.records[task].items():
            fresh = after.get(key)
            if fresh is None or not before.is_parsed or before.raw is None:
                continue
            fields = _fields_differing(before, fresh)
            if fields:
                moved.append((before, fields))
    return sorted(moved, key=lambda item: (str(item[0].source), item[0].line or 0))


def _read_raw_answer(
    record: PredictionRecord,
    spec: Any,
    parser: Callable[..., Any],
    sizes: Mapping[str, tuple[int, int]],
    box_convention: str,
    prompt_convention: str | None,
) -> PredictionRecord:
    """``record`` with its raw answer read: the parsed answer, its status and box repairs."""
    raw = record.raw or ""  # called for records with a raw answer only
    cut = record.raw_truncated_from is not None  # only a prefix was stored
    if cut or len(raw) > registry.MAX_RAW_ANSWER_CHARS:  # marked, not parsed
        empty = _PARSED_VALUE[spec.answer_field](None)
        length = record.raw_truncated_from if cut else len(raw)
        return replace(
            record,
            **{spec.answer_field: empty},
            parse_status=registry.TOO_LONG,
            parse_error=f"{length} characters, past the parser's limit of "
            f"{registry.MAX_RAW_ANSWER_CHARS}: not parsed",
        )
    options: dict[str, Any] = {}
    if "input_size" in spec.extra_fields:  # answers in pixels of the image the model saw
        options = {
            "image_size": sizes[record.key],
            "input_size": record.input_size,
            "convention": box_convention,
            "prompt_convention": prompt_convention if box_convention == "auto" else None,
        }
    parsed = parser(raw, **options)
    status = _status_text(parsed.status)
    if status == "ok" and "ok_out_of_image" in spec.parse_statuses and parsed.n_out_of_range:
        status = "ok_out_of_image"  # often a wrong --box-convention: counted, not hidden
    answer = _PARSED_VALUE[spec.answer_field](getattr(parsed, spec.answer_field))
    error = getattr(parsed, "error", None)
    if _too_long(answer):
        answer, status = _PARSED_VALUE[spec.answer_field](None), registry.TOO_LONG
        error = (
            f"the {spec.answer_field} read run past {registry.MAX_CAPTION_CHARS} characters: "
            "not scored"
        )
    repairs: dict[str, Any] = {}
    if isinstance(getattr(parsed, "n_degenerate_dropped", None), int):  # a box answer
        repairs = {
            "boxes_dropped": parsed.n_degenerate_dropped,
            "boxes_swapped": parsed.n_swapped,
            "boxes_dropped_why": dict(getattr(parsed, "dropped_why", None) or {}),
        }
    return replace(
        record,
        **{spec.answer_field: answer},
        parse_status=status,
        parse_error=None if error is None else str(error),
        **repairs,
    )


def _short(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


# A parsed file written again by another JSON writer keeps fewer digits: pandas' to_json
# keeps 10 (an error up to 5e-10 of the value), others 10 decimals (5e-11 px). Values that
# agree within 1e-9 of themselves or 1e-6 px are one reading: the raw answer's own is then
# scored, so nothing let through here moves a score, and no edit that matters (a box moved
# by a pixel, or by a thousandth of one) is that small.
_ROUNDOFF_RELATIVE = 1e-9
_ROUNDOFF_PIXELS = 1e-6


def _agree(stored: Any, fresh: Any) -> bool:
    """Whether a parsed value is what the raw answer reads as, numbers up to round-off.

    Example:
        >>> _agree([[196.8, 238.08, 23.04, 20.16]], [[196.8, 238.08, 23.039999999999992, 20.16]])
        True
        >>> _agree([[196.8, 238.08, 23.04, 20.16]], [[196.8, 238.08, 23.05, 20.16]])
        False
    """
    numbers = (int, float)
    if isinstance(stored, numbers) and isinstance(fresh, numbers):
        if isinstance(stored, bool) or isinstance(fresh, bool):
            return stored is fresh
        return math.isclose(stored, fresh, rel_tol=_ROUNDOFF_RELATIVE, abs_tol=_ROUNDOFF_PIXELS)
    if isinstance(stored, list) and isinstance(fresh, list):
        return len(stored) == len(fresh) and all(map(_agree, stored, fresh))
    return bool(stored == fresh)


def _compared_fields(stored: PredictionRecord) -> list[str]:
    """The fields of a parsed line its raw answer must give again."""
    fields_to_compare = [registry.TASKS[stored.task].answer_field, "parse_status"]
    return fields_to_compare + [  # counts an older nova parse did not write are not compared
        name for name in _BOX_REPAIR_FIELDS if getattr(stored, name) is not None
    ]


def _fields_differing(stored: PredictionRecord, fresh: PredictionRecord) -> list[str]:
    """The compared fields of a parsed line that its raw answer does not give again."""
    return [
        name
        for name in _compared_fields(stored)
        if not _agree(getattr(stored, name), getattr(fresh, name))
    ]


def _parse_agrees(stored: PredictionRecord, fresh: PredictionRecord) -> bool:
    """Whether a parsed line holds what its raw answer reads as (numbers up to round-off)."""
    return not _fields_differing(stored, fresh)


def _conventions_reading_as_stored(
    stored: PredictionRecord, sizes: Mapping[str, tuple[int, int]]
) -> tuple[str, ...]:
    """The explicit box conventions under which a line's raw answer reads as stored."""
    spec = registry.TASKS[stored.task]
    if "input_size" not in spec.extra_fields:  # not a box answer: no convention reads it
        return ()
    parser = spec.load_parser()
    return tuple(
        convention
        for convention in CONVENTIONS
        if convention != "auto"
        and _parse_agrees(stored, _read_raw_answer(stored, spec, parser, sizes, convention, None))
    )


def _refuse_disagreement(
    stored: PredictionRecord,
    fresh: PredictionRecord,
    convention: str,
    recorded: bool,
    reading_as_stored: Sequence[str] = (),
    lines_differing: Sequence[tuple[PredictionRecord, PredictionRecord]] = (),
    reparse_option: str = "",
) -> None:
    """Refuse a line whose parsed fields or ``parse_status`` are not what its raw answer
    reads as (hand-edited, or parsed by another parser): one of the two would be scored
    unseen. Without a recorded parse, the raw answer was read with this evaluation's box
    convention (the default unless chosen), which the message says, naming
    ``--box-convention`` and the conventions that read it as stored.

    ``lines_differing`` holds every line that disagrees (``stored`` first): the message counts
    them, by field and file, and names the one command that reads them all again, with
    ``reparse_option`` (a ``--box-convention``, see :func:`_reparse_convention`).

    Raises:
        NovaInputError: naming the file, line and item, the task and the field.
    """
    from novabench.errors import BOX_CONVENTION

    spec = registry.TASKS[stored.task]
    answer_field = spec.answer_field
    differing = _fields_differing(stored, fresh)[0]
    boxed = "input_size" in spec.extra_fields
    under = f" under box convention {convention}" if boxed else ""
    why: list[Any] = [" (edited, or parsed by another version)"]
    if boxed and not recorded:
        # No manifest says how nova parse read it: "another version" may only be another
        # convention, which the user can name.
        read_as_stored = (
            f"; {' and '.join(reading_as_stored)} read{'s' if len(reading_as_stored) == 1 else ''}"
            f" {spec.raw_field} as stored"
            if reading_as_stored
            else ""
        )
        why = [
            f": no run manifest beside the file records the box convention nova parse read it "
            f"with, so {spec.raw_field} was read again with {convention}; if it was parsed "
            "with another, pass that one (",
            BOX_CONVENTION,
            f"){read_as_stored}",
        ]
    # What describes the raw answer goes with it (the reader refuses it alone).
    with_raw = [spec.raw_field] + [
        name
        for name in ("input_size", "raw_truncated_from", *_BOX_REPAIR_FIELDS)
        if getattr(stored, name, None) is not None
    ]
    raise NovaInputError(
        (
            f"{stored.task}: {differing} {_short(getattr(stored, differing))} is not what "
            f"{spec.raw_field} reads as{under}: {_short(getattr(fresh, differing))}",
            *why,
            f"; drop {answer_field} and parse_status to have {spec.raw_field} read again, or "
            f"drop {', '.join(with_raw)} to score {answer_field} as given",
            _differing_phrase(stored, lines_differing, reparse_option),
        ),
        source=stored.source,
        record=f"line {stored.line} ({stored.key})",
        field=differing,
    )


#: How many differing lines a refusal reads again under every convention, looking for the one
#: the kept parse used (each costs one parse per convention).
_LINES_SEARCHED_FOR_CONVENTION = 50


def moved_lines_phrases(
    moved: Sequence[tuple[PredictionRecord, Sequence[str]]],
) -> tuple[str, dict[str, str]]:
    """How many lines each field moved in (``"parse_status 2, boxes_dropped 1"``) and, per
    file, which lines (``"lines 1, 4"``, the first eight then ``...``), for lines whose
    fields are not what their raw answer reads as (:func:`reparsed_lines`' pairs).

    Example:
        >>> from novabench.run.records import PredictionRecord
        >>> def line(n):
        ...     return PredictionRecord(task="localization", key=f"case0001_00{n}.png",
        ...         source="old.jsonl", line=n, raw="[nan, 1, 2, 3]", boxes=[])
        >>> moved_lines_phrases([(line(1), ["parse_status"]),
        ...                      (line(4), ["parse_status", "boxes_dropped"])])
        ('parse_status 2, boxes_dropped 1', {'old.jsonl': 'lines 1, 4'})
    """
    fields: dict[str, int] = {}
    lines: dict[str, list[int]] = {}
    for record, names in moved:
        for name in names:
            fields[name] = fields.get(name, 0) + 1
        lines.setdefault(str(record.source), []).append(int(record.line or 0))
    by_field = ", ".join(f"{name} {n}" for name, n in fields.items())
    return by_field, {
        source: f"line{'s' if len(numbers) > 1 else ''} "
        f"{', '.join(map(str, numbers[:8]))}{', ...' if len(numbers) > 8 else ''}"
        for source, numbers in lines.items()
    }


def _reparse_convention(convention: str, reading_as_stored: Sequence[str]) -> str:
    """The ``--box-convention`` a suggested ``--reparse`` of a file without a recorded parse
    must carry: without it the raw answers are read with ``auto``, which may read other
    boxes than the parse the user kept did (and so move a score the user did not choose).
    The convention this evaluation chose, else the one that reads the first line as stored,
    else a name for the user to fill in.

    Example:
        >>> _reparse_convention("xyxy_pixel", ["protocol"])
        ' --box-convention xyxy_pixel'
        >>> _reparse_convention("auto", ["protocol", "qwen"])
        ' --box-convention protocol'
        >>> _reparse_convention("auto", [])
        ' --box-convention THE_ONE_IT_WAS_PARSED_WITH'
    """
    if convention != "auto":
        return f" --box-convention {convention}"
    if reading_as_stored:
        return f" --box-convention {reading_as_stored[0]}"
    return " --box-convention THE_ONE_IT_WAS_PARSED_WITH"


def _differing_phrase(
    stored: PredictionRecord,
    differing: Sequence[tuple[PredictionRecord, PredictionRecord]],
    convention_option: str = "",
) -> str:
    """How many lines disagree with their raw answer, by field and file, and the command
    that reads every raw answer again into a new file ("" without the list), carrying
    ``convention_option`` (see :func:`_reparse_convention`; "" when the file's manifest
    recorded how it was parsed, which ``--reparse`` reads).

    Example:
        >>> from novabench.run.records import PredictionRecord
        >>> def line(n, status):
        ...     return PredictionRecord(task="localization", key=f"case0001_00{n}.png",
        ...         source="old.jsonl", line=n, raw="[nan, 1, 2, 3]", boxes=[],
        ...         parse_status=status)
        >>> pairs = [(line(1, "unparseable"), line(1, "invalid_boxes")),
        ...          (line(4, "unparseable"), line(4, "invalid_boxes"))]
        >>> print(_differing_phrase(pairs[0][0], pairs))  # doctest: +NORMALIZE_WHITESPACE
        ; 2 lines differ from what their raw answer reads as today (parse_status 2; old.jsonl:
        lines 1, 4): to score what every raw answer reads as, write a new file with
        `nova parse old.jsonl --reparse --data RELEASE --out NEW.jsonl`, or run nova parse on the
        raw file again
    """
    if not differing:
        return ""
    by_field, lines = moved_lines_phrases(
        [(before, _fields_differing(before, after)) for before, after in differing]
    )
    where = "; ".join(f"{source}: {numbers}" for source, numbers in lines.items())
    count = len(differing)
    return (
        f"; {count} line{'s differ' if count > 1 else ' differs'} from what "
        f"{'their' if count > 1 else 'its'} raw answer reads as today ({by_field}; {where}): "
        "to score what every raw answer reads as, write a new file with `nova parse "
        f"{' '.join(lines) if len(lines) > 1 else stored.source} --reparse"
        f"{convention_option} --data RELEASE --out NEW.jsonl`, or run nova parse on the raw "
        "file again"
    )


def _status_text(status: Any) -> str:
    """A parser status as plain text (enums contribute their value)."""
    return str(getattr(status, "value", status))


def _realign(predictions: PredictionSet, release: Any) -> PredictionSet:
    """Align a set read without a release, checking every key belongs to it."""
    filenames, case_ids = _release_keys(release)
    known = {task: set(case_ids if task in CASE_TASKS else filenames) for task in TASKS}
    for task in TASKS:
        key_field = _key_field(task)
        for key, record in predictions.records[task].items():
            if key not in known[task]:
                raise NovaInputError(
                    unknown_key_message(key_field, key, known[task]),
                    source=record.source,
                    record=f"line {record.line}",
                    field=key_field,
                )
    return replace(predictions, filenames=filenames, case_ids=case_ids, aligned=True)
