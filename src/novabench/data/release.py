"""Read a NOVA release from disk: the public entry, dispatching to one module per layout.

Three on-disk layouts hold the same information (see ``NOVA_REFERENCE.md``), each read and
written by its own module under ``novabench.data.layouts``:

- ``v1`` (``layouts.v1``): ``data/nova-v1.parquet`` (one row per image, a per-case ``meta``
  struct and a ``bboxes`` list of ``{x, y, width, height, source}``) and PNGs under ``images/``;
- ``legacy`` (``layouts.legacy``): ``captions.csv``, ``case_metadata.csv``,
  ``bboxes_gold.csv``, ``bboxes_raters.csv`` and PNGs under ``test/``;
- ``export`` (``layouts.export``): a folder written by ``nova export`` (the form a Hub
  download takes): ``README.md`` whose YAML header has ``configs:``, and Parquet shards
  ``data/images/test-*.parquet`` with the PNG bytes embedded. Its images carry their bytes
  (``ImageRecord.image_bytes``) instead of a path.

``read_release`` detects the layout, lets its module read the rows, has
``novabench.data.validate`` check them into records (``novabench.records``) and reads the
provenance (``novabench.data.provenance``). Rows are joined by filename (the parquet is not
sorted like the images). Every problem raises ``NovaInputError`` naming the file, the row
(0-based parquet row or 1-based CSV line, plus the filename) and the field.
``novabench.data.hf.load_nova`` loads any of the three as a ``datasets`` dataset.

The names that lived here before the split (records, the placeholder rule, box tolerance,
dataset rows, provenance helpers) are re-exported, so existing imports keep working.
"""

from __future__ import annotations

import contextlib
import gc
import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from novabench.data.layouts import legacy as legacy_layout
from novabench.data.layouts import v1 as v1_layout
from novabench.data.provenance import (
    provenance_from_marks,
    provenance_from_metadata,
    provenance_metadata,
    provenance_notice,
    without_restated_warnings,
)
from novabench.data.release_record import Layout, NovaRelease
from novabench.data.rows import iter_case_rows, iter_image_rows
from novabench.data.validate import BOX_TOLERANCE, build_records
from novabench.errors import NovaInputError
from novabench.records import CaseRecord, ImageRecord, is_placeholder_diagnosis

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
    "provenance_metadata",
    "provenance_notice",
    "read_release",
]


V1_PARQUET = v1_layout.PARQUET
V1_IMAGE_DIR = v1_layout.IMAGE_DIR
LEGACY_IMAGE_DIR = legacy_layout.IMAGE_DIR
# The export layout's (layouts/export.py imports `datasets`: loaded only to read an export).
EXPORT_IMAGE_DIR = "data/images"


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


#: Raters the human reference scores (``novabench.report.human_reference.RATER_SLOTS``),
#: the first ones by name: NOVA has two.
SCORED_RATERS = 2


def _unscored_rater_warnings(images: Sequence[ImageRecord]) -> list[str]:
    """A warning when the boxes name more raters than the human reference scores.

    Said where the release is read (``nova info``, every report's first lines), not only in
    the human reference's notes: a third name is often a misspelt source.

    Example:
        >>> from novabench.records import ImageRecord
        >>> image = ImageRecord("case0001_001.png", "case0001", "001", None, 480, 480, "c",
        ...     None, None, None, None, [], [{"rater": name, "boxes": [[1.0, 2.0, 3.0, 4.0]]}
        ...     for name in ("rater1", "rater2", "rater3")], {})
        >>> _unscored_rater_warnings([image])
        ['the boxes name 3 raters (rater1, rater2, rater3); the human reference scores the first 2 by name (rater1, rater2): rater3 not scored']
    """
    names = sorted({entry["rater"] for image in images for entry in image.rater_boxes})
    if len(names) <= SCORED_RATERS:
        return []
    return [
        f"the boxes name {len(names)} raters ({', '.join(names)}); the human reference scores "
        f"the first {SCORED_RATERS} by name ({', '.join(names[:SCORED_RATERS])}): "
        f"{', '.join(names[SCORED_RATERS:])} not scored"
    ]


