"""`nova ingest MANIFEST OUT`: NIfTI volumes + lesion masks listed in a manifest -> a release."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from novabench import checks


def register(subparsers: Any) -> None:
    """Add the ``ingest`` sub-command.

    Example:
        >>> parser = argparse.ArgumentParser(); sub = parser.add_subparsers()
        >>> register(sub)
        >>> parser.parse_args(["ingest", "cases.json", "out", "--layout", "legacy"]).layout
        'legacy'
    """
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "ingest",
        help="turn NIfTI volumes and lesion masks listed in a JSON/JSONL manifest into a NOVA-format release",
        description=(
            "Cut slices through each lesion, window to 8-bit 480x480 PNGs and derive gold boxes "
            "from the mask's connected components. See novabench.data.ingest.read_manifest for the manifest format."
        ),
    )
    parser.add_argument(
        "manifest", type=Path, help="JSON (list or {'cases': [...]}) or JSONL manifest"
    )
    parser.add_argument("out", type=Path, help="release folder to create")
    parser.add_argument(
        "--layout",
        choices=("v1", "legacy"),
        default="v1",
        help="v1 parquet (default) or legacy CSVs",
    )
    parser.add_argument(
        "--slices-per-lesion",
        type=checks.positive_int_option,
        default=1,
        help="images per lesion of a series (default 1)",
    )
    parser.add_argument(
        "--image-size",
        type=checks.positive_int_option,
        default=480,
        help="side of the square PNGs (default 480)",
    )
    parser.add_argument(
        "--overwrite", action="store_true", help="replace OUT, an earlier nova ingest (or empty)"
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Ingest the manifest and print a one-line summary; returns the exit code."""
    from novabench.data.ingest import ingest_manifest, summarize_release
    from novabench.run.lock import claiming_outputs

    # Claimed before OUT is checked: a second writer of it is refused, not raced.
    with claiming_outputs({"OUT": args.out}, "nova ingest"):
        out = ingest_manifest(
            args.manifest,
            args.out,
            layout=args.layout,
            slices_per_lesion=args.slices_per_lesion,
            image_size=args.image_size,
            overwrite=args.overwrite,
            progress=not args.quiet,
        )
    print(f"nova ingest: {summarize_release(out)} (layout {args.layout}) -> {out}")
    return 0
