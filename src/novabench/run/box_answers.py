"""Box answers beyond their statuses: what a report and ``nova parse`` say about them.

:func:`box_answer_summary` (the localisation task's ``answer_summary`` hook) counts boxes past
their image, the parser's repairs, answers left ``ambiguous_convention`` and the conventions
that would read them, and reads answers past their image or confined to a corner again
under every explicit convention. :func:`labelled_lines_read_y_first`,
:func:`assumed_box_order_record` and :func:`recorded_y_first_reads` count the labelled lines
read in the protocol's y-first order by assumption, and carry that count through a parsed
file's manifest.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from novabench import registry
from novabench.errors import NovaInputError
from novabench.run.defaults import CONVENTIONS, CUSTOM_PROMPT
from novabench.run.records import _BOX_REPAIR_FIELDS, PredictionRecord, PredictionSet

__all__ = [
    "UNRECORDED_PARSE",
    "assumed_box_order_record",
    "box_answer_summary",
    "labelled_lines_read_y_first",
    "recorded_y_first_reads",
]


def box_answer_summary(predictions: PredictionSet, release: Any) -> dict[str, Any]:
    """What a report says about the box answers beyond their statuses.

    Counts the boxes that reach past their image (raw and already-parsed answers alike:
    both are scored as given); the boxes the parser dropped from an answer (zero width or
    height, or a size past a float: not scored; an answer of such boxes only is
    ``invalid_boxes``) and those whose corners it put in order, each with the answers
    concerned (the dropped boxes per reason, most first, when the parser read every answer
    that dropped some here: ``boxes_dropped_by_reason``, else None, the file recording the
    count only), and the answers parsed earlier by a ``nova parse`` that did not record
    these counts (``box_repairs_unrecorded``: their boxes are scored as parsed, their drops
    and swaps unknown); and the answers left unread as ``ambiguous_convention``
    with the ``--box-convention`` values that would read them (from their raw text). The
    answers with a box past the image that keep their raw text are read again under each
    explicit convention: ``inside_with`` counts, per convention, those whose every box
    then lies inside the image (computed, so a warning can name what fits, not guess).

    Args:
        predictions: a parsed, aligned set (:func:`parse_raw`).
        release: the release it answers (image sizes).

    Returns:
        ``{"boxes_out_of_image": int, "answers_out_of_image": int, "boxes_dropped": int,
        "answers_with_boxes_dropped": int, "boxes_dropped_by_reason": {"with a value that is
        not a finite number": int, ...} or None, "boxes_swapped": int,
        "answers_with_boxes_swapped": int, "box_repairs_unrecorded": int, "ambiguous_convention": int, "readable_with": {"protocol|xyxy_norm1000": int, ...},
        "out_of_image_reread": int, "inside_with": {"xyxy_norm1000": int, ...}}``
        (``readable_with`` keys join the conventions with ``|``; ``""`` for none;
        ``out_of_image_reread``: the answers past the image read again; ``inside_with``:
        conventions that bring at least one of them inside, most first; ``qwen`` is left
        out, its numbers being ``xyxy_pixel``'s).

    Example:
        >>> import types
        >>> image = types.SimpleNamespace(filename="case0001_001.png", case_id="case0001", width=480, height=480)
        >>> release = types.SimpleNamespace(images=[image], cases=lambda: [])
        >>> record = PredictionRecord("localization", "case0001_001.png", "p.jsonl", 1,
        ...                           boxes=[[400.0, 10.0, 100.0, 50.0]])
        >>> aligned = PredictionSet("p.jsonl", {"localization": {"case0001_001.png": record},
        ...     "captioning": {}, "diagnosis": {}}, ["case0001_001.png"], [], aligned=True)
        >>> box_answer_summary(aligned, release)["boxes_out_of_image"]
        1

        Qwen3-VL's ``bbox_2d`` in 0..1000, read as pixels by ``auto``, fits once read as
        0..1000 (x first, or y first: the numbers cannot tell):

        >>> raw = '[{"bbox_2d": [100, 700, 300, 900]}]'
        >>> as_pixels = PredictionRecord("localization", "case0001_001.png", "p.jsonl", 1,
        ...     boxes=[[100.0, 700.0, 200.0, 200.0]], raw=raw, parse_status="ok_out_of_image")
        >>> aligned.records["localization"]["case0001_001.png"] = as_pixels
        >>> summary = box_answer_summary(aligned, release)
        >>> summary["out_of_image_reread"], summary["inside_with"]
        (1, {'protocol': 1, 'xyxy_norm1000': 1})
    """
    from novabench.checks import box_inside_image
    from novabench.tasks.localization import box_reach, corner_confinement

    task = registry.task_answered_in("boxes")
    sizes = {image.filename: (int(image.width), int(image.height)) for image in release.images}
    boxes_out = answers_out = ambiguous = reread = unrecorded = 0
    repaired: Counter[str] = Counter()
    # Dropped boxes per reason, known only for answers the parser read in this process.
    dropped_why: Counter[str] | None = Counter()
    readable: Counter[str] = Counter()
    inside: Counter[str] = Counter()
    for key, record in predictions.records[task].items():
        for name in _BOX_REPAIR_FIELDS:
            count = getattr(record, name) or 0
            repaired[name] += count
            repaired[f"answers_with_{name}"] += bool(count)
        unrecorded += record.boxes_dropped is None and _read_by_a_parser(record)
        if record.boxes_dropped and dropped_why is not None:
            why = record.boxes_dropped_why
            if why is None or sum(why.values()) != record.boxes_dropped:
                dropped_why = None  # read by an earlier nova parse: the reasons are unknown
            else:
                dropped_why.update(why)
        outside = sum(not box_inside_image(box, sizes[key]) for box in record.boxes or [])
        boxes_out += outside
        answers_out += bool(outside)
        if outside and record.raw is not None and record.raw_truncated_from is None:
            reread += 1
            inside.update(_conventions_inside(record, sizes[key]))
        if record.parse_status == "ambiguous_convention":
            ambiguous += 1
            from novabench.run.parsers.boxes import parse_localization  # parsed runs never load it

            parsed = parse_localization(record.raw, image_size=sizes[key])
            if parsed.status != "ambiguous_convention":  # labelled lines a custom prompt left open
                parsed = parse_localization(
                    record.raw, image_size=sizes[key], prompt_convention=CUSTOM_PROMPT
                )
            readable["|".join(parsed.readable_with)] += 1
    keys = list(predictions.records[task])
    reach = box_reach(
        [predictions.records[task][key].boxes or [] for key in keys], [sizes[key] for key in keys]
    )
    # The gold of the answered images, confined alike, explains confined answers.
    gold = {image.filename: getattr(image, "boxes", None) or [] for image in release.images}
    answered = [key for key in keys if predictions.records[task][key].boxes]
    gold_reach = box_reach(
        [gold.get(key) or [] for key in answered], [sizes[key] for key in answered]
    )
    confined = corner_confinement(reach, gold_reach)
    spread: dict[str, int] = {}
    confined_reread = 0
    if confined:  # rare: only then is every answer read again
        confined_reread, spread = _conventions_spreading(predictions.records[task], sizes)
    return {
        "answers_with_boxes": reach["answers_with_boxes"],
        "box_reach": reach["reach"],
        "box_reach_pixels": reach["reach_pixels"],
        "boxes_confined": confined,
        "confined_answers": reach["tiny_answers" if confined == "tiny" else "confined_answers"],
        "tiny_answers": reach["tiny_answers"],
        "confined_reach": reach["confined_reach"],
        "confined_reach_pixels": reach["confined_reach_pixels"],
        "confined_reread": confined_reread,
        "spread_with": spread,
        "boxes_out_of_image": boxes_out,
        "answers_out_of_image": answers_out,
        **{name: repaired[name] for name in _REPAIR_COUNTS},
        "boxes_dropped_by_reason": (
            None if dropped_why is None else dict(sorted(dropped_why.items(), key=_most_first))
        ),
        "box_repairs_unrecorded": unrecorded,
        "ambiguous_convention": ambiguous,
        "readable_with": dict(readable.most_common()),
        "out_of_image_reread": reread,
        "inside_with": dict(sorted(inside.items(), key=lambda item: (-item[1], item[0]))),
    }


def _most_first(item: tuple[str, int]) -> tuple[int, str]:
    return -item[1], item[0]


# The counts of box_answer_summary the parser's repairs give, in the report's order.
_REPAIR_COUNTS = (
    "boxes_dropped",
    "answers_with_boxes_dropped",
    "boxes_swapped",
    "answers_with_boxes_swapped",
)


def labelled_lines_read_y_first(
    read: PredictionSet,
    parsed: PredictionSet,
    release: Any,
    *,
    box_convention: str,
    prompt_convention: str | None,
) -> int:
    """How many box answers were read only by assuming the protocol's y-first order.

    Under ``auto`` with no prompt on record, labelled lines ``label: [a, b, c, d]`` are read
    in the protocol's ``[ymin, xmin, ymax, xmax]`` order; a custom prompt may have asked
    ``[x1, y1, x2, y2]`` in the very same form, and would leave them unread. The answers
    read here (raw in ``read``) that hold boxes in ``parsed`` and that a custom prompt
    leaves ``ambiguous_convention`` are that assumption: ``nova evaluate``, ``nova
    compare`` and ``nova parse`` count them alike and say so in one line
    (:func:`novabench.report.render.assumed_box_order_line`).

    Args:
        read: the set as read (:func:`read_predictions`), before :func:`parse_raw`.
        parsed: what :func:`parse_raw` made of it.
        release: the release (image sizes).
        box_convention: the convention ``parse_raw`` was given (only ``auto`` assumes).
        prompt_convention: the order the prompt on record asked (None: none on record).

    Returns:
        The count (0 when a convention or a prompt on record fixed the order).

    Example:
        >>> import json, tempfile, pathlib, types
        >>> from novabench.run.predictions import parse_raw, read_predictions
        >>> image = types.SimpleNamespace(filename="case0001_001.png", case_id="case0001",
        ...                               width=480, height=480)
        >>> release = types.SimpleNamespace(images=[image], cases=lambda: [])
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "raw.jsonl"
        >>> line = {"filename": "case0001_001.png", "raw_boxes": "mass: [457, 523, 620, 603]"}
        >>> _ = path.write_text(json.dumps(line) + "\\n")
        >>> read = read_predictions(path, release)
        >>> parsed = parse_raw(read, release)
        >>> labelled_lines_read_y_first(read, parsed, release, box_convention="auto",
        ...                             prompt_convention=None)
        1
        >>> labelled_lines_read_y_first(read, parsed, release, box_convention="protocol",
        ...                             prompt_convention=None)
        0
    """
    if box_convention != "auto" or prompt_convention is not None:
        return 0
    task = registry.task_answered_in("boxes")
    records = parsed.records[task]
    read_here = [
        (key, records[key])
        for key, before in read.records[task].items()
        if not before.is_parsed
        and before.error is None
        and before.raw is not None
        and key in records
        and records[key].boxes  # no box read: nothing assumed
    ]
    if not read_here:  # (parsed files never load the parser)
        return 0
    from novabench.run.parsers.boxes import parse_localization

    sizes = {image.filename: (int(image.width), int(image.height)) for image in release.images}
    assumed = 0
    for key, record in read_here:
        unprompted = parse_localization(
            record.raw,
            image_size=sizes[key],
            input_size=record.input_size,
            prompt_convention=CUSTOM_PROMPT,
        )
        assumed += unprompted.status == "ambiguous_convention"
    return assumed


def assumed_box_order_record(answers: int) -> dict[str, Any]:
    """What a parsed file's manifest records of the answers ``nova parse`` read y-first.

    Under ``parsed.labelled_read_y_first``: the count of
    :func:`labelled_lines_read_y_first` and the convention they were read in, so that
    ``nova evaluate`` and ``nova compare`` of the parsed file say the assumption again
    (:func:`recorded_y_first_reads`).

    Example:
        >>> assumed_box_order_record(7)
        {'answers': 7, 'read_as': 'protocol', 'order': '[ymin, xmin, ymax, xmax]'}
    """
    return {"answers": int(answers), "read_as": "protocol", "order": "[ymin, xmin, ymax, xmax]"}


def recorded_y_first_reads(paths: Sequence[Path], manifests: Sequence[Any]) -> int:
    """The answers the parses on record read y-first by assumption (see
    :func:`assumed_box_order_record`), summed over the files' manifests.

    A manifest without a parse record, or from before the record, counts 0; a record that
    is not what ``nova parse`` writes is refused, naming the field.

    Example:
        >>> import types
        >>> parsed = {"box_convention": "auto", "labelled_read_y_first": {"answers": 7,
        ...     "read_as": "protocol", "order": "[ymin, xmin, ymax, xmax]"}}
        >>> recorded_y_first_reads([Path("a.jsonl"), Path("b.jsonl")],
        ...                        [types.SimpleNamespace(parsed=parsed), None])
        7
    """
    total = 0
    for path, manifest in zip(paths, manifests):
        parsed = getattr(manifest, "parsed", None) or {}
        record = parsed.get("labelled_read_y_first")
        if record is None:
            continue
        answers = record.get("answers") if isinstance(record, dict) else None
        if not isinstance(answers, int) or isinstance(answers, bool) or answers < 0:
            raise NovaInputError(
                f"{record!r} is not nova parse's record of answers read y-first "
                "({'answers': <count>, 'read_as': 'protocol', ...})",
                source=f"the manifest of {path}",
                field="parsed.labelled_read_y_first",
            )
        total += answers
    return total


def _read_by_a_parser(record: PredictionRecord) -> bool:
    """Whether a parser read ``record``'s answer from its raw text (a read, not a refusal)."""
    return (
        record.raw is not None
        and record.parse_status not in (None, registry.TOO_LONG)
        and record.raw_truncated_from is None
    )


#: A report's ``predictions.box_answers.parsed_earlier`` key for parsed box answers no
#: ``nova parse`` record accounts for (boxes written by the user or a baseline).
UNRECORDED_PARSE = "unrecorded"

#: The conventions an answer past its image is read again under: every explicit one but
#: ``qwen``, which converts the numbers exactly as ``xyxy_pixel`` does.
_RETRIED_CONVENTIONS = tuple(c for c in CONVENTIONS if c not in ("auto", "qwen"))


def _conventions_inside(record: PredictionRecord, image_size: tuple[int, int]) -> list[str]:
    """The explicit conventions under which every box of ``record``'s raw answer lies
    inside its image (at least one box read)."""
    from novabench.checks import box_inside_image
    from novabench.run.parsers.boxes import parse_localization

    fitting = []
    for convention in _RETRIED_CONVENTIONS:
        parsed = parse_localization(
            record.raw, image_size=image_size, input_size=record.input_size, convention=convention
        )
        if parsed.boxes and all(box_inside_image(box, image_size) for box in parsed.boxes):
            fitting.append(convention)
    return fitting


def _conventions_spreading(
    records: Mapping[str, PredictionRecord], sizes: Mapping[str, tuple[int, int]]
) -> tuple[int, dict[str, int]]:
    """The raw answers with boxes read again under every explicit convention, for a set
    confined to a corner: how many were read again, and per convention that lifts the
    confinement (its boxes reach past ``CORNER_REACH`` of the images) the answers whose every
    box then lies inside the image, kept when more than half of them do, most first."""
    from novabench.checks import box_inside_image
    from novabench.run.parsers.boxes import parse_localization
    from novabench.tasks.localization import CORNER_REACH, box_reach

    reread = {
        key: record
        for key, record in records.items()
        if record.boxes and record.raw is not None and record.raw_truncated_from is None
    }
    spread: dict[str, int] = {}
    for convention in _RETRIED_CONVENTIONS:
        boxes, image_sizes, inside = [], [], 0
        for key, record in reread.items():
            parsed = parse_localization(
                record.raw,
                image_size=sizes[key],
                input_size=record.input_size,
                convention=convention,
            )
            boxes.append(parsed.boxes or [])
            image_sizes.append(sizes[key])
            inside += bool(parsed.boxes) and all(
                box_inside_image(box, sizes[key]) for box in parsed.boxes
            )
        reach = box_reach(boxes, image_sizes)["reach"]
        if reach and max(reach) > CORNER_REACH and 2 * inside > len(reread):
            spread[convention] = inside
    return len(reread), dict(sorted(spread.items(), key=lambda item: (-item[1], item[0])))
