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

A record in the metadata is lost by any rewrite of the parquet (``pandas.read_parquet(...)
.to_parquet(...)`` keeps none of it), and a sidecar is easily left behind. So every PNG
``nova sample`` and ``nova ingest`` write also says what made it, in its ``Software`` text
chunk (:func:`png_mark`), which survives rewrites, exports (the bytes are embedded) and
copies. A release read without a provenance record whose images carry such marks is read
as what the marks say, noting that the record was missing (:func:`provenance_from_marks`);
one whose images are only partly marked is not the official release either
(:data:`PARTLY_MARKED_ORIGIN`).

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
    "PARTLY_MARKED_ORIGIN",
    "PROVENANCE_FIELDS",
    "RECORDED_WARNINGS_KEY",
    "PROVENANCE_METADATA_KEY",
    "UNREADABLE_ORIGIN",
    "UNREADABLE_PROVENANCE",
    "clean_provenance",
    "provenance_metadata",
    "png_mark",
    "provenance_from_marks",
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
#: The origin of data some of whose images, not all, carry novabench's mark (:func:`png_mark`).
PARTLY_MARKED_ORIGIN = "images partly made by novabench"

#: The value of ``recovered_from`` in a provenance read from the images' marks, not a record.
RECOVERED_FROM_IMAGES = "image marks"

