"""One writer per run file: an advisory lock on a sidecar ``<file>.lock``.

``nova run``, ``nova parse --out``, ``nova merge --out`` and :func:`~novabench.run.runner.run_model`
hold the lock of the predictions file they write for the whole command; ``nova evaluate``,
``nova compare``, ``nova leaderboard`` and ``nova export`` hold the locks of all their outputs
(:func:`claiming_outputs`), taken before they check whether an output may be replaced. A second writer of
the same file fails at once, naming the holder (pid, command, start time) that the lock file
records. The lock is the kernel's (``fcntl.flock``): it ends with the process that held it,
so the lock file of a killed run never blocks the next one; what the file says about its
holder is information only. On systems without ``fcntl`` no lock is taken.
"""

from __future__ import annotations

import errno
import json
import os
import re
import socket
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from datetime import datetime, timezone
from pathlib import Path

from novabench._files import process_ended
from novabench.errors import NovaInputError, note

__all__ = [
    "LOCK_SUFFIX",
    "HOLD_AFTER_CLAIM_VARIABLE",
    "active_writer",
    "claiming_outputs",
    "ended_writer",
    "lock_path_for",
    "remove_unfinished_writes",
    "writer_lock",
]

#: The name the lock file adds to its predictions file's name (``run.jsonl.lock``).
LOCK_SUFFIX = ".lock"

# Files this process holds already, so a command that locks its output can call run_model,
# which locks it again, without blocking itself. Keyed by the resolved path.
_HELD: dict[Path, int] = {}


def lock_path_for(predictions_path: str | os.PathLike[str]) -> Path:
    """The lock file of a predictions file: ``<file>.lock`` beside it.

    Example:
        >>> lock_path_for("runs/qwen.jsonl").name
        'qwen.jsonl.lock'
    """
    path = Path(predictions_path)
    return path.with_name(path.name + LOCK_SUFFIX)


def _holder_text(lock_path: Path) -> str:
    """What a lock file says about its holder, in a few words (never raises)."""
    try:
        holder = json.loads(lock_path.read_text(encoding="utf-8"))
        return (
            f"pid {holder.get('pid')} on {holder.get('host')}, {holder.get('command')}, "
            f"since {holder.get('started_at')}"
        )
    except (OSError, ValueError, AttributeError):
        return "a process that has not recorded itself yet"


#: What :func:`active_writer` says where no advisory lock can tell (no ``fcntl``).
UNKNOWN_WRITER = "a writer this system cannot detect (no advisory locks here)"


