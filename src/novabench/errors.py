"""Errors raised by the toolkit.

Every error about bad input says where the problem is: the file or source, the
record (row, line number, example index, case or filename) and the field, so a
researcher can fix the input without a debugger.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar

__all__ = [
    "OUT_DIR",
    "OVERWRITE",
    "TASKS",
    "NovaError",
    "NovaInputError",
    "NovaOutputError",
    "FileNoteWarning",
    "Option",
    "note",
]


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
    ``nova: MESSAGE``), located at the first frame outside novabench: a notebook's warning
    line then names the user's own call (``evaluate_model(...)``, or the ``with`` line of a
    context manager), not a module inside the package that happened to notice. Python's
    default filter shows one message once per line; a note is only said, never needed:
    under ``-W error`` let it through with ``-W default::novabench.errors.FileNoteWarning``.

    Example:
        >>> import warnings
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("error", FileNoteWarning)
        ...     try:
        ...         note("kept")
        ...     except FileNoteWarning as told:
        ...         print(told)
        kept
    """
    import contextlib
    import os
    import sys
    import warnings

    package = os.path.dirname(os.path.realpath(__file__)) + os.sep
    # contextlib's frames too: a note told on entering a ``with`` block names that line.
    passed_through = os.path.splitext(os.path.realpath(contextlib.__file__))[0]
    level, frame = 1, sys._getframe(1)  # 1: note's caller
    while frame.f_back is not None:
        where = os.path.realpath(frame.f_code.co_filename)
        if not (where.startswith(package) or os.path.splitext(where)[0] == passed_through):
            break
        level, frame = level + 1, frame.f_back
    warnings.warn(message, FileNoteWarning, stacklevel=level + 1)
