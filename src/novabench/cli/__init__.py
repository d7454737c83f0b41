"""The ``nova`` command: one sub-command per module of this package.

Each module ``novabench.cli.<name>`` defines ``register(subparsers)``, which adds
its parser and sets ``func`` to a callable taking the parsed arguments and
returning an exit code. This module only dispatches and turns toolkit errors
into a one-line message and a non-zero exit code.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from novabench import __version__
from novabench.errors import NovaError

COMMANDS: tuple[str, ...] = (
    "sample",
    "ingest",
    "export",
    "info",
    "run",
    "parse",
    "merge",
    "evaluate",
    "compare",
    "space",
)


def build_parser() -> argparse.ArgumentParser:
    """Build the ``nova`` argument parser with every sub-command.

    Example:
        >>> parser = build_parser()
        >>> parser.prog
        'nova'
    """
    parser = argparse.ArgumentParser(
        prog="nova",
        description="NOVA benchmark toolkit: data, runs and scores.",
    )
    parser.add_argument("--version", action="version", version=f"novabench {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS:
        importlib.import_module(f"novabench.cli.{name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``nova`` command line; returns the process exit code.

    Example:
        >>> main(["--help"])  # doctest: +SKIP
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except NovaError as error:
        print(f"nova {args.command}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        # Each command decides what survives: runs keep every answered line, exports and
        # ingests remove their temporary folder, so nothing half-written is left at OUT.
        print(f"nova {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
