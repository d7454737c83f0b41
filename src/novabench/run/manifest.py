"""Run manifests and merging: the record kept beside a predictions file, and shard joining.

A run's manifest (``<file>.manifest.json``) says what answered, how it was asked, on which
release and shard, and how far the run got. :class:`RunManifest` reads, writes and compares
it; :func:`merge_prediction_files` joins the files of a sharded run and their manifests.
The names are also importable from :mod:`novabench.run.predictions`.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from novabench import checks
from novabench._files import read_text_file, write_text_atomic
from novabench.errors import OVERWRITE, NovaInputError, Option, warn_at_caller

if TYPE_CHECKING:
    from novabench.run.predictions import PredictionSet

__all__ = [
    "FILE_RECORD_FORMAT_VERSION",
    "FINISHED_STATUSES",
    "MANIFEST_SUFFIX",
    "RESUMED_TAIL_REASON",
    "FileCheck",
    "PartialLine",
    "RAW_ANSWERS_FORMAT",
    "RUNNING_STATUS",
    "RECORDED_BACKEND_KEYS",
    "SNAPSHOT_STATUS",
    "SHARD_SPECIFIC_KEYS",
    "RunManifest",
    "UnverifiedFileWarning",
    "backend_identity",
    "check_recorded_file",
    "check_replaceable_output",
    "file_check_notice",
    "file_record",
    "finished_status",
    "unverified_input",
    "bytes_through_line",
    "recording_format_version",
    "is_running_status",
    "manifest_mismatch",
    "manifest_path_for",
    "merge_prediction_files",
    "read_manifest",
    "release_identity",
    "still_being_written",
    "unfinished_run_notice",
    "write_manifest",
]

#: The name a run manifest adds to its predictions file's name (``run.jsonl.manifest.json``).
MANIFEST_SUFFIX = ".manifest.json"

_is_number = checks.is_real_number  # booleans (numpy's too) are no numbers here either

# Manifest keys that legitimately differ between the shards of one run (and between a run
# and its resume): how far it got, when, how it ran, and which novabench version wrote it.
SHARD_SPECIFIC_KEYS = frozenset(
    (
        "shard",
        "counts",
        "created_at",
        "updated_at",
        "status",
        "runtime",
        "merged_from",
        "novabench_version",
        "format_version",  # 2 from when the file's digest is recorded: how, not what, it records
        "file",  # the bytes of each shard, and of a run before and after its resume
    )
)
# Backend description keys that are recorded but never compared: where the server was
# (URL, port), the library versions, and how images travelled do not change what answered.
RECORDED_BACKEND_KEYS = frozenset(("endpoint", "versions", "image_transport", "image_encoding"))
# Fields a run's manifest (one with a ``format``) always states, null meaning "not set".
_RUN_FIELDS = (
    "format",
    "format_version",
    "novabench_version",
    "backend",
    "model",
    "revision",
    "prompts",
    "generation",
    "box_convention",
    "shard",
    "release",
    "created_at",
    "runtime",
    "tasks",
    "status",
    "updated_at",
    "counts",
    "file",
)
# Expected JSON kinds of the fields a reader relies on (others are kept as written).
_MANIFEST_KINDS: dict[str, tuple[type, ...]] = {
    "format": (str,),
    "model": (str,),
    "box_convention": (str,),
    "status": (str,),
    "backend": (dict,),
    "prompts": (dict,),
    "shard": (dict,),
    "release": (dict,),
    "counts": (dict,),
    "file": (dict,),
    "parsed": (dict,),
    "task_settings": (dict,),
    "tasks": (list,),
    "merged_from": (list,),
    "missing_shards": (list,),
}


@dataclass
class RunManifest:
    """The record of one run, kept next to its predictions as ``<file>.manifest.json``.

    It says what answered (backend, model, revision, generation settings), how it was asked
    (prompts and their SHA-256, box convention), on what (the release's fingerprint and
    counts), which shard, and how far the run got. :func:`merge_prediction_files`, the runner,
    ``nova parse`` and the report all read and write manifests through this class.

    ``task_settings`` keeps, per task, what was set for it beyond the prompt (generation
    settings; the box convention for localisation), so runs of different tasks appended to
    one file keep each task's own.

    ``file`` is the SHA-256 and size of the predictions file as its writer left it when it
    last wrote the manifest (:func:`file_record`); readers check it
    (:func:`check_recorded_file`), so an edited or swapped file is not scored under the
    manifest's claims. Manifests written before it was recorded have none.

    Every attribute is optional (None when the manifest does not say). Keys this class does
    not know are kept in ``extra`` and written back unchanged.

    Example:
        >>> import tempfile, pathlib
        >>> target = pathlib.Path(tempfile.mkdtemp()) / "pred.jsonl"
        >>> manifest = RunManifest(model="tiny", release={"layout": "v1", "fingerprint": "ab12"})
        >>> manifest.write(target).name
        'pred.jsonl.manifest.json'
        >>> RunManifest.read(target) == manifest, manifest.release_identity
        (True, {'fingerprint': 'ab12'})
    """

    #: Keys that legitimately differ between the shards of one run.
    SHARD_KEYS: ClassVar[frozenset[str]] = SHARD_SPECIFIC_KEYS

    format: str | None = None
    format_version: int | None = None
    novabench_version: str | None = None
    backend: dict[str, Any] | None = None
    model: str | None = None
    revision: Any = None
    prompts: dict[str, Any] | None = None
    generation: Any = None
    box_convention: str | None = None
    shard: dict[str, Any] | None = None
    release: dict[str, Any] | None = None
    created_at: str | None = None
    runtime: Any = None
    tasks: list[str] | None = None
    status: str | None = None
    updated_at: str | None = None
    counts: dict[str, Any] | None = None
    merged_from: list[Any] | None = None
    missing_shards: list[int] | None = None
    parsed: dict[str, Any] | None = None
    task_settings: dict[str, Any] | None = None
    file: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    # ------------------------------------------------------------------ files

    @staticmethod
    def path_for(predictions_path: str | os.PathLike) -> Path:
        """The manifest that travels with a predictions file: ``<file>.manifest.json``.

        Example:
            >>> RunManifest.path_for("runs/qwen.jsonl").name
            'qwen.jsonl.manifest.json'
        """
        path = Path(predictions_path)
        return path.with_name(path.name + MANIFEST_SUFFIX)

    @classmethod
    def read(cls, predictions_path: str | os.PathLike) -> RunManifest | None:
        """The manifest of a predictions file, or None when it has none.

        Raises:
            NovaInputError: the manifest is not a JSON object, or a field has the wrong kind.

        Example:
            >>> RunManifest.read("/nonexistent/pred.jsonl") is None
            True
        """
        path = cls.path_for(predictions_path)
        if not path.is_file():
            return None
        try:
            data = json.loads(read_text_file(path))
        except RecursionError:
            raise NovaInputError("JSON nested too deeply to read", source=str(path)) from None
        except json.JSONDecodeError as error:
            raise NovaInputError(
                f"not valid JSON: {error.msg}", source=str(path), record=f"line {error.lineno}"
            ) from None
        return cls.from_dict(data, source=str(path))

    def write(self, predictions_path: str | os.PathLike) -> Path:
        """Write the manifest next to its predictions file, atomically and durably.

        A reader never sees a half-written manifest, even if the process dies mid-write.

        Example:
            >>> import tempfile, pathlib
            >>> RunManifest(model="m").write(pathlib.Path(tempfile.mkdtemp()) / "p.jsonl").name
            'p.jsonl.manifest.json'
        """
        text = (
            json.dumps(self.to_dict(), indent=2, ensure_ascii=False, allow_nan=False, default=str)
            + "\n"
        )
        return write_text_atomic(self.path_for(predictions_path), text, durable=True)

    # ------------------------------------------------------------------ dicts

    @classmethod
    def from_dict(cls, data: Any, *, source: str | None = None) -> RunManifest:
        """A manifest from its JSON object; unknown keys go to ``extra``.

        Example:
            >>> RunManifest.from_dict({"model": "m", "note": "x"}).extra
            {'note': 'x'}
            >>> RunManifest.from_dict({"shard": 3})  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            novabench.errors.NovaInputError: field 'shard': must be an object or null, got int
        """
        if not isinstance(data, Mapping):
            raise NovaInputError("a manifest must be a JSON object", source=source)
        known = {f.name for f in fields(cls)} - {"extra"}
        values: dict[str, Any] = {}
        for key, value in data.items():
            kinds = _MANIFEST_KINDS.get(key)
            if value is not None and kinds is not None and not isinstance(value, kinds):
                kind = "an object" if dict in kinds else "a list" if list in kinds else "a string"
                raise NovaInputError(
                    f"must be {kind} or null, got {type(value).__name__}", source=source, field=key
                )
            values[key] = value
        extra = {key: value for key, value in values.items() if key not in known}
        return cls(**{k: v for k, v in values.items() if k in known}, extra=extra)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object written to disk.

        A run's manifest (one with a ``format``) states every run field, null meaning "not
        set", and a merged one states ``shard: null`` (no longer a shard); any other manifest
        holds only what it was given.

        Example:
            >>> RunManifest(model="m", shard=None).to_dict()
            {'model': 'm'}
            >>> RunManifest(format="novabench-raw-answers").to_dict()["shard"] is None
            True
        """
        always = set(_RUN_FIELDS) if self.format is not None else set()
        if self.merged_from is not None:
            always.add("shard")
        data = {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if f.name != "extra" and (getattr(self, f.name) is not None or f.name in always)
        }
        data.update(self.extra)
        return data

    # ------------------------------------------------------------------ comparing

    @property
    def release_identity(self) -> Any:
        """The ``release`` entry without its layout (see :func:`release_identity`).

        Example:
            >>> RunManifest(release={"layout": "export", "fingerprint": "ab12"}).release_identity
            {'fingerprint': 'ab12'}
        """
        return release_identity(self.release)

    @property
    def release_fingerprint(self) -> str | None:
        """The fingerprint of the release the run answered, when recorded.

        Example:
            >>> RunManifest(release={"fingerprint": "ab12"}).release_fingerprint
            'ab12'
        """
        fingerprint = (self.release or {}).get("fingerprint")
        return str(fingerprint) if fingerprint else None

    def run_identity(self) -> dict[str, Any]:
        """What must agree between the shards of one run: every key but the shard keys,
        with the release compared by content.

        Example:
            >>> RunManifest(model="m", status="complete", shard={"index": 0}).run_identity()
            {'model': 'm'}
        """
        kept = {key: v for key, v in self.to_dict().items() if key not in self.SHARD_KEYS}
        if "release" in kept:
            kept["release"] = release_identity(kept["release"])
        if "backend" in kept:
            kept["backend"] = backend_identity(kept["backend"])
        return kept

    def differences(self, other: RunManifest) -> list[str]:
        """The keys in which two manifests disagree as runs (shard keys ignored), sorted.

        Example:
            >>> RunManifest(model="a", shard={"index": 0}).differences(RunManifest(model="b"))
            ['model']
        """
        mine, theirs = self.run_identity(), other.run_identity()
        return sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))

    @classmethod
    def merged(
        cls,
        shards: Sequence[tuple[Path, RunManifest]],
        *,
        snapshots: Mapping[Path, str] | None = None,
        files: Mapping[Path, Mapping[str, Any]] | None = None,
    ) -> RunManifest:
        """The manifest of shard files joined into one: the first shard's run fields, every
        shard's counts added up, their statuses and runtimes kept, and the shards not merged.

        A shard in ``snapshots`` (path -> its writer, as :func:`novabench.run.lock.active_writer`
        said) was still being written when merged: the merged file holds its answers up to
        then, so its status becomes :data:`SNAPSHOT_STATUS` and its ``merged_from`` entry
        names the writer. A shard in ``files`` (path -> the SHA-256 and size of its bytes as
        merged, and their ``unverified_from``: a :func:`file_record`) gets that record as its
        entry's ``file``, so the merge can be checked against the shards later.

        Example:
            >>> a = RunManifest(model="m", shard={"index": 0, "count": 2}, status="complete")
            >>> merged = RunManifest.merged([(Path("a.jsonl"), a)])
            >>> merged.shard is None, merged.missing_shards, merged.status
            (True, [1], 'complete')
            >>> b = RunManifest(model="m", shard={"index": 1, "count": 2}, status="running")
            >>> merged = RunManifest.merged([(Path("a.jsonl"), a), (Path("b.jsonl"), b)],
            ...                             snapshots={Path("b.jsonl"): "pid 7"},
            ...     files={Path("a.jsonl"): {"sha256": "ab" * 32, "bytes": 9}})
            >>> merged.status, merged.merged_from[1]["writer_when_merged"]
            ('mixed: complete, running-when-merged', 'pid 7')
            >>> merged.merged_from[0]["file"]["bytes"], "file" in merged.merged_from[1]
            (9, False)
        """
        first = shards[0][1]
        snapshots = snapshots or {}
        files = files or {}
        statuses = {SNAPSHOT_STATUS if p in snapshots else m.status for p, m in shards}
        sources = []
        for p, m in shards:
            source: dict[str, Any] = {"path": str(p), "shard": m.shard, "counts": m.counts}
            if p in files:
                source["file"] = dict(files[p])
            if p in snapshots:
                source["status"] = m.status
                source["writer_when_merged"] = snapshots[p]
            sources.append(source)
        return replace(
            first,
            shard=None,
            merged_from=sources,
            counts=_sum_counts([m.counts for _, m in shards]),
            status=(
                statuses.pop()
                if len(statuses) == 1
                else "mixed: " + ", ".join(sorted(map(str, statuses)))
            ),
            runtime=[m.runtime for _, m in shards],
            missing_shards=_missing_shards([m.shard for _, m in shards]),
            extra=dict(first.extra),
        )


