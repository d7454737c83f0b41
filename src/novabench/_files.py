"""File helpers shared by every writer of the toolkit."""

from __future__ import annotations

import errno
import math
import os
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from novabench.errors import NovaOutputError, Option


def give_usual_permissions(path: str | os.PathLike[str]) -> None:
    """Give a file or folder the mode the umask allows (0644/0755 under umask 022).

    ``tempfile.mkstemp`` and ``mkdtemp`` create private entries (0600/0700); a report, a
    run or a release written through them should stay readable by the rest of a lab.

    Example:
        >>> import tempfile, stat
        >>> folder = Path(tempfile.mkdtemp())
        >>> umask = os.umask(0o022); give_usual_permissions(folder); _ = os.umask(umask)
        >>> oct(stat.S_IMODE(folder.stat().st_mode)) == oct(0o777 & ~umask)
        True
    """
    target = Path(path)
    umask = os.umask(0)
    os.umask(umask)
    target.chmod((0o777 if target.is_dir() else 0o666) & ~umask)


UTF8_BOM = b"\xef\xbb\xbf"


def decode_utf8_line(data: bytes, *, source: str | None = None, record: str | None = None) -> str:
    """One line's bytes as text; bytes that are not UTF-8 are a named error, not a traceback.

    Example:
        >>> decode_utf8_line("Axial T2.".encode())
        'Axial T2.'
        >>> decode_utf8_line(b'{"caption": "\\xff"}', source="pred.jsonl", record="line 3")
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: pred.jsonl, line 3: not UTF-8 text: byte 0xff at column 14; save the file as UTF-8
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        from novabench.errors import NovaInputError

        raise NovaInputError(
            f"not UTF-8 text: byte 0x{data[error.start]:02x} at column {error.start + 1}; "
            "save the file as UTF-8",
            source=source,
            record=record,
        ) from None


def read_text_file(path: str | os.PathLike[str], *, source: str | None = None) -> str:
    """A whole UTF-8 text file (a byte order mark skipped); unreadable or non-UTF-8 is named.

    The error names the line (and column) of the first byte that is not UTF-8.

    Example:
        >>> import tempfile
        >>> path = Path(tempfile.mkdtemp()) / "m.json"
        >>> _ = path.write_bytes(b"\\xef\\xbb\\xbf[1]")
        >>> read_text_file(path)
        '[1]'
        >>> _ = path.write_bytes(b'[\\n"caf\\xe9"]')
        >>> read_text_file(path, source="m.json")
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: m.json, line 2: not UTF-8 text: byte 0xe9 at column 5; save the file as UTF-8
    """
    from novabench.errors import NovaInputError

    where = source or str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise NovaInputError(f"cannot read: {error.strerror or error}", source=where) from None
    if data.startswith(UTF8_BOM):
        data = data[len(UTF8_BOM) :]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line_start = data.rfind(b"\n", 0, error.start) + 1
        line_end = data.find(b"\n", error.start)
        line = data.count(b"\n", 0, error.start) + 1
        decode_utf8_line(
            data[line_start : len(data) if line_end < 0 else line_end],
            source=where,
            record=f"line {line}",
        )
        raise  # pragma: no cover - decode_utf8_line raised above


def json_safe(value: Any) -> Any:
    """``value`` with every NaN or infinite float replaced by None (JSON ``null``).

    Python's ``json`` writes ``NaN``, which strict parsers (JavaScript, jq, ``json.loads``
    with ``parse_constant`` checks) refuse; an undefined metric is ``null`` in our files.

    Example:
        >>> json_safe({"FP30": float("nan"), "n": [1.0, float("inf")]})
        {'FP30': None, 'n': [1.0, None]}
    """
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(item) for item in value]
    return value


# Why an output could not be written, by errno: the causes a user can act on.
WRITE_FAILURES: dict[int, str] = {
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "the disk quota is exceeded",
    errno.EROFS: "the file system is read-only",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EFBIG: "the file grew past the largest size allowed here (file size limit)",
}
# pyarrow raises a bare OSError whose text carries the errno ("... [errno 28] No space ...").
_ERRNO_IN_TEXT = re.compile(r"\[errno (\d+)\]", re.IGNORECASE)
# The temporary siblings novabench writes before renaming: ".NAME.partial-...", ".NAME.X.tmp".
_TEMPORARY_SIBLING = re.compile(
    r"^\.(?P<name>.+?)\.(?:partial-[^/]*|old-[^/]*|replaced-[^/]*|superseded-[^/]*|[^./]+\.tmp"
    r"|[^./]+\.partial)$"
)


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The SHA-256 of a file's bytes (hex), read in 1 MiB blocks.

    Example:
        >>> import tempfile
        >>> path = Path(tempfile.mkdtemp()) / "a.txt"
        >>> _ = path.write_bytes(b"abc")
        >>> file_sha256(path)[:16]
        'ba7816bf8f01cfea'
    """
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def os_error_number(error: BaseException) -> int | None:
    """The operating system's error number of ``error``, also when only its text carries it.

    pyarrow can raise a bare ``OSError`` whose ``errno`` is None and whose text says
    ``[errno 28]``: every rule that looks at the number reads it here, so such an error is
    judged as the same error with its ``errno`` set.

    Example:
        >>> os_error_number(OSError("Error writing bytes to file. Detail: [errno 28] No space"))
        28
        >>> os_error_number(OSError(errno.EROFS, "Read-only")), os_error_number(KeyError("x"))
        (30, None)
    """
    if not isinstance(error, OSError):
        return None
    if error.errno is not None:
        return error.errno
    found = _ERRNO_IN_TEXT.search(str(error))
    return int(found.group(1)) if found else None


# Why an output's path could not be made, by errno: true only of that output's own path
# (the file, its temporary sibling, a folder on the way to it), never of an input.
PATH_FAILURES: dict[int, str] = {
    errno.ENOENT: "its folder takes no new file (no such file or directory)",
    errno.ENOTDIR: "a part of its path is a file, not a folder",
    errno.EEXIST: "a part of its path is a file, not a folder",
    errno.ENAMETOOLONG: "its name is too long for the file system",
}


def write_failure_reason(error: BaseException) -> str | None:
    """Why ``error`` stopped a write, in words, when it is a cause the user can fix (else None).

    Example:
        >>> write_failure_reason(OSError(errno.ENOSPC, "No space left on device"))
        'no space left on the device'
        >>> write_failure_reason(OSError("Error writing bytes to file. Detail: [errno 27] File too large"))
        'the file grew past the largest size allowed here (file size limit)'
        >>> write_failure_reason(OSError(errno.ENOENT, "No such file")) is None
        True
    """
    number = os_error_number(error)
    return WRITE_FAILURES.get(number) if number is not None else None


