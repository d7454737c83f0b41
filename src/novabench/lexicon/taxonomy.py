"""Our pathology taxonomy: each final diagnosis in one of nine broad categories.

The categories (:data:`PATHOLOGY_CATEGORIES`) are assigned through the diagnosis lexicon
(:mod:`novabench.lexicon.diagnoses`): every canonical lexicon entry has exactly one category
in ``resources/pathology_categories.txt`` (the reasons for the debatable ones are written at
the top of that file). A diagnosis is read as the lexicon reads it:

1. the whole text names an entry (any synonym, spelling or abbreviation): that entry;
2. otherwise the first entry mentioned in its affirmed part (negated clauses such as
   "toxoplasmosis ruled out" are skipped): "Nocardia brain abscess" -> ``brain abscess``;
3. otherwise ``"other"`` (also for a placeholder such as "Final diagnosis not found.").

Users who disagree, or whose diagnoses the lexicon does not know, give a mapping file
(:func:`load_category_map`) that overrides the assignment per case id or per diagnosis.

Example:
    >>> pathology_category("Glioblastoma, IDH-wildtype")
    'neoplastic'
    >>> pathology_category("Schistosomal granuloma of the brain")
    'other'
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any

from novabench.errors import NovaInputError
from novabench.lexicon.diagnoses import (
    load_diagnosis_lexicon,
    normalize_diagnosis,
    read_diagnosis,
)
from novabench.records import is_placeholder_diagnosis

__all__ = [
    "PATHOLOGY_CATEGORIES",
    "CategoryAssignment",
    "CategoryMap",
    "assign_category",
    "category_table",
    "load_category_map",
    "pathology_category",
]

#: The categories, in report order; ``"other"`` last.
PATHOLOGY_CATEGORIES: tuple[str, ...] = (
    "neoplastic",
    "vascular",
    "infectious",
    "inflammatory and demyelinating",
    "metabolic and toxic",
    "congenital and developmental",
    "traumatic",
    "degenerative",
    "other",
)
OTHER = "other"
_TABLE_RESOURCE = "pathology_categories.txt"


def _parse_category_table(text: str, source: str) -> dict[str, str]:
    """``{canonical name: category}`` from the resource's sections."""
    table: dict[str, str] = {}
    category: str | None = None
    for line_number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or (line.startswith("#") and not line.startswith("##")):
            continue
        if line.startswith("##"):
            category = line.lstrip("#").strip()
            if category not in PATHOLOGY_CATEGORIES:
                raise NovaInputError(
                    f"unknown category {category!r}", source=source, record=f"line {line_number}"
                )
            continue
        if category is None:
            raise NovaInputError(
                "a name before any '## category' heading",
                source=source,
                record=f"line {line_number}",
            )
        if line in table:
            raise NovaInputError(
                f"{line!r} is listed twice", source=source, record=f"line {line_number}"
            )
        table[line] = category
    return table


@lru_cache(maxsize=1)
def category_table() -> Mapping[str, str]:
    """The built-in ``{canonical lexicon name: category}`` table (read once).

    Example:
        >>> category_table()["glioblastoma"], category_table()["CADASIL"]
        ('neoplastic', 'vascular')
    """
    path = resources.files("novabench").joinpath("resources").joinpath(_TABLE_RESOURCE)
    return MappingProxyType(
        _parse_category_table(path.read_text(encoding="utf-8"), _TABLE_RESOURCE)
    )


@dataclass(frozen=True)
class CategoryAssignment:
    """The category of one diagnosis and how it was reached.

    Attributes:
        category: one of :data:`PATHOLOGY_CATEGORIES`.
        entry: the canonical lexicon name it went through, or None.
        rule: ``"lexicon"`` (the whole name), ``"lexicon-mention"`` (a name inside it),
            ``"map-case"`` / ``"map-diagnosis"`` (a user mapping file), ``"placeholder"``
            (no ground truth) or ``"unknown"`` (nothing recognised: ``"other"``).
    """

    category: str
    entry: str | None
    rule: str


