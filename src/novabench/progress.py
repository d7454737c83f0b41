"""The one progress bar of the toolkit: tqdm on stderr, only where someone is watching.

Every step that can take more than a few seconds (reading and fingerprinting a release,
parsing answers, scoring, bootstrap resamples, judge calls) wraps its loop in
:func:`progress_bar`. Whether bars show is decided here, once:

- never when stderr is not a terminal (CI logs, pipes, tests, notebooks' captured stderr);
- never inside ``with progress_enabled(False):`` (what ``--quiet`` / ``--no-progress`` set
  for a whole ``nova`` command, in ``novabench.cli.main``);
- never for a function called with ``progress=False``;
- otherwise shown.

The setting is a context variable, so a command switches every bar below it without
threading a ``progress=`` argument through each function.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

__all__ = ["progress_bar", "progress_enabled", "progress_shown"]

T = TypeVar("T")

_ENABLED: ContextVar[bool] = ContextVar("novabench_progress_enabled", default=True)


@contextmanager
def progress_enabled(enabled: bool) -> Iterator[None]:
    """Show (True) or hide (False) every progress bar opened inside the block.

    Example:
        >>> with progress_enabled(False):
        ...     progress_shown()
        False
    """
    token = _ENABLED.set(bool(enabled))
    try:
        yield
    finally:
        _ENABLED.reset(token)


def progress_shown() -> bool:
    """Whether a bar opened now would show: enabled and stderr is a terminal.

    Example:
        >>> import io, contextlib
        >>> with contextlib.redirect_stderr(io.StringIO()):
        ...     progress_shown()
        False
    """
    if not _ENABLED.get():
        return False
    isatty = getattr(sys.stderr, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


def progress_bar(
    iterable: Iterable[T] | None = None,
    *,
    desc: str,
    total: int | None = None,
    unit: str = "it",
    enabled: bool = True,
) -> Any:
    """A tqdm bar on stderr over ``iterable`` (or updated by hand), hidden when not shown.

    Bars disappear when done (``leave=False``): the command's own output stays readable.

    Args:
        iterable: what to iterate; None for a bar updated with ``.update(n)``.
        desc: what is being done ("reading images", "bootstrap localization", ...).
        total: number of steps when ``iterable`` has no length.
        unit: what one step is ("image", "resample", "pair", ...).
        enabled: False hides this bar whatever the setting (a function's ``progress=False``).

    Example:
        >>> sum(progress_bar(range(4), desc="counting", unit="n"))
        6
    """
    from tqdm import tqdm  # plain: in notebooks stderr is no terminal, so no widget needed

    return tqdm(
        iterable,
        desc=desc,
        total=total,
        unit=unit,
        file=sys.stderr,
        disable=not (enabled and progress_shown()),
        leave=False,
        dynamic_ncols=True,
    )
