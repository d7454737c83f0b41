"""`nova info DATA`: validate a release and print what it holds."""

from __future__ import annotations

import argparse
import json
from typing import Any


def format_summary(summary: dict[str, Any]) -> str:
    """Human-readable text of ``NovaRelease.summary()``.

    Example:
        >>> print(format_summary({"root": "/data/Nova", "layout": "v1", "n_images": 2, "n_cases": 1,
        ...     "n_gold_boxes": 2, "n_images_without_gold": 0, "n_placeholder_diagnoses": 0,
        ...     "raters": [], "images_per_case": {"2": 1}, "extra_meta_keys": [], "warnings": []}))
        NOVA release /data/Nova (layout v1)
          images                    2
          cases                     1
          gold boxes                2
          images without gold box   0
          raters                    (none)
          placeholder diagnoses     0 cases
          extra meta keys           (none)
          images per case           2 images: 1 case
          warnings                  0
        >>> text = format_summary({"root": "s", "layout": "v1", "n_images": 0, "n_cases": 0,
        ...     "n_gold_boxes": 0, "n_images_without_gold": 0, "n_placeholder_diagnoses": 0,
        ...     "raters": [], "images_per_case": {}, "extra_meta_keys": [], "warnings": [],
        ...     "provenance": {"origin": "nova sample", "cases": 40, "seed": 0}})
        >>> text.splitlines()[0][:36]
        'notice: NOT THE REAL DATA: Synthetic'
    """
    histogram = ", ".join(
        f"{size} image{'s' * (size != '1')}: {count} case{'s' * (count != 1)}"
        for size, count in summary["images_per_case"].items()
    )
    from novabench.data.provenance import provenance_notice_line

    notice = provenance_notice_line(summary.get("provenance"))
    lines = [notice] if notice else []
    lines += [
        f"NOVA release {summary['root']} (layout {summary['layout']})",
        f"  images                    {summary['n_images']}",
        f"  cases                     {summary['n_cases']}",
        f"  gold boxes                {summary['n_gold_boxes']}",
        f"  images without gold box   {summary['n_images_without_gold']}",
        f"  raters                    {', '.join(summary['raters']) or '(none)'}",
        f"  placeholder diagnoses     {summary['n_placeholder_diagnoses']} cases",
        f"  extra meta keys           {', '.join(summary['extra_meta_keys']) or '(none)'}",
        f"  images per case           {histogram or '(none)'}",
        f"  warnings                  {len(summary['warnings'])}",
    ]
    lines.extend(f"    - {warning}" for warning in summary["warnings"])
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Read and validate the release at ``args.data``; print its summary."""
    from novabench.data.release import read_release  # pyarrow, PIL: not for `nova --help`

    summary = read_release(args.data).summary()
    print(
        json.dumps(summary, indent=2, ensure_ascii=False) if args.json else format_summary(summary)
    )
    return 0


def register(subparsers: Any) -> None:
    """Add the `info` sub-command to the `nova` parser."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "info",
        help="validate a NOVA release and print its counts",
        description=(
            "Read and validate a NOVA release folder (official v1 parquet or legacy CSV layout) "
            "and print images, cases, boxes, raters, placeholder diagnoses and warnings. "
            "Exit code 2 names the file, row and field of the first problem."
        ),
    )
    parser.add_argument(
        "data",
        help="release folder (official v1 or legacy layout, or a `nova export` folder)",
    )
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="no progress bar (reading the images)"
    )
    parser.set_defaults(func=run)
