"""Read a NOVA release from disk, validate it, and hand out records.

The two official on-disk layouts hold the same information (see ``NOVA_REFERENCE.md``):

- ``v1``: ``data/nova-v1.parquet`` (one row per image, a per-case ``meta`` struct and a
  ``bboxes`` list of ``{x, y, width, height, source}``) and PNGs under ``images/``;
- ``legacy``: ``captions.csv``, ``case_metadata.csv``, ``bboxes_gold.csv``,
  ``bboxes_raters.csv`` and PNGs under ``test/``.

A third, ``export``, is a folder written by ``nova export`` (the form a Hub download takes):
``README.md`` whose YAML header has ``configs:``, and Parquet shards
``data/images/test-*.parquet`` (one row per image, the PNG bytes embedded in the ``image``
struct ``{bytes, path}``, boxes as float32 lists ``[x, y, width, height]``, extra meta keys as
string columns named by ``schema.extra_columns``) plus ``data/cases/...`` (not read here: it
repeats the image rows per case). ``read_release`` reads the image shards and returns the
same records as the release the export was made from; its images carry their bytes
(``ImageRecord.image_bytes``) instead of a path. ``novabench.data.hf.load_nova`` loads any of
the three as a ``datasets`` dataset.

Rows are joined by filename (the parquet is not sorted like the images). Every problem
raises ``NovaInputError`` naming the file, the row (0-based parquet row or 1-based CSV line,
plus the filename) and the field. Image sizes come from the PNG headers; in an export the
``width``/``height`` columns must match them.

Boxes are kept verbatim when they lie at most ``BOX_TOLERANCE`` (10 %) of the image size
beyond its border and overlap the image; further out, or with a non-finite coordinate or a
non-positive size, they are an error.
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import io
import json
import math
import os
import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any, Literal

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image, UnidentifiedImageError

from novabench.data.schema import IMAGE_COLUMNS, extra_columns
from novabench.errors import NovaInputError

__all__ = [
    "BOX_TOLERANCE",
    "CaseRecord",
    "ImageRecord",
    "Layout",
    "NovaRelease",
    "detect_layout",
    "is_placeholder_diagnosis",
    "iter_case_rows",
    "iter_image_rows",
    "read_release",
]

Layout = Literal["v1", "legacy", "export"]

V1_PARQUET = "data/nova-v1.parquet"
V1_IMAGE_DIR = "images"
V1_REQUIRED_COLUMNS = ("filename", "case_id", "scan_id", "caption_text", "image_path", "meta", "bboxes")
V1_OPTIONAL_COLUMNS = ("split",)
LEGACY_IMAGE_DIR = "test"
LEGACY_FILES: dict[str, tuple[str, ...]] = {
    "captions.csv": ("filename", "case_id", "scan_id", "caption"),
    "case_metadata.csv": ("case_id", "title", "publication_date", "clinical_history", "final_diagnosis"),
    "bboxes_gold.csv": ("filename", "x", "y", "width", "height"),
    "bboxes_raters.csv": ("filename", "rater", "x", "y", "width", "height"),
}
EXPORT_IMAGE_DIR = "data/images"
FIXED_META_KEYS = ("title", "publication_date", "clinical_history", "final_diagnosis")
BOX_FIELDS = ("x", "y", "width", "height")
GOLD_SOURCE = "gold"
#: How far (fraction of the image width/height) a box may extend beyond the image border.
BOX_TOLERANCE = 0.10
FILENAME_PATTERN = re.compile(r"^(case\d{4})_(\d{3})\.png$")

_PLACEHOLDER_PATTERN = re.compile(
    r"^(?:(?:the )?(?:final )?diagnosis(?: is| was)? )?"
    r"(?:not found|not available|not known|not given|not provided|not stated|unavailable"
    r"|n a|na|unknown|none|missing|tbd)$"
    r"|^no (?:final )?diagnosis(?: found| available| given)?$"
)


def is_placeholder_diagnosis(text: str | None) -> bool:
    """Whether a final diagnosis is a placeholder, i.e. missing ground truth.

    Case, punctuation and spacing are ignored; the whole text must be the placeholder
    (``"Unknown primary tumour"`` is a diagnosis). ``None`` and blank text count as missing.

    Args:
        text: a ``final_diagnosis`` value of the release.

    Returns:
        True for "Final diagnosis not found." and close variants ("not available", "N/A",
        "unknown", "Diagnosis: none", ...).

    Example:
        >>> is_placeholder_diagnosis("Final diagnosis not found.")
        True
        >>> is_placeholder_diagnosis("  n/a ")
        True
        >>> is_placeholder_diagnosis("Unknown primary tumour")
        False
    """
    if text is None:
        return True
    normalised = " ".join(re.sub(r"[^0-9a-z]+", " ", str(text).lower()).split())
    return not normalised or bool(_PLACEHOLDER_PATTERN.match(normalised))


@dataclass
class ImageRecord:
    """One validated image of a release with its ground truth.

    ``boxes`` are the gold (consensus) boxes ``[x, y, width, height]`` in pixels;
    ``rater_boxes`` is ``[{"rater": name, "boxes": [[x, y, w, h], ...]}, ...]`` sorted by
    rater name; ``extra`` maps every extra meta key of the release to this case's value
    (None when absent). Case-level fields are identical across the images of one case.

    The PNG is the file ``image_path`` (v1 and legacy layouts) or, for a release read from a
    ``nova export`` folder, the embedded ``image_bytes`` (``image_path`` is then None);
    ``read_bytes()`` gives it either way.
    """

    filename: str
    case_id: str
    scan_id: str
    image_path: Path | None
    width: int
    height: int
    caption: str | None
    clinical_history: str | None
    final_diagnosis: str | None
    title: str | None
    publication_date: str | None
    boxes: list[list[float]] = field(default_factory=list)
    rater_boxes: list[dict[str, Any]] = field(default_factory=list)
    extra: dict[str, str | None] = field(default_factory=dict)
    image_bytes: bytes | None = field(default=None, repr=False)

    def read_bytes(self) -> bytes:
        """The PNG file's bytes: the embedded ones, else read from ``image_path``.

        Raises:
            OSError: the file cannot be read (e.g. it vanished since the release was read).
            ValueError: the record has neither bytes nor a path.

        Example:
            >>> ImageRecord("case0001_001.png", "case0001", "001", None, 1, 1, None, None, None,
            ...             None, None, image_bytes=b"PNG...").read_bytes()
            b'PNG...'
        """
        if self.image_bytes is not None:
            return self.image_bytes
        if self.image_path is None:
            raise ValueError(f"{self.filename}: the record has neither image bytes nor an image path")
        return self.image_path.read_bytes()


@dataclass
class CaseRecord:
    """One case: its per-case metadata and its images ordered by scan id then filename."""

    case_id: str
    title: str | None
    publication_date: str | None
    clinical_history: str | None
    final_diagnosis: str | None
    extra: dict[str, str | None]
    images: list[ImageRecord]

    @property
    def filenames(self) -> list[str]:
        """Filenames of the case's images, in order."""
        return [image.filename for image in self.images]

    @property
    def captions(self) -> list[str | None]:
        """Captions of the case's images, in order."""
        return [image.caption for image in self.images]

    @property
    def boxes(self) -> list[list[list[float]]]:
        """Gold boxes of each image of the case, in order."""
        return [image.boxes for image in self.images]


