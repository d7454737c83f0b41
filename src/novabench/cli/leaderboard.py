"""``nova leaderboard``: several reports on one release in one ranked table."""

from __future__ import annotations

import argparse
from typing import Any

from novabench import checks


def register(subparsers: Any) -> None:
    """Add the ``leaderboard`` sub-command.

    Example:
        >>> import argparse
        >>> parser = argparse.ArgumentParser(); register(parser.add_subparsers())
    """
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "leaderboard",
        help="rank several reports on the same release (headline numbers, CIs, ties)",
        description=(
            "Put `nova evaluate` reports of several models on the same release side by side: an "
            "overview (each task's ranking metric and rank), then one table per task with its "
            "headline numbers and CIs, where neighbours a paired bootstrap cannot separate share "
            "a rank (needs the reports' per-item tables, --items), and the human reference rows "
            "under localisation. --csv writes one wide table (a row per model, a column per task "
            "and metric). Reports on different release fingerprints are refused. Reports holding "
            "different readings of a task's ranking metric (top1 of the case judge, top1-lexicon "
            "of the offline matcher) leave that task unranked, each value under its own key, "
            "and say how to re-score them alike; stand-ins for the paper's keys and reports "
            "that answered only part of a task's items are warned about before the tables. A "
            "report is refused when a headline value or CI is not a fraction, when a mean "
            "over items (hit rates, top1/top5...) lies outside its own CI, when its per-item "
            "tables do not give a value it states, when it is a copy of another (same run "
            "id, tables, or every headline value and CI), or when it scores the same "
            "predictions as another with the same settings (one run ranked twice; recorded "
            "file digests, else run manifests). Values of reports without per-item "
            "tables are marked as unverified."
        ),
    )
    parser.add_argument("reports", nargs="+", metavar="REPORT.json", help="nova evaluate reports")
    parser.add_argument("--markdown", help="write the leaderboard as Markdown here")
    parser.add_argument("--html", help="write the leaderboard as a self-contained HTML page here")
    parser.add_argument("--csv", help="write the leaderboard table as CSV here")
    parser.add_argument("--out", help="write the leaderboard as JSON here")
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace an earlier leaderboard at --out, --markdown, --html or --csv (refused "
        "without it; any other file, an evaluation report included, is never replaced)",
    )
    parser.add_argument(
        "--bootstrap",
        type=checks.positive_int_option,
        default=1000,
        help="paired bootstrap resamples for the tie tests (default 1000); n_resamples= in Python",
    )
    parser.add_argument(
        "--confidence",
        type=checks.positive_float_option,
        default=0.95,
        help="level of the tie tests' intervals, in (0, 1) (default 0.95)",
    )
    parser.add_argument(
        "--seed",
        type=checks.nonnegative_int_option,
        default=0,
        help="seed of the paired bootstrap (default 0)",
    )
    parser.add_argument(
        "--full-paths",
        action="store_true",
        help="name the reports by their paths as given (default: relative to the first output "
        "file when beside it, else by name, so a shared leaderboard reveals no local folder)",
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Execute ``nova leaderboard``; returns the exit code."""
    from novabench._files import check_output_paths
    from novabench.report.render import check_replaceable_reports
    from novabench.run.lock import claiming_outputs

    outputs = {
        "--markdown": args.markdown,
        "--html": args.html,
        "--csv": args.csv,
        "--out": args.out,
    }
    check_output_paths(outputs, {"a report": list(args.reports)})
    # Claimed before the check below: another writer of any output is refused, not raced.
    with claiming_outputs(outputs, "nova leaderboard"):
        check_replaceable_reports(outputs, overwrite=args.force, command="leaderboard")
        return _rank_and_write(args, outputs)


def _rank_and_write(args: argparse.Namespace, outputs: dict[str, Any]) -> int:
    """``nova leaderboard`` once its outputs are claimed and may be written."""
    import json
    import os

    from novabench._files import writing_all_or_none
    from novabench.errors import NovaInputError
    from novabench.report.leaderboard import (
        build_leaderboard,
        curve_note,
        curve_tables,
        leaderboard_csv,
        render_leaderboard_html,
        render_leaderboard_markdown,
        render_leaderboard_text,
    )
    from novabench.report.render import write_report

    seen: dict[str, str] = {}
    for path in args.reports:
        # The same report twice would fill two rows that tie at rank 1 (a copy of it, same
        # run id or tables, is refused by build_leaderboard).
        resolved = os.path.realpath(path)
        if resolved in seen:
            raise NovaInputError(
                f"the report is given twice (also as {seen[resolved]}); give each report once",
                source=path,
            )
        seen[resolved] = path
    reports = []
    not_a_report = (
        "is not a report of nova evaluate (no novabench toolkit and tasks); if it holds "
        "predictions, score it with nova evaluate first"
    )
    for path in args.reports:
        try:
            with open(path, encoding="utf-8") as handle:
                document = json.load(handle)
        except (OSError, json.JSONDecodeError) as error:
            hint = ""
            if str(path).endswith(".jsonl") or "Extra data" in str(error):
                hint = " (this looks like a predictions file: score it with nova evaluate first)"
            raise NovaInputError(f"cannot read the report: {error}{hint}", source=path) from None
        toolkit = document.get("toolkit") if isinstance(document, dict) else None
        if not (
            isinstance(toolkit, dict)
            and toolkit.get("name") == "novabench"
            and isinstance(document.get("tasks"), dict)
        ):
            raise NovaInputError(not_a_report, source=path)
        reports.append(document)
    written_to = next((path for path in outputs.values() if path), None)
    shown = list(args.reports)
    if written_to is not None and not args.full_paths:  # a shared board names no local folder
        from novabench.report.render import shareable_path

        shown = [shareable_path(path, written_to) for path in args.reports]
    board = build_leaderboard(
        reports,
        args.reports,
        shown=shown,
        n_resamples=args.bootstrap,
        confidence=args.confidence,
        seed=args.seed,
    )
    markdown = render_leaderboard_markdown(board)
    curve_message = ""
    with writing_all_or_none() as staged:  # a failure on any output writes none of them
        if args.markdown:
            staged.write_text(args.markdown, markdown)
        if args.html:
            images, left_out = curve_tables(board, reports, args.reports)
            page = render_leaderboard_html(board, images or None, left_out=left_out)
            staged.write_text(args.html, page)
            curve_message = curve_note(left_out, len(images))
        if args.csv:
            staged.write_text(args.csv, leaderboard_csv(board))
        if args.out:
            write_report(board, args.out, outputs=staged)
    print(render_leaderboard_text(board), end="")  # the terminal: no Markdown escapes
    if curve_message:
        print(f"\nnote: {curve_message}")
    written = [path for path in (args.out, args.markdown, args.html, args.csv) if path]
    if written:
        print(f"\nleaderboard written to {', '.join(written)}")
    return 0
