"""The syntax trees of the package's source files, parsed once per test process.

Three test files check the whole package's source (its import layers, who renames files, who
branches on a task's name); each parsed all of it again, about a CPU second every time.
They share these trees (read only: the checks walk them, none changes one) and run on one
xdist worker (``WORKER_GROUPS`` in tests/lazy_import.py), so the package is parsed once.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path


@functools.cache
def parsed_source(path: Path) -> ast.Module:
    """The syntax tree of the Python file at ``path`` (cached: never modify it)."""
    return ast.parse(path.read_text(encoding="utf-8"), str(path))