@dataclass
class NovaRelease:
    """A validated release: records plus what was noticed while reading it."""

    root: Path
    layout: Layout
    images: list[ImageRecord]
    extra_meta_keys: tuple[str, ...] = ()
    warnings: list[str] = field(default_factory=list)
    provenance: dict[str, Any] | None = None  # set when novabench made it (sample, ingest)

    def cases(self) -> list[CaseRecord]:
        """Cases ordered by case id, each with its images ordered by scan id and filename."""
        grouped: dict[str, list[ImageRecord]] = {}
        for image in self.images:
            grouped.setdefault(image.case_id, []).append(image)
        cases = []
        for case_id in sorted(grouped):
            images = sorted(grouped[case_id], key=lambda image: (image.scan_id, image.filename))
            first = images[0]
            cases.append(
                CaseRecord(
                    case_id=case_id,
                    title=first.title,
                    publication_date=first.publication_date,
                    clinical_history=first.clinical_history,
                    final_diagnosis=first.final_diagnosis,
                    extra=dict(first.extra),
                    images=images,
                )
            )
        return cases

    @property
    def n_images(self) -> int:
        """Number of images."""
        return len(self.images)

    @property
    def n_cases(self) -> int:
        """Number of distinct cases."""
        return len({image.case_id for image in self.images})

    @property
    def n_gold_boxes(self) -> int:
        """Number of gold boxes over all images."""
        return sum(len(image.boxes) for image in self.images)

    @property
    def n_images_without_gold(self) -> int:
        """Images with no gold box (null ``bboxes`` or rater boxes only)."""
        return sum(1 for image in self.images if not image.boxes)

    @property
    def n_placeholder_diagnoses(self) -> int:
        """Cases whose final diagnosis is a placeholder (see ``is_placeholder_diagnosis``)."""
        return sum(1 for case in self.cases() if is_placeholder_diagnosis(case.final_diagnosis))

    @property
    def images_per_case(self) -> dict[int, int]:
        """Histogram ``{images in a case: number of such cases}``, sorted by key."""
        counts = Counter(Counter(image.case_id for image in self.images).values())
        return dict(sorted(counts.items()))

    @property
    def raters(self) -> tuple[str, ...]:
        """Names of the individual raters seen in the boxes, sorted."""
        return tuple(sorted({entry["rater"] for image in self.images for entry in image.rater_boxes}))

    def fingerprint(self) -> str:
        """A digest of the release content (records and image bytes), not of its location.

        Two copies of the same release share it; any change of text, box or pixel changes
        it. The builder keys its cache on it, so an edited release is never served stale.

        Example:
            >>> NovaRelease(root=Path("."), layout="v1", images=[]).fingerprint()[:8]
            '4f53cda1'
        """
        digest = hashlib.sha256()
        for image in self.images:
            fields = {
                k: v for k, v in dataclasses.asdict(image).items() if k not in ("image_path", "image_bytes")
            }
            digest.update(json.dumps(fields, sort_keys=True, ensure_ascii=False).encode("utf-8"))
            digest.update(hashlib.sha256(image.read_bytes()).digest())
        digest.update(json.dumps(list(self.extra_meta_keys)).encode("utf-8"))
        return digest.hexdigest()[:16]

    def summary(self) -> dict[str, Any]:
        """Counts that describe the release, JSON-ready (``nova info`` prints them).

        Example:
            >>> release = NovaRelease(root=Path("."), layout="v1", images=[])
            >>> release.summary()["n_images"]
            0
        """
        return {
            "root": str(self.root),
            "layout": self.layout,
            "n_images": self.n_images,
            "n_cases": self.n_cases,
            "n_gold_boxes": self.n_gold_boxes,
            "n_images_without_gold": self.n_images_without_gold,
            "n_placeholder_diagnoses": self.n_placeholder_diagnoses,
            "raters": list(self.raters),
            "images_per_case": {str(k): v for k, v in self.images_per_case.items()},
            "extra_meta_keys": list(self.extra_meta_keys),
            "warnings": list(self.warnings),
        }


