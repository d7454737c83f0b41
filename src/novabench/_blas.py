"""Hold numpy's BLAS to one thread while the bootstrap runs its many small matrix products.

OpenBLAS starts its own threads for each product and keeps them spinning between calls: in
a NOVA-size report that doubled the CPU spent, for no gain in time. Results are the same
with any number of BLAS threads, so whether threadpoolctl is installed changes no number:
every product the bootstrap takes is of integer-valued float64 arrays (draw counts times
per-item counts or 0/1 flags), far below 2**53, hence exact in any order of summation.

OpenBLAS also starts its worker threads when numpy is imported, and they spin about a tenth
of a CPU second before they sleep, whether a product follows or not (an eighth of
``nova evaluate``'s CPU at NOVA size). :func:`blas_threads_unstarted` keeps that from the
``nova`` command: numpy loaded while it holds starts OpenBLAS with one thread, unless the
environment already says how many. Every product of the package is exact in any order of
summation (above) or of a handful of numbers, so this changes no number either.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from collections.abc import Iterator
from typing import Any

__all__ = ["blas_threads_unstarted", "one_blas_thread"]

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


@contextlib.contextmanager
def blas_threads_unstarted() -> Iterator[None]:
    """Have numpy, if it is first imported inside the ``with`` block, load OpenBLAS with one
    thread (``OPENBLAS_NUM_THREADS=1`` while the block runs, removed after it).

    Nothing is changed when numpy is loaded already or when the environment sets
    ``OPENBLAS_NUM_THREADS``, ``GOTO_NUM_THREADS`` or ``OMP_NUM_THREADS`` (the user's
    choice stands). The ``nova`` command runs in it: no product of the package gains from
    BLAS threads, and the ones OpenBLAS starts at load spin a tenth of a CPU second.

    Example:
        >>> import os
        >>> with blas_threads_unstarted():
        ...     pass
        >>> "OPENBLAS_NUM_THREADS" in os.environ
        False
    """
    if "numpy" in sys.modules or any(name in os.environ for name in _THREAD_VARIABLES):
        yield
        return
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    try:
        yield
    finally:
        if os.environ.get("OPENBLAS_NUM_THREADS") == "1":
            del os.environ["OPENBLAS_NUM_THREADS"]
