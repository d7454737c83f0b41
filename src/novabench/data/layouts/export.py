"""The layout ``nova export`` writes: Hub-ready Parquet shards, the PNGs embedded.

::

    OUT/data/images/test-00000-of-0000N.parquet     one row per image, PNG bytes embedded
    OUT/data/cases/test-00000-of-00001.parquet      one row per case
    OUT/README.md                                   the card (``novabench.data.card``)

Columns are the ``images``/``cases`` Features (``novabench.data.schema``); each shard
carries their ``huggingface`` schema metadata, the provenance of data novabench made, and
the warnings reading the release gave (``novabench.release_warnings``: the rows alone may not
show them; ``read`` gives them again, marked as recorded).
Rows are streamed: a row group is flushed every ``ROW_GROUP_MAX_ROWS`` rows or
``ROW_GROUP_MAX_BYTES`` bytes, so memory does not grow with the number of images.

``read`` gives the image rows of such a folder (a Hub download reads as the release it was
exported from); ``write`` writes the shards of both configurations. The card, COCO and the
push are the export command's (``novabench.data.export``).
"""

from __future__ import annotations

import inspect
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import datasets
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from novabench.data.card import SPLIT, ConfigSize
from novabench.data.layouts import DEFAULT_MAX_SHARD_BYTES
from novabench.data.layouts.rows import RawBox, RawImage, read_parquet
from novabench.data.provenance import (
    provenance_metadata,
    recorded_warnings,
    warnings_metadata,
)
from novabench.data.rows import iter_case_rows, iter_image_rows
from novabench.data.schema import IMAGE_COLUMNS, case_features, extra_columns, image_features
from novabench.errors import NovaInputError
from novabench.progress import progress_bar
from novabench.records import BOX_FIELDS, FIXED_META_KEYS, ImageRecord

if TYPE_CHECKING:
    from novabench.data.release_record import NovaRelease

__all__ = [
    "DEFAULT_MAX_SHARD_BYTES",
    "IMAGE_DIR",
    "WrittenShards",
    "float32_box_columns",
    "float32_box_warning",
    "image_shards",
    "image_source",
    "read",
    "write",
]

IMAGE_DIR = "data/images"
CASE_DIR = "data/cases"
# Small row groups keep random access (and the Hub viewer) cheap on image rows.
ROW_GROUP_MAX_ROWS = 100
ROW_GROUP_MAX_BYTES = 32 * 1024 * 1024
# Content-defined pages let the Hub (Xet) deduplicate unchanged images between two pushes.
_WRITER_OPTIONS: dict[str, Any] = {"write_page_index": True}
if "use_content_defined_chunking" in inspect.signature(pq.ParquetWriter.__init__).parameters:
    _WRITER_OPTIONS["use_content_defined_chunking"] = True


def image_shards(root: Path) -> list[Path]:
    """The ``images`` shards of an export folder, sorted (hidden partial files skipped).

    Example:
        >>> image_shards(Path("."))
        []
    """
    return _shards(root, IMAGE_DIR)


def _shards(root: Path, folder: str) -> list[Path]:
    """The shards of one configuration's folder, sorted (hidden partial files skipped)."""
    shards = (root / folder).glob("*.parquet")
    return sorted(path for path in shards if not path.name.startswith("."))


def _card_text(root: Path) -> str:
    """The export's card (``README.md``), "" when it cannot be read."""
    try:
        return (root / "README.md").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


# --------------------------------------------------------------------------- reader

# The shard names `write` gives: every shard of a configuration says how many there are.
_SHARD_NAME = re.compile(rf"^{SPLIT}-(\d+)-of-(\d+)\.parquet$")


def _check_shard_set(root: Path, folder: str, shards: list[Path]) -> None:
    """Refuse a configuration whose ``test-i-of-n`` shards are not all there (a partial download).

    Shards named otherwise (a folder written by other means) cannot say what is missing and
    are taken as they are.
    """
    names = [_SHARD_NAME.match(path.name) for path in shards]
    if not shards or not all(names):
        return
    totals = {int(match.group(2)) for match in names if match}
    present = {int(match.group(1)) for match in names if match}
    total = max(totals)
    missing = sorted(set(range(total)) - present)
    if len(totals) > 1 or missing or present - set(range(total)):
        expected = (
            f"{SPLIT}-{missing[0]:05d}-of-{total:05d}.parquet is missing"
            + (f" ({len(missing)} of {total} shards missing)" if len(missing) > 1 else "")
            if missing
            else f"the shards disagree on their number ({sorted(totals)})"
        )
        raise NovaInputError(
            f"incomplete export: {expected}; download or copy the export again (every shard "
            "of a configuration is needed: a missing one would leave its rows out of every score)",
            source=f"{root / folder}",
        )


