"""``nova compare``: two models on the same items, with a paired bootstrap of their difference."""

from __future__ import annotations

import argparse
from typing import Any

from novabench.cli.evaluate import (
    add_full_paths_option,
    add_scoring_options,
    close_judges,
    judge_cache_output,
    judge_note,
    scoring_options,
)
from novabench.registry import TASK_NAMES


def register(subparsers: Any) -> None:
    """Add the ``compare`` sub-command.

    Example:
        >>> import argparse
        >>> parser = argparse.ArgumentParser(); register(parser.add_subparsers())
    """
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "compare",
        help="compare two models' predictions on the same items (paired bootstrap)",
        description=(
            "Score two prediction sets against the same release and report, per metric, A, B and "
            "the difference A - B with a paired-bootstrap confidence interval and p-value: every "
            "resample draws the same images or cases for both models."
        ),
    )
    parser.add_argument(
        "--data",
        required=True,
        help="release folder (official v1 or legacy layout, or a `nova export` folder)",
    )
    parser.add_argument(
        "--a",
        required=True,
        nargs="+",
        action="extend",
        metavar="PRED",
        help="predictions of model A (one file or several; repeatable)",
    )
    parser.add_argument(
        "--b",
        required=True,
        nargs="+",
        action="extend",
        metavar="PRED",
        help="predictions of model B (one file or several; repeatable)",
    )
    parser.add_argument("--out", required=True, help="comparison JSON path")
    add_full_paths_option(parser)
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace an earlier comparison at --out, --markdown and --html (refused without "
        "it; any other file, an evaluation report included, is never replaced)",
    )
    parser.add_argument("--markdown", help="also write the comparison as Markdown here")
    parser.add_argument("--html", help="also write the comparison as a self-contained HTML page")
    parser.add_argument(
        "--task",
        action="append",
        choices=TASK_NAMES,
        help="compare only this task (repeatable); default: every task both answer",
    )
    add_scoring_options(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Execute ``nova compare``; returns the exit code."""
    from novabench._blas import import_numpy_with_one_blas_thread

    import_numpy_with_one_blas_thread()  # before anything loads it: OpenBLAS's idle threads spin
    from novabench._files import check_output_paths
    from novabench.report.render import check_replaceable_reports
    from novabench.run.lock import claiming_outputs

    check_output_paths(
        {
            "--out": args.out,
            "--markdown": args.markdown,
            "--html": args.html,
            **judge_cache_output(args),
        },
        {"a predictions file": [*args.a, *args.b], "the release": args.data},
        folders=("--judge-cache",),
    )
    outputs = {"--out": args.out, "--markdown": args.markdown, "--html": args.html}
    # Claimed before the check below: another writer of any output is refused, not raced.
    with claiming_outputs(outputs, "nova compare"):
        check_replaceable_reports(outputs, overwrite=args.force, command="compare")
        return _compare_and_write(args)


def _compare_and_write(args: argparse.Namespace) -> int:
    """``nova compare`` once its outputs are claimed and may be written."""
    from novabench._files import writing_all_or_none
    from novabench.report import compare_predictions, render_comparison, write_report
    from novabench.report.render import (
        comparison_with_notices,
        model_name,
        render_comparison_markdown,
    )

    if args.bootstrap < 1:
        from novabench.errors import NovaInputError

        raise NovaInputError(
            "a comparison needs bootstrap resamples for its paired intervals and p-values "
            "(default 1000)",
            field="--bootstrap",
        )
    options = scoring_options(args)
    comparison = compare_predictions(args.data, args.a, args.b, options)
    for task in options.judged_tasks:
        comparison["notes"].setdefault(task, []).append(judge_note(args, options.judge_of(task)))
    close_judges(options)
    if not args.full_paths:  # a comparison to share names no local folder
        from novabench.report.render import shareable_paths

        comparison = shareable_paths(comparison, args.out)
    comparison = comparison_with_notices(comparison)  # what every output shows first
    with writing_all_or_none() as staged:  # a failure on any output writes none of them
        write_report(comparison, args.out, outputs=staged)
        if args.markdown:
            staged.write_text(args.markdown, render_comparison_markdown(comparison))
        if args.html:
            from novabench.report.html import render_comparison_html

            staged.write_text(args.html, render_comparison_html(comparison))
    print(f"A: {model_name(comparison['a'])}\nB: {model_name(comparison['b'])}\n")
    print(render_comparison(comparison))  # the notes included
    written = [path for path in (args.out, args.markdown, args.html) if path]
    print(f"\ncomparison written to {', '.join(written)}")
    return 0
