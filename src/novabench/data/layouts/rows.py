"""The rows layouts exchange with the rest of ``novabench.data``.

A layout reader turns its files into ``RawImage`` rows (values as found, not yet
validated, each naming its file and row for errors); ``novabench.data.validate`` turns
those into ``ImageRecord``. A layout writer takes ``ImageRow`` rows (an image already cut
and saved, with its boxes) plus the per-case metadata.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from novabench.errors import NovaInputError

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["GOLD_SOURCE", "ImageRow", "RawBox", "RawImage", "read_parquet", "text"]

#: ``source`` of a consensus box; any other source names a rater.
GOLD_SOURCE = "gold"


@dataclass
class RawBox:
    """One box as a layout file holds it, with where it came from."""

    values: dict[str, Any]
    rater: str | None  # None: gold
    source: str
    record: str
    field_prefix: str  # "bboxes[2]." for v1, "" for a CSV line


@dataclass
class RawImage:
    """One image row as a layout file holds it (unvalidated), with where it came from."""

    source: str
    record: str
    filename: Any
    case_id: Any
    scan_id: Any
    caption: Any
    image_path: Any
    meta: dict[str, Any]
    boxes: list[RawBox] = field(default_factory=list)
    embedded: bool = False  # export layout: the PNG is in the row (image_path unused)
    image_bytes: Any = None  # export layout: the embedded PNG
    size: tuple[Any, Any] | None = None  # export layout: the row's (width, height)

    def where(self) -> str:
        """The row, and its filename when it has a usable one, for error messages.

        Example:
            >>> RawImage("captions.csv", "line 3", "case0001_001.png", "case0001", "001",
            ...          "", None, {}).where()
            'line 3 (case0001_001.png)'
        """
        return f"{self.record} ({self.filename})" if isinstance(self.filename, str) else self.record


@dataclass
class ImageRow:
    """One image a writer puts in a layout's tables (its PNG is already saved).

    Example:
        >>> box = ("gold", [1, 2, 3, 4])
        >>> ImageRow("case0001_001.png", "case0001", "001", "Axial T2.", [box]).scan_id
        '001'
    """

    filename: str
    case_id: str
    scan_id: str
    caption: str
    boxes: list[tuple[str, list[float]]]  # (source, [x, y, w, h]), gold first


def text(value: Any) -> str | None:
    """Metadata as text: None kept, lists joined with "; " (as the source exports do).

    Example:
        >>> text(["Glioma", "Lymphoma"]), text(None), text(3)
        ('Glioma; Lymphoma', None, '3')
    """
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return "; ".join(str(item) for item in value)
    return str(value)


def read_parquet(path: Path, source: str, required: Sequence[str]) -> pa.Table:
    """A parquet file of a release, with its required columns checked (errors name them).

    Args:
        path: the file.
        source: how errors name it (the path relative to the release).
        required: columns it must have.

    Raises:
        NovaInputError: unreadable file or a missing column.

    Example:
        >>> read_parquet(Path("no.parquet"), "data/x.parquet", [])  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        novabench.errors.NovaInputError: data/x.parquet: cannot read the parquet file: ...
    """
    import pyarrow as pa  # imported where Parquet is read: a CSV release never loads it
    import pyarrow.parquet as pq

    try:
        # ParquetFile, not read_table: same table, without pyarrow.dataset importing pandas.
        table = pq.ParquetFile(path).read()
    except (pa.ArrowException, OSError) as error:
        raise NovaInputError(f"cannot read the parquet file: {error}", source=source) from error
    for column in required:
        if column not in table.column_names:
            raise NovaInputError(
                f"required column '{column}' is missing (columns: {', '.join(table.column_names)})",
                source=source,
                field=column,
            )
    return table