# --------------------------------------------------------------------------- layout


def _front_matter(readme: Path) -> str:
    text = readme.read_text(encoding="utf-8", errors="replace")
    if not text.startswith("---"):
        return ""
    end = text.find("\n---", 3)
    return text[3:end] if end != -1 else ""


def detect_layout(path: str | Path) -> Layout:
    """Tell which layout a release folder uses.

    Args:
        path: the release folder.

    Returns:
        ``"v1"`` (``data/nova-v1.parquet`` and ``images/``), ``"legacy"`` (``captions.csv``
        and the other CSVs, ``test/``) or ``"export"`` (``README.md`` whose YAML header has
        ``configs:``, and Parquet files under ``data/``).

    Raises:
        NovaInputError: the folder is missing or matches none of these.

    Example:
        >>> import tempfile
        >>> folder = Path(tempfile.mkdtemp())
        >>> (folder / "data").mkdir(); (folder / "images").mkdir()
        >>> _ = (folder / "data" / "nova-v1.parquet").write_bytes(b"")
        >>> detect_layout(folder)
        'v1'
    """
    root = Path(path)
    if not root.exists():
        raise NovaInputError("no such release folder", source=str(root))
    if not root.is_dir():
        raise NovaInputError("expected the release folder, not a file", source=str(root))
    if (root / V1_PARQUET).is_file():
        if not (root / V1_IMAGE_DIR).is_dir():
            raise NovaInputError(
                f"found {V1_PARQUET} but no {V1_IMAGE_DIR}/ folder of PNGs next to data/",
                source=str(root),
            )
        return "v1"
    if (root / "captions.csv").is_file():
        if not (root / LEGACY_IMAGE_DIR).is_dir():
            raise NovaInputError(
                f"found captions.csv (legacy layout) but no {LEGACY_IMAGE_DIR}/ folder of PNGs",
                source=str(root),
            )
        return "legacy"
    readme = root / "README.md"
    if readme.is_file() and re.search(r"^configs:", _front_matter(readme), re.MULTILINE):
        if any((root / "data").rglob("*.parquet")):
            return "export"
    raise NovaInputError(
        f"not a NOVA release: looked for {V1_PARQUET} + {V1_IMAGE_DIR}/ (v1), captions.csv + "
        f"{LEGACY_IMAGE_DIR}/ (legacy), or README.md with a `configs:` YAML header + "
        "data/*.parquet (nova export)",
        source=str(root),
    )


# --------------------------------------------------------------------------- raw rows


@dataclass
class _RawBox:
    values: dict[str, Any]
    rater: str | None  # None: gold
    source: str
    record: str
    field_prefix: str  # "bboxes[2]." for v1, "" for a CSV line


@dataclass
class _RawImage:
    source: str
    record: str
    filename: Any
    case_id: Any
    scan_id: Any
    caption: Any
    image_path: Any
    meta: dict[str, Any]
    boxes: list[_RawBox] = field(default_factory=list)
    embedded: bool = False  # export layout: the PNG is in the row (image_path unused)
    image_bytes: Any = None  # export layout: the embedded PNG
    size: tuple[Any, Any] | None = None  # export layout: the row's (width, height)

    def where(self) -> str:
        return f"{self.record} ({self.filename})" if isinstance(self.filename, str) else self.record


