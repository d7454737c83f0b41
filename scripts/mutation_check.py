"""Single-token mutation check of one module against a chosen subset of tests.

Each mutant changes one token of the module (a comparison or arithmetic operator, an integer
constant by +/-1, a boolean constant, ``and``/``or``, a removed ``not``) and runs the given test
files with ``-x`` under a time box. A mutant the tests still pass on is a survivor: a behaviour
no test pins down. Mutants listed in ``scripts/mutation_equivalents.txt`` change nothing a user
can observe and are left out of the score (each line there says why).

It is a tool, not a test: run it on one module at a time (the machine is shared), e.g.

    python scripts/mutation_check.py src/novabench/run/parsers/boxes.py \\
        tests/run/test_box_conventions.py tests/run/test_parsers.py

Heavy third-party libraries are imported once in this process; each mutant runs in a forked
child that imports novabench from a private copy of ``src/`` holding the mutated file, so the
work tree is never modified.

Every mutant is run (no sampling unless ``--sample``), but only against the tests that can see
it, as coverage-guided mutation tools do: the unmutated run traces which tests execute each
line of the module, and a mutant runs the tests that executed its lines (with those sharing a
broader-scoped fixture that did). A line run at import or collection, or by no traced test,
runs every given test. ``--every-test`` turns the selection off.

The module's own doctests (its docstrings' ``Example:`` sections, run by ``make test``) join
the given tests (``--no-doctests`` leaves them out): they are collected from the mutated copy,
traced like any test, and a mutant runs those of them that executed its lines. They add a
few seconds at most to the one traced run (7 doctests of ``metrics/diagnosis.py``: 15 s
before, 18 s after, on a loaded machine) and run on only the mutants of lines they reach.
"""

from __future__ import annotations

import argparse
import ast
import copy
import importlib
import json
import os
import random
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

TraceFunction = Callable[[FrameType, str, object], object]

ROOT = Path(__file__).resolve().parent.parent
EQUIVALENTS_FILE = ROOT / "scripts" / "mutation_equivalents.txt"

# The scoring and parsing cores and the test files that own them: those that import the module
# and test its behaviour (fastest first: -x stops at the first failure). Each mutant runs only
# those of their tests that executed the mutated line. `make mutation` runs these one module
# after another.
DEFAULT_TARGETS: dict[str, list[str]] = {
    "src/novabench/metrics/diagnosis.py": [
        "tests/metrics/test_diagnosis.py",
        "tests/metrics/test_diagnosis_pairs.py",
        "tests/metrics/test_case_judge.py",
        "tests/metrics/test_judge.py",
        "tests/metrics/test_matcher_general_rules.py",
        "tests/metrics/test_bootstrap_vectorised.py",
    ],
    "src/novabench/run/parsers/boxes.py": [
        "tests/run/test_boxes_mutants.py",
        "tests/run/test_parsers.py",
        "tests/run/test_box_conventions.py",
        "tests/run/test_keyed_box_order.py",
        "tests/run/test_lesion_list_answers.py",
        "tests/run/test_parsers_fuzz.py",
        "tests/run/test_parsers_properties.py",
        "tests/run/test_box_2d_scale.py",
        "tests/run/test_dropped_boxes.py",
        "tests/run/test_cut_off_pretty_json.py",
        "tests/run/test_localization_refusals.py",
        "tests/run/test_parsed_agrees_with_raw.py",
        "tests/run/test_parsed_file_rewritten.py",
        "tests/run/test_not_finite_boxes.py",
    ],
    "src/novabench/metrics/localization.py": [
        "tests/metrics/test_localization_mutants.py",
        "tests/metrics/test_localization.py",
        "tests/metrics/test_localization_parity.py",
        "tests/metrics/test_localization_inputs_parity.py",
        "tests/metrics/test_bootstrap_vectorised.py",
        "tests/metrics/test_stats.py",
        "tests/metrics/test_cluster_bootstrap.py",
    ],
    "src/novabench/metrics/captioning.py": [
        "tests/metrics/test_captioning_mutants.py",
        "tests/metrics/test_captioning.py",
        "tests/metrics/test_caption_fast_paths.py",
        "tests/metrics/test_meteor_variants.py",
        "tests/metrics/test_keyword_judge.py",
        "tests/metrics/test_bootstrap_vectorised.py",
        "tests/metrics/test_cluster_bootstrap.py",
        "tests/metrics/test_cluster_sums.py",
    ],
    "src/novabench/metrics/stats.py": [
        "tests/metrics/test_stats_mutants.py",
        "tests/metrics/test_stats.py",
        "tests/metrics/test_cluster_sums.py",
        "tests/metrics/test_cluster_bootstrap.py",
        "tests/metrics/test_bootstrap_vectorised.py",
        "tests/test_blas.py",
    ],
}

