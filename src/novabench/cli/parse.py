"""`nova parse`: placeholder until its module lands (owned by one work stream)."""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> None:
    """Add the `parse` sub-command (placeholder)."""
    parser: argparse.ArgumentParser = subparsers.add_parser("parse", help="(not yet available)")
    parser.set_defaults(func=lambda args: parser.error("not implemented yet"))