def _text(value: Any) -> str | None:
    """Metadata as text: None kept, lists joined with "; " (as the source exports do)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return "; ".join(str(item) for item in value)
    return str(value)


def _read_parquet(path: Path, source: str, required: Sequence[str]) -> pa.Table:
    """A parquet file of the release, with its required columns checked (errors name them)."""
    try:
        table = pq.read_table(path)
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


def _read_v1(root: Path, warnings: list[str]) -> tuple[list[_RawImage], list[str]]:
    source = V1_PARQUET
    table = _read_parquet(root / V1_PARQUET, source, V1_REQUIRED_COLUMNS)
    meta_type = table.schema.field("meta").type
    if not pa.types.is_struct(meta_type):
        raise NovaInputError(f"'meta' must be a struct, got {meta_type}", source=source, field="meta")
    meta_keys = [meta_type.field(i).name for i in range(meta_type.num_fields)]
    for key in FIXED_META_KEYS:
        if key not in meta_keys:
            raise NovaInputError(
                f"required meta key '{key}' is missing (meta keys: {', '.join(meta_keys)})",
                source=source,
                field=f"meta.{key}",
            )
    ignored = [c for c in table.column_names if c not in V1_REQUIRED_COLUMNS + V1_OPTIONAL_COLUMNS]
    if ignored:
        warnings.append(f"{source}: columns not part of the NOVA v1 layout were ignored: {', '.join(ignored)}")
    if "split" in table.column_names:
        splits = Counter(table.column("split").to_pylist())
        others = {k: v for k, v in splits.items() if k != "test"}
        if others:
            warnings.append(f"{source}: rows with a split other than 'test' were kept: {others}")
    raws = []
    for index, row in enumerate(table.to_pylist()):
        raw = _RawImage(
            source=source,
            record=f"row {index}",
            filename=row["filename"],
            case_id=row["case_id"],
            scan_id=row["scan_id"],
            caption=row["caption_text"],
            image_path=row["image_path"],
            meta=dict(row["meta"] or {}),
        )
        for position, box in enumerate(row["bboxes"] or []):
            prefix = f"bboxes[{position}]."
            if not isinstance(box, dict):
                raise NovaInputError("box is null", source=source, record=raw.where(), field=prefix[:-1])
            rater = box.get("source")
            if not isinstance(rater, str) or not rater.strip():
                raise NovaInputError(
                    f"box source must name 'gold' or a rater, got {rater!r}",
                    source=source,
                    record=raw.where(),
                    field=prefix + "source",
                )
            values = {name: box.get(name) for name in BOX_FIELDS}
            raw.boxes.append(
                _RawBox(values, None if rater == GOLD_SOURCE else rater, source, raw.where(), prefix)
            )
        raws.append(raw)
    return raws, [key for key in meta_keys if key not in FIXED_META_KEYS]


def _read_csv(root: Path, name: str) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    """Header and ``(line number, row)`` pairs of a CSV file, text kept exactly."""
    path = root / name
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.reader(handle)
            header = next(reader, None)
            if header is None:
                raise NovaInputError("the file is empty (no header)", source=name)
            missing = [column for column in LEGACY_FILES[name] if column not in header]
            if missing:
                raise NovaInputError(
                    f"required column '{missing[0]}' is missing (columns: {', '.join(header)})",
                    source=name,
                    field=missing[0],
                )
            rows = []
            while True:
                first_line = reader.line_num + 1  # a quoted field may span several lines
                values = next(reader, None)
                if values is None:
                    break
                if not values:
                    continue  # csv yields [] only for a truly blank line
                if len(values) != len(header):
                    raise NovaInputError(
                        f"expected {len(header)} fields, got {len(values)}",
                        source=name,
                        record=f"line {first_line}",
                    )
                rows.append((first_line, dict(zip(header, values))))
    except FileNotFoundError as error:
        raise NovaInputError("required file of the legacy layout is missing", source=name) from error
    except (UnicodeDecodeError, csv.Error) as error:
        raise NovaInputError(f"cannot read the CSV file: {error}", source=name) from error
    return header, rows


def _read_legacy(root: Path, warnings: list[str]) -> tuple[list[_RawImage], list[str]]:
    meta_header, meta_rows = _read_csv(root, "case_metadata.csv")
    metadata: dict[str, dict[str, str]] = {}
    for line, row in meta_rows:
        case_id = row["case_id"]
        if case_id in metadata:
            warnings.append(
                f"case_metadata.csv, line {line}: second row for case {case_id}; the first was kept"
            )
            continue
        metadata[case_id] = {key: value for key, value in row.items() if key != "case_id"}
    _, caption_rows = _read_csv(root, "captions.csv")
    raws: list[_RawImage] = []
    by_filename: dict[str, _RawImage] = {}
    for line, row in caption_rows:
        raw = _RawImage(
            source="captions.csv",
            record=f"line {line}",
            filename=row["filename"],
            case_id=row["case_id"],
            scan_id=row["scan_id"],
            caption=row["caption"],
            image_path=f"{LEGACY_IMAGE_DIR}/{row['filename']}",
            meta={},
        )
        if row["case_id"] not in metadata:
            raise NovaInputError(
                f"case '{row['case_id']}' has no row in case_metadata.csv",
                source="captions.csv",
                record=raw.where(),
                field="case_id",
            )
        raw.meta = dict(metadata[row["case_id"]])
        raws.append(raw)
        by_filename.setdefault(row["filename"], raw)  # duplicates are reported by validation
    box_files = ["bboxes_gold.csv", "bboxes_raters.csv"]
    if not (root / "bboxes_raters.csv").is_file():
        box_files.remove("bboxes_raters.csv")
        warnings.append("bboxes_raters.csv is missing: no rater boxes were read")
    for name in box_files:
        for line, row in _read_csv(root, name)[1]:
            owner = by_filename.get(row["filename"])
            record = f"line {line} ({row['filename']})"
            if owner is None:
                raise NovaInputError(
                    "box for a filename that is not in captions.csv", source=name, record=record, field="filename"
                )
            rater = None if name == "bboxes_gold.csv" else row["rater"]
            if rater is not None and not rater.strip():
                raise NovaInputError("rater name is empty", source=name, record=record, field="rater")
            owner.boxes.append(_RawBox({k: row[k] for k in BOX_FIELDS}, rater, name, record, ""))
    extra = [key for key in meta_header if key != "case_id" and key not in FIXED_META_KEYS]
    return raws, extra


_CARD_EXTRA_ROW = re.compile(
    r"^\| `(?P<column>[0-9A-Za-z_]+)` \| `string` \| Extra per-case field of the release "
    r"\(`meta` key `(?P<key>.*)`\), kept verbatim\. \|$",
    re.MULTILINE,
)


def _export_extra_keys(root: Path, columns: list[str]) -> list[str]:
    """The release's extra meta keys behind the export's extra columns.

    ``nova export`` names the columns with ``extra_columns`` (``"link (Eurorad)"`` becomes
    ``link_Eurorad``) and its card's field table records each original key. Keys found there
    are used when they map back to exactly these columns; otherwise the column names are the
    keys (an edited card, or a folder written by other means).
    """
    try:
        card = (root / "README.md").read_text(encoding="utf-8", errors="replace")
    except OSError:
        card = ""
    origin: dict[str, str] = {}
    for match in _CARD_EXTRA_ROW.finditer(card):
        origin.setdefault(match.group("column"), match.group("key"))
    keys = [origin.get(column, column) for column in columns]
    if list(extra_columns(keys).values()) == columns and len(set(keys)) == len(keys):
        return keys
    return list(columns)


def _shortest_float32(value: Any) -> Any:
    """A float read from a float32 column as the shortest decimal that is that float32.

    ``159.2675`` is stored as the float32 nearest to it, which Arrow widens to
    ``159.26750183105469``; the release had ``159.2675``. Both are the same float32, so the
    short one is kept and a release read from its export has the boxes of the original.
    Other values are returned unchanged (validation reports them).
    """
    if isinstance(value, float) and math.isfinite(value):
        return float(str(np.float32(value)))
    return value


def _export_box(values: Any, source: str, record: str, prefix: str) -> dict[str, Any]:
    """``[x, y, width, height]`` of an export row as a dict keyed by ``BOX_FIELDS``."""
    if not isinstance(values, (list, tuple)) or len(values) != len(BOX_FIELDS):
        raise NovaInputError(
            f"a box must be a list [x, y, width, height], got {values!r}",
            source=source,
            record=record,
            field=prefix[:-1],
        )
    return {name: _shortest_float32(value) for name, value in zip(BOX_FIELDS, values)}


def _export_image_rows(shard: Path, source: str, columns: list[str]) -> list[dict[str, Any]]:
    """The rows of one image shard, after checking its columns against the first shard's."""
    table = _read_parquet(shard, source, IMAGE_COLUMNS)
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
    rows: list[dict[str, Any]] = table.to_pylist()
    return rows