@dataclass(frozen=True)
class PartialLine:
    """The last line of a shard that its writer was in the middle of when it was merged.

    ``nova merge --allow-running`` takes a running shard's complete lines only; this one is
    set aside (left where it is, not merged) and recorded in the merged manifest.

    Attributes:
        line: its 1-based line number in the shard.
        size: how many bytes of it were written then.

    Example:
        >>> PartialLine(line=12, size=40).describe()
        'its line 12 was half-written (40 bytes, no line break yet): set aside, not merged'
    """

    line: int
    size: int

    def describe(self, done: str = "merged") -> str:
        """The one sentence a merge's note and the merged manifest say about it (``done``:
        what the line was left out of; ``nova evaluate`` says "scored")."""
        return (
            f"its line {self.line} was half-written ({self.size} bytes, no line break yet): "
            f"set aside, not {done}"
        )


#: The statuses of a run that asked every item it was given (model errors included).
FINISHED_STATUSES = ("complete", "complete-with-errors")
#: The status a run's manifest holds while it is written (and after its writer was killed).
RUNNING_STATUS = "running"
#: A merged shard's status when it was still being written as it was merged
#: (``nova merge --allow-running``): the merged file holds its answers up to then only.
SNAPSHOT_STATUS = "running-when-merged"
_ENDED_EARLY = ("interrupted", "stopped")


