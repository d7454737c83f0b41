"""The ``nova ingest`` manifest: a JSON or JSONL file listing cases, read as ``IngestCase`` s.

Only the reading and checking of the file lives here (keys, types, relative paths made
absolute, every case checked before any volume is read); slicing the volumes is
``novabench.data.ingest``. Not to be confused with a run's manifest
(``novabench.run.manifest``), which records how predictions were made.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from novabench import checks
from novabench._files import read_text_file
from novabench.data.ingest_cases import IngestCase, IngestSeries, check_case
from novabench.errors import NovaInputError

__all__ = ["read_manifest"]

_CASE_KEYS = {
    "case_id",
    "title",
    "publication_date",
    "clinical_history",
    "final_diagnosis",
    "extras",
    "series",
}
_SERIES_KEYS = {
    "volume",
    "mask",
    "plane",
    "caption",
    "sequence",
    "rater_masks",
    "n_slices",
    "slice_indices",
}


def _check_object(
    raw: Any,
    what: str,
    allowed: set[str],
    *,
    where: str,
    record: str,
    field: str | None = None,
) -> None:
    """Refuse ``raw`` unless it is a JSON object whose keys are all ``allowed``."""
    if not isinstance(raw, dict):
        raise NovaInputError(
            f"{what} must be a JSON object", source=where, record=record, field=field
        )
    unknown = sorted(set(raw) - allowed)
    if unknown:
        raise NovaInputError(
            f"unknown keys {unknown}; allowed: {sorted(allowed)}",
            source=where,
            record=record,
            field=field,
        )


def _resolve(value: Any, base: Path, *, where: str, record: str, field_name: str) -> str:
    text = checks.text(value, source=where, record=record, field=field_name)
    path = Path(text).expanduser()
    return str(path if path.is_absolute() else base / path)


def _parse_series(
    raw: Any, base: Path, *, where: str, record: str, field_name: str
) -> IngestSeries:
    _check_object(raw, "a series", _SERIES_KEYS, where=where, record=record, field=field_name)
    if "volume" not in raw:
        raise NovaInputError("missing", source=where, record=record, field=f"{field_name}.volume")
    raters = raw.get("rater_masks") or {}
    if not isinstance(raters, dict):
        raise NovaInputError(
            "must be an object {rater: path}",
            source=where,
            record=record,
            field=f"{field_name}.rater_masks",
        )
    mask = raw.get("mask")
    if raw.get("n_slices") is not None:  # checked before any volume is read
        checks.positive_int(
            raw["n_slices"], source=where, record=record, field=f"{field_name}.n_slices"
        )
    indices = raw.get("slice_indices")
    if indices is not None:
        if not isinstance(indices, list):
            raise NovaInputError(
                f"must be a list of slice numbers, got {type(indices).__name__}",
                source=where,
                record=record,
                field=f"{field_name}.slice_indices",
            )
        for n, index in enumerate(indices):
            checks.integer(
                index, source=where, record=record, field=f"{field_name}.slice_indices[{n}]"
            )
    return IngestSeries(
        volume=_resolve(
            raw["volume"], base, where=where, record=record, field_name=f"{field_name}.volume"
        ),
        plane=checks.text(
            raw.get("plane", "axial"), source=where, record=record, field=f"{field_name}.plane"
        ),
        caption=raw.get("caption"),
        sequence=raw.get("sequence"),
        mask=None
        if mask is None
        else _resolve(mask, base, where=where, record=record, field_name=f"{field_name}.mask"),
        rater_masks={
            name: _resolve(
                path,
                base,
                where=where,
                record=record,
                field_name=f"{field_name}.rater_masks.{name}",
            )
            for name, path in raters.items()
        },
        n_slices=raw.get("n_slices"),
        slice_indices=raw.get("slice_indices"),
    )


def _json_value(text: str, where: str, record: str | None) -> Any:
    """Decoded JSON; the error names the file, the line and the column."""
    try:
        return json.loads(text)
    except RecursionError:
        raise NovaInputError(
            "JSON nested too deeply to read", source=where, record=record
        ) from None
    except json.JSONDecodeError as error:
        position = (
            f"column {error.colno}" if record else f"line {error.lineno}, column {error.colno}"
        )
        raise NovaInputError(
            f"invalid JSON: {error.msg} ({position})", source=where, record=record
        ) from None


def read_manifest(path: str | os.PathLike[str]) -> list[IngestCase]:
    """Read a JSON or JSONL manifest listing cases, their series and metadata.

    JSON: a list of case objects, or ``{"cases": [...]}``; JSONL: one case object per
    line. Each case: ``title``, ``clinical_history``, ``final_diagnosis`` (required,
    non-empty), ``case_id`` (default ``case0001``, ``case0002``... in order),
    ``publication_date``, ``extras`` (object of strings) and ``series``: a list of
    ``{"volume", "mask"?, "plane"?, "caption"?, "sequence"?, "rater_masks"?,
    "n_slices"?, "slice_indices"?}``. Relative paths are relative to the manifest.

    Args:
        path: the manifest file.

    Returns:
        The cases, in manifest order.

    Raises:
        NovaInputError: unreadable JSON, unknown keys, empty or missing fields.

    Example:
        >>> import json, tempfile, pathlib
        >>> manifest = pathlib.Path(tempfile.mkdtemp()) / "cases.json"
        >>> _ = manifest.write_text(json.dumps([{"title": "T", "clinical_history": "H",
        ...     "final_diagnosis": "D", "series": [{"volume": "v.nii.gz", "caption": "Axial FLAIR."}]}]))
        >>> [case.case_id for case in read_manifest(manifest)]
        ['case0001']
    """
    path = Path(path)
    where = str(path)
    if path.is_dir():
        raise NovaInputError("is a folder; give the manifest file", source=where)
    try:
        path.stat()
    except OSError as error:
        raise NovaInputError(
            f"cannot read the manifest ({error.strerror or error})", source=where
        ) from error
    text = read_text_file(path, source=where)  # a BOM is skipped; non-UTF-8 names its line
    raw_cases: list[tuple[str, Any]] = []
    if path.suffix.lower() == ".jsonl":
        # Lines end at "\n" only (str.splitlines also splits at \x0b, \x1c, U+2028, ...),
        # so the line an error names is the line an editor shows.
        for number, line in enumerate(text.split("\n"), start=1):
            if line.strip():
                raw_cases.append((f"line {number}", _json_value(line, where, f"line {number}")))
    else:
        document = _json_value(text, where, None)
        if isinstance(document, dict) and "cases" in document:
            document = document["cases"]
        if not isinstance(document, list):
            raise NovaInputError("expected a list of cases or {'cases': [...]}", source=where)
        raw_cases = [(f"case #{number}", item) for number, item in enumerate(document, start=1)]
    if not raw_cases:
        raise NovaInputError("the manifest lists no cases", source=where)
    base = path.parent
    cases = []
    for number, (record, raw) in enumerate(raw_cases, start=1):
        _check_object(raw, "a case", _CASE_KEYS, where=where, record=record)
        for name in ("title", "clinical_history", "final_diagnosis", "series"):
            if name not in raw:
                raise NovaInputError("missing", source=where, record=record, field=name)
        series = raw["series"]
        if not isinstance(series, list) or not series:
            raise NovaInputError(
                "must be a non-empty list", source=where, record=record, field="series"
            )
        extras = raw.get("extras") or {}
        if not isinstance(extras, dict):
            raise NovaInputError(
                "must be an object of strings", source=where, record=record, field="extras"
            )
        case_id = raw.get("case_id", f"case{number:04d}")
        cases.append(
            IngestCase(
                case_id=case_id,
                series=[
                    _parse_series(
                        item, base, where=where, record=record, field_name=f"series[{index}]"
                    )
                    for index, item in enumerate(series)
                ],
                title=raw["title"],
                clinical_history=raw["clinical_history"],
                final_diagnosis=raw["final_diagnosis"],
                publication_date=raw.get("publication_date", ""),
                extras=extras,
            )
        )
    seen: set[str] = set()
    for case in cases:  # validate every case before any volume is read
        check_case(case, where, seen)
    return cases
