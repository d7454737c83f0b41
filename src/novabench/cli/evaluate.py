"""``nova evaluate``: score predictions against a release and write the report."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from novabench import checks
from novabench.errors import NovaInputError
from novabench.registry import TASK_NAMES

if TYPE_CHECKING:
    from novabench.report.scoring import ScoringOptions


def register(subparsers: Any) -> None:
    """Add the ``evaluate`` sub-command.

    Example:
        >>> import argparse
        >>> parser = argparse.ArgumentParser(); register(parser.add_subparsers())
    """
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "evaluate",
        help="score predictions (every task present) and write a report",
        description=(
            "Score a predictions JSONL file against a NOVA release with the metric module, print a "
            "table in percent with bootstrap confidence intervals and parse-failure counts, and write "
            "the report (metric keys in fractions) as JSON and optionally Markdown."
        ),
    )
    parser.add_argument(
        "--data",
        required=True,
        help="release folder (official v1 or legacy layout, or a `nova export` folder)",
    )
    parser.add_argument(
        "--predictions", required=True, nargs="+", help="predictions JSONL file(s), parsed or raw"
    )
    parser.add_argument("--out", required=True, help="report JSON path")
    parser.add_argument("--markdown", help="also write the report as Markdown here")
    parser.add_argument(
        "--task",
        action="append",
        choices=TASK_NAMES,
        help="score only this task (repeatable); default: every task answered",
    )
    add_scoring_options(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Execute ``nova evaluate``; returns the exit code."""
    from novabench._files import check_output_paths, check_report_outputs, write_text_atomic
    from novabench.report import evaluate_predictions, render_markdown, render_table, write_report

    check_output_paths(
        {"--out": args.out, "--markdown": args.markdown, **judge_cache_output(args)},
        {"a predictions file": list(args.predictions), "the release": args.data},
        folders=("--judge-cache",),
    )
    check_report_outputs({"--out": args.out, "--markdown": args.markdown})
    options = scoring_options(args)
    report = evaluate_predictions(args.data, args.predictions, options)
    for task in options.judged_tasks:
        if task in report["tasks"]:
            report["tasks"][task]["notes"].append(judge_note(args, options.matcher))
    write_report(report, args.out)
    if args.markdown:
        write_text_atomic(args.markdown, render_markdown(report))
    print(render_table(report))
    print(f"\nreport written to {args.out}" + (f" and {args.markdown}" if args.markdown else ""))
    return 0


def add_scoring_options(parser: argparse.ArgumentParser) -> None:
    """Options shared by ``nova evaluate`` and ``nova compare``: parsing, bootstrap, metric settings."""
    parser.add_argument(
        "--box-convention",
        default=None,
        help="how raw localisation answers are read (auto, protocol, qwen, xyxy_norm1, ...); "
        "default: the convention recorded in the run's manifest, else auto",
    )
    parser.add_argument(
        "--bootstrap",
        type=checks.nonnegative_int_option,
        default=1000,
        help="bootstrap resamples for CIs (0: none)",
    )
    parser.add_argument(
        "--allow-other-release",
        action="store_true",
        help="score a run whose manifest records another release fingerprint",
    )
    parser.add_argument(
        "--confidence",
        type=checks.positive_float_option,
        default=0.95,
        help="level of the bootstrap intervals, in (0, 1) (default 0.95)",
    )
    parser.add_argument("--seed", type=checks.nonnegative_int_option, default=0)
    parser.add_argument(
        "--bertscore-model", help="local BERTScore model path (default: roberta-large if cached)"
    )
    parser.add_argument(
        "--bertscore-layers", type=checks.positive_int_option, help="BERTScore layer of that model"
    )
    parser.add_argument(
        "--exclude", action="append", default=[], help="captioning metric to leave out (repeatable)"
    )
    parser.add_argument("--keyword-averaging", choices=("sample", "micro"), default="sample")
    parser.add_argument(
        "--judge-endpoint", help="OpenAI-compatible base URL of an LLM judge for diagnosis"
    )
    parser.add_argument("--judge-model", help="model name at the judge endpoint")
    parser.add_argument(
        "--judge-cache", default=".nova-judge-cache", help="on-disk cache of judge verdicts"
    )
    parser.add_argument(
        "--judge-api-key-env",
        metavar="VAR",
        help="name of the environment variable holding the judge's API key (kept off the command line)",
    )


def scoring_options(args: argparse.Namespace) -> ScoringOptions:
    """The scoring options chosen on the command line, built once for ``evaluate``/``compare``.

    The diagnosis ``matcher`` is None for the default lexicon matcher.

    Example:
        >>> import argparse
        >>> parser = argparse.ArgumentParser(); add_scoring_options(parser)
        >>> parser.add_argument("--task", action="append", choices=TASK_NAMES)  # doctest: +ELLIPSIS
        _AppendAction(...)
        >>> options = scoring_options(parser.parse_args(["--task", "diagnosis", "--bootstrap", "0"]))
        >>> options.tasks, options.n_resamples
        (('diagnosis',), 0)
    """
    from novabench.report.scoring import ScoringOptions

    caption_options: dict[str, Any] = {
        "exclude": list(args.exclude),
        "keyword_averaging": args.keyword_averaging,
    }
    if args.bertscore_model:
        if args.bertscore_layers is None:
            raise NovaInputError(
                "--bertscore-model needs --bertscore-layers", field="--bertscore-layers"
            )
        caption_options.update(
            bertscore_model=args.bertscore_model, bertscore_num_layers=args.bertscore_layers
        )
    matcher = None
    if args.judge_endpoint:
        if not args.judge_model:
            raise NovaInputError("--judge-endpoint needs --judge-model", field="--judge-model")
        from novabench.metrics.judge import OpenAIChatJudge

        api_key = None
        if args.judge_api_key_env:
            import os

            api_key = os.environ.get(args.judge_api_key_env)
            if not api_key:
                raise NovaInputError(
                    f"environment variable {args.judge_api_key_env} is empty or unset",
                    field="--judge-api-key-env",
                )
        from pathlib import Path

        if Path(args.judge_cache).exists() and not Path(args.judge_cache).is_dir():
            raise NovaInputError(
                "is a file; the judge cache is a folder (give a folder path or a new name)",
                source=args.judge_cache,
                field="--judge-cache",
            )
        matcher = OpenAIChatJudge(
            args.judge_endpoint, args.judge_model, api_key=api_key, cache_dir=args.judge_cache
        )
    return ScoringOptions(
        tasks=args.task,
        box_convention=args.box_convention,
        allow_other_release=args.allow_other_release,
        n_resamples=args.bootstrap,
        confidence=args.confidence,
        seed=args.seed,
        caption_options=caption_options,
        matcher=matcher,
    )


def judge_cache_output(args: argparse.Namespace) -> dict[str, Any]:
    """The judge cache folder as an output to check against the inputs (when a judge is used).

    Example:
        >>> judge_cache_output(argparse.Namespace(judge_endpoint=None, judge_cache=".cache"))
        {}
    """
    return {"--judge-cache": args.judge_cache} if args.judge_endpoint else {}


def judge_note(args: argparse.Namespace, matcher: Any) -> str:
    """One line on where the judge's verdicts came from."""
    stats = matcher.stats
    return (
        f"judge {args.judge_model}: {stats.calls} verdicts, {stats.cache_hits} from the cache "
        f"({args.judge_cache}), {stats.requests} requests, {stats.retries} retries"
    )