def _read_export(root: Path, warnings: list[str]) -> tuple[list[_RawImage], list[str]]:
    shards = sorted(
        path for path in (root / EXPORT_IMAGE_DIR).glob("*.parquet") if not path.name.startswith(".")
    )
    if not shards:
        raise NovaInputError(
            f"no image shards: expected {EXPORT_IMAGE_DIR}/test-*.parquet (the `images` configuration "
            "written by `nova export`)",
            source=str(root),
        )
    columns: list[str] = []
    extra: dict[str, str] | None = None  # column -> meta key
    raws: list[_RawImage] = []
    for shard in shards:
        source = shard.relative_to(root).as_posix()
        rows = _export_image_rows(shard, source, columns)
        if extra is None:
            extra_names = [column for column in columns if column not in IMAGE_COLUMNS]
            extra = dict(zip(extra_names, _export_extra_keys(root, extra_names)))
        for index, row in enumerate(rows):
            image = row["image"]
            raw = _RawImage(
                source=source,
                record=f"row {index}",
                filename=row["filename"],
                case_id=row["case_id"],
                scan_id=row["scan_id"],
                caption=row["caption"],
                image_path=None,
                meta={},
                embedded=True,
                image_bytes=image.get("bytes") if isinstance(image, dict) else None,
                size=(row["width"], row["height"]),
            )
            for position, values in enumerate(row["boxes"] or []):
                prefix = f"boxes[{position}]."
                box = _export_box(values, source, raw.where(), prefix)
                raw.boxes.append(_RawBox(box, None, source, raw.where(), prefix))
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
                    box = _export_box(values, source, raw.where(), prefix)
                    raw.boxes.append(_RawBox(box, rater, source, raw.where(), prefix))
            raw.meta = {key: row[key] for key in FIXED_META_KEYS}
            raw.meta.update({key: row[column] for column, key in extra.items()})
            raws.append(raw)
        del rows  # the PNG bytes now live in the raw images only
    return raws, list((extra or {}).values())


