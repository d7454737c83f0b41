"""`nova space build {explorer,metric} OUT`: write a Space repository, optionally push it."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    """Add the ``space`` sub-command (``nova space build ...``).

    Example:
        >>> parser = argparse.ArgumentParser(); sub = parser.add_subparsers()
        >>> register(sub)
        >>> args = parser.parse_args(["space", "build", "metric", "out", "--push", "me/nova_metric"])
        >>> args.kind, args.out, args.push
        ('metric', PosixPath('out'), 'me/nova_metric')
    """
    from novabench.spaces import SPACE_KINDS

    parser: argparse.ArgumentParser = subparsers.add_parser(
        "space",
        help="build (and push) the explorer or metric Gradio Space",
        description="Gradio Spaces of novabench: the dataset explorer and the metric.",
    )
    actions = parser.add_subparsers(dest="space_action", metavar="ACTION", required=True)
    build = actions.add_parser(
        "build",
        help="write a complete Space repository (app, README with Space YAML, requirements, wheel)",
        description=(
            "Write a Space repository that builds on a CPU Space: app.py, README.md with the "
            "Space YAML, requirements.txt (CPU torch where needed) and the novabench wheel "
            "vendored beside app.py. --push uploads it with huggingface_hub."
        ),
    )
    build.add_argument("kind", choices=SPACE_KINDS, help="which Space")
    build.add_argument("out", type=Path, help="folder to write")
    build.add_argument(
        "--wheel",
        type=Path,
        help="novabench wheel to vendor (default: build one from the checkout)",
    )
    build.add_argument(
        "--data",
        help="NOVA data of the Space: a Hub dataset id, or a local release/export folder "
        "(copied in); default: NOVA_SOURCE at run time, else the synthetic sample",
    )
    build.add_argument(
        "--overwrite",
        action="store_true",
        help="replace OUT when an earlier nova space build wrote it (never a folder of yours)",
    )
    build.add_argument("--push", metavar="USER/NAME", help="upload the Space to this repository")
    build.add_argument("--private", action="store_true", help="create the pushed Space private")
    build.add_argument(
        "-q", "--quiet", action="store_true", help="no progress bars (reading a local release)"
    )
    build.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Build the Space (and push it); prints one line per step; returns the exit code."""
    from novabench.run.lock import claiming_outputs
    from novabench.spaces.build import build_space, push_space

    # Claimed before OUT is checked: a second build of it is refused, not raced.
    with claiming_outputs({"OUT": args.out}, "nova space build"):
        out = build_space(
            args.kind, args.out, wheel=args.wheel, data=args.data, overwrite=args.overwrite
        )
    files = sorted(path.name for path in out.iterdir())
    print(f"nova space: {args.kind} Space written to {out} ({', '.join(files)})")
    if args.push:
        url = push_space(out, args.push, private=args.private)
        print(f"nova space: pushed to {url}")
    return 0