@lru_cache(maxsize=4096)
def _lexicon_assignment(diagnosis: str) -> CategoryAssignment:
    if is_placeholder_diagnosis(diagnosis):
        return CategoryAssignment(OTHER, None, "placeholder")
    lexicon = load_diagnosis_lexicon()
    table = category_table()
    entry = lexicon.lookup(diagnosis)
    if entry is not None:
        return CategoryAssignment(table.get(entry.name, OTHER), entry.name, "lexicon")
    affirmed = read_diagnosis(diagnosis).affirmed
    for short_names in (False, True):
        found, _ = lexicon.find_mentions(normalize_diagnosis(affirmed), short_names=short_names)
        if found:
            name = found[0].name
            return CategoryAssignment(table.get(name, OTHER), name, "lexicon-mention")
    return CategoryAssignment(OTHER, None, "unknown")


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def assign_category(
    diagnosis: str | None,
    *,
    case_id: str | None = None,
    category_map: CategoryMap | None = None,
) -> CategoryAssignment:
    """The category of a case's final diagnosis, with the rule that gave it.

    A user mapping wins over the lexicon: first by case id, then by diagnosis.

    Args:
        diagnosis: the final diagnosis as the release writes it (None or blank: placeholder).
        case_id: the case, for a mapping by case id.
        category_map: a user mapping (:func:`load_category_map`), or None.

    Returns:
        A :class:`CategoryAssignment`.

    Example:
        >>> assign_category("Streptococcus brain abscess")
        CategoryAssignment(category='infectious', entry='brain abscess', rule='lexicon-mention')
        >>> override = CategoryMap(by_case={"case0007": "vascular"})
        >>> assign_category("Glioma", case_id="case0007", category_map=override).category
        'vascular'
    """
    if category_map is not None:
        if case_id is not None and case_id in category_map.by_case:
            return CategoryAssignment(category_map.by_case[case_id], None, "map-case")
        text = _text_or_none(diagnosis)
        if text is not None and text.strip():
            mapped = category_map.by_diagnosis.get(normalize_diagnosis(text))
            if mapped is not None:
                return CategoryAssignment(mapped, None, "map-diagnosis")
    text = _text_or_none(diagnosis)
    if text is None or not text.strip():
        return CategoryAssignment(OTHER, None, "placeholder")
    return _lexicon_assignment(text)


def pathology_category(diagnosis: str) -> str:
    """The pathology category of a diagnosis (see the module docstring for the rules).

    Args:
        diagnosis: a diagnosis as written (any synonym, abbreviation or spelling).

    Returns:
        One of :data:`PATHOLOGY_CATEGORIES`; ``"other"`` when the lexicon knows no name in it.

    Raises:
        NovaInputError: ``diagnosis`` is not a string.

    Example:
        >>> pathology_category("GBM"), pathology_category("Devic's disease")
        ('neoplastic', 'inflammatory and demyelinating')
        >>> pathology_category("Final diagnosis not found.")
        'other'
    """
    if not isinstance(diagnosis, str):
        raise NovaInputError(
            f"a diagnosis must be a string, got {type(diagnosis).__name__}", field="diagnosis"
        )
    return assign_category(diagnosis).category


# --------------------------------------------------------------------------- user mapping


@dataclass(frozen=True)
class CategoryMap:
    """A user's category overrides, by case id and by diagnosis (normalised, see below).

    Diagnosis keys are stored as :func:`~novabench.lexicon.diagnoses.normalize_diagnosis`
    gives them, so ``"Tumour X"`` in the file matches ``"tumor x"`` in the release.

    Attributes:
        by_case: ``{case_id: category}``.
        by_diagnosis: ``{normalised diagnosis: category}``.
        source: where the mapping was read from ("" when built in code).

    Example:
        >>> CategoryMap(by_diagnosis={"Brain Tumour": "neoplastic"}).by_diagnosis
        mappingproxy({'brain tumor': 'neoplastic'})
    """

    by_case: Mapping[str, str] = field(default_factory=dict)
    by_diagnosis: Mapping[str, str] = field(default_factory=dict)
    source: str = ""

    def __post_init__(self) -> None:
        source = self.source or "category map"

        def checked(kind: str, mapping: Mapping[str, str]) -> dict[str, str]:
            return {
                key: _check_category(category, source=source, record=f"{kind} {key}")
                for key, category in mapping.items()
            }

        by_case = checked("case_id", self.by_case)
        by_diagnosis = {
            normalize_diagnosis(key): category
            for key, category in checked("diagnosis", self.by_diagnosis).items()
        }
        object.__setattr__(self, "by_case", MappingProxyType(by_case))
        object.__setattr__(self, "by_diagnosis", MappingProxyType(by_diagnosis))

    def __len__(self) -> int:
        return len(self.by_case) + len(self.by_diagnosis)


def _canonical_category(name: str) -> str | None:
    """A category name as users may spell it: any case, ``_``/``-`` for spaces, ``&`` for and."""
    folded = " ".join(
        name.lower().replace("_", " ").replace("-", " ").replace("&", " and ").split()
    )
    return folded if folded in PATHOLOGY_CATEGORIES else None


def _check_category(category: Any, *, source: str, record: str) -> str:
    canonical = _canonical_category(category) if isinstance(category, str) else None
    if canonical is None:
        raise NovaInputError(
            f"unknown category {category!r}; choose one of {', '.join(PATHOLOGY_CATEGORIES)}",
            source=source,
            record=record,
            field="category",
        )
    return canonical