def _card_counts(card: str) -> dict[str, int]:
    """``{configuration: num_examples}`` as the export's card records them ({} without a card)."""
    import yaml

    try:
        header = yaml.safe_load(card.split("---\n", 2)[1]) if card.startswith("---\n") else None
    except (yaml.YAMLError, IndexError):
        return {}
    counts: dict[str, int] = {}
    infos = header.get("dataset_info") if isinstance(header, dict) else None
    for info in infos if isinstance(infos, list) else []:
        splits = info.get("splits") if isinstance(info, dict) else None
        for split in splits if isinstance(splits, list) else []:
            if isinstance(split, dict) and split.get("name") == SPLIT:
                if isinstance(split.get("num_examples"), int):
                    counts[str(info.get("config_name"))] = split["num_examples"]
    return counts


def _check_complete(root: Path, raws: list[RawImage], card: str) -> None:
    """The rows read are all the export holds: its shard sets, its card's counts, its cases.

    A partial download (a shard missing) would otherwise read, validate and score as a
    smaller release; `datasets.load_dataset` refuses it (``NonMatchingSplitsSizesError``).
    """
    case_shards = _shards(root, CASE_DIR)
    _check_shard_set(root, CASE_DIR, case_shards)
    counts = _card_counts(card)
    if "images" in counts and counts["images"] != len(raws):
        raise NovaInputError(
            f"incomplete export: the card records {counts['images']} images, the image shards "
            f"hold {len(raws)}; download or copy the export again",
            source=f"{root / 'README.md'}",
            field="dataset_info.images.num_examples",
        )
    if not case_shards:
        if "cases" in counts:  # the card lists a cases configuration: its shards are gone
            raise NovaInputError(
                f"incomplete export: the card records {counts['cases']} cases, but "
                f"{CASE_DIR} holds no shard; download or copy the export again",
                source=f"{root / CASE_DIR}",
            )
        return
    # Each case row lists its images' filenames: one absent from the image rows is missing.
    listed = [
        filename
        for shard in case_shards
        for filenames in pq.read_table(shard, columns=["filenames"]).column("filenames").to_pylist()
        for filename in filenames or ()
    ]
    missing = sorted(set(listed) - {raw.filename for raw in raws})
    if missing:
        raise NovaInputError(
            f"incomplete export: {len(missing)} image(s) its cases list have no image row "
            f"({', '.join(map(str, missing[:3]))}{', ...' if len(missing) > 3 else ''}); "
            "download or copy the export again",
            source=f"{root / CASE_DIR}",
        )


def _same_case_value(column: str, stored: Any, expected: Any, narrow: bool = False) -> bool:
    """Whether a case row's value is what its image rows give (boxes as a float32 column of
    an older export holds them, when ``narrow``)."""
    if column != "boxes" or not isinstance(stored, list) or not narrow:
        return bool(stored == expected)
    widened = [
        [[_shortest_float32(value) for value in box] for box in boxes or []] for boxes in stored
    ]
    return widened == expected


