"""`nova ingest`: placeholder until its module lands (owned by one work stream)."""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> None:
    """Add the `ingest` sub-command (placeholder)."""
    parser: argparse.ArgumentParser = subparsers.add_parser("ingest", help="(not yet available)")
    parser.set_defaults(func=lambda args: parser.error("not implemented yet"))