def read_release(path: str | os.PathLike[str]) -> NovaRelease:
    """Read and validate a NOVA release folder: official v1 or legacy layout, or ``nova export``.

    Everything but the pixels is validated: columns, filenames and ids, duplicates, image
    paths, PNG integrity (``novabench.data.png``: every chunk's length and CRC, no pixel
    decompressed) and sizes, boxes. Each image file is read once, and hashed then for
    ``fingerprint()``. An export folder (Parquet shards under ``data/images/``, PNGs
    embedded) gives the records of the release it was exported from, with
    ``layout == "export"``: each image holds its PNG bytes (``ImageRecord.image_bytes``,
    ``image_path`` None), the row's ``width``/``height`` must match the PNG, and float32
    boxes come back as the shortest decimals that round to them.

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
    with _collector_paused():
        return _read_release(Path(path).expanduser().resolve())


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for the block, if it was on (back on after it,
    whatever happens).

    A read makes about a dozen containers per image (rows, records, boxes, dicts) that all
    live on: the collector's passes over them (about 25 for NOVA's 906 images) free nothing
    and cost 3 ms of a read's 85 in a fresh process. Whatever of them is garbage is freed
    by reference counting; a cycle, if any, at the collector's next pass after the block.

    Example:
        >>> import gc
        >>> with _collector_paused():
        ...     gc.isenabled()
        False
        >>> gc.isenabled()
        True
    """
    if not gc.isenabled():  # off already (the caller's choice): left as it is
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _read_release(root: Path) -> NovaRelease:
    """``read_release`` of the resolved folder ``root``."""
    layout = detect_layout(root)
    warnings: list[str] = []
    if layout == "export":
        from novabench.data.layouts import export as export_layout

        reader = export_layout.read
    else:
        reader = {"v1": v1_layout.read, "legacy": legacy_layout.read}[layout]
    schema_metadata: dict[bytes, bytes] = {}  # the parquet's, for the provenance
    raws, extra_keys = reader(root, warnings, schema_metadata)
    png_digests: dict[str, bytes] = {}
    png_marks: dict[str, str] = {}
    images = build_records(
        root, raws, extra_keys, warnings, png_digests=png_digests, png_marks=png_marks
    )
    warnings.extend(_unscored_rater_warnings(images))
    if layout == "export":  # its rows restate what its source's did: each warning once
        warnings = without_restated_warnings(warnings)
    release = NovaRelease(
        root=root,
        layout=layout,
        images=images,
        extra_meta_keys=tuple(extra_keys),
        warnings=warnings,
        provenance=_read_provenance(
            root, layout, schema_metadata, warnings, png_marks, len(images)
        ),
    )
    release._png_digests.update(
        (id(image), (image, image.image_path, image.image_bytes, png_digests[image.filename]))
        for image in images
    )
    if layout == "export":  # its cases configuration must say what its images do
        export_layout.check_case_rows(root, release)
    return release


def _read_provenance(
    root: Path,
    layout: Layout,
    schema_metadata: dict[bytes, bytes],
    warnings: list[str],
    png_marks: dict[str, str],
    n_images: int,
) -> dict[str, Any] | None:
    """The provenance the layout's reader passed on (parquet schema metadata, or the legacy
    layout's sidecar file), if any, checked alike; without one, what the marks novabench
    writes into its PNGs say (a rewritten parquet drops its metadata, the images keep them)."""
    if layout == "v1":
        label = V1_PARQUET
    elif layout == "export":
        from novabench.data.layouts import export as export_layout

        label = export_layout.image_shards(root)[0].relative_to(root).as_posix()  # no open
    else:
        label = legacy_layout.PROVENANCE_FILE  # CSV files carry no metadata: a sidecar does
    recorded = provenance_from_metadata(schema_metadata, label, warnings)
    if recorded is not None:
        return recorded
    return provenance_from_marks(png_marks, n_images, label, warnings)