def check_case_rows(root: Path, release: NovaRelease) -> None:
    """Refuse an export whose ``cases`` rows say other than its ``images`` rows.

    Scoring reads the image rows; a user of the ``cases`` configuration (``load_nova(...,
    "cases")``, ``load_dataset(..., "cases")``) reads the case rows. Each case row must be
    what ``nova export`` derives from its images (diagnosis, history, title, date, captions,
    filenames, boxes, extra columns), and each case must have its row, or the two
    configurations would give two ground truths under one fingerprint.

    Raises:
        NovaInputError: naming the shard, the case and the first differing column.

    Example:
        >>> from novabench.data.release_record import NovaRelease
        >>> check_case_rows(Path("no-export"), NovaRelease(root=Path("."), layout="export",
        ...     images=[]))  # no cases shard: nothing to compare
    """
    expected = {row["case_id"]: row for row in iter_case_rows(release)}
    shards = _shards(root, CASE_DIR)
    if not shards:
        return
    for shard in shards:
        source = shard.relative_to(root).as_posix()
        table = pq.read_table(shard)
        narrow = "boxes" in float32_box_columns(table.schema)
        for row in table.to_pylist():
            case_id = row.get("case_id")
            derived = expected.pop(case_id, None) if isinstance(case_id, str) else None
            if derived is None:
                raise NovaInputError(
                    "a case row without image rows (or listed twice): the export was edited "
                    "or mixed with another; export the release again",
                    source=source,
                    record=f"case {case_id!r}",
                    field="case_id",
                )
            unknown = sorted(set(row) - set(derived))
            if unknown:  # datasets refuses a shard whose columns are not the card's
                raise NovaInputError(
                    f"a column the case's image rows do not give ({', '.join(unknown)}): the "
                    "cases configuration would not load (its columns must be the card's); "
                    "export the release again",
                    source=source,
                    record=f"case {case_id}",
                    field=unknown[0],
                )
            for column, value in derived.items():
                if not _same_case_value(column, row.get(column), value, narrow):
                    raise NovaInputError(
                        f"{_short(row.get(column))} where the case's image rows give "
                        f"{_short(value)}: the cases configuration would read another ground "
                        "truth than scoring does; export the release again",
                        source=source,
                        record=f"case {case_id}",
                        field=column,
                    )
    if expected:
        missing = sorted(expected)
        raise NovaInputError(
            f"{len(missing)} case(s) of the image rows have no case row ("
            f"{', '.join(missing[:3])}{', ...' if len(missing) > 3 else ''}); export the "
            "release again",
            source=f"{root / CASE_DIR}",
        )


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


_CARD_EXTRA_ROW = re.compile(
    r"^\| `(?P<column>[0-9A-Za-z_]+)` \| `string` \| Extra per-case field of the release "
    r"\(`meta` key `(?P<key>.*)`\), kept verbatim\. \|$",
    re.MULTILINE,
)


def _export_extra_keys(card: str, columns: list[str]) -> list[str]:
    """The release's extra meta keys behind the export's extra columns.

    ``nova export`` names the columns with ``extra_columns`` (``"link (Eurorad)"`` becomes
    ``link_Eurorad``) and its card's field table records each original key. Keys found there
    are used when they map back to exactly these columns; otherwise the column names are the
    keys (an edited card, or a folder written by other means).
    """
    origin: dict[str, str] = {}
    for match in _CARD_EXTRA_ROW.finditer(card):
        origin.setdefault(match.group("column"), match.group("key"))
    keys = [origin.get(column, column) for column in columns]
    if list(extra_columns(keys).values()) == columns and len(set(keys)) == len(keys):
        return keys
    return list(columns)


def _shortest_float32(value: Any) -> Any:
    """A float read from a float32 column (an export written before boxes were float64) as
    the shortest decimal that is that float32.

    ``159.2675`` is stored as the float32 nearest to it, which Arrow widens to
    ``159.26750183105469``; the release had ``159.2675``. Both are the same float32, so the
    short one is kept and a release read from its export has the boxes of the original.
    Other values are returned unchanged (validation reports them).
    """
    if isinstance(value, float) and math.isfinite(value):
        return float(str(np.float32(value)))
    return value


#: The columns that hold boxes; ``nova export`` wrote them as float32 before they were float64.
BOX_COLUMNS = ("boxes", "rater_boxes")


def float32_box_columns(schema: pa.Schema) -> list[str]:
    """The box columns of an export shard's schema whose coordinates are float32.

    Exports written before boxes were float64 stored them as float32, which holds a
    release's coordinate exactly only when it is a float32 (e.g. an integer).

    Example:
        >>> from novabench.data.schema import image_features
        >>> float32_box_columns(image_features().arrow_schema)
        []
        >>> float32_box_columns(pa.schema([("boxes", pa.list_(pa.list_(pa.float32())))]))
        ['boxes']
    """
    found = []
    for name in BOX_COLUMNS:
        index = schema.get_field_index(name)
        if index != -1 and pa.float32() in _leaf_types(schema.field(index).type):
            found.append(name)
    return found


def _leaf_types(arrow_type: pa.DataType) -> list[pa.DataType]:
    if pa.types.is_struct(arrow_type):
        return [leaf for child in arrow_type for leaf in _leaf_types(child.type)]
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        return _leaf_types(arrow_type.value_type)
    return [arrow_type]


