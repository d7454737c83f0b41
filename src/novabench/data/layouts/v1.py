"""The official v1 layout: ``data/nova-v1.parquet`` plus the PNGs under ``images/``.

One parquet row per image: ``filename``, ``case_id``, ``scan_id``, ``caption_text``,
``image_path`` (``images/<filename>``), ``split``, a per-case ``meta`` struct of strings and
``bboxes``, a list of ``{x, y, width, height, source}`` (``source`` is ``gold`` or a rater
name) or null. Rows are not sorted. ``read`` gives the rows of such a folder, ``write``
makes one (``nova sample`` and ``nova ingest`` go through it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from novabench.data.layouts.rows import (
    GOLD_SOURCE,
    BoxColumns,
    ImageRow,
    RawBox,
    RawImage,
    read_parquet,
    spelled_like_gold,
)
from novabench.data.provenance import provenance_metadata
from novabench.errors import NovaInputError
from novabench.records import BOX_FIELDS, FIXED_META_KEYS

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["COLUMNS", "IMAGE_DIR", "PARQUET", "REQUIRED_COLUMNS", "read", "write"]

#: What a v1 column holds (see ``COLUMNS``).
ColumnKind = Literal["string", "meta", "boxes"]

PARQUET = "data/nova-v1.parquet"
IMAGE_DIR = "images"
#: The v1 parquet's columns in the order our writer gives them, each with the kind of its
#: values: ``string``; ``meta``, a struct of strings (one field per meta key); ``boxes``, a
#: list of ``{x, y, width, height: double, source: string}`` or null. The one list of
#: them: the writer's schema is built from it (``_arrow_type``), the reader requires all
#: but ``OPTIONAL_COLUMNS`` and checks the ``meta`` and ``boxes`` kinds.
COLUMNS: tuple[tuple[str, ColumnKind], ...] = (
    ("filename", "string"),
    ("case_id", "string"),
    ("scan_id", "string"),
    ("caption_text", "string"),
    ("image_path", "string"),
    ("split", "string"),
    ("meta", "meta"),
    ("bboxes", "boxes"),
)
#: Columns an official file may lack (every row of NOVA is ``test``).
OPTIONAL_COLUMNS = ("split",)
REQUIRED_COLUMNS = tuple(name for name, _ in COLUMNS if name not in OPTIONAL_COLUMNS)
#: The required columns of one string a row, in ``RawImage``'s order; ``meta`` and the
#: boxes are read apart (the boxes as box columns, or box by box).
_TEXT_COLUMNS = ("filename", "case_id", "scan_id", "caption_text", "image_path")


def _arrow_type(kind: ColumnKind, meta_keys: Sequence[str]) -> pa.DataType:
    """The arrow type our writer gives a column of ``kind`` (``meta_keys``: the struct's fields).

    Example:
        >>> str(_arrow_type("meta", ["title"])), str(_arrow_type("string", []))
        ('struct<title: string>', 'string')
    """
    import pyarrow as pa

    if kind == "string":
        return pa.string()
    if kind == "meta":
        return pa.struct([pa.field(key, pa.string()) for key in meta_keys])
    box = [pa.field(name, pa.float64()) for name in BOX_FIELDS] + [pa.field("source", pa.string())]
    return pa.list_(pa.struct(box))


def _check_kind(name: str, kind: ColumnKind, arrow_type: pa.DataType, source: str) -> None:
    """Refuse a ``meta`` column that is no struct and a ``boxes`` column that is no list (nor
    all null); strings are checked value by value (``novabench.data.validate``)."""
    import pyarrow as pa

    if kind == "meta" and not pa.types.is_struct(arrow_type):
        raise NovaInputError(
            f"'{name}' must be a struct, got {arrow_type}", source=source, field=name
        )
    listed = pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type)
    if kind == "boxes" and not (listed or pa.types.is_null(arrow_type)):
        raise NovaInputError(
            f"'{name}' must be a list of {{x, y, width, height, source}} structs, got the "
            f"column type {arrow_type} (boxes stored as text must be decoded first)",
            source=source,
            field=name,
        )


def read(
    root: Path, warnings: list[str], schema_metadata: dict[bytes, bytes] | None = None
) -> tuple[list[RawImage], list[str]]:
    """The image rows of a v1 release and its extra meta keys (in ``meta`` order).

    Args:
        root: the release folder.
        warnings: notes on what was ignored are appended here.
        schema_metadata: when given, receives the parquet schema's key-value metadata
            (where the provenance is), so nothing opens the file a second time.

    Returns:
        The unvalidated rows (``novabench.data.validate`` checks them) and the meta keys
        beyond ``FIXED_META_KEYS``.

    Raises:
        NovaInputError: unreadable parquet, a missing column or meta key, a null box or a
            box without a source, naming the row.

    Example:
        >>> import sys, tempfile
        >>> sys.path.insert(0, "tests")
        >>> from release_factory import write_v1_release
        >>> rows, extra = read(write_v1_release(tempfile.mkdtemp(), image_size=(64, 64)), [])
        >>> len(rows), extra
        (6, ['differential_diagnosis'])
    """
    source = PARQUET
    table = read_parquet(root / PARQUET, source, REQUIRED_COLUMNS)
    if schema_metadata is not None:
        schema_metadata.update(table.schema.metadata or {})
    for name, kind in COLUMNS:
        if name in table.column_names:
            _check_kind(name, kind, table.schema.field(name).type, source)
    meta_type = table.schema.field("meta").type
    meta_keys = [meta_type.field(i).name for i in range(meta_type.num_fields)]
    repeated = sorted({key for key in meta_keys if meta_keys.count(key) > 1})
    if repeated:  # a row could not say which of the two is the case's value
        raise NovaInputError(
            f"meta key '{repeated[0]}' is a field of the meta struct {meta_keys.count(repeated[0])} "
            "times; each key may be one field",
            source=source,
            field=f"meta.{repeated[0]}",
        )
    for key in FIXED_META_KEYS:
        if key not in meta_keys:
            raise NovaInputError(
                f"required meta key '{key}' is missing (meta keys: {', '.join(meta_keys)})",
                source=source,
                field=f"meta.{key}",
            )
    declared = [name for name, _ in COLUMNS]
    ignored = [c for c in table.column_names if c not in declared]
    if ignored:
        warnings.append(
            f"{source}: columns not part of the NOVA v1 layout were ignored: {', '.join(ignored)}"
        )
    if "split" in table.column_names:
        # Counted by hand: Counter(list) asks whether a list is a Mapping, and the first such
        # question in a process walks every registered Mapping class (2-3 ms with datasets).
        others: dict[Any, int] = {}
        for split in table.column("split").to_pylist():
            if split != "test":
                others[split] = others.get(split, 0) + 1
        if others:
            warnings.append(f"{source}: rows with a split other than 'test' were kept: {others}")
    box_columns = _box_columns(table.column("bboxes"))
    if box_columns is None:  # a type, a null or a source that needs a look box by box
        raws = _rows_box_by_box(table, source)
    else:
        raws = _raw_images(table, source, box_columns)
    return raws, [key for key in meta_keys if key not in FIXED_META_KEYS]


def _raw_images(
    table: pa.Table, source: str, box_columns: BoxColumns | None = None
) -> list[RawImage]:
    """The file's rows, their boxes given as ``box_columns`` or not yet read (None).

    Example:
        >>> import pyarrow as pa
        >>> table = pa.table({"filename": ["case0001_001.png"], "case_id": ["case0001"],
        ...     "scan_id": ["001"], "caption_text": ["Axial T2."],
        ...     "image_path": ["images/case0001_001.png"],
        ...     "meta": pa.array([None], pa.struct([("title", pa.string())]))})
        >>> (raw,) = _raw_images(table, PARQUET)
        >>> raw.where(), raw.caption, raw.meta, raw.listed_boxes()
        ('row 0 (case0001_001.png)', 'Axial T2.', {}, [])
    """
    # Column by column, each row's RawImage built at once (what RawImage.from_parquet_row
    # gives a row): no dict per row on the way, every field by position (keywords cost
    # several times more; a test holds the order to the class's).
    texts = [table.column(name).to_pylist() for name in _TEXT_COLUMNS]
    return [
        RawImage(
            source,
            f"row {index}",
            filename,
            case_id,
            scan_id,
            caption,
            image_path,
            meta or {},
            [],  # boxes: none listed apart
            False,  # embedded
            None,  # image_bytes
            None,  # size
            box_columns,
            index,  # box_row
        )
        for index, (filename, case_id, scan_id, caption, image_path, meta) in enumerate(
            zip(*texts, _meta_values(table.column("meta")))
        )
    ]


def _meta_values(column: pa.ChunkedArray) -> list[dict[str, Any] | None]:
    """The ``meta`` struct column's rows as dicts (None for a null row), as ``to_pylist``
    gives them; built from the struct's fields, which costs a quarter of that.

    Example:
        >>> import pyarrow as pa
        >>> meta = pa.array([{"title": "A", "final_diagnosis": None}, None])
        >>> _meta_values(pa.chunked_array([meta]))
        [{'title': 'A', 'final_diagnosis': None}, None]
    """
    values: list[dict[str, Any] | None] = []
    for chunk in column.chunks:
        keys = [chunk.type.field(index).name for index in range(chunk.type.num_fields)]
        if chunk.null_count:  # a null row: as pyarrow reads it
            values.extend(chunk.to_pylist())
            continue
        fields = [chunk.field(index).to_pylist() for index in range(len(keys))]
        values.extend(dict(zip(keys, row)) for row in zip(*fields))
    return values


def _rows_box_by_box(table: pa.Table, source: str) -> list[RawImage]:
    """The rows with their boxes read one by one: every box problem named where it is."""
    raws = _raw_images(table, source)
    for raw, boxes in zip(raws, table.column("bboxes").to_pylist()):
        where = raw.where()  # the row's name in errors, built once for all its boxes
        for position, box in enumerate(boxes or []):
            prefix = f"bboxes[{position}]."
            if not isinstance(box, dict):
                raise NovaInputError("box is null", source=source, record=where, field=prefix[:-1])
            rater = box.get("source")
            if not isinstance(rater, str) or not rater.strip():
                raise NovaInputError(
                    f"box source must name 'gold' or a rater, got {rater!r}",
                    source=source,
                    record=where,
                    field=prefix + "source",
                )
            if rater != GOLD_SOURCE and spelled_like_gold(rater):
                raise NovaInputError(
                    f"box source {rater!r} is {GOLD_SOURCE!r} in another spelling: a consensus "
                    f"box is marked exactly {GOLD_SOURCE!r} and any other source names a rater, "
                    f"so this box could be either; write {GOLD_SOURCE!r} or name the rater "
                    "otherwise",
                    source=source,
                    record=where,
                    field=prefix + "source",
                )
            values = {name: box.get(name) for name in BOX_FIELDS}
            raw.boxes.append(
                RawBox(values, None if rater == GOLD_SOURCE else rater, source, where, prefix)
            )
    return raws


def _box_columns(column: pa.ChunkedArray) -> BoxColumns | None:
    """The ``bboxes`` column as columns, or None when a box needs a look of its own.

    Taken only when nothing in it can be wrong box by box before the image sizes are known:
    numeric coordinates without a null, no null box, every source a non-blank string (what
    ``_rows_box_by_box`` checks, with the same values: float64 of the stored numbers). A
    null list is an image without boxes, as there.
    """
    import numpy as np
    import pyarrow as pa

    list_type = column.type
    if not (pa.types.is_list(list_type) or pa.types.is_large_list(list_type)):
        return None
    box_type = list_type.value_type
    if not pa.types.is_struct(box_type):
        return None
    names = {box_type.field(i).name: box_type.field(i).type for i in range(box_type.num_fields)}
    if names.get("source") not in (pa.string(), pa.large_string()):
        return None
    for name in BOX_FIELDS:
        kind = names.get(name)
        if kind is None or not (pa.types.is_floating(kind) or pa.types.is_integer(kind)):
            return None
    lists = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    # Offsets and child values, not ``flatten()`` / ``to_numpy()``: those import
    # pyarrow.compute and pandas on first use (0.2-0.3 s of every command).
    offsets = _buffer_view(lists.offsets, np.dtype(lists.offsets.type.to_pandas_dtype()))
    lengths = np.diff(offsets)
    if lists.null_count:  # an image without boxes, as `row["bboxes"] or []` reads it
        validity = np.frombuffer(lists.buffers()[0], dtype=np.uint8)
        valid = np.unpackbits(validity, bitorder="little")[lists.offset : lists.offset + len(lists)]
        if lengths[valid == 0].any():  # a null list over stored boxes: rare, looked at apart
            return None
    first = int(offsets[0]) if len(offsets) else 0
    boxes = lists.values.slice(first, int(lengths.sum()))
    if boxes.null_count:
        return None
    fields = [boxes.field(name) for name in (*BOX_FIELDS, "source")]
    if any(values.null_count for values in fields):
        return None
    sources = fields[-1].to_pylist()
    if not all(map(str.strip, sources)):  # a blank source: named box by box
        return None
    if any(name != GOLD_SOURCE and spelled_like_gold(name) for name in set(sources)):
        return None  # refused box by box, where the row is named
    coordinates = np.empty((len(boxes), len(BOX_FIELDS)), dtype=np.float64)
    for position, values in enumerate(fields[:-1]):
        coordinates[:, position] = _buffer_view(values, np.dtype(values.type.to_pandas_dtype()))
    starts = np.zeros(len(lists) + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])
    raters = [None if name == GOLD_SOURCE else name for name in sources]
    return BoxColumns(coordinates, raters, starts)


def _buffer_view(values: Any, dtype: Any) -> Any:
    """A numeric arrow array without nulls as a read-only numpy view of its data buffer.

    Not ``to_numpy``: pyarrow's converter imports pandas the first time (0.2-0.3 s a command).

    Example:
        >>> import numpy as np, pyarrow as pa
        >>> _buffer_view(pa.array([1.5, 2.0, 3.0]).slice(1), np.dtype(np.float64)).tolist()
        [2.0, 3.0]
    """
    import numpy as np

    data = np.frombuffer(values.buffers()[1], dtype=dtype, count=values.offset + len(values))
    return data[values.offset :]


def write(
    root: Path,
    images: Sequence[ImageRow],
    metas: Mapping[str, Mapping[str, str | None]],
    meta_keys: Sequence[str],
    provenance: Mapping[str, Any],
) -> None:
    """Write ``data/nova-v1.parquet`` of images whose PNGs are already under ``images/``.

    Rows keep the order given. The schema is the official one (see CONTRIBUTING), with the
    provenance in its metadata so an export's card can say what made the data.

    Args:
        root: the release folder.
        images: one row per image.
        metas: per case id, its metadata by key.
        meta_keys: the ``meta`` struct's fields, in order (``FIXED_META_KEYS`` first).
        provenance: what made the release (``novabench.data.provenance``).

    Example:
        >>> import tempfile
        >>> root = Path(tempfile.mkdtemp())
        >>> box = ("gold", [1, 2, 3, 4])
        >>> row = ImageRow("case0001_001.png", "case0001", "001", "Axial T2.", [box])
        >>> write(root, [row], {"case0001": {"title": "T"}}, ["title"], {"origin": "nova ingest"})
        >>> import pyarrow.parquet as pq
        >>> pq.read_table(root / PARQUET).column("bboxes").to_pylist()
        [[{'x': 1.0, 'y': 2.0, 'width': 3.0, 'height': 4.0, 'source': 'gold'}]]
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema(
        [pa.field(name, _arrow_type(kind, meta_keys)) for name, kind in COLUMNS],
        metadata=provenance_metadata(provenance),  # so an export's card can say what this is
    )
    rows = [
        {
            "filename": image.filename,
            "case_id": image.case_id,
            "scan_id": image.scan_id,
            "caption_text": image.caption,
            "image_path": f"{IMAGE_DIR}/{image.filename}",
            "split": "test",
            "meta": dict(metas[image.case_id]),
            "bboxes": [dict(zip(BOX_FIELDS, box), source=source) for source, box in image.boxes]
            or None,
        }
        for image in images
    ]
    (root / "data").mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), root / PARQUET)
