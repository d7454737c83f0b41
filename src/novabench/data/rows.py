"""A release as rows of the two ``datasets`` configurations, ``images`` and ``cases``.

The rows match ``novabench.data.schema.image_features`` / ``case_features``; the builder
(``novabench.data.hf``) and the export writer (``novabench.data.layouts.export``) both
take them from here.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from novabench.data.release_record import NovaRelease

__all__ = ["iter_case_rows", "iter_image_rows"]


def iter_image_rows(release: NovaRelease, *, embed_images: bool) -> Iterator[dict[str, Any]]:
    """Rows of the ``images`` configuration, matching ``schema.image_features``.

    Args:
        release: a release from ``read_release``.
        embed_images: put the PNG bytes in the row (``{"path": filename, "bytes": ...}``) so
            the dataset no longer needs the release folder; otherwise the absolute path
            (an image read from a `nova export` folder has no file: its bytes are embedded
            either way).

    Example:
        >>> from pathlib import Path
        >>> from novabench.data.release import NovaRelease
        >>> release = NovaRelease(root=Path("."), layout="v1", images=[])
        >>> list(iter_image_rows(release, embed_images=False))
        []
    """
    from novabench.data.schema import extra_columns  # schema imports `datasets`: only here

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
        >>> from pathlib import Path
        >>> from novabench.data.release import NovaRelease
        >>> release = NovaRelease(root=Path("."), layout="v1", images=[])
        >>> list(iter_case_rows(release))
        []
    """
    from novabench.data.schema import extra_columns  # schema imports `datasets`: only here

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
