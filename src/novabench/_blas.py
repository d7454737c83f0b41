"""Hold numpy's BLAS to one thread while the bootstrap runs its many small matrix products.

OpenBLAS starts its own threads for each product and keeps them spinning between calls: in
a NOVA-size report that doubled the CPU spent, for no gain in time. Results are the same
with any number of BLAS threads, so whether threadpoolctl is installed changes no number:
every product the bootstrap takes is of integer-valued float64 arrays (draw counts times
per-item counts or 0/1 flags), far below 2**53, hence exact in any order of summation.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from typing import Any

__all__ = ["one_blas_thread"]


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
