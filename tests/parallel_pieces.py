"""Module-level pieces of work for ``tests/test_parallel.py`` (helpers import them by name)."""

from __future__ import annotations

import os
import time
import warnings

import numpy as np


def where() -> int:
    """The process that ran the piece."""
    return os.getpid()


def seeded_sum(seed: int, size: int) -> float:
    """A float computed from a seed: equal wherever it runs."""
    return float(np.random.default_rng(seed).standard_normal(size).sum())


def fail_with(message: str) -> None:
    raise ValueError(message)


def warn_and_return(message: str, value: int) -> int:
    warnings.warn(message, UserWarning, stacklevel=1)
    return value


def print_and_return(value: int) -> int:
    print("a stray print that must not reach the pool's channel")
    return value


def sleep_then(seconds: float, value: int) -> int:
    time.sleep(seconds)
    return value


def echo(data: bytes) -> bytes:
    """Give back what was sent (large pieces and replies fill the pipes both ways)."""
    return data


def _refuse_to_load() -> None:
    raise RuntimeError("this value cannot be read back in the parent")


class Unloadable:
    """Pickles in a helper, but its pickle fails to load (the reply cannot be read)."""

    def __reduce__(self) -> tuple[object, tuple[()]]:
        return (_refuse_to_load, ())


def unloadable() -> Unloadable:
    return Unloadable()
