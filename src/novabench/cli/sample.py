"""`nova sample OUT`: write the deterministic synthetic sample release."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from novabench import checks


def register(subparsers: Any) -> None:
    """Add the ``sample`` sub-command.

    Example:
        >>> parser = argparse.ArgumentParser(); sub = parser.add_subparsers()
        >>> register(sub)
        >>> parser.parse_args(["sample", "out", "--cases", "3"]).cases
        3
    """
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "sample",
        help="write a synthetic NOVA-format release (MNI152 template + synthetic lesions)",
        description=(
            "Write a deterministic synthetic release in the official layout. "
            "--cases 281 reproduces the real release's images-per-case distribution exactly (906 images)."
        ),
    )
    parser.add_argument("out", type=Path, help="release folder to create")
    parser.add_argument(
        "--cases",
        type=checks.positive_int_option,
        default=12,
        help="number of cases (default 12; 281 gives 906 images)",
    )
    parser.add_argument(
        "--seed",
        type=checks.nonnegative_int_option,
        default=0,
        help="random seed; same seed, same bytes (default 0)",
    )
    parser.add_argument(
        "--layout",
        choices=("v1", "legacy"),
        default="v1",
        help="v1 parquet (default) or legacy CSVs",
    )
    parser.add_argument(
        "--overwrite", action="store_true", help="replace OUT, an earlier nova sample (or empty)"
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Write the sample and print a one-line summary; returns the exit code."""
    from novabench.data.ingest import summarize_release
    from novabench.data.sample import write_sample_release
    from novabench.run.lock import claiming_outputs

    # Claimed before OUT is checked: a second writer of it is refused, not raced.
    with claiming_outputs({"OUT": args.out}, "nova sample"):
        out = write_sample_release(
            args.out,
            n_cases=args.cases,
            seed=args.seed,
            layout=args.layout,
            overwrite=args.overwrite,
            progress=not args.quiet,
        )
    print(
        f"nova sample: {summarize_release(out)} (seed {args.seed}, layout {args.layout}) -> {out}"
    )
    return 0
