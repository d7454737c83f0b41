"""Errors raised by the toolkit.

Every error about bad input says where the problem is: the file or source, the
record (row, line number, example index, case or filename) and the field, so a
researcher can fix the input without a debugger.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import FrameType
from typing import Any, ClassVar, NamedTuple, ParamSpec, TypeVar, cast

__all__ = [
    "OUT_DIR",
    "OVERWRITE",
    "TASKS",
    "NovaError",
    "NovaInputError",
    "NovaOutputError",
    "FileNoteWarning",
    "Option",
    "for_caller",
    "note",
    "pass_on",
    "warn_at_caller",
]

_P = ParamSpec("_P")
_T = TypeVar("_T")


@dataclass(frozen=True)
class Option:
    """A setting as each face names it: the Python argument and the ``nova`` option.

    An error about a setting holds the :class:`Option`, never one face's spelling of it:
    ``str(error)`` names the Python argument (a Python call raised it) and the command line
    renders the same error with the flag (:meth:`NovaError.in_words`, called by
    ``novabench.cli.cli_message``).

    Attributes:
        argument: the Python argument, e.g. ``"overwrite"``; a field is named by it.
        flag: the command-line option, e.g. ``"--overwrite"``.
        value: the value a message asks for (``"True"`` in ``overwrite=True``), if any.

    Example:
        >>> tasks = Option("tasks", "--task")
        >>> tasks.in_python(), OVERWRITE.in_python(), OVERWRITE.flag
        ('tasks=', 'overwrite=True', '--overwrite')
    """

    argument: str
    flag: str
    value: str | None = None

    def in_python(self) -> str:
        """How a message names the setting to a Python caller: ``argument=value``."""
        return f"{self.argument}={self.value or ''}"


#: Replacing an earlier output: ``overwrite=True`` in Python; the command line names the
#: running command's own option (``--overwrite``, or ``--force`` where a command has that).
OVERWRITE = Option("overwrite", "--overwrite", "True")

#: The tasks to run or score: ``tasks=`` in Python, ``--task`` (repeated) on the command line.
TASKS = Option("tasks", "--task")

#: How raw box answers are read: ``box_convention=`` in Python, ``--box-convention`` on the
#: command line; a Space without such a control names the run manifest's field instead.
BOX_CONVENTION = Option("box_convention", "--box-convention")

#: The bootstrap's resamples: ``n_resamples=`` in every Python face (``evaluate_predictions``,
#: ``evaluate``, ``compute_task``, the evaluate module's ``compute``), ``--bootstrap`` on the
#: command line (``nova evaluate``, ``nova compare``, ``nova leaderboard``).
N_RESAMPLES = Option("n_resamples", "--bootstrap")

#: A folder a command writes whole (a release, an export): ``out_dir`` of the Python
#: functions, ``OUT`` of ``nova sample/ingest/export``.
OUT_DIR = Option("out_dir", "OUT")

#: A message: plain text, or text and :class:`Option` parts that each face words its way.
Words = str | Sequence[str | Option]


def _worded(words: Words, name_of: Callable[[Option], str]) -> str:
    """The message with every option named by ``name_of``."""
    if isinstance(words, str):
        return words
    return "".join(part if isinstance(part, str) else name_of(part) for part in words)


class NovaError(Exception):
    """Base class of every error raised on purpose by ``novabench``.

    An error whose message names the item it is about (an input record, a judged case) says
    which attribute holds that name in ``item_attribute`` and builds its message from its
    attributes in ``_render``, so a caller that knows the item better can rename it with
    :meth:`rename_item`. Other errors name no item (``item_attribute`` is None).
    """

    #: The attribute that names the item the message is about; None: the error names none.
    item_attribute: ClassVar[str | None] = None

    def in_words(self, flag_of: Callable[[Option], str]) -> str:
        """The message with every setting it names (an :class:`Option`) named by ``flag_of``.

        ``str(error)`` names each by its Python argument; the command line passes a function
        giving each option's flag. An error that names no setting is the same either way.

        Example:
            >>> error = NovaInputError(("pass ", OVERWRITE, " to replace it"), source="r.json")
            >>> str(error), error.in_words(lambda option: option.flag)
            ('r.json: pass overwrite=True to replace it', 'r.json: pass --overwrite to replace it')
        """
        return str(self)

    def _render(self) -> str:
        """The message, from the error's attributes (only errors that name an item need it)."""
        raise NotImplementedError(f"{type(self).__name__} names no item")

    def rename_item(self, name: str) -> None:
        """Name the item this error is about ``name``, in its attribute and its message.

        Args:
            name: the item's new name, e.g. a filename where the metrics said ``example 3``.

        Raises:
            TypeError: the error names no item (its ``item_attribute`` is None).

        Example:
            >>> error = NovaInputError("empty caption", record="example 0", field="references")
            >>> error.rename_item("case0001_001.png")
            >>> error.record, str(error)
            ('case0001_001.png', "case0001_001.png, field 'references': empty caption")
        """
        if self.item_attribute is None:
            raise TypeError(f"{type(self).__name__} names no item to rename")
        setattr(self, self.item_attribute, name)
        self.args = (self._render(),)


