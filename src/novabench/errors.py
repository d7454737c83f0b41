"""Errors raised by the toolkit.

Every error about bad input says where the problem is: the file or source, the
record (row, line number, example index, case or filename) and the field, so a
researcher can fix the input without a debugger.
"""

from __future__ import annotations

__all__ = ["NovaError", "NovaInputError", "NovaOutputError"]


class NovaError(Exception):
    """Base class of every error raised on purpose by ``novabench``."""


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
        where = [part for part in (source, record) if part]
        if field:
            where.append(f"field '{field}'")
        super().__init__(f"{', '.join(where)}: {message}" if where else message)


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