def _status_parts(status: str) -> list[str]:
    """A manifest status as statuses: itself, or the parts of a merged ``mixed: a, b``."""
    if status.startswith("mixed: "):
        return [part.strip() for part in status[len("mixed: ") :].split(",")]
    return [status]


def finished_status(status: Any) -> bool:
    """Whether a manifest status is a finished run's (every part, for merged shards).

    A manifest without a status (written by hand, or by another tool) says nothing and
    counts as finished: only a recorded unfinished status is reported.

    Example:
        >>> [finished_status(s) for s in ("complete", "mixed: complete, complete-with-errors")]
        [True, True]
        >>> [finished_status(s) for s in ("running", "interrupted", "mixed: complete, stopped")]
        [False, False, False]
        >>> finished_status(None)
        True
    """
    if not isinstance(status, str):
        return True
    return all(part in FINISHED_STATUSES for part in _status_parts(status))


def is_running_status(status: Any) -> bool:
    """Whether a manifest status says (any shard of) the run was being written.

    Example:
        >>> is_running_status("running"), is_running_status("mixed: complete, running")
        (True, True)
        >>> is_running_status("interrupted")
        False
    """
    return isinstance(status, str) and RUNNING_STATUS in _status_parts(status)


#: The ``format`` of the manifest ``nova run`` writes beside its raw answers.
RAW_ANSWERS_FORMAT = "novabench-raw-answers"


#: The manifest ``format_version`` from which every writer records its file's digest
#: (``file``): such a manifest without one was edited, not written by an older novabench.
FILE_RECORD_FORMAT_VERSION = 2


def file_record(
    predictions_path: str | os.PathLike, unverified_from: Sequence[Mapping[str, Any]] = ()
) -> dict[str, Any]:
    """The SHA-256 and size of a predictions file as it is now: a manifest's ``file`` entry.

    Args:
        predictions_path: the file.
        unverified_from: what :func:`unverified_input` said of the bytes it was made from
            that could not be verified; kept as ``unverified_from`` (left out when empty),
            so the digest of a file written from them never reads as fully verified.

    Example:
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "run.jsonl"
        >>> _ = path.write_bytes(b"abc")
        >>> record = file_record(path)
        >>> record["bytes"], record["sha256"][:16]
        (3, 'ba7816bf8f01cfea')
        >>> file_record(path, [{"path": "shard1.jsonl", "bytes": 3}])["unverified_from"]
        [{'path': 'shard1.jsonl', 'bytes': 3}]
    """
    from novabench._files import file_sha256

    path = Path(predictions_path)
    record: dict[str, Any] = {"sha256": file_sha256(path), "bytes": path.stat().st_size}
    if unverified_from:
        record["unverified_from"] = [dict(entry) for entry in unverified_from]
    return record