def active_writer(predictions_path: str | os.PathLike[str]) -> str | None:
    """Who is writing a predictions file now, in a few words; None when no process is.

    Readers (``nova evaluate`` of a run whose manifest says ``running``) ask this without
    creating the lock file. The kernel has no "is it locked" query for ``flock``, so a
    shared lock is taken and dropped at once: a writer holds it exclusively, so taking it
    fails exactly while one writes. A writer starting in that instant would be refused;
    the window is one system call long.

    Args:
        predictions_path: the predictions file.

    Returns:
        The holder as its lock file records it (pid, host, command, start), or None.

    Example:
        >>> import tempfile
        >>> target = Path(tempfile.mkdtemp()) / "raw.jsonl"
        >>> active_writer(target) is None
        True
        >>> with writer_lock(target, "nova run"):
        ...     active_writer(target).startswith(f"pid {os.getpid()} ")
        True
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not on POSIX: nothing can tell
        return UNKNOWN_WRITER
    lock_path = lock_path_for(predictions_path)
    if lock_path.resolve() in _HELD:  # this very process writes it
        return _holder_text(lock_path)
    try:
        descriptor = os.open(lock_path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:  # every writer makes it first and removes it last
        return None
    except OSError:
        return UNKNOWN_WRITER
    try:
        fcntl.flock(descriptor, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return _holder_text(lock_path)
    except OSError:  # a file system without flock
        return UNKNOWN_WRITER
    finally:
        os.close(descriptor)  # closing drops the shared lock, if taken
    return None


def ended_writer(predictions_path: str | os.PathLike[str]) -> str | None:
    """The writer a predictions file's lock file names, when it is known to have ended.

    Known only when the lock file a killed writer leaves names a process of this machine
    that no longer exists. A file without a lock file (copied, uploaded, written on another
    machine) or whose writer is on another host or cannot be checked gives None: nothing is
    known of its writer. Ask it once :func:`active_writer` said no process writes the file.

    Args:
        predictions_path: the predictions file.

    Returns:
        The writer as its lock file records it (pid, host, command, start), or None.

    Example:
        >>> import tempfile
        >>> target = Path(tempfile.mkdtemp()) / "raw.jsonl"
        >>> ended_writer(target) is None  # no lock file: nothing known
        True
        >>> _ = lock_path_for(target).write_text(json.dumps(
        ...     {"pid": os.getpid(), "host": socket.gethostname()}))
        >>> ended_writer(target) is None  # this very process: alive
        True
        >>> _ = lock_path_for(target).write_text(json.dumps(
        ...     {"pid": 2**70, "host": socket.gethostname()}))
        >>> ended_writer(target) is None  # past any process id: nothing known
        True
    """
    lock_path = lock_path_for(predictions_path)
    try:
        holder = json.loads(lock_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    pid = holder.get("pid") if isinstance(holder, dict) else None
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return None
    if holder.get("host") != socket.gethostname():
        return None  # another machine's process cannot be checked from here
    # Alive (or its pid reused), another user's, or past any pid: not known to have ended.
    return _holder_text(lock_path) if process_ended(pid) else None


@contextmanager
def writer_lock(predictions_path: str | os.PathLike[str], command: str) -> Iterator[Path]:
    """Hold the one-writer lock of a predictions file (and its manifest) while writing it.

    Args:
        predictions_path: the file about to be written; its folder must exist.
        command: what writes it, recorded for a second writer's message (``"nova run"``).

    Yields:
        The lock file's path.

    Raises:
        NovaInputError: another process holds the lock; the message names it.

    Example:
        >>> import tempfile
        >>> target = Path(tempfile.mkdtemp()) / "raw.jsonl"
        >>> with writer_lock(target, "nova run") as lock:
        ...     json.loads(lock.read_text())["command"]
        'nova run'
        >>> lock.exists()  # removed when the writer is done
        False
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not on POSIX: no advisory locks to take
        yield lock_path_for(predictions_path)
        return
    lock_path = lock_path_for(predictions_path)
    key = lock_path.resolve()
    if key in _HELD:  # this process holds it already (a command around run_model)
        _HELD[key] += 1
        try:
            yield lock_path
        finally:
            _HELD[key] -= 1
        return
    while True:
        descriptor = _open_lock_file(lock_path, predictions_path)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(descriptor)
            raise NovaInputError(
                f"is being written by another process ({_holder_text(lock_path)}); "
                "wait for it to finish or write to another file",
                source=str(predictions_path),
            ) from None
        # The previous holder may have removed the file between our open and our lock: then
        # we locked a file nobody else can see, and must lock the one at the path instead.
        try:
            same = os.path.samestat(os.fstat(descriptor), os.stat(lock_path))
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(descriptor)
    holder = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "command": command,
        "started_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    os.ftruncate(descriptor, 0)
    os.write(descriptor, (json.dumps(holder) + "\n").encode("utf-8"))
    _HELD[key] = 1
    remove_unfinished_writes(predictions_path)
    try:
        yield lock_path
    finally:
        del _HELD[key]
        lock_path.unlink(missing_ok=True)  # before the unlock: see the check after flock
        os.close(descriptor)


#: Test hook: a FIFO named by this variable is read to its end once :func:`claiming_outputs`
#: holds every lock, so a test can hold one real writer there while a second one starts.
HOLD_AFTER_CLAIM_VARIABLE = "NOVABENCH_HOLD_AFTER_CLAIM"


@contextmanager
def claiming_outputs(
    outputs: Mapping[str, str | os.PathLike[str] | None], command: str
) -> Iterator[list[Path]]:
    """Hold the writer lock of every output of one command (files and folders) while it runs.

    A command claims its outputs before it checks whether they may be replaced and before it
    writes: a second command writing any of them meanwhile is refused at once, naming this
    one, instead of both passing the check and the later rename silently replacing the
    earlier one's output. The locks are taken in one order (by absolute path), so two
    commands sharing several outputs never each hold a part. A folder an output needs is
    made for its lock file and removed again at the end when it is still empty.

    Args:
        outputs: the outputs by option (``{"--out": "e4/report.json", "--items": None}``);
            None or empty entries are not written and not claimed.
        command: what writes them, recorded for a second writer's message.

    Yields:
        The lock files held.

    Raises:
        NovaInputError: another process holds the lock of one of them; the message names
            the output and that process.

    Example:
        >>> import tempfile
        >>> folder = Path(tempfile.mkdtemp())
        >>> outputs = {"--out": folder / "new" / "report.json", "--markdown": None}
        >>> with claiming_outputs(outputs, "nova evaluate") as locks:
        ...     [lock.name for lock in locks]
        ['report.json.lock']
        >>> (folder / "new").exists()  # made for the lock, removed as nothing was written there
        False
    """
    from novabench._files import StagedOutputs

    # By absolute path, each named as the user gave it (the refusal names it so).
    claimed = dict(
        sorted({os.path.abspath(path): Path(path) for path in outputs.values() if path}.items())
    )
    folders = StagedOutputs()  # only to make the missing folders and remove them when empty
    try:
        with ExitStack() as locks:
            held = []
            for path in claimed.values():
                folders.make_folder(path.parent, for_output=path)
                held.append(locks.enter_context(writer_lock(path, command)))
            _hold_for_tests()
            yield held
    finally:
        folders.discard()