class NovaInputError(NovaError, ValueError):
    """Bad input: a malformed release, prediction, reference or argument.

    It is a ``ValueError`` so callers that catch ``ValueError`` keep working.

    Args:
        message: what is wrong, in one sentence: text, or text and :class:`Option` parts
            (a setting to name: by its Python argument here, by its flag on the command line).
        source: the file, URL or argument the input came from.
        record: which record: ``"row 12"``, ``"line 3"``, ``"example 4"``, a filename.
        field: which field of that record, e.g. ``"bboxes[1].width"``; or the
            :class:`Option` at fault.

    Example:
        >>> err = NovaInputError("width must be positive, got -3.0",
        ...                      source="data/nova-v1.parquet", record="row 7 (case0002_001.png)",
        ...                      field="bboxes[0].width")
        >>> str(err)
        "data/nova-v1.parquet, row 7 (case0002_001.png), field 'bboxes[0].width': width must be positive, got -3.0"
    """

    item_attribute = "record"

    def __init__(
        self,
        message: Words,
        *,
        source: str | None = None,
        record: str | None = None,
        field: str | Option | None = None,
    ) -> None:
        self.words = message
        self.field_option = field if isinstance(field, Option) else None
        self.message = _worded(message, Option.in_python)
        self.source = source
        self.record = record
        self.field = field.argument if isinstance(field, Option) else field
        super().__init__(self._render())

    def _render(self, flag_of: Callable[[Option], str] | None = None) -> str:
        message, field = self.message, self.field
        if flag_of is not None:
            message = _worded(self.words, flag_of)
            field = flag_of(self.field_option) if self.field_option else field
        where = [part for part in (self.source, self.record) if part]
        if field:
            where.append(f"field '{field}'")
        return f"{', '.join(where)}: {message}" if where else message

    def in_words(self, flag_of: Callable[[Option], str]) -> str:
        """The error with each :class:`Option` it names said by ``flag_of`` (see NovaError)."""
        return self._render(flag_of)


class NovaOutputError(NovaError, OSError):
    """An output that could not be written: the disk is full, read-only, or not ours to write.

    It is an ``OSError`` (with the original ``errno``) so callers that catch ``OSError``
    keep working; its message names the output, not a temporary sibling or an input.

    Args:
        path: the output the user asked for (a file or a folder).
        reason: why it could not be written, e.g. ``"no space left on the device"``.
        errno: the operating system's error number, when there is one.

    Example:
        >>> str(NovaOutputError("runs/a.jsonl", "no space left on the device"))
        'cannot write runs/a.jsonl: no space left on the device'
    """

    def __init__(self, path: str, reason: Words, *, errno: int | None = None) -> None:
        self.path = path
        self.words = reason
        self.reason = _worded(reason, Option.in_python)
        super().__init__(f"cannot write {path}: {self.reason}")
        self.errno = errno  # OSError's attribute, set after init: the message stays ours

    def in_words(self, flag_of: Callable[[Option], str]) -> str:
        """The error with each :class:`Option` it names said by ``flag_of`` (see NovaError)."""
        return f"cannot write {self.path}: {_worded(self.words, flag_of)}"