def output_named(path: str | os.PathLike[str]) -> str:
    """The output a temporary path stands for: ``out/.r.json.x1.tmp`` -> ``out/r.json``.

    A staging folder's files stand for the folder: ``.nova.partial-12-ab/images/a.png``
    -> ``nova``. Any other path is returned as it is.

    Example:
        >>> output_named("runs/.nova.partial-4242-k2j9/images/case0001_001.png")
        'runs/nova'
        >>> output_named("reports/.r.json.a8x1.tmp"), output_named("reports/r.json")
        ('reports/r.json', 'reports/r.json')
    """
    parts = Path(path).parts
    for index, part in enumerate(parts):
        found = _TEMPORARY_SIBLING.match(part)
        if found:
            return str(Path(*parts[:index], found.group("name")))
    return str(path)


def as_output_error(
    error: BaseException, path: str | os.PathLike[str] | None = None
) -> NovaOutputError | None:
    """``error`` as a :class:`~novabench.errors.NovaOutputError` naming the output, or None.

    None when ``error`` is no write failure a user can fix (see :data:`WRITE_FAILURES`).
    Without ``path`` the error's own file name is used, mapped from a temporary sibling
    to the output it stands for.

    Example:
        >>> str(as_output_error(OSError(errno.EROFS, "Read-only", "/mnt/.r.json.x.tmp")))
        'cannot write /mnt/r.json: the file system is read-only'
    """
    from novabench.errors import NovaOutputError

    if isinstance(error, NovaOutputError):
        return error
    reason = write_failure_reason(error)
    if reason is None:
        return _path_failure(error, path)
    assert isinstance(error, OSError)  # write_failure_reason said so
    # A copy names its source first and its destination second: the destination failed.
    named = error.filename2 if error.filename2 is not None else error.filename
    failed = output_named(os.fsdecode(named)) if isinstance(named, (str, bytes)) else None
    number = os_error_number(error)
    if failed is not None and (path is None or not _within(failed, path)):
        if number in (errno.EACCES, errno.EPERM) and path is not None:
            return None  # an input this command may not read: not a write failure
        path = failed
    if path is None:
        return None
    return NovaOutputError(str(path), reason, errno=number)


def _path_failure(
    error: BaseException, path: str | os.PathLike[str] | None
) -> NovaOutputError | None:
    """A :data:`PATH_FAILURES` error on the way to the output ``path`` as its one error, or None.

    Only when the file it names is ``path`` (or a temporary sibling standing for it), a file
    inside it, or a folder on its way: the same errno about any other file (an input that
    is missing) is no write failure.
    """
    from novabench.errors import NovaOutputError

    number = getattr(error, "errno", None)
    if path is None or not isinstance(error, OSError) or number not in PATH_FAILURES:
        return None
    named = error.filename2 if error.filename2 is not None else error.filename
    if not isinstance(named, (str, bytes)):
        return None
    failed = output_named(os.fsdecode(named))
    if not (_within(failed, path) or _within(path, failed)):
        return None
    reason = PATH_FAILURES[number]
    if number in (errno.EEXIST, errno.ENOTDIR) and os.path.isfile(failed):
        reason = f"{failed} is a file, not a folder"
    return NovaOutputError(str(path), reason, errno=number)


def _within(inner: str | os.PathLike[str], outer: str | os.PathLike[str]) -> bool:
    inside, around = Path(os.path.abspath(inner)), Path(os.path.abspath(outer))
    return inside == around or inside.is_relative_to(around)


@contextmanager
def writing_to(path: str | os.PathLike[str]) -> Iterator[None]:
    """Turn a full disk (or a read-only or forbidden one) while writing ``path`` into one error.

    Raises:
        NovaOutputError: naming ``path`` and the cause, for the errors of
            :data:`WRITE_FAILURES`; any other exception passes unchanged.

    Example:
        >>> with writing_to("reports/r.json"):
        ...     raise OSError(errno.ENOSPC, "No space left on device")
        Traceback (most recent call last):
        ...
        novabench.errors.NovaOutputError: cannot write reports/r.json: no space left on the device
    """
    try:
        yield
    except OSError as error:
        failure = as_output_error(error, path)
        if failure is None or failure is error:
            raise
        raise failure from error


def write_text_atomic(path: str | os.PathLike[str], text: str, *, durable: bool = False) -> Path:
    """Write ``text`` to ``path`` through a temporary sibling, so a failure leaves no half file.

    The file gets the umask's mode (see :func:`give_usual_permissions`); ``durable=True``
    also syncs it to disk before the rename, for files a crash must not lose (run manifests,
    merged runs).

    Example:
        >>> import tempfile
        >>> out = write_text_atomic(Path(tempfile.mkdtemp()) / "a" / "r.md", "# Report\\n")
        >>> out.read_text()
        '# Report\\n'
    """
    return _write_atomic(path, text, durable=durable)


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes, *, durable: bool = False) -> Path:
    """:func:`write_text_atomic` for bytes: a reader sees the old file or the whole new one.

    Example:
        >>> import tempfile
        >>> out = write_bytes_atomic(Path(tempfile.mkdtemp()) / "slice.png", b"\\x89PNG")
        >>> out.read_bytes()
        b'\\x89PNG'
    """
    return _write_atomic(path, data, durable=durable)


def _write_atomic(path: str | os.PathLike[str], content: str | bytes, *, durable: bool) -> Path:
    with writing_atomically(path, durable=durable) as temporary:
        stream: IO[Any] = (
            open(temporary, "wb")
            if isinstance(content, bytes)
            else open(temporary, "w", encoding="utf-8")
        )
        with stream:
            stream.write(content)
    return Path(path)


@contextmanager
def writing_atomically(path: str | os.PathLike[str], *, durable: bool = False) -> Iterator[Path]:
    """A temporary sibling of ``path`` to write; renamed to ``path`` when the block succeeds.

    For writers that take a path (pyarrow, pandas, our JSONL writer): the block writes the
    yielded path, and only a block that ends without error puts the file at ``path``, with
    the umask's mode (see :func:`give_usual_permissions`); ``durable=True`` syncs it to disk
    before the rename. On any error the temporary file is removed and nothing changes at
    ``path``; a full, read-only or forbidden disk is one error naming ``path``, as in
    :func:`write_text_atomic`, which writes through this.

    Raises:
        NovaOutputError: naming ``path`` and the cause, for the errors of
            :data:`WRITE_FAILURES`; any other exception passes unchanged.

    Example:
        >>> import tempfile
        >>> out = Path(tempfile.mkdtemp()) / "tables" / "images.csv"
        >>> with writing_atomically(out) as temporary:
        ...     _ = temporary.write_text("filename\\ncase0001_001.png\\n")
        ...     out.exists()
        False
        >>> out.read_text().splitlines(), temporary.exists()
        (['filename', 'case0001_001.png'], False)
    """
    target = Path(path)
    with writing_to(path):
        temporary = _new_temporary_sibling(target)
        try:
            yield temporary
            _finish_temporary(temporary, durable=durable)
            os.replace(temporary, target)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise


def _new_temporary_sibling(target: Path, *, with_process: bool = False) -> Path:
    """An empty ``.NAME.<random>.tmp`` beside ``target``, its folder made if needed.

    ``with_process`` names the writing process too (``.NAME.<pid>-<random>.tmp``), so a
    later writer of ``target`` can tell a file its ended writer left from one being written
    (:func:`remove_stale_staged_files`).
    """
    import tempfile

    target.parent.mkdir(parents=True, exist_ok=True)
    prefix = f".{target.name}." + (f"{os.getpid()}-" if with_process else "")
    handle, name = tempfile.mkstemp(dir=target.parent, prefix=prefix, suffix=".tmp")
    os.close(handle)
    return Path(name)


#: How long a staged file without a process id has been unchanged before the next writer
#: says so: no write of a report, a table or a page takes that long between creating it
#: and renaming it. It is still not removed: nothing tells whether its writer has ended.
STALE_STAGED_AFTER = 3600.0


def remove_stale_staged_files(out: str | os.PathLike[str]) -> list[Path]:
    """Remove the staged copies of ``out`` a killed writer left beside it, saying so.

    A group of outputs (:func:`writing_all_or_none`) is staged as ``.OUT.<pid>-<random>.tmp``
    files and renamed one by one; a process killed outright (``SIGKILL``, a power cut) before
    every rename leaves the rest behind. Before staging ``out`` again, the next writer looks
    for such siblings of ``out`` (of this very name, regular files, not links), and:

    - ``.OUT.<pid>-<random>.tmp`` whose process has ended (no process of that id on this
      machine) is removed: no one can be writing it, and it never was ``out`` (``out`` is
      what it is, new or as before);
    - the same whose process is running (this one, another writer of ``out`` right now, or
      an unrelated process that got the id again) is left alone;
    - ``.OUT.<random>.tmp`` (no process id recorded: an earlier novabench, or another
      writer's single file) is left alone and named, with how long it has been unchanged:
      its writer may be at work on another machine or under another name, and nothing here
      tells whether it has ended (the staging folders' rule: :func:`remove_stale_staging`).

    One :class:`~novabench.errors.FileNoteWarning` (``nova`` prints it as a ``nova:`` line)
    names the files removed, one those that may still be written, and one those whose
    writer is unknown, if any. The rule reads process ids of this machine:
    a folder written at the same moment from two machines (a network share) is not told
    apart.

    Args:
        out: the output about to be staged.

    Returns:
        The files removed.

    Example:
        >>> import tempfile, warnings
        >>> folder = Path(tempfile.mkdtemp())
        >>> left = folder / ".r.json.999999999-k2j9x1ab.tmp"  # no process has this id
        >>> mine = folder / f".r.json.{os.getpid()}-q1w2e3r4.tmp"
        >>> for path in (left, mine, folder / ".other.json.999999999-k2j9x1ab.tmp"):
        ...     _ = path.write_text("{")
        >>> with warnings.catch_warnings(record=True) as said:
        ...     warnings.simplefilter("always")
        ...     removed = remove_stale_staged_files(folder / "r.json")
        >>> [path.name for path in removed], mine.exists()
        (['.r.json.999999999-k2j9x1ab.tmp'], True)
        >>> str(said[0].message).startswith(
        ...     "removed .r.json.999999999-k2j9x1ab.tmp (process 999999999 has ended) beside ")
        True
    """
    import time

    from novabench.errors import note

    target = Path(out)
    name = re.escape(target.name)
    with_process = re.compile(rf"\.{name}\.(?P<pid>\d+)-[a-z0-9_]+\.tmp")
    without_process = re.compile(rf"\.{name}\.[a-z0-9_]+\.tmp")
    removed: list[Path] = []
    said_removed: list[str] = []
    at_work: list[str] = []
    unknown: list[str] = []
    try:
        entries = sorted(target.parent.iterdir())
    except OSError:  # no folder yet: nothing was left there
        return removed
    for entry in entries:
        found = with_process.fullmatch(entry.name)
        if found is None and not without_process.fullmatch(entry.name):
            continue
        try:
            if entry.is_symlink() or not entry.is_file():
                continue
            if found is None:
                unchanged = time.time() - entry.stat().st_mtime
                if unchanged < STALE_STAGED_AFTER:
                    at_work.append(
                        f"{entry.name} (no process id recorded; changed in the last hour)"
                    )
                else:
                    unknown.append(
                        f"{entry.name} (no process id recorded; unchanged for "
                        f"{_duration_words(unchanged)})"
                    )
                continue
            pid = int(found.group("pid"))
            if pid == os.getpid() or not process_ended(pid):
                at_work.append(f"{entry.name} (process {pid} is running)")
                continue
            entry.unlink()
        except OSError:  # removed by another writer first, or not ours to remove
            continue
        removed.append(entry)
        said_removed.append(f"{entry.name} (process {pid} has ended)")
    if removed:
        note(
            f"removed {', '.join(said_removed)} beside {target}: staged for it by a "
            "writer that was killed before putting it in place"
        )
    if at_work:
        note(
            f"left {', '.join(at_work)} beside {target}: staged for it by a writer that "
            "may still be at work"
        )
    if unknown:
        note(
            f"left {', '.join(unknown)} beside {target}: staged for it by a writer this "
            "machine cannot tell has ended; remove it if no command is writing "
            f"{target.name} (on any machine)"
        )
    return removed


