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

import dataclasses
import hashlib
import json
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from novabench.data.layouts import legacy as legacy_layout
from novabench.data.layouts import v1 as v1_layout
from novabench.data.provenance import provenance_metadata, provenance_notice, read_provenance
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

Layout = Literal["v1", "legacy", "export"]

V1_PARQUET = v1_layout.PARQUET
V1_IMAGE_DIR = v1_layout.IMAGE_DIR
LEGACY_IMAGE_DIR = legacy_layout.IMAGE_DIR
# The export layout's (layouts/export.py imports `datasets`: loaded only to read an export).
EXPORT_IMAGE_DIR = "data/images"


@dataclass
class NovaRelease:
    """A validated release: records plus what was noticed while reading it."""

    root: Path
    layout: Layout
    images: list[ImageRecord]
    extra_meta_keys: tuple[str, ...] = ()
    warnings: list[str] = field(default_factory=list)
    provenance: dict[str, Any] | None = None  # set when novabench made it (sample, ingest)
    # SHA-256 of each image's bytes as read_release checked them, so fingerprint() reads no
    # file again: id(record) -> (record, its image_path, its image_bytes, digest). A record
    # replaced or edited since (another object, path or bytes) is hashed afresh.
    _png_digests: dict[int, tuple[ImageRecord, Path | None, bytes | None, bytes]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

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
        return tuple(
            sorted({entry["rater"] for image in self.images for entry in image.rater_boxes})
        )

    def fingerprint(self) -> str:
        """A digest of the release content (records and image bytes), not of its location.

        Two copies of the same release share it; any change of text, box or pixel changes
        it. The builder keys its cache on it, so an edited release is never served stale.
        The bytes hashed are those ``read_release`` checked (hashed as they were read); a
        record built or edited since is read again.

        Example:
            >>> NovaRelease(root=Path("."), layout="v1", images=[]).fingerprint()[:8]
            '4f53cda1'
        """
        digest = hashlib.sha256()
        # Each record's fields as JSON, then the SHA-256 of its PNG bytes (never decoded).
        # Fields are read one by one, not deep-copied by dataclasses.asdict: the JSON text,
        # and so the digest, is the same.
        names = [
            record_field.name
            for record_field in dataclasses.fields(ImageRecord)
            if record_field.name not in ("image_path", "image_bytes")
        ]
        as_json = json.JSONEncoder(sort_keys=True, ensure_ascii=False).encode
        from novabench.progress import progress_bar

        for image in progress_bar(self.images, desc="fingerprinting release", unit="image"):
            fields = {name: getattr(image, name) for name in names}
            digest.update(as_json(fields).encode("utf-8"))
            digest.update(self._png_digest(image))
        digest.update(json.dumps(list(self.extra_meta_keys)).encode("utf-8"))
        return digest.hexdigest()[:16]

    def _png_digest(self, image: ImageRecord) -> bytes:
        """SHA-256 of the image's PNG bytes: the one taken while reading, if still its own."""
        cached = self._png_digests.get(id(image))
        if (
            cached is not None
            and cached[0] is image
            and cached[1] == image.image_path
            and cached[2] is image.image_bytes
        ):
            return cached[3]
        return hashlib.sha256(image.read_bytes()).digest()

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
    root = Path(path).expanduser().resolve()
    layout = detect_layout(root)
    warnings: list[str] = []
    if layout == "export":
        from novabench.data.layouts import export as export_layout

        reader = export_layout.read
    else:
        reader = {"v1": v1_layout.read, "legacy": legacy_layout.read}[layout]
    raws, extra_keys = reader(root, warnings)
    png_digests: dict[str, bytes] = {}
    images = build_records(root, raws, extra_keys, warnings, png_digests=png_digests)
    release = NovaRelease(
        root=root,
        layout=layout,
        images=images,
        extra_meta_keys=tuple(extra_keys),
        warnings=warnings,
        provenance=_read_provenance(root, layout, warnings),
    )
    release._png_digests.update(
        (id(image), (image, image.image_path, image.image_bytes, png_digests[image.filename]))
        for image in images
    )
    return release


def _read_provenance(root: Path, layout: Layout, warnings: list[str]) -> dict[str, Any] | None:
    """The provenance stored in the parquet schema metadata (v1 or export layout), if any."""
    if layout == "v1":
        path = root / V1_PARQUET
    elif layout == "export":
        from novabench.data.layouts import export as export_layout

        shards = export_layout.image_shards(root)
        if not shards:
            return None
        path = shards[0]
    else:
        return None  # CSV files carry no metadata
    return read_provenance(path, path.relative_to(root).as_posix(), warnings)