# --------------------------------------------------------------------------- validation


def _png_size(image_file: Path | io.BytesIO, label: str, where: dict[str, str]) -> tuple[int, int]:
    """Width and height of a PNG after ``PIL.Image.verify`` (the pixels are not decoded)."""
    try:
        with Image.open(image_file) as image:
            image_format, (width, height) = image.format, image.size
            image.verify()
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as error:
        raise NovaInputError(f"unreadable or corrupt PNG {label}: {error}", **where) from error
    if image_format != "PNG":
        raise NovaInputError(f"{label} is a {image_format} image, not a PNG", **where)
    return width, height


def _embedded_image_size(raw: _RawImage) -> tuple[int, int]:
    """Size of an export row's embedded PNG; the row's ``width``/``height`` must equal it."""
    where = dict(source=raw.source, record=raw.where(), field="image.bytes")
    data = raw.image_bytes
    if not isinstance(data, (bytes, bytearray)) or not data:
        raise NovaInputError(
            f"the PNG bytes are missing (image.bytes is {'empty' if data is not None else 'null'}); "
            "a `nova export` folder embeds every image",
            **where,
        )
    width, height = _png_size(io.BytesIO(data), f"embedded image {raw.filename}", where)
    for name, claimed, actual in zip(("width", "height"), raw.size or (None, None), (width, height)):
        if claimed != actual or isinstance(claimed, bool):
            raise NovaInputError(
                f"{name} is {claimed!r} but the embedded PNG is {width}x{height}",
                source=raw.source,
                record=raw.where(),
                field=name,
            )
    return width, height


def _image_size(root: Path, raw: _RawImage) -> tuple[Path | None, int, int]:
    """The image file and its size; for an embedded image (export layout) no file."""
    if raw.embedded:  # by layout, so a v1 row with a null image_path is named as such
        return (None, *_embedded_image_size(raw))
    where = dict(source=raw.source, record=raw.where(), field="image_path")
    relative = raw.image_path
    if not isinstance(relative, str) or not relative.strip():
        raise NovaInputError(f"image path must be a non-empty string, got {relative!r}", **where)
    posix, windows = PurePosixPath(relative), PureWindowsPath(relative)
    if posix.is_absolute() or windows.is_absolute() or windows.drive or ".." in windows.parts:
        raise NovaInputError(f"image path {relative!r} escapes the release folder", **where)
    path = root / posix
    if not path.resolve().is_relative_to(root.resolve()):
        raise NovaInputError(f"image path {relative!r} escapes the release folder (symlink)", **where)
    if not path.is_file():
        raise NovaInputError(f"image file not found: {relative}", **where)
    width, height = _png_size(path, relative, where)
    return path, width, height


def _coordinate(box: _RawBox, name: str) -> float:
    value = box.values.get(name)
    where = dict(source=box.source, record=box.record, field=box.field_prefix + name)
    if isinstance(value, bool) or value is None or (isinstance(value, str) and not value.strip()):
        raise NovaInputError(f"{name} is missing or not a number: {value!r}", **where)
    try:
        number = float(value)
    except (TypeError, ValueError) as error:
        raise NovaInputError(f"{name} is not a number: {value!r}", **where) from error
    if not math.isfinite(number):
        raise NovaInputError(f"{name} must be finite, got {value!r}", **where)
    return number


def _validated_box(box: _RawBox, width: int, height: int) -> list[float]:
    x, y, w, h = (_coordinate(box, name) for name in BOX_FIELDS)
    for name, size in (("width", w), ("height", h)):
        if size <= 0:
            raise NovaInputError(
                f"{name} must be positive, got {size}",
                source=box.source,
                record=box.record,
                field=box.field_prefix + name,
            )
    slack_x, slack_y = BOX_TOLERANCE * width, BOX_TOLERANCE * height
    overlaps = x < width and y < height and x + w > 0 and y + h > 0
    within = x >= -slack_x and y >= -slack_y and x + w <= width + slack_x and y + h <= height + slack_y
    if not (overlaps and within):
        raise NovaInputError(
            f"box [x={x}, y={y}, width={w}, height={h}] lies outside the {width}x{height} image "
            f"(allowed: overlapping it and at most {BOX_TOLERANCE:.0%} of its size beyond the border)",
            source=box.source,
            record=box.record,
            field=box.field_prefix[:-1] or "x, y, width, height",
        )
    return [x, y, w, h]


