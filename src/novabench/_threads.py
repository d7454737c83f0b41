"""One shared pool of worker threads for numpy-heavy loops whose steps are independent.

numpy releases the GIL inside its array loops, so chunks of a bootstrap run side by side
on several cores. Results never depend on the number of threads: each step writes its own
slice of the output. ``NOVABENCH_THREADS=1`` runs everything in the calling thread.

The bootstrap's matrix products are small and many; OpenBLAS would start its own threads
for each and keep them spinning between calls, taking the cores from ours.
:func:`one_blas_thread` holds BLAS to one thread meanwhile (through threadpoolctl).
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

__all__ = ["one_blas_thread", "parallel_map", "worker_count"]

_Item = TypeVar("_Item")
_Result = TypeVar("_Result")
_MAX_WORKERS = 4  # beyond this, memory bandwidth, not cores, limits these loops
_pool: ThreadPoolExecutor | None = None
_pool_workers = 0
_pool_lock = threading.Lock()
_in_worker = threading.local()


def worker_count() -> int:
    """Threads :func:`parallel_map` uses: ``$NOVABENCH_THREADS``, else the usable cores (max 4).

    Example:
        >>> 1 <= worker_count()
        True
    """
    configured = os.environ.get("NOVABENCH_THREADS", "").strip()
    if configured:
        try:
            return max(1, int(configured))
        except ValueError:
            return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(_MAX_WORKERS, cores or 1))


def _shared_pool(workers: int) -> ThreadPoolExecutor:
    global _pool, _pool_workers
    with _pool_lock:
        if _pool is None or _pool_workers != workers:
            if _pool is not None:
                _pool.shutdown(wait=False)
            _pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="novabench")
            _pool_workers = workers
        return _pool


def _run_in_worker(function: Callable[[_Item], _Result], item: _Item) -> _Result:
    _in_worker.active = True
    try:
        return function(item)
    finally:
        _in_worker.active = False


def parallel_map(function: Callable[[_Item], _Result], items: Iterable[_Item]) -> list[_Result]:
    """``[function(item) for item in items]``, the calls spread over the shared threads.

    Runs in the calling thread when there is one item, one worker, or when called from a
    worker already (no nested pools, no deadlock). The first exception is raised after
    every call has finished, so no call is left running.

    Args:
        function: called once per item; calls must not depend on one another.
        items: the inputs, in order.

    Returns:
        The results in the order of ``items``.

    Example:
        >>> parallel_map(lambda n: n * n, range(5))
        [0, 1, 4, 9, 16]
    """
    listed = list(items)
    workers = worker_count()
    if len(listed) <= 1 or workers == 1 or getattr(_in_worker, "active", False):
        return [function(item) for item in listed]
    pool = _shared_pool(workers)
    futures = [pool.submit(_run_in_worker, function, item) for item in listed]
    errors = [future.exception() for future in futures]  # waits for every call
    for error in errors:
        if error is not None:
            raise error
    return [future.result() for future in futures]


@functools.lru_cache(maxsize=1)
def _blas_controller() -> Any:
    """threadpoolctl's view of the loaded BLAS libraries (built once), None without it."""
    try:
        from threadpoolctl import ThreadpoolController  # type: ignore[import-untyped]
    except ImportError:
        return None
    return ThreadpoolController()


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """Hold the BLAS libraries numpy uses to one thread for the ``with`` block.

    Results are the same with any number of BLAS threads; only the CPU spent waiting
    changes. Without threadpoolctl installed this does nothing.

    Example:
        >>> import numpy as np
        >>> with one_blas_thread():
        ...     (np.ones((3, 4)) @ np.ones(4)).tolist()
        [4.0, 4.0, 4.0]
    """
    controller = _blas_controller()
    if controller is None:
        yield
        return
    with controller.limit(limits=1, user_api="blas"):
        yield