def float32_box_warning(narrow: list[str], source: str) -> str | None:
    """One line saying an (older) export shard stores its boxes as float32, or None.

    Args:
        narrow: the shard's float32 box columns (:func:`float32_box_columns`).
        source: the shard, as the warning names it.

    Example:
        >>> print(float32_box_warning(["boxes"], "s.parquet"))
        s.parquet: column 'boxes' stores the boxes as float32 (an export written before novabench stored them as float64): each coordinate is read as the shortest decimal of its float32, the release's value only when it had at most 7 significant digits, so IoUs and scores at IoU ties may differ from the release's; export the release again
    """
    if not narrow:
        return None
    names = ", ".join(f"'{name}'" for name in narrow)
    column = "column" if len(narrow) == 1 else "columns"
    verb = "stores" if len(narrow) == 1 else "store"
    return (
        f"{source}: {column} {names} {verb} the boxes as float32 (an export written before "
        "novabench stored them as float64): each coordinate is read as the shortest decimal "
        "of its float32, the release's value only when it had at most 7 significant digits, "
        "so IoUs and scores at IoU ties may differ from the release's; export the release again"
    )


def _export_box(
    values: Any, source: str, record: str, prefix: str, narrow: bool = False
) -> dict[str, Any]:
    """``[x, y, width, height]`` of an export row as a dict keyed by ``BOX_FIELDS``; values
    of a float32 column (``narrow``, an older export) as their shortest decimals."""
    if not isinstance(values, (list, tuple)) or len(values) != len(BOX_FIELDS):
        raise NovaInputError(
            f"a box must be a list [x, y, width, height], got {values!r}",
            source=source,
            record=record,
            field=prefix[:-1],
        )
    if not narrow:
        return dict(zip(BOX_FIELDS, values))
    return {name: _shortest_float32(value) for name, value in zip(BOX_FIELDS, values)}


def _export_image_rows(
    shard: Path,
    source: str,
    columns: list[str],
    schema_metadata: dict[bytes, bytes] | None,
    narrow: list[str],
) -> list[dict[str, Any]]:
    """The rows of one image shard, after checking its columns against the first shard's;
    its schema's key-value metadata put in ``schema_metadata`` when given, its float32 box
    columns (an older export) in ``narrow``."""
    table = read_parquet(shard, source, IMAGE_COLUMNS)
    if schema_metadata is not None:
        schema_metadata.update(table.schema.metadata or {})
    image_type = table.schema.field("image").type
    if not (pa.types.is_struct(image_type) and image_type.get_field_index("bytes") != -1):
        raise NovaInputError(
            f"'image' must be a struct with the embedded PNG in 'bytes', got {image_type}",
            source=source,
            field="image",
        )
    if columns and table.column_names != columns:
        differing = sorted(set(table.column_names) ^ set(columns)) or ["(column order)"]
        raise NovaInputError(
            f"the columns differ from the first image shard's ({', '.join(differing)})",
            source=source,
            field=differing[0],
        )
    columns[:] = table.column_names
    narrow[:] = float32_box_columns(table.schema)
    rows: list[dict[str, Any]] = table.to_pylist()
    return rows