def _check_identity(raw: _RawImage, seen: dict[str, str]) -> re.Match[str]:
    where = dict(source=raw.source, record=raw.where())
    match = FILENAME_PATTERN.match(raw.filename) if isinstance(raw.filename, str) else None
    if match is None:
        raise NovaInputError(
            f"filename {raw.filename!r} is not of the form caseNNNN_NNN.png", field="filename", **where
        )
    for name, expected in (("case_id", match.group(1)), ("scan_id", match.group(2))):
        value = getattr(raw, name)
        if value != expected:
            raise NovaInputError(
                f"{name} {value!r} does not match the filename (expected {expected!r})", field=name, **where
            )
    if raw.filename in seen:
        raise NovaInputError(
            f"duplicate filename, first seen at {seen[raw.filename]}", field="filename", **where
        )
    seen[raw.filename] = f"{raw.source}, {raw.record}"  # shards of an export are several files
    return match


def _build_records(
    root: Path, layout: Layout, raws: list[_RawImage], extra_keys: list[str], warnings: list[str]
) -> list[ImageRecord]:
    seen: dict[str, str] = {}
    for raw in raws:
        _check_identity(raw, seen)
    records: list[ImageRecord] = []
    first_of_case: dict[str, tuple[ImageRecord, _RawImage]] = {}
    owner_of_path: dict[Path, str] = {}
    for raw in sorted(raws, key=lambda r: r.filename):
        path, width, height = _image_size(root, raw)
        if path is not None:
            if path.resolve() in owner_of_path:
                raise NovaInputError(
                    f"image {raw.image_path} is already the image of {owner_of_path[path.resolve()]}",
                    source=raw.source,
                    record=raw.where(),
                    field="image_path",
                )
            owner_of_path[path.resolve()] = raw.filename
        gold: list[list[float]] = []
        by_rater: dict[str, list[list[float]]] = {}
        for box in raw.boxes:
            values = _validated_box(box, width, height)
            (gold if box.rater is None else by_rater.setdefault(box.rater, [])).append(values)
        meta = {key: _text(raw.meta.get(key)) for key in (*FIXED_META_KEYS, *extra_keys)}
        if raw.case_id in first_of_case:
            first, first_raw = first_of_case[raw.case_id]
            kept = {key: getattr(first, key) for key in FIXED_META_KEYS} | first.extra
            differing = [key for key in meta if meta[key] != kept[key]]
            if differing:
                warnings.append(
                    f"{raw.source}, {raw.where()}: meta {', '.join(differing)} differ from "
                    f"{first_raw.source}, {first_raw.where()} of the same case; the values of {first.filename} were kept"
                )
            meta = dict(kept)
        caption = _text(raw.caption)
        if caption is None or not caption.strip():
            warnings.append(f"{raw.source}, {raw.where()}: empty caption")
        record = ImageRecord(
            filename=raw.filename,
            case_id=raw.case_id,
            scan_id=raw.scan_id,
            image_path=path,
            width=width,
            height=height,
            caption=caption,
            clinical_history=meta["clinical_history"],
            final_diagnosis=meta["final_diagnosis"],
            title=meta["title"],
            publication_date=meta["publication_date"],
            boxes=gold,
            rater_boxes=[{"rater": name, "boxes": by_rater[name]} for name in sorted(by_rater)],
            extra={key: meta[key] for key in extra_keys},
            image_bytes=None if path is not None else bytes(raw.image_bytes),
        )
        first_of_case.setdefault(raw.case_id, (record, raw))
        records.append(record)
    return records


def read_release(path: str | os.PathLike[str]) -> NovaRelease:
    """Read and validate a NOVA release folder: official v1 or legacy layout, or ``nova export``.

    Everything but the pixels is validated: columns, filenames and ids, duplicates, image
    paths, PNG integrity (``PIL.Image.verify``) and sizes, boxes. An export folder (Parquet
    shards under ``data/images/``, PNGs embedded) gives the records of the release it was
    exported from, with ``layout == "export"``: each image holds its PNG bytes
    (``ImageRecord.image_bytes``, ``image_path`` None), the row's ``width``/``height`` must
    match the PNG, and float32 boxes come back as the shortest decimals that round to them.

    Args:
        path: the release folder.

    Returns:
        The ``NovaRelease``; ``.images`` sorted by filename.

    Raises:
        NovaInputError: naming the file, the row and the field of the first problem.

    Example:
        >>> import tempfile
        >>> from novabench.data.sample import write_sample_release
        >>> folder = write_sample_release(
        ...     Path(tempfile.mkdtemp()) / "nova", n_cases=2, progress=False)
        >>> release = read_release(folder)
        >>> release.layout, release.n_images, release.n_cases, release.raters
        ('v1', 7, 2, ('rater1', 'rater2'))
    """
    root = Path(path).expanduser().resolve()
    layout = detect_layout(root)
    warnings: list[str] = []
    if layout == "v1":
        raws, extra_keys = _read_v1(root, warnings)
    elif layout == "legacy":
        raws, extra_keys = _read_legacy(root, warnings)
    else:
        raws, extra_keys = _read_export(root, warnings)
    images = _build_records(root, layout, raws, extra_keys, warnings)
    return NovaRelease(
        root=root,
        layout=layout,
        images=images,
        extra_meta_keys=tuple(extra_keys),
        warnings=warnings,
        provenance=_read_provenance(root, layout, warnings),
    )


# --------------------------------------------------------------------------- provenance