@dataclass(frozen=True)
class FileCheck:
    """What checking a predictions file against its manifest's ``file`` entry found.

    Attributes:
        path: the predictions file.
        checked: ``"sha256"`` (every byte matches), ``"first_bytes"`` (a run still being
            written: the bytes its manifest recorded match, the ones appended since are
            not checked) or ``"unrecorded"`` (the manifest records no digest: nothing
            checked).
        checked_bytes: how many bytes were checked.
        unchecked_bytes: how many bytes after them were not (``"unrecorded"``: the whole
            file's, or the bytes a reader of a running file took).
        unverified_from: the manifest's ``file.unverified_from``: bytes the file was written
            from (another file's, or a killed run's) that could not be verified, so its
            digest vouches for what was written from them, not for them.

    Example:
        >>> FileCheck("run.jsonl", "first_bytes", 1200, 300).to_dict()["unchecked_bytes"]
        300
    """

    path: str
    checked: str
    checked_bytes: int = 0
    unchecked_bytes: int = 0
    unverified_from: tuple[dict[str, Any], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The JSON object a report keeps (``predictions.file_checks``)."""
        checked: dict[str, Any] = {
            "path": self.path,
            "checked": self.checked,
            "checked_bytes": self.checked_bytes,
            "unchecked_bytes": self.unchecked_bytes,
        }
        if self.unverified_from:
            checked["unverified_from"] = [dict(entry) for entry in self.unverified_from]
        return checked


class UnverifiedFileWarning(UserWarning):
    """A predictions file read whose bytes its manifest does not all vouch for
    (:func:`file_check_notice`'s line), told to a Python caller of
    :func:`merge_prediction_files`; ``nova merge`` prints it as a ``note:`` line.

    Example:
        >>> issubclass(UnverifiedFileWarning, UserWarning)
        True
    """


def _prefix_sha256(path: Path, size: int) -> str:
    """The SHA-256 of the first ``size`` bytes of ``path``."""
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        left = size
        while left > 0:
            block = handle.read(min(1 << 20, left))
            if not block:
                break
            digest.update(block)
            left -= len(block)
    return digest.hexdigest()


def check_recorded_file(
    predictions_path: str | os.PathLike,
    manifest: RunManifest,
    *,
    sha256: str | None = None,
    advice: str | None = None,
) -> FileCheck:
    """Check that a predictions file is the one its manifest records (its ``file`` entry).

    A manifest's claims (model, prompts, box convention, release, finished) hold only for
    the bytes its writer left. A finished run's file must match the recorded SHA-256 and
    size exactly; a run still being written (status ``running``, its writer appending) must
    begin with the recorded bytes, and what was appended since cannot be checked until the
    run ends and records it. A manifest written before novabench recorded the digest checks
    nothing, and says so (``checked == "unrecorded"``).

    Args:
        predictions_path: the predictions file.
        manifest: its manifest.
        sha256: the file's digest when the caller has just computed it (saves a read).
        advice: the way forward a refusal ends with (default: give the file as the run
            wrote it, or without its manifest).

    Returns:
        The :class:`FileCheck`.

    Raises:
        NovaInputError: the file is not the one recorded; the message names both files,
            the field is ``file.sha256`` (``file`` when the entry itself is malformed).

    Example:
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "run.jsonl"
        >>> _ = path.write_text('{"case_id": "case0001", "raw_diagnoses": "Glioma."}\\n')
        >>> manifest = RunManifest(status="complete", file=file_record(path))
        >>> check_recorded_file(path, manifest).checked
        'sha256'
        >>> _ = path.write_text('{"case_id": "case0001", "raw_diagnoses": "Abscess"}\\n')
        >>> check_recorded_file(path, manifest)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: ...run.jsonl.manifest.json, field 'file.sha256': \
run.jsonl is not the file this manifest records: ...
        >>> check_recorded_file(path, RunManifest(status="complete")).checked
        'unrecorded'
    """
    path = Path(predictions_path)
    manifest_file = RunManifest.path_for(path)
    record = manifest.file
    if record is None:
        version = manifest.format_version
        if type(version) is int and version >= FILE_RECORD_FORMAT_VERSION:
            # Its writer recorded one: taken out, the file would pass as an older run's.
            raise NovaInputError(
                f"missing: a manifest of format_version {version} always records the SHA-256 "
                f"of its file (format_version {FILE_RECORD_FORMAT_VERSION} on), so "
                f"{path.name} cannot be shown to be the file it describes; "
                + (
                    advice
                    or f"restore {manifest_file.name} as it was written, or give {path.name} "
                    "without it (then nothing it records applies)"
                ),
                source=str(manifest_file),
                field="file",
            )
        # Nothing vouched for: every byte unchecked (a reader of a running file may take
        # fewer, its complete lines, and carries those: unverified_input).
        return FileCheck(str(path), "unrecorded", 0, path.stat().st_size)
    recorded_sha = record.get("sha256")
    recorded_size = record.get("bytes")
    if (
        not isinstance(recorded_sha, str)
        or len(recorded_sha) != 64
        or type(recorded_size) is not int  # JSON's whole numbers; never a boolean
        or recorded_size < 0
    ):
        raise NovaInputError(
            'must be an object {"sha256": 64 hex digits, "bytes": a whole number} as '
            f"nova run writes it, got {json.dumps(record, default=str)[:80]}",
            source=str(manifest_file),
            field="file",
        )
    unverified = _unverified_from(record, manifest_file)
    from novabench._files import file_sha256

    # Only a run's own file grows after its manifest: parse and merge write theirs whole,
    # whatever status they copied from their input.
    running = is_running_status(manifest.status) and not _written_whole(manifest)
    size = path.stat().st_size
    if size == recorded_size:
        found = sha256 if sha256 is not None else file_sha256(path)
        if found == recorded_sha:
            return FileCheck(str(path), "sha256", size, 0, unverified)
    elif size > recorded_size and running:
        # Its writer appends: the bytes it had written when it wrote the manifest stay.
        found = _prefix_sha256(path, recorded_size)
        if found == recorded_sha:
            return FileCheck(
                str(path), "first_bytes", recorded_size, size - recorded_size, unverified
            )
    else:
        found = file_sha256(path)
    how = "begin with" if running and size > recorded_size else "be"
    raise NovaInputError(
        f"{path.name} is not the file this manifest records: it should {how} {recorded_size:,} "
        f"bytes with SHA-256 {recorded_sha[:12]}, {path.name} has {size:,} bytes"
        + (f" with SHA-256 {found[:12]}" if size == recorded_size or how == "be" else "")
        + " (changed or replaced since the run wrote it); "
        + (
            advice
            or f"give {path.name} as the run wrote it, or give it without "
            f"{manifest_file.name} (then nothing it records applies)"
        ),
        source=str(manifest_file),
        field="file.sha256",
    )


def _written_whole(manifest: RunManifest) -> bool:
    """Whether the manifest is of a file ``nova parse`` or ``nova merge`` wrote at once."""
    return manifest.parsed is not None or manifest.merged_from is not None


def _unverified_from(record: Mapping[str, Any], manifest_file: Path) -> tuple[dict[str, Any], ...]:
    """A ``file`` entry's ``unverified_from``, checked: a list of ``{"path", "bytes"}``."""
    entries = record.get("unverified_from")
    if entries is None:
        return ()
    if isinstance(entries, list) and all(
        isinstance(entry, Mapping)
        and isinstance(entry.get("path"), str)
        and type(entry.get("bytes")) is int
        and entry["bytes"] > 0
        for entry in entries
    ):
        return tuple(dict(entry) for entry in entries)
    raise NovaInputError(
        'must be a list of {"path": a file name, "bytes": a whole number above 0} as '
        f"novabench writes it, got {json.dumps(entries, default=str)[:80]}",
        source=str(manifest_file),
        field="file.unverified_from",
    )


def unverified_input(
    check: FileCheck, *, reason: str | None = None, resumed: bool = False
) -> list[dict[str, Any]]:
    """What a file written from a checked input carries of the input's unverifiable bytes.

    A file made from another (a parse, a merge, a resumed run) gets a digest of its own,
    which shows only that it is what its writer wrote: bytes its writer read that their
    manifest could not vouch for stay unverified, and its manifest says so
    (``file.unverified_from``) for every reader to repeat.

    Args:
        check: what :func:`check_recorded_file` found of the input.
        reason: why its unchecked bytes were not verified (default: from ``check``).
        resumed: the input is the file being written (a resumed run): its entries stay its
            own. Otherwise (a parse, a merge) a resumed run's kept tail
            (:data:`RESUMED_TAIL_REASON`) it carries is marked ``"carried": true``: input
            of another file, which may have the same name in another folder.

    Returns:
        The input's own ``unverified_from`` entries, then one for its bytes not checked
        (all of them for a manifest without ``file``), each ``{"path", "bytes", "reason"}``.

    Example:
        >>> unverified_input(FileCheck("runs/live.jsonl", "first_bytes", 1200, 300))
        [{'path': 'live.jsonl', 'bytes': 300, 'reason': 'appended after its manifest last recorded it'}]
        >>> unverified_input(FileCheck("runs/run.jsonl", "sha256", 1500, 0))
        []
        >>> tail = {"path": "run.jsonl", "bytes": 209, "reason": RESUMED_TAIL_REASON}
        >>> resumed = FileCheck("a/run.jsonl", "sha256", 1500, 0, unverified_from=(tail,))
        >>> [e.get("carried") for e in unverified_input(resumed, resumed=True)]
        [None]
        >>> [e.get("carried") for e in unverified_input(resumed)]  # parsed into b/run.jsonl
        [True]
    """
    carried = [
        {**entry, "carried": True}
        if not resumed and entry.get("reason") == RESUMED_TAIL_REASON
        else dict(entry)
        for entry in check.unverified_from
    ]
    name = Path(check.path).name  # manifests and reports travel: the name only
    if check.checked == "unrecorded":
        if check.unchecked_bytes:  # the bytes read: all of them, nothing being vouched for
            why = reason or "its manifest records no SHA-256 of it"
            carried.append({"path": name, "bytes": check.unchecked_bytes, "reason": why})
    elif check.unchecked_bytes:
        why = reason or "appended after its manifest last recorded it"
        carried.append({"path": name, "bytes": check.unchecked_bytes, "reason": why})
    return carried


#: Why a resumed run's lines past its manifest's last record are not verified: an earlier
#: call (killed) wrote them, and the resume kept them (``file.unverified_from``'s ``reason``).
RESUMED_TAIL_REASON = "written by an earlier call that ended before its manifest recorded them"


def _resumed_tail_of(entry: Mapping[str, Any], name: str) -> bool:
    """Whether an ``unverified_from`` entry is the file ``name``'s own kept tail (a resume),
    not one carried from an input of that name (:func:`unverified_input`)."""
    return (
        entry.get("reason") == RESUMED_TAIL_REASON
        and entry.get("carried") is not True
        and Path(str(entry.get("path"))).name == name
    )


def file_check_notice(checked: Sequence[Mapping[str, Any]]) -> str:
    """The one line a report says of predictions files whose bytes were not all checked.

    Args:
        checked: per file with a manifest, what :meth:`FileCheck.to_dict` gave.

    Returns:
        The line ("" when every such file matched its manifest's SHA-256).

    Example:
        >>> file_check_notice([{"path": "/r/old.jsonl", "checked": "unrecorded"}])
        'note: old.jsonl could not be verified: its manifest records no SHA-256 of the file \
(written by an older novabench), so nothing shows it is the file the run wrote'
        >>> print(file_check_notice([{"path": "live.jsonl", "checked": "first_bytes",
        ...     "checked_bytes": 1200, "unchecked_bytes": 300}]))
        note: live.jsonl: its first 1,200 bytes match its manifest's SHA-256; the 300 bytes \
its writer appended since are not verified (the run records them as it goes and when it ends)
        >>> file_check_notice([{"path": "run.jsonl", "checked": "sha256"}])
        ''
        >>> print(file_check_notice([{"path": "parsed.jsonl", "checked": "sha256",
        ...     "unverified_from": [{"path": "live.jsonl", "bytes": 300,
        ...                          "reason": "appended after its manifest last recorded it"}]}]))
        note: parsed.jsonl was written from 300 bytes of input that could not be verified: \
300 bytes of live.jsonl (appended after its manifest last recorded it); its SHA-256 shows \
only that it is what was written from them

        A resumed run's own lines that an earlier call wrote past its manifest's last record
        (:data:`RESUMED_TAIL_REASON`) are no input it was written from: they were kept.

        >>> print(file_check_notice([{"path": "run.jsonl", "checked": "sha256",
        ...     "unverified_from": [{"path": "run.jsonl", "bytes": 209,
        ...                          "reason": RESUMED_TAIL_REASON}]}]))
        note: run.jsonl: the earlier run's lines past its manifest's last record (209 bytes: \
it ended before recording them) were kept when it resumed and could not be verified; its \
SHA-256 shows only that they are the lines found then
    """
    parts = []
    for check in checked:
        name = Path(str(check.get("path"))).name  # reports travel: the name only
        entries = [e for e in check.get("unverified_from") or [] if isinstance(e, Mapping)]
        kept = [e for e in entries if _resumed_tail_of(e, name)]
        sources = [e for e in entries if not _resumed_tail_of(e, name)]
        if kept:
            parts.append(
                f"{name}: the earlier run's lines past its manifest's last record "
                f"({sum(int(e.get('bytes') or 0) for e in kept):,} bytes: it ended before "
                "recording them) were kept when it resumed and could not be verified; its "
                "SHA-256 shows only that they are the lines found then"
            )
        if sources:
            total = sum(int(e.get("bytes") or 0) for e in sources)
            named = ", ".join(
                f"{int(e.get('bytes') or 0):,} bytes of {Path(str(e.get('path'))).name}"
                + (f" ({e['reason']})" if e.get("reason") else "")
                for e in sources
            )
            parts.append(
                f"{name} was written from {total:,} bytes of input that could not be "
                f"verified: {named}; its SHA-256 shows only that it is what was written "
                "from them"
            )
        if check.get("checked") == "unrecorded":
            parts.append(
                f"{name} could not be verified: its manifest records no SHA-256 of the file "
                "(written by an older novabench), so nothing shows it is the file the run wrote"
            )
        elif check.get("checked") == "first_bytes" and not check.get("checked_bytes"):
            parts.append(
                f"{name}: none of its {int(check.get('unchecked_bytes') or 0):,} bytes is "
                "verified: its writer appended them all since it wrote the manifest (the run "
                "records them as it goes and when it ends)"
            )
        elif check.get("checked") == "first_bytes":
            parts.append(
                f"{name}: its first {int(check.get('checked_bytes') or 0):,} bytes match its "
                f"manifest's SHA-256; the {int(check.get('unchecked_bytes') or 0):,} bytes its "
                "writer appended since are not verified (the run records them as it goes and "
                "when it ends)"
            )
    return f"note: {'; '.join(parts)}" if parts else ""


def manifest_mismatch(
    manifest: RunManifest, answered: Mapping[str, int], tasks_with_lines: Sequence[str]
) -> str | None:
    """Why a run manifest cannot be the record of the predictions file it is given with.

    A manifest ``nova run`` wrote records, per task, the items answered before the call and
    by it (``counts``: ``done_before`` + ``answered``, each answered item a line without
    ``error``; resuming only adds lines) and every task it asked (``tasks``). So the file it
    describes answers at least that many items of each task and holds no task it never
    asked. Manifests of merged or parsed files, and manifests without these records, are
    not judged here.

    Args:
        manifest: the manifest found (or given) with the file.
        answered: per task, the items the file answers (lines without ``error``).
        tasks_with_lines: the tasks the file has any line for.

    Returns:
        The reason, in a few words; None when the file can be the one described.

    Example:
        >>> manifest = RunManifest(format=RAW_ANSWERS_FORMAT, tasks=["localization"],
        ...     counts={"localization": {"items": 132, "done_before": 0, "answered": 130}})
        >>> manifest_mismatch(manifest, {"localization": 130}, ["localization"]) is None
        True
        >>> manifest_mismatch(manifest, {"localization": 12}, ["localization"])
        'it records 130 localization items answered, the file answers 12'
        >>> manifest_mismatch(manifest, {"localization": 130, "diagnosis": 40},
        ...                   ["localization", "diagnosis"])
        'the file answers diagnosis, which it records no run of (tasks: localization)'
    """
    if manifest.format != RAW_ANSWERS_FORMAT or manifest.merged_from or manifest.parsed:
        return None
    if manifest.tasks is not None:
        from novabench.registry import canonical_task

        asked = set()
        for name in manifest.tasks:
            try:
                asked.add(canonical_task(name))
            except (NovaInputError, TypeError):  # no task name: it asked nothing we score
                continue
        unasked = [task for task in tasks_with_lines if task not in asked]
        if unasked:
            return (
                f"the file answers {', '.join(unasked)}, which it records no run of "
                f"(tasks: {', '.join(manifest.tasks) or 'none'})"
            )
    for task, counts in (manifest.counts or {}).items():
        if not isinstance(counts, Mapping):
            continue
        recorded: list[Any] = [counts.get(key) for key in ("done_before", "answered")]
        numbers = [float(value) for value in recorded if _is_number(value) and value >= 0]
        if len(numbers) != len(recorded):  # not what nova run records: nothing to judge by
            continue
        expected = int(sum(numbers))
        found = int(answered.get(task, 0))
        if found < expected:
            return f"it records {expected} {task} items answered, the file answers {found}"
    return None


def unfinished_run_notice(
    runs: Sequence[Mapping[str, Any]], asked_not_answered: Sequence[str]
) -> str:
    """The one line a report of an unfinished run says before any number ("" if none).

    Args:
        runs: per predictions file whose manifest holds an unfinished status, ``{"path",
            "status"}``, and for a ``running`` one ``"writer"``: who wrote it when it was
            scored (what :func:`novabench.run.lock.active_writer` said), None for nobody;
            then ``"writer_ended"``: the writer known to have ended on this machine
            (:func:`novabench.run.lock.ended_writer`), None when that is not known.
        asked_not_answered: tasks a manifest says were asked that no line answers.

    Example:
        >>> unfinished_run_notice([{"path": "run.jsonl", "status": "interrupted"}],
        ...                       ["captioning", "diagnosis"])
        "unfinished run: run.jsonl has manifest status 'interrupted' (it ended before it \
asked every item); captioning and diagnosis were asked and never answered (no line)"
        >>> unfinished_run_notice([{"path": "r.jsonl", "status": "running", "writer": None}], [])
        "unfinished run: r.jsonl is not finished (no end record): manifest status 'running', \
and no writer of it is known on this machine (it may still run elsewhere): scored as it stands"
        >>> unfinished_run_notice([{"path": "r.jsonl", "status": "running", "writer": None,
        ...     "writer_ended": "pid 7 on h, nova run, since t"}], [])[:91]
        "unfinished run: r.jsonl has manifest status 'running' but its writer (pid 7 on h, nova run,"
        >>> unfinished_run_notice([], [])
        ''
    """
    parts = []
    for run in runs:
        # The file's name only: reports and boards travel, the folder is the user's own.
        path, status = Path(str(run.get("path"))).name, run.get("status")
        if is_running_status(status) and run.get("writer"):
            parts.append(
                f"{path} was still being written when scored (manifest status {status!r}; "
                f"{run['writer']}): these scores are of its answers so far, not of the run "
                "once it ends" + (f"; {run['set_aside']}" if run.get("set_aside") else "")
            )
        elif is_running_status(status) and run.get("writer_ended"):
            parts.append(
                f"{path} has manifest status {status!r} but its writer ({run['writer_ended']}) "
                "has ended without recording how (e.g. killed): scored as it stands"
            )
        elif is_running_status(status):
            # No lock file, or its process on another machine: it may still be running.
            parts.append(
                f"{path} is not finished (no end record): manifest status {status!r}, and no "
                "writer of it is known on this machine (it may still run elsewhere): scored "
                "as it stands"
            )
        elif isinstance(status, str) and SNAPSHOT_STATUS in _status_parts(status):
            parts.append(
                f"{path} was merged while a shard was still being written (manifest status "
                f"{status!r}, nova merge --allow-running): it holds that shard's answers up "
                "to the merge, not the ones given after"
            )
        elif isinstance(status, str) and all(p in _ENDED_EARLY for p in _status_parts(status)):
            parts.append(
                f"{path} has manifest status {status!r} (it ended before it asked every item)"
            )
        else:
            parts.append(f"{path} has manifest status {status!r}, not a finished run's")
    if asked_not_answered:
        tasks = list(asked_not_answered)
        named = tasks[0] if len(tasks) == 1 else f"{', '.join(tasks[:-1])} and {tasks[-1]}"
        were = "was" if len(tasks) == 1 else "were"
        writing = any(is_running_status(run.get("status")) and run.get("writer") for run in runs)
        answered = "not answered yet" if writing else "never answered"
        parts.append(f"{named} {were} asked and {answered} (no line)")
    return f"unfinished run: {'; '.join(parts)}" if parts else ""


#: Acting on a run another process still writes: ``allow_running=True`` in Python,
#: ``--allow-running`` on the command line.
ALLOW_RUNNING = Option("allow_running", "--allow-running", "True")


def still_being_written(
    path: str | os.PathLike, status: Any, writer: str, *, action: str, consequence: str
) -> NovaInputError:
    """The one refusal of a run another process still writes (``nova evaluate``, ``nova merge``).

    Args:
        path: the run file.
        status: its manifest status.
        writer: who writes it (what :func:`novabench.run.lock.active_writer` said).
        action: what :data:`ALLOW_RUNNING` does instead, e.g. ``"score the answers so far"``.
        consequence: why acting now is refused, e.g. ``"its scores would change as answers
            arrive"``.

    Example:
        >>> print(still_being_written("r.jsonl", "running", "pid 7", action="merge the answers so far",
        ...                           consequence="the merged file would miss its later answers"))
        r.jsonl, field 'status': the run is still being written (pid 7; manifest status 'running'): \
the merged file would miss its later answers; wait for it to end, or pass \
allow_running=True to merge the answers so far
    """
    return NovaInputError(
        (
            f"the run is still being written ({writer}; manifest status {status!r}): "
            f"{consequence}; wait for it to end, or pass ",
            ALLOW_RUNNING,
            f" to {action}",
        ),
        source=str(path),
        field="status",
    )


def manifest_path_for(predictions_path: str | os.PathLike) -> Path:
    """The manifest that travels with a predictions file (:meth:`RunManifest.path_for`).

    Example:
        >>> manifest_path_for("runs/qwen.jsonl").name
        'qwen.jsonl.manifest.json'
    """
    return RunManifest.path_for(predictions_path)


def read_manifest(predictions_path: str | os.PathLike) -> dict[str, Any] | None:
    """The manifest of a predictions file as a plain dict, or None when it has none.

    A thin form of :meth:`RunManifest.read` for callers that want the JSON object.

    Example:
        >>> read_manifest("/nonexistent/pred.jsonl") is None
        True
    """
    manifest = RunManifest.read(predictions_path)
    return None if manifest is None else manifest.to_dict()


def write_manifest(
    predictions_path: str | os.PathLike, manifest: RunManifest | Mapping[str, Any]
) -> Path:
    """Write the manifest of a predictions file atomically (:meth:`RunManifest.write`).

    Example:
        >>> import tempfile, pathlib
        >>> target = pathlib.Path(tempfile.mkdtemp()) / "pred.jsonl"
        >>> write_manifest(target, {"model": "tiny"}).name
        'pred.jsonl.manifest.json'
        >>> read_manifest(target)
        {'model': 'tiny'}
    """
    if not isinstance(manifest, RunManifest):
        manifest = RunManifest.from_dict(manifest, source=str(manifest_path_for(predictions_path)))
    return manifest.write(predictions_path)


def backend_identity(backend: Any) -> Any:
    """A manifest's ``backend`` entry without what is recorded but not compared
    (:data:`RECORDED_BACKEND_KEYS`: endpoint URL, library versions, image transport), so a
    run resumes, and shards merge, across a changed server address or library upgrade.

    Example:
        >>> backend_identity({"model": "m", "endpoint": "http://a:8000/v1", "versions": {}})
        {'model': 'm'}
    """
    if not isinstance(backend, Mapping):
        return backend
    return {k: v for k, v in backend.items() if k not in RECORDED_BACKEND_KEYS}


def release_identity(release_info: Any) -> Any:
    """A manifest's ``release`` entry without its layout: the same content (fingerprint and
    counts) read from the official folder or from its ``nova export`` is the same release.

    Example:
        >>> release_identity({"layout": "export", "fingerprint": "ab12", "n_images": 3})
        {'fingerprint': 'ab12', 'n_images': 3}
    """
    if isinstance(release_info, Mapping):
        return {key: value for key, value in release_info.items() if key != "layout"}
    return release_info


def merge_prediction_files(
    paths: Sequence[str | os.PathLike],
    out: str | os.PathLike,
    *,
    release: Any = None,
    overwrite: bool = False,
    allow_running: bool = False,
) -> PredictionSet:
    """Join the outputs of sharded runs into one predictions file (and one manifest).

    Every line is copied as written. The same task and item in two files is an error naming
    both files and lines; so are shard manifests that differ in anything but the shard's own
    fields (shard index, counts, dates), since that would mix two configurations in one score.
    A shard another process is still writing (manifest status ``running``, its writer lock
    held) is refused as ``nova evaluate`` refuses it, unless ``allow_running``: then its
    lines so far are merged and the merged manifest says so (:data:`SNAPSHOT_STATUS`; its
    ``merged_from`` entry names the writer and, per task, the answers merged from it, since
    a running shard's own counts are those of its start). Each shard's ``merged_from`` entry
    records the SHA-256 and size of its bytes as merged (``file``, with ``unverified_from``
    when its manifest could not vouch for some), so the merge can be checked against the
    shards later. A shard whose manifest does not vouch for all its bytes is told as an
    :class:`UnverifiedFileWarning` (the line reports say), never printed.

    Args:
        paths: the shard files, e.g. ``pred.shard0.jsonl pred.shard1.jsonl``.
        out: the merged file; written atomically, never over an existing file unless
            ``overwrite``.
        release: optional release to validate item names against.
        overwrite: replace ``out`` when it exists.
        allow_running: merge a shard still being written, as it stands.

    Returns:
        The merged :class:`PredictionSet`.

    Example:
        >>> import json, tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (folder / "a.jsonl").write_text('{"case_id": "case0001", "diagnoses": ["glioma"]}\\n')
        >>> _ = (folder / "b.jsonl").write_text('{"case_id": "case0002", "diagnoses": ["abscess"]}\\n')
        >>> merged = merge_prediction_files([folder / "a.jsonl", folder / "b.jsonl"], folder / "all.jsonl")
        >>> merged.case_ids, merged.diagnoses()
        (['case0001', 'case0002'], [['glioma'], ['abscess']])
    """
    from novabench.run.lock import active_writer
    from novabench.run.predictions import _dump, _prediction_set, _read_records

    if not paths:
        raise NovaInputError("nothing to merge: give at least one predictions file", field="paths")
    out = Path(out)
    resolved = [Path(p) for p in paths]
    check_replaceable_output(out, overwrite=overwrite, inputs={"a shard": resolved})

    manifests = [RunManifest.read(p) for p in resolved]
    with_manifest = [(p, m) for p, m in zip(resolved, manifests) if m is not None]
    if with_manifest and len(with_manifest) != len(resolved):
        lacking = next(p for p, m in zip(resolved, manifests) if m is None)
        raise NovaInputError(
            f"has no manifest while {with_manifest[0][0]} has one; "
            "cannot tell whether they come from one run",
            source=str(lacking),
        )
    # From here on either every input has a manifest (with_manifest) or none has.
    if with_manifest:
        reference = with_manifest[0][1]
        for p, manifest in with_manifest[1:]:
            differing = reference.differences(manifest)
            if differing:
                raise NovaInputError(
                    f"its run differs from {resolved[0]}'s in {', '.join(differing)}; only "
                    "shard fields may differ"
                    + _other_tasks_hint(reference, manifest, differing, resolved),
                    source=str(manifest_path_for(p)),
                    field=differing[0],
                )

    snapshots: dict[Path, str] = {}
    for p, manifest in with_manifest:
        writer = active_writer(p) if is_running_status(manifest.status) else None
        if writer is None:  # finished, or its writer is gone (killed): it stands as it is
            continue
        if not allow_running:  # merged now, the file would lack what the shard still answers
            raise still_being_written(
                p,
                manifest.status,
                writer,
                action="merge the answers so far (the merged manifest says so)",
                consequence="the merged file would lack the answers still to come",
            )
        snapshots[p] = writer

    checks: dict[Path, FileCheck] = {}
    for p, manifest in with_manifest:  # its claims hold for the bytes its run wrote only
        checks[p] = check_recorded_file(p, manifest)
        unverified = file_check_notice([checks[p].to_dict()])
        if unverified:  # a library prints nothing: nova merge prints it, a caller filters it
            warn_at_caller(unverified, UnverifiedFileWarning)

    lines: list[Any] = []
    # A shard at work: its complete lines only; the one its writer is in the middle of waits.
    unfinished: dict[Path, list[PartialLine]] = {p: [] for p in snapshots}
    records, superseded = _read_records(
        resolved, release, keep_answer_over_later_error=False, lines=lines, still_written=unfinished
    )
    write_text_atomic(out, "".join(_dump(payload) for payload in lines), durable=True)
    if with_manifest:
        carried: list[dict[str, Any]] = []
        shard_files: dict[Path, dict[str, Any]] = {}  # each shard's bytes as merged
        for p, manifest in with_manifest:
            check = checks[p]
            taken = p.stat().st_size
            if p in snapshots:  # its writer appended while it was read: count what was merged
                set_aside = unfinished[p]
                last_line = set_aside[0].line - 1 if set_aside else _last_line_from(records, str(p))
                taken = bytes_through_line(p, last_line)
                unchecked = max(0, taken - check.checked_bytes)
                check = replace(check, unchecked_bytes=unchecked)
            not_vouched = unverified_input(check)
            carried += not_vouched
            shard_files[p] = _merged_bytes_record(p, taken, check, manifest, not_vouched)
        # A running shard's recorded counts lag behind its file: count what was merged.
        recounted = {
            p: _recount(records, str(p), manifest.counts)
            for p, manifest in with_manifest
            if p in snapshots
        }
        merged = RunManifest.merged(
            [(p, replace(m, counts=recounted.get(p, m.counts))) for p, m in with_manifest],
            snapshots=snapshots,
            files=shard_files,
        )
        for source in merged.merged_from or []:
            path = Path(source["path"])
            if path in snapshots:
                source["answers_when_merged"] = _answers_from(records, source["path"])
                if unfinished[path]:
                    source["set_aside"] = unfinished[path][0].describe()
        # The merged bytes, not the first shard's; what no shard's manifest vouched for stays
        # unverified in the merged file's record.
        merged.file = file_record(out, carried)
        merged.format_version = recording_format_version(merged.format_version)
        merged.write(out)
    return _prediction_set(str(out), records, release, superseded, sort_keys=True)


def _merged_bytes_record(
    path: Path,
    size: int,
    check: FileCheck,
    manifest: RunManifest,
    unverified: Sequence[Mapping[str, Any]],
) -> dict[str, Any]:
    """A shard's ``merged_from`` ``file``: the SHA-256 and size of its first ``size`` bytes
    (what was merged), with ``unverified_from`` when some could not be verified."""
    recorded = manifest.file or {}
    if check.checked == "sha256" and recorded.get("bytes") == size:  # hashed just now
        digest = str(recorded["sha256"])
    else:
        digest = _prefix_sha256(path, size)
    record: dict[str, Any] = {"sha256": digest, "bytes": size}
    if unverified:
        record["unverified_from"] = [dict(entry) for entry in unverified]
    return record


#: A predictions output: ``out`` of the Python functions, ``--out`` of ``nova parse/merge``.
OUT = Option("out", "--out")

# What per-task runs of one model on one release may differ in: what each task was asked.
_PER_TASK_KEYS = frozenset(("prompts", "task_settings", "tasks", "generation", "box_convention"))


def _other_tasks_hint(
    first: RunManifest, other: RunManifest, differing: Sequence[str], paths: Sequence[Path]
) -> str:
    """The way forward when two files are runs of other tasks by the same model, else ""."""
    if not first.tasks or not other.tasks or set(first.tasks) & set(other.tasks):
        return ""
    if not set(differing) <= _PER_TASK_KEYS:  # another model, release...: no joint score
        return ""
    return (
        f" (these are runs of other tasks, {', '.join(first.tasks)} and "
        f"{', '.join(other.tasks)}, by the same model: no merge is needed, score them "
        f"together with nova evaluate --predictions {' '.join(map(str, paths))})"
    )


def check_replaceable_output(
    out: str | os.PathLike, *, overwrite: bool, inputs: Any, field: Option = OUT
) -> None:
    """Refuse a predictions output that is or holds an input, or an existing file not ours.

    ``out`` and the manifest written beside it are checked against ``inputs`` (see
    :func:`novabench._files.check_output_paths`). An existing ``out`` is replaced only with
    ``overwrite`` and only when novabench wrote it: a run manifest sits beside it, or every
    line of it reads as a predictions line. A user's other file is never replaced.
    ``field`` is the setting that gave ``out``, as errors name it.

    Example:
        >>> import tempfile, pathlib
        >>> notes = pathlib.Path(tempfile.mkdtemp()) / "notes.txt"
        >>> _ = notes.write_text("my notes")
        >>> check_replaceable_output(notes, overwrite=True, inputs=[])  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: ...notes.txt, field 'out': is not a predictions file ...
    """
    from novabench._files import check_output_paths, link_output_refusal
    from novabench.run.predictions import read_predictions

    out = Path(out)
    its_manifest = Option(f"{field.argument} (its manifest)", f"{field.flag} (its manifest)")
    check_output_paths({field: out, its_manifest: RunManifest.path_for(out)}, inputs)
    if not (out.exists() or out.is_symlink()):
        return
    linked = link_output_refusal(out, field)
    if linked is not None:  # what is wrong with it is that it is a link, not what it holds
        raise linked
    if not overwrite:
        raise NovaInputError(
            ("exists already; choose another output or pass ", OVERWRITE, " to replace it"),
            source=str(out),
            field=field,
        )
    if out.is_file() and not out.is_symlink():
        if RunManifest.path_for(out).is_file():
            return
        try:
            read_predictions(out)
            return
        except NovaInputError:
            pass
    raise NovaInputError(
        (
            "is not a predictions file novabench wrote (no run manifest beside it and not "
            "predictions lines); ",
            OVERWRITE,
            " replaces only such a file: remove it yourself or choose another path",
        ),
        source=str(out),
        field=field,
    )


def _last_line_from(records: Mapping[str, Mapping[str, Any]], source: str) -> int:
    """The last line number of the file ``source`` that any merged record came from."""
    return max(
        (r.line for by_item in records.values() for r in by_item.values() if r.source == source),
        default=0,
    )


def bytes_through_line(path: str | os.PathLike, line: int) -> int:
    """How many bytes of ``path`` its first ``line`` lines take (line breaks included).

    What a reader took of a file its writer still appends to, when it read ``line`` lines.

    Example:
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "run.jsonl"
        >>> _ = path.write_bytes(b'{"a": 1}\\n{"b": 2}\\n{"c"')
        >>> bytes_through_line(path, 1), bytes_through_line(path, 2), bytes_through_line(path, 0)
        (9, 18, 0)
    """
    taken = 0
    with open(path, "rb") as handle:
        for _ in range(line):
            text = handle.readline()
            if not text:
                break
            taken += len(text)
    return taken


def recording_format_version(version: Any) -> int:
    """The ``format_version`` of a manifest written with its file's digest: at least
    :data:`FILE_RECORD_FORMAT_VERSION`, so one without ``file`` is never taken for older.

    Example:
        >>> recording_format_version(1), recording_format_version(None), recording_format_version(3)
        (2, 2, 3)
    """
    if type(version) is int and version > FILE_RECORD_FORMAT_VERSION:
        return version
    return FILE_RECORD_FORMAT_VERSION


def _answers_from(records: Mapping[str, Mapping[str, Any]], source: str) -> dict[str, int]:
    """Per task, the answers (not failures) merged from the file ``source``."""
    counted = {
        task: sum(r.source == source and r.error is None for r in by_item.values())
        for task, by_item in records.items()
    }
    return {task: n for task, n in counted.items() if n}


def _recount(
    records: Mapping[str, Mapping[str, Any]], source: str, recorded: Any
) -> dict[str, dict[str, int]]:
    """Per task, the counts of what was merged from the file ``source`` (a running shard).

    ``items`` (the shard's size) stays as recorded; every line merged counts as asked, so
    ``done_before`` is 0 and ``answered`` / ``errors`` / ``too_long`` / ``hit_token_limit``
    are counted from the merged records. (``finish_unknown`` is not on the lines: the
    shard's recorded figure is not carried, as it is of its start.)
    """
    from novabench.run.predictions import TOKEN_LIMIT_FINISH

    recorded = recorded if isinstance(recorded, dict) else {}
    counts: dict[str, dict[str, int]] = {}
    for task, by_item in records.items():
        merged = [r for r in by_item.values() if r.source == source]
        before = recorded.get(task)
        if not merged and not isinstance(before, dict):
            continue
        items: Any = before.get("items") if isinstance(before, dict) else None
        counts[task] = {
            **({"items": int(items)} if _is_number(items) else {}),
            "done_before": 0,
            "answered": sum(r.error is None for r in merged),
            "errors": sum(r.error is not None for r in merged),
            "too_long": sum(r.raw_truncated_from is not None for r in merged),
            "hit_token_limit": sum(r.finish_reason == TOKEN_LIMIT_FINISH for r in merged),
        }
    return counts


def _missing_shards(shards: Sequence[Any]) -> list[int]:
    """Shard indices of an ``n``-way split that none of the merged files holds."""
    counts = {s.get("count") for s in shards if isinstance(s, dict)}
    if len(counts) != 1:
        return []
    count = counts.pop()
    if count is None:  # shards that do not say how many there are: nothing to tell
        return []
    present = {s.get("index") for s in shards if isinstance(s, dict)}
    return [index for index in range(int(count)) if index not in present]


def _sum_counts(all_counts: Sequence[Any]) -> dict[str, dict[str, int]]:
    """Add per-task integer counters of several shard manifests."""
    total: dict[str, Counter] = {}
    for counts in all_counts:
        if not isinstance(counts, dict):
            continue
        for task, numbers in counts.items():
            if isinstance(numbers, dict):
                bucket = total.setdefault(task, Counter())
                bucket.update({k: v for k, v in numbers.items() if _is_number(v)})
    return {task: dict(bucket) for task, bucket in total.items()}