def read(
    root: Path, warnings: list[str], schema_metadata: dict[bytes, bytes] | None = None
) -> tuple[list[RawImage], list[str]]:
    """The image rows of an export folder (its ``images`` shards) and its extra meta keys.

    Args:
        root: the export folder.
        warnings: receives the warnings of the release the export was made from, as
            ``nova export`` recorded them in the shards' metadata (nothing is skipped here),
            and one saying so when the boxes are stored as float32 (an older export).
        schema_metadata: when given, receives the first image shard's parquet schema
            key-value metadata (where the provenance is), so nothing opens it a second time.

    Returns:
        The unvalidated rows, each holding its embedded PNG (``novabench.data.validate``
        checks them against the row's ``width``/``height``), and the release's extra meta
        keys recovered from the card (see ``_export_extra_keys``).

    Raises:
        NovaInputError: no image shard, a shard with other columns than the first, a
            malformed box or rater entry, naming the shard and row; an incomplete export
            (a ``test-i-of-n`` shard missing, fewer images than the card records, an image
            a case row lists without an image row).

    Example:
        >>> read(Path("."), [])  # doctest: +IGNORE_EXCEPTION_DETAIL
        Traceback (most recent call last):
        novabench.errors.NovaInputError: .: no image shards
    """
    shards = image_shards(root)
    if not shards:
        raise NovaInputError(
            f"no image shards: expected {IMAGE_DIR}/test-*.parquet (the `images` configuration "
            "written by `nova export`)",
            source=str(root),
        )
    _check_shard_set(root, IMAGE_DIR, shards)
    card = _card_text(root)  # read once: the extra keys' names and the recorded counts
    columns: list[str] = []
    extra: dict[str, str] | None = None  # column -> meta key
    raws: list[RawImage] = []
    narrow_told = False
    for shard in shards:
        source = shard.relative_to(root).as_posix()
        first = shard == shards[0]
        metadata: dict[bytes, bytes] = {}
        narrow: list[str] = []
        rows = _export_image_rows(shard, source, columns, metadata if first else None, narrow)
        if first:
            if schema_metadata is not None:
                schema_metadata.update(metadata)
            warnings.extend(recorded_warnings(metadata, source))
        told = None if narrow_told else float32_box_warning(narrow, source)
        if told:  # an older export: said once, for its first shard of float32 boxes
            warnings.append(told)
            narrow_told = True
        if extra is None:
            extra_names = [column for column in columns if column not in IMAGE_COLUMNS]
            extra = dict(zip(extra_names, _export_extra_keys(card, extra_names)))
        for index, row in enumerate(rows):
            image = row["image"]
            raw = RawImage.from_parquet_row(
                row,
                source,
                index,
                caption_column="caption",
                image_path=None,
                meta={},
                embedded=True,
                image_bytes=image.get("bytes") if isinstance(image, dict) else None,
                size=(row["width"], row["height"]),
            )
            for position, values in enumerate(row["boxes"] or []):
                prefix = f"boxes[{position}]."
                box = _export_box(values, source, raw.where(), prefix, "boxes" in narrow)
                raw.boxes.append(RawBox(box, None, source, raw.where(), prefix))
            for entry_index, entry in enumerate(row["rater_boxes"] or []):
                entry_prefix = f"rater_boxes[{entry_index}]."
                rater = entry.get("rater") if isinstance(entry, dict) else None
                if not isinstance(rater, str) or not rater.strip():
                    raise NovaInputError(
                        f"rater name must be a non-empty string, got {rater!r}",
                        source=source,
                        record=raw.where(),
                        field=entry_prefix + "rater",
                    )
                for position, values in enumerate(entry.get("boxes") or []):
                    prefix = f"{entry_prefix}boxes[{position}]."
                    box = _export_box(values, source, raw.where(), prefix, "rater_boxes" in narrow)
                    raw.boxes.append(RawBox(box, rater, source, raw.where(), prefix))
            raw.meta = {key: row[key] for key in FIXED_META_KEYS}
            raw.meta.update({key: row[column] for column, key in extra.items()})
            raws.append(raw)
        del rows  # the PNG bytes now live in the raw images only
    _check_complete(root, raws, card)
    return raws, list((extra or {}).values())


# --------------------------------------------------------------------------- writer


def _leaf_paths(name: str, arrow_type: pa.DataType) -> Iterator[str]:
    """Parquet column paths under one top-level column (``col.list.element.field``)."""
    if pa.types.is_struct(arrow_type):
        for child in arrow_type:
            yield from _leaf_paths(f"{name}.{child.name}", child.type)
    elif pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        yield from _leaf_paths(f"{name}.list.element", arrow_type.value_type)
    else:
        yield name


def _column_options(features: datasets.Features) -> dict[str, Any]:
    """PNG bytes are already compressed: store them plain; compress everything else."""
    compression: dict[str, str] = {}
    use_dictionary: list[str] = []
    column_encoding: dict[str, str] = {}
    for name, feature in features.items():
        for leaf in _leaf_paths(name, features.arrow_schema.field(name).type):
            if isinstance(feature, datasets.Image) and leaf.endswith(".bytes"):
                compression[leaf] = "none"
                column_encoding[leaf] = "PLAIN"
            else:
                compression[leaf] = "snappy"
                use_dictionary.append(leaf)
    return {
        "compression": compression,
        "use_dictionary": use_dictionary,
        "column_encoding": column_encoding,
    }


