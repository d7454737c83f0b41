"""`nova run`: ask a model, an endpoint or a baseline every NOVA question; write raw answers.

Examples::

    nova run --data Nova/ --task all --model Qwen/Qwen2.5-VL-7B-Instruct --out runs/qwen7b.jsonl
    nova run --data Nova/ --task localization --endpoint http://gpu:8000/v1 --model-name qwen72b \\
        --out runs/qwen72b.jsonl --shard 0/4
    nova run --data Nova/ --task all --baseline floor --out runs/floor.jsonl
    nova run --data Nova/ --task all --endpoint http://gpu:8000/v1 --model-name qwen3-vl-32b \\
        --preset qwen3-vl --out runs/qwen3-32b.jsonl

Rerunning the same command resumes: answered items are skipped, failed ones retried.
When the endpoint cannot be used at all (connection refused, unknown host, TLS, HTTP
401/403/404) before anything was answered, the run stops after the requests in flight,
says why in one line and exits 2. Then ``nova parse`` turns the raw answers into predictions.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from novabench import checks
from novabench.errors import NovaInputError
from novabench.registry import ALL_TASKS, MAX_RAW_ANSWER_CHARS, TASK_NAMES
from novabench.run.defaults import BASELINES, CONVENTIONS, DEFAULT_MAX_CONCURRENCY, PRESET_NAMES


def parse_prompt_files(values: list[str] | None) -> dict[str, str]:
    """Read repeated ``TASK=PATH`` options into ``{task: path}``.

    Example:
        >>> parse_prompt_files(["localization=my_prompt.txt"])
        {'localization': 'my_prompt.txt'}
    """
    prompts: dict[str, str] = {}
    for value in values or []:
        task, separator, path = value.partition("=")
        if not separator or not task.strip() or not path.strip():
            raise NovaInputError(f"expected TASK=PATH, got {value!r}", field="--prompt-file")
        if task.strip() in prompts:
            raise NovaInputError(f"two prompt files for {task.strip()!r}", field="--prompt-file")
        prompts[task.strip()] = path.strip()
    return prompts


def build_backend(args: argparse.Namespace) -> Any:
    """The backend chosen by ``--model``, ``--endpoint`` or ``--baseline``, with the generation
    settings and input-size rule the preset (``--preset``) and the options give together."""
    from novabench.run.presets import resolve_preset

    settings = resolve_preset(
        getattr(args, "preset", None),
        input_size_rule=args.input_size_rule,
        max_new_tokens=args.max_new_tokens,
        temperature=args.temperature,
    )
    if args.baseline:
        try:
            from novabench.run.baselines import get_baseline
        except ImportError:
            raise NovaInputError(
                "baselines are not available in this installation (novabench.run.baselines.get_baseline "
                "is missing)",
                field="--baseline",
            ) from None
        try:
            return get_baseline(args.baseline)
        except NovaInputError:
            raise
        except (KeyError, ValueError) as error:  # an unknown name, whatever the registry raises
            raise NovaInputError(str(error).strip("'\""), field="--baseline") from None
    if args.endpoint:
        from novabench.evaluator import Endpoint

        if not args.model_name:
            raise NovaInputError(
                "--endpoint needs --model-name (the model the server serves)", field="--model-name"
            )
        return Endpoint(
            args.endpoint,
            args.model_name,
            api_key_env=args.api_key_env,
            max_concurrency=args.max_concurrency,
            timeout=args.timeout,
            max_retries=args.max_retries,
            max_tokens=settings.max_new_tokens,
            temperature=settings.temperature,
            input_size_rule=settings.input_size_rule,
        ).backend(key_option="--api-key-env")
    from novabench.run.backends import TransformersBackend

    return TransformersBackend(
        args.model,
        device=args.device,
        batch_size=args.batch_size or 4,
        max_new_tokens=settings.max_new_tokens,
        torch_dtype=args.dtype,
        revision=args.revision,
        trust_remote_code=args.trust_remote_code,
    )


def run(args: argparse.Namespace) -> int:
    """Execute `nova run`; 0 when every item has an answer, 1 when some failed (rerun to retry).

    An endpoint that cannot answer anything stops the run early
    (:class:`~novabench.run.runner.EndpointUnusableError`, a ``NovaInputError``: exit 2).
    """
    from novabench._files import check_output_paths
    from novabench.data.provenance import provenance_notice_line
    from novabench.data.release import read_release
    from novabench.run.presets import resolve_preset
    from novabench.run.runner import check_run_output_links, parse_shard, parse_tasks, run_model

    tasks = parse_tasks(args.task)
    prompts = parse_prompt_files(args.prompt_file)
    choice = resolve_preset(
        args.preset,
        tasks=tasks,
        prompts=prompts,
        box_convention=args.box_convention,
        input_size_rule=args.input_size_rule,
        max_new_tokens=args.max_new_tokens,
        temperature=args.temperature,
    )
    out_manifest = f"{args.out}.manifest.json"
    check_output_paths(  # appending to a release file or a prompt would corrupt it
        {"--out": args.out, "--out (its manifest)": out_manifest},
        {"the release": args.data, "a prompt file": list(prompts.values())},
    )
    check_run_output_links(args.out, "--out")
    shard = parse_shard(args.shard)
    release = read_release(args.data)
    notice = provenance_notice_line(release.provenance)
    backend = build_backend(args)
    if args.display_name:
        backend.display_name = args.display_name
    summary = run_model(
        release,
        tasks=tasks,
        backend=backend,
        out_path=args.out,
        prompts=choice.prompts,
        shard=shard,
        batch_size=args.batch_size,
        box_convention=choice.box_convention,
        limit=args.limit,
        progress=not args.no_progress,
        command="nova run",
        preset=choice.record(),
        # Before the model is asked, as every report of its answers will say it; not before
        # the checks, so that a refusal stays one line.
        on_start=(lambda: print(notice, file=sys.stderr)) if notice else None,
        # At once, as evaluate_model says it: a long resumed run shows nothing else until
        # its closing table when progress bars are off.
        on_resume=lambda resumed: print(resumed.resuming_line(), file=sys.stderr),
    )
    for task, counts in summary.counts.items():
        print(
            f"{task:<13} items {counts['items']:>5}  already done {counts['done_before']:>5}  "
            f"answered {counts['answered']:>5}  failed {counts['errors']:>5}"
        )
    print(f"raw answers: {summary.out_path}\nmanifest:    {summary.manifest_path}")
    if summary.n_too_long:  # stored cut; they score as too_long failures
        print(
            f"{summary.n_too_long} answer(s) were longer than {MAX_RAW_ANSWER_CHARS} characters "
            "and were stored cut (parse status too_long)",
            file=sys.stderr,
        )
    if token_limit_line(summary):
        print(token_limit_line(summary), file=sys.stderr)
    if summary.n_errors:
        print(
            f"{summary.n_errors} item(s) failed; rerun the same command to retry them",
            file=sys.stderr,
        )
        return 1
    return 0


def token_limit_line(summary: Any) -> str:
    """How many answers stopped at the answer length limit ("" for none): this call's, and
    in a resumed file the earlier calls' too, which the file's reports count as well.

    Example:
        >>> from types import SimpleNamespace
        >>> token_limit_line(SimpleNamespace(n_hit_token_limit=17, n_hit_token_limit_before=5))
        ...     # doctest: +ELLIPSIS
        '17 answer(s) of this call and 5 of earlier calls in the file (22 in all) stopped at ...'
    """
    now, before = summary.n_hit_token_limit, summary.n_hit_token_limit_before
    if not now and not before:
        return ""
    counted = (
        f"{now} answer(s) of this call and {before} of earlier calls in the file "
        f"({now + before} in all)"
        if before
        else f"{now} answer(s)"
    )
    # The server's finish_reason "length", recorded on each line.
    return (
        f"{counted} stopped at the answer length limit (finish_reason length, recorded on "
        "their lines) and may be cut off; to give the model more room, run again with a "
        "higher --max-new-tokens into a new --out"
    )


def register(subparsers: Any) -> None:
    """Add the `run` sub-command to the `nova` parser."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "run",
        help="ask a model, an OpenAI-compatible endpoint or a baseline; write raw answers (resumable)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--data",
        required=True,
        help="release folder (official v1 or legacy layout, or a `nova export` folder)",
    )
    parser.add_argument(
        "--task",
        required=True,
        choices=(*TASK_NAMES, ALL_TASKS),
        help="which task to ask",
    )
    parser.add_argument(
        "--out", required=True, help="raw answers JSONL (appended to; rerun to resume)"
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--model", help="transformers model id or local folder (image-text-to-text)"
    )
    source.add_argument(
        "--endpoint", help="OpenAI-compatible API root, e.g. http://localhost:8000/v1"
    )
    source.add_argument(
        "--baseline",
        help="a floor baseline: "
        + ", ".join(f"{name} ({', '.join(tasks)})" for name, tasks in BASELINES.items()),
    )
    parser.add_argument("--model-name", help="model name to request from --endpoint")
    parser.add_argument(
        "--display-name",
        help="the model's name in the run file and every report (default: the served model, "
        "the Hub id, or a local model folder's name; never its path)",
    )
    parser.add_argument(
        "--preset",
        choices=PRESET_NAMES,
        help="how to ask one model family: prompts, box convention, input-size rule and "
        "generation settings together (see the README's 'Presets'); the options below, when "
        "given, override its parts, and the manifest records both",
    )
    parser.add_argument(
        "--input-size-rule",
        choices=("original", "qwen2.5-vl"),
        help="--endpoint only: the input size recorded for each image (default: the preset's, "
        "else original); 'qwen2.5-vl' when the server resizes images as Qwen2(.5)-VL does (its "
        "bbox_2d answers are pixels of that size)",
    )
    parser.add_argument("--api-key-env", help="environment variable holding the endpoint's API key")
    parser.add_argument(
        "--prompt-file",
        action="append",
        metavar="TASK=PATH",
        help="use the prompt in PATH for TASK (repeatable); default prompts otherwise",
    )
    parser.add_argument(
        "--shard", metavar="I/N", help="only shard I of N (0-based); merge with `nova merge`"
    )
    parser.add_argument(
        "--batch-size",
        type=checks.positive_int_option,
        help="--model/--baseline: requests per model call (default: the backend's); an "
        "endpoint keeps --max-concurrency requests in flight instead",
    )
    parser.add_argument(
        "--max-new-tokens",
        type=checks.positive_int_option,
        help="answer length limit (default: the preset's, else 256)",
    )
    parser.add_argument(
        "--limit",
        type=checks.positive_int_option,
        help="at most this many items per task, for a quick trial",
    )
    parser.add_argument(
        "--box-convention",
        choices=CONVENTIONS,
        help="how `nova parse` reads boxes (recorded in the manifest; keys such as "
        "x/y/width/height or box_2d keep their own order; default: the preset's, else auto)",
    )
    parser.add_argument("--device", help="transformers device: cpu, cuda:0, mps, auto (device_map)")
    parser.add_argument("--dtype", help="transformers dtype: auto, bfloat16, float16, float32")
    parser.add_argument("--revision", help="Hub revision of --model (branch, tag or commit)")
    parser.add_argument(
        "--trust-remote-code",
        action="store_true",
        help="let --model run the code its repository ships (only for models you trust)",
    )
    parser.add_argument(
        "--max-concurrency",
        type=checks.positive_int_option,
        default=DEFAULT_MAX_CONCURRENCY,
        help="endpoint requests kept in flight at all times (default "
        f"{DEFAULT_MAX_CONCURRENCY}, suits vLLM/TGI; lower it for rate-limited hosted APIs)",
    )
    parser.add_argument(
        "--timeout",
        type=checks.positive_float_option,
        default=60.0,
        help="endpoint seconds per attempt (default 60)",
    )
    parser.add_argument(
        "--max-retries",
        type=checks.nonnegative_int_option,
        default=3,
        help="endpoint retries per item (default 3)",
    )
    parser.add_argument(
        "--temperature",
        type=checks.nonnegative_float_option,
        help="endpoint temperature (default: the preset's, else 0)",
    )
    parser.add_argument(
        "-q",
        "--quiet",
        "--no-progress",
        dest="no_progress",
        action="store_true",
        help="no progress bar (--no-progress is the same)",
    )
    parser.set_defaults(func=run)
