"""The package's import graph: layers import only downwards, and data/ and report/ have no
circle (CONTRIBUTING.md, "Layers").

Every import counts, wherever it is written: at the top of a module, inside a function
(imported on first use) or under ``if TYPE_CHECKING:`` (a type is a dependency too).
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from tests.source_trees import parsed_source

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "novabench"

# Bottom to top, as CONTRIBUTING.md lists them; a module may import its own layer and those
# below it. A module not named here belongs to the bottom layer.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("bottom", ()),
    ("data", ("novabench.data",)),
    ("run", ("novabench.run",)),
    ("metrics", ("novabench.metrics",)),
    ("report", ("novabench.report", "novabench.published")),
    (
        "faces",
        (
            "novabench",  # the package's own __init__: the public entry points
            "novabench.__main__",
            "novabench.cli",
            "novabench.spaces",
            "novabench.evaluator",
            "novabench.metric_module",
        ),
    ),
)

# Modules split out of one file, one job each (issue 21), bottom to top: each may import
# those before it, never one after it, so no circle can form among them. The package's or
# file's old path imports every one of them back (its ``__init__``, ``predictions.py``).
SPLIT_ORDERS: dict[str, tuple[str, ...]] = {
    "novabench.report.leaderboard": (
        "settings",  # the rank metric and scoring settings tasks declare; where reports differ
        "values",  # a report's headline values and CIs, refused where the board cannot show them
        "recomputed",  # stated values and CIs checked against the report's per-item tables
        "comparable",  # whether reports may share a board: the refusals across reports
        "ranking",  # ranks with ties, and why a task is left unranked
        "coverage",  # how much of each task a report answered
        "build",  # build_leaderboard, in named steps
        "cells",  # one cell or title of a table
        "tables",  # the overview, each task's table, the CSV's wide table
        "formats",  # Markdown, terminal text, HTML, CSV
    ),
    "novabench.run": (
        "records",  # PredictionRecord, PredictionSet
        "box_answers",  # what a report says about box answers beyond their statuses
        "raw_answers",  # parse_raw and its stored-vs-fresh agreement checks
        "predictions",  # predictions JSONL read, validated, written
    ),
}


def module_name(path: Path, root: Path = PACKAGE) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(tree: ast.AST, name: str, is_package: bool, known: set[str]) -> Iterator[str]:
    """The package modules one module imports (``from pkg import module`` names the module)."""
    package = name if is_package else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names if alias.name.startswith("novabench"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if target == "novabench" or target.startswith("novabench."):
                for alias in node.names:
                    submodule = f"{target}.{alias.name}"
                    yield submodule if submodule in known else target


@functools.cache  # three tests read the package's graph: build it once per worker
def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    paths = {module_name(path, root): path for path in root.rglob("*.py")}
    known = set(paths)
    return {
        name: set(imported_modules(parsed_source(path), name, path.name == "__init__.py", known))
        - {name}
        for name, path in paths.items()
    }


def layer_of(module: str) -> int:
    found = 0
    for level, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if module == prefix or (prefix != "novabench" and module.startswith(prefix + ".")):
                found = level
    return found


def cycles_within(graph: dict[str, set[str]], prefix: str) -> list[list[str]]:
    """Every strongly connected group of more than one module under ``prefix`` (Tarjan)."""
    nodes = sorted(n for n in graph if n.startswith(prefix))
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph[node]):
            if not other.startswith(prefix) or other not in graph:
                continue
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in nodes:
        if node not in index:
            visit(node)
    return found


def test_the_checks_see_a_circle_and_an_arrow_up(tmp_path: Path) -> None:
    package = tmp_path / "novabench"
    (package / "data").mkdir(parents=True)
    (package / "run").mkdir()
    (package / "__init__.py").write_text("__version__ = '0'\n")
    (package / "data" / "__init__.py").write_text("")
    (package / "run" / "__init__.py").write_text("")
    (package / "data" / "a.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from novabench.data.b import B\n"
    )
    (package / "data" / "b.py").write_text("def f():\n    from . import a\n")
    (package / "run" / "c.py").write_text("from novabench import __version__\n")
    graph = import_graph(package)
    assert graph["novabench.data.a"] == {"novabench.data.b"}
    assert cycles_within(graph, "novabench.data") == [["novabench.data.a", "novabench.data.b"]]
    assert graph["novabench.run.c"] == {"novabench"}
    assert layer_of("novabench.run.c") < layer_of("novabench")


@pytest.mark.parametrize("package", ["novabench.data", "novabench.report"])
def test_no_circle_of_imports_within(package: str) -> None:
    assert cycles_within(import_graph(), package + ".") == []


def test_no_module_imports_from_a_higher_layer() -> None:
    upward = [
        f"{module} ({LAYERS[layer_of(module)][0]}) imports {target} ({LAYERS[layer_of(target)][0]})"
        for module, targets in sorted(import_graph().items())
        for target in sorted(targets)
        if layer_of(target) > layer_of(module)
    ]
    assert upward == []


def imports_upward(graph: dict[str, set[str]], package: str, names: Sequence[str]) -> list[str]:
    """Each import of a module of ``names`` (bottom to top) from one above it, or from the
    package that imports them all back."""
    order = [f"{package}.{name}" for name in names]
    return [
        f"{module} imports {target}"
        for position, module in enumerate(order)
        for target in sorted(graph[module])
        if target in order[position + 1 :] or target == package
    ]


@pytest.mark.parametrize("package", sorted(SPLIT_ORDERS))
def test_split_modules_import_only_those_below_them(package: str) -> None:
    graph = import_graph()
    missing = [n for n in SPLIT_ORDERS[package] if f"{package}.{n}" not in graph]
    assert missing == []
    assert imports_upward(graph, package, SPLIT_ORDERS[package]) == []


def test_the_order_check_sees_an_import_upward(tmp_path: Path) -> None:
    package = tmp_path / "novabench"
    (package / "run").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "run" / "__init__.py").write_text("")
    (package / "run" / "records.py").write_text(
        "def f():\n    from novabench.run import predictions\n"
    )
    (package / "run" / "predictions.py").write_text("from novabench.run.records import f\n")
    graph = import_graph(package)
    assert imports_upward(graph, "novabench.run", ("records", "predictions")) == [
        "novabench.run.records imports novabench.run.predictions"
    ]
    assert imports_upward(graph, "novabench.run", ("predictions", "records")) == [
        "novabench.run.predictions imports novabench.run.records"
    ]
