"""Showing a NOVA report or comparison: a terminal table, Markdown, and the JSON file.

Reports hold fractions; everything rendered here is in percent. Rows follow the registry:
tasks in :data:`TASK_ORDER`, metrics in each task's declared headline order.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from novabench import registry
from novabench._files import StagedOutputs, json_safe, write_text_atomic
from novabench.errors import OVERWRITE, NovaInputError
from novabench.escaping import markdown_code_span, markdown_text, markdown_text_with_code
from novabench.tasks.captioning import portable_bertscore_hash

__all__ = [
    "HEADLINE_KEYS",
    "headline_keys",
    "NO_INTERVALS",
    "TASK_ORDER",
    "answer_reading_lines",
    "assumed_box_order_line",
    "answered_only_line",
    "box_repair_phrase",
    "boxes_confined_line",
    "boxes_outside_line",
    "comparison_settings_lines",
    "comparison_first_lines",
    "comparison_unread_lines",
    "comparison_unusable_lines",
    "comparison_with_paper",
    "coverage_phrase",
    "current_key_names",
    "identical_answers_lines",
    "meteor_fallback_line",
    "metric_label",
    "mixed_code_line",
    "parse_status_phrase",
    "many_boxes_line",
    "model_name",
    "portable_bertscore_hash",
    "shareable_path",
    "shareable_paths",
    "synthetic_data_line",
    "unusable_answers_line",
    "unusable_answers_lines",
    "run_limit",
    "render_breakdowns",
    "render_comparison",
    "render_comparison_markdown",
    "render_human_reference",
    "render_markdown",
    "resampled_unit",
    "render_table",
    "settings_lines",
    "unfinished_run_line",
    "unverified_file_line",
    "unread_boxes_line",
    "undefined_key_line",
    "undefined_reason",
    "stand_in_lines",
    "with_current_keys",
    "with_notices",
    "comparison_with_notices",
    "without_intervals",
    "write_report",
]

#: The metric keys a report's table shows per task, in order (declared in the registry).
HEADLINE_KEYS: dict[str, tuple[str, ...]] = {
    name: spec.headline_keys for name, spec in registry.TASKS.items()
}


def headline_keys(task: str, *held: Iterable[str]) -> tuple[str, ...]:
    """The keys a task's table shows, in order: :data:`HEADLINE_KEYS` and the keys named after
    a user's model (``BERTScore-F1[<model>-L<layer>]``) that ``held`` holds, after their kind.

    Example:
        >>> keys = headline_keys("captioning", {"BERTScore-F1[radbert-L9]": 0.8})
        >>> keys[keys.index("BERTScore-F1-MiniLM-L6") + 1]
        'BERTScore-F1[radbert-L9]'
    """
    return registry.TASKS[task].headline_keys_with(key for keys in held for key in keys)


#: Tasks in report order.
TASK_ORDER: tuple[str, ...] = registry.TASK_NAMES

# What a parse status means for the reader, for the statuses that call for a note.
_STATUS_NOTES: dict[str, str] = {
    "ok_out_of_image": "a box reaches past the image (kept as given); check --box-convention",
    "ok_order_from_keys": "the answer's keys fix another order than --box-convention's: read "
    "in the keys' order, in the convention's scale",
}


# What each --box-convention suggestion reads, for the line on answers left unread.
_READABLE_WITH: dict[str, str] = {
    "protocol|xyxy_norm1000": "--box-convention protocol if the prompt asked "
    "[ymin, xmin, ymax, xmax], xyxy_norm1000 if it asked [x1, y1, x2, y2]",
    "xyxy_pixel": "--box-convention xyxy_pixel (values above 1000 point to pixels; pass "
    "input_size if the model saw a resized image)",
    "xyxy_norm1": "--box-convention xyxy_norm1 if the prompt asked [x1, y1, x2, y2] in 0..1",
    "yxyx_norm1": "--box-convention yxyx_norm1 if the model wrote [ymin, xmin, ymax, xmax] in 0..1",
    "xyxy_norm1|yxyx_norm1": "--box-convention xyxy_norm1 if the prompt asked [x1, y1, x2, y2] "
    "in 0..1, yxyx_norm1 if it asked [ymin, xmin, ymax, xmax] in 0..1",
    "xyxy_norm1000|xyxy_pixel": "--box-convention xyxy_norm1000 or xyxy_pixel, as the prompt asked",
    "": "no --box-convention (boxes in mixed forms, or a scale none reads)",
}


def unread_boxes_line(task: str, counts: Mapping[str, Any]) -> str | None:
    """How many box answers were not read for want of a coordinate order, and what reads them.

    Args:
        task: the task name, first in the line.
        counts: the task's coverage (``answered``, ``ambiguous_convention`` and
            ``readable_with`` as ``novabench.run.predictions.box_answer_summary`` gives them),
            or a bare summary (a comparison's) where only ``parse_status`` counts them: the
            line then says which command names the convention that reads them.

    Returns:
        One line, or None when every answer's convention was decided.

    Example:
        >>> print(unread_boxes_line("localization", {"answered": 949, "ambiguous_convention": 3,
        ...     "readable_with": {"protocol|xyxy_norm1000": 2, "xyxy_pixel": 1}}))
        localization: 3 of 949 answers NOT READ (ambiguous_convention: their boxes leave \
the coordinate order or the scale open; scored as no prediction): 2 read by --box-convention \
protocol if the prompt asked [ymin, xmin, ymax, xmax], xyxy_norm1000 if it asked [x1, y1, x2, \
y2]; 1 by --box-convention xyxy_pixel (values above 1000 point to pixels; pass input_size if \
the model saw a resized image)
        >>> print(unread_boxes_line("localization", {"answered": 4,
        ...     "parse_status": {"ok": 2, "ambiguous_convention": 2}}))
        localization: 2 of 4 answers NOT READ (ambiguous_convention: their boxes leave the \
coordinate order or the scale open; scored as no prediction): `nova evaluate` on this run \
names the --box-convention that reads them
    """
    statuses = counts.get("parse_status") or {}
    unread = int(counts.get("ambiguous_convention") or statuses.get("ambiguous_convention") or 0)
    if not unread:
        return None
    if "readable_with" not in counts:  # a bare summary: the raw answers were not re-read
        return (
            f"{task}: {unread} of {counts.get('answered', unread)} answers NOT READ "
            "(ambiguous_convention: their boxes leave the coordinate order or the scale open; "
            "scored as no prediction): `nova evaluate` on this run names the --box-convention "
            "that reads them"
        )
    parts = [
        f"{n} {'read ' if i == 0 else ''}by "
        + _READABLE_WITH.get(key, "--box-convention " + " or ".join(key.split("|")))
        for i, (key, n) in enumerate((counts.get("readable_with") or {}).items())
    ]
    return (
        f"{task}: {unread} of {counts.get('answered', unread)} answers NOT READ "
        "(ambiguous_convention: their boxes leave the coordinate order or the scale open; "
        "scored as no prediction)" + (": " + "; ".join(parts) if parts else "")
    )


#: Parse statuses of a box answer that holds boxes (scored as given).
_BOXED_STATUSES = ("ok", "ok_out_of_image", "ok_order_from_keys", "truncated_ok")


def answers_without_boxes_phrase(coverage: Mapping[str, Any], boxed: int) -> str:
    """The answers a box warning's "of the N answers with boxes" leaves out, by parse status,
    so its counts add up to the answers scored ("" when there are none, or no statuses).

    Args:
        coverage: the task's coverage (``answered``, ``parse_status``).
        boxed: the answers with boxes the warning counts.

    Example:
        >>> answers_without_boxes_phrase({"answered": 132, "parse_status": {"ok": 131,
        ...     "invalid_boxes": 1}}, 131)
        '; the other 1 of the 132 answers has no box read (invalid_boxes 1)'
        >>> answers_without_boxes_phrase({"answered": 4, "parse_status": {"ok": 4}}, 4)
        ''
    """
    statuses = coverage.get("parse_status") or {}
    answered = coverage.get("answered")
    if not isinstance(answered, int) or answered <= boxed or not statuses:
        return ""
    others = {
        status: int(n)
        for status, n in sorted(statuses.items(), key=lambda item: (-int(item[1]), item[0]))
        if status not in _BOXED_STATUSES and int(n)
    }
    if not others:
        return ""
    rest = answered - boxed
    return (
        f"; the other {rest} of the {answered} answers {'has' if rest == 1 else 'have'} no box "
        f"read ({', '.join(f'{status} {n}' for status, n in others.items())})"
    )


def boxes_outside_line(
    task: str, coverage: Mapping[str, Any], predictions: Mapping[str, Any]
) -> str | None:
    """A warning when more than half of a task's answers with boxes reach past the image.

    Most boxes outside the image mean the answers were read in the wrong convention. The
    line says what read them: this evaluation's ``--box-convention`` for the raw answers it
    read, the convention a ``nova parse`` recorded for answers parsed earlier (not read
    again), or nothing for boxes given with no parse on record; and, when the runs'
    manifests record it, the order their prompt asked for. When the raw answers were read
    again under every explicit convention (``inside_with``), it names each under which most
    of them lie inside the image, or says that none does.

    Args:
        task: the task name, first in the line.
        coverage: the task's coverage (``parse_status``, ``answers_out_of_image``,
            ``out_of_image_reread``, ``inside_with``).
        predictions: the report's ``predictions`` (``box_convention``, ``box_answers``,
            ``prompt_box_convention``).

    Returns:
        One line, or None at or below half.

    Example:
        >>> coverage = {"parse_status": {"no_target": 49, "ok": 7, "ok_out_of_image": 76},
        ...             "answers_out_of_image": 76, "boxes_out_of_image": 105}
        >>> print(boxes_outside_line("localization", coverage, {"box_convention": "xyxy_pixel",
        ...     "prompt_box_convention": "protocol"}))
        localization: 76 of 83 answers with boxes (92%) have a box past the image (105 boxes): read with --box-convention xyxy_pixel, but the run's prompt asked for protocol; most likely the wrong convention (scores computed on the boxes as read)

        Parsed earlier by ``nova parse --box-convention xyxy_pixel``, in 0..1000 in fact:

        >>> coverage.update(out_of_image_reread=76, inside_with={"protocol": 76, "xyxy_norm1000": 76})
        >>> print(boxes_outside_line("localization", coverage, {"box_convention": "auto",
        ...     "box_answers": {"read_here": 0, "parsed_earlier": {"xyxy_pixel": 132}}}))
        localization: 76 of 83 answers with boxes (92%) have a box past the image (105 boxes): parsed earlier with --box-convention xyxy_pixel, as the file's `nova parse` recorded (not read again here; no run manifest records the order the prompt asked for); most likely the wrong convention: read again, 76 of 76 fit the images with --box-convention protocol or xyxy_norm1000 (protocol if the prompt asked [ymin, xmin, ymax, xmax], xyxy_norm1000 if it asked [x1, y1, x2, y2]) (scores computed on the boxes as read)
    """
    statuses = coverage.get("parse_status") or {}
    boxed = int(  # counted per answer where recorded: a parsed file's answers have no status
        coverage.get("answers_with_boxes")
        or sum(int(statuses.get(status) or 0) for status in _BOXED_STATUSES)
    )
    outside = int(coverage.get("answers_out_of_image") or 0)
    if not boxed or outside <= UNUSABLE_SHARE * boxed:
        return None
    parts, governing = _how_boxes_were_read(predictions)
    read = "; ".join(parts)
    asked = predictions.get("prompt_box_convention")
    if len(parts) > 1:  # a mixed set: the prompt's order is said once, for all of them
        source = f"; the run's prompt asked for {asked}" if asked else ""
    elif len(governing) == 1 and asked and asked != governing[0]:
        source = f", but the run's prompt asked for {asked}"
    elif asked:
        source = f" (the run's prompt asked for {asked})"
    elif governing:
        source = " (no run manifest records the order the prompt asked for)"
    else:
        source = ""
    if source.startswith(" (") and read.endswith(")"):  # one parenthesis, not two in a row
        source = "; " + source[2:-1] + ")"
        read = read[:-1]
    return (
        f"{task}: {outside} of {boxed} answers with boxes ({100 * outside / boxed:.0f}%) have a "
        f"box past the image ({coverage.get('boxes_out_of_image', outside)} boxes)"
        f"{answers_without_boxes_phrase(coverage, boxed)}: {read}"
        f"{source}; most likely the wrong convention{_fitting_conventions(coverage)} (scores "
        "computed on the boxes as read)"
    )


def _how_boxes_were_read(predictions: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """What read a report's box answers, in words (one part per reader), and the conventions
    that did."""
    from novabench.run.predictions import UNRECORDED_PARSE

    used = predictions.get("box_convention") or "auto"
    answers = predictions.get("box_answers")
    if not answers:  # a report from before box_answers: every answer was read here
        return [f"read with --box-convention {used}"], [used]
    here = int(answers.get("read_here") or 0)
    earlier = dict(answers.get("parsed_earlier") or {})
    unrecorded = int(earlier.pop(UNRECORDED_PARSE, 0))
    several = sum(1 for n in (here, unrecorded, *earlier.values()) if n) > 1
    parts = []
    if here:
        parts.append(f"{f'{here} ' if several else ''}read with --box-convention {used}")
    for convention, n in earlier.items():
        parts.append(
            f"{f'{n} ' if several else ''}parsed earlier with --box-convention {convention}, "
            "as the file's `nova parse` recorded (not read again here)"
        )
    if unrecorded:
        checked = int(answers.get("checked_here") or 0)
        against = (
            f" ({checked} checked against their raw answers read with --box-convention {used})"
            if checked
            else ""
        )
        parts.append(
            f"{f'{unrecorded} ' if several else ''}given as boxes, no parse on record{against}"
        )
    governing = ([used] if here else []) + list(earlier)
    return parts, governing


def _fitting_conventions(
    coverage: Mapping[str, Any],
    reread_key: str = "out_of_image_reread",
    fits_key: str = "inside_with",
    *,
    outcome: str = "fit the images",
    none_fits: str = "most of them still reach past it",
) -> str:
    """The conventions under which most raw answers past the image would fit it (computed by
    reading them again), for the end of the warning; "" when none was read again. The keys
    and words serve the corner notice alike (``confined_reread``, ``spread_with``)."""
    reread = int(coverage.get(reread_key) or 0)
    if not reread:
        return ""
    fits = {
        convention: int(n)
        for convention, n in (coverage.get(fits_key) or {}).items()
        if int(n) > UNUSABLE_SHARE * reread
    }
    if not fits:
        return f": read again under every other --box-convention, {none_fits}"
    names = " or ".join(fits)
    if len(set(fits.values())) == 1:
        found = f"{next(iter(fits.values()))} of {reread} {outcome} with --box-convention {names}"
    else:
        counts = " or ".join(f"{c} ({n} of {reread})" for c, n in fits.items())
        found = f"they {outcome} with --box-convention {counts}"
    key = "|".join(sorted(fits))
    hint = _READABLE_WITH.get(key, "") if len(fits) > 1 else ""
    return f": read again, {found}" + (
        f" ({hint.removeprefix('--box-convention ')})" if hint else ""
    )


def boxes_confined_line(
    task: str, coverage: Mapping[str, Any], predictions: Mapping[str, Any]
) -> str | None:
    """A warning when every answer's boxes sit in one small corner of their images.

    Boxes in a smaller scale read as a larger one (pixels of a model's resized input read
    as 0..1000; 0..1 fractions read as pixels) all land near the images' top-left corner,
    inside the image, so nothing else flags them and they score 0. The rule
    (:func:`novabench.tasks.localization.corner_confinement`): at least 20 answers with
    boxes, at least 95% of them with no box's far corner past 60% of its image's width or
    height (``corner``; a share, so one stray answer cannot hide the rest), or past 2 pixels
    (``tiny``), while under 80% of the same images' gold is confined alike. The line says
    how many, how far they reach, what read them, and, for raw answers, the conventions
    under which, read again, they spread over the images.

    Args:
        task: the task name, first in the line.
        coverage: the task's coverage (``boxes_confined``, ``answers_with_boxes``,
            ``confined_answers``, ``confined_reach``, ``confined_reach_pixels``,
            ``confined_reread``, ``spread_with``).
        predictions: the report's ``predictions`` (``box_convention``, ``box_answers``).

    Returns:
        One line, or None when the boxes are not confined.

    Example:
        >>> coverage = {"boxes_confined": "corner", "answers_with_boxes": 881,
        ...     "confined_answers": 880, "confined_reach": [0.427, 0.429],
        ...     "confined_reach_pixels": [205.0, 206.0],
        ...     "confined_reread": 881, "spread_with": {"xyxy_pixel": 881}}
        >>> print(boxes_confined_line("localization", coverage, {"box_convention": "xyxy_norm1000"}))
        localization: 880 of the 881 answers with boxes have every box in the top-left 42.7% x 42.9% of its image (no far corner past 205 x 206 px): read with --box-convention xyxy_norm1000; a smaller scale read as a larger one explains this (e.g. pixels of a model input under 1000 px read as 0..1000): read again, 881 of 881 fit the images and reach past 60% of them with --box-convention xyxy_pixel (scores computed on the boxes as read)
    """
    kind = coverage.get("boxes_confined")
    if kind not in ("corner", "tiny"):
        return None
    reach = coverage.get("confined_reach") or coverage.get("box_reach")
    pixels = coverage.get("confined_reach_pixels") or coverage.get("box_reach_pixels")
    if not reach or not pixels:
        return None
    from novabench.tasks.localization import CORNER_REACH, TINY_BOX_PIXELS

    boxed = int(coverage.get("answers_with_boxes") or 0)
    confined = int(coverage.get("confined_answers") or boxed)
    where = (
        f"end within {TINY_BOX_PIXELS:g} px of their image's top-left corner"
        if kind == "tiny"
        else f"have every box in the top-left {100 * reach[0]:.1f}% x {100 * reach[1]:.1f}% "
        "of its image"
    )
    explained = (
        "0..1 fractions read as pixels explain this"
        if kind == "tiny"
        else "a smaller scale read as a larger one explains this (e.g. pixels of a model "
        "input under 1000 px read as 0..1000)"
    )
    fitting = _fitting_conventions(
        coverage,
        "confined_reread",
        "spread_with",
        outcome=f"fit the images and reach past {100 * CORNER_REACH:.0f}% of them",
        none_fits="none spreads most of them over the images",
    )
    if not int(coverage.get("confined_reread") or 0):  # no raw text here to read again
        from novabench.run.predictions import UNRECORDED_PARSE

        parsed = set((predictions.get("box_answers") or {}).get("parsed_earlier") or {})
        fitting = (
            ": `nova parse` their raw answers again (it names the --box-convention that "
            "spreads them), or convert them to pixels of the original image"
            if parsed - {UNRECORDED_PARSE}
            else ": convert them to pixels of the original image before scoring"
        )
    return (
        f"{task}: {confined} of the {boxed} answers with boxes {where} (no far corner past "
        f"{pixels[0]:.0f} x {pixels[1]:.0f} px){answers_without_boxes_phrase(coverage, boxed)}: "
        f"{'; '.join(_how_boxes_were_read(predictions)[0])}"
        f"; {explained}{fitting} (scores computed on the boxes as read)"
    )


def tiny_boxes_line(
    task: str, coverage: Mapping[str, Any], predictions: Mapping[str, Any]
) -> str | None:
    """A warning when some answers, not nearly all, hold only boxes no lesion has: every box
    ending within ``TINY_BOX_PIXELS`` of the image's origin.

    Such a box is a scale error on that answer (0..1 values read as 0..1000 or as pixels): a
    model that switches scale on part of its answers scores them as misses. Nearly all of a
    run's answers so is :func:`boxes_confined_line`'s case; this line names a share of
    them, however small (a real box is never this small on both axes).

    Example:
        >>> print(tiny_boxes_line("localization", {"answers_with_boxes": 881, "tiny_answers":
        ...     453}, {"box_convention": "protocol"}))
        localization: 453 of the 881 answers with boxes have every box ending within 2 px of its image's top-left corner, where no lesion's box ends: read with --box-convention protocol; 0..1 values read as 0..1000 or as pixels explain this, answer by answer (scores computed on the boxes as read)
    """
    tiny = int(coverage.get("tiny_answers") or 0)
    if not tiny or coverage.get("boxes_confined") == "tiny":  # the confined line says it
        return None
    from novabench.tasks.localization import TINY_BOX_PIXELS

    boxed = int(coverage.get("answers_with_boxes") or 0)
    return (
        f"{task}: {tiny} of the {boxed} answers with boxes have every box ending within "
        f"{TINY_BOX_PIXELS:g} px of its image's top-left corner, where no lesion's box ends"
        f"{answers_without_boxes_phrase(coverage, boxed)}: "
        f"{'; '.join(_how_boxes_were_read(predictions)[0])}; 0..1 values read as 0..1000 or "
        "as pixels explain this, answer by answer (scores computed on the boxes as read)"
    )


def many_boxes_line(task: str, coverage: Mapping[str, Any]) -> str | None:
    """Notices on how many boxes the answers hold (counted by the task's ``answer_counts``):
    many distinct boxes (``images_with_many_boxes``: the hit rates do not penalise them;
    COCO-AP@30 does), one box copied past that number (``images_with_repeated_boxes``: a
    runaway list; the hit rates count it once, COCO-AP every copy), and one box set on at
    least half of the answered images (``images_with_the_same_boxes``: a blind answer).

    Example:
        >>> print(many_boxes_line("localization", {"scored": 132, "images_with_many_boxes": 128}))
        localization: 128 of 132 images answered with many distinct boxes (more than 10, or 5 per gold box): mAP@30 and mAP@50 count an image as a hit when any one box overlaps gold, so extra boxes cost them nothing (a blind grid scores well); read COCO-AP@30, which penalises them (a warning only: no score is changed for it)
        >>> print(many_boxes_line("localization", {"scored": 906, "images_with_the_same_boxes": 906,
        ...     "images_answered_with_boxes": 906}))
        localization: the same answer (boxes) on 906 of the 906 images answered with boxes: a blind answer, the same guess whatever the image (a warning only: no score is changed for it)
        >>> many_boxes_line("localization", {"scored": 132}) is None
        True
    """
    from novabench.tasks.localization import MANY_BOXES, MANY_BOXES_PER_GOLD

    scored = coverage.get("scored", "?")
    parts = []
    many = int(coverage.get("images_with_many_boxes") or 0)
    if many:
        parts.append(
            f"{many} of {scored} images answered with many distinct boxes (more than "
            f"{MANY_BOXES}, or {MANY_BOXES_PER_GOLD} per gold box): mAP@30 and mAP@50 count an "
            "image as a hit when any one box overlaps gold, so extra boxes cost them nothing (a "
            "blind grid scores well); read COCO-AP@30, which penalises them"
        )
    repeated = int(coverage.get("images_with_repeated_boxes") or 0)
    if repeated:
        parts.append(
            f"{repeated} of {scored} images answered with one box repeated past {MANY_BOXES} "
            "boxes (a runaway list): mAP@30 counts the box once, COCO-AP@30 counts every copy "
            "as a false positive, and a box after the copies may fall past the boxes kept per "
            "image; read mAP@30 for these (or deduplicate the answers)"
        )
    same = int(coverage.get("images_with_the_same_boxes") or 0)
    if same:
        parts.append(
            f"the same answer (boxes) on {same} of the "
            f"{coverage.get('images_answered_with_boxes', '?')} images answered with boxes: a "
            "blind answer, the same guess whatever the image"
        )
    if not parts:
        return None
    return f"{task}: " + "; ".join(parts) + " (a warning only: no score is changed for it)"


def _per_task_lines(
    report: Mapping[str, Any], line_of: Callable[[str, Mapping[str, Any]], str | None]
) -> list[str]:
    """``line_of(task, coverage)`` for each task of a report, in task order, where it says one."""
    lines = []
    for task in TASK_ORDER:
        coverage = ((report.get("tasks") or {}).get(task) or {}).get("coverage") or {}
        line = line_of(task, coverage)
        if line:
            lines.append(line)
    return lines


def render_comparison(comparison: Mapping[str, Any]) -> str:
    """A plain-text table of a comparison: A, B, A - B with its interval and p-value, in percent.

    Example:
        >>> comparison = {"bootstrap": {"confidence": 0.95}, "tasks": {"diagnosis": {"top1": {
        ...     "a": 0.5, "b": 0.25, "difference": 0.25, "ci": [0.0, 0.5], "p_value": 0.04}}}}
        >>> print(render_comparison(comparison).splitlines()[2])
        diagnosis     top1            50.0   25.0  +25.0  [+0.0, +50.0]  p=0.040
    """
    level = int(round(100 * comparison.get("bootstrap", {}).get("confidence", 0.95)))
    width = _metric_width(
        [metric_label(task, key) for task, key, _ in _comparison_rows(comparison)]
    )
    header = (
        f"{'task':<13} {'metric':<{width}} {'A %':>6} {'B %':>6} {'A-B':>6}  {level}% CI of A-B, p"
    )
    first = comparison_first_lines(comparison)
    lines = [*first, *([""] if first else []), header, "-" * len(header)]
    n_resamples = comparison.get("bootstrap", {}).get("n_resamples")
    for task, key, row in _comparison_rows(comparison):
        low, high = row["ci"]
        lines.append(
            f"{task:<13} {metric_label(task, key):<{width}} {_percent(row['a']):>6} "
            f"{_percent(row['b']):>6} {_signed(row['difference']):>6}  "
            f"[{_signed(low)}, {_signed(high)}]  p={_p_value(row['p_value'], n_resamples)}"
        )
    coverage = comparison.get("coverage") or {}
    if coverage:
        lines.append("")
    for task in TASK_ORDER:
        for side in ("a", "b"):
            counts = coverage.get(task, {}).get(side)
            if counts:
                lines.append(f"{_side_name(comparison, side)} {task}: {coverage_phrase(counts)}")
    # The notes (metrics left out, judges) and settings as the Markdown and HTML give them.
    lines += [
        f"{task}: note: {note}"
        for task, notes in (comparison.get("notes") or {}).items()
        for note in notes
        if not note.startswith(_warned_notes())  # the first line says it
    ]
    lines += [f"settings: {line}" for line in comparison_settings_lines(comparison, short=True)]
    return "\n".join(lines)


def comparison_unread_lines(comparison: Mapping[str, Any]) -> list[str]:
    """The "answers NOT READ" line of each side of a comparison, as ``nova evaluate`` words it.

    Example:
        >>> comparison = {"coverage": {"localization": {"a": {"answered": 3, "parse_status":
        ...     {"ambiguous_convention": 3}}, "b": {"answered": 3, "parse_status": {"ok": 3}}}}}
        >>> print(comparison_unread_lines(comparison)[0][:44])
        A localization: 3 of 3 answers NOT READ (amb
    """
    coverage = comparison.get("coverage") or {}
    lines = []
    for task in TASK_ORDER:
        for side in ("a", "b"):
            line = unread_boxes_line(task, coverage.get(task, {}).get(side) or {})
            if line:
                who = (
                    f"{side.upper()} ({model_name(comparison[side])})"
                    if side in comparison
                    else side.upper()
                )
                lines.append(f"{who} {line}")
    return lines


def comparison_unusable_lines(comparison: Mapping[str, Any]) -> list[str]:
    """:func:`unusable_answers_line` of each side of a comparison, the side named first.

    Example:
        >>> counts = {"items": 4, "answered": 4, "missing": 0, "errors": 0,
        ...           "parse_status": {"empty": 4}}
        >>> comparison_unusable_lines({"coverage": {"captioning": {"a": {**counts,
        ...     "parse_status": {"ok": 4}}, "b": counts}}})[0][:52]
        'B captioning: 4 of 4 items (100%) have no usable ans'
    """
    coverage = comparison.get("coverage") or {}
    lines = []
    for task in TASK_ORDER:
        for side in ("a", "b"):
            counts = coverage.get(task, {}).get(side)
            line = unusable_answers_line(task, counts) if counts else None
            if line:
                lines.append(f"{_side_name(comparison, side)} {line}")
    return lines


def _side_name(comparison: Mapping[str, Any], side: str) -> str:
    return (
        f"{side.upper()} ({model_name(comparison[side])})" if side in comparison else side.upper()
    )


def _nothing_usable(comparison: Mapping[str, Any], task: str) -> bool:
    """Whether neither side has a usable answer on any item of the task (per its coverage)."""
    counts = (comparison.get("coverage") or {}).get(task) or {}
    if not all(counts.get(side) for side in ("a", "b")):
        return False
    for side in ("a", "b"):
        unusable, scored, _ = _unusable_counts(task, counts[side])
        if scored <= 0 or unusable < scored:
            return False
    return True


def identical_answers_lines(comparison: Mapping[str, Any]) -> list[str]:
    """What a comparison says about tasks where A and B answer every item alike.

    One sentence when that holds for every compared task, else one per such task; none
    without ``comparison["answer_agreement"]`` (``report.agreement.answer_agreement``).
    Where neither side has a usable answer (missing, empty, unparseable, unread), the
    sentence says that instead of calling them answers.

    Example:
        >>> identical_answers_lines({"tasks": {"diagnosis": {}, "captioning": {}},
        ...     "answer_agreement": {"diagnosis": {"items": 3, "identical": 3}}})[0].split(":")[0]
        'diagnosis'
        >>> empty = {"items": 3, "missing": 0, "errors": 0, "parse_status": {"empty": 3}}
        >>> identical_answers_lines({"tasks": {"diagnosis": {}},
        ...     "answer_agreement": {"diagnosis": {"items": 3, "identical": 3}},
        ...     "coverage": {"diagnosis": {"a": empty, "b": empty}}})
        ['neither prediction set has a usable answer on any scored item: A - B is 0 by construction']
    """
    from novabench.report.agreement import IDENTICAL_ANSWERS, identical_tasks

    tasks = identical_tasks(comparison)
    if not tasks:
        return []
    nothing = "neither prediction set has a usable answer on any scored item"
    said = {
        task: nothing if _nothing_usable(comparison, task) else IDENTICAL_ANSWERS for task in tasks
    }
    if len(tasks) == len(comparison.get("tasks", {})) and len(set(said.values())) == 1:
        return [f"{said[tasks[0]]}: A - B is 0 by construction"]
    return [f"{task}: {said[task]}: A - B is 0 by construction" for task in tasks]


def metric_label(task: str, key: str) -> str:
    """A metric key as a comparison's table shows it: error rates marked lower-is-better.

    Read from the task's declaration (``registry.TaskSpec.lower_is_better``).

    Example:
        >>> metric_label("localization", "FNR"), metric_label("localization", "mAP@30")
        ('FNR (lower is better)', 'mAP@30')
    """
    spec = registry.TASKS.get(task)
    lower = spec is not None and key in spec.lower_is_better
    return f"{key} (lower is better)" if lower else key


def comparison_first_lines(comparison: Mapping[str, Any]) -> list[str]:
    """What a comparison's reader must see before its table, in every output, in order.

    The synthetic-data notice, a side's unfinished run, answers not read, labelled lines
    read in an assumed order, boxes past the image, confined to a corner or many per image
    (as ``nova evaluate`` says them), sides whose answers are mostly unusable,
    METEOR's stand-in, then tasks where both sides answer alike.

    Example:
        >>> note = "METEOR not computed: the nltk WordNet corpus is not installed"
        >>> comparison_first_lines({"tasks": {"captioning": {}}, "notes": {"captioning": [note]}})
        ['warning: captioning: METEOR not computed: the nltk WordNet corpus is not installed']
    """
    lines = [synthetic_data_line(comparison)]
    lines += [
        f"{_side_name(comparison, side)} {line}"
        for side in ("a", "b")
        for line in (
            unfinished_run_line(comparison.get(side) or {}),
            unverified_file_line(comparison.get(side) or {}),
        )
        if line
    ]
    lines += comparison_unread_lines(comparison)
    lines += [  # labelled lines read y-first for want of a prompt on record, as evaluate says
        f"{_side_name(comparison, side)} {line}"
        for side in ("a", "b")
        for line in [assumed_box_order_line((comparison.get(side) or {}).get("predictions") or {})]
        if line
    ]
    for task in TASK_ORDER:
        for side in ("a", "b"):
            counts = ((comparison.get("coverage") or {}).get(task) or {}).get(side) or {}
            predictions = (comparison.get(side) or {}).get("predictions") or {}
            side_lines = (
                boxes_outside_line(task, counts, predictions),
                boxes_confined_line(task, counts, predictions),
                many_boxes_line(task, {**counts, "scored": counts.get("items", "?")}),
            )
            lines += [f"{_side_name(comparison, side)} {line}" for line in side_lines if line]
    lines += [*comparison_unusable_lines(comparison), meteor_fallback_line(comparison)]
    lines += stand_in_lines(comparison)
    lines += [f"note: {line}" for line in identical_answers_lines(comparison)]
    return [line for line in lines if line]


def _signed(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{100 * float(value):+.1f}"


def _percent(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{100 * float(value):.1f}"


def _interval(report_task: Mapping[str, Any], key: str) -> str:
    interval = report_task.get("confidence_intervals", {}).get(key)
    if not interval or any(v is None or (isinstance(v, float) and math.isnan(v)) for v in interval):
        return ""
    return f"[{_percent(interval[0])}, {_percent(interval[1])}]"


def resampled_unit(settings: Mapping[str, Any] | None) -> str:
    """What a report's or comparison's bootstrap resampled, in words: ``"whole cases"``, or
    ``"single images"`` for ``bootstrap.unit`` "image" and reports from before the unit was
    recorded.

    Example:
        >>> resampled_unit({"unit": "case"}), resampled_unit({"n_resamples": 1000})
        ('whole cases', 'single images')
    """
    return "whole cases" if (settings or {}).get("unit") == "case" else "single images"


def without_intervals(report: Mapping[str, Any]) -> bool:
    """Whether the report was scored with no bootstrap resamples (``--bootstrap 0``).

    Example:
        >>> without_intervals({"bootstrap": {"n_resamples": 0}}), without_intervals({})
        (True, False)
    """
    return (report.get("bootstrap") or {}).get("n_resamples") == 0


#: What a report scored without resamples says in place of its intervals.
NO_INTERVALS = "no intervals (--bootstrap 0)"

#: The column saying how far each value can be put beside the paper's figure of that name
#: (``TaskSpec.comparison_with_paper``).
VERSUS_PAPER = "comparable with the paper's?"

#: What the column says for a paper key in a report that no paper figure can be put beside.
NOT_THE_RELEASE = "no: not the NOVA release"
ANSWERED_ONLY = "no: answered items only"


def comparison_with_paper(report: Mapping[str, Any], task: str, key: str) -> str:
    """How far this report's value of ``key`` can be put beside the paper's figure of that name.

    The key's definition decides (:meth:`~novabench.registry.TaskSpec.comparison_with_paper`),
    unless the report itself rules every comparison out: data that is not the NOVA release
    (the synthetic sample, ``nova ingest`` data: the report opens with that notice; data of
    another size than the release's 906 images in 281 cases), or a task scored over its
    answered items only (the paper divides by every item). The column speaks
    of the key and the data, not of the prompt: the settings name the prompts a run used.

    Example:
        >>> full = {"answered_only": False, "data": {"provenance": None, "n_images": 906, "n_cases": 281}}
        >>> comparison_with_paper(full, "localization", "mAP@30")
        'yes'
        >>> partial = {"localization": {"coverage": {"items": 906, "answered": 40}}}
        >>> comparison_with_paper({**full, "answered_only": True, "tasks": partial}, "localization", "mAP@30")
        'no: answered items only'
        >>> comparison_with_paper({**full, "data": {"n_images": 23, "n_cases": 6}}, "localization", "mAP@30")
        'no: not the NOVA release'
        >>> sample = {"data": {"provenance": {"origin": "nova sample", "cases": 4, "seed": 0}}}
        >>> comparison_with_paper(sample, "localization", "mAP@30")
        'no: not the NOVA release'
        >>> comparison_with_paper(sample, "localization", "COCO-AP@30")
        'not a paper key'
        >>> comparison_with_paper(sample, "diagnosis", "top1-lexicon")
        'no: another quantity'
    """
    reading = registry.TASKS[task].comparison_with_paper(key)
    if reading == registry.NOT_A_PAPER_KEY or reading.startswith("no:"):
        return reading  # another quantity whatever the data: that reason comes first
    if synthetic_data_line(report) or not _release_sized(_data_section(report)):
        return NOT_THE_RELEASE
    coverage = ((report.get("tasks") or {}).get(task) or {}).get("coverage") or {}
    if report.get("answered_only") and coverage.get("answered") != coverage.get("items"):
        return ANSWERED_ONLY
    return reading


def _release_sized(data: Mapping[str, Any]) -> bool:
    """Whether the scored data has the NOVA release's size (906 images, 281 cases); data that
    does not say is taken as it is. A subset or a lab's own data is not the paper's release."""
    from novabench.records import NOVA_RELEASE_SIZE

    sizes = (data.get("n_images"), data.get("n_cases"))
    if not all(isinstance(size, int) for size in sizes):
        return True
    return sizes == NOVA_RELEASE_SIZE


#: The terminal table's title of the :data:`VERSUS_PAPER` column (its legend says the rest).
VERSUS_PAPER_SHORT_TITLE = "vs paper"

#: The terminal table's short forms of ``TaskSpec.comparison_with_paper``'s answers; the
#: legend under the table spells out each one shown. An answer not listed is shown whole.
_SHORT_COMPARISON = {
    registry.SAME_DEFINITION: "yes",
    registry.UP_TO_THE_JUDGE: "yes, judge",
    registry.DEFINITION_INFERRED: "care: inferred",
    registry.DEFINITION_OURS: "care: ours",
    registry.SETTINGS_UNPUBLISHED: "care: settings",
    registry.ANOTHER_QUANTITY: "no",
    registry.NOT_A_PAPER_KEY: "-",
    NOT_THE_RELEASE: "no: not NOVA",
    ANSWERED_ONLY: "no: answered",
}


def short_comparison(comparison: str) -> str:
    """How far a value compares with the paper's, in the terminal table's few characters.

    Args:
        comparison: an answer of ``TaskSpec.comparison_with_paper``.

    Returns:
        Its short form (:func:`versus_paper_legend` spells it out), or the answer itself
        when it has none.

    Example:
        >>> short_comparison("with care: definition inferred"), short_comparison("not a paper key")
        ('care: inferred', '-')
    """
    return _SHORT_COMPARISON.get(comparison, comparison)


def versus_paper_legend(comparisons: Sequence[str]) -> str:
    """The line under the terminal table that spells out the short forms of its last column.

    Args:
        comparisons: the ``TaskSpec.comparison_with_paper`` answers of the rows shown.

    Returns:
        The column's full title, then ``short = answer`` for each short form shown (once,
        in the order first shown; a form that is the answer itself needs no spelling out);
        "" when no row is shown.

    Example:
        >>> versus_paper_legend(["yes", "no: another quantity", "yes"])
        "vs paper (comparable with the paper's?): no = no: another quantity"
        >>> versus_paper_legend([])
        ''
    """
    if not comparisons:
        return ""
    spelled = [
        f"{short_comparison(answer)} = {answer}"
        for answer in dict.fromkeys(comparisons)
        if short_comparison(answer) != answer
    ]
    return f"{VERSUS_PAPER_SHORT_TITLE} ({VERSUS_PAPER})" + (
        ": " + "; ".join(spelled) if spelled else ""
    )


def key_meaning_line(task: str, key: str) -> str:
    """One key's legend line: what it measures, its direction, where its definition comes
    from (``registry.TaskSpec.meaning``: the one source of every report's legend and of the
    metric card's key legend); the key alone when the registry does not define it.

    Example:
        >>> print(key_meaning_line("localization", "FP30"))
        FP30: predicted boxes left unmatched at IoU 0.30, over predicted boxes (box-level false-discovery rate); lower is better; definition: ours (the paper's definition is not public)
    """
    spec = registry.TASKS.get(task)
    meaning = spec.meaning(key) if spec is not None else None
    if spec is None or meaning is None:
        return key
    return f"{key}: {meaning.definition}; {spec.direction(key)}; definition: {meaning.source}"


def _meaning(task: str, key: str) -> registry.KeyMeaning | None:
    """The registry's meaning of ``task``'s ``key`` (None for an unknown task or key)."""
    spec = registry.TASKS.get(task)
    return spec.meaning(key) if spec is not None else None


def direction_line(keys: Sequence[tuple[str, str]]) -> str:
    """The terminal's one line on which way each shown key is better ("" for no key).

    Example:
        >>> direction_line([("localization", "mAP@30"), ("localization", "FP30"),
        ...                 ("localization", "FNR")])
        'lower is better: localization FP30, FNR (error rates); every other key: higher is better'
        >>> direction_line([("diagnosis", "top1")])
        'every key: higher is better'
    """
    if not keys:
        return ""
    lower: dict[str, list[str]] = {}
    for task, key in keys:
        spec = registry.TASKS.get(task)
        if spec is not None and key in spec.lower_is_better:
            lower.setdefault(task, []).append(key)
    if not lower:
        return "every key: higher is better"
    named = "; ".join(f"{task} {', '.join(task_keys)}" for task, task_keys in lower.items())
    return f"lower is better: {named} (error rates); every other key: higher is better"


#: The terminal's pointer to the keys' definitions (``--explain`` prints them).
EXPLAIN_POINTER = (
    "what each key measures and where its definition comes from: nova evaluate --explain, "
    "or the Markdown/HTML report"
)


def undefined_value_lines(report: Mapping[str, Any]) -> list[str]:
    """Why each ``n/a`` value of the report's table is undefined, one line per key (none
    when every value is a number).

    Example:
        >>> undefined_value_lines({"tasks": {"localization": {"metrics": {"mAP@30": 0.0,
        ...     "FP30": float("nan")}}}})
        ['n/a: localization FP30 is undefined when no box was predicted (0 / 0)']
    """
    return [
        undefined_value_line(task, key) for task, key, value, _ in _rows(report) if value == "n/a"
    ]


def undefined_reason(task: str, key: str, who: str = "") -> str | None:
    """When ``task``'s ``key`` is undefined, for the row or column ``who`` names: the
    registry's words (``KeyMeaning.undefined_when``, the one source), a human-reference
    comparison's sides put in ("rater 1 vs rater 2": rater 1's boxes scored against rater
    2's, so "no image has a box of rater 2"); None for a key the registry does not define.

    Example:
        >>> undefined_reason("localization", "hit@30")
        'no image has a gold box'
        >>> undefined_reason("localization", "hit@30", "rater 1 vs rater 2")
        'no image has a box of rater 2'
        >>> undefined_reason("localization", "FP30", "rater_2_vs_gold")
        'rater 2 drew no box (0 / 0)'
    """
    meaning = _meaning(task, key)
    if meaning is None:
        return None
    predicted, _, reference = " ".join(who.replace("_", " ").split()).partition(" vs ")
    return meaning.undefined_when(
        predicted if reference and predicted else None,
        reference if reference and reference != "gold" else None,
    )


def undefined_key_line(task: str, key: str, columns: Sequence[tuple[str, str]]) -> str:
    """One line on why ``key`` is ``n/a`` in each of ``columns``, ``(label, who)`` pairs:
    the label shown (a model's name, "rater 1 vs gold") and the human-reference comparison
    it is (``""`` for a model: never read from its name); the columns of one reason named
    together.

    Example:
        >>> print(undefined_key_line("localization", "hit@30", [("model", ""),
        ...     ("rater 1 vs gold", "rater 1 vs gold"), ("rater 1 vs rater 2", "rater 1 vs rater 2")]))
        n/a: localization hit@30 is undefined when no image has a gold box (model, rater 1 vs gold); when no image has a box of rater 2 (rater 1 vs rater 2)
        >>> print(undefined_key_line("localization", "FNR", [("model", "")]))
        n/a: localization FNR (model) is undefined when no image has a gold box
    """
    reasons: dict[str, list[str]] = {}
    for label, who in columns:
        why = undefined_reason(task, key, who) or "its value is not a number"
        reasons.setdefault(why, []).append(label)
    if len(reasons) == 1:
        ((why, named),) = reasons.items()
        return f"n/a: {task} {key} ({', '.join(named)}) is undefined when {why}"
    return f"n/a: {task} {key} is undefined " + "; ".join(
        f"when {why} ({', '.join(named)})" for why, named in reasons.items()
    )


def undefined_value_line(task: str, key: str, where: str = "") -> str:
    """Why a ``task``'s ``key`` printed ``n/a`` (``where``: the group or column it was in).

    Example:
        >>> undefined_value_line("localization", "hit@30", " (group normal)")
        'n/a: localization hit@30 (group normal) is undefined when no image has a gold box'
    """
    why = undefined_reason(task, key)
    return f"n/a: {task} {key}{where} is undefined" + (f" when {why}" if why else "")


#: Below this many resamples a percentile interval can miss its own estimate entirely.
FEW_RESAMPLES = 100


def few_resamples_line(report: Mapping[str, Any]) -> str:
    """A reader's warning when the intervals rest on very few resamples ("" otherwise).

    Example:
        >>> few_resamples_line({"bootstrap": {"n_resamples": 5}})[:47]
        'warning: the intervals rest on 5 resamples only'
        >>> few_resamples_line({"bootstrap": {"n_resamples": 1000}})
        ''
    """
    n_resamples = (report.get("bootstrap") or {}).get("n_resamples")
    if not n_resamples or n_resamples >= FEW_RESAMPLES:
        return ""
    return (
        f"warning: the intervals rest on {n_resamples} resamples only: too few for a percentile "
        f"interval (it may not even contain the value); use {FEW_RESAMPLES} or more (default "
        "1,000)"
    )


def _warned_notes() -> tuple[str, ...]:
    """How the notes begin that a report's first lines repeat as warnings (every task's
    ``warned_notes``): the note lists leave them out."""
    from novabench.tasks import behaviour

    return tuple(start for task in TASK_ORDER for start in behaviour(task).warned_notes)


def meteor_fallback_line(report: Mapping[str, Any]) -> str:
    """A reader's warning when METEOR-exact+stem stands where METEOR was wanted ("" otherwise).

    Read from the task notes of a report (or of a comparison), where scoring put it: the
    first note a task declares a warning (its ``warned_notes``), tasks in registry order.

    Example:
        >>> note = "METEOR not computed: the nltk WordNet corpus is not installed"
        >>> meteor_fallback_line({"tasks": {"captioning": {"notes": [note]}}})
        'warning: captioning: METEOR not computed: the nltk WordNet corpus is not installed'
        >>> meteor_fallback_line({"tasks": {"captioning": {"notes": []}}})
        ''
    """
    from novabench.tasks import behaviour

    for task in TASK_ORDER:
        warned = behaviour(task).warned_notes
        section = (report.get("tasks") or {}).get(task) or {}
        notes = list(section.get("notes") or []) if isinstance(section, Mapping) else []
        notes += list((report.get("notes") or {}).get(task) or [])
        found = [note for note in notes if isinstance(note, str) and note.startswith(warned)]
        if found:
            return f"warning: {task}: {found[0]}"
    return ""


def stand_in_lines(report: Mapping[str, Any]) -> list[str]:
    """A reader's warning per task whose report shows stand-ins for the paper's keys.

    Each names the keys shown, the paper keys they are not, what they are and how to get
    the paper's (the task's ``stand_in_notes``): ``top1-lexicon`` is never to be read as
    the paper's Top-1. A comparison (``{"tasks": {task: {key: ...}}}``) works too.

    Example:
        >>> report = {"tasks": {"diagnosis": {"metrics": {"top1-lexicon": 0.4, "top5-lexicon": 0.6}}}}
        >>> print(stand_in_lines(report)[0])  # doctest: +ELLIPSIS
        warning: diagnosis: top1-lexicon, top5-lexicon are not the paper's top1, top5: the offline lexicon matcher's proxy: another quantity; ...
    """
    from novabench.tasks import behaviour

    lines = []
    for task in TASK_ORDER:
        section = (report.get("tasks") or {}).get(task)
        if not isinstance(section, Mapping):
            continue
        held = section.get("metrics", section)
        spec = registry.TASKS[task]
        by_note: dict[str, list[str]] = {}
        for key, note in behaviour(task).stand_in_notes:
            if isinstance(held, Mapping) and key in held:
                by_note.setdefault(note, []).append(key)
        for note, keys in by_note.items():
            papers = [spec.stands_in_for(key) or key for key in keys]
            lines.append(
                f"warning: {task}: {', '.join(keys)} are not the paper's {', '.join(papers)}: "
                f"{note}"
            )
    return lines


def mixed_code_line(report: Mapping[str, Any]) -> str:
    """A warning when a run file was resumed by changed code of its function ("" if not).

    Read from the run manifests the report records: ``code_changes`` lists each resume that
    ``resume_changed_code=True`` let through although the function's code digest changed.

    Example:
        >>> manifest = {"backend": {"function": "__main__.my_vlm"},
        ...             "code_changes": [{"code_sha256_before": "ab", "code_sha256_after": "cd"}]}
        >>> mixed_code_line({"predictions": {"manifests": [manifest]}})
        'warning: the run file was resumed after the code of __main__.my_vlm changed (resume_changed_code=True): its answers may come from 2 versions'
        >>> mixed_code_line({"predictions": {"manifests": [{"backend": {}}]}})
        ''
    """
    manifests = (report.get("predictions") or {}).get("manifests") or []
    parts = []
    for manifest in manifests:
        changes = manifest.get("code_changes") if isinstance(manifest, Mapping) else None
        if not isinstance(changes, list) or not changes:
            continue
        backend = manifest.get("backend")
        name = backend.get("function") if isinstance(backend, Mapping) else None
        parts.append(
            f"the run file was resumed after the code of {name or 'the model'} changed "
            f"(resume_changed_code=True): its answers may come from {len(changes) + 1} versions"
        )
    return "warning: " + "; ".join(parts) if parts else ""


def function_input_size_line(report: Mapping[str, Any]) -> str:
    """A warning when a preset's input-size rule was applied to a Python function's answers
    ("" if not): its pixel boxes are then read as pixels of the model's resized input and
    scaled to the image (user21: 480/476 on the sample, in no first line). Read from the run
    manifests: a ``python-callable`` backend recording a rule other than ``original`` that
    its preset gave (the function's own choice is recorded as overriding the preset).

    Example:
        >>> manifest = {"backend": {"type": "python-callable", "model": "my_vlm",
        ...     "input_size_rule": "qwen2.5-vl"}, "preset": {"name": "qwen2.5-vl", "overridden": []}}
        >>> print(function_input_size_line({"predictions": {"manifests": [manifest]}})[:98])
        warning: localization: preset qwen2.5-vl's input-size rule (qwen2.5-vl) was applied to the answers
        >>> manifest["preset"]["overridden"] = ["input_size_rule"]
        >>> function_input_size_line({"predictions": {"manifests": [manifest]}})
        ''
    """
    manifests = (report.get("predictions") or {}).get("manifests") or []
    for manifest in manifests:
        if not isinstance(manifest, Mapping):
            continue
        backend, preset = manifest.get("backend"), manifest.get("preset")
        if not isinstance(backend, Mapping) or not isinstance(preset, Mapping):
            continue
        rule = backend.get("input_size_rule")
        if (
            backend.get("type") != "python-callable"
            or rule in (None, "original")
            or "input_size_rule" in (preset.get("overridden") or [])
        ):
            continue
        example = ""
        if rule == "qwen2.5-vl":
            from novabench.run.backends import qwen2_5_vl_input_size

            width, height = qwen2_5_vl_input_size(480, 480)
            example = f" ({width} x {height} for a 480 x 480 image)"
        return (
            f"warning: {registry.task_answered_in('boxes')}: preset {preset.get('name')}'s "
            f"input-size rule ({rule}) was applied to the answers of the Python function "
            f"{backend.get('model') or ''}: its boxes in pixels were read as pixels of the "
            f"model's resized input{example} and scaled to the image; if it answers in pixels "
            "of the image it is given, pass CallableBackend(function, "
            'input_size_rule="original") with the preset'
        )
    return ""


def _data_section(report: Mapping[str, Any]) -> Mapping[str, Any]:
    """A report's ``data`` section; a comparison's is its side A's (both score one release)."""
    data = report.get("data") or (report.get("a") or {}).get("data") or {}
    return data if isinstance(data, Mapping) else {}


def synthetic_data_line(report: Mapping[str, Any]) -> str:
    """A reader's notice when novabench made the scored data ("" for the NOVA release).

    Read from the provenance the release records (``report["data"]["provenance"]``, as the
    explorer reads it); a comparison is read from its side A (both sides score one release).
    The synthetic sample, data built with ``nova ingest`` and data whose novabench
    provenance could not be read each get their notice: none of them is the NOVA release,
    so the published figures are not comparable.

    Example:
        >>> sample = {"data": {"provenance": {"origin": "nova sample", "cases": 40, "seed": 0}}}
        >>> synthetic_data_line(sample)[:72]
        'notice: NOT THE REAL DATA: Synthetic sample made by novabench (`nova sam'
        >>> synthetic_data_line({"data": {"provenance": {"origin": "nova ingest"}}})[:62]
        'notice: NOT THE NOVA RELEASE: Built with `nova ingest` from lo'
        >>> synthetic_data_line({"data": {"provenance": None}})
        ''
    """
    from novabench.data.provenance import provenance_notice_line

    provenance = _data_section(report).get("provenance")
    if not isinstance(provenance, Mapping):
        return ""
    return provenance_notice_line(provenance)


def release_warnings_line(report: Mapping[str, Any]) -> str:
    """A warning when the release was read with warnings ("" without any).

    What ``nova info`` lists (empty captions, a gold box listed twice, metadata differing
    within a case, ignored columns...) concerns the ground truth every number is scored
    against, so the report says it first; ``report["data"]["warnings"]`` holds them all.

    Example:
        >>> data = {"data": {"path": "Nova", "warnings": ["captions.csv, line 3: empty caption"]}}
        >>> release_warnings_line(data)
        'warning: the release was read with 1 warning (`nova info` on it lists them): captions.csv, line 3: empty caption'
        >>> release_warnings_line({"data": {"path": "Nova"}})
        ''
    """
    warnings = _data_section(report).get("warnings")
    if not warnings:
        return ""
    shown = "; ".join(str(warning) for warning in warnings[:2])
    more = f"; and {len(warnings) - 2} more" if len(warnings) > 2 else ""
    return (
        f"warning: the release was read with {_count(len(warnings), 'warning')} "
        f"(`nova info` on it lists them): {shown}{more}"
    )


#: Above this share of a task's scored items without a usable answer, a report warns first.
UNUSABLE_SHARE = 0.5

# What to do about each kind of unusable answer, for the warning that counts them.
_UNUSABLE_ADVICE: dict[str, str] = {
    "missing": "run the model on the items without a line (`nova run` resumes its file)",
    "model error": "re-run the items whose model call failed",
    "ambiguous_convention": "pass --box-convention as the prompt asked",
    "invalid_boxes": "read the raw answers: their boxes have zero area, a value that is not a "
    "finite number (NaN, infinite) or values too large for a number (check --box-convention)",
    "unparseable": "read the raw answers: the prompt or the model's output format may not fit "
    "the parser",
    "empty": "read the raw answers: the prompt or the model's output format may not fit the parser",
    "refusal": "read the raw answers: the model declined the task (a system prompt or a model "
    "that answers medical questions may help; declined items score as no prediction)",
    registry.TOO_LONG: "cap the model's output length (the answers run past the parser's limit)",
}


def _unusable_counts(
    task: str, coverage: Mapping[str, Any], *, answered_only: bool = False
) -> tuple[int, int, list[tuple[str, int]]]:
    """Items without a usable answer, items scored, and the failure statuses counted."""
    spec = registry.TASKS[task]
    statuses = coverage.get("parse_status") or {}
    failed = [
        (status, int(statuses[status]))
        for status in spec.parse_statuses
        if status in spec.failure_statuses and statuses.get(status)
    ]
    errors = int(coverage.get("errors") or 0)
    missing = int(coverage.get("missing") or 0)
    items = int(coverage.get("items") or 0)
    scored = items - (missing - errors) if answered_only else items
    absent = errors if answered_only else missing
    return absent + sum(n for _, n in failed), scored, failed


def unusable_answers_line(
    task: str,
    coverage: Mapping[str, Any],
    *,
    answered_only: bool = False,
    limit: int | None = None,
) -> str | None:
    """A warning when more than half of a task's scored items have no usable answer.

    Unusable: missing (no line, or a failed model call) or read with one of the task's
    failure statuses (``registry.TaskSpec.failure_statuses``: unparseable, empty, too long,
    an undecided box convention). All of them score as "no prediction", so such a task's
    numbers are mostly zeros the model never gave. Read from the report's coverage counts;
    with ``answered_only`` the items without a line are not scored and not counted.

    Args:
        task: the task name (canonical).
        coverage: the task's coverage (``items``, ``missing``, ``errors``, ``parse_status``).
        answered_only: whether only the items with a line were scored.
        limit: the ``limit`` a run's manifest records (a trial on the first items): the
            advice on missing items names ``--answered-only`` too, which scores such a run
            as ``evaluate_model(..., limit=)`` does.

    Returns:
        One line naming the counts and what to do, or None at or below the threshold.

    Example:
        >>> coverage = {"items": 132, "answered": 120, "missing": 12, "errors": 2,
        ...             "parse_status": {"ok": 30, "unparseable": 85, "empty": 5}}
        >>> print(unusable_answers_line("captioning", coverage))
        captioning: 102 of 132 items (77%) have no usable answer and score as no prediction: \
empty 5, unparseable 85, missing 12 (2 model errors); what to do: read the raw answers: the \
prompt or the model's output format may not fit the parser; run the model on the items without \
a line (`nova run` resumes its file); re-run the items whose model call failed
        >>> unusable_answers_line("captioning", {**coverage, "parse_status": {"ok": 120}}) is None
        True
        >>> limited = {"items": 132, "answered": 10, "missing": 122, "errors": 0}
        >>> print(unusable_answers_line("diagnosis", limited, limit=10).split("what to do: ")[1])
        run the model on the items without a line (`nova run` resumes its file), or score only \
the answered items with `--answered-only` (the run's manifest records limit=10: a trial on the \
first items, which `evaluate_model(..., limit=)` scores so)
    """
    unusable, scored, failed = _unusable_counts(task, coverage, answered_only=answered_only)
    errors = int(coverage.get("errors") or 0)
    missing = int(coverage.get("missing") or 0)
    without_line = missing - errors
    if scored <= 0 or unusable <= UNUSABLE_SHARE * scored:
        return None
    parts = [f"{status} {n}" for status, n in failed]
    if answered_only and errors:
        parts.append(f"model errors {errors}")
    elif not answered_only and missing:
        parts.append(
            f"missing {missing}" + (f" ({_count(errors, 'model error')})" if errors else "")
        )
    kinds = [status for status, _ in failed]
    kinds += ["missing"] if without_line and not answered_only else []
    kinds += ["model error"] if errors else []
    advice = list(
        dict.fromkeys(_UNUSABLE_ADVICE[kind] for kind in kinds if kind in _UNUSABLE_ADVICE)
    )
    if limit is not None and "missing" in kinds:
        missing_advice = _UNUSABLE_ADVICE["missing"]
        advice[advice.index(missing_advice)] = (
            f"{missing_advice}, or score only the answered items with `--answered-only` (the "
            f"run's manifest records limit={limit}: a trial on the first items, which "
            "`evaluate_model(..., limit=)` scores so)"
        )
    return (
        f"{task}: {unusable} of {scored} items ({100 * unusable / scored:.0f}%) have no usable "
        f"answer and score as no prediction: {', '.join(parts)}"
        + (f"; what to do: {'; '.join(advice)}" if advice else "")
    )


def unusable_answers_lines(report: Mapping[str, Any]) -> list[str]:
    """:func:`unusable_answers_line` of every task of a report that calls for one, in order.

    Example:
        >>> report = {"tasks": {"diagnosis": {"coverage": {"items": 4, "answered": 4,
        ...     "missing": 0, "errors": 0, "parse_status": {"ok": 1, "unparseable": 3}}}}}
        >>> unusable_answers_lines(report)[0][:56]
        'diagnosis: 3 of 4 items (75%) have no usable answer and '
    """
    answered_only = bool(report.get("answered_only"))
    limit = run_limit(report)
    return _per_task_lines(
        report,
        lambda task, counts: (
            unusable_answers_line(task, counts, answered_only=answered_only, limit=limit)
            if counts
            else None
        ),
    )


def run_limit(report: Mapping[str, Any]) -> int | None:
    """The largest ``limit`` the run manifests of a report's predictions record, if any.

    Example:
        >>> run_limit({"predictions": {"manifests": [{"runtime": {"limit": 10}}, None]}})
        10
        >>> run_limit({"predictions": {"manifests": [{"runtime": {}}]}}) is None
        True
    """
    predictions = report.get("predictions")
    manifests = predictions.get("manifests") if isinstance(predictions, Mapping) else None
    limits = [
        manifest["runtime"]["limit"]
        for manifest in manifests or []
        if isinstance(manifest, Mapping)
        and isinstance(manifest.get("runtime"), Mapping)
        and type(manifest["runtime"].get("limit")) is int
    ]
    return max(limits) if limits else None


def _metric_width(keys: Sequence[str]) -> int:
    """The metric column's width: 13, or the longest key shown (``METEOR-exact+stem``)."""
    return max([13, *(len(key) for key in keys)])


def _rows(report: Mapping[str, Any]) -> list[tuple[str, str, str, str]]:
    rows = []
    for task in TASK_ORDER:
        if task not in report["tasks"]:
            continue
        task_report = report["tasks"][task]
        for key in headline_keys(task, task_report["metrics"]):
            if key in task_report["metrics"]:
                rows.append(
                    (task, key, _percent(task_report["metrics"][key]), _interval(task_report, key))
                )
    return rows


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def coverage_phrase(coverage: Mapping[str, Any], *, answered_only: bool = False) -> str:
    """How many items of a task were answered, and what became of the others, in words.

    A model error (a failed model call) is not an answer: it is among the missing items,
    and said apart from the items without a line. With ``answered_only`` the items without
    a line are left out and the model errors are scored (as no prediction).

    Args:
        coverage: a task's coverage: ``items``, ``answered``, ``missing`` (model errors
            included) and ``errors``.
        answered_only: whether only the items with a line were scored.

    Example:
        >>> coverage_phrase({"items": 132, "answered": 0, "missing": 132, "errors": 3})
        '0/132 answered, 132 missing (scored as no prediction): 3 model errors, 129 without a line'
        >>> coverage_phrase({"items": 132, "answered": 0, "missing": 132, "errors": 3},
        ...                 answered_only=True)
        '0/132 answered, 3 model errors (scored as no prediction), 129 without a line left out'
        >>> coverage_phrase({"items": 4, "answered": 4, "missing": 0, "errors": 0})
        '4/4 answered, 0 missing'
        >>> coverage_phrase({"items": 4, "answered": 3, "missing": 1, "errors": 1,
        ...     "first_error": {"item": "case0002_002.png", "error": "RuntimeError: OOM"}})
        '3/4 answered, 1 missing (scored as no prediction): 1 model error (first: case0002_002.png: RuntimeError: OOM; rerun to retry), 0 without a line'
    """
    answered, items = coverage["answered"], coverage["items"]
    missing, errors = coverage["missing"], coverage["errors"]
    phrase = f"{answered}/{items} answered"
    if answered_only:
        return (
            f"{phrase}, {_count(errors, 'model error')}{_first_error(coverage)} "
            "(scored as no prediction), "
            f"{missing - errors} without a line left out"
        )
    if not missing:
        return f"{phrase}, 0 missing"
    return (
        f"{phrase}, {missing} missing (scored as no prediction): "
        f"{_count(errors, 'model error')}{_first_error(coverage)}, "
        f"{missing - errors} without a line"
    )


def _first_error(coverage: Mapping[str, Any]) -> str:
    """`` (first: ITEM: MESSAGE; rerun to retry)`` when the coverage names its first model
    error, the message on one line and cut at 120 characters; else ``""``."""
    first = coverage.get("first_error")
    if not coverage.get("errors") or not isinstance(first, Mapping):
        return ""
    message = _clipped(str(first.get("error", "")))
    return f" (first: {first.get('item')}: {message}; rerun to retry)"


def _clipped(message: str) -> str:
    """A message on one line, cut at 120 characters (a coverage line names an error by it)."""
    message = " ".join(message.split())
    return message if len(message) <= 120 else message[:119] + "…"


def parse_status_phrase(coverage: Mapping[str, Any]) -> str:
    """A task's parse-status counts, each failure status with its first item and the
    parser's error, as a model error is named (``""`` when nothing was parsed).

    Example:
        >>> parse_status_phrase({"parse_status": {"invalid_boxes": 4, "ok": 21},
        ...     "first_failure": {"invalid_boxes": {"item": "case0001_001.png", "error":
        ...     "every box written had a value that is not a finite number ([nan, 10, 50, \
50]): no box to score"}}})
        'invalid_boxes 4 (first: case0001_001.png: every box written had a value that is not a finite number ([nan, 10, 50, 50]): no box to score), ok 21'
        >>> parse_status_phrase({"parse_status": {"unparseable": 2}, "first_failure": {
        ...     "unparseable": {"item": "case0002_001.png", "error": None}}})
        'unparseable 2 (first: case0002_001.png)'
    """
    firsts = coverage.get("first_failure") or {}
    parts = []
    for status, count in (coverage.get("parse_status") or {}).items():
        first = firsts.get(status)
        named = ""
        if isinstance(first, Mapping) and first.get("item"):
            message = _clipped(str(first.get("error") or ""))
            named = f" (first: {first['item']}{f': {message}' if message else ''})"
        parts.append(f"{status} {count}{named}")
    return ", ".join(parts)


def _coverage_lines(report: Mapping[str, Any]) -> list[str]:
    lines = []
    for task in TASK_ORDER:
        if task not in report["tasks"]:
            continue
        task_report = report["tasks"][task]
        coverage = task_report["coverage"]
        statuses = coverage.get("parse_status", {})
        parse = parse_status_phrase(coverage)
        answered_only = bool(report.get("answered_only"))
        line = f"{task}: {coverage_phrase(coverage, answered_only=answered_only)}"
        if parse:
            line += f"; parse: {parse}"
        metrics = task_report["metrics"]
        if metrics.get("n_cases_without_reference"):
            line += f"; cases without a final diagnosis (excluded): {metrics['n_cases_without_reference']}"
        for status in registry.TASKS[task].parse_statuses:
            if statuses.get(status) and status in _STATUS_NOTES:
                line += f" ({status}: {_STATUS_NOTES[status]})"
        if coverage.get("boxes_out_of_image"):  # the JSON holds the count, 0 included
            line += (
                f"; boxes past the image edge (scored as given): {coverage['boxes_out_of_image']}"
                f" in {_count(coverage.get('answers_out_of_image', 0), 'answer')}, by any margin"
            )
        line += box_repair_phrase(coverage)
        if metrics.get("n_truncated_predictions"):
            line += f"; {metrics['n_truncated_predictions']} boxes beyond max_detections not scored for AP"
        lines.append(line)
        lines.extend(
            f"{task}: note: {note}"
            for note in task_report.get("notes", [])
            if not note.startswith(_warned_notes())  # the report's first line says it
        )
        cached = judge_cache_line(task_report)
        if cached:
            lines.append(f"{task}: note: {cached}")
    return lines


def box_repair_phrase(coverage: Mapping[str, Any]) -> str:
    """What the box parser dropped or put right, for a task's coverage line ("" for nothing).

    Example:
        >>> box_repair_phrase({"boxes_dropped": 3, "answers_with_boxes_dropped": 2,
        ...                     "boxes_swapped": 0, "box_repairs_unrecorded": 0})
        '; boxes dropped (zero width or height, a value that is not a finite number, a size \
past a float, or box_2d under a pixel convention; not scored): 3 in 2 answers'
        >>> box_repair_phrase({"boxes_out_of_image": 4})
        ''

        Counted per reason when the parser read every such answer here:

        >>> box_repair_phrase({"boxes_dropped": 7, "answers_with_boxes_dropped": 6,
        ...     "boxes_dropped_by_reason": {"with a value that is not a finite number": 6,
        ...                                 "of zero width or height": 1}})
        '; boxes dropped (not scored): 7 in 6 answers (6 with a value that is not a finite number, 1 of zero width or height)'
    """
    phrase = ""
    why = coverage.get("boxes_dropped_by_reason")
    if coverage.get("boxes_dropped") and isinstance(why, Mapping) and why:
        phrase += (
            f"; boxes dropped (not scored): {coverage['boxes_dropped']} in "
            f"{_count(coverage.get('answers_with_boxes_dropped', 0), 'answer')} "
            f"({', '.join(f'{n} {reason}' for reason, n in why.items())})"
        )
    elif coverage.get("boxes_dropped"):
        phrase += (
            "; boxes dropped (zero width or height, a value that is not a finite number, a "
            "size past a float, or box_2d under a pixel convention; not scored): "
            f"{coverage['boxes_dropped']} in "
            f"{_count(coverage.get('answers_with_boxes_dropped', 0), 'answer')}"
        )
    if coverage.get("boxes_swapped"):
        phrase += (
            f"; boxes whose corners came in the wrong order, put right (scored): "
            f"{coverage['boxes_swapped']} in "
            f"{_count(coverage.get('answers_with_boxes_swapped', 0), 'answer')}"
        )
    if coverage.get("box_repairs_unrecorded"):
        phrase += (
            f"; {_count(coverage['box_repairs_unrecorded'], 'answer')} parsed earlier by a "
            "`nova parse` that did not record dropped or swapped boxes (unknown for those)"
        )
    return phrase


def judge_cache_line(task_report: Mapping[str, Any]) -> str | None:
    """How many of a judge's verdicts came from its cache, from the report's judge record.

    A cached verdict is trusted as far as the folder it came from (see
    ``novabench.metrics.judge.cache``): the reader is told how much rests on it. None when
    the task had no judge keeping counts, or when a note already says it (``nova evaluate``
    writes one naming the cache folder).

    Example:
        >>> judged = {"notes": [], "judge": {"kind": "case", "model": "m",
        ...     "stats": {"calls": 40, "cache_hits": 38, "cache_rejected": 1}}}
        >>> judge_cache_line(judged)
        'case judge m: 38 of 40 verdicts from the cache, 1 cache entry rejected'
        >>> judge_cache_line({"notes": [], "judge": {"kind": "pair", "stats": {}}}) is None
        True
    """
    judge = task_report.get("judge")
    if not isinstance(judge, Mapping):
        return None
    stats = judge.get("stats")
    if not isinstance(stats, Mapping) or "cache_hits" not in stats:
        return None
    if any(" from the cache (" in str(note) for note in task_report.get("notes") or []):
        return None
    kind = {"case": "case judge", "keyword": "keyword judge"}.get(str(judge.get("kind")), "judge")
    model = f" {judge['model']}" if isinstance(judge.get("model"), str) else ""
    rejected = int(stats.get("cache_rejected", 0))
    return (
        f"{kind}{model}: {stats['cache_hits']} of {stats.get('calls', '?')} verdicts from the "
        f"cache, {rejected} cache {'entry' if rejected == 1 else 'entries'} rejected"
    )


# The scoring settings a task's metrics record (non-numeric), with the label a reader sees.
_SETTING_LABELS: tuple[tuple[str, str], ...] = (
    ("BERTScore_hash", "BERTScore"),
    ("BERTScore_model_sha256", "BERTScore weights sha256"),
    ("METEOR_variant", "METEOR"),
    ("METEOR_nltk", "nltk"),
    ("keyword_extractor", "keywords"),
    ("keyword_averaging", "keyword averaging"),
    ("matcher", "matched by"),
)


def settings_lines(report: Mapping[str, Any], *, short: bool = False) -> list[str]:
    """Per task, the settings that decide whether its numbers compare with another report.

    The BERTScore model and layer (its hash), the METEOR variant, the keyword extractor and
    averaging, the diagnosis matcher or judge (metrics left out are in the task's notes).
    ``short`` names the BERTScore model by its folder or id and layer, for a terminal line.

    The first line names the preset the answers were asked with (``nova run --preset``) and
    the parts of it overridden, when the run manifests record one.

    Example:
        >>> report = {"tasks": {"captioning": {"metrics": {"METEOR_variant": "exact+stem",
        ...     "BERTScore_hash": "/m/minilm/model_L6_no-idf_version=0.3.12"}}}}
        >>> settings_lines(report, short=True)
        ['captioning: BERTScore minilm/model layer 6; METEOR exact+stem']
        >>> settings_lines({"predictions": {"manifests": [{"preset": {"name": "gemini",
        ...     "overridden": ["box_convention"]}}]}})
        ['answers asked with preset gemini (overridden: box_convention)']
    """
    lines = _preset_lines(report)
    for task in TASK_ORDER:
        task_report = report.get("tasks", {}).get(task)
        if task_report is None:
            continue
        metrics = task_report.get("metrics", {})
        parts = []
        for key, label in _SETTING_LABELS:
            value = metrics.get(key)
            if isinstance(value, str) and value:
                if key == "BERTScore_hash" and short:
                    value = _bertscore_model(value)
                elif key == "BERTScore_model_sha256" and short:
                    value = value[:12]
                parts.append(f"{label} {value}")
        if parts:
            lines.append(f"{task}: " + "; ".join(parts))
    return lines


def _preset_lines(report: Mapping[str, Any]) -> list[str]:
    """The presets the report's run manifests record, one line (none when no preset)."""
    manifests = (report.get("predictions") or {}).get("manifests") or []
    presets = []
    for manifest in manifests:
        preset = manifest.get("preset") if isinstance(manifest, Mapping) else None
        if isinstance(preset, Mapping) and preset.get("name"):
            overridden = [str(part) for part in preset.get("overridden") or []]
            words = f"preset {preset['name']}"
            if overridden:
                words += f" (overridden: {', '.join(overridden)})"
            if words not in presets:
                presets.append(words)
    return ["answers asked with " + "; ".join(presets)] if presets else []


def comparison_settings_lines(comparison: Mapping[str, Any], *, short: bool = False) -> list[str]:
    """:func:`settings_lines` of a comparison (both models were scored with these settings).

    Example:
        >>> comparison_settings_lines({"settings": {"captioning": {"METEOR_variant": "exact"}}})
        ['captioning: METEOR exact']
    """
    settings = comparison.get("settings") or {}
    as_report = {"tasks": {task: {"metrics": values} for task, values in settings.items()}}
    return settings_lines(as_report, short=short)


def with_current_keys(
    report: Mapping[str, Any], *, source: str = "report", bertscore_folders: Collection[str] = ()
) -> dict[str, Any]:
    """A report read with today's keys: keys an old report gave another meaning are renamed.

    - ``METEOR``: reports written before ``METEOR`` meant only nltk's METEOR with WordNet put
      the exact+stem reading under ``METEOR`` too, with ``METEOR_variant: "exact+stem"``
      beside it; that value moves to ``METEOR-exact+stem``. A ``METEOR`` without a recorded
      variant is left as it is (the leaderboard calls its setting unknown).
    - ``top1`` / ``top5``: reports written before the keys named their reading (no
      ``match_rule`` recorded) held whatever matched. By the recorded ``matcher``: the
      lexicon matcher's move to ``top1-lexicon`` / ``top5-lexicon``, a pair judge's or a
      function's to ``top1-pairwise`` / ``top5-pairwise``, the case judge's stay.
    - ``ClinicalF1`` / ``ModalityF1`` / ``BinaryF1``: likewise (no ``keyword_source``
      recorded): the offline lexicon's (``keyword_extractor: "lexicon (offline...)"``) move to
      the ``-lexicon`` keys, the LLM keyword judge's stay.
    - ``BERTScore-F1``: reports written before the key meant roberta-large at layer 17 only
      held any model's; by the recorded ``BERTScore_hash``, another model's value moves to
      that model's key (``BERTScore-F1-MiniLM-L6``, ``BERTScore-F1[<name>-L<layer>]``), and
      so does roberta-large's with idf weighting, rescaling or the fast tokenizer
      (``BERTScore-F1[roberta-large-L17-idf-rescaled]``). A hash naming ``parent/name`` is
      read as a Hub id unless ``bertscore_folders`` names it a local folder
      (:func:`novabench.tasks.captioning.bertscore_folder_models`: the leaderboard's other
      reports tell).

    Values, intervals and breakdown columns move together. Other reports come back equal.

    Raises:
        NovaInputError: an old report whose recorded matcher, keyword extractor or
            BERTScore hash does not say which reading it scored (one line naming ``source``, the setting and the
            command that re-scores).

    Example:
        >>> old = {"tasks": {"captioning": {"metrics": {"METEOR": 0.2, "METEOR_variant": "exact+stem"},
        ...                                 "confidence_intervals": {"METEOR": [0.1, 0.3]}}}}
        >>> new = with_current_keys(old)["tasks"]["captioning"]
        >>> new["metrics"], new["confidence_intervals"]
        ({'METEOR-exact+stem': 0.2, 'METEOR_variant': 'exact+stem'}, {'METEOR-exact+stem': [0.1, 0.3]})
        >>> old = {"tasks": {"diagnosis": {"metrics": {"top1": 0.4, "top5": 0.6,
        ...     "matcher": "lexicon matcher (nova-diagnosis-lexicon, 900 entries)"}}}}
        >>> sorted(with_current_keys(old)["tasks"]["diagnosis"]["metrics"])
        ['matcher', 'top1-lexicon', 'top5-lexicon']
    """
    result = dict(report)
    names_by_task = current_key_names(report, source=source, bertscore_folders=bertscore_folders)
    for task, names in names_by_task.items():
        result = _renamed(result, task, names)
    return result


def current_key_names(
    report: Mapping[str, Any], *, source: str = "report", bertscore_folders: Collection[str] = ()
) -> dict[str, dict[str, str]]:
    """Per task, each key of an old report that :func:`with_current_keys` renames and the key
    it is read under today (tasks with none left out; ``bertscore_folders`` as there).

    Raises:
        NovaInputError: as :func:`with_current_keys`.

    Example:
        >>> old = {"tasks": {"captioning": {"metrics": {"BinaryF1": 0.7,
        ...     "keyword_extractor": "lexicon (offline)"}}}}
        >>> current_key_names(old)
        {'captioning': {'BinaryF1': 'BinaryF1-lexicon'}}
    """
    from novabench.tasks import behaviour

    names: dict[str, dict[str, str]] = {}
    for task in TASK_ORDER:
        found = behaviour(task).legacy_key_names(
            _task_metrics(report, task), source, bertscore_folders
        )
        if found:
            names[task] = found
    return names


def _task_metrics(report: Mapping[str, Any], task: str) -> Mapping[str, Any]:
    section = (report.get("tasks") or {}).get(task)
    metrics = section.get("metrics") if isinstance(section, Mapping) else None
    return metrics if isinstance(metrics, Mapping) else {}


def _renamed(report: dict[str, Any], task: str, names: Mapping[str, str]) -> dict[str, Any]:
    """The report with the task's keys renamed in its metrics, intervals and breakdowns."""
    names = {**names, **{f"{old}_ci": f"{new}_ci" for old, new in names.items()}}

    def renamed(values: Any) -> Any:
        if not isinstance(values, Mapping):
            return values
        return {names.get(key, key): value for key, value in values.items()}

    section = report["tasks"][task]
    upgraded = dict(section)
    upgraded["metrics"] = renamed(section.get("metrics") or {})
    upgraded["confidence_intervals"] = renamed(section.get("confidence_intervals") or {})
    result = {**report, "tasks": {**report["tasks"], task: upgraded}}
    breakdowns = dict(report.get("breakdowns") or {})
    if isinstance(breakdowns.get(task), Mapping):
        breakdowns[task] = {
            dimension: [renamed(row) for row in rows] if isinstance(rows, list) else rows
            for dimension, rows in breakdowns[task].items()
        }
        result["breakdowns"] = breakdowns
    return result


def shareable_path(path: str | os.PathLike[str], report_path: str | os.PathLike[str]) -> str:
    """A file as a shared report names it: relative to the report's folder, else by name.

    The relative form is used when the file lies in the report's folder, below it, or beside
    it (one ``..``): a deeper climb would reveal the local layout, so the name alone is kept.

    Example:
        >>> shareable_path("/home/ana/nova/runs/qwen.jsonl", "/home/ana/nova/reports/qwen.json")
        '../runs/qwen.jsonl'
        >>> shareable_path("/data/releases/nova", "/home/ana/nova/reports/qwen.json")
        'nova'
    """
    target = Path(os.path.abspath(path))
    folder = Path(os.path.abspath(report_path)).parent
    try:
        relative = Path(os.path.relpath(target, folder))
    except ValueError:  # another drive (Windows): no relative form
        return target.name
    if (
        relative.parts[:2] == ("..", "..")
        or relative.parts[:1] == ("..",)
        and len(relative.parts) == 1
    ):
        return target.name
    return relative.as_posix()


def shareable_paths(
    report: Mapping[str, Any], report_path: str | os.PathLike[str]
) -> dict[str, Any]:
    """A copy of a report (or comparison) with no local absolute path in it.

    The release (``data.path``), the prediction files (``predictions.paths``), a category
    map (``category_map``) and a judge cache (``cache_folder``) are named by
    :func:`shareable_path`, and so is any other absolute
    ``path`` or ``from`` (the run manifests' merged shards and parsed raw files); a BERTScore model given as a
    local folder (``BERTScore_hash``) by :func:`portable_bertscore_hash`. ``nova evaluate``
    and ``nova compare`` write this form unless ``--full-paths`` is given.

    Example:
        >>> report = {"data": {"path": "/srv/nova"}, "predictions": {"paths": ["/srv/out/a.jsonl"]},
        ...           "tasks": {"captioning": {"metrics": {"BERTScore_hash": "/venv/site/minilm/model_L6"}}}}
        >>> shared = shareable_paths(report, "/srv/out/report.json")
        >>> shared["data"]["path"], shared["predictions"]["paths"], shared["tasks"]["captioning"]["metrics"]
        ('../nova', ['a.jsonl'], {'BERTScore_hash': 'minilm/model_L6'})
    """

    def rewrite(value: Any, key: str | None = None) -> Any:
        if isinstance(value, Mapping):
            copied = {k: rewrite(v, k) for k, v in value.items()}
            # From the originals: a path given relative (to this process's folder) too.
            if key == "data" and isinstance(value.get("path"), str):
                copied["path"] = shareable_path(value["path"], report_path)
            if key == "predictions" and isinstance(value.get("paths"), list):
                copied["paths"] = [
                    shareable_path(p, report_path) if isinstance(p, str) else p
                    for p in value["paths"]
                ]
            return copied
        if isinstance(value, list):
            return [rewrite(v) for v in value]
        if key == "BERTScore_hash" and isinstance(value, str):
            return portable_bertscore_hash(value)
        if key == "category_map" and isinstance(value, str):
            return shareable_path(value, report_path)
        if key == "cache_folder" and isinstance(value, str) and not value.startswith("~"):
            return shareable_path(value, report_path)  # "~/..." already hides the home folder
        if key in ("path", "from") and isinstance(value, str) and os.path.isabs(value):
            return shareable_path(value, report_path)  # e.g. a run manifest's merged shards
        return value

    return rewrite(report)


def _bertscore_model(bertscore_hash: str) -> str:
    """The model (a Hub id, or a folder's last two path parts) and layer in a bert_score hash.

    The hash itself when it does not read as ``{model}_L{layer}_...``.
    """
    import re

    found = re.match(r"(.+)_L(\d+)_", portable_bertscore_hash(bertscore_hash))
    if found is None:
        return bertscore_hash
    return f"{found.group(1)} layer {found.group(2)}"


def render_table(report: Mapping[str, Any], *, explain: bool = False) -> str:
    """A plain-text table in percent with confidence intervals, then coverage lines.

    Its last column says how far each value can be put beside the paper's figure of that
    name (``TaskSpec.comparison_with_paper``, as the Markdown and HTML reports' column
    "comparable with the paper's?"), in short forms that the line under the table spells out.
    Under it: which keys are better lower, why each ``n/a`` value is undefined, and either
    where the keys are defined or (``explain``) each shown key's definition, direction and
    source, one line each (the Markdown and HTML reports always carry them: a terminal
    report is read again and again, a line per key each time would bury the numbers).

    Example:
        >>> report = {"bootstrap": {"confidence": 0.95}, "tasks": {"diagnosis": {"metrics": {"top1": 0.25, "top5": 0.5},
        ...     "confidence_intervals": {"top1": [0.0, 0.75]}, "notes": [],
        ...     "coverage": {"items": 4, "answered": 4, "missing": 0, "errors": 0, "parse_status": {}}}}}
        >>> for line in render_table(report).splitlines()[:5]:
        ...     print(line.rstrip())
        task          metric        value %  95% CI       vs paper
        ----------------------------------------------------------
        diagnosis     top1           25.0  [0.0, 75.0]    yes, judge
        diagnosis     top5           50.0                 yes, judge
        vs paper (comparable with the paper's?): yes, judge = yes, up to the judge model (the paper's is not known)
        >>> render_table(report).splitlines()[6:8]
        ['every key: higher is better', 'what each key measures and where its definition comes from: nova evaluate --explain, or the Markdown/HTML report']
        >>> print(render_table(report, explain=True).splitlines()[7])
        top1: cases whose most likely diagnosis matches the final diagnosis (one LLM judge call per case), over cases with a final diagnosis; higher is better; definition: co-authors' procedure, our wording
    """
    level = int(round(100 * report.get("bootstrap", {}).get("confidence", 0.95)))
    rows = _rows(report)
    width = _metric_width([key for _, key, _, _ in rows])
    interval_title = NO_INTERVALS if without_intervals(report) else f"{level}% CI"
    interval_width = max([len(interval_title), *(len(interval) for *_, interval in rows)])
    header = (
        f"{'task':<13} {'metric':<{width}} {'value %':>7}  {interval_title:<{interval_width}}  "
        f"{VERSUS_PAPER_SHORT_TITLE}"
    )
    lines = report_first_lines(report)
    lines += [header, "-" * len(header)]
    shown_versus = []
    for task, key, value, interval in rows:
        versus = comparison_with_paper(report, task, key)
        shown_versus.append(versus)
        lines.append(
            # The value is 2 narrower than its title ("value %"): the interval pads it back.
            f"{task:<13} {key:<{width}} {value:>5}  {interval:<{interval_width + 2}}  "
            f"{short_comparison(versus)}"
        )
    legend = versus_paper_legend(shown_versus)
    if legend:
        lines.append(legend)
    shown = [(task, key) for task, key, _, _ in rows]
    if shown:  # a paragraph of its own under the table and its legend
        lines += ["", direction_line(shown)]
        if explain:
            lines += [key_meaning_line(task, key) for task, key in shown]
        else:
            lines.append(EXPLAIN_POINTER)
    lines += undefined_value_lines(report)
    lines.append("")
    lines.extend(_coverage_lines(report))
    lines.extend(f"settings: {line}" for line in settings_lines(report, short=True))
    lines.extend(_human_reference_lines(report))
    published = published_line(report)
    if published:
        lines.append(published)
    return "\n".join(lines)


def report_first_lines(report: Mapping[str, Any]) -> list[str]:
    """What a report's reader must see before its first number, in every output, in order.

    The synthetic-data notice, the release's reading warnings, answers of two versions of a
    function's code, a preset's input-size rule applied to a function's answers, the
    answered-only scope with its counts per task, an unfinished run (its status, tasks asked
    and never answered), answers not read, boxes past the image, tasks whose answers
    are mostly unusable, METEOR's stand-in, too few resamples, then the keys that stand in
    for the paper's. The terminal prints them first, the Markdown and HTML reports right
    under their title (before the Model line), so all three show them alike.

    Example:
        >>> note = "METEOR not computed: the nltk WordNet corpus is not installed"
        >>> report_first_lines({"tasks": {"captioning": {"notes": [note]}}})
        ['warning: captioning: METEOR not computed: the nltk WordNet corpus is not installed']
    """
    lines = [
        synthetic_data_line(report),
        release_warnings_line(report),
        mixed_code_line(report),
        function_input_size_line(report),
        answered_only_line(report),
        *answer_reading_lines(report),
        *_per_task_lines(report, many_boxes_line),
    ]
    lines += [meteor_fallback_line(report), few_resamples_line(report), *stand_in_lines(report)]
    return [line for line in lines if line]


def assumed_box_order_line(predictions: Mapping[str, Any]) -> str | None:
    """The box answers read in the protocol's y-first order although no prompt on record
    asked for it: labelled lines ``label: [a, b, c, d]`` with no run manifest (user19).

    The one line ``nova evaluate``, ``nova compare`` (per side) and ``nova parse`` say of
    them, counted by :func:`novabench.run.predictions.labelled_lines_read_y_first`.

    Args:
        predictions: a report's ``predictions`` (``box_answers.labelled_read_y_first``).

    Returns:
        One line, or None when no answer was read so.

    Example:
        >>> print(assumed_box_order_line({"box_answers": {"read_here": 9,
        ...     "parsed_earlier": {}, "labelled_read_y_first": 7}}))
        localization: 7 answers in labelled lines (label: [a, b, c, d]) read y-first as the protocol's [ymin, xmin, ymax, xmax]: no run manifest records the prompt, so its order is assumed; if it asked [x1, y1, x2, y2], pass --box-convention xyxy_norm1000
    """
    assumed = int((predictions.get("box_answers") or {}).get("labelled_read_y_first") or 0)
    if not assumed:
        return None
    return (
        f"{registry.task_answered_in('boxes')}: {assumed} answers in labelled lines (label: "
        "[a, b, c, d]) read y-first as the protocol's [ymin, xmin, ymax, xmax]: no run "
        "manifest records the prompt, so its order is assumed; if it asked [x1, y1, x2, y2], "
        "pass --box-convention xyxy_norm1000"
    )


def answer_reading_lines(report: Mapping[str, Any]) -> list[str]:
    """The first lines that say how the answers were read, in :func:`report_first_lines` order.

    An unfinished run, answers not read (a box order no prompt on record fixes), boxes past
    the image, and tasks whose answers are mostly unusable: what a viewer of the answers
    (the explorer Space) must see even where no score is shown.

    Example:
        >>> report = {"tasks": {"diagnosis": {"coverage": {"items": 4, "answered": 4,
        ...     "missing": 0, "errors": 0, "parse_status": {"ok": 1, "unparseable": 3}}}}}
        >>> [line[:31] for line in answer_reading_lines(report)]
        ['diagnosis: 3 of 4 items (75%) h']
        >>> answer_reading_lines({"tasks": {}})
        []
    """
    read = report.get("predictions") or {}  # how the answers were read
    lines = [
        unfinished_run_line(report),
        unverified_file_line(report),
        *_per_task_lines(report, unread_boxes_line),
        assumed_box_order_line(read),
        *_per_task_lines(report, lambda task, counts: boxes_outside_line(task, counts, read)),
        *_per_task_lines(report, lambda task, counts: boxes_confined_line(task, counts, read)),
        *_per_task_lines(report, lambda task, counts: tiny_boxes_line(task, counts, read)),
        *unusable_answers_lines(report),
    ]
    return [line for line in lines if line]


def with_notices(report: Mapping[str, Any]) -> dict[str, Any]:
    """The report with its first lines (:func:`report_first_lines`) as the top-level ``notices``.

    A program reading the JSON gets the notices the terminal, Markdown and HTML show before
    the first number, the same texts in the same order, without re-deriving them. Computed
    from the report as it will be written (paths already made shareable), so call it last.

    Example:
        >>> report = {"data": {"provenance": {"origin": "nova ingest"}}, "tasks": {}}
        >>> [line[:28] for line in with_notices(report)["notices"]]
        ['notice: NOT THE NOVA RELEASE']
        >>> with_notices({"tasks": {}})
        {'notices': [], 'tasks': {}}
    """
    return {"notices": report_first_lines(report), **_without_notices(report)}


def comparison_with_notices(comparison: Mapping[str, Any]) -> dict[str, Any]:
    """The comparison with :func:`comparison_first_lines` as the top-level ``notices``.

    Example:
        >>> comparison = {"a": {"data": {"provenance": {"origin": "nova ingest"}}}, "tasks": {}}
        >>> [line[:28] for line in comparison_with_notices(comparison)["notices"]]
        ['notice: NOT THE NOVA RELEASE']
    """
    return {"notices": comparison_first_lines(comparison), **_without_notices(comparison)}


def _without_notices(document: Mapping[str, Any]) -> dict[str, Any]:
    # A report read back and written again gets its notices anew, never a stale list.
    return {key: value for key, value in document.items() if key != "notices"}


def _human_reference_lines(report: Mapping[str, Any]) -> list[str]:
    """One line per task with a human reference: its first headline key, model and raters."""
    lines = []
    for task, section in (report.get("human_reference") or {}).items():
        if not section.get("available"):
            lines.append(f"{task}: no human reference ({section.get('reason', 'no rater boxes')})")
            continue
        key = HEADLINE_KEYS[task][0]
        parts = [
            f"{label} {_percent(section[name].get(key))}"
            for name, label in _HUMAN_COLUMNS
            if section.get(name, {}).get("available", True) and name in section
        ]
        # On the images scored: with --answered-only the model's subset, which says so.
        scored, total = section.get("n_images"), (report.get("data") or {}).get("n_images")
        subset = (
            f" (on the {scored} images scored, not all {total})"
            if isinstance(scored, int) and isinstance(total, int) and scored != total
            else ""
        )
        lines.append(f"{task}: human reference{subset}, {key}: " + ", ".join(parts))
    return lines


def render_markdown(report: Mapping[str, Any]) -> str:
    """The report as Markdown: a table per task in percent, coverage and provenance.

    Example:
        >>> report = {"toolkit": {"version": "0"}, "data": {"path": "d", "n_images": 1, "n_cases": 1},
        ...     "bootstrap": {"confidence": 0.95, "n_resamples": 0, "seed": 0}, "predictions": {"paths": ["p"]},
        ...     "tasks": {"diagnosis": {"metrics": {"top1": 1.0, "top5": 1.0}, "confidence_intervals": {},
        ...     "notes": [], "coverage": {"items": 1, "answered": 1, "missing": 0, "errors": 0, "parse_status": {}}}}}
        >>> markdown = render_markdown(report)
        >>> "| diagnosis | top1 | 100.0 |" in markdown, markdown.splitlines()[0]
        (True, '# NOVA evaluation report: p')
    """
    level = int(round(100 * report.get("bootstrap", {}).get("confidence", 0.95)))
    model = model_name(report)
    # The title marks the scope; its counts are in the first lines, as in every output.
    scope = " (answered items only)" if report.get("answered_only") else ""
    lines = [
        f"# NOVA evaluation report: {markdown_text(model)}{scope}",
        "",
        f"Model: **{markdown_text(model)}**. "
        f"Data: {markdown_code_span(report['data']['path'])} ({report['data']['n_images']} images, {report['data']['n_cases']} cases). "
        f"Predictions: {', '.join(markdown_code_span(p) for p in report['predictions']['paths'])}. "
        f"novabench {report['toolkit']['version']}.",
        "",
        f"| task | metric | value (%) | {level}% CI (bootstrap of {resampled_unit(report['bootstrap'])}, n={report['bootstrap']['n_resamples']}, seed={report['bootstrap']['seed']}) | {VERSUS_PAPER} |",
        "|---|---|---:|---|---|",
    ]
    # Every notice and warning under the title, before the Model line, in the terminal's
    # order; one paragraph each (adjacent lines would render as one run-on paragraph).
    lines[2:2] = [
        part
        for line in report_first_lines(report)
        for part in (f"**{markdown_text_with_code(line)}**", "")
    ]
    versus = {
        (task, key): comparison_with_paper(report, task, key)
        for task in TASK_ORDER
        for key in headline_keys(task, _task_metrics(report, task))
    }
    if without_intervals(report):
        lines[-2:] = [
            f"Values in percent; {NO_INTERVALS}.",
            "",
            f"| task | metric | value (%) | {VERSUS_PAPER} |",
        ]
        lines.append("|---|---|---:|---|")
        lines += [
            f"| {task} | {key} | {value} | {versus[task, key]} |"
            for task, key, value, _ in _rows(report)
        ]
    else:
        lines += [
            f"| {task} | {key} | {value} | {interval} | {versus[task, key]} |"
            for task, key, value, interval in _rows(report)
        ]
    undefined = undefined_value_lines(report)
    lines += ["", *(f"- {line}" for line in undefined)] if undefined else []
    lines += ["", "## Coverage", ""] + [f"- {line}" for line in _coverage_lines(report)]
    settings = settings_lines(report)
    if settings:
        lines += ["", "## Settings", ""] + [f"- {markdown_text(line)}" for line in settings]
    lines += render_key_meanings(report)
    lines += render_human_reference(report)
    lines += render_published(report)
    lines += render_breakdowns(report)
    return "\n".join(lines) + "\n"


#: The header of a key-meaning table (the Markdown report's and the metric card's).
KEY_MEANING_HEADER = (
    "| task | key | what it measures | better | definition from |",
    "|---|---|---|---|---|",
)


def key_meaning_rows(keys: Iterable[tuple[str, str]]) -> list[str]:
    """Markdown rows of a key-meaning table, one per ``(task, key)`` the registry defines.

    Example:
        >>> print(key_meaning_rows([("localization", "FNR")])[0])
        | localization | `FNR` | images with gold given no box at all, over images with gold | lower | ours (the paper's definition is not public) |
    """
    rows = []
    for task, key in keys:
        cells = key_meaning_cells(task, key)
        if cells is None:
            continue
        definition, better, source = cells
        rows.append(
            f"| {task} | `{key}` | {markdown_text(definition)} | {better} | "
            f"{markdown_text(source)} |"
        )
    return rows


def key_meaning_cells(task: str, key: str) -> tuple[str, str, str] | None:
    """A key-meaning table's cells after the task and key: what it measures, which way is
    better (``higher``/``lower``) and where its definition comes from; None for a key the
    registry does not define (the Markdown report's table and the HTML page's read it).

    Example:
        >>> key_meaning_cells("localization", "FNR")[1:]
        ('lower', "ours (the paper's definition is not public)")
    """
    spec = registry.TASKS[task]
    meaning = spec.meaning(key)
    if meaning is None:
        return None
    return meaning.definition, spec.direction(key).split()[0], meaning.source


def render_key_meanings(report: Mapping[str, Any]) -> list[str]:
    """The Markdown report's section on the keys its table shows: what each measures, which
    way it is better, where its definition comes from (``registry.TaskSpec.meaning``).

    Example:
        >>> render_key_meanings({"tasks": {"diagnosis": {"metrics": {"top1": 0.5}}}})[1]
        '## What the keys mean'
    """
    shown = [(task, key) for task, key, _, _ in _rows(report)]
    rows = key_meaning_rows(shown)
    if not rows:
        return []
    return [
        "",
        "## What the keys mean",
        "",
        "Each key of the table, in one line; the metric card gives every rule and edge case.",
        "",
        *KEY_MEANING_HEADER,
        *rows,
    ]


def key_legend_markdown() -> str:
    """Every headline key of every task as a key-meaning table: the metric card's key legend
    (``tests/test_key_meanings.py`` holds the card's block to this text).

    Example:
        >>> key_legend_markdown().splitlines()[2]
        "| localization | `mAP@30` | images whose best box reaches IoU 0.30 with a gold box, over ALL images (an image-level hit rate, not an average precision; scores unused) | higher | co-authors' code (WALDO) |"
    """
    keys = [(task, key) for task in TASK_ORDER for key in registry.TASKS[task].headline_keys]
    return "\n".join([*KEY_MEANING_HEADER, *key_meaning_rows(keys)]) + "\n"


def render_published(
    report: Mapping[str, Any], rows: Sequence[Sequence[str]] | None = None
) -> list[str]:
    """A Markdown section of the published zero-shot figures of the report's metrics.

    ``rows`` replaces :func:`novabench.published.published_rows`'s rows (a leaderboard marks
    its own).

    Example:
        >>> report = {"bootstrap": {"n_resamples": 0}, "tasks": {"diagnosis": {"metrics": {"top1": 0.3}}}}
        >>> render_published(report)[1]
        '## Published zero-shot results (published, not re-scored)'
    """
    from novabench.published import NOT_RESCORED, published_rows, published_sources

    rows = published_rows(report) if rows is None else rows
    if not rows:
        return []
    lines = [
        "",
        f"## Published zero-shot results ({NOT_RESCORED})",
        "",
        "Figures other runs published for the same keys, in percent; they are not recomputed "
        "here and their prompts differ from this run's (see each source).",
        "",
        "| task | metric | model | value (%) | images | source |",
        "|---|---|---|---:|---:|---|",
    ]
    lines += ["| " + " | ".join(markdown_text(cell) for cell in row) + " |" for row in rows]
    lines.append("")
    for source in published_sources().values():
        lines.append(
            f"- {markdown_text(source.title)}: {markdown_text(source.reference)}; "
            f"{markdown_text(source.protocol)}; {markdown_text(source.note)}."
        )
    return lines


def published_line(report: Mapping[str, Any]) -> str:
    """One terminal line on the published figures beside the report ("" when none).

    Example:
        >>> published_line({"bootstrap": {"n_resamples": 0}, "tasks": {"diagnosis": {"metrics": {"top1": 0.3}}}})
        'published, not re-scored: diagnosis top1 (paper) Gemini 2.0 Flash 22.1 (see the Markdown or HTML report for all, with sources)'
    """
    from novabench.published import NOT_RESCORED, published_rows, published_sources

    # The line shows values only: no interval is computed for it.
    rows = published_rows({"bootstrap": {"n_resamples": 0}, "tasks": report.get("tasks") or {}})
    if not rows:
        return ""
    # Each figure's source in a word: the paper's figures and others' re-runs (another
    # prompt) are never read as one list.
    short = {
        f"{source.title} ({source.date})": _SHORT_SOURCE.get(key, key)
        for key, source in published_sources().items()
    }
    best: dict[tuple[str, str, str], list[str]] = {}
    for task, metric, model, value, _, source in rows:
        best.setdefault((task, metric, short.get(source, source)), []).append(f"{model} {value}")
    shown = "; ".join(
        f"{task} {metric} ({source}) "
        + ", ".join(models[:3])
        + (", ..." if len(models) > 3 else "")
        for (task, metric, source), models in best.items()
    )
    return f"{NOT_RESCORED}: {shown} (see the Markdown or HTML report for all, with sources)"


#: How the terminal's one line names each source of published figures.
_SHORT_SOURCE = {"nova-paper": "paper", "waldo-zero-shot": "co-authors' re-run, another prompt"}


def model_name(report: Mapping[str, Any]) -> str:
    """The model a report (or one side of a comparison) scores, as its run manifests name it.

    The manifests' ``model`` (else the backend's ``model``), distinct names joined by " + ";
    without a manifest naming one, the ``model`` the files' lines name; else the predictions
    files' stems; else "unnamed model".

    Example:
        >>> model_name({"predictions": {"paths": ["runs/a.jsonl"], "manifests": [{"model": "qwen"}]}})
        'qwen'
        >>> model_name({"predictions": {"paths": ["runs/a.jsonl", "runs/b.jsonl"], "manifests": [None, None]}})
        'a + b'
        >>> model_name({"predictions": {"paths": ["runs/a.jsonl"], "manifests": [None],
        ...     "line_models": [["gpt-4o"]]}})
        'gpt-4o'
    """
    predictions = report.get("predictions") or {}
    names: list[str] = []
    for manifest in predictions.get("manifests") or []:
        if not manifest:
            continue
        name = manifest.get("model") or (manifest.get("backend") or {}).get("model")
        if name and str(name) not in names:
            names.append(str(name))
    if not names:  # the lines' own word, before a file name the user may have chosen freely
        for from_lines in predictions.get("line_models") or []:
            names.extend(str(name) for name in from_lines or [] if str(name) not in names)
    if not names:
        names = list(dict.fromkeys(Path(str(p)).stem for p in predictions.get("paths") or []))
    return " + ".join(names) if names else "unnamed model"


def render_comparison_markdown(comparison: Mapping[str, Any]) -> str:
    """A comparison as Markdown: both models named, A, B, A - B with its interval and p-value.

    Example:
        >>> side = lambda name: {"predictions": {"paths": [name + ".jsonl"], "manifests": [{"model": name}]},
        ...     "data": {"path": "nova", "n_images": 4, "n_cases": 2}, "toolkit": {"version": "0"}}
        >>> comparison = {"a": side("qwen"), "b": side("llava"), "bootstrap": {"confidence": 0.95,
        ...     "n_resamples": 100, "seed": 0}, "tasks": {"diagnosis": {"top1": {"a": 0.5, "b": 0.25,
        ...     "difference": 0.25, "ci": [0.0, 0.5], "p_value": 0.04}}}}
        >>> markdown = render_comparison_markdown(comparison)
        >>> markdown.splitlines()[0]
        '# NOVA comparison: qwen (A) vs llava (B)'
        >>> "| diagnosis | top1 | 50.0 | 25.0 | +25.0 | [+0.0, +50.0] | 0.040 |" in markdown
        True
    """
    names = {side: markdown_text(model_name(comparison[side])) for side in ("a", "b")}
    bootstrap = comparison.get("bootstrap", {})
    level = int(round(100 * bootstrap.get("confidence", 0.95)))
    data = comparison["a"].get("data", {})
    lines = [
        f"# NOVA comparison: {names['a']} (A) vs {names['b']} (B)",
        "",
        f"A: **{names['a']}** ({_paths(comparison['a'])}); "
        f"B: **{names['b']}** ({_paths(comparison['b'])}). "
        f"Data: {markdown_code_span(data.get('path', '?'))} ({data.get('n_images', '?')} images, "
        f"{data.get('n_cases', '?')} cases). Paired bootstrap: "
        f"n={bootstrap.get('n_resamples', '?')}, seed={bootstrap.get('seed', '?')}, "
        f"{resampled_unit(bootstrap)} drawn.",
        "",
        f"| task | metric | {names['a']} (%) | {names['b']} (%) | A - B | "
        f"{level}% CI of A - B | p |",
        "|---|---|---:|---:|---:|---|---:|",
    ]
    first = comparison_first_lines(comparison)
    if first:  # first under the heading, before any number
        lines[2:2] = [f"**{markdown_text_with_code(line)}**" for line in first] + [""]
    n_resamples = bootstrap.get("n_resamples")
    for task, key, row in _comparison_rows(comparison):
        low, high = row["ci"]
        lines.append(
            f"| {task} | {markdown_text(metric_label(task, key))} | {_percent(row['a'])} | "
            f"{_percent(row['b'])} | {_signed(row['difference'])} | "
            f"[{_signed(low)}, {_signed(high)}] | {_p_value(row['p_value'], n_resamples)} |"
        )
    coverage = comparison.get("coverage") or {}
    notes = comparison.get("notes") or {}
    extra = [
        f"- {names[side]} ({side.upper()}) {task}: {coverage_phrase(counts)}"
        for task in TASK_ORDER
        for side in ("a", "b")
        if (counts := coverage.get(task, {}).get(side))
    ]
    extra += [
        f"- {task}: note: {note}"
        for task, task_notes in notes.items()
        for note in task_notes
        if not note.startswith(_warned_notes())  # the first lines say it
    ]
    if extra:
        lines += ["", "## Coverage and notes", "", *extra]
    settings = comparison_settings_lines(comparison)
    if settings:
        lines += ["", "## Settings", ""] + [f"- {markdown_text(line)}" for line in settings]
    return "\n".join(lines) + "\n"


def _comparison_rows(comparison: Mapping[str, Any]) -> list[tuple[str, str, Mapping[str, Any]]]:
    rows = []
    for task in TASK_ORDER:
        for key in headline_keys(task, comparison["tasks"].get(task, {})):
            row = comparison["tasks"].get(task, {}).get(key)
            if row is not None:
                rows.append((task, key, row))
    return rows


def _paths(side: Mapping[str, Any]) -> str:
    return ", ".join(
        markdown_code_span(p) for p in (side.get("predictions") or {}).get("paths", [])
    )


def _p_value(value: Any, n_resamples: Any = None) -> str:
    """A bootstrap p-value; at its floor 1/(n+1) (no resample as extreme), "<" that floor.

    ``paired_bootstrap`` gives ``(1 + as extreme) / (1 + n)``: its smallest value is not
    an estimate but the resolution of ``n`` resamples, so it is shown as a bound, rounded up.
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if isinstance(n_resamples, int) and n_resamples > 0:
        floor = 1 / (1 + n_resamples)
        if float(value) <= floor * (1 + 1e-9):
            return f"<{math.ceil(floor * 1000 - 1e-9) / 1000:.3f}"
    return f"{float(value):.3f}"


def unfinished_run_line(report: Mapping[str, Any]) -> str:
    """A reader's warning when the run scored had not finished ("" otherwise).

    Built from what the report recorded (``predictions.unfinished_run``: each file's
    manifest status and, for a running one, its writer; tasks asked and never answered).

    Example:
        >>> unfinished_run_line({"predictions": {"unfinished_run": {"runs": [{"path":
        ...     "run.jsonl", "status": "interrupted"}], "asked_not_answered": ["diagnosis"]}}})
        "unfinished run: run.jsonl has manifest status 'interrupted' (it ended before it \
asked every item); diagnosis was asked and never answered (no line)"
        >>> unfinished_run_line({"predictions": {"paths": ["run.jsonl"]}})
        ''
    """
    from novabench.run.manifest import unfinished_run_notice

    recorded = (report.get("predictions") or {}).get("unfinished_run")
    if not isinstance(recorded, Mapping):
        return ""
    runs = [run for run in recorded.get("runs") or [] if isinstance(run, Mapping)]
    asked = [task for task in recorded.get("asked_not_answered") or [] if isinstance(task, str)]
    return unfinished_run_notice(runs, asked)


def unverified_file_line(report: Mapping[str, Any]) -> str:
    """A reader's note when a predictions file could not be checked whole against its
    manifest's SHA-256 ("" when every file with a manifest matched it, or none has one).

    Built from ``predictions.file_checks`` (an older manifest records no digest; a run still
    being written is checked up to the bytes its manifest recorded).

    Example:
        >>> unverified_file_line({"predictions": {"file_checks": [{"path": "run.jsonl",
        ...     "checked": "unrecorded"}]}})[:43]
        'note: run.jsonl could not be verified: its '
        >>> unverified_file_line({"predictions": {"paths": ["run.jsonl"]}})
        ''
    """
    from novabench.run.manifest import file_check_notice

    recorded = (report.get("predictions") or {}).get("file_checks")
    if not isinstance(recorded, list):
        return ""
    return file_check_notice([check for check in recorded if isinstance(check, Mapping)])


def answered_only_line(report: Mapping[str, Any]) -> str:
    """A reader's warning when only answered items were scored ("" otherwise).

    The items scored are those with a line; model errors among them are named, since
    they are not answers (they score as no prediction). A resumed run says how many of
    them are answers the run file held from an earlier call (``answers_from_run_file``),
    and the limit of the call that resumed it (a limited call scores them all).

    Example:
        >>> answered_only_line({"answered_only": True, "tasks": {"diagnosis": {"coverage": {
        ...     "items": 40, "scored": 10, "errors": 0}}}})
        'answered items only: diagnosis 10 of 40 cases scored, the rest left out'
        >>> answered_only_line({"answered_only": True, "tasks": {"diagnosis": {"coverage": {
        ...     "items": 40, "scored": 3, "errors": 3}}}})
        'answered items only: diagnosis 3 of 40 cases scored, the rest left out; model errors \
among them (scored as no prediction): diagnosis 3'
        >>> answered_only_line({"answered_only": True, "tasks": {"diagnosis": {"coverage": {
        ...     "items": 40, "scored": 40, "errors": 0}}}})
        'answered items only: diagnosis 40 of 40 cases scored, none left out'
        >>> answered_only_line({"answered_only": True, "tasks": {"diagnosis": {"coverage": {
        ...     "items": 40, "scored": 30, "errors": 0, "answers_from_run_file": 30, "limit": 5}}}})
        'answered items only: diagnosis 30 of 40 cases (30 of them answers from the run file, asked by an earlier call; this call asked at most 5) scored, the rest left out'
        >>> answered_only_line({"tasks": {}})
        ''
    """
    if not report.get("answered_only"):
        return ""
    parts, errors = [], []
    left_out = False
    for task in TASK_ORDER:
        coverage = report["tasks"].get(task, {}).get("coverage")
        if coverage:
            unit = "cases" if registry.TASKS[task].unit == "case" else "images"
            scored = coverage.get("scored", coverage["items"])
            left_out = left_out or scored != coverage["items"]
            part = f"{task} {scored} of {coverage['items']} {unit}"
            from_file = coverage.get("answers_from_run_file")
            if from_file is not None:  # a resumed run: a limited call scores the whole file
                limit = coverage.get("limit")
                part += (
                    f" ({from_file} of them answers from the run file, asked by an "
                    "earlier call"
                    + (f"; this call asked at most {limit}" if limit is not None else "")
                    + ")"
                )
            parts.append(part)
            if coverage.get("errors"):
                errors.append(f"{task} {coverage['errors']}")
    # Every item may have a line already (a limited call resuming a full run's file).
    rest = "the rest left out" if left_out else "none left out"
    line = f"answered items only: {', '.join(parts)} scored, {rest}"
    if errors:  # scored because the run asked them, but not answers
        line += f"; model errors among them (scored as no prediction): {', '.join(errors)}"
    return line


# Column labels of the human reference, in order.
_HUMAN_COLUMNS: tuple[tuple[str, str], ...] = (
    ("rater_1_vs_gold", "rater 1 vs gold"),
    ("rater_2_vs_gold", "rater 2 vs gold"),
    ("rater_1_vs_rater_2", "rater 1 vs rater 2"),
)


def _value_with_interval(value: Any, interval: Any) -> str:
    text = _percent(value)
    if text != "n/a" and interval and all(v is not None for v in interval):
        text += f" [{_percent(interval[0])}, {_percent(interval[1])}]"
    return text


def render_human_reference(report: Mapping[str, Any]) -> list[str]:
    """Markdown lines: the model beside the raters, per localisation metric (percent).

    Example:
        >>> report = {"tasks": {"localization": {"metrics": {"mAP@30": 0.5},
        ...     "confidence_intervals": {}}}, "human_reference": {"localization": {
        ...     "available": False, "reason": "the release has no rater boxes"}}}
        >>> render_human_reference(report)[-1]
        'No human reference: the release has no rater boxes.'
    """
    lines: list[str] = []
    for task, section in (report.get("human_reference") or {}).items():
        model = report["tasks"].get(task)
        if model is None:
            continue
        lines += ["", f"## Human reference ({task})", ""]
        if not section.get("available"):
            lines.append(f"No human reference: {section.get('reason', 'no rater boxes')}.")
            continue
        raters = section.get("raters", {})
        lines.append(
            f"The release's raters ({', '.join(raters.values())}) scored with the model's metric "
            f"on the same {section.get('n_images', '?')} images; values in percent "
            + (f"({NO_INTERVALS})." if without_intervals(report) else "with CIs.")
        )
        lines += [
            "",
            "| metric | model | " + " | ".join(label for _, label in _HUMAN_COLUMNS) + " |",
            "|---|" + "---:|" * (1 + len(_HUMAN_COLUMNS)),
        ]
        undefined: list[str] = []  # one line per key, and per column not available
        for key in HEADLINE_KEYS[task]:
            if key not in model["metrics"]:
                continue
            cells = [
                _value_with_interval(
                    model["metrics"][key], model.get("confidence_intervals", {}).get(key)
                )
            ]
            columns: list[tuple[str, str]] = []  # where this key reads n/a
            for name, label in (("model", "model"), *_HUMAN_COLUMNS):
                comparison = model["metrics"] if name == "model" else section.get(name, {})
                if name != "model":
                    if not comparison or comparison.get("available") is False:
                        cells.append("n/a")
                        why = (comparison or {}).get("reason") or "not available in this report"
                        undefined.append(f"n/a: {label}: {why}")
                        continue
                    cells.append(
                        _value_with_interval(
                            comparison.get(key),
                            comparison.get("confidence_intervals", {}).get(key),
                        )
                    )
                if _percent(comparison.get(key)) == "n/a":
                    columns.append((label, "" if name == "model" else label))
            if columns:
                undefined.append(undefined_key_line(task, key, columns))
            lines.append(f"| {key} | " + " | ".join(cells) + " |")
        lines += [""] + [f"- {line}" for line in dict.fromkeys(undefined)]
        lines += [f"- {note}" for note in section.get("notes", [])]
    return lines


# Breakdown tables show at most this many metric columns (the JSON has every headline key).
_BREAKDOWN_COLUMNS = 6
_DIMENSION_TITLES = {
    "pathology_category": "pathology category",
    "sequence": "sequence (from the reference caption)",
    "plane": "plane (from the reference caption)",
    "n_gold_boxes": "gold boxes per image",
    "gold_box_size": "largest gold box (share of the image area)",
    "images_per_case": "images per case",
}


def render_breakdowns(report: Mapping[str, Any]) -> list[str]:
    """Markdown lines: one table per task and dimension, values in percent with CIs.

    A group with fewer items than the report's ``min_group_size`` gives its n, marked "too
    small", and no value: each value cell reads "too small", as on the HTML page.

    Example:
        >>> report = {"breakdown_settings": {"min_group_size": 10}, "breakdowns": {
        ...     "diagnosis": {"images_per_case": [{"group": "1", "n": 4, "too_small": True,
        ...     "top1": 0.25, "top1_ci": [0.0, 0.75], "top5": 0.5, "top5_ci": None}]}}}
        >>> render_breakdowns(report)[-1]
        '| 1 | 4 (too small) | too small | too small |'
    """
    breakdowns = report.get("breakdowns") or {}
    settings = report.get("breakdown_settings", {})
    if settings.get("computed") is False:
        return ["", "## Breakdowns", "", "Not computed (`--no-breakdowns`)."]
    if not breakdowns:
        return []
    thresholds = settings.get("gold_box_size_thresholds", {})
    lines = [
        "",
        "## Breakdowns",
        "",
        "Each task's scores per group of items, with n and "
        + (f"{NO_INTERVALS}" if without_intervals(report) else "a bootstrap CI over the group")
        + "; groups "
        f"under {settings.get('min_group_size', '?')} items are marked too small and their values "
        "are not shown.",
    ]
    if thresholds:
        lines[-1] += (
            f" Gold box size: small under {100 * thresholds['small']:g} % of the image area, "
            f"medium up to {100 * thresholds['medium']:g} %, large above."
        )
    for task in TASK_ORDER:
        for dimension, rows in (breakdowns.get(task) or {}).items():
            if not rows:
                continue
            keys = [key for key in headline_keys(task, rows[0]) if key in rows[0]]
            keys = keys[:_BREAKDOWN_COLUMNS]
            title = _DIMENSION_TITLES.get(dimension, dimension)
            lines += [
                "",
                f"### {task} by {markdown_text(title)}",
                "",
                "| group | n | " + " | ".join(keys) + " |",
                "|---|---:|" + "---:|" * len(keys),
            ]
            undefined: dict[str, list[str]] = {}
            for row in rows:
                small = bool(row.get("too_small"))
                n = f"{row['n']} (too small)" if small else str(row["n"])
                # Too few items for a value worth reading: withheld, as the HTML page does.
                cells = [
                    "too small"
                    if small
                    else _value_with_interval(row.get(key), row.get(f"{key}_ci"))
                    for key in keys
                ]
                for key, cell in zip(keys, cells):
                    if cell == "n/a":
                        undefined.setdefault(key, []).append(str(row["group"]))
                group = markdown_text(row["group"])  # category names come from users' maps
                lines.append(f"| {group} | {n} | " + " | ".join(cells) + " |")
            if undefined:  # why a cell reads n/a, under its table
                lines.append("")
                lines += [
                    "- "
                    + markdown_text(
                        undefined_value_line(task, key, f" (group {', '.join(groups)})")
                    )
                    for key, groups in undefined.items()
                ]
    return lines


def write_report(
    report: Mapping[str, Any],
    path: str | os.PathLike[str],
    *,
    outputs: StagedOutputs | None = None,
) -> Path:
    """Write the report as JSON atomically (a crash never leaves half a file).

    With ``outputs`` the report is only staged in that group of a command's outputs, put in
    place with the others (see :func:`~novabench._files.writing_all_or_none`).

    Example:
        >>> import tempfile, pathlib
        >>> out = write_report({"tasks": {}}, pathlib.Path(tempfile.mkdtemp()) / "r.json")
        >>> json.loads(out.read_text())
        {'tasks': {}}
    """
    # Undefined metrics (NaN) are written as null: strict JSON readers refuse NaN.
    text = json.dumps(json_safe(report), indent=2, allow_nan=False, default=str) + "\n"
    if outputs is not None:
        return outputs.write_text(path, text)
    return write_text_atomic(path, text)


def existing_report_summary(path: str | os.PathLike[str]) -> str:
    """What a report file already at ``path`` holds, in a few words: model and when written.

    A JSON report names its model (its run manifests) and ``created_at``; a Markdown or
    HTML report its title and the file's modification time. Used by the refusal to replace
    a report, so the user sees what would be lost.

    Example:
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "r.json"
        >>> _ = path.write_text(json.dumps({"toolkit": {"name": "novabench"},
        ...     "created_at": "2026-01-02T03:04:05+00:00",
        ...     "predictions": {"paths": ["qwen.jsonl"], "manifests": [{"model": "qwen"}]}}))
        >>> existing_report_summary(path)
        "the report of model 'qwen', written 2026-01-02T03:04:05+00:00"
    """
    import datetime as _dt
    import html as _html
    import re

    try:
        text = Path(path).expanduser().read_text(encoding="utf-8")
    except (OSError, ValueError):
        return "a report novabench wrote (unreadable)"
    try:
        document = json.loads(text)
    except ValueError:
        document = None
    if isinstance(document, dict):
        sides = [document[s] for s in ("a", "b") if isinstance(document.get(s), dict)]
        if sides:
            names = " and ".join(repr(model_name(side)) for side in sides)
            what = f"the comparison of {names}"
        elif "predictions" in document:
            what = f"the report of model {model_name(document)!r}"
        elif isinstance(document.get("models"), list):
            what = f"the leaderboard of {len(document['models'])} reports"
        else:
            what = "a report novabench wrote"
        when = document.get("created_at") or (sides[0].get("created_at") if sides else None)
        return f"{what}, written {when}" if isinstance(when, str) else what
    found = re.search(r"<title>([^<]*)</title>", text[:4096]) or re.match(r"# ([^\n]*)", text)
    fallback = "a leaderboard CSV" if text.startswith("model,") else "a report novabench wrote"
    title = _html.unescape(found.group(1)).strip() if found else fallback
    try:
        stamp = _dt.datetime.fromtimestamp(
            Path(path).expanduser().stat().st_mtime, _dt.timezone.utc
        )
    except OSError:
        return repr(title)
    return f"{title!r}, last modified {stamp.isoformat(timespec='seconds')}"


def check_replaceable_reports(
    outputs: Mapping[str, Any], *, overwrite: bool, command: str = "evaluate"
) -> None:
    """Refuse to replace an existing report unless ``overwrite`` says so.

    ``outputs`` maps an option name (``--out``, ``--markdown``...) to its path or None. A
    file that is not an output of ``nova <command>`` (the user's, another command's) is
    refused whatever ``overwrite`` says (:func:`novabench._files.check_report_outputs`);
    an earlier output of the same command is replaced only with ``overwrite``, and the
    refusal says what it holds.

    Raises:
        NovaInputError: an output exists (naming it, what it holds and how to replace it).

    Example:
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "r.md"
        >>> _ = path.write_text("# NOVA evaluation report: qwen\\n")
        >>> check_replaceable_reports({"--markdown": path}, overwrite=True)
        >>> check_replaceable_reports({"--markdown": path}, overwrite=False)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: ...r.md, field '--markdown': holds 'NOVA evaluation report: qwen', last modified ...; pass overwrite=True to replace it
    """
    from novabench._files import check_report_outputs

    check_report_outputs(dict(outputs), command=command)
    if overwrite:
        return
    for option, value in outputs.items():
        if value is None:
            continue
        path = Path(value).expanduser()
        if path.exists():
            raise NovaInputError(
                (f"holds {existing_report_summary(path)}; pass ", OVERWRITE, " to replace it"),
                source=str(value),
                field=option,
            )


def pinned_item_folder(report_path: str | os.PathLike[str]) -> Path | None:
    """The folder of the per-item tables the report at ``report_path`` pins, or None.

    None when there is no such report, it pins no tables, or it cannot be read.

    Example:
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "r.json"
        >>> _ = path.write_text('{"items": {"images": "items/images.parquet", "run_id": "x"}}')
        >>> pinned_item_folder(path) == path.parent / "items"
        True
        >>> pinned_item_folder(path.parent / "none.json") is None
        True
    """
    try:
        items = json.loads(Path(report_path).read_text(encoding="utf-8")).get("items")
        table = items.get("images") or items.get("cases")
    except (OSError, ValueError, AttributeError):
        return None
    if not isinstance(table, str):
        return None
    return Path(os.path.normpath(Path(report_path).parent / table)).parent
