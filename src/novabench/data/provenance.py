"""Provenance of data novabench made itself (``nova sample``, ``nova ingest``).

It travels in the parquet schema metadata under ``novabench.provenance`` (readers that do
not know the key ignore it, so the files stay in the official layout): the v1 parquet of
a sample or ingest output, and every shard of its export, whose card then says what the
data is. CSV files cannot carry metadata: a legacy-layout sample or ingest output keeps the
same JSON in a sidecar beside ``captions.csv`` (``layouts.legacy.PROVENANCE_FILE``), which
the official legacy release does not have; it is read and checked as the metadata is.
A provenance that is present but cannot be read (not JSON, not an object, an origin
novabench does not write, a sidecar that is no small file) still says novabench made the
data: it reads as :data:`UNREADABLE_ORIGIN`, never as the official release.
Provenance is not part of a release's fingerprint (records and image bytes are).

The warnings of the release an export was made from travel the same way, under
``novabench.release_warnings`` (a JSON list of text) in every shard's schema metadata: what
reading the source noticed (a box listed twice, metadata differing within a case) may not
show in the exported rows, so a reader of the export is told it again
(:func:`recorded_warnings`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from novabench.escaping import visible_text

__all__ = [
    "PROVENANCE_FIELDS",
    "RECORDED_WARNINGS_KEY",
    "PROVENANCE_METADATA_KEY",
    "UNREADABLE_ORIGIN",
    "UNREADABLE_PROVENANCE",
    "clean_provenance",
    "provenance_metadata",
    "provenance_from_metadata",
    "provenance_heading",
    "provenance_notice",
    "provenance_notice_line",
    "read_provenance",
    "recorded_warnings",
    "source_warning",
    "warnings_metadata",
    "without_restated_warnings",
]

PROVENANCE_METADATA_KEY = b"novabench.provenance"

#: The origin of a provenance that is present but could not be read: only novabench writes
#: the key or the sidecar, so the data is novabench's, whatever else it is.
UNREADABLE_ORIGIN = "unreadable novabench provenance"
UNREADABLE_PROVENANCE: Mapping[str, Any] = {"origin": UNREADABLE_ORIGIN}

#: What novabench itself records, per origin: the fields and the check of their values.
#: Anything else found under the key (a local path, a Hub token, markup) was not written
#: by novabench and is dropped, never copied into export shards or the card.
PROVENANCE_FIELDS: dict[str, dict[str, Any]] = {
    "nova sample": {
        "cases": lambda value: _whole(value, minimum=1),
        "seed": lambda value: _whole(value, minimum=0),
    },
    "nova ingest": {},
    UNREADABLE_ORIGIN: {},
}


def _whole(value: Any, *, minimum: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= minimum


def clean_provenance(
    provenance: Any, *, label: str = "provenance", warnings: list[str] | None = None
) -> dict[str, Any] | None:
    """Only the fields novabench writes, with values of their kind; None if not ours.

    Args:
        provenance: the decoded ``novabench.provenance`` value.
        label: how a warning names where it came from.
        warnings: what was dropped is noted here.

    Example:
        >>> notes = []
        >>> clean_provenance({"origin": "nova sample", "cases": 2, "seed": 0,
        ...                   "token": "hf_abc"}, warnings=notes)
        {'origin': 'nova sample', 'cases': 2, 'seed': 0}
        >>> notes
        ["provenance: fields novabench does not write were dropped: ['token']"]
        >>> clean_provenance({"origin": "<b>made by me</b>"}) is None
        True
    """
    notes = warnings if warnings is not None else []
    if not isinstance(provenance, Mapping):
        return None
    origin = provenance.get("origin")
    fields = PROVENANCE_FIELDS.get(origin) if isinstance(origin, str) else None
    if fields is None:
        notes.append(f"{label}: provenance of an origin novabench does not write was ignored")
        return None
    kept: dict[str, Any] = {"origin": origin}
    dropped = []
    for name, value in provenance.items():
        if name == "origin":
            continue
        if name in fields and fields[name](value):
            kept[name] = value
        else:
            dropped.append(str(name))
    if dropped:
        notes.append(f"{label}: fields novabench does not write were dropped: {sorted(dropped)}")
    return kept


def provenance_metadata(provenance: Mapping[str, Any]) -> dict[bytes, bytes]:
    """Parquet schema metadata recording which novabench command made a release or export.

    Readers that do not know the key ignore it, so the file stays in the official layout.

    Example:
        >>> provenance_metadata({"origin": "nova sample", "cases": 2, "seed": 0})
        {b'novabench.provenance': b'{"cases": 2, "origin": "nova sample", "seed": 0}'}
    """
    kept = clean_provenance(provenance) or {}
    return {PROVENANCE_METADATA_KEY: json.dumps(kept, sort_keys=True).encode()}


def provenance_notice(provenance: Mapping[str, Any] | None) -> str | None:
    """The card notice for data novabench made itself; None for anything else.

    Example:
        >>> print(provenance_notice({"origin": "nova sample", "cases": 40, "seed": 0}))
        Synthetic sample made by novabench (`nova sample --cases 40 --seed 0`), not the NOVA release: slices of the MNI152 template with synthetic lesions, for trying the toolkit. Scores on it say nothing about clinical ability.
        >>> provenance_notice(None) is None
        True
    """
    if not provenance:
        return None
    origin = provenance.get("origin")
    if origin == "nova sample":
        options = "".join(
            f" --{name} {provenance[name]}" for name in ("cases", "seed") if name in provenance
        )
        return (
            f"Synthetic sample made by novabench (`nova sample{options}`), "
            "not the NOVA release: slices of the MNI152 "
            "template with synthetic lesions, for trying the toolkit. Scores on it say nothing "
            "about clinical ability."
        )
    if origin == "nova ingest":
        return (
            "Built with `nova ingest` from local NIfTI volumes and lesion masks, not the NOVA "
            "release: see its maintainers for the source, consent and licence of the images."
        )
    if origin == UNREADABLE_ORIGIN:
        return (
            "The data carries a novabench provenance record (novabench_provenance.json beside "
            "captions.csv, or novabench metadata in its parquet) that could not be read: "
            "novabench made it, so it is not the official NOVA release."
        )
    return None


def provenance_heading(provenance: Mapping[str, Any] | None) -> str | None:
    """The capitalised words that head the notice of data novabench made; None otherwise.

    The synthetic sample is not real data at all; ingested or unreadable-provenance data
    may be real images, but it is not the NOVA release.

    Example:
        >>> provenance_heading({"origin": "nova sample", "cases": 2, "seed": 0})
        'NOT THE REAL DATA'
        >>> provenance_heading({"origin": "nova ingest"})
        'NOT THE NOVA RELEASE'
        >>> provenance_heading(None) is None
        True
    """
    if provenance_notice(provenance) is None:
        return None
    assert provenance is not None  # a notice is only given for a provenance
    return (
        "NOT THE REAL DATA" if provenance.get("origin") == "nova sample" else "NOT THE NOVA RELEASE"
    )


def provenance_notice_line(provenance: Mapping[str, Any] | None) -> str:
    """The one-line notice a command prints for data novabench made ("" for the NOVA release).

    Every output that shows results on such data opens with it (``nova run`` before it asks
    anything; the reports, ``nova compare`` and the leaderboard before their tables), so the
    synthetic sample, ``nova ingest`` data and data whose provenance could not be read are
    never taken for the release the published figures were measured on.

    Example:
        >>> provenance_notice_line({"origin": "nova sample", "cases": 40, "seed": 0})[:72]
        'notice: NOT THE REAL DATA: Synthetic sample made by novabench (`nova sam'
        >>> provenance_notice_line({"origin": "nova ingest"})[:62]
        'notice: NOT THE NOVA RELEASE: Built with `nova ingest` from lo'
        >>> provenance_notice_line(None)
        ''
    """
    notice, heading = provenance_notice(provenance), provenance_heading(provenance)
    if notice is None:
        return ""
    return (
        f"notice: {heading}: {notice} The published figures are on the real NOVA release and "
        "are not comparable with these."
    )


def read_provenance(path: Path, label: str, warnings: list[str]) -> dict[str, Any] | None:
    """The provenance stored in a parquet file's schema metadata, if any.

    Args:
        path: the parquet file (the v1 table, or an export's first image shard).
        label: how a warning names it (the path relative to the release).
        warnings: an unreadable provenance is noted here.

    Returns:
        The provenance dict, or None when the file has none (e.g. the official release);
        :data:`UNREADABLE_PROVENANCE` when it has one that cannot be read.

    Example:
        >>> import pyarrow as pa, pyarrow.parquet as pq, tempfile
        >>> path = Path(tempfile.mkdtemp()) / "t.parquet"
        >>> metadata = provenance_metadata({"origin": "nova ingest"})
        >>> schema = pa.schema([("a", pa.int64())], metadata=metadata)
        >>> pq.write_table(pa.table({"a": [1]}, schema=schema), path)
        >>> read_provenance(path, "t.parquet", [])
        {'origin': 'nova ingest'}
    """
    import pyarrow.parquet as pq  # only a parquet release has provenance to read

    return provenance_from_metadata(pq.read_schema(path).metadata, label, warnings)


def provenance_from_metadata(
    metadata: Mapping[bytes, bytes] | None, label: str, warnings: list[str]
) -> dict[str, Any] | None:
    """The provenance in a parquet schema's key-value metadata already read, if any.

    A release reader has the schema of the file it read: the provenance comes from it
    without opening the file again (:func:`read_provenance` is the form taking a path).

    Args:
        metadata: the schema's key-value metadata (None: the file has none).
        label: how a warning names the file (the path relative to the release).
        warnings: an unreadable provenance is noted here.

    Returns:
        The provenance; None when the metadata has none (the official release);
        :data:`UNREADABLE_PROVENANCE` when it has one that cannot be read.

    Example:
        >>> provenance_from_metadata(provenance_metadata({"origin": "nova ingest"}), "t", [])
        {'origin': 'nova ingest'}
        >>> warnings = []
        >>> provenance_from_metadata({PROVENANCE_METADATA_KEY: b"[1, 2]"}, "t.parquet", warnings)
        {'origin': 'unreadable novabench provenance'}
        >>> warnings
        ['t.parquet: unreadable novabench provenance: read as data novabench made, not the NOVA release (not a JSON object)']
    """
    raw = (metadata or {}).get(PROVENANCE_METADATA_KEY)
    if raw is None:
        return None
    try:
        provenance = json.loads(raw)
    except (ValueError, RecursionError):
        provenance = None
    if not isinstance(provenance, Mapping):
        warnings.append(f"{label}: {_UNREADABLE_WARNING} (not a JSON object)")
        return dict(UNREADABLE_PROVENANCE)
    if provenance.get("origin") not in PROVENANCE_FIELDS:
        warnings.append(f"{label}: {_UNREADABLE_WARNING} (not an origin novabench writes)")
        return dict(UNREADABLE_PROVENANCE)
    return clean_provenance(provenance, label=label, warnings=warnings)


#: How a reader's warning says what an unreadable provenance becomes.
_UNREADABLE_WARNING = (
    "unreadable novabench provenance: read as data novabench made, not the NOVA release"
)


#: Parquet schema metadata key of the warnings ``nova export`` recorded (a JSON list of text).
RECORDED_WARNINGS_KEY = b"novabench.release_warnings"
# What a warning read back from an export says after the shard that recorded it.
_RECORDED = "recorded by nova export from the release it was made from: "
_SHARD_LABEL = re.compile(r"^data/[^:]*\.parquet$")


def source_warning(warning: str) -> str:
    """A warning as the source release gave it: one read back from an export loses its prefix.

    Re-exporting an export records the original words once, not nested in prefixes.

    Example:
        >>> source_warning("data/images/test-00000-of-00001.parquet: recorded by nova export "
        ...                "from the release it was made from: captions.csv, line 3: empty caption")
        'captions.csv, line 3: empty caption'
        >>> source_warning("captions.csv, line 3: empty caption")
        'captions.csv, line 3: empty caption'
    """
    label, marker, original = warning.partition(": " + _RECORDED)
    return original if marker and _SHARD_LABEL.match(label) else warning


def warnings_metadata(warnings: list[str]) -> dict[bytes, bytes]:
    """Parquet schema metadata recording the warnings of the release an export is made from.

    Written even when there is none (``[]``: read without a warning), so a reader tells an
    export with nothing to report from one written before warnings were recorded.

    Example:
        >>> warnings_metadata(["captions.csv, line 3: empty caption"])
        {b'novabench.release_warnings': b'["captions.csv, line 3: empty caption"]'}
    """
    originals = [source_warning(warning) for warning in warnings]
    return {RECORDED_WARNINGS_KEY: json.dumps(originals, ensure_ascii=False).encode("utf-8")}


def recorded_warnings(metadata: Mapping[bytes, bytes] | None, label: str) -> list[str]:
    """The warnings an export recorded of its source, each marked as recorded, named by ``label``.

    Args:
        metadata: the schema metadata of the export's first image shard (None: none).
        label: the shard, relative to the export (how the warnings name where they were found).

    Returns:
        One warning per recorded one (``[]`` when none was recorded, e.g. an export written
        before they were); a single warning saying so when the record cannot be read.

    Example:
        >>> metadata = warnings_metadata(["captions.csv, line 3: empty caption"])
        >>> recorded_warnings(metadata, "data/images/test-00000-of-00001.parquet")
        ['data/images/test-00000-of-00001.parquet: recorded by nova export from the release it was made from: captions.csv, line 3: empty caption']
        >>> recorded_warnings({RECORDED_WARNINGS_KEY: b"{}"}, "s.parquet")[0][:60]
        's.parquet: the warnings nova export recorded cannot be read '
    """
    raw = (metadata or {}).get(RECORDED_WARNINGS_KEY)
    if raw is None:
        return []
    try:
        recorded = json.loads(raw)
    except (ValueError, RecursionError):
        recorded = None
    if not isinstance(recorded, list) or not all(isinstance(item, str) for item in recorded):
        return [
            f"{label}: the warnings nova export recorded cannot be read (not a JSON list of "
            "text): those of the release it was made from are unknown"
        ]
    # One line each, control characters shown: the text is the file's, not ours.
    return [f"{label}: {_RECORDED}{' '.join(visible_text(item).split())}" for item in recorded]


# "<file>, <row or line> (<image>)<more places>: <problem>": what a row warning is about.
_ROW_WARNING = re.compile(r"^[^,]+, .+? \((?P<image>[^()]+)\)[^:]*: (?P<problem>.+)$", re.DOTALL)


def _warning_identity(warning: str) -> tuple[str, ...]:
    """What a warning is about, wherever it was found: the image and the problem of a row
    warning (an export's own row restates its source's with other row numbers), else the
    source's words."""
    original = source_warning(warning)
    match = _ROW_WARNING.match(original)
    return (match["image"], match["problem"]) if match else (original,)


def without_restated_warnings(warnings: list[str]) -> list[str]:
    """An export's warnings, each once: its own rows' that restate a recorded one are dropped.

    An export keeps what its source's rows held (a gold box listed twice, an empty caption),
    so reading it finds those again beside the recorded words; re-exporting would record
    both and each round would add a copy. Each warning found again cancels one recorded
    warning about the same image and problem (or of the same words), so two distinct
    problems of one image stay two; the order is kept.

    Args:
        warnings: the warnings reading an export gave, the recorded ones
            (:func:`recorded_warnings`) among them.

    Returns:
        The warnings, the restated ones left out.

    Example:
        >>> recorded = recorded_warnings(
        ...     warnings_metadata(["data/nova-v1.parquet, row 2 (case0002_001.png): empty caption"]),
        ...     "data/images/test-00000-of-00001.parquet")
        >>> found = "data/images/test-00000-of-00001.parquet, row 1 (case0002_001.png): empty caption"
        >>> without_restated_warnings([*recorded, found]) == recorded
        True
    """
    unmatched: dict[tuple[str, ...], int] = {}
    recorded_seen: set[str] = set()
    kept: list[str] = []
    for warning in warnings:
        identity = _warning_identity(warning)
        if source_warning(warning) != warning:  # recorded: kept, each text once
            if warning in recorded_seen:
                continue
            recorded_seen.add(warning)
            unmatched[identity] = unmatched.get(identity, 0) + 1
            kept.append(warning)
        elif unmatched.get(identity, 0) > 0:
            unmatched[identity] -= 1  # found again: the recorded words stand for it
        else:
            kept.append(warning)
    return kept