class FileNoteWarning(UserWarning):
    """What a library call did, or left, on its own beside the user's files (a killed
    writer's leftover removed or named, a cut-off last line set aside, a resumed run's
    file): told as a warning, since a library does not print. ``nova`` prints each as
    its own ``nova: MESSAGE`` line; a Python caller sees it as any warning, or silences it
    with ``warnings.simplefilter("ignore", FileNoteWarning)``.

    Example:
        >>> import warnings
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     note("removed .r.json.1-ab.tmp beside r.json")
        >>> caught[0].category.__name__, str(caught[0].message)
        ('FileNoteWarning', 'removed .r.json.1-ab.tmp beside r.json')
    """


def note(message: str) -> None:
    """Tell the caller ``message`` as a :class:`FileNoteWarning` (``nova`` prints it as
    ``nova: MESSAGE``), located at the user's line as :func:`warn_at_caller` locates every
    warning: a notebook's warning line then names the user's own call
    (``evaluate_model(...)``, or the ``with`` line of a context manager), not a module
    inside the package that happened to notice. Python's default filter shows one message
    once per line; a note is only said, never needed: under ``-W error`` let it through
    with ``-W default::novabench.errors.FileNoteWarning``.

    Example:
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("error", FileNoteWarning)
        ...     try:
        ...         note("kept")
        ...     except FileNoteWarning as told:
        ...         print(told)
        kept
    """
    warn_at_caller(message, FileNoteWarning)  # the walk passes this module's frames


def warn_at_caller(message: str, category: type[Warning] = UserWarning) -> None:
    """Warn ``message`` as ``category``, located at the user's line: the first frame outside
    novabench, contextlib (a warning given on entering a ``with`` block names that line)
    and evaluate (the ``evaluate`` package and the modules it loads, such as the
    ``nova_metric`` face: a metric's warning names the user's ``metric.compute(...)``); on
    a worker thread started through :func:`for_caller`, the line that started it.

    Every warning of the package goes through here (or :func:`note`), never a fixed
    ``stacklevel``: a function reached by several paths (``score_localization``,
    ``compute_task``, the ``evaluate`` face) named a line of novabench on all but one of
    them, which Python's default filter (once per line) then showed once for all the
    user's calls, and which a filter naming the user's module
    (``-W error::UserWarning:mymodule``) could not pick out.

    Args:
        message: the warning's text.
        category: its class, e.g. ``LocalizationWarning``.

    Example:
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     warn_at_caller("no image to score", RuntimeWarning)
        >>> caught[0].category.__name__, str(caught[0].message), caught[0].filename
        ('RuntimeWarning', 'no image to score', '<doctest novabench.errors.warn_at_caller[0]>')
    """
    _warn_at(_users_line(sys._getframe(1)), message, category)


def for_caller(function: Callable[_P, _T]) -> Callable[_P, _T]:
    """``function``, to be run on another thread (a pool's worker), whose warnings name the
    user's line that led here: a worker's own frames end in the pool's machinery
    (``concurrent/futures/thread.py``), with no line of the user's among them.

    Args:
        function: what the worker runs.

    Returns:
        ``function`` with the user's line, found now on this thread, attached.

    Example:
        >>> import threading
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     worker = threading.Thread(target=for_caller(warn_at_caller), args=("told",))
        ...     worker.start()
        ...     worker.join()
        >>> str(caught[0].message), caught[0].filename
        ('told', '<doctest novabench.errors.for_caller[1]>')
    """
    import functools

    return cast(
        "Callable[_P, _T]", functools.partial(_run_for, _users_line(sys._getframe(1)), function)
    )


