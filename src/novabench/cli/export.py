"""``nova export``: a release as a Hub-ready Parquet dataset (with its card) or as COCO JSON.

Examples::

    nova export path/to/release build/nova-export
    nova export path/to/release build/nova-export --overwrite --push me/nova --private
    nova export path/to/release build/nova-coco --format coco --include-raters
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from novabench import checks
from novabench.data.layouts import DEFAULT_MAX_SHARD_BYTES
from novabench.errors import NovaInputError

MEGABYTE = 1024 * 1024


def run(args: argparse.Namespace) -> int:
    """Run the export described by parsed arguments and print a one-line summary.

    The release's reading warnings (what ``nova info`` lists) go to stderr first, one a line.

    Example:
        >>> run(argparse.Namespace(release="r", out="o", format="parquet", overwrite=False, push=None,
        ...     private=False, max_shard_mb=0, include_raters=False, pretty_name="NOVA", card_notice=None,
        ...     card_hub_id=None, quiet=True))
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: --max-shard-mb: must be positive, got 0
    """
    if args.max_shard_mb <= 0:
        raise NovaInputError(
            f"must be positive, got {args.max_shard_mb:g}", source="--max-shard-mb"
        )
    from novabench.data.card import check_card_text
    from novabench.data.export import export_release  # imports `datasets`: only when exporting

    # Checked here to name the option: the library would name its own argument.
    check_card_text(args.pretty_name, field="--pretty-name")
    if args.card_notice is not None:
        check_card_text(args.card_notice, field="--card-notice", one_line=False)
    if args.card_hub_id is not None:
        check_card_text(args.card_hub_id, field="--card-hub-id")

    from novabench.run.lock import claiming_outputs

    # Claimed before export_release checks OUT: a second export of it is refused, not raced.
    with claiming_outputs({"OUT": args.out}, "nova export"):
        summary = _export(args, export_release)
    # What reading the release noticed, as `nova info` lists it: the export keeps it too.
    for warning in summary.warnings:
        print(f"nova export: warning: {warning}", file=sys.stderr)
    print(summary.describe())
    return 0


def _export(args: argparse.Namespace, export_release: Any) -> Any:
    return export_release(
        args.release,
        args.out,
        fmt=args.format,
        max_shard_bytes=int(args.max_shard_mb * MEGABYTE),
        overwrite=args.overwrite,
        push_to=args.push,
        private=args.private,
        include_raters=args.include_raters,
        pretty_name=args.pretty_name,
        card_notice=args.card_notice,
        card_hub_id=args.card_hub_id,
        progress=not args.quiet,
    )


def register(subparsers: Any) -> None:
    """Add the ``export`` sub-command.

    Example:
        >>> from novabench.cli import build_parser
        >>> args = build_parser().parse_args(["export", "release", "out", "--format", "coco"])
        >>> args.format, args.max_shard_mb, args.func is run
        ('coco', 256.0, True)
    """
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "export",
        help="write a release as Hub-ready Parquet + dataset card, or as COCO JSON",
        description=(
            "Export a NOVA release folder. parquet: OUT/data/<config>/test-*.parquet with the "
            "images embedded and a generated README.md card; datasets.load_dataset(OUT, 'images') "
            "reads it. coco: OUT/images/ and OUT/annotations/gold.json. OUT is written atomically."
        ),
    )
    parser.add_argument(
        "release", help="release folder (official v1 or legacy layout, sample, ingest output)"
    )
    parser.add_argument("out", help="folder to create")
    parser.add_argument(
        "--format", choices=("parquet", "coco"), default="parquet", help="default: parquet"
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace OUT, an earlier nova export (or empty), once the new export is complete",
    )
    parser.add_argument(
        "--push", metavar="REPO", help="upload the parquet export to this Hub dataset repo"
    )
    parser.add_argument(
        "--private", action="store_true", help="create the Hub repo private (with --push)"
    )
    parser.add_argument(
        "--max-shard-mb",
        type=checks.positive_float_option,
        default=DEFAULT_MAX_SHARD_BYTES / MEGABYTE,
        metavar="N",
        help="upper bound of one image shard in MB (default: %(default)g)",
    )
    parser.add_argument(
        "--include-raters", action="store_true", help="coco: also write annotations/raters.json"
    )
    parser.add_argument(
        "--pretty-name", default="NOVA", help="dataset name in the card (default: NOVA)"
    )
    parser.add_argument(
        "--card-notice",
        metavar="TEXT",
        help="paragraph quoted under the card title (default: a notice for nova sample / nova "
        "ingest output, which records its origin (v1: in the parquet; legacy: in "
        "novabench_provenance.json); none otherwise; '' for none)",
    )
    parser.add_argument(
        "--card-hub-id",
        metavar="REPO",
        help="id the card's load_dataset examples use (default: --push, else ./OUT's folder name)",
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    parser.set_defaults(func=run)