# Boundary shifts and negations of each comparison operator.
_COMPARE_SWAPS: dict[type[ast.cmpop], tuple[type[ast.cmpop], ...]] = {
    ast.Lt: (ast.LtE, ast.GtE),
    ast.LtE: (ast.Lt, ast.Gt),
    ast.Gt: (ast.GtE, ast.LtE),
    ast.GtE: (ast.Gt, ast.Lt),
    ast.Eq: (ast.NotEq,),
    ast.NotEq: (ast.Eq,),
    ast.Is: (ast.IsNot,),
    ast.IsNot: (ast.Is,),
    ast.In: (ast.NotIn,),
    ast.NotIn: (ast.In,),
}
_BINOP_SWAPS: dict[type[ast.operator], tuple[type[ast.operator], ...]] = {
    ast.Add: (ast.Sub,),
    ast.Sub: (ast.Add,),
    ast.Mult: (ast.Div,),
    ast.Div: (ast.Mult,),
    ast.FloorDiv: (ast.Div,),
    ast.Mod: (ast.FloorDiv,),
    ast.Pow: (ast.Mult,),
}
_SYMBOLS: dict[type[ast.AST], str] = {
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Is: "is",
    ast.IsNot: "is not",
    ast.In: "in",
    ast.NotIn: "not in",
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.Pow: "**",
    ast.And: "and",
    ast.Or: "or",
}


@dataclass(frozen=True)
class Mutant:
    """One single-token change of a module.

    Attributes:
        index: position in the module's list of mutants (stable for an unchanged file).
        line: 1-based line of the changed token.
        function: qualified name of the enclosing function or class ("<module>" at top level).
        description: the change, e.g. ``"< -> <="``.
        source: the whole mutated module as source text.
        end_line: last line of the changed expression (0: the same as ``line``).
    """

    index: int
    line: int
    function: str
    description: str
    source: str
    end_line: int = 0

    def key(self, original_lines: list[str]) -> str:
        """The mutant's identity in the equivalents file: function, change and line text.

        Line numbers move whenever a file is edited; the line's own text rarely does.

        Example:
            >>> Mutant(0, 2, "f", "< -> <=", "").key(["def f(x):", "    return x < 1"])
            'f | < -> <= | return x < 1'
        """
        return f"{self.function} | {self.description} | {original_lines[self.line - 1].strip()}"


def _skipped_nodes(tree: ast.AST) -> set[int]:
    """Ids of nodes no mutant may touch: annotations, docstrings and ``__all__``."""
    skipped: set[int] = set()

    def skip(node: ast.AST | None) -> None:
        if node is not None:
            skipped.update(id(sub) for sub in ast.walk(node))

    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            skip(node.returns)
            for arg in [*node.args.args, *node.args.kwonlyargs, *node.args.posonlyargs]:
                skip(arg.annotation)
            skip(node.args.vararg.annotation if node.args.vararg else None)
            skip(node.args.kwarg.annotation if node.args.kwarg else None)
        if isinstance(node, ast.AnnAssign):
            skip(node.annotation)
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "__all__" for target in node.targets
        ):
            skip(node)
        # `if TYPE_CHECKING:` blocks never run.
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name):
            if node.test.id == "TYPE_CHECKING":
                skip(node)
    return skipped


