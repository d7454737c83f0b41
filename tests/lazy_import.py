"""Heavy libraries imported by the first test that uses them, not when pytest collects.

Every xdist worker imports every test module, so a module-level ``import evaluate`` (torch and
transformers with it, seconds) costs each worker even when all tests using it run on the
other. The files that use evaluate or gradio read them through ``LazyModule``; they and the
files whose tests import torch are ``HEAVY_LIBRARY_FILES``, and ``tests/conftest.py`` sends all
their tests to one worker: one import per run.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest

#: Test files whose tests import evaluate or gradio (paths from the repository root).
EVALUATE_OR_GRADIO_FILES = frozenset(
    {
        "tests/data/test_box_precision.py",
        "tests/metrics/test_diagnosis_label_parity.py",
        "tests/metrics/test_evaluate_face.py",
        "tests/metrics/test_judge_face.py",
        "tests/metrics/test_meteor_variants.py",
        "tests/test_metric_module.py",
        "tests/test_readme.py",
        "tests/test_spaces.py",
        # Its evaluate-face test imported evaluate, torch and transformers, and its caption
        # note test nltk and scikit-learn, on the other worker: about 3 CPU s a run (suite28).
        "tests/test_warning_locations.py",
    }
)

#: Test files where a test (a BERTScore model, a transformers pipeline, datasets' streaming)
#: imports torch and transformers, 3-4 CPU s a process; evaluate imports them too. Found by
#: recording which tests bring them into ``sys.modules`` (test_bertscore_fingerprint.py's tiny
#: BERTs were missed: the other worker imported torch and transformers for them alone).
TORCH_FILES = frozenset(
    {
        "tests/data/test_export.py",
        "tests/data/test_hf.py",
        "tests/metrics/test_bertscore.py",
        "tests/metrics/test_bertscore_fingerprint.py",
        "tests/report/test_bertscore_keys.py",
        "tests/run/test_report.py",
        "tests/run/test_runner.py",
        "tests/test_cli_messages.py",
        "tests/test_evaluator_checks_first.py",
        "tests/test_progress.py",
    }
)

#: Sent to one worker together: each library is imported once per run.
HEAVY_LIBRARY_FILES = EVALUATE_OR_GRADIO_FILES | TORCH_FILES

#: Test files whose tests read nltk, rouge_score or scikit-learn (the reference libraries of
#: the caption metrics, 1.5 CPU s to import; test_meteor_variants.py is with evaluate above).
NLTK_FILES = frozenset(
    {
        "tests/metrics/test_captioning.py",
        "tests/metrics/test_captioning_mutants.py",
        "tests/metrics/test_porter.py",
        "tests/metrics/test_text_parity.py",
    }
)

#: Test files that parse the whole package's source (tests/source_trees.py): parsed once.
PACKAGE_SOURCE_FILES = frozenset(
    {"tests/test_files.py", "tests/test_layers.py", "tests/test_registry.py"}
)

#: Modules whose docstring examples load evaluate (and torch with it) when they run.
EVALUATE_DOCTEST_FILES = frozenset({"scripts/bench_metric.py"})

#: Modules whose docstring examples load nltk, rouge_score and scikit-learn when they run (found
#: as the test files were: the first example that brings each into ``sys.modules``).
NLTK_DOCTEST_FILES = frozenset({"scripts/bench_captioning.py"})

#: Each group's files go to one worker under xdist (tests/conftest.py).
#: nltk and scikit-learn go with the heavy libraries: test_meteor_variants.py (there for
#: evaluate) imports them too, so apart both workers imported them (1.5 CPU s each).
WORKER_GROUPS = {
    "heavy libraries": HEAVY_LIBRARY_FILES
    | EVALUATE_DOCTEST_FILES
    | NLTK_FILES
    | NLTK_DOCTEST_FILES,
    "package source": PACKAGE_SOURCE_FILES,
}


class LazyModule:
    """Stands for a module until a test reads one of its public names.

    A test reading it is skipped when the module is not installed, as ``pytest.importorskip``
    at module level skips the file. Private and dunder names are not looked up: pytest's
    collection probes every module global for them, and that must not import anything.
    """

    def __init__(self, name: str, reason: str | None = None) -> None:
        self._name = name
        self._reason = reason
        self._module: ModuleType | None = None

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("_"):
            raise AttributeError(attribute)
        if self._module is None:
            self._module = pytest.importorskip(self._name, reason=self._reason)
        return getattr(self._module, attribute)