def _add(
    target: dict[str, str], key: Any, category: Any, *, source: str, record: str, kind: str
) -> None:
    if not isinstance(key, str) or not key.strip():
        raise NovaInputError(
            f"{kind} must be a non-empty text", source=source, record=record, field=kind
        )
    key = key.strip() if kind == "case_id" else normalize_diagnosis(key)
    canonical = _check_category(category, source=source, record=record)
    if target.get(key, canonical) != canonical:
        raise NovaInputError(
            f"{kind} {key!r} is mapped twice, to {target[key]!r} and {canonical!r}",
            source=source,
            record=record,
            field=kind,
        )
    target[key] = canonical


def _rows_from_csv(text: str, source: str) -> list[tuple[str, dict[str, Any]]]:
    reader = csv.DictReader(io.StringIO(text))
    header = [name.strip() for name in reader.fieldnames or []]
    reader.fieldnames = header
    if "category" not in header or not ({"case_id", "diagnosis"} & set(header)):
        raise NovaInputError(
            f"the header must have 'category' and 'case_id' and/or 'diagnosis', got {header}",
            source=source,
            record="line 1",
        )
    # DictReader counts physical lines: line_num after a row is that row's last line.
    return [(f"line {reader.line_num}", dict(row)) for row in reader]


def _rows_from_json(text: str, source: str) -> list[tuple[str, dict[str, Any]]]:
    try:
        data = json.loads(text)
    except ValueError as error:
        raise NovaInputError(f"not valid JSON ({error})", source=source) from None
    if isinstance(data, list):
        rows = []
        # Counted from 1 with the entry's id, as the sample's pathologies file names entries.
        for number, row in enumerate(data, start=1):
            if not isinstance(row, dict):
                raise NovaInputError(
                    "each entry must be an object", source=source, record=f"entry {number}"
                )
            name = next(
                (row[key] for key in ("case_id", "diagnosis") if isinstance(row.get(key), str)),
                "",
            )
            rows.append((f"entry {number}" + (f" ({name})" if name.strip() else ""), row))
        return rows
    if isinstance(data, dict) and set(data) <= {"case_id", "diagnosis"} and data:
        rows = []
        for kind, mapping in data.items():
            if not isinstance(mapping, dict):
                raise NovaInputError(
                    f"'{kind}' must map names to categories", source=source, record=kind
                )
            rows += [
                (f"{kind} {key!r}", {kind: key, "category": value})
                for key, value in mapping.items()
            ]
        return rows
    raise NovaInputError(
        'expected {"case_id": {...}, "diagnosis": {...}} or a list of '
        '{"case_id"|"diagnosis", "category"} objects',
        source=source,
    )


def load_category_map(path: str | os.PathLike[str]) -> CategoryMap:
    """Read a user's category overrides from a CSV or JSON file.

    CSV: a header with ``category`` and ``case_id`` and/or ``diagnosis``; each row fills
    exactly one of ``case_id`` / ``diagnosis``. JSON: ``{"case_id": {id: category},
    "diagnosis": {name: category}}`` (either key may be left out) or a list of row objects
    as in the CSV. Category names are those of :data:`PATHOLOGY_CATEGORIES` (any case;
    ``_`` or ``-`` for spaces). A case id mapping wins over a diagnosis mapping.

    Args:
        path: the ``.csv`` or ``.json`` file.

    Returns:
        A :class:`CategoryMap`.

    Raises:
        NovaInputError: unreadable file, unknown category (naming the line or entry), a row
            with both or neither key, or a key mapped to two categories.

    Example:
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "map.csv"
        >>> rows = ["case_id,diagnosis,category", "case0001,,vascular", ",Gliomatosis,neoplastic"]
        >>> _ = path.write_text("\\n".join(rows) + "\\n")
        >>> mapping = load_category_map(path)
        >>> dict(mapping.by_case), dict(mapping.by_diagnosis)
        ({'case0001': 'vascular'}, {'gliomatosis': 'neoplastic'})
    """
    source = str(path)
    suffix = Path(path).suffix.lower()
    if suffix not in (".csv", ".json"):
        raise NovaInputError("a category map must be a .csv or .json file", source=source)
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except OSError as error:
        raise NovaInputError(f"cannot read the category map ({error})", source=source) from None
    rows = _rows_from_csv(text, source) if suffix == ".csv" else _rows_from_json(text, source)
    by_case: dict[str, str] = {}
    by_diagnosis: dict[str, str] = {}
    for record, row in rows:
        case_id = row.get("case_id")
        diagnosis = row.get("diagnosis")
        given = [
            name
            for name, value in (("case_id", case_id), ("diagnosis", diagnosis))
            if value not in (None, "")
        ]
        if len(given) != 1:
            raise NovaInputError(
                "fill exactly one of case_id and diagnosis", source=source, record=record
            )
        kind = given[0]
        target = by_case if kind == "case_id" else by_diagnosis
        _add(target, row[kind], row.get("category"), source=source, record=record, kind=kind)
    return CategoryMap(by_case=by_case, by_diagnosis=by_diagnosis, source=source)
