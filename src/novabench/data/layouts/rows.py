"""The rows layouts exchange with the rest of ``novabench.data``.

A layout reader turns its files into ``RawImage`` rows (values as found, not yet
validated, each naming its file and row for errors); ``novabench.data.validate`` turns
those into ``ImageRecord``. A layout writer takes ``ImageRow`` rows (an image already cut
and saved, with its boxes) plus the per-case metadata.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from novabench.errors import NovaInputError
from novabench.records import BOX_FIELDS

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

__all__ = [
    "GOLD_SOURCE",
    "MAX_PARQUET_BYTES",
    "MAX_RELEASE_ROWS",
    "BoxColumns",
    "ImageRow",
    "RawBox",
    "RawImage",
    "read_parquet",
    "spelled_like_gold",
    "text",
]

#: ``source`` of a consensus box; any other source names a rater.
GOLD_SOURCE = "gold"


def spelled_like_gold(name: str) -> bool:
    """Whether a box source or rater name is ``gold`` once case and outer spaces go.

    Such a name cannot be told apart: the consensus marked in another spelling, or a
    rater named after it. Readers refuse it rather than pick one (user19: "Gold" made ten
    gold boxes a rater's).

    Example:
        >>> spelled_like_gold("Gold"), spelled_like_gold(" gold "), spelled_like_gold("rater1")
        (True, True, False)
    """
    return name.strip().casefold() == GOLD_SOURCE


#: Most rows a release parquet file may hold. NOVA has 906; a file claiming more than
#: 100 times that is refused from its footer before any row is read (a 1.2 MB file of
#: 2,000,000 rows took several GB to materialise).
MAX_RELEASE_ROWS = 100_000
#: Most bytes one release parquet file may expand to in memory (its footer's uncompressed
#: size, then the decoded batches as they are read): 2 GiB. An export with the 906 PNGs
#: embedded is about 100 MB.
MAX_PARQUET_BYTES = 2 * 1024**3
# Rows decoded at once: a file whose values expand far beyond its footer's sizes (a
# dictionary page repeated on every row) is stopped after at most one such batch.
_READ_BATCH_ROWS = 1024


@dataclass
class RawBox:
    """One box as a layout file holds it, with where it came from."""

    values: dict[str, Any]
    rater: str | None  # None: gold
    source: str
    record: str
    field_prefix: str  # "bboxes[2]." for v1, "" for a CSV line


@dataclass
class BoxColumns:
    """The boxes of all rows of one layout file, column by column.

    The v1 reader gives its boxes so when the file's types allow it (coordinates numeric and
    none null, every box with a named source): one array for every box instead of an object
    per box. Row ``r``'s boxes are ``starts[r]`` to ``starts[r + 1]`` (its order in the
    file); ``coordinates[i]`` is box i's ``[x, y, width, height]`` as float64 and
    ``raters[i]`` its rater (None for a gold box). ``field_prefix`` names a box in errors.

    Example:
        >>> import numpy as np
        >>> columns = BoxColumns(np.array([[1.0, 2.0, 3.0, 4.0]]), [None], np.array([0, 1]))
        >>> columns.raw_boxes(0, "data/nova-v1.parquet", "row 0")[0].values
        {'x': 1.0, 'y': 2.0, 'width': 3.0, 'height': 4.0}
    """

    coordinates: np.ndarray
    raters: list[str | None]
    starts: np.ndarray
    field_prefix: str = "bboxes"

    def raw_boxes(self, row: int, source: str, record: str) -> list[RawBox]:
        """Row ``row``'s boxes one by one, as the other layouts give them (for errors)."""
        start, end = int(self.starts[row]), int(self.starts[row + 1])
        return [
            RawBox(
                dict(zip(BOX_FIELDS, self.coordinates[index].tolist())),
                self.raters[index],
                source,
                record,
                f"{self.field_prefix}[{index - start}].",
            )
            for index in range(start, end)
        ]