PROVENANCE_FIELDS: dict[str, dict[str, Any]] = {
    "nova sample": {
        "cases": lambda value: _whole(value, minimum=1),
        "seed": lambda value: _whole(value, minimum=0),
        "recovered_from": lambda value: value == RECOVERED_FROM_IMAGES,
    },
    "nova ingest": {"recovered_from": lambda value: value == RECOVERED_FROM_IMAGES},
    UNREADABLE_ORIGIN: {},
    PARTLY_MARKED_ORIGIN: {
        "marked_images": lambda value: _whole(value, minimum=1),
        "images": lambda value: _whole(value, minimum=1),
    },
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
    recovered = (
        " Its provenance record was missing (rewriting the parquet drops it) and was "
        "recovered from the marks in its images."
        if provenance.get("recovered_from") == RECOVERED_FROM_IMAGES
        else ""
    )
    if origin == "nova sample":
        options = "".join(
            f" --{name} {provenance[name]}" for name in ("cases", "seed") if name in provenance
        )
        return (
            f"Synthetic sample made by novabench (`nova sample{options}`), "
            "not the NOVA release: slices of the MNI152 "
            "template with synthetic lesions, for trying the toolkit. Scores on it say nothing "
            f"about clinical ability.{recovered}"
        )
    if origin == "nova ingest":
        return (
            "Built with `nova ingest` from local NIfTI volumes and lesion masks, not the NOVA "
            "release: see its maintainers for the source, consent and licence of the images."
            f"{recovered}"
        )
    if origin == PARTLY_MARKED_ORIGIN:
        counted = (
            f"{provenance['marked_images']} of its {provenance['images']} images "
            + ("carries" if provenance["marked_images"] == 1 else "carry")
            if "marked_images" in provenance and "images" in provenance
            else "Some of its images carry"
        )
        return (
            f"{counted} the mark novabench writes into the images it makes (`nova sample`, "
            "`nova ingest`): the data mixes them with other images, so it is not the official "
            "NOVA release."
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


#: How the mark of each origin starts (the PNG ``Software`` text; ``novabench.data.png``).
_MARK_OF_SAMPLE = re.compile(r"^novabench: nova sample --cases (\d{1,9}) --seed (\d{1,19})\b")
_MARK_OF_INGEST = "novabench: nova ingest"


def png_mark(provenance: Mapping[str, Any]) -> str | None:
    """The ``Software`` text novabench writes into each PNG of data it makes.

    It says what :func:`provenance_notice` would, in a form :func:`provenance_from_marks`
    reads back; None for an origin that makes no images.

    Example:
        >>> png_mark({"origin": "nova sample", "cases": 281, "seed": 0})
        'novabench: nova sample --cases 281 --seed 0 (synthetic images, not NOVA data)'
        >>> png_mark({"origin": "nova ingest"})
        'novabench: nova ingest (not the NOVA release)'
    """
    origin = provenance.get("origin")
    if origin == "nova sample":
        return (
            f"novabench: nova sample --cases {provenance['cases']} --seed {provenance['seed']} "
            "(synthetic images, not NOVA data)"
        )
    if origin == "nova ingest":
        return f"{_MARK_OF_INGEST} (not the NOVA release)"
    return None


def _origin_of_mark(mark: str) -> dict[str, Any]:
    sample = _MARK_OF_SAMPLE.match(mark)
    if sample is not None:
        return {"origin": "nova sample", "cases": int(sample[1]), "seed": int(sample[2])}
    if mark.startswith(_MARK_OF_INGEST):
        return {"origin": "nova ingest"}
    return dict(UNREADABLE_PROVENANCE)


def provenance_from_marks(
    marks: Mapping[str, str], n_images: int, label: str, warnings: list[str]
) -> dict[str, Any] | None:
    """What the images' marks say made a release that holds no provenance record.

    Args:
        marks: filename -> the novabench mark of each image that carries one
            (``novabench.data.png.check_png_marked``).
        n_images: how many images the release holds.
        label: how the warning names where the record was looked for (the parquet).
        warnings: the recovery is noted here.

    Returns:
        None when no image is marked (the official release); the origin every image's mark
        names (``recovered_from`` saying so) when all are marked; :data:`PARTLY_MARKED_ORIGIN`
        when only some are.

    Example:
        >>> mark = png_mark({"origin": "nova sample", "cases": 2, "seed": 0})
        >>> notes = []
        >>> provenance_from_marks({"case0001_001.png": mark, "case0002_001.png": mark}, 2,
        ...                       "data/nova-v1.parquet", notes)
        {'origin': 'nova sample', 'cases': 2, 'seed': 0, 'recovered_from': 'image marks'}
        >>> print(notes[0])
        data/nova-v1.parquet: no novabench provenance record, but all 2 images carry the mark of `nova sample`: read as what made them (the record was missing; recovered from the images)
        >>> provenance_from_marks({"case0001_001.png": mark}, 2, "data/nova-v1.parquet", [])
        {'origin': 'images partly made by novabench', 'marked_images': 1, 'images': 2}
        >>> provenance_from_marks({}, 2, "data/nova-v1.parquet", []) is None
        True
    """
    if not marks:
        return None
    if len(marks) < n_images:
        first = min(marks)
        warnings.append(
            f"{label}: no novabench provenance record, but {len(marks)} of the {n_images} "
            f"images {'carries' if len(marks) == 1 else 'carry'} novabench's mark (first "
            f"{first}): the data mixes images novabench "
            "made with others; it is not the official NOVA release"
        )
        return {"origin": PARTLY_MARKED_ORIGIN, "marked_images": len(marks), "images": n_images}
    origins = [_origin_of_mark(mark) for mark in marks.values()]
    kinds = {origin["origin"] for origin in origins}
    if len(kinds) > 1 or UNREADABLE_ORIGIN in kinds:
        warnings.append(
            f"{label}: no novabench provenance record, and its images carry marks of "
            f"{'different novabench commands' if len(kinds) > 1 else 'novabench that cannot be read'}: "
            "read as data novabench made, not the NOVA release"
        )
        return dict(UNREADABLE_PROVENANCE)
    (origin,) = kinds
    recovered: dict[str, Any] = {"origin": origin}
    for name in ("cases", "seed"):  # only when every image says the same
        values = {entry.get(name) for entry in origins}
        if len(values) == 1 and None not in values:
            recovered[name] = values.pop()
    recovered["recovered_from"] = RECOVERED_FROM_IMAGES
    warnings.append(
        f"{label}: no novabench provenance record, but all {n_images} images carry the mark "
        f"of `{origin}`: read as what made them (the record was missing; recovered from the "
        "images)"
    )
    return recovered


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
