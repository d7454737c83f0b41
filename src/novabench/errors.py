"""Errors raised by the toolkit.

Every error about bad input says where the problem is: the file or source, the
record (row, line number, example index, case or filename) and the field, so a
researcher can fix the input without a debugger.
"""

from __future__ import annotations

from typing import ClassVar

__all__ = ["NovaError", "NovaInputError", "NovaOutputError"]


class NovaError(Exception):
    """Base class of every error raised on purpose by ``novabench``.

    An error whose message names the item it is about (an input record, a judged case) says
    which attribute holds that name in ``item_attribute`` and builds its message from its
    attributes in ``_render``, so a caller that knows the item better can rename it with
    :meth:`rename_item`. Other errors name no item (``item_attribute`` is None).
    """

    #: The attribute that names the item the message is about; None: the error names none.
    item_attribute: ClassVar[str | None] = None

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
        message: what is wrong, in one sentence.
        source: the file, URL or argument the input came from.
        record: which record: ``"row 12"``, ``"line 3"``, ``"example 4"``, a filename.
        field: which field of that record, e.g. ``"bboxes[1].width"``.

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
        message: str,
        *,
        source: str | None = None,
        record: str | None = None,
        field: str | None = None,
    ) -> None:
        self.message = message
        self.source = source
        self.record = record
        self.field = field
        super().__init__(self._render())

    def _render(self) -> str:
        where = [part for part in (self.source, self.record) if part]
        if self.field:
            where.append(f"field '{self.field}'")
        return f"{', '.join(where)}: {self.message}" if where else self.message


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

    def __init__(self, path: str, reason: str, *, errno: int | None = None) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"cannot write {path}: {reason}")
        self.errno = errno  # OSError's attribute, set after init: the message stays ours