PROVENANCE_METADATA_KEY = b"novabench.provenance"


def provenance_metadata(provenance: Mapping[str, Any]) -> dict[bytes, bytes]:
    """Parquet schema metadata recording which novabench command made a release or export.

    Readers that do not know the key ignore it, so the file stays in the official layout.

    Example:
        >>> provenance_metadata({"origin": "nova sample", "cases": 2, "seed": 0})
        {b'novabench.provenance': b'{"cases": 2, "origin": "nova sample", "seed": 0}'}
    """
    return {PROVENANCE_METADATA_KEY: json.dumps(dict(provenance), sort_keys=True).encode()}


def provenance_notice(provenance: Mapping[str, Any] | None) -> str | None:
    """The card notice for data novabench made itself; None for anything else.

    Example:
        >>> print(provenance_notice({"origin": "nova sample", "cases": 40, "seed": 0}))
        Synthetic sample made by novabench (`nova sample --cases 40 --seed 0`), not the NOVA release: slices of the MNI152 template with synthetic lesions, for trying the toolkit. Scores on it say nothing about clinical ability.
        >>> provenance_notice(None) is None
        True
    """
    if not provenance:
        return None
    origin = provenance.get("origin")
    if origin == "nova sample":
        return (
            f"Synthetic sample made by novabench (`nova sample --cases {provenance.get('cases')} "
            f"--seed {provenance.get('seed')}`), not the NOVA release: slices of the MNI152 "
            "template with synthetic lesions, for trying the toolkit. Scores on it say nothing "
            "about clinical ability."
        )
    if origin == "nova ingest":
        return (
            "Built with `nova ingest` from local NIfTI volumes and lesion masks, not the NOVA "
            "release: see its maintainers for the source, consent and licence of the images."
        )
    return None


def _read_provenance(root: Path, layout: Layout, warnings: list[str]) -> dict[str, Any] | None:
    """The provenance stored in the parquet schema metadata (v1 or export layout), if any."""
    if layout == "v1":
        path = root / V1_PARQUET
    elif layout == "export":
        shards = sorted((root / EXPORT_IMAGE_DIR).glob("[!.]*.parquet"))
        if not shards:
            return None
        path = shards[0]
    else:
        return None  # CSV files carry no metadata
    metadata = pq.read_schema(path).metadata or {}
    raw = metadata.get(PROVENANCE_METADATA_KEY)
    if raw is None:
        return None
    try:
        provenance = json.loads(raw)
    except ValueError:
        warnings.append(f"{path.relative_to(root).as_posix()}: unreadable novabench provenance ignored")
        return None
    return provenance if isinstance(provenance, dict) else None


# --------------------------------------------------------------------------- dataset rows


def iter_image_rows(release: NovaRelease, *, embed_images: bool) -> Iterator[dict[str, Any]]:
    """Rows of the ``images`` configuration, matching ``schema.image_features``.

    Args:
        release: a release from ``read_release``.
        embed_images: put the PNG bytes in the row (``{"path": filename, "bytes": ...}``) so
            the dataset no longer needs the release folder; otherwise the absolute path
            (an image read from a `nova export` folder has no file: its bytes are embedded
            either way).

    Example:
        >>> release = NovaRelease(root=Path("."), layout="v1", images=[])
        >>> list(iter_image_rows(release, embed_images=False))
        []
    """
    columns = extra_columns(release.extra_meta_keys)
    for image in release.images:
        row: dict[str, Any] = {
            "image": {"path": image.filename, "bytes": image.read_bytes()}
            if embed_images or image.image_path is None
            else str(image.image_path),
            "filename": image.filename,
            "case_id": image.case_id,
            "scan_id": image.scan_id,
            "width": image.width,
            "height": image.height,
            "caption": image.caption,
            "clinical_history": image.clinical_history,
            "final_diagnosis": image.final_diagnosis,
            "title": image.title,
            "publication_date": image.publication_date,
            "boxes": [list(box) for box in image.boxes],
            "rater_boxes": [
                {"rater": entry["rater"], "boxes": [list(box) for box in entry["boxes"]]}
                for entry in image.rater_boxes
            ],
        }
        for key, column in columns.items():
            row[column] = image.extra.get(key)
        yield row


def iter_case_rows(release: NovaRelease) -> Iterator[dict[str, Any]]:
    """Rows of the ``cases`` configuration, matching ``schema.case_features``.

    Example:
        >>> release = NovaRelease(root=Path("."), layout="v1", images=[])
        >>> list(iter_case_rows(release))
        []
    """
    columns = extra_columns(release.extra_meta_keys)
    for case in release.cases():
        row: dict[str, Any] = {
            "case_id": case.case_id,
            "title": case.title,
            "publication_date": case.publication_date,
            "clinical_history": case.clinical_history,
            "final_diagnosis": case.final_diagnosis,
        }
        for key, column in columns.items():
            row[column] = case.extra.get(key)
        row["filenames"] = case.filenames
        row["captions"] = case.captions
        row["boxes"] = [[list(box) for box in boxes] for boxes in case.boxes]
        yield row