def _duration_words(seconds: float) -> str:
    """A duration of at least an hour in words: ``more than 3 hours``, ``more than 2 days``.

    Example:
        >>> _duration_words(3600), _duration_words(3 * 3600 + 5), _duration_words(50 * 3600)
        ('more than 1 hour', 'more than 3 hours', 'more than 2 days')
    """
    hours = int(seconds // 3600)
    if hours < 48:
        return f"more than {hours} hour{'s' if hours != 1 else ''}"
    return f"more than {hours // 24} days"


def _finish_temporary(temporary: Path, *, durable: bool) -> None:
    if durable:
        _sync_to_disk(temporary)
    give_usual_permissions(temporary)


def _missing_folders(folder: Path) -> list[Path]:
    """``folder`` and its parents that do not exist yet, the outermost first."""
    missing: list[Path] = []
    current = Path(os.path.abspath(folder))
    while not current.exists() and current != current.parent:
        missing.append(current)
        current = current.parent
    return missing[::-1]


class StagedOutputs:
    """The outputs of one command, staged as temporary siblings and put in place together.

    Each output is written whole to a ``.NAME.<pid>-<random>.tmp`` beside it (as
    :func:`writing_atomically` does, the writing process named) and nothing at its path
    changes while staging: a
    failure on any of them removes every staged file and the folders made for them, and
    every existing file stays as it was. :meth:`commit` then renames the staged files into
    place in the order they were staged. Each rename is atomic, their sequence is not: a
    rename that fails (rare: the disk fills or is unmounted in between) leaves the outputs
    renamed before it new and the others as they were, removes the staged files left, and
    raises one error saying which are which, so that running the command again (with
    ``--force``) writes them all; a process killed outright (``SIGKILL``, a power cut)
    between two renames leaves that mix and the staged ``.NAME.<pid>-<random>.tmp`` files
    not yet renamed, which the next writer of the same output removes, saying so
    (:func:`remove_stale_staged_files`: only once their process has ended). Stage the file
    that pins
    others (a report pinning its tables) last, so a partial state is refused when read.
    Use it through :func:`writing_all_or_none`.

    Example:
        >>> import tempfile
        >>> out = Path(tempfile.mkdtemp())
        >>> with writing_all_or_none() as outputs:
        ...     _ = outputs.write_text(out / "r.json", "{}")
        ...     _ = outputs.write_text(out / "r.md", "# Report")
        ...     sorted(path.name for path in out.iterdir() if not path.name.startswith("."))
        []
        >>> sorted(path.name for path in out.iterdir())
        ['r.json', 'r.md']
    """

    def __init__(self) -> None:
        self._staged: dict[Path, Path] = {}  # output -> its staged temporary sibling
        self._made_folders: list[Path] = []  # made for this group: removed if it fails

    def make_folder(
        self, folder: str | os.PathLike[str], *, for_output: str | os.PathLike[str] | None = None
    ) -> Path:
        """Make ``folder`` (and its parents) now; removed again if the group fails while empty.

        Raises:
            NovaOutputError: naming ``folder`` (or ``for_output``, the output it is made
                for), when it cannot be made for a cause a user can fix (see
                :func:`as_output_error`).
        """
        target = Path(folder)
        with writing_to(target if for_output is None else for_output):
            self._make_folders(target)
        return target

    def _make_folders(self, folder: Path) -> None:
        missing = _missing_folders(folder)
        try:
            folder.mkdir(parents=True, exist_ok=True)
        finally:
            self._made_folders.extend(path for path in missing if path.is_dir())

    @contextmanager
    def staging(self, path: str | os.PathLike[str], *, durable: bool = False) -> Iterator[Path]:
        """A temporary sibling of ``path`` for a writer to fill; put at ``path`` on commit.

        Raises:
            NovaOutputError: naming ``path`` and the cause, as :func:`writing_atomically`.
            ValueError: ``path`` is already staged in this group.
        """
        target = Path(path)
        if target in self._staged:
            raise ValueError(f"{target} is staged twice in one group of outputs")
        with writing_to(target):
            self._make_folders(target.parent)
            remove_stale_staged_files(target)
            temporary = _new_temporary_sibling(target, with_process=True)
            try:
                yield temporary
                _finish_temporary(temporary, durable=durable)
            except BaseException:
                temporary.unlink(missing_ok=True)
                raise
        self._staged[target] = temporary

    def write_text(self, path: str | os.PathLike[str], text: str, *, durable: bool = False) -> Path:
        """Stage ``text`` as the file ``path``; returns ``path``."""
        with self.staging(path, durable=durable) as temporary:
            temporary.write_text(text, encoding="utf-8")
        return Path(path)

    def file_holding(self, path: str | os.PathLike[str]) -> Path:
        """The file that holds ``path``'s new content now: its staged sibling until committed."""
        return self._staged.get(Path(path), Path(path))

    def discard(self) -> None:
        """Remove every staged file and the folders made for them (when empty)."""
        for temporary in self._staged.values():
            temporary.unlink(missing_ok=True)
        self._staged.clear()
        for folder in reversed(self._made_folders):
            try:
                folder.rmdir()
            except OSError:  # not empty (something else was put there) or gone: kept
                pass
        self._made_folders.clear()

    def commit(self) -> None:
        """Rename every staged file into place, in the order staged.

        Raises:
            NovaOutputError: naming the output whose rename failed and the cause; when
                outputs were renamed before it, also which are new and which are as before
                (the staged files left are removed either way).
        """
        from novabench.errors import OVERWRITE, NovaOutputError

        staged = list(self._staged.items())
        for index, (target, temporary) in enumerate(staged):
            try:
                os.replace(temporary, target)
            except BaseException as error:  # Ctrl-C too: the staged files left are removed
                self._staged = dict(staged[index:])
                self.discard()  # a folder holding an output already renamed is not empty: kept
                failure = as_output_error(error, target) if isinstance(error, OSError) else None
                if failure is None:
                    raise
                if index == 0:  # nothing was put in place: as if staging had failed
                    raise failure from error
                done = ", ".join(str(path) for path, _ in staged[:index])
                kept = ", ".join(str(path) for path, _ in staged[index:])
                raise NovaOutputError(
                    str(target),
                    (
                        f"{failure.reason} while putting the outputs in place; new: {done}; as "
                        f"before: {kept}; write them again (with ",
                        OVERWRITE,
                        ") to have them all",
                    ),
                    errno=failure.errno,
                ) from error
        self._staged.clear()
        self._made_folders.clear()


@contextmanager
def writing_all_or_none(into: StagedOutputs | None = None) -> Iterator[StagedOutputs]:
    """Stage a command's outputs in the block; put them all in place only when it succeeds.

    An error in the block removes what was staged and leaves every existing file as it was
    (see :class:`StagedOutputs` for what a failure while renaming can leave). With ``into``,
    the block stages into that group instead and its owner commits: a writer that takes an
    optional group (the item tables, a report) works alone or as part of a command's outputs.

    Example:
        >>> import tempfile
        >>> out = Path(tempfile.mkdtemp())
        >>> try:
        ...     with writing_all_or_none() as outputs:
        ...         _ = outputs.write_text(out / "r.json", "{}")
        ...         raise OSError(errno.ENOSPC, "No space left on device", str(out / "r.html"))
        ... except OSError as error:
        ...     print(error)
        [Errno 28] No space left on device: '...r.html'
        >>> list(out.iterdir())
        []
    """
    if into is not None:
        yield into
        return
    outputs = StagedOutputs()
    try:
        yield outputs
    except BaseException:
        outputs.discard()
        raise
    outputs.commit()


def _sync_to_disk(path: Path) -> None:
    # Any descriptor of the file will do: fsync flushes the file's data, not one stream's.
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


OUTPUT_MARKER = ".novabench-output.json"
"""File novabench writes in every output folder it makes, naming the command that wrote it:
``--overwrite`` replaces a folder only when that same command wrote it (or it is empty)."""

_PREDICTIONS_FILE = "a predictions file"


def _path_forms(value: Any) -> set[Path]:
    """A path as given (made absolute) and with every symbolic link resolved."""
    given = Path(os.path.abspath(Path(value).expanduser()))
    return {given, given.resolve()}


def _inside(inner: Path, outer: Path) -> bool:
    return inner != outer and inner.is_relative_to(outer)


def _protected_inputs(inputs: Any) -> list[tuple[set[Path], str, str]]:
    """(forms, what it is, as given) of every input and of the run manifest beside each file."""
    described: list[tuple[str, Any]] = []
    if isinstance(inputs, dict):
        for what, value in inputs.items():
            values = value if isinstance(value, (list, tuple, set)) else [value]
            described.extend((what, item) for item in values if item is not None)
    else:
        described.extend((_PREDICTIONS_FILE, item) for item in inputs if item is not None)
    protected = []
    for what, item in described:
        path = Path(item).expanduser()
        protected.append((_path_forms(path), what, str(item)))
        if not path.is_dir():
            manifest = path.with_name(path.name + ".manifest.json")
            protected.append((_path_forms(manifest), f"the manifest of {what}", str(manifest)))
    return protected


def check_output_paths(
    outputs: Mapping[Any, Any], inputs: Any = (), *, folders: tuple[str | Option, ...] = ()
) -> None:
    """Refuse outputs that are, contain or sit inside an input (or its run manifest), or each other.

    Paths are compared as given and with symbolic links resolved (and by inode when both
    exist), so a link or a ``..`` detour to an input is caught too.

    Args:
        outputs: option name (or :class:`~novabench.errors.Option`, named in each face's
            words) -> path (None entries are skipped), e.g. ``{"--out": "r.json"}``.
        inputs: what the command reads: a mapping ``description -> path or paths`` (e.g.
            ``{"the release": "Nova"}``), or a plain list of predictions files. The run
            manifest beside every input file (``<file>.manifest.json``) is protected too.
        folders: the options whose output is a folder; any other output that is an
            existing folder is refused.

    Each output's place is checked first (:func:`check_writable_place`), so a path that
    can never be written is refused before the command's work, not after it.

    Raises:
        NovaInputError: naming the option and the path.
        NovaOutputError: naming the output and why it cannot be written there.

    Example:
        >>> check_output_paths({"--out": "runs/a.jsonl"}, ["runs/a.jsonl"])
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: runs/a.jsonl, field '--out': is an input of this command (a predictions file); choose another output path
        >>> check_output_paths({"OUT": "Nova/images"}, {"the release": "Nova"}, folders=("OUT",))
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: Nova/images, field 'OUT': sits inside the release Nova, an input of this command; choose an output outside it
    """
    from novabench.errors import NovaInputError

    protected = _protected_inputs(inputs)
    seen: dict[Path, str | Option] = {}
    output_forms: dict[
        str | Option, set[Path]
    ] = {}  # each output's path forms, for the folder check
    for option, value in outputs.items():
        if value is None:
            continue
        check_writable_place(value, folder=option in folders)
        forms = _path_forms(value)
        for input_forms, what, given in protected:
            if forms & input_forms or _same_file(value, given):
                raise NovaInputError(
                    f"is an input of this command ({what}); choose another output path",
                    source=str(value),
                    field=option,
                )
            if any(_inside(out, inp) for out in forms for inp in input_forms):
                raise NovaInputError(
                    f"sits inside {what} {given}, an input of this command; "
                    "choose an output outside it",
                    source=str(value),
                    field=option,
                )
            if any(_inside(inp, out) for out in forms for inp in input_forms):
                raise NovaInputError(
                    f"contains {what} {given}, an input of this command; "
                    "choose an output that does not hold it",
                    source=str(value),
                    field=option,
                )
        if option not in folders and Path(value).expanduser().is_dir():
            raise NovaInputError("is a folder; give a file path", source=str(value), field=option)
        for form in forms:
            if form in seen:
                raise NovaInputError(
                    ("is also the ", seen[form], " output"), source=str(value), field=option
                )
        seen.update(dict.fromkeys(forms, option))
        output_forms[option] = forms
    _refuse_outputs_within_folder_outputs(outputs, output_forms, folders)


def _refuse_outputs_within_folder_outputs(
    outputs: Mapping[Any, Any],
    given: dict[str | Option, set[Path]],
    folders: tuple[str | Option, ...],
) -> None:
    """An output inside (or holding) a folder output: the folder is written whole, in a
    staging sibling moved into place, so the other output would be lost or moved with it.
    ``given``: each output's path forms, as :func:`check_output_paths` computed them."""
    from novabench.errors import NovaInputError

    for folder_option in folders:
        for folder in given.get(folder_option, ()):
            for option, forms in given.items():
                of_folder = isinstance(option, str) and option.startswith(f"{folder_option} (")
                if option == folder_option or of_folder:
                    continue  # the folder itself, or a file of it ("--items (images.csv)")
                if any(_inside(form, folder) for form in forms):
                    raise NovaInputError(
                        (
                            "sits inside the ",
                            folder_option,
                            " folder, which is written whole; choose a path outside it",
                        ),
                        source=str(outputs[option]),
                        field=option,
                    )
                if any(_inside(folder, form) for form in forms):
                    raise NovaInputError(
                        ("holds the ", folder_option, " folder; choose a path that does not"),
                        source=str(outputs[option]),
                        field=option,
                    )


# How much longer than an output's name the temporary names novabench writes it through
# are: a file ".NAME.PID-XXXXXXXX.tmp" (tempfile's 8 random characters; the process id
# when staged with others); a folder
# ".NAME.partial-PID-XXXXXXXX" and, when it replaces one, ".NAME.superseded-PID-XXXXXXXX",
# the longest (a process id has at most 7 digits on Linux).
TEMPORARY_NAME_EXTRA = {
    "file": len("..") + 7 + len("-") + 8 + len(".tmp"),
    "folder": len("..superseded-") + 7 + len("-") + 8,
}
_DEFAULT_NAME_MAX = 255


def _name_max(folder: Path) -> int:
    try:
        return int(os.pathconf(folder, "PC_NAME_MAX"))
    except (OSError, ValueError):  # a file system that does not say: the usual limit
        return _DEFAULT_NAME_MAX


def check_writable_place(path: str | os.PathLike[str], *, folder: bool = False) -> None:
    """Refuse an output that can never be written where it is asked for, writing nothing.

    Checked without touching the disk: every name on the way fits the file system (the
    output's own name with room for the temporary name it is written through, see
    :data:`TEMPORARY_NAME_EXTRA`), the nearest existing folder on the way is a folder (not
    a file), and this process may create files in it on a writable file system. What only a
    write can tell (a full disk, a folder that takes no files such as ``/proc``) is said
    when it happens, by :func:`writing_to`.

    Args:
        path: the output file (or folder, with ``folder=True``) as the user gave it.
        folder: whether the output is a folder (written in a staging sibling).

    Raises:
        NovaOutputError: naming ``path`` and the cause.

    Example:
        >>> import tempfile
        >>> notes = Path(tempfile.mkdtemp()) / "notes.txt"
        >>> _ = notes.write_text("my notes")
        >>> check_writable_place(notes.parent / "reports" / "r.json")  # made when written
        >>> check_writable_place(notes / "r.json")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        novabench.errors.NovaOutputError: cannot write .../notes.txt/r.json: .../notes.txt is a file, not a folder
        >>> check_writable_place(notes.parent / ("a" * 250 + ".json"))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        novabench.errors.NovaOutputError: cannot write ...: its name is too long: 255 bytes, at most 233 here (...)
    """
    from novabench.errors import NovaOutputError

    target = Path(os.path.abspath(Path(path).expanduser()))
    existing = target
    to_make: list[str] = []  # the names on the way that do not exist yet, nearest last
    while not os.path.lexists(existing) and existing != existing.parent:
        to_make.append(existing.name)
        existing = existing.parent
    if existing == target:  # the output exists: replaced through a sibling in its folder
        to_make, existing = [target.name], target.parent
    shown = Path(path).expanduser()  # the folder as the user wrote it, when it can be
    for _ in to_make:
        shown = shown.parent
    if os.path.abspath(shown) != str(existing):
        shown = existing
    if not existing.is_dir():
        reason = f"{shown} is a file, not a folder"
        raise NovaOutputError(str(path), reason, errno=errno.ENOTDIR)
    name_max = _name_max(existing)
    extra = TEMPORARY_NAME_EXTRA["folder" if folder else "file"]
    for index, name in enumerate(to_make):
        size = len(os.fsencode(name))
        own = index == 0  # to_make[0] is the output's own name
        limit = name_max - extra if own else name_max
        if size > limit:
            what = "its name" if own else f"the folder name {name[:24]}..."
            why = (
                f" (the file system takes {name_max}; novabench writes through a temporary "
                f"name {extra} bytes longer)"
                if own
                else ""
            )
            reason = f"{what} is too long: {size} bytes, at most {limit} here{why}"
            raise NovaOutputError(str(path), reason, errno=errno.ENAMETOOLONG)
    if not os.access(existing, os.W_OK | os.X_OK):
        read_only = bool(os.statvfs(existing).f_flag & os.ST_RDONLY)
        reason = "the file system is read-only" if read_only else f"permission denied ({shown})"
        raise NovaOutputError(str(path), reason, errno=errno.EROFS if read_only else errno.EACCES)


def _same_file(first: Any, second: Any) -> bool:
    try:
        return os.path.samefile(Path(first).expanduser(), Path(second).expanduser())
    except (OSError, ValueError):
        return False


# How novabench's own Markdown and HTML reports begin (render.py, html.py, leaderboard/formats.py).
_MARKDOWN_REPORT_TITLES = ("# NOVA evaluation report", "# NOVA comparison", "# NOVA leaderboard")
_HTML_GENERATOR = '<meta name="generator" content="novabench">'
_REPORT_HEAD_CHARS = 256


def is_novabench_report(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` holds a report novabench wrote, which a new report may replace: the
    JSON of ``nova evaluate``/``compare``/``leaderboard``, their Markdown, or their HTML.

    Example:
        >>> import tempfile
        >>> path = Path(tempfile.mkdtemp()) / "r.json"
        >>> _ = path.write_text('{"toolkit": {"name": "novabench"}, "tasks": {}}')
        >>> is_novabench_report(path), is_novabench_report(path.parent / "none.json")
        (True, False)
    """
    import json

    try:
        with open(path, encoding="utf-8") as handle:
            head = handle.read(_REPORT_HEAD_CHARS)
            if head.startswith(_MARKDOWN_REPORT_TITLES) or _HTML_GENERATOR in head:
                return True
            document = json.loads(head + handle.read())
    except (OSError, ValueError, RecursionError):
        return False
    if not isinstance(document, dict):
        return False
    sides = [document, *(document.get(side) for side in ("a", "b"))]
    return any(
        isinstance(side, dict)
        and isinstance(side.get("toolkit"), dict)
        and side["toolkit"].get("name") == "novabench"
        for side in sides
    )


# The title each command's HTML page starts with (html.py, leaderboard/formats.py).
_HTML_TITLES = {
    "<title>NOVA report:": "evaluate",
    "<title>NOVA comparison": "compare",
    "<title>NOVA leaderboard": "leaderboard",
}
_MARKDOWN_WRITERS = dict(zip(_MARKDOWN_REPORT_TITLES, ("evaluate", "compare", "leaderboard")))


def report_writer(path: str | os.PathLike[str]) -> str | None:
    """The ``nova`` command whose report (JSON, Markdown, HTML or leaderboard CSV) is at
    ``path``, or None for any other file.

    Example:
        >>> import tempfile
        >>> folder = Path(tempfile.mkdtemp())
        >>> board = folder / "board.md"; _ = board.write_text("# NOVA leaderboard\\n")
        >>> table = folder / "board.csv"; _ = table.write_text("model,diagnosis rank\\nqwen,1\\n")
        >>> mine = folder / "mine.csv"; _ = mine.write_text("model,score\\nqwen,1\\n")
        >>> report_writer(board), report_writer(table), report_writer(mine)
        ('leaderboard', 'leaderboard', None)
    """
    import json

    try:
        with open(path, encoding="utf-8") as handle:
            head = handle.read(4096)
            for title, command in _MARKDOWN_WRITERS.items():
                if head.startswith(title):
                    return command
            if _HTML_GENERATOR in head[:_REPORT_HEAD_CHARS]:
                return next((c for t, c in _HTML_TITLES.items() if t in head), None)
            first_line = head.split("\n", 1)[0]
            # leaderboard_csv's header: the model, then each task's rank and values.
            if first_line.startswith("model,") and " rank," in first_line + ",":
                return "leaderboard"
            document = json.loads(head + handle.read())
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(document, dict):
        return None
    sides = [document.get(side) for side in ("a", "b")]
    if all(_from_novabench(side) for side in sides):
        return "compare"
    if not _from_novabench(document):
        return None
    if "ranking" in document:
        return "leaderboard"
    return "evaluate" if "tasks" in document else None


def _from_novabench(document: Any) -> bool:
    return (
        isinstance(document, dict)
        and isinstance(document.get("toolkit"), dict)
        and document["toolkit"].get("name") == "novabench"
    )


_OUTPUT_KINDS = {"evaluate": "a report", "compare": "a comparison", "leaderboard": "a leaderboard"}


#: Why an output written whole and renamed into place may not be a link.
_RENAMED_ONTO_LINK = (
    "an output is written as a new file renamed into place, which would replace the link and "
    "leave the file it points to unchanged"
)


def link_output_refusal(
    path: str | os.PathLike[str], field: Any, *, why: str = _RENAMED_ONTO_LINK
) -> Any:
    """The refusal of an output file that is a symbolic link, or None when it is not one.

    Outputs are written whole under a temporary name and renamed into place; renamed onto a
    link, the new file would replace the link itself and leave the file it points to as it
    was, while the user meant that file. So a link is refused, saying so and where it points.

    Args:
        path: the output path as given.
        field: the setting that gave it (an :class:`novabench.errors.Option` or a name).
        why: what writing through the link would do, when the output is written otherwise
            (``nova run`` appends to its answers file).

    Returns:
        A :class:`novabench.errors.NovaInputError` to raise, or None.

    Example:
        >>> import os, tempfile
        >>> folder = Path(tempfile.mkdtemp())
        >>> os.symlink("runs/report.json", folder / "latest.json")
        >>> print(link_output_refusal(folder / "latest.json", "out"))  # doctest: +ELLIPSIS
        /...latest.json, field 'out': is a symbolic link (to runs/report.json): an output is written as a new file renamed into place, which would replace the link and leave the file it points to unchanged; give that file's path, or another path
        >>> link_output_refusal(folder / "new.json", "out") is None
        True
    """
    from novabench.errors import NovaInputError

    link = Path(path).expanduser()
    if not link.is_symlink():
        return None
    return NovaInputError(
        f"is a symbolic link (to {os.readlink(link)}): {why}; give that file's path, or "
        "another path",
        source=str(path),
        field=field,
    )


def check_report_outputs(outputs: dict[str, Any], *, command: str = "evaluate") -> None:
    """Refuse to replace an existing file that is not an output of ``nova <command>``.

    Each command rewrites only its own outputs: a file of the user's (notes, a CSV of
    their own, a report's per-item table) is never replaced, nor another command's
    report (a leaderboard never replaces the evaluation report it ranks).

    Example:
        >>> import tempfile
        >>> notes = Path(tempfile.mkdtemp()) / "notes.md"
        >>> _ = notes.write_text("my notes")
        >>> check_report_outputs({"--markdown": notes})  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: ...notes.md, field '--markdown': exists and is not a report novabench wrote; ...
        >>> _ = notes.write_text("# NOVA evaluation report: qwen\\n")
        >>> check_report_outputs({"--markdown": notes}, command="leaderboard")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: ...: holds a report of `nova evaluate`, which `nova leaderboard` never replaces...
    """
    from novabench.errors import NovaInputError

    for option, value in outputs.items():
        if value is None:
            continue
        path = Path(value).expanduser()
        if not (path.exists() or path.is_symlink()):
            continue
        linked = link_output_refusal(path, option)
        if linked is not None:
            raise linked
        writer = report_writer(path) if path.is_file() else None
        if writer is None:
            raise NovaInputError(
                "exists and is not a report novabench wrote; choose another path or remove it",
                source=str(value),
                field=option,
            )
        if writer != command:
            raise NovaInputError(
                f"holds {_OUTPUT_KINDS.get(writer, 'an output')} of `nova {writer}`, which "
                f"`nova {command}` never replaces (not even when forced); choose another path",
                source=str(value),
                field=option,
            )


def output_folder_writer(folder: str | os.PathLike[str]) -> str | None:
    """The ``nova`` command that wrote ``folder`` (its :data:`OUTPUT_MARKER`), or None.

    Example:
        >>> import tempfile
        >>> folder = Path(tempfile.mkdtemp()); mark_output_folder(folder, "export")
        >>> output_folder_writer(folder), output_folder_writer(folder.parent)
        ('export', None)
    """
    import json

    try:
        marker = json.loads((Path(folder) / OUTPUT_MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(marker, dict) or marker.get("written_by") != "novabench":
        return None
    command = marker.get("command")
    return command if isinstance(command, str) else None


def mark_output_folder(folder: str | os.PathLike[str], command: str) -> None:
    """Record in ``folder`` that ``nova <command>`` wrote it (see :data:`OUTPUT_MARKER`).

    Example:
        >>> import tempfile
        >>> folder = Path(tempfile.mkdtemp()); mark_output_folder(folder, "sample")
        >>> (folder / OUTPUT_MARKER).is_file()
        True
    """
    import json

    from novabench._version import __version__

    marker = {"written_by": "novabench", "command": command, "version": __version__}
    (Path(folder) / OUTPUT_MARKER).write_text(json.dumps(marker) + "\n", encoding="utf-8")
    give_usual_permissions(Path(folder) / OUTPUT_MARKER)


def check_output_folder(
    out: str | os.PathLike[str],
    *,
    command: str,
    overwrite: bool,
    field: str | Option | None = None,
) -> None:
    """Refuse to write a folder over anything but an earlier output of the same command.

    An existing ``out`` needs ``overwrite``, and even then is replaced only when it is
    empty or ``nova <command>`` wrote it (its :data:`OUTPUT_MARKER` says so): a folder
    of the user's, a file or a link is never deleted.

    Raises:
        NovaInputError: naming ``out`` and why it is kept.

    Example:
        >>> import tempfile
        >>> folder = Path(tempfile.mkdtemp()); _ = (folder / "notes.txt").write_text("mine")
        >>> check_output_folder(folder, command="export", overwrite=True)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: ..., field 'out_dir': was not written by `nova export` ...
        >>> check_output_folder(folder, command="export", overwrite=False)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: ...: already exists and was not written by `nova export` ...
    """
    from novabench.errors import OUT_DIR, OVERWRITE, NovaInputError

    field = OUT_DIR if field is None else field
    path = Path(out).expanduser()
    if not (path.exists() or path.is_symlink()):
        return
    # What overwrite could never replace is said first: suggesting it would only lead to a refusal.
    if path.is_symlink() or not path.is_dir():
        kind = "a link" if path.is_symlink() else "a file"
        only_ours = ("; ", OVERWRITE, " replaces only such a folder") if overwrite else ()
        raise NovaInputError(
            (f"is {kind}, not a folder `nova {command}` wrote", *only_ours)
            + (": choose another path or remove it yourself",),
            source=str(out),
            field=field,
        )
    empty = next(path.iterdir(), None) is None
    writer = None if empty else output_folder_writer(path)
    if not empty and writer != command:
        made_by = f"it was written by `nova {writer}`" if writer else f"no {OUTPUT_MARKER} in it"
        refusal: tuple[str | Option, ...] = (
            (f"was not written by `nova {command}` ({made_by}); ", OVERWRITE)
            + (" replaces only a folder that command wrote",)
            if overwrite
            else (f"already exists and was not written by `nova {command}` ({made_by})",)
        )
        raise NovaInputError(
            refusal + (": choose another path or remove it yourself",),
            source=str(out),
            field=field,
        )
    if not overwrite:
        raise NovaInputError(
            ("already exists; pass ", OVERWRITE, " to replace it"),
            source=str(out),
            field=field,
        )


def _staging_pattern(out: Path, kind: str = "partial") -> re.Pattern[str]:
    return re.compile(rf"\.{re.escape(out.name)}\.{kind}-(?P<pid>\d+)-[A-Za-z0-9_]+")


def process_ended(pid: int) -> bool:
    """Whether process ``pid`` of this machine is known to have ended.

    Only "no such process" says so. A live process, another user's (no right to signal it),
    a number past any process id, or one that cannot be checked: not known to have ended.

    Example:
        >>> process_ended(os.getpid()), process_ended(2**70)
        (False, False)
    """
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (OSError, OverflowError):
        return False
    return False


def remove_stale_staging(out: str | os.PathLike[str]) -> list[Path]:
    """Remove the staging folders an interrupted writer of ``out`` left beside it.

    Only folders named as :func:`make_staging_folder` and :func:`replace_folder` name them
    for this very ``out`` (``.OUT.partial-<pid>-<random>``, ``.OUT.superseded-<pid>-...``)
    whose process has ended are removed: a writer still running keeps its folder, and
    nothing else in the parent folder is touched. Each removal is told in one
    :class:`~novabench.errors.FileNoteWarning` (``nova`` prints it as a ``nova:`` line). A
    ``.OUT.replaced-<pid>-...`` of an ended process holds the previous ``out`` (its only
    copy when ``out`` is missing): it is named in one such note, never removed.

    Returns:
        The folders removed.

    Example:
        >>> import tempfile
        >>> parent = Path(tempfile.mkdtemp())
        >>> stale = parent / ".nova.partial-999999999-ab12"  # no process has this id
        >>> stale.mkdir(); _ = (stale / "half.png").write_bytes(b"x")
        >>> mine = make_staging_folder(parent / "nova")
        >>> [path.name for path in remove_stale_staging(parent / "nova")], mine.is_dir()
        ([], True)
        >>> stale.exists()
        False
    """
    import shutil

    from novabench.errors import note

    target = Path(out)
    patterns = {kind: _staging_pattern(target, kind) for kind in _LEFT_BEHIND}
    removed: list[Path] = []
    said: list[str] = []  # told once the folder is gone through: an error filter stops nothing
    try:
        entries = list(target.parent.iterdir())
    except OSError:  # no parent yet: nothing was left there
        return removed
    # Earlier versions named the previous OUT without their process id: named, never removed.
    earlier = re.compile(rf"\.{re.escape(target.name)}\.(?:replaced-[0-9a-f]{{8}}|old-[a-z0-9_]+)")
    for entry in sorted(entries):
        if earlier.fullmatch(entry.name) and entry.is_dir() and not entry.is_symlink():
            said.append(
                f"{entry} may hold a previous {target}, moved aside by an interrupted "
                "run of an earlier novabench; remove it if you do not need it"
            )
            continue
        matches = [(kind, p.fullmatch(entry.name)) for kind, p in patterns.items()]
        kind, found = next(((k, m) for k, m in matches if m is not None), ("", None))
        if found is None or entry.is_symlink() or not entry.is_dir():
            continue
        pid = int(found.group("pid"))
        if pid == os.getpid() or not process_ended(pid):
            continue
        if kind == "replaced":  # maybe the only copy of the previous OUT: never removed
            said.append(
                f"{entry} holds the {target} that process {pid} was replacing when it "
                "was interrupted; "
                + (
                    "a newer one is in place: remove it if you do not need it"
                    if target.exists() or target.is_symlink()
                    else f"rename it back to {target.name} to keep it, or remove it"
                )
            )
            continue
        shutil.rmtree(entry, ignore_errors=True)
        if not entry.exists():
            removed.append(entry)
            said.append(
                f"removed {entry}, left by an interrupted run for {target} "
                f"(process {pid} has ended)"
                + (
                    ", the previous version its finished replacement made obsolete"
                    if kind == "superseded"
                    else ""
                )
            )
    for line in said:
        note(line)
    return removed


# What a writer of an output folder may leave beside it when killed: its staging folder
# (``partial``), the previous OUT moved aside (``replaced``), that previous OUT once the new
# one is in place (``superseded``). See :func:`replace_folder`.
_LEFT_BEHIND = ("partial", "replaced", "superseded")


def replace_folder(staging: str | os.PathLike[str], out: str | os.PathLike[str]) -> None:
    """Move a finished staging folder to ``out``, replacing an existing ``out`` only now.

    The previous ``out`` is moved aside as ``.OUT.replaced-<pid>-<random>`` (put back if the
    move fails), renamed ``.OUT.superseded-<pid>-<random>`` once the new one is in place,
    then removed. Whatever a kill leaves is handled by the next writer of ``out``
    (:func:`remove_stale_staging`): a superseded folder is removed, saying so; a replaced
    one (the previous ``out``, maybe its only copy) is named, never removed.

    Example:
        >>> import tempfile
        >>> parent = Path(tempfile.mkdtemp())
        >>> (parent / "out").mkdir(); _ = (parent / "out" / "old.txt").write_text("old")
        >>> staging = make_staging_folder(parent / "out")
        >>> _ = (staging / "new.txt").write_text("new")
        >>> replace_folder(staging, parent / "out")
        >>> sorted(path.name for path in parent.rglob("*"))
        ['new.txt', 'out']
    """
    import secrets
    import shutil

    staging, target = Path(staging), Path(out)
    if not (target.exists() or target.is_symlink()):
        staging.rename(target)
        return
    tag = f"{os.getpid()}-{secrets.token_hex(4)}"
    retired = target.with_name(f".{target.name}.replaced-{tag}")
    target.rename(retired)
    try:
        staging.rename(target)
    except BaseException:
        retired.rename(target)  # put the previous one back
        raise
    superseded = target.with_name(f".{target.name}.superseded-{tag}")
    retired.rename(superseded)
    if superseded.is_dir() and not superseded.is_symlink():
        shutil.rmtree(superseded)
    else:
        superseded.unlink()


def make_staging_folder(out: str | os.PathLike[str]) -> Path:
    """A new empty folder beside ``out`` to write it in, to be renamed to ``out`` when done.

    Its name says whose it is (``.OUT.partial-<pid>-<random>``), so the next run for the
    same ``out`` can tell a folder left by a killed run from one still being written; the
    stale ones are removed first (:func:`remove_stale_staging`). The folder gets the
    umask's mode, as a release or an export is shared in a lab.

    Example:
        >>> import tempfile
        >>> staging = make_staging_folder(Path(tempfile.mkdtemp()) / "export")
        >>> staging.name.startswith(f".export.partial-{os.getpid()}-"), staging.is_dir()
        (True, True)
    """
    import tempfile

    target = Path(out)
    with writing_to(target):
        target.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_staging(target)
        staging = Path(
            tempfile.mkdtemp(prefix=f".{target.name}.partial-{os.getpid()}-", dir=target.parent)
        )
        give_usual_permissions(staging)
    return staging
