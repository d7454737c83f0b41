"""The one progress bar of the toolkit: tqdm on stderr, only where someone is watching.

Every step that can take more than a few seconds (reading and fingerprinting a release,
parsing answers, scoring, bootstrap resamples, judge calls) wraps its loop in
:func:`progress_bar`. Whether bars show is decided here, once:

- never when stderr is neither a terminal nor a Jupyter kernel's stream (CI logs, pipes,
  tests); in a notebook the bar is drawn in the cell's output;
- never inside ``with progress_enabled(False):`` (what ``--quiet`` / ``--no-progress`` set
  for a whole ``nova`` command, in ``novabench.cli.main``);
- never for a function called with ``progress=False``;
- otherwise shown.

The setting is a context variable, so a command switches every bar below it without
threading a ``progress=`` argument through each function.

Libraries draw bars of their own (transformers' "Loading weights" when BERTScore loads its
model, huggingface_hub's downloads, datasets'), some even into log files: inside
:func:`third_party_bars_hidden` (what ``nova`` wraps every command in) they are off, and
each library's setting is as it was once the block ends.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

__all__ = ["progress_bar", "progress_enabled", "progress_shown", "third_party_bars_hidden"]

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
    if _in_notebook(sys.stderr):
        return True
    isatty = getattr(sys.stderr, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


def _in_notebook(stream: Any) -> bool:
    """Whether ``stream`` is a Jupyter kernel's output stream (a notebook cell shows it)."""
    return type(stream).__module__.startswith("ipykernel")


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
    if not (enabled and progress_shown()):
        return _HiddenBar(iterable, total)  # what a disabled tqdm does, without importing it
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


class _HiddenBar:
    """A bar that is not shown: the iterable passed through, every bar method a no-op.

    Behaves as ``tqdm(..., disable=True)`` does for the methods the toolkit calls (iterate,
    ``len``, ``update``, ``set_postfix_str``, ``close``, ``with``), so a command whose bars
    are hidden (``--quiet``, stderr not a terminal) never imports tqdm.
    """

    def __init__(self, iterable: Iterable[Any] | None, total: int | None) -> None:
        self.iterable = iterable
        if total is None and iterable is not None:
            try:
                total = len(iterable)  # type: ignore[arg-type]
            except (TypeError, AttributeError):
                total = None
        if total == float("inf"):
            total = None  # unknown, as tqdm has it
        self.total = total
        self.n = 0
        self.disable = True

    def __iter__(self) -> Iterator[Any]:
        return iter(self.iterable)  # type: ignore[arg-type]  # None raises as tqdm's does

    def __len__(self) -> int:  # tqdm's rule
        iterable: Any = self.iterable
        if iterable is None:
            return self.total  # type: ignore[return-value]
        if hasattr(iterable, "shape"):
            return int(iterable.shape[0])
        if hasattr(iterable, "__len__"):
            return len(iterable)
        if hasattr(iterable, "__length_hint__"):
            return int(iterable.__length_hint__())
        return self.total  # type: ignore[return-value]

    def __bool__(self) -> bool:  # tqdm's rule
        if self.total is not None:
            return self.total > 0
        if self.iterable is None:
            raise TypeError("bool() undefined when iterable == total == None")
        return bool(self.iterable)

    def __enter__(self) -> _HiddenBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def update(self, n: float = 1) -> None:
        """Nothing to count: hidden."""

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
        """Nothing to show: hidden."""

    def set_postfix(self, ordered_dict: Any = None, refresh: bool = True, **kwargs: Any) -> None:
        """Nothing to show: hidden."""

    def set_description(self, desc: str | None = None, refresh: bool = True) -> None:
        """Nothing to show: hidden."""

    def refresh(self) -> None:
        """Nothing to draw: hidden."""

    def close(self) -> None:
        """Nothing to clear: hidden."""


# Each library's own switch of its bars: the module holding it, "are they on?", on, off.
# huggingface_hub's lives in its ``utils.tqdm`` module, loaded on first use (it imports
# tqdm.auto and asyncio: a tenth of a second that a command without the Hub need not pay).
_HUB = "huggingface_hub.utils.tqdm"
_TRANSFORMERS = "transformers.utils.logging"
_DATASETS = "datasets.utils"


