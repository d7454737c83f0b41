"""The ``datasets.Features`` of NOVA's two configurations, ``images`` and ``cases``.

This module is the single source of the column names and types: the builder, the Parquet
export and the dataset card's YAML all derive from these functions.

``images``: one row per image. ``cases``: one row per case, its images listed in order.
Boxes are ``[x, y, width, height]`` in pixels of the original image, stored as float64: the
release's values to the bit, so a score on these rows is the score on the release.
Extra per-case metadata keys of a release (e.g. ``differential_diagnosis``) become string
columns after the fixed ones, under a sanitised name (see ``extra_columns``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from datasets import Features, Image, List, Value

__all__ = [
    "BOX",
    "CASE_COLUMNS",
    "CASE_TEXT_COLUMNS",
    "FIXED_COLUMNS",
    "IMAGE_COLUMNS",
    "case_features",
    "extra_columns",
    "image_features",
]

# Columns of the ``images`` configuration, in order, before the extra meta columns.
IMAGE_COLUMNS: tuple[str, ...] = (
    "image",
    "filename",
    "case_id",
    "scan_id",
    "width",
    "height",
    "caption",
    "clinical_history",
    "final_diagnosis",
    "title",
    "publication_date",
    "boxes",
    "rater_boxes",
)
# Per-case text columns shared by both configurations.
CASE_TEXT_COLUMNS: tuple[str, ...] = (
    "title",
    "publication_date",
    "clinical_history",
    "final_diagnosis",
)
# Columns of the ``cases`` configuration: the extra meta columns go between these two groups.
CASE_COLUMNS: tuple[str, ...] = ("case_id", *CASE_TEXT_COLUMNS)
CASE_LIST_COLUMNS: tuple[str, ...] = ("filenames", "captions", "boxes")
# Every fixed name of either configuration; an extra key equal to one of them is renamed.
FIXED_COLUMNS: frozenset[str] = frozenset(IMAGE_COLUMNS + CASE_COLUMNS + CASE_LIST_COLUMNS)

#: One box, ``[x, y, width, height]``: float64, as the release holds it (float32 moved IoUs in
#: their last digits and flipped IoU ties against ``nova evaluate``, which reads float64).
BOX = List(Value("float64"))

_NOT_WORD = re.compile(r"[^0-9A-Za-z_]+")


def extra_columns(extra_keys: Sequence[str]) -> dict[str, str]:
    """Map each extra meta key of a release to the column name it gets in the dataset.

    Characters other than letters, digits and ``_`` become ``_``; a name that is empty,
    starts with a digit or equals a fixed column gets the prefix ``meta_``; names that
    still collide get ``_2``, ``_3``... in key order.

    Args:
        extra_keys: meta keys beyond the four fixed ones, in release order.

    Returns:
        ``{key: column}`` in the order of ``extra_keys`` (duplicate keys appear once).

    Example:
        >>> extra_columns(["differential_diagnosis", "link (Eurorad)", "caption", "2nd opinion"])
        {'differential_diagnosis': 'differential_diagnosis', 'link (Eurorad)': 'link_Eurorad', 'caption': 'meta_caption', '2nd opinion': 'meta_2nd_opinion'}
    """
    mapping: dict[str, str] = {}
    taken: set[str] = set(FIXED_COLUMNS)
    for key in extra_keys:
        if key in mapping:
            continue
        name = _NOT_WORD.sub("_", str(key)).strip("_")
        if not name or name[0].isdigit() or name in FIXED_COLUMNS:
            name = f"meta_{name}".rstrip("_")
        candidate, counter = name, 2
        while candidate in taken:
            candidate, counter = f"{name}_{counter}", counter + 1
        taken.add(candidate)
        mapping[key] = candidate
    return mapping


def image_features(extra_keys: Sequence[str] = ()) -> Features:
    """Features of the ``images`` configuration (one row per image).

    Args:
        extra_keys: extra meta keys of the release; each adds a string column.

    Returns:
        The ``datasets.Features``, fixed columns first (``IMAGE_COLUMNS``), then the extras.

    Example:
        >>> features = image_features(["differential_diagnosis"])
        >>> list(features)[-3:]
        ['boxes', 'rater_boxes', 'differential_diagnosis']
        >>> features["boxes"]
        List(List(Value('float64')))
    """
    features = Features(
        {
            "image": Image(),
            "filename": Value("string"),
            "case_id": Value("string"),
            "scan_id": Value("string"),
            "width": Value("int32"),
            "height": Value("int32"),
            "caption": Value("string"),
            "clinical_history": Value("string"),
            "final_diagnosis": Value("string"),
            "title": Value("string"),
            "publication_date": Value("string"),
            "boxes": List(BOX),
            "rater_boxes": List({"rater": Value("string"), "boxes": List(BOX)}),
        }
    )
    for column in extra_columns(extra_keys).values():
        features[column] = Value("string")
    return features


def case_features(extra_keys: Sequence[str] = ()) -> Features:
    """Features of the ``cases`` configuration (one row per case, images in order).

    Args:
        extra_keys: extra meta keys of the release; each adds a string column after the
            fixed text columns.

    Returns:
        ``case_id``, ``title``, ``publication_date``, ``clinical_history``,
        ``final_diagnosis``, the extras, then ``filenames``, ``captions`` and ``boxes``
        (per image, its list of gold boxes).

    Example:
        >>> list(case_features(["link"]))
        ['case_id', 'title', 'publication_date', 'clinical_history', 'final_diagnosis', 'link', 'filenames', 'captions', 'boxes']
    """
    features = Features({column: Value("string") for column in CASE_COLUMNS})
    for column in extra_columns(extra_keys).values():
        features[column] = Value("string")
    features["filenames"] = List(Value("string"))
    features["captions"] = List(Value("string"))
    features["boxes"] = List(List(BOX))
    return features