@dataclass
class RawImage:
    """One image row as a layout file holds it (unvalidated), with where it came from.

    Its boxes are ``boxes`` or, when ``box_columns`` is set, row ``box_row`` of those
    columns (``listed_boxes()`` gives them one by one either way).
    """

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
    box_columns: BoxColumns | None = None  # v1 layout: the file's boxes as columns
    box_row: int = 0  # this row's position in box_columns

    @classmethod
    def from_parquet_row(
        cls, row: Mapping[str, Any], source: str, index: int, *, caption_column: str, **layout: Any
    ) -> RawImage:
        """Row ``index`` of a release parquet file, named ``row <index>`` as errors say it.

        The one builder of both parquet layouts (v1, export): the ids come from the row's
        ``filename``, ``case_id`` and ``scan_id``, the caption from ``caption_column``
        (``caption_text`` in v1, ``caption`` in an export); ``layout`` gives the rest
        (``image_path`` and ``meta`` always; the PNG and size of an export row, the box
        columns of a v1 file).

        Example:
            >>> row = {"filename": "case0001_001.png", "case_id": "case0001", "scan_id": "001",
            ...        "caption_text": "Axial T2."}
            >>> raw = RawImage.from_parquet_row(row, "data/nova-v1.parquet", 4,
            ...     caption_column="caption_text", image_path="images/case0001_001.png", meta={})
            >>> raw.where(), raw.caption
            ('row 4 (case0001_001.png)', 'Axial T2.')
        """
        return cls(
            source=source,
            record=f"row {index}",
            filename=row["filename"],
            case_id=row["case_id"],
            scan_id=row["scan_id"],
            caption=row[caption_column],
            **layout,
        )

    def listed_boxes(self) -> list[RawBox]:
        """The row's boxes one by one, whichever way the reader gave them.

        Example:
            >>> RawImage("captions.csv", "line 3", "case0001_001.png", "case0001", "001",
            ...          "", None, {}).listed_boxes()
            []
        """
        if self.box_columns is None:
            return self.boxes
        return self.box_columns.raw_boxes(self.box_row, self.source, self.where())

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


def _uncompressed_bytes(footer: Any) -> int:
    """The bytes a parquet file's column chunks take once decompressed, from its footer."""
    return sum(footer.row_group(group).total_byte_size for group in range(footer.num_row_groups))


def _check_size(rows: int, size: int, source: str) -> None:
    """Refuse a release parquet beyond :data:`MAX_RELEASE_ROWS` rows or :data:`MAX_PARQUET_BYTES`."""
    if rows > MAX_RELEASE_ROWS:
        raise NovaInputError(
            f"{rows:,} rows is more than the {MAX_RELEASE_ROWS:,} a NOVA release file may hold "
            "(NOVA has 906): refused before reading it",
            source=source,
        )
    if size > MAX_PARQUET_BYTES:
        raise NovaInputError(
            f"its rows expand to more than {MAX_PARQUET_BYTES:,} bytes in memory, the most a "
            "NOVA release file may take (NOVA's metadata is about 200 kB): refused",
            source=source,
        )


def read_parquet(path: Path, source: str, required: Sequence[str]) -> pa.Table:
    """A parquet file of a release, with its required columns checked (errors name them).

    Args:
        path: the file.
        source: how errors name it (the path relative to the release).
        required: columns it must have.

    Raises:
        NovaInputError: unreadable file, a missing column, more than
            :data:`MAX_RELEASE_ROWS` rows or more than :data:`MAX_PARQUET_BYTES` once decoded
            (the row count and sizes come from the footer, before any row is read).

    Example:
        >>> read_parquet(Path("no.parquet"), "data/x.parquet", [])  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        novabench.errors.NovaInputError: data/x.parquet: cannot read the parquet file: ...
    """
    import pyarrow as pa  # imported where Parquet is read: a CSV release never loads it
    import pyarrow.parquet as pq

    try:
        # ParquetFile, not read_table: same table, without pyarrow.dataset importing pandas.
        # No pre-buffering: it reads ahead on arrow's I/O thread (started for it, a thread
        # more in the process), which pays on a remote store, not on a local file.
        parquet = pq.ParquetFile(path, pre_buffer=False)
        footer = parquet.metadata
        _check_size(footer.num_rows, _uncompressed_bytes(footer), source)
        batches, decoded = [], 0
        # One thread: a release file is small (NOVA's is about 200 kB); arrow's pool costs
        # more CPU to start and to hand batches over than the decoding it shares.
        for batch in parquet.iter_batches(batch_size=_READ_BATCH_ROWS, use_threads=False):
            decoded += batch.nbytes
            _check_size(footer.num_rows, decoded, source)
            batches.append(batch)
        table = pa.Table.from_batches(batches, schema=parquet.schema_arrow)
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