def _hold_for_tests() -> None:
    """Wait here, every lock held, while a test keeps the FIFO its variable names open."""
    fifo = os.environ.get(HOLD_AFTER_CLAIM_VARIABLE)
    if fifo:
        with open(fifo, encoding="utf-8") as held_open:
            held_open.read()


def _open_lock_file(lock_path: Path, predictions_path: str | os.PathLike[str]) -> int:
    """The lock file opened for writing; a folder this user may not write names the run file.

    The lock file is the first file a writer makes beside its output, so a folder without
    write permission (or on a read-only disk) shows here first: the error names the file the
    user gave and why, not the lock file they never asked for.
    """
    try:
        return os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as error:
        from novabench._files import write_failure_reason
        from novabench.errors import NovaOutputError

        reason = write_failure_reason(error)
        if reason is None:
            raise
        refused = error.errno in (errno.EACCES, errno.EPERM)
        where = (
            f"its writer lock {lock_path.name} there belongs to another user"
            if refused and lock_path.exists()
            else f"no file can be made in its folder {lock_path.parent}"
        )
        raise NovaOutputError(
            str(predictions_path), f"{reason} ({where})", errno=error.errno
        ) from error


# The temporary siblings the writers of a predictions file make before renaming: the file's
# or its manifest's ``.NAME.<random>.tmp`` (writing_atomically, nova parse --out too), and
# ``.NAME.<random>.partial`` (nova parse --out before it wrote through writing_atomically).
# tempfile's random part is letters, digits and underscores.
_MANIFEST_SUFFIX = ".manifest.json"  # run/manifest.py's MANIFEST_SUFFIX (a test keeps both equal)


def _unfinished_write_pattern(path: Path) -> re.Pattern[str]:
    name = re.escape(path.name)
    return re.compile(rf"\.{name}(?:{re.escape(_MANIFEST_SUFFIX)})?\.[a-z0-9_]+\.(?:tmp|partial)")


def remove_unfinished_writes(predictions_path: str | os.PathLike[str]) -> list[Path]:
    """Remove the temporary copies a killed writer of a predictions file left beside it.

    Called by :func:`writer_lock` once it holds the lock: every writer of the file and of
    its manifest holds that lock, so such a copy belongs to a writer that has ended. Each
    was an unfinished replacement (the file itself was never touched by it): removing it
    loses nothing. Each removal is told in one :class:`~novabench.errors.FileNoteWarning`
    (``nova`` prints it as a ``nova:`` line); nothing else is touched.

    Returns:
        The files removed.

    Example:
        >>> import tempfile, warnings
        >>> folder = Path(tempfile.mkdtemp())
        >>> _ = (folder / ".run.jsonl.manifest.json.k2j9x1_a.tmp").write_text("{")
        >>> _ = (folder / ".other.jsonl.q1w2e3r4.tmp").write_text("{")
        >>> with warnings.catch_warnings(record=True) as said:
        ...     warnings.simplefilter("always")
        ...     removed = remove_unfinished_writes(folder / "run.jsonl")
        >>> [path.name for path in removed], sorted(p.name for p in folder.iterdir())
        (['.run.jsonl.manifest.json.k2j9x1_a.tmp'], ['.other.jsonl.q1w2e3r4.tmp'])
        >>> [str(w.message).startswith("removed ") for w in said]
        [True]
    """
    target = Path(predictions_path)
    pattern = _unfinished_write_pattern(target)
    removed: list[Path] = []
    try:
        entries = sorted(target.parent.iterdir())
    except OSError:
        return removed
    for entry in entries:
        if not pattern.fullmatch(entry.name) or entry.is_symlink() or not entry.is_file():
            continue
        try:
            entry.unlink()
        except OSError:
            continue  # not ours to force; the next writer tries again
        removed.append(entry)
    for entry in removed:  # told once all are removed: an error filter cannot stop it midway
        note(
            f"removed {entry}, an unfinished write left by an interrupted writer of "
            f"{target} (this command holds its writer lock, so no other writer is at work)"
        )
    return removed
