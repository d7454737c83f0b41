"""`nova merge SHARD... --out PRED.jsonl`: join the outputs of `nova run --shard i/n`.

Lines are copied as written. An item answered in two shards is an error naming both files
and lines, and shards run with different settings (model, prompts, box convention, release)
are refused: only the shard's own fields may differ. A shard another process is still
writing is refused (as `nova evaluate` refuses it) unless ``--allow-running``, which merges
its complete lines so far (a last line still being written is set aside and named) and
records so in the merged manifest (status ``running-when-merged``, counts recounted from
what was merged).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def run(args: argparse.Namespace) -> int:
    """Execute `nova merge`; prints what the merged file holds."""
    import sys
    import warnings

    from novabench.data.release import read_release
    from novabench.errors import pass_on
    from novabench.run.lock import writer_lock
    from novabench.run.manifest import UnverifiedFileWarning
    from novabench.run.predictions import check_replaceable_output, merge_prediction_files

    inputs = {"a shard": args.shards, "the release": args.data}
    check_replaceable_output(args.out, overwrite=args.force, inputs=inputs)
    release = read_release(args.data) if args.data else None
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    with writer_lock(args.out, "nova merge"):  # not while a run (or another merge) writes it
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UnverifiedFileWarning)  # one per shard, each said
            merged = merge_prediction_files(
                args.shards,
                args.out,
                release=release,
                overwrite=args.force,
                allow_running=args.allow_running,
            )
    for warning in caught:  # a shard's bytes its manifest does not vouch for: a note line
        if issubclass(warning.category, UnverifiedFileWarning):
            print(str(warning.message), file=sys.stderr)
        else:  # anything else as every nova command shows a warning
            pass_on(warning)
    for task, counts in merged.summary().items():
        if counts["answered"] or counts["errors"] or (release is not None and counts["items"]):
            missing = f"  missing {counts['missing']:>5}" if release is not None else ""
            print(
                f"{task:<13} answered {counts['answered']:>5}  failed {counts['errors']:>5}{missing}"
            )
    print(f"merged {len(args.shards)} file(s) into {args.out}")
    from novabench.run.manifest import SNAPSHOT_STATUS
    from novabench.run.predictions import RunManifest

    merged_manifest = RunManifest.read(args.out) or RunManifest()
    for source in merged_manifest.merged_from or []:
        if isinstance(source, dict) and source.get("writer_when_merged"):
            set_aside = f"; {source['set_aside']}" if source.get("set_aside") else ""
            print(
                f"note: {source.get('path')} was still being written "
                f"({source['writer_when_merged']}): its complete lines so far were merged, "
                f"its counts recounted from them{set_aside}, and the merged manifest says so "
                f"(status {SNAPSHOT_STATUS})",
                file=sys.stderr,
            )
    missing_shards = merged_manifest.missing_shards or []
    if missing_shards:
        print(
            f"note: shard(s) {missing_shards} of this run were not merged; the items they hold "
            "count as missing until they are",
            file=sys.stderr,
        )
    return 0


def register(subparsers: Any) -> None:
    """Add the `merge` sub-command to the `nova` parser."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "merge",
        help="join the prediction files of sharded runs",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "shards", nargs="+", metavar="SHARD.jsonl", help="files written by `nova run --shard`"
    )
    parser.add_argument("--out", required=True, help="merged JSONL to write")
    parser.add_argument(
        "--data",
        help="release folder (official v1 or legacy layout, or a `nova export` folder), to check "
        "item names and count missing items",
    )
    parser.add_argument(
        "--force", action="store_true", help="replace --out, a predictions file novabench wrote"
    )
    parser.add_argument(
        "--allow-running",
        action="store_true",
        help="merge a shard another process is still writing, as it stands (the merged "
        "manifest says so); by default refused",
    )
    parser.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="no progress bars (reading the release given with --data)",
    )
    parser.set_defaults(func=run)