def _row_bytes(value: Any) -> int:
    """A cheap estimate of a row's size, to bound row groups and shards."""
    if isinstance(value, (bytes, bytearray, str)):
        return len(value)
    if isinstance(value, Mapping):
        return sum(_row_bytes(item) for item in value.values())
    if isinstance(value, (list, tuple)):
        return 8 + sum(_row_bytes(item) for item in value)
    return 8


class _ShardWriter:
    """Writes rows of one configuration as ``test-XXXXX-of-YYYYY.parquet`` shards, streaming."""

    def __init__(
        self,
        folder: Path,
        features: datasets.Features,
        *,
        max_shard_bytes: int,
        rows_per_shard: int | None,
        source: str,
        provenance: Mapping[str, Any] | None = None,
        release_warnings: list[str] | None = None,
    ) -> None:
        self.folder = folder
        self.features = features
        self.schema = features.arrow_schema
        if provenance:  # kept beside datasets' own "huggingface" key, so a re-export knows it
            self.schema = self.schema.with_metadata(
                {**(self.schema.metadata or {}), **provenance_metadata(provenance)}
            )
        if release_warnings is not None:  # so a reader of the export is told them again
            self.schema = self.schema.with_metadata(
                {**(self.schema.metadata or {}), **warnings_metadata(release_warnings)}
            )
        self.options = _column_options(features)
        self.max_shard_bytes = max_shard_bytes
        self.rows_per_shard = rows_per_shard
        self.source = source
        self.num_examples = 0
        self.num_bytes = 0
        self._shards: list[Path] = []
        self._writer: pq.ParquetWriter | None = None
        self._shard_rows = 0
        self._shard_bytes = 0
        self._group: list[dict[str, Any]] = []
        self._group_bytes = 0
        folder.mkdir(parents=True, exist_ok=True)

    def add(self, row: dict[str, Any]) -> None:
        size = _row_bytes(row)
        shard_full = self._shard_rows > 0 and (
            self._shard_bytes + size > self.max_shard_bytes
            or (self.rows_per_shard is not None and self._shard_rows >= self.rows_per_shard)
        )
        if shard_full:
            self._close_shard()
        self._group.append(row)
        self._group_bytes += size
        self._shard_rows += 1
        self._shard_bytes += size
        if len(self._group) >= ROW_GROUP_MAX_ROWS or self._group_bytes >= ROW_GROUP_MAX_BYTES:
            self._flush_group()

    def _table(self, rows: list[dict[str, Any]]) -> pa.Table:
        try:
            return pa.Table.from_pylist(rows, schema=self.schema)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError):
            for row in rows:  # find the row to name in the error
                for column in self.schema.names:
                    try:
                        pa.array([row.get(column)], type=self.schema.field(column).type)
                    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError) as error:
                        raise NovaInputError(
                            f"value does not fit the {self.features[column]!r} feature: {error}",
                            source=self.source,
                            record=str(row.get("filename") or row.get("case_id")),
                            field=column,
                        ) from error
            raise

    def _flush_group(self) -> None:
        if not self._group:
            return
        table = self._table(self._group)
        if self._writer is None:
            path = self.folder / f".shard-{len(self._shards):05d}.parquet"
            self._writer = pq.ParquetWriter(path, self.schema, **_WRITER_OPTIONS, **self.options)
            self._shards.append(path)
        self._writer.write_table(table, row_group_size=len(self._group))
        self.num_examples += table.num_rows
        self.num_bytes += table.nbytes
        self._group = []
        self._group_bytes = 0

    def _close_shard(self) -> None:
        self._flush_group()
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        self._shard_rows = 0
        self._shard_bytes = 0

    def close(self) -> list[Path]:
        """Flush, then give the shards their final ``test-i-of-n`` names (n is known only now)."""
        self._close_shard()
        if not self._shards:  # an empty configuration still gets one (empty) file
            writer = pq.ParquetWriter(
                self.folder / ".shard-00000.parquet", self.schema, **self.options
            )
            writer.close()
            self._shards.append(self.folder / ".shard-00000.parquet")
        total = len(self._shards)
        final = []
        for index, path in enumerate(self._shards):
            target = self.folder / f"{SPLIT}-{index:05d}-of-{total:05d}.parquet"
            path.rename(target)
            final.append(target)
        return final


