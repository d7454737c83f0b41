"""``nova evaluate``: score predictions against a release and write the report."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

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
    parser.add_argument(
        "--items",
        metavar="DIR",
        help="also write the per-item tables here (images/cases .parquet and .csv)",
    )
    parser.add_argument(
        "--answered-only",
        action="store_true",
        help="score only the items the predictions answer (a partial run, --limit); by default "
        "an item without an answer counts as no prediction",
    )
    parser.add_argument(
        "--category-map",
        metavar="FILE",
        help="CSV or JSON mapping case_id or diagnosis -> pathology category, overriding ours",
    )
    parser.add_argument(
        "--min-group-size",
        type=int,
        default=10,
        metavar="N",
        help="breakdown cells with fewer items are marked too small (default 10)",
    )
    add_scoring_options(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Execute ``nova evaluate``; returns the exit code."""
    import os
    from pathlib import Path

    from novabench._files import check_output_paths, write_text_atomic
    from novabench.report import render_markdown, render_table, write_report
    from novabench.report.scoring import ScoringOptions, score_predictions

    outputs: dict[str, Any] = {"--out": args.out, "--markdown": args.markdown}
    if args.items:
        outputs.update({f"--items ({name})": Path(args.items) / name for name in _ITEM_FILES})
    check_output_paths(outputs, list(args.predictions))
    options = ScoringOptions.build(scoring_options(args), **item_options(args))
    scored = score_predictions(args.data, args.predictions, options)
    report = scored.report
    for task in options.judged_tasks:
        if task in report["tasks"]:
            report["tasks"][task]["notes"].append(judge_note(args, options.matcher))
    if args.items:
        from novabench.report.items import item_tables

        paths = item_tables(scored).write(args.items)
        report_folder = Path(args.out).resolve().parent
        report["items"] = {
            name: os.path.relpath(paths[name].resolve(), report_folder)
            for name in ("images", "cases")
        }
    write_report(report, args.out)
    if args.markdown:
        write_text_atomic(args.markdown, render_markdown(report))
    print(render_table(report))
    written = [args.out] + [p for p in (args.markdown, args.items) if p]
    print(f"\nreport written to {', '.join(map(str, written))}")
    return 0


_ITEM_FILES = ("images.parquet", "images.csv", "cases.parquet", "cases.csv")


def item_options(args: argparse.Namespace) -> dict[str, Any]:
    """The ``nova evaluate`` options that choose what is scored and how it is grouped.

    Example:
        >>> import argparse
        >>> args = argparse.Namespace(answered_only=True, category_map=None, min_group_size=5)
        >>> item_options(args)
        {'answered_only': True, 'min_group_size': 5}
    """
    from novabench import checks

    chosen: dict[str, Any] = {
        "answered_only": bool(args.answered_only),
        "min_group_size": checks.positive_int(args.min_group_size, field="--min-group-size"),
    }
    if args.category_map:
        from novabench.lexicon.taxonomy import load_category_map

        chosen["category_map"] = load_category_map(args.category_map)
    return chosen


def add_scoring_options(parser: argparse.ArgumentParser) -> None:
    """Options shared by ``nova evaluate`` and ``nova compare``: parsing, bootstrap, metric settings."""
    parser.add_argument(
        "--box-convention",
        default=None,
        help="how raw localisation answers are read (auto, protocol, qwen, xyxy_norm1, ...); "
        "default: the convention recorded in the run's manifest, else auto",
    )
    parser.add_argument(
        "--bootstrap", type=int, default=1000, help="bootstrap resamples for CIs (0: none)"
    )
    parser.add_argument(
        "--allow-other-release",
        action="store_true",
        help="score a run whose manifest records another release fingerprint",
    )
    parser.add_argument("--confidence", type=float, default=0.95)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--bertscore-model", help="local BERTScore model path (default: roberta-large if cached)"
    )
    parser.add_argument("--bertscore-layers", type=int, help="BERTScore layer of that model")
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


def judge_note(args: argparse.Namespace, matcher: Any) -> str:
    """One line on where the judge's verdicts came from."""
    stats = matcher.stats
    return (
        f"judge {args.judge_model}: {stats.calls} verdicts, {stats.cache_hits} from the cache "
        f"({args.judge_cache}), {stats.requests} requests, {stats.retries} retries"
    )
