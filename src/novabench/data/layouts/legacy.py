"""The legacy layout: four CSV files plus the PNGs under ``test/``.

``captions.csv`` (filename, case_id, scan_id, caption), ``case_metadata.csv`` (case_id,
title, publication_date, clinical_history, final_diagnosis, extras...),
``bboxes_gold.csv`` (filename, x, y, width, height) and ``bboxes_raters.csv`` (filename,
rater, x, y, width, height). Text is kept exactly; a quoted field may span lines.
``read`` gives the rows of such a folder, ``write`` makes one.

Data novabench made (``nova sample``, ``nova ingest``) carries its provenance in a small
sidecar, ``novabench_provenance.json`` beside ``captions.csv``: CSV files have no metadata
of their own. The official layout has no such file, so a real release reads as before; a
reader that does not know the file ignores it. Its content is checked as the v1 parquet's
metadata is (``novabench.data.provenance``), and it is not part of the fingerprint.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from novabench._files import read_text_file
from novabench.data.layouts import rows as layout_rows
from novabench.data.layouts.rows import (
    GOLD_SOURCE,
    ImageRow,
    RawBox,
    RawImage,
    spelled_like_gold,
)
from novabench.errors import NovaInputError
from novabench.records import BOX_FIELDS, FIXED_META_KEYS

__all__ = ["FILES", "IMAGE_DIR", "PROVENANCE_FILE", "read", "write"]

IMAGE_DIR = "test"
#: The sidecar of data novabench made: its provenance (JSON), read when present.
PROVENANCE_FILE = "novabench_provenance.json"
# A provenance is a few fields: a larger sidecar is not ours and is not read.
_MAX_PROVENANCE_BYTES = 4096
#: Each CSV file of the layout and the columns it must have.
FILES: dict[str, tuple[str, ...]] = {
    "captions.csv": ("filename", "case_id", "scan_id", "caption"),
    "case_metadata.csv": (
        "case_id",
        "title",
        "publication_date",
        "clinical_history",
        "final_diagnosis",
    ),
    "bboxes_gold.csv": ("filename", "x", "y", "width", "height"),
    "bboxes_raters.csv": ("filename", "rater", "x", "y", "width", "height"),
}


def _read_csv(root: Path, name: str) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    """Header and ``(line number, row)`` pairs of a CSV file, text kept exactly.

    The release parquet's limits hold here too (read at call time, so a test can lower
    them): a file larger than ``rows.MAX_PARQUET_BYTES`` is refused before it is read, and
    one of more than ``rows.MAX_RELEASE_ROWS`` rows at the first row past the limit.
    """
    path = root / name
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > layout_rows.MAX_PARQUET_BYTES:
                raise NovaInputError(
                    f"{size:,} bytes is more than the {layout_rows.MAX_PARQUET_BYTES:,} a NOVA "
                    "release file may take (NOVA's metadata is about 200 kB): refused before "
                    "reading it",
                    source=name,
                )
            reader = csv.reader(handle)
            header = next(reader, None)
            if header is None:
                raise NovaInputError("the file is empty (no header)", source=name)
            missing = [column for column in FILES[name] if column not in header]
            if missing:
                raise NovaInputError(
                    f"required column '{missing[0]}' is missing (columns: {', '.join(header)})",
                    source=name,
                    field=missing[0],
                )
            rows: list[tuple[int, dict[str, str]]] = []
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
                if len(rows) == layout_rows.MAX_RELEASE_ROWS:
                    raise NovaInputError(
                        f"more than the {layout_rows.MAX_RELEASE_ROWS:,} rows a NOVA release "
                        "file may hold (NOVA has 906): refused",
                        source=name,
                        record=f"line {first_line}",
                    )
                rows.append((first_line, dict(zip(header, values))))
    except FileNotFoundError as error:
        raise NovaInputError(
            "required file of the legacy layout is missing", source=name
        ) from error
    except UnicodeDecodeError:
        read_text_file(path, source=name)  # names the line of the first byte not UTF-8
        raise  # pragma: no cover - read_text_file raised above
    except csv.Error as error:
        raise NovaInputError(f"cannot read the CSV file: {error}", source=name) from error
    return header, rows


def read(
    root: Path, warnings: list[str], schema_metadata: dict[bytes, bytes] | None = None
) -> tuple[list[RawImage], list[str]]:
    """The image rows of a legacy release (captions joined with the case metadata and boxes).

    Args:
        root: the release folder.
        warnings: notes on what was skipped (a second metadata row of a case, a missing
            ``bboxes_raters.csv``) are appended here.
        schema_metadata: filled with the provenance sidecar's bytes under the v1 parquet's
            key (``PROVENANCE_METADATA_KEY``) when :data:`PROVENANCE_FILE` is present, so
            the release reader checks it as it checks the v1 metadata.

    Returns:
        The unvalidated rows (``novabench.data.validate`` checks them) and the extra meta
        keys (``case_metadata.csv`` columns beyond ``FIXED_META_KEYS``, in file order).

    Raises:
        NovaInputError: a missing file or column, a malformed line, a case without
            metadata, a box for an unknown filename, naming the file and line.

    Example:
        >>> import sys, tempfile
        >>> sys.path.insert(0, "tests")
        >>> from release_factory import write_legacy_release
        >>> rows, extra = read(write_legacy_release(tempfile.mkdtemp(), image_size=(64, 64)), [])
        >>> len(rows), extra
        (6, ['differential_diagnosis'])
    """
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
    raws: list[RawImage] = []
    by_filename: dict[str, RawImage] = {}
    for line, row in caption_rows:
        raw = RawImage(
            source="captions.csv",
            record=f"line {line}",
            filename=row["filename"],
            case_id=row["case_id"],
            scan_id=row["scan_id"],
            caption=row["caption"],
            image_path=f"{IMAGE_DIR}/{row['filename']}",
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
                    "box for a filename that is not in captions.csv",
                    source=name,
                    record=record,
                    field="filename",
                )
            rater = None if name == "bboxes_gold.csv" else row["rater"]
            if rater is not None and not rater.strip():
                raise NovaInputError(
                    "rater name is empty", source=name, record=record, field="rater"
                )
            if rater is not None and spelled_like_gold(rater):
                # Gold boxes are bboxes_gold.csv's; a rater named so would become gold when
                # written in the v1 layout, where the source string alone tells them apart.
                raise NovaInputError(
                    f"rater name {rater!r} is {GOLD_SOURCE!r} in some spelling: the consensus "
                    f"boxes belong in bboxes_gold.csv; name the rater otherwise",
                    source=name,
                    record=record,
                    field="rater",
                )
            owner.boxes.append(RawBox({k: row[k] for k in BOX_FIELDS}, rater, name, record, ""))
    extra = [key for key in meta_header if key != "case_id" and key not in FIXED_META_KEYS]
    if schema_metadata is not None:
        sidecar = _read_provenance_file(root, warnings)
        if sidecar is not None:
            from novabench.data.provenance import PROVENANCE_METADATA_KEY

            schema_metadata[PROVENANCE_METADATA_KEY] = sidecar
    return raws, extra


def _read_provenance_file(root: Path, warnings: list[str]) -> bytes | None:
    """The provenance sidecar's bytes (None when absent).

    Only novabench writes the sidecar: one that cannot be read is noted and read as
    ``UNREADABLE_PROVENANCE`` (data novabench made), never as the official release.
    """
    from novabench.data.provenance import (
        PROVENANCE_METADATA_KEY,
        UNREADABLE_PROVENANCE,
        provenance_metadata,
    )

    path = root / PROVENANCE_FILE
    if not (path.exists() or path.is_symlink()):
        return None
    unreadable = provenance_metadata(UNREADABLE_PROVENANCE)[PROVENANCE_METADATA_KEY]
    try:
        if not path.is_file():
            raise OSError("not a file")
        with path.open("rb") as handle:
            data = handle.read(_MAX_PROVENANCE_BYTES + 1)
    except OSError as error:
        warnings.append(
            f"{PROVENANCE_FILE}: unreadable novabench provenance ({error}): read as data "
            "novabench made, not the NOVA release"
        )
        return unreadable
    if len(data) > _MAX_PROVENANCE_BYTES:
        warnings.append(
            f"{PROVENANCE_FILE}: more than {_MAX_PROVENANCE_BYTES} bytes, not a provenance "
            "novabench wrote: read as data novabench made, not the NOVA release"
        )
        return unreadable
    return data


def _write_csv(path: Path, header: Sequence[str], records: Iterable[Sequence[Any]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(records)


def write(
    root: Path,
    images: Sequence[ImageRow],
    metas: Mapping[str, Mapping[str, str | None]],
    meta_keys: Sequence[str],
    provenance: Mapping[str, Any] | None = None,
) -> None:
    """Write the four CSV files of images whose PNGs are already under ``test/``.

    Args:
        root: the release folder.
        images: one row per image.
        metas: per case id, its metadata by key (a missing value is written empty).
        meta_keys: the ``case_metadata.csv`` columns after ``case_id``, in order.
        provenance: what made the release (``novabench.data.provenance``), written to
            :data:`PROVENANCE_FILE`; None writes no sidecar (the official layout has none).

    Example:
        >>> import tempfile
        >>> root = Path(tempfile.mkdtemp())
        >>> box = ("rater1", [1, 2, 3, 4])
        >>> row = ImageRow("case0001_001.png", "case0001", "001", "Axial T2.", [box])
        >>> write(root, [row], {"case0001": {"title": "T"}}, ["title"])
        >>> (root / "bboxes_raters.csv").read_text().splitlines()
        ['filename,rater,x,y,width,height', 'case0001_001.png,rater1,1.0,2.0,3.0,4.0']
    """
    _write_csv(
        root / "captions.csv",
        ("filename", "case_id", "scan_id", "caption"),
        ((image.filename, image.case_id, image.scan_id, image.caption) for image in images),
    )
    _write_csv(
        root / "case_metadata.csv",
        ("case_id", *meta_keys),
        ([case_id, *(meta.get(key) or "" for key in meta_keys)] for case_id, meta in metas.items()),
    )
    gold_rows, rater_rows = [], []
    for image in images:
        for source, box in image.boxes:
            numbers = [repr(float(value)) for value in box]
            if source == GOLD_SOURCE:
                gold_rows.append([image.filename, *numbers])
            else:
                rater_rows.append([image.filename, source, *numbers])
    _write_csv(root / "bboxes_gold.csv", ("filename", *BOX_FIELDS), gold_rows)
    _write_csv(root / "bboxes_raters.csv", ("filename", "rater", *BOX_FIELDS), rater_rows)
    if provenance is not None:
        from novabench.data.provenance import provenance_metadata

        # The same bytes the v1 parquet keeps in its schema metadata (only novabench's fields).
        (root / PROVENANCE_FILE).write_bytes(provenance_metadata(provenance).popitem()[1] + b"\n")
