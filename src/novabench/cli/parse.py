"""`nova parse RAW.jsonl --data DATA --out PRED.jsonl`: raw model answers -> scored predictions.

Every raw answer goes through the toolkit's parsers (boxes rescaled to pixels of the
original image, captions cleaned, diagnoses read from JSON or lists). The output keeps the
raw text next to the parsed value and adds ``parse_status``; the status counts are printed,
because an answer the parser could not read changes a model's score. The box convention
defaults to the one recorded in the raw file's manifest (``nova run --box-convention``);
under ``auto``, bare 4-number box lists are read in the order the run's prompt asked for
when the manifest records a prompt whose order is known (the default one), else they are
left unread (``ambiguous_convention``) and a line says which ``--box-convention`` reads them.

A file ``nova parse`` wrote can be parsed again: each line's parsed fields must be what its
raw answer reads as (under the convention that parse recorded), or the file is refused,
naming how many lines differ (an older version read some answers otherwise). With
``--reparse`` those lines take what their raw answer reads as today, written to a new
``--out``; the lines read again are counted and named.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from novabench._files import writing_atomically
from novabench.run.defaults import CONVENTIONS
from novabench.run.lock import writer_lock


def run(args: argparse.Namespace) -> int:
    """Execute `nova parse`; prints parse-status counts per task."""
    from novabench.data.release import read_release
    from novabench.registry import TASK_NAMES
    from novabench.report.render import (
        assumed_box_order_line,
        box_repair_phrase,
        boxes_confined_line,
        parse_status_phrase,
        unread_boxes_line,
    )
    from novabench.run.lock import active_writer
    from novabench.run.manifest import (
        bytes_through_line,
        check_recorded_file,
        file_check_notice,
        file_record,
        is_running_status,
        recording_format_version,
        still_being_written,
        unverified_input,
    )
    from novabench.run.predictions import (
        RunManifest,
        assumed_box_order_record,
        check_replaceable_output,
        labelled_lines_read_y_first,
        parse_raw,
        read_predictions,
        write_predictions,
    )
    from novabench.run.prompts import prompt_box_order
    from novabench.run.raw_answers import moved_lines_phrases, reparsed_lines
    from novabench.tasks import behaviour, load_hook

    raw_path, out = Path(args.raw), Path(args.out)
    check_replaceable_output(
        out,
        overwrite=args.force,
        inputs={"the raw answers file": raw_path, "the release": args.data},
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    with writer_lock(out, "nova parse"):  # not while a run (or another parse) writes it
        # Again under the lock: a parse that finished after the check above wrote it since.
        check_replaceable_output(out, overwrite=args.force, inputs={})
        release = read_release(args.data)
        recorded = RunManifest.read(raw_path)
        writer = None
        if recorded is not None and is_running_status(recorded.status):
            writer = active_writer(raw_path)
            if writer is not None and not args.allow_running:
                # Parsed now, the file would lack the answers still to come, said nowhere.
                raise still_being_written(
                    raw_path,
                    recorded.status,
                    writer,
                    action="parse the answers so far (the parsed file's manifest says so)",
                    consequence="the parsed file would lack the answers still to come",
                )
        check = None
        if recorded is not None:  # its claims (convention, prompts) hold for its bytes only
            check = check_recorded_file(raw_path, recorded)
            unverified = file_check_notice([check.to_dict()])
            if unverified:
                print(unverified, file=sys.stderr)
        manifest = recorded or RunManifest()
        # A file nova parse wrote is read again as that parse read it (its manifest says how).
        earlier = manifest.parsed or {}
        parsed_as = earlier.get("box_convention") if not args.box_convention else None
        parsed_with: dict[str, tuple[str, str | None]] = {}
        if parsed_as in CONVENTIONS:
            convention = str(parsed_as)
            order = earlier.get("box_order_from_prompt")
            asked = order if convention == "auto" and isinstance(order, str) else None
            parsed_with[str(raw_path)] = (convention, asked)
        else:
            convention = args.box_convention or manifest.box_convention or "auto"
            asked = prompt_box_order(manifest.prompts) if convention == "auto" else None
        # A file its writer still appends to is read to its last complete line.
        still_written: dict[Path, list[Any]] = {raw_path: []} if writer is not None else {}
        answers = read_predictions(raw_path, release, still_written=still_written)
        parsed = parse_raw(
            answers,
            release,
            box_convention=convention,
            prompt_convention=asked,
            parsed_with=parsed_with,
            reparse=args.reparse,
        )
        reparsed = reparsed_lines(answers, parsed) if args.reparse else []
        # Labelled lines read y-first for want of a prompt on record: said as nova evaluate
        # and nova compare say it.
        assumed = labelled_lines_read_y_first(
            answers, parsed, release, box_convention=convention, prompt_convention=asked
        )
        carried: list[dict[str, Any]] = []
        if check is not None:
            if writer is not None:  # appended while read: count the bytes parsed
                set_aside = still_written[raw_path]
                lines_read = (
                    set_aside[0].line - 1  # the half-written line's predecessors, exactly
                    if set_aside
                    else max(
                        (r.line for task in answers.records.values() for r in task.values()),
                        default=0,
                    )
                )
                parsed_bytes = bytes_through_line(raw_path, lines_read)
                check = replace(check, unchecked_bytes=max(0, parsed_bytes - check.checked_bytes))
            carried = unverified_input(check)

        with writing_atomically(out) as temporary:  # the finished file appears whole at once
            write_predictions(temporary, parsed)
        summary = parsed.summary()
        for task in TASK_NAMES:  # extra counts a task's answers get (out-of-image boxes)
            answer_summary = behaviour(task).answer_summary
            if answer_summary is not None:
                summary[task].update(load_hook(answer_summary)(parsed, release))
        parsed_from: dict[str, Any] = {
            "from": str(raw_path),
            "box_convention": convention,
            "box_order_from_prompt": asked,
            "summary": summary,
        }
        if assumed:  # the reports of the parsed file say it again (nova evaluate, compare)
            parsed_from["labelled_read_y_first"] = assumed_box_order_record(assumed)
        if reparsed:  # their stored reading was replaced: on record, never silently
            parsed_from["reparsed_lines"] = [record.line for record, _ in reparsed]
        replace(
            manifest,
            parsed=parsed_from,
            file=file_record(out, carried),  # what no input manifest vouched for stays said
            format_version=recording_format_version(manifest.format_version),
        ).write(out)

    # First, in nova evaluate's order: answers not read at all, read by an assumed order,
    # or confined to a corner.
    first = [unread_boxes_line(task, summary[task]) for task in TASK_NAMES]
    first.append(assumed_box_order_line({"box_answers": {"labelled_read_y_first": assumed}}))
    first += [
        boxes_confined_line(task, summary[task], {"box_convention": convention})
        for task in TASK_NAMES
    ]
    if reparsed:
        by_field, lines = moved_lines_phrases(reparsed)  # the one file read
        first.insert(
            0,
            f"read again: {len(reparsed)} line{'s' if len(reparsed) > 1 else ''} of {raw_path} "
            f"held another reading of {'their' if len(reparsed) > 1 else 'its'} raw answer "
            f"({by_field}; {'; '.join(lines.values())}): {out} holds what the raw answers read "
            f"as today under box convention {convention}"
            f"{' (chosen with --box-convention)' if args.box_convention else ''} (--reparse)",
        )
    for line in first:
        if line:
            print(line)
    for task in TASK_NAMES:
        counts = summary[task]
        if not counts["answered"] and not counts["errors"] and not counts["parse_status"]:
            continue
        statuses = parse_status_phrase(counts) or "nothing to parse"  # failures named
        outside = counts.get("boxes_out_of_image")
        repairs = box_repair_phrase(counts).removeprefix("; ")  # the report's own words
        print(
            f"{task:<13} items {counts['items']:>5}  answered {counts['answered']:>5}  "
            f"missing {counts['missing']:>5} (failed {counts['errors']})  parse: {statuses}"
            + (f"  boxes past the image edge: {outside}" if outside else "")
            + (f"  {repairs}" if repairs else "")
        )
    print(f"predictions: {out}")
    return 0


def register(subparsers: Any) -> None:
    """Add the `parse` sub-command to the `nova` parser."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "parse",
        help="turn raw model answers into predictions (boxes, captions, diagnoses) with parse statuses",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "raw", metavar="RAW.jsonl", help="raw answers written by `nova run` (or by hand)"
    )
    parser.add_argument(
        "--data",
        required=True,
        help="release folder the answers belong to (official v1 or legacy layout, or a "
        "`nova export` folder)",
    )
    parser.add_argument("--out", required=True, help="predictions JSONL to write")
    parser.add_argument(
        "--box-convention",
        choices=CONVENTIONS,
        help="how to read boxes: the order of bare lists and labelled lines, the scale of "
        "every box (keys such as x/y/width/height or box_2d keep their own order; default: "
        "the raw file's manifest, else auto)",
    )
    parser.add_argument(
        "--force", action="store_true", help="replace --out, a predictions file novabench wrote"
    )
    parser.add_argument(
        "--reparse",
        action="store_true",
        help="for a file nova parse wrote: a line whose parsed fields are not what its raw "
        "answer reads as today (an older version read it otherwise) takes the raw answer's "
        "reading instead of being refused; the lines read again are printed and recorded in "
        "--out's manifest",
    )
    parser.add_argument(
        "--allow-running",
        action="store_true",
        help="parse a raw file another `nova run` is still writing, as it stands (its "
        "answers so far; the parsed file's manifest records the bytes not yet verified)",
    )
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="no progress bars (reading, parsing)"
    )
    parser.set_defaults(func=run)
