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
