"""The shared worker threads: same results as one thread, errors surface, no nesting."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from novabench import _threads
from novabench._threads import parallel_map, worker_count
from tests.metrics.test_bootstrap_vectorised import random_localization


def test_results_keep_the_order_of_the_items(monkeypatch) -> None:
    monkeypatch.setenv("NOVABENCH_THREADS", "3")
    assert parallel_map(lambda n: n * 10, range(40)) == [n * 10 for n in range(40)]


def test_calls_run_on_the_worker_threads(monkeypatch) -> None:
    monkeypatch.setenv("NOVABENCH_THREADS", "2")
    names = parallel_map(lambda _: threading.current_thread().name, range(8))
    assert all(name.startswith("novabench") for name in names)


def test_one_thread_runs_inline(monkeypatch) -> None:
    monkeypatch.setenv("NOVABENCH_THREADS", "1")
    names = parallel_map(lambda _: threading.current_thread().name, range(4))
    assert set(names) == {threading.current_thread().name}


def test_the_first_error_is_raised_after_every_call_finished(monkeypatch) -> None:
    monkeypatch.setenv("NOVABENCH_THREADS", "2")
    finished = []

    def step(n: int) -> int:
        if n == 3:
            raise ValueError("step 3 failed")
        finished.append(n)
        return n

    with pytest.raises(ValueError, match="step 3 failed"):
        parallel_map(step, range(10))
    assert sorted(finished) == [0, 1, 2, 4, 5, 6, 7, 8, 9]


def test_nested_calls_run_inline_without_deadlock(monkeypatch) -> None:
    monkeypatch.setenv("NOVABENCH_THREADS", "2")
    inner = parallel_map(lambda n: sum(parallel_map(lambda m: m, range(n))), range(6))
    assert inner == [0, 0, 1, 3, 6, 10]


@pytest.mark.parametrize("value, expected", [("1", 1), ("3", 3), ("0", 1), ("many", 1)])
def test_worker_count_reads_the_environment(monkeypatch, value, expected) -> None:
    monkeypatch.setenv("NOVABENCH_THREADS", value)
    assert worker_count() == expected


def test_threaded_ap_resampling_equals_one_thread(monkeypatch) -> None:
    from novabench.metrics import localization

    monkeypatch.setattr(localization, "_CHUNK_ELEMENTS", 40)  # many small chunks
    rng = np.random.default_rng(8)
    evaluation = random_localization(rng, 60)
    weights = evaluation._resample_weights(np.sort(rng.integers(0, 60, (200, 60)), axis=1))
    monkeypatch.setenv("NOVABENCH_THREADS", "1")
    alone = evaluation._resampled_precision(weights)
    monkeypatch.setenv("NOVABENCH_THREADS", "4")
    threaded = evaluation._resampled_precision(weights)
    assert np.array_equal(alone, threaded, equal_nan=True)
    assert _threads._pool_workers == 4


def test_one_blas_thread_limits_blas_and_restores_it() -> None:
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from novabench._threads import one_blas_thread

    def blas_threads() -> set[int]:
        return {info["num_threads"] for info in threadpoolctl.threadpool_info()
                if info["user_api"] == "blas"}  # fmt: skip

    before = blas_threads()
    with one_blas_thread():
        assert blas_threads() <= {1}
    assert blas_threads() == before
