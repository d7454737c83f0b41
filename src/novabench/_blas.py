"""Hold numpy's BLAS to one thread while the bootstrap runs its many small matrix products.

OpenBLAS starts its own threads for each product and keeps them spinning between calls: in
a NOVA-size report that doubled the CPU spent, for no gain in time. Results are the same
with any number of BLAS threads, so whether threadpoolctl is installed changes no number:
every product the bootstrap takes is of integer-valued float64 arrays (draw counts times
per-item counts or 0/1 flags), far below 2**53, hence exact in any order of summation.

OpenBLAS also starts its worker threads when numpy is imported, and they spin about a tenth
of a CPU second before they sleep, whether a product follows or not (an eighth of
``nova evaluate``'s CPU at NOVA size). :func:`import_numpy_with_one_blas_thread` keeps that
from the scoring commands: it loads numpy with OpenBLAS on one thread, unless the
environment already says how many. Every product of the package is exact in any order of
summation (above) or of a handful of numbers, so this changes no number either.

The Python API (``evaluate_model``, the ``evaluate`` module) does not do it: OpenBLAS reads
its thread count once, when numpy loads it, so a caller who imported novabench before numpy
would keep one BLAS thread for every product of their own session; raising the count
afterwards (threadpoolctl) starts the workers again, spin included (0.08 CPU s measured,
trust24). The saving is small besides: importing numpy took 0.098 CPU s, 0.061 s with
``OPENBLAS_NUM_THREADS=1`` (5 runs each, 2 cores).
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from collections.abc import Iterator
from typing import Any

__all__ = ["import_numpy_with_one_blas_thread", "one_blas_thread"]

# What OpenBLAS reads for its number of threads when it is loaded (the first one set wins).
_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")


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

    Without threadpoolctl installed this does nothing.

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


def import_numpy_with_one_blas_thread() -> None:
    """Import numpy with its OpenBLAS started on one thread (``OPENBLAS_NUM_THREADS=1`` for
    the import only), unless numpy is loaded already or the environment says how many
    threads (``OPENBLAS_NUM_THREADS``, ``GOTO_NUM_THREADS``, ``OMP_NUM_THREADS``: the
    user's choice stands).

    The scoring commands (``nova evaluate``, ``nova compare``) call it first: no product
    of the package gains from BLAS threads, and the worker OpenBLAS starts at load spins
    about 0.12 CPU s before it sleeps. Libraries loaded later (torch for BERTScore) see the
    environment as it was.

    Example:
        >>> import os
        >>> import_numpy_with_one_blas_thread()
        >>> "numpy" in sys.modules, "OPENBLAS_NUM_THREADS" in os.environ
        (True, False)
    """
    if "numpy" in sys.modules or any(name in os.environ for name in _THREAD_VARIABLES):
        return
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    try:
        import numpy  # noqa: F401  (OpenBLAS reads its thread count when numpy loads it)
    finally:
        if os.environ.get("OPENBLAS_NUM_THREADS") == "1":
            del os.environ["OPENBLAS_NUM_THREADS"]
