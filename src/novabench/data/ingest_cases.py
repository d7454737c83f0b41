"""The cases ``nova ingest`` turns into a release: what a user describes, and its checks.

``IngestCase`` / ``IngestSeries`` are what a user builds in Python or what
``novabench.data.case_manifest.read_manifest`` reads from a file; ``check_case`` is the
one rule both paths apply before any volume is read. Nothing here reads an image, so
describing and checking cases imports neither numpy nor nibabel.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from novabench import checks
from novabench.errors import NovaInputError
from novabench.records import FIXED_META_KEYS

if TYPE_CHECKING:
    from novabench.data.slicing import VolumeSource

__all__ = ["IngestCase", "IngestSeries", "check_case"]

# Case ids prefix filenames ``<case_id>_<scan>.png``; the release reader accepts NOVA's own
# pattern only (``case`` + 4 digits), so ingest enforces it up front.
_CASE_ID = re.compile(r"^case\d{4}$")


@dataclass(frozen=True)
class IngestSeries:
    """One 3-D acquisition of a case, cut into one or more 2-D images.

    Args:
        volume: NIfTI path or in-memory nibabel image.
        plane: ``"axial"``, ``"coronal"`` or ``"sagittal"``.
        caption: caption of every image cut from this series (the figure legend).
        sequence: e.g. ``"FLAIR"``; only used to build ``"<Plane> <sequence>."`` when
            ``caption`` is not given.
        mask: lesion mask of the same grid (nonzero = lesion), or None (no boxes).
        rater_masks: per rater name, that rater's mask; their boxes are stored with
            ``source=<rater name>``.
        n_slices: images to cut; default ``slices_per_lesion`` times the number of lesions.
        slice_indices: explicit slice numbers along the plane's axis in canonical RAS
            voxel order; overrides the automatic choice.

    Example:
        >>> IngestSeries("flair.nii.gz", plane="axial", caption="Axial FLAIR.").plane
        'axial'
    """

    volume: VolumeSource
    plane: str = "axial"
    caption: str | None = None
    sequence: str | None = None
    mask: VolumeSource | None = None
    rater_masks: Mapping[str, VolumeSource] = field(default_factory=dict)
    n_slices: int | None = None
    slice_indices: Sequence[int] | None = None


@dataclass(frozen=True)
class IngestCase:
    """A case: its series and the per-case metadata of the release.

    Args:
        case_id: ``"case"`` and 4 digits, e.g. ``"case0001"`` (it prefixes filenames).
        series: the case's series, in the order their images are numbered.
        title: case title.
        clinical_history: clinical history text.
        final_diagnosis: final diagnosis text (verbatim, placeholders included).
        publication_date: e.g. ``"24.09.2018"``; may be empty.
        extras: further per-case string metadata (e.g. ``differential_diagnosis``, ``link``).

    Example:
        >>> case = IngestCase("case0001", [IngestSeries("t2.nii.gz", caption="Axial T2.")],
        ...                   title="Susac syndrome", clinical_history="Headache.",
        ...                   final_diagnosis="Susac syndrome")
        >>> len(case.series)
        1
    """

    case_id: str
    series: Sequence[IngestSeries]
    title: str
    clinical_history: str
    final_diagnosis: str
    publication_date: str = ""
    extras: Mapping[str, str] = field(default_factory=dict)


# --------------------------------------------------------------------------- cases


def check_case(case: IngestCase, where: str, seen: set[str]) -> None:
    """Check one case's id (unique in ``seen``, which it joins), texts, extras and series list.

    Args:
        case: the case to check.
        where: the manifest or source it came from (named in errors).
        seen: case ids already checked in this release; updated.

    Raises:
        NovaInputError: naming the case and the field.

    Example:
        >>> seen = set()
        >>> case = IngestCase("case0007", [IngestSeries("t1.nii.gz", caption="Axial T1.")],
        ...                   title="T", clinical_history="H", final_diagnosis="D")
        >>> check_case(case, "cases.json", seen)
        >>> check_case(case, "cases.json", seen)  # doctest: +IGNORE_EXCEPTION_DETAIL
        Traceback (most recent call last):
        novabench.errors.NovaInputError: cases.json, case 'case0007', field 'case_id': duplicate case id
    """
    record = f"case {case.case_id!r}"
    if not isinstance(case.case_id, str) or not _CASE_ID.match(case.case_id):
        raise NovaInputError(
            "case id must be 'case' and 4 digits, e.g. 'case0001' (it prefixes filenames 'case0001_001.png')",
            source=where,
            record=record,
            field="case_id",
        )
    if case.case_id in seen:
        raise NovaInputError("duplicate case id", source=where, record=record, field="case_id")
    seen.add(case.case_id)
    for name in ("title", "clinical_history", "final_diagnosis"):
        checks.text(getattr(case, name), source=where, record=record, field=name)
    checks.text(
        case.publication_date,
        source=where,
        record=record,
        field="publication_date",
        allow_blank=True,
    )
    for key, value in case.extras.items():
        if not isinstance(key, str) or not key or key in FIXED_META_KEYS:
            raise NovaInputError(
                f"extra meta key {key!r} is empty or shadows a fixed key",
                source=where,
                record=record,
                field="extras",
            )
        checks.text(value, source=where, record=record, field=f"extras.{key}", allow_blank=True)
    if not case.series:
        raise NovaInputError(
            "a case needs at least one series", source=where, record=record, field="series"
        )
