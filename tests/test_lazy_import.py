"""Collecting the test files that use evaluate or gradio imports neither (tests/lazy_import.py)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.lazy_import import HEAVY_LIBRARY_FILES, NLTK_FILES, PACKAGE_SOURCE_FILES

REPO = Path(__file__).resolve().parents[1]
# The browser and Space-install files are all slow: the fast suite collects them only to
# deselect them, so they may not import gradio either.
SLOW_ONLY_FILES = ("tests/spaces/test_browser.py", "tests/spaces/test_space_install.py")
COLLECT_AND_LIST_HEAVY = """
import sys
import pytest
code = pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", *sys.argv[1:]])
heavy = ("evaluate", "gradio", "torch", "transformers", "nltk", "rouge_score", "sklearn")
print("heavy:", sorted(name for name in heavy if name in sys.modules))
sys.exit(code)
"""


# A fresh interpreter collecting eight files costs about what the lazy imports save one worker:
# CI runs it (make test-slow); the fast test below still checks the files exist and share a worker.
@pytest.mark.slow
def test_collecting_the_heavy_library_files_imports_no_heavy_library() -> None:
    files = sorted(HEAVY_LIBRARY_FILES | NLTK_FILES) + list(SLOW_ONLY_FILES)
    assert all((REPO / name).is_file() for name in files), files  # a renamed file loses its group
    done = subprocess.run(
        [sys.executable, "-c", COLLECT_AND_LIST_HEAVY, *files],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert done.stdout.splitlines()[-1] == "heavy: []"


# What a test module may not import at its top: every xdist worker imports every test module
# while collecting, so one such line costs both workers seconds (test_diagnosis_label_parity.py
# imported evaluate, and torch with it, that way). Read them through LazyModule instead.
_HEAVY_TOP_LEVEL_IMPORT = re.compile(
    r"^(?:import|from) (evaluate|gradio|torch|transformers|nltk|rouge_score|sklearn|bert_score)\b",
    re.MULTILINE,
)


def test_no_test_module_imports_a_heavy_library_at_its_top() -> None:
    offenders = {
        str(path.relative_to(REPO)): match.group(1)
        for path in sorted((REPO / "tests").rglob("*.py"))
        for match in [_HEAVY_TOP_LEVEL_IMPORT.search(path.read_text(encoding="utf-8"))]
        if match is not None
    }
    assert offenders == {}, f"import these through tests.lazy_import.LazyModule: {offenders}"
    # The rule reads what it should: a top-level line is caught, an indented one is not.
    assert _HEAVY_TOP_LEVEL_IMPORT.search("import pytest\nimport evaluate\n")
    assert _HEAVY_TOP_LEVEL_IMPORT.search("from torch import nn\n")
    assert not _HEAVY_TOP_LEVEL_IMPORT.search("def f():\n    import evaluate\n")
    assert not _HEAVY_TOP_LEVEL_IMPORT.search("import evaluated_things\n")


# A file reading a heavy library through LazyModule, but in no group, imports it on whichever
# worker runs it: test_warning_locations.py and test_box_precision.py, left out, had both
# workers import evaluate, torch and transformers (suite28).
_LAZY_HEAVY = re.compile(r"LazyModule\(\s*\"(evaluate|gradio|nltk|rouge_score|sklearn)\b")


def test_every_file_reading_a_heavy_library_lazily_is_in_its_group() -> None:
    readers = {
        str(path.relative_to(REPO)): match.group(1)
        for path in sorted((REPO / "tests").rglob("test_*.py"))
        if path.name != Path(__file__).name  # this file: its examples of the rule
        for match in [_LAZY_HEAVY.search(path.read_text(encoding="utf-8"))]
        if match is not None
    }
    outside = {
        name: library
        for name, library in readers.items()
        if name not in HEAVY_LIBRARY_FILES | NLTK_FILES and name not in SLOW_ONLY_FILES
    }
    assert outside == {}, f"add these to tests/lazy_import.py's groups: {outside}"
    assert readers["tests/test_warning_locations.py"] == "evaluate"
    assert readers["tests/metrics/test_porter.py"] == "nltk"
    # The rule reads what it should: the library named first in the call is the one matched.
    assert _LAZY_HEAVY.search('x = LazyModule("sklearn.metrics")')
    assert not _LAZY_HEAVY.search('x = LazyModule("playwright.sync_api")')


def test_the_heavy_library_files_share_one_worker_under_xdist() -> None:
    from tests.conftest import pytest_xdist_make_scheduler

    class Config:
        def getvalue(self, name: str) -> str:
            return {"dist": "load", "tx": ["popen", "popen"]}[name]

    scheduler = pytest_xdist_make_scheduler(Config(), log=None)
    scopes = {scheduler._split_scope(f"{name}::test_x") for name in HEAVY_LIBRARY_FILES}
    assert len(scopes) == 1
    # The nltk files too: test_meteor_variants.py, among them, reads both evaluate and nltk.
    nltk = {scheduler._split_scope(f"{name}::test_x") for name in NLTK_FILES}
    assert nltk == scopes
    # Any other file goes whole to one worker: its module fixtures are built once per run.
    checks = {scheduler._split_scope(f"tests/test_checks.py::test_{x}") for x in ("a", "b[1]")}
    assert checks == {"tests/test_checks.py"}
    assert scheduler._split_scope("tests/test_records.py::test_a") not in checks | scopes


def test_the_files_parsing_the_package_share_one_worker_of_their_own() -> None:
    from tests.conftest import pytest_xdist_make_scheduler

    class Config:
        def getvalue(self, name: str) -> str:
            return {"dist": "load", "tx": ["popen", "popen"]}[name]

    assert all((REPO / name).is_file() for name in PACKAGE_SOURCE_FILES)  # renamed: no group
    scheduler = pytest_xdist_make_scheduler(Config(), log=None)
    scopes = {scheduler._split_scope(f"{name}::test_x") for name in PACKAGE_SOURCE_FILES}
    heavy = scheduler._split_scope(f"{min(HEAVY_LIBRARY_FILES)}::test_x")
    assert len(scopes) == 1 and scopes != {heavy}