def _run_for(caller: _Line, function: Callable[..., _T], /, *args: Any, **kwargs: Any) -> _T:
    """Run ``function``: :func:`_users_line` reads ``caller`` from this frame."""
    return function(*args, **kwargs)


def pass_on(warning: warnings.WarningMessage, message: Warning | None = None) -> None:
    """Show a warning that a ``catch_warnings(record=True)`` block collected, as it would
    have been shown: at the line it names (the user's), through the caller's own display
    (``warnings.showwarning``: stderr, an outer block's record, ``nova``'s line).

    The caller's filters let it through when it was told (they hold inside such a block:
    "error" raised it, "ignore" dropped it), matching its module by name. Told again with
    ``warnings.warn_explicit`` it went through them a second time as from a module named
    by its file's path, so a filter showing the user's module alone dropped it.

    Args:
        warning: the collected warning.
        message: what to show instead of its message (of the same category), if anything.

    Example:
        >>> with warnings.catch_warnings(record=True) as outer:
        ...     warnings.simplefilter("ignore")  # filtered when it was told, not again
        ...     pass_on(warnings.WarningMessage(UserWarning("seen"), UserWarning, "mine.py", 3))
        >>> [(str(told.message), told.filename, told.lineno) for told in outer]
        [('seen', 'mine.py', 3)]
    """
    warnings.showwarning(
        warning.message if message is None else message,
        warning.category,
        warning.filename,
        warning.lineno,
        warning.file,
        warning.line,
    )


class _Line(NamedTuple):
    """Where a warning is located: a file, a line and the globals of its module."""

    filename: str
    lineno: int
    module_globals: dict[str, Any]


def _warn_at(line: _Line, message: str, category: type[Warning]) -> None:
    """Warn as ``warnings.warn`` does from ``line``'s frame: its file, line, module name (what
    a filter's module matches) and registry (what the default filter's once-per-line reads)."""
    warnings.warn_explicit(
        message,
        category,
        line.filename,
        line.lineno,
        module=line.module_globals.get("__name__", "<string>"),
        registry=line.module_globals.setdefault("__warningregistry__", {}),
    )  # no module_globals, as warnings.warn: a loader without sources (stdin) would raise


def _users_line(frame: FrameType) -> _Line:
    """The user's line: the first frame from ``frame`` outward outside novabench, contextlib
    and evaluate, or the line :func:`for_caller` attached (the outermost frame if none)."""
    import contextlib
    import os

    package = os.path.dirname(os.path.realpath(__file__)) + os.sep
    # contextlib's frames too: a warning told on entering a ``with`` block names that line.
    passed_through = os.path.splitext(os.path.realpath(contextlib.__file__))[0]
    while frame.f_back is not None:
        if frame.f_code is _run_for.__code__:  # a worker's: the line that started it
            return cast(_Line, frame.f_locals["caller"])
        name = frame.f_globals.get("__name__")
        if not (isinstance(name, str) and f"{name}.".startswith(_EVALUATE_MODULES)):
            where = os.path.realpath(frame.f_code.co_filename)
            if not (where.startswith(package) or os.path.splitext(where)[0] == passed_through):
                break
        frame = frame.f_back
    return _Line(frame.f_code.co_filename, frame.f_lineno, frame.f_globals)


#: Modules whose frames stand between the user and a face of novabench: the ``evaluate``
#: package (``compute`` calls the face's ``_compute``) and the modules ``evaluate.load``
#: loads (named ``evaluate_modules.metrics.<name>.<hash>.<name>``; the face among them).
_EVALUATE_MODULES = ("evaluate.", "evaluate_modules.")