def _bars_on(module_name: str) -> bool:
    module = sys.modules[module_name]
    if module_name == _TRANSFORMERS:
        return bool(module.is_progress_bar_enabled())
    return not module.are_progress_bars_disabled()


def _set_bars(module_name: str, on: bool) -> None:
    import warnings

    module = sys.modules[module_name]
    names = ("enable_progress_bars", "disable_progress_bars")
    if module_name == _TRANSFORMERS:
        names = ("enable_progress_bar", "disable_progress_bar")
    with warnings.catch_warnings():  # a user's *_DISABLE_PROGRESS_BARS variable wins: fine
        warnings.simplefilter("ignore")
        getattr(module, names[0] if on else names[1])()


class _AfterImport:
    """A ``sys.meta_path`` finder that calls back once module ``name`` has loaded.

    It finds nothing itself: it asks the finders after it for the module's spec and wraps
    that spec's loader, so the module loads exactly as it would have, then each callback
    in ``callbacks`` runs (in the order added) before the importer sees the module. One
    watcher per module name, shared by nested blocks; in ``sys.meta_path`` only while it
    has callbacks.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self.callbacks: list[Callable[[str], None]] = []

    def add(self, callback: Callable[[str], None]) -> None:
        """Call ``callback(name)`` when the module loads (watching from now on)."""
        self.callbacks.append(callback)
        if self not in sys.meta_path:
            sys.meta_path.insert(0, self)

    def remove(self, callback: Callable[[str], None]) -> None:
        """Stop calling ``callback``; the last one removed stops the watching."""
        self.callbacks.remove(callback)
        if not self.callbacks and self in sys.meta_path:
            sys.meta_path.remove(self)

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != self.name or not self.callbacks:
            return None
        for finder in sys.meta_path:
            find_spec = getattr(finder, "find_spec", None)
            if finder is self or find_spec is None:
                continue
            spec = find_spec(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        exec_module = getattr(loader, "exec_module", None)
        if exec_module is None:
            return spec
        callbacks = list(self.callbacks)

        def exec_then_call(module: Any) -> None:
            try:
                exec_module(module)
            finally:
                del loader.exec_module  # the loader is as it was: its class's method again
            for callback in callbacks:
                callback(fullname)

        try:
            loader.exec_module = exec_then_call
        except AttributeError:  # a loader that takes no attribute: loaded as usual
            pass
        return spec


_HUB_WATCHER = _AfterImport(_HUB)


@contextmanager
def third_party_bars_hidden() -> Iterator[None]:
    """Hide the progress bars of huggingface_hub, transformers and datasets inside the block.

    Only this block: no environment variable is set, and each library's own setting is
    restored at the end. Nothing is imported here: huggingface_hub's setting is switched
    at once when its progress-bar module is loaded, otherwise the moment something inside
    the block loads it, before anything reads it; so transformers imported in the block
    (which takes huggingface_hub's setting when imported) starts with its bars off, and
    gets after the block the setting huggingface_hub had before it. datasets is switched
    when it is already imported. Our own bars (:func:`progress_bar`) are not affected.

    Example:
        >>> from huggingface_hub.utils import are_progress_bars_disabled
        >>> before = are_progress_bars_disabled()
        >>> with third_party_bars_hidden():
        ...     are_progress_bars_disabled()
        True
        >>> are_progress_bars_disabled() == before
        True
    """
    modules = (_HUB, _TRANSFORMERS, _DATASETS)
    before = {name: _bars_on(name) for name in modules if name in sys.modules}
    for name in before:
        _set_bars(name, False)

    def hide_hub_bars(name: str) -> None:
        before[name] = _bars_on(name)  # what it has on its own: restored at the end
        _set_bars(name, False)

    watching = _HUB not in sys.modules
    if watching:
        _HUB_WATCHER.add(hide_hub_bars)
    try:
        yield
    finally:
        if watching:
            _HUB_WATCHER.remove(hide_hub_bars)
        # transformers imported in the block gets what its import would have read:
        # huggingface_hub's setting before the block (it is imported with transformers).
        hub_before = before.get(_HUB, True)
        for name in modules:
            if name in sys.modules and (name in before or name == _TRANSFORMERS):
                _set_bars(name, before.get(name, hub_before))
        if _TRANSFORMERS in sys.modules and _HUB in sys.modules:
            _set_bars(_HUB, hub_before)  # transformers' switch also sets huggingface_hub's
