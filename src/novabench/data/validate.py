"""Validation of a release's rows into records: everything but the pixels.

The layout readers (``novabench.data.layouts``) hand over rows as found; here filenames
and ids, duplicates, image paths (which must stay inside the release), PNG integrity
(``PIL.Image.verify``) and sizes, and boxes are checked, and the rows become
``ImageRecord``. Every problem raises ``NovaInputError`` naming the file, the row and the
field.

Boxes are kept verbatim when they lie at most ``BOX_TOLERANCE`` (10 %) of the image size
beyond its border and overlap the image; further out, or with a non-finite coordinate or a
non-positive size, they are an error. Per-case metadata that differs between the images of
one case keeps the first image's values, with a warning.
"""

from __future__ import annotations

import io
import math
import re
from pathlib import Path, PurePosixPath, PureWindowsPath

import numpy as np
from PIL import Image, UnidentifiedImageError

from novabench.data.layouts.rows import RawBox, RawImage, text
from novabench.errors import NovaInputError
from novabench.progress import progress_bar
from novabench.records import BOX_FIELDS, FIXED_META_KEYS, ImageRecord

__all__ = ["BOX_TOLERANCE", "FILENAME_PATTERN", "build_records"]

#: How far (fraction of the image width/height) a box may extend beyond the image border.
BOX_TOLERANCE = 0.10
FILENAME_PATTERN = re.compile(r"^(case\d{4})_(\d{3})\.png$")


def _png_size(image_file: Path | io.BytesIO, label: str, where: dict[str, str]) -> tuple[int, int]:
    """Width and height of a PNG after ``PIL.Image.verify`` (the pixels are not decoded)."""
    try:
        with Image.open(image_file) as image:
            image_format, (width, height) = image.format, image.size
            image.verify()
    except Image.DecompressionBombError as error:  # not an OSError: it would escape as a traceback
        raise NovaInputError(
            f"PNG {label} claims more pixels than PIL decodes safely (a decompression bomb?): {error}",
            **where,
        ) from error
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as error:
        raise NovaInputError(f"unreadable or corrupt PNG {label}: {error}", **where) from error
    if image_format != "PNG":
        raise NovaInputError(f"{label} is a {image_format} image, not a PNG", **where)
    return width, height


def _embedded_image_size(raw: RawImage) -> tuple[int, int]:
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
    for name, claimed, actual in zip(
        ("width", "height"), raw.size or (None, None), (width, height)
    ):
        if claimed != actual or isinstance(claimed, bool):
            raise NovaInputError(
                f"{name} is {claimed!r} but the embedded PNG is {width}x{height}",
                source=raw.source,
                record=raw.where(),
                field=name,
            )
    return width, height


def _image_size(root: Path, raw: RawImage) -> tuple[Path | None, int, int]:
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
        raise NovaInputError(
            f"image path {relative!r} escapes the release folder (symlink)", **where
        )
    if not path.is_file():
        raise NovaInputError(f"image file not found: {relative}", **where)
    width, height = _png_size(path, relative, where)
    return path, width, height


def _coordinate(box: RawBox, name: str) -> float:
    value = box.values.get(name)
    where = dict(source=box.source, record=box.record, field=box.field_prefix + name)
    if (
        isinstance(value, (bool, np.bool_))
        or value is None
        or (isinstance(value, str) and not value.strip())
    ):
        raise NovaInputError(f"{name} is missing or not a number: {value!r}", **where)
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError) as error:
        raise NovaInputError(f"{name} is not a number: {value!r}", **where) from error
    if not math.isfinite(number):
        raise NovaInputError(f"{name} must be finite, got {value!r}", **where)
    return number


def _validated_box(box: RawBox, width: int, height: int) -> list[float]:
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
    within = (
        x >= -slack_x and y >= -slack_y and x + w <= width + slack_x and y + h <= height + slack_y
    )
    if not (overlaps and within):
        raise NovaInputError(
            f"box [x={x}, y={y}, width={w}, height={h}] lies outside the {width}x{height} image "
            f"(allowed: overlapping it and at most {BOX_TOLERANCE:.0%} of its size beyond the border)",
            source=box.source,
            record=box.record,
            field=box.field_prefix[:-1] or "x, y, width, height",
        )
    return [x, y, w, h]


def _check_identity(raw: RawImage, seen: dict[str, str]) -> re.Match[str]:
    where = dict(source=raw.source, record=raw.where())
    match = FILENAME_PATTERN.match(raw.filename) if isinstance(raw.filename, str) else None
    if match is None:
        raise NovaInputError(
            f"filename {raw.filename!r} is not of the form caseNNNN_NNN.png",
            field="filename",
            **where,
        )
    for name, expected in (("case_id", match.group(1)), ("scan_id", match.group(2))):
        value = getattr(raw, name)
        if value != expected:
            raise NovaInputError(
                f"{name} {value!r} does not match the filename (expected {expected!r})",
                field=name,
                **where,
            )
    if raw.filename in seen:
        raise NovaInputError(
            f"duplicate filename, first seen at {seen[raw.filename]}", field="filename", **where
        )
    seen[raw.filename] = f"{raw.source}, {raw.record}"  # shards of an export are several files
    return match


def build_records(
    root: Path, raws: list[RawImage], extra_keys: list[str], warnings: list[str]
) -> list[ImageRecord]:
    """Validate a layout's rows and turn them into records sorted by filename.

    Args:
        root: the release folder (image paths are relative to it).
        raws: the rows a layout reader gave.
        extra_keys: the release's extra meta keys, in order.
        warnings: empty captions and per-case metadata that differs within a case are
            noted here.

    Returns:
        The records, sorted by filename.

    Raises:
        NovaInputError: naming the file, the row and the field of the first problem; a
            release without a single image row (nothing could ever be scored on it).

    Example:
        >>> build_records(Path("Nova"), [], [], [])
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: Nova: the release holds no images (no rows); nothing could be scored on it
    """
    if not raws:
        raise NovaInputError(
            "the release holds no images (no rows); nothing could be scored on it",
            source=str(root),
        )
    seen: dict[str, str] = {}
    for raw in raws:
        _check_identity(raw, seen)
    records: list[ImageRecord] = []
    first_of_case: dict[str, tuple[ImageRecord, RawImage]] = {}
    owner_of_path: dict[Path, str] = {}
    ordered = sorted(raws, key=lambda r: r.filename)
    for raw in progress_bar(ordered, desc="reading release", unit="image"):
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
        meta = {key: text(raw.meta.get(key)) for key in (*FIXED_META_KEYS, *extra_keys)}
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
        caption = text(raw.caption)
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
