"""`nova metric path` and `nova metric copy DEST`: the evaluate module folder, where it is."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    """Add the ``metric`` sub-command (``nova metric path``, ``nova metric copy DEST``).

    Example:
        >>> parser = argparse.ArgumentParser(); sub = parser.add_subparsers()
        >>> register(sub)
        >>> args = parser.parse_args(["metric", "copy", "notebooks", "--force"])
        >>> args.metric_action, args.dest, args.force
        ('copy', PosixPath('notebooks'), True)
    """
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "metric",
        help="where the NOVA evaluate module is, or copy it into a folder",
        description=(
            "The NOVA evaluate module folder (nova_metric.py, its card, its requirements, "
            "the Space app) ships inside novabench. In Python: "
            "evaluate.load(novabench.metric_path(), 'localization')."
        ),
    )
    actions = parser.add_subparsers(dest="metric_action", metavar="ACTION", required=True)
    path = actions.add_parser(
        "path",
        help="print the module folder's path",
        description="Print the folder evaluate.load takes (the installed copy).",
    )
    _accept_quiet(path)
    path.set_defaults(func=run)
    copy = actions.add_parser(
        "copy",
        help="copy the module folder into DEST/nova_metric",
        description=(
            "Copy the module folder into DEST/nova_metric (DEST made when missing); then "
            "evaluate.load('DEST/nova_metric', 'localization') loads it. An existing "
            "DEST/nova_metric is left alone unless --force."
        ),
    )
    copy.add_argument("dest", type=Path, help="folder to copy into (e.g. beside a notebook: .)")
    copy.add_argument(
        "--force",
        action="store_true",
        help="replace the module's files in an existing DEST/nova_metric (other files stay)",
    )
    _accept_quiet(copy)
    copy.set_defaults(func=run)


def _accept_quiet(parser: argparse.ArgumentParser) -> None:
    # Nothing here draws a bar; the option is taken so that -q works in every command.
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="accepted as in every command (no bar here)"
    )


def run(args: argparse.Namespace) -> int:
    """Print the module path, or copy the module; one line; returns the exit code."""
    from novabench.metric_module import copy_metric, metric_path

    if args.metric_action == "path":
        print(metric_path())
        return 0
    target = copy_metric(args.dest, force=args.force)
    print(
        f"nova metric: module copied to {target}; load it with evaluate.load({str(target)!r}, TASK)"
    )
    return 0
