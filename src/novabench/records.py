"""The records a NOVA release is made of, and the rule for a missing final diagnosis.

Dependency-free on purpose (standard library only): the metrics import
``is_placeholder_diagnosis`` from here without paying for ``datasets``, ``pyarrow``,
``numpy`` or ``PIL``. Reading a release into these records is ``novabench.data.release``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "BOX_FIELDS",
    "FIXED_META_KEYS",
    "NOVA_RELEASE_SIZE",
    "CaseRecord",
    "ImageRecord",
    "is_placeholder_diagnosis",
]

#: The public NOVA release: (images, cases). ``data.sample.IMAGES_PER_CASE`` adds up to it.
NOVA_RELEASE_SIZE: tuple[int, int] = (906, 281)

#: Per-case metadata every release has (``meta`` keys in v1, ``case_metadata.csv`` columns).
FIXED_META_KEYS: tuple[str, ...] = (
    "title",
    "publication_date",
    "clinical_history",
    "final_diagnosis",
)
#: A box's coordinates, in order: ``[x, y, width, height]`` in pixels.
BOX_FIELDS: tuple[str, ...] = ("x", "y", "width", "height")

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
            raise ValueError(
                f"{self.filename}: the record has neither image bytes nor an image path"
            )
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