def image_source(release: NovaRelease, image: ImageRecord) -> str:
    """Where an image comes from, for errors: its file, or the export folder that embeds it.

    Example:
        >>> from novabench.data.release import NovaRelease
        >>> image = ImageRecord("case0001_001.png", "case0001", "001", None, 1, 1, None, None,
        ...                     None, None, None, image_bytes=b"")
        >>> image_source(NovaRelease(root=Path("/exports/nova"), layout="export", images=[image]), image)
        '/exports/nova'
    """
    return str(image.image_path if image.image_path is not None else release.root)


def _image_rows(release: NovaRelease) -> Iterator[dict[str, Any]]:
    """Image rows with the PNG bytes embedded; a file that vanished since reading is an input error."""
    rows = iter_image_rows(release, embed_images=True)
    for image in release.images:
        try:
            row = next(rows)
        except OSError as error:
            raise NovaInputError(
                f"cannot read the image: {error}",
                source=image_source(release, image),
                record=image.filename,
                field="image",
            ) from error
        # Only the file name travels with the bytes: absolute paths would leak and break.
        row["image"] = {"bytes": row["image"]["bytes"], "path": image.filename}
        yield row


@dataclass(frozen=True)
class WrittenShards:
    """What ``write`` wrote: sizes per configuration and each one's first row (card preview)."""

    sizes: dict[str, ConfigSize]
    first_image_row: dict[str, Any] | None
    first_case_row: dict[str, Any] | None


def write(
    release: NovaRelease,
    root: Path,
    *,
    max_shard_bytes: int = DEFAULT_MAX_SHARD_BYTES,
    rows_per_shard: int | None = None,
    progress: bool = False,
) -> WrittenShards:
    """Write the ``images`` and ``cases`` shards of a release under ``root/data/``.

    Args:
        release: a release from ``novabench.data.release.read_release``.
        root: the export folder (the caller writes it atomically and adds the card).
        max_shard_bytes: upper bound of one image shard's data size (a single larger row
            still gets its own shard).
        rows_per_shard: optional upper bound of rows per image shard.
        progress: show a progress bar over the images (on a terminal).

    Returns:
        A ``WrittenShards``.

    Raises:
        NovaInputError: an image that cannot be read any more, or a value that does not fit
            its feature, naming the image and column.

    Example:
        >>> import sys, tempfile
        >>> sys.path.insert(0, "tests")
        >>> from release_factory import write_v1_release
        >>> from novabench.data.release import read_release
        >>> release = read_release(write_v1_release(tempfile.mkdtemp(), image_size=(64, 64)))
        >>> written = write(release, Path(tempfile.mkdtemp()))
        >>> written.sizes["images"].num_examples, written.first_case_row["case_id"]
        (6, 'case0001')
    """
    features = {
        "images": image_features(release.extra_meta_keys),
        "cases": case_features(release.extra_meta_keys),
    }
    sizes: dict[str, ConfigSize] = {}
    first_image: dict[str, Any] | None = None
    images = _ShardWriter(
        root / IMAGE_DIR,
        features["images"],
        max_shard_bytes=max_shard_bytes,
        rows_per_shard=rows_per_shard,
        source=str(release.root),
        provenance=release.provenance,
        release_warnings=release.warnings,
    )
    bar = progress_bar(
        _image_rows(release),
        total=release.n_images,
        desc="export images",
        unit="img",
        enabled=progress,
    )
    for row in bar:
        if first_image is None:
            first_image = row
        images.add(row)
    written = images.close()
    sizes["images"] = ConfigSize(
        images.num_examples, images.num_bytes, sum(p.stat().st_size for p in written)
    )

    first_case: dict[str, Any] | None = None
    cases = _ShardWriter(
        root / CASE_DIR,
        features["cases"],
        max_shard_bytes=max(max_shard_bytes, DEFAULT_MAX_SHARD_BYTES),
        rows_per_shard=None,
        source=str(release.root),
        provenance=release.provenance,
        release_warnings=release.warnings,
    )
    for row in iter_case_rows(release):
        if first_case is None:
            first_case = row
        cases.add(row)
    written = cases.close()
    sizes["cases"] = ConfigSize(
        cases.num_examples, cases.num_bytes, sum(p.stat().st_size for p in written)
    )
    return WrittenShards(sizes, first_image, first_case)
