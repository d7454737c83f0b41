"""BLAS held to one thread during the bootstrap, and given back after."""

from __future__ import annotations

import numpy as np
import pytest

from novabench._blas import one_blas_thread


def _blas_threads(threadpoolctl) -> set[int]:
    return {
        info["num_threads"]
        for info in threadpoolctl.threadpool_info()
        if info["user_api"] == "blas"
    }


def test_one_blas_thread_limits_blas_and_restores_it() -> None:
    threadpoolctl = pytest.importorskip("threadpoolctl")
    before = _blas_threads(threadpoolctl)
    with one_blas_thread():
        assert _blas_threads(threadpoolctl) <= {1}
    assert _blas_threads(threadpoolctl) == before


def test_the_bootstrap_runs_with_one_blas_thread(monkeypatch) -> None:
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from novabench.metrics.localization import prepare_localization
    from novabench.metrics.stats import bootstrap_confidence_intervals

    seen: list[set[int]] = []
    evaluation = prepare_localization(
        [{"boxes": [[0, 0, 4, 4]]}] * 6, [{"boxes": [[0, 0, 4, 4]]}] * 6
    )
    original = type(evaluation).aggregate_resamples

    def spy(self, indices: np.ndarray):
        seen.append(_blas_threads(threadpoolctl))
        return original(self, indices)

    monkeypatch.setattr(type(evaluation), "aggregate_resamples", spy)
    bootstrap_confidence_intervals(evaluation, n_resamples=20)
    assert seen and all(threads <= {1} for threads in seen)


_LOAD_NUMPY = """
import json, os, sys
from novabench import _blas
seen = {}
real_import = __import__
def spy(name, *args, **kwargs):  # the variable as numpy's import sees it
    if name == "numpy" and "numpy" not in sys.modules:
        seen["inside"] = os.environ.get("OPENBLAS_NUM_THREADS")
    return real_import(name, *args, **kwargs)
import builtins
builtins.__import__ = spy
_blas.import_numpy_with_one_blas_thread()
builtins.__import__ = real_import
import numpy
from threadpoolctl import threadpool_info
print(json.dumps({
    "inside": seen.get("inside"),
    "after": os.environ.get("OPENBLAS_NUM_THREADS"),
    "threads": sorted({i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}),
}))
"""


def _fresh_numpy(**variables: str) -> dict:
    """import_numpy_with_one_blas_thread in a fresh interpreter with ``variables``."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    environment = {
        key: value
        for key, value in os.environ.items()
        if key not in ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")
    }
    source = str(Path(__file__).resolve().parents[1] / "src")
    environment["PYTHONPATH"] = os.pathsep.join([source, os.environ.get("PYTHONPATH", "")])
    environment.update(variables)
    finished = subprocess.run(
        [sys.executable, "-c", _LOAD_NUMPY], capture_output=True, text=True, env=environment
    )
    assert finished.returncode == 0, finished.stderr[-2000:]
    return json.loads(finished.stdout.strip().splitlines()[-1])


def test_numpy_loaded_by_import_numpy_with_one_blas_thread_starts_one_blas_thread() -> None:
    pytest.importorskip("threadpoolctl")
    seen = _fresh_numpy()
    assert seen["inside"] == "1" and seen["after"] is None
    assert seen["threads"] in ([1], [])  # [] where numpy's BLAS is not one threadpoolctl sees


def test_import_numpy_with_one_blas_thread_leaves_a_thread_count_the_user_set() -> None:
    pytest.importorskip("threadpoolctl")
    # numpy is not imported by it then ("inside" unseen): it loads as the user's variable says
    seen = _fresh_numpy(OMP_NUM_THREADS="2")
    assert seen == {"inside": None, "after": None, "threads": [2]}
    seen = _fresh_numpy(OPENBLAS_NUM_THREADS="2")
    assert seen == {"inside": None, "after": "2", "threads": [2]}


def test_import_numpy_with_one_blas_thread_changes_nothing_once_numpy_is_loaded(
    monkeypatch,
) -> None:
    import os

    from novabench._blas import import_numpy_with_one_blas_thread

    for name in ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS"):
        monkeypatch.delenv(name, raising=False)
    import_numpy_with_one_blas_thread()  # numpy is imported by this module already
    assert "OPENBLAS_NUM_THREADS" not in os.environ


def test_the_scoring_commands_load_numpy_with_one_blas_thread() -> None:
    # nova evaluate and nova compare load numpy first thing, so that no module imported
    # on the way loads it with OpenBLAS's default threads.
    import inspect

    from novabench.cli import compare, evaluate

    for command in (evaluate.run, compare.run):
        source = inspect.getsource(command)
        body = source.split('"""', 2)[2]
        first = body.index("import_numpy_with_one_blas_thread()")
        assert first < body.index("check_output_paths"), command.__module__