def _enclosing_names(tree: ast.AST) -> dict[int, str]:
    """Map every node id to the qualified name of its enclosing function or class."""
    names: dict[int, str] = {}

    def visit(node: ast.AST, qualname: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = qualname
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                inner = child.name if qualname == "<module>" else f"{qualname}.{child.name}"
            names[id(child)] = inner
            visit(child, inner)

    visit(tree, "<module>")
    return names


def _edits(node: ast.AST) -> Iterator[tuple[str, object]]:
    """The single-token changes of one node, as (description, replacement spec)."""
    if isinstance(node, ast.Compare):
        for position, op in enumerate(node.ops):
            for new in _COMPARE_SWAPS.get(type(op), ()):
                yield f"{_SYMBOLS[type(op)]} -> {_SYMBOLS[new]}", ("cmp", position, new)
    elif isinstance(node, (ast.BinOp, ast.AugAssign)):
        for new in _BINOP_SWAPS.get(type(node.op), ()):
            yield f"{_SYMBOLS[type(node.op)]} -> {_SYMBOLS[new]}", ("op", new)
    elif isinstance(node, ast.BoolOp):
        new = ast.Or if isinstance(node.op, ast.And) else ast.And
        yield f"{_SYMBOLS[type(node.op)]} -> {_SYMBOLS[new]}", ("op", new)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield "not removed", ("unwrap",)
    elif isinstance(node, ast.Constant) and type(node.value) is bool:
        yield f"{node.value} -> {not node.value}", ("const", not node.value)
    elif isinstance(node, ast.Constant) and type(node.value) is int:
        yield f"{node.value} -> {node.value + 1}", ("const", node.value + 1)
        yield f"{node.value} -> {node.value - 1}", ("const", node.value - 1)


class _Apply(ast.NodeTransformer):
    """Apply one edit to the node at a given walk position of a fresh copy of the tree."""

    def __init__(self, target: int, spec: tuple[object, ...]) -> None:
        self.target = target
        self.spec = spec
        self.position = -1

    def generic_visit(self, node: ast.AST) -> ast.AST:
        return super().generic_visit(node)

    def visit(self, node: ast.AST) -> ast.AST:
        self.position += 1
        if self.position != self.target:
            return self.generic_visit(node)
        kind = self.spec[0]
        if kind == "cmp":
            assert isinstance(node, ast.Compare)
            _, position, new = self.spec
            node.ops[position] = new()  # type: ignore[index, operator]
        elif kind == "op":
            node.op = self.spec[1]()  # type: ignore[attr-defined, operator]
        elif kind == "const":
            node.value = self.spec[1]  # type: ignore[attr-defined]
        elif kind == "unwrap":
            return node.operand  # type: ignore[attr-defined, no-any-return]
        return node


def generate_mutants(source: str) -> list[Mutant]:
    """Every single-token mutant of a module's source.

    Args:
        source: the module's source text.

    Returns:
        The mutants in source order of the walked tree, each with the full mutated source.

    Example:
        >>> mutants = generate_mutants("def positive(x):\\n    return x > 0\\n")
        >>> [m.description for m in mutants]
        ['> -> >=', '> -> <=', '0 -> 1', '0 -> -1']
        >>> print(mutants[0].source)
        def positive(x):
            return x >= 0
    """
    tree = ast.parse(source)
    skipped = _skipped_nodes(tree)
    names = _enclosing_names(tree)
    mutants: list[Mutant] = []
    # The walk order of NodeTransformer (depth first, pre-order) numbers the nodes.
    order: list[ast.AST] = []

    def collect(node: ast.AST) -> None:
        order.append(node)
        for child in ast.iter_child_nodes(node):
            collect(child)

    collect(tree)
    for position, node in enumerate(order):
        if id(node) in skipped:
            continue
        for description, spec in _edits(node):
            mutated = _Apply(position, spec).visit(copy.deepcopy(tree))  # type: ignore[arg-type]
            mutants.append(
                Mutant(
                    index=len(mutants),
                    line=getattr(node, "lineno", 0),
                    function=names.get(id(node), "<module>"),
                    description=description,
                    source=ast.unparse(ast.fix_missing_locations(mutated)),
                    end_line=getattr(node, "end_lineno", None) or getattr(node, "lineno", 0),
                )
            )
    return mutants


def mutant_keys(mutants: list[Mutant], original_lines: list[str]) -> dict[int, str]:
    """Each mutant's key in the equivalents file, by index; the same change made again on the
    same line (two ``1`` constants, say) gets `` #2``, `` #3`` after the change, in walk order.

    Example:
        >>> lines = ["def f(x):", "    return x[1] + 1"]
        >>> keys = mutant_keys(generate_mutants("\\n".join(lines)), lines)
        >>> keys[1], keys[3]
        ('f | 1 -> 2 | return x[1] + 1', 'f | 1 -> 2 #2 | return x[1] + 1')
    """
    seen: dict[str, int] = {}
    keys: dict[int, str] = {}
    for mutant in mutants:
        key = mutant.key(original_lines)
        seen[key] = seen.get(key, 0) + 1
        if seen[key] > 1:
            text = original_lines[mutant.line - 1].strip()
            key = f"{mutant.function} | {mutant.description} #{seen[key]} | {text}"
        keys[mutant.index] = key
    return keys


def read_equivalents(module: str) -> dict[str, str]:
    """The mutants of ``module`` noted as equivalent: key -> reason."""
    notes: dict[str, str] = {}
    if not EQUIVALENTS_FILE.exists():
        return notes
    for number, line in enumerate(EQUIVALENTS_FILE.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        # The line text may itself hold " | " (numpy's or); the other fields never do.
        head = line.split(" | ", 3)
        if len(head) != 4 or " | " not in head[3]:
            raise SystemExit(
                f"{EQUIVALENTS_FILE}:{number}: expected 'path | function | change | line | why'"
            )
        path, function, change = (part.strip() for part in head[:3])
        text, reason = (part.strip() for part in head[3].rsplit(" | ", 1))
        if path == module:
            notes[f"{function} | {change} | {text}"] = reason
    return notes


class _LineRecorder:
    """A pytest plugin that notes, for each line of one file, which tests executed it.

    A line run while a test (or a function-scoped fixture of it) runs belongs to that test; a
    line run while a broader-scoped fixture is set up belongs to every test using the fixture
    (``fixture:NAME``); a line run at import, collection or session teardown belongs to no
    test in particular (``""``), so a mutant there is checked against every test.
    """

    def __init__(self, filename: str) -> None:
        self.filenames = {filename, os.path.realpath(filename)}
        self.owner = ""
        self.lines: dict[int, set[str]] = {}
        self.order: list[str] = []
        self.fixture_users: dict[str, list[str]] = {}

    def trace_calls(self, frame: FrameType, event: str, arg: object) -> TraceFunction | None:
        """Trace only the frames of the recorded file (sys.settrace's global function)."""
        return self.trace_lines if frame.f_code.co_filename in self.filenames else None

    def trace_lines(self, frame: FrameType, event: str, arg: object) -> TraceFunction:
        """Note the current owner of every line event of a recorded frame."""
        if event == "line":
            self.lines.setdefault(frame.f_lineno, set()).add(self.owner)
        return self.trace_lines

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> object:
        node = item.nodeid
        if node.startswith("::"):  # a doctest of the module's copy, outside the rootdir: its
            node = f"{item.path}{node}"  # path makes the id one pytest can be given again
        self.order.append(node)
        for name in getattr(item, "fixturenames", ()):
            self.fixture_users.setdefault(name, []).append(node)
        self.owner = node
        try:
            return (yield)
        finally:
            self.owner = ""

    @pytest.hookimpl(wrapper=True)
    def pytest_fixture_setup(self, fixturedef: Any, request: Any) -> object:
        if fixturedef.scope == "function":
            return (yield)
        previous, self.owner = self.owner, f"fixture:{fixturedef.argname}"
        try:
            return (yield)
        finally:
            self.owner = previous

    def as_json(self) -> dict[str, object]:
        """The record, as written for the parent process."""
        return {
            "order": self.order,
            "fixture_users": self.fixture_users,
            "lines": {str(line): sorted(owners) for line, owners in self.lines.items()},
        }


@dataclass(frozen=True)
class Coverage:
    """Which tests executed which line of the module in the unmutated run.

    Attributes:
        order: every test's node id, in the order the run took them.
        lines: line -> owners (node ids, ``fixture:NAME``, or ``""`` for no test in particular).
        fixture_users: broader-scoped fixture name -> node ids of the tests using it.
    """

    order: list[str]
    lines: dict[int, set[str]]
    fixture_users: dict[str, list[str]]

    @classmethod
    def read(cls, path: Path) -> Coverage:
        """Read the record a recording child wrote."""
        data = json.loads(path.read_text(encoding="utf-8"))
        return cls(
            order=list(data["order"]),
            lines={int(line): set(owners) for line, owners in data["lines"].items()},
            fixture_users={name: list(ids) for name, ids in data["fixture_users"].items()},
        )

    def tests_for(self, first_line: int, last_line: int) -> list[str] | None:
        """Node ids of the tests that ran any of these lines, in run order; ``None`` when every
        test must run (a line ran outside any test, or no recorded test ran these lines: a
        thread or process the tracer did not see may have).

        Example:
            >>> record = Coverage(["t::a", "t::b", "t::c"], {3: {"t::b"}, 4: {"fixture:f"}, 9: {""}}, {"f": ["t::c"]})
            >>> record.tests_for(3, 4), record.tests_for(9, 9), record.tests_for(5, 6)
            (['t::b', 't::c'], None, None)
        """
        owners: set[str] = set()
        for line in range(first_line, max(first_line, last_line) + 1):
            owners |= self.lines.get(line, set())
        if not owners or "" in owners:
            return None
        chosen: set[str] = set()
        for owner in owners:
            if owner.startswith("fixture:"):
                chosen.update(self.fixture_users.get(owner.removeprefix("fixture:"), []))
            else:
                chosen.add(owner)
        return [test for test in self.order if test in chosen]


def _run_child(
    src_copy: Path,
    tests: list[str],
    modules_file: Path | None = None,
    coverage_file: Path | None = None,
) -> None:
    """In the forked child: import novabench from the copy and run the tests; exit with pytest's code.

    With ``modules_file``, also write there the names of the modules the run imported from
    outside the work tree and the copy (third-party libraries and pytest plugins), one a line.
    With ``coverage_file`` (holding, on entry, the path of the module copy), record which test
    ran each line of that module and overwrite the file with the record as JSON.
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    sys.path.insert(0, str(src_copy))
    plugins: list[object] = []
    recorder = None
    if coverage_file is not None:
        recorder = _LineRecorder(coverage_file.read_text(encoding="utf-8"))
        plugins.append(recorder)
        threading.settrace(recorder.trace_calls)
        sys.settrace(recorder.trace_calls)
    code = pytest.main(
        [
            *tests,
            *(["--doctest-modules"] if any(_is_module(test) for test in tests) else []),
            "-x",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            "-m",
            "not slow",
        ],
        plugins=plugins,
    )
    sys.settrace(None)
    if modules_file is not None:
        modules_file.write_text("\n".join(_third_party_modules(src_copy)), encoding="utf-8")
    if recorder is not None and coverage_file is not None:
        coverage_file.write_text(json.dumps(recorder.as_json()), encoding="utf-8")
    os._exit(int(code))


def _is_module(test: str) -> bool:
    """Whether a test (a file or a node id) is a doctest of a module under ``src/`` (its copy).

    Example:
        >>> _is_module("/tmp/m/src/novabench/metrics/diagnosis.py::novabench.metrics.diagnosis")
        True
        >>> _is_module("tests/metrics/test_diagnosis.py::test_top1")
        False
    """
    return "/src/novabench/" in "/" + test.split("::", 1)[0]


def _third_party_modules(src_copy: Path) -> list[str]:
    """Names of the loaded modules whose file lies outside the work tree and ``src_copy``."""
    names = []
    for name, module in list(sys.modules.items()):
        location = getattr(module, "__file__", None)
        if name == "__main__" or not isinstance(location, str):
            continue
        path = Path(location).resolve()
        if not (path.is_relative_to(ROOT) or path.is_relative_to(src_copy.resolve())):
            names.append(name)
    return names


def _preload(modules_file: Path) -> int:
    """Import in this process the modules the unmutated run listed: every forked child then
    starts with them loaded (pytest's plugins, hypothesis above all, took seconds per
    mutant). None of them is novabench, so the mutated copy is still what each child tests.
    """
    loaded = 0
    for name in modules_file.read_text(encoding="utf-8").split():
        if name in sys.modules:
            continue
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a module that only imports inside its package
            continue
        loaded += 1
    return loaded


def _imports_from(src_copy: Path) -> bool:
    """Whether a forked child imports novabench from ``src_copy`` (and not an installed copy)."""
    pid = os.fork()
    if pid == 0:
        sys.path.insert(0, str(src_copy))
        import novabench

        os._exit(0 if Path(novabench.__file__).is_relative_to(src_copy) else 1)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0


def run_mutant(
    src_copy: Path,
    module_copy: Path,
    mutant: Mutant,
    tests: list[str],
    timeout: float,
    modules_file: Path | None = None,
    coverage_file: Path | None = None,
) -> str:
    """Write the mutant into the copy, run the tests in a forked child: 'killed'/'survived'/'timeout'."""
    module_copy.write_text(mutant.source, encoding="utf-8")
    pid = os.fork()
    if pid == 0:
        try:
            _run_child(src_copy, tests, modules_file, coverage_file)
        finally:
            os._exit(70)
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return "survived" if os.waitstatus_to_exitcode(status) == 0 else "killed"
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return "timeout"
        time.sleep(0.05)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "module", help="path of the module under src/, e.g. src/novabench/metrics/diagnosis.py"
    )
    parser.add_argument(
        "tests",
        nargs="*",
        help="test files (or node ids) that should kill its mutants (default: the module's own, "
        "for the modules in DEFAULT_TARGETS)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=180.0,
        help="seconds per mutant (default 180: under a shared load one unmutated run took 56 s, "
        "and a survivor cut off by the time box would count as killed)",
    )
    parser.add_argument(
        "--every-test",
        action="store_true",
        help="run every given test on every mutant (default: only the tests that executed the "
        "mutated line in the unmutated run, and every test for a line run at import or by none)",
    )
    parser.add_argument(
        "--no-doctests",
        action="store_true",
        help="leave out the module's own doctests (default: they run beside the tests)",
    )
    parser.add_argument(
        "--sample", type=int, default=0, help="run this many mutants drawn at random"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of --sample (default 0)")
    parser.add_argument(
        "--function", default="", help="only mutants inside this function (qualified name prefix)"
    )
    parser.add_argument(
        "--only",
        default="",
        help="only these mutant numbers, comma-separated (the # of a SURVIVED line): re-check "
        "survivors after adding tests",
    )
    args = parser.parse_args(argv)

    module = Path(args.module).resolve()
    tests = args.tests or DEFAULT_TARGETS.get(str(module.relative_to(ROOT)), [])
    if not tests:
        parser.error(f"no default tests for {args.module}: name the test files")
    src = ROOT / "src"
    relative = module.relative_to(src)
    source = module.read_text(encoding="utf-8")
    lines = source.splitlines()
    every_mutant = generate_mutants(source)
    keys = mutant_keys(every_mutant, lines)
    mutants = [m for m in every_mutant if m.function.startswith(args.function)]
    if args.only:
        chosen = {int(number) for number in args.only.split(",")}
        mutants = [m for m in mutants if m.index in chosen]
    equivalents = read_equivalents(str(module.relative_to(ROOT)))
    if args.sample and args.sample < len(mutants):
        mutants = sorted(
            random.Random(args.seed).sample(mutants, args.sample), key=lambda m: m.index
        )
        print(f"sampled {len(mutants)} mutants (seed {args.seed})")

    # Bytecode caches keyed by mtime could hand a child the previous mutant.
    sys.dont_write_bytecode = True
    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    # Import the heavy libraries once, before forking; novabench itself never in this process.
    import numpy  # noqa: F401

    os.chdir(ROOT)
    counts = {"killed": 0, "timeout": 0, "survived": 0, "equivalent": 0}
    survivors: list[Mutant] = []
    with tempfile.TemporaryDirectory(prefix="novabench-mutation-") as tmp:
        src_copy = Path(tmp) / "src"
        shutil.copytree(src, src_copy, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        module_copy = src_copy / relative
        if not args.no_doctests:  # collected from the copy, so they see each mutant
            tests = [*tests, str(module_copy)]
        if not _imports_from(src_copy):
            print(
                "novabench does not import from the mutated copy: nothing would be checked",
                file=sys.stderr,
            )
            return 2
        modules_file = Path(tmp) / "modules.txt"
        coverage_file = None if args.every_test else Path(tmp) / "coverage.json"
        if coverage_file is not None:
            coverage_file.write_text(str(module_copy), encoding="utf-8")
        unmutated = Mutant(-1, 0, "", "", source)
        started = time.monotonic()
        # Line tracing slows the one recording run down several times.
        unmutated_timeout = args.timeout * (1 if coverage_file is None else 5)
        outcome = run_mutant(
            src_copy, module_copy, unmutated, tests, unmutated_timeout, modules_file, coverage_file
        )
        if outcome != "survived":
            print(
                f"the tests fail on the unmutated module ({outcome}): fix them first",
                file=sys.stderr,
            )
            return 2
        coverage = None
        if coverage_file is not None:
            coverage = Coverage.read(coverage_file)
            doctests = sum(_is_module(test) for test in coverage.order)
            print(
                f"unmutated run: {len(coverage.order)} tests ({doctests} doctests), "
                f"{len(coverage.lines)} lines of the module executed, "
                f"{time.monotonic() - started:.0f} s",
                flush=True,
            )
        if modules_file.exists():
            print(f"preloaded {_preload(modules_file)} third-party modules", flush=True)
            if "novabench" in sys.modules:  # a child would test this copy, not the mutant
                print("a preloaded module imported novabench: cannot check", file=sys.stderr)
                return 2
        started = time.monotonic()
        every_test_runs = 0
        for number, mutant in enumerate(mutants, 1):
            key = keys[mutant.index]
            if key in equivalents:
                counts["equivalent"] += 1
                continue
            chosen = None if coverage is None else coverage.tests_for(mutant.line, mutant.end_line)
            every_test_runs += chosen is None
            outcome = run_mutant(src_copy, module_copy, mutant, chosen or tests, args.timeout)
            counts[outcome] += 1
            if outcome == "survived":
                survivors.append(mutant)
                print(f"SURVIVED #{mutant.index} {relative}:{mutant.line} | {key}", flush=True)
            if number % 25 == 0:
                print(
                    f"  {number}/{len(mutants)} done, {time.monotonic() - started:.0f} s",
                    flush=True,
                )
        module_copy.write_text(source, encoding="utf-8")

    scored = counts["killed"] + counts["timeout"] + counts["survived"]
    rate = (counts["killed"] + counts["timeout"]) / scored if scored else float("nan")
    print(
        f"{relative}: {counts['killed'] + counts['timeout']}/{scored} non-equivalent mutants killed "
        f"({100 * rate:.1f}%; {counts['timeout']} by timeout), {counts['equivalent']} equivalent, "
        f"{counts['survived']} survived; {time.monotonic() - started:.0f} s, "
        f"{every_test_runs} mutants ran every test"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
