"""The on-disk verdict cache: keys, folder choice and the entries.

What an entry is checked for, and what it is not: an entry is used only when it answers
exactly the request asked of this server (judge, model and server, prompt version and hash,
the pair or case as sent) and
its stored answer is what the stored raw reply, read again by the parser used on fresh
replies, gives. That catches an entry copied over from another request, an answer edited
without its reply (or the reply without its answer), an old entry without a reply and a
file that is not a regular one: each is asked again and counted as ``cache_rejected``.
It does not catch an entry whose reply and answer were both edited consistently (a reply
rewritten to ``{"matched_slot": null}`` with the answer to match): only a secret key could
tell such an entry from a real one, and a key per machine would make a cache copied to
another machine unusable, where it must give the same report. An entry is as trustworthy
as the folder it sits in: share caches only from people you trust. Reports say how many
verdicts came from the cache (``cache_hits`` in the judge's stats, and the judge note),
so a reader knows how much rests on it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import threading
import time
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from novabench._files import write_text_atomic
from novabench.client import is_credential_parameter
from novabench.errors import NovaInputError, warn_at_caller
from novabench.lexicon.diagnoses import normalize_diagnosis
from novabench.metrics.judge.prompts import _case_context


def cache_endpoint(url: str) -> str:
    """The server a judge asks, as its cache keys name it: scheme, host, port, path and query.

    Two spellings of one server give one form (case of scheme and host, a default port
    written or not, a trailing slash, the order of query parameters); credentials
    (``user:password@``) are left out, and so is every query parameter whose name says it
    holds one (``key``, ``api-key``, ``token``, ``access_token``, ``code``, ``sig``,
    ``signature``, ``secret``, ``password``, ``auth``...: the client's
    :func:`~novabench.client.is_credential_parameter`), name and value, so no secret reaches
    a cache entry and a new key does not cost the cache. Every other parameter stays, sorted:
    it may choose the model or deployment (``?model=``, ``?deployment=``) or the API itself
    (Azure's ``?api-version=``). A verdict is served only to the server that gave it: two
    servers under one model name may serve different models.

    Example:
        >>> cache_endpoint("HTTP://User:pw@LocalHost/v1/chat/completions/?api_key=sk-1")
        'http://localhost:80/v1/chat/completions'
        >>> cache_endpoint("https://h:443/v1/chat/completions") == cache_endpoint(
        ...     "https://h/v1/chat/completions")
        True
        >>> cache_endpoint("https://h/v1/chat/completions?model=b&Api-Key=sk-2&deployment=a")
        'https://h:443/v1/chat/completions?deployment=a&model=b'
    """
    parts = urllib.parse.urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:  # an IPv6 literal
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:  # the client refuses such a URL before any judge is built
        port = None
    if port is None:
        port = {"http": 80, "https": 443}.get(scheme)
    where = host if port is None else f"{host}:{port}"
    kept = sorted(
        (name, value)
        for name, value in urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
        if not is_credential_parameter(name)
    )
    query = f"?{urllib.parse.urlencode(kept)}" if kept else ""
    return f"{scheme}://{where}{parts.path.rstrip('/')}{query}"


def verdict_cache_key(identity: str, prompt_version: str, reference: str, candidate: str) -> str:
    """SHA-256 key of a verdict: judge identity, prompt version and the normalised pair.

    Normalising the pair (:func:`~novabench.metrics.diagnosis.normalize_diagnosis`) lets
    ``"Glioma."`` and ``"glioma"`` share one verdict; the identity and prompt version keep
    verdicts of different judges or prompts apart.

    Example:
        >>> verdict_cache_key("m", "v1", "Glioma.", "GBM") == verdict_cache_key("m", "v1", "glioma", "gbm")
        True
        >>> verdict_cache_key("m", "v1", "glioma", "gbm") == verdict_cache_key("m", "v2", "glioma", "gbm")
        False
    """
    payload = json.dumps(
        [identity, prompt_version, normalize_diagnosis(reference), normalize_diagnosis(candidate)],
        ensure_ascii=False,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def case_verdict_cache_key(
    identity: str,
    prompt_version: str,
    reference: str,
    predictions: Sequence[str],
    context: str | None = None,
) -> str:
    """SHA-256 key of a case verdict: judge identity, prompt version, reference, predictions
    and the clinical context as sent (a blank context is the same as none).

    Example:
        >>> a = case_verdict_cache_key("m", "v1", "glioma", ["GBM", "abscess"])
        >>> a == case_verdict_cache_key("m", "v1", "glioma", ["abscess", "GBM"])
        False
        >>> a == case_verdict_cache_key("m", "v1", "glioma", ["GBM", "abscess"], "Seizures.")
        False
        >>> a == case_verdict_cache_key("m", "v1", "glioma", ["GBM", "abscess"], "  ")
        True
    """
    payload = json.dumps(
        [identity, prompt_version, reference, list(predictions), _case_context(context)],
        ensure_ascii=False,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


#: The environment variable that names the judge cache folder of ``nova evaluate``.
CACHE_ENV = "NOVABENCH_CACHE"


def default_cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The judge cache folder ``nova evaluate`` uses unless ``--judge-cache`` names one.

    ``$NOVABENCH_CACHE`` when set; else ``$XDG_CACHE_HOME/novabench/judge`` (when
    ``XDG_CACHE_HOME`` is an absolute path, as the XDG rule asks); else
    ``~/.cache/novabench/judge``. The user's cache, never the current folder, so no hidden
    folder appears wherever one scores. The Python judges keep no cache unless given one.

    Args:
        environ: the environment to read (default ``os.environ``).

    Raises:
        NovaInputError: no variable is set and the home folder is unknown.

    Example:
        >>> default_cache_dir({"NOVABENCH_CACHE": "/srv/verdicts"}).as_posix()
        '/srv/verdicts'
        >>> default_cache_dir({"XDG_CACHE_HOME": "/var/cache/me"}).as_posix()
        '/var/cache/me/novabench/judge'
        >>> default_cache_dir({"HOME": "/home/me"}).as_posix()
        '/home/me/.cache/novabench/judge'
    """
    environ = os.environ if environ is None else environ
    chosen = environ.get(CACHE_ENV, "").strip()
    if chosen:
        return Path(os.path.expanduser(chosen))
    xdg = environ.get("XDG_CACHE_HOME", "").strip()
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "novabench" / "judge"
    home = environ.get("HOME", "").strip() or os.path.expanduser("~")
    if not os.path.isabs(home):
        raise NovaInputError(
            f"no home folder to keep the judge cache in: set {CACHE_ENV} or give a folder",
            field="--judge-cache",
        )
    return Path(home) / ".cache" / "novabench" / "judge"


def shown_cache_folder(cache_dir: str | os.PathLike[str] | None) -> str | None:
    """A cache folder as reports show it: under the home folder as ``~/...``, else as given.

    Reports travel (shared, published), so the user's home path stays out of them.

    Example:
        >>> import os
        >>> shown_cache_folder(os.path.expanduser("~/.cache/novabench/judge"))
        '~/.cache/novabench/judge'
        >>> shown_cache_folder("verdicts"), shown_cache_folder(None)
        ('verdicts', None)
    """
    if cache_dir is None:
        return None
    path = Path(cache_dir)
    home = Path(os.path.expanduser("~"))
    if path.is_absolute() and home.is_absolute() and home != Path(home.anchor):
        try:
            return (Path("~") / path.relative_to(home)).as_posix()
        except ValueError:  # outside the home folder
            pass
    return str(path)


_STALE_TEMPORARY = re.compile(r"\.[0-9a-f]{64}\.json\..+\.tmp")  # write_text_atomic's siblings
_SHARD = re.compile(r"[0-9a-f]{2}")

#: The layout version of a cache entry: the request, the judge's raw reply, the answer.
CACHE_ENTRY_FORMAT = 2
#: The largest cache entry read, in bytes (a reply is a few kB; anything far larger is
#: not an entry we wrote).
MAX_CACHE_ENTRY_BYTES = 1 << 20

_Answer = TypeVar("_Answer")


class _UnusableEntry(Exception):
    """A cache entry that cannot be used; the message says why (for the warning)."""

    def __init__(self, reason: str, *, kind: str) -> None:
        super().__init__(reason)
        self.kind = kind


def _read_entry_text(path: Path, max_bytes: int) -> str | None:
    """The text of one cache entry, read without blocking and at most ``max_bytes`` long.

    Returns None when there is no entry. A FIFO, folder or device is opened without
    waiting for a writer (``O_NONBLOCK``) and refused after ``fstat``; a link is not followed.

    Raises:
        _UnusableEntry: not a regular file, too large, unreadable or not UTF-8.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        handle = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
    except (FileNotFoundError, NotADirectoryError):  # no entry (a file where a folder goes)
        return None
    except OSError as error:  # a link (ELOOP), no permission, an I/O error
        raise _UnusableEntry(f"cannot be opened: {error.strerror or error}", kind="unreadable")
    try:
        info = os.fstat(handle)
        if not stat.S_ISREG(info.st_mode):
            raise _UnusableEntry("is not a regular file", kind="unreadable")
        if info.st_size > max_bytes:
            raise _UnusableEntry(f"is larger than {max_bytes} bytes", kind="unreadable")
        chunks = []
        size = 0
        while size <= max_bytes:
            chunk = os.read(handle, max_bytes + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as error:
        raise _UnusableEntry(f"cannot be read: {error.strerror or error}", kind="unreadable")
    finally:
        os.close(handle)
    if size > max_bytes:  # grew while being read
        raise _UnusableEntry(f"is larger than {max_bytes} bytes", kind="unreadable")
    try:
        return b"".join(chunks).decode("utf-8")
    except UnicodeDecodeError:
        raise _UnusableEntry("is not UTF-8 text", kind="unreadable") from None


class _VerdictCache:
    """One small JSON file per answer under ``<dir>/<key[:2]>/<key>.json`` (atomic writes).

    An entry binds one request to the judge's reply: it keeps the request's identity
    (judge with its server, prompt version and hash, the pair or case as sent), the raw reply and the
    answer read from it. :meth:`get` uses an entry only when its request is exactly the
    one asked and the answer read again from the stored reply, with the parser used on
    fresh replies, equals the stored answer; anything else (another request's entry, a
    flipped answer, an old entry without a reply, a FIFO, folder, link, an oversize or
    unreadable file, a shard folder linking out of the cache) is a *rejected* entry: a
    miss, counted by the caller, with one warning per kind of problem.

    Answers the disk does not take (a folder that cannot be written: one warning naming it
    and why) are kept in memory, so nothing already paid for is lost in this run.

    A writer that crashed between creating its temporary sibling and renaming it leaves
    ``.<key>.json.<random>.tmp`` behind; opening the cache removes such files once they
    are older than ``stale_after`` seconds (a live write takes milliseconds), and
    ``removed_stale`` says how many went.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        stale_after: float = 3600.0,
        max_entry_bytes: int = MAX_CACHE_ENTRY_BYTES,
    ) -> None:
        self.directory = Path(directory).expanduser()
        self.max_entry_bytes = max_entry_bytes
        self._lock = threading.Lock()
        self._memory: dict[str, tuple[str, Any]] = {}
        self._warned: set[str] = set()
        self.writable = True
        self.removed_stale = 0
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            self.removed_stale = self._remove_stale_temporaries(stale_after)
        except OSError as error:
            self._cannot_write(error)

    def _warn_once(self, kind: str, message: str) -> None:
        with self._lock:
            if kind in self._warned:
                return
            self._warned.add(kind)
        warn_at_caller(message, UserWarning)

    def _cannot_write(self, error: OSError) -> None:
        self.writable = False
        self._warn_once(
            "write",
            f"judge cache folder {self.directory} cannot be written "
            f"({error.strerror or error}); this run's answers are kept in memory only",
        )

    def _remove_stale_temporaries(self, stale_after: float) -> int:
        oldest_kept = time.time() - stale_after
        removed = 0
        for shard in os.scandir(self.directory):
            if not (_SHARD.fullmatch(shard.name) and shard.is_dir(follow_symlinks=False)):
                continue
            try:
                entries = list(os.scandir(shard.path))
            except OSError:  # an unreadable shard: its entries are refused when read
                continue
            for entry in entries:
                if not _STALE_TEMPORARY.fullmatch(entry.name):
                    continue
                try:
                    if entry.stat(follow_symlinks=False).st_mtime < oldest_kept:
                        os.unlink(entry.path)
                        removed += 1
                except OSError:  # cleaned by another process first, or not ours to remove
                    continue
        return removed

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def _shard_problem(self, key: str) -> str | None:
        """Why the entry's shard folder may not be used (a link out of the cache), or None."""
        shard = self.directory / key[:2]
        if not shard.is_symlink():
            return None
        inside = os.path.realpath(self.directory)
        target = os.path.realpath(shard)
        if os.path.commonpath([inside, target]) == inside:
            return None
        return f"shard folder {shard} links out of the cache folder; not followed"

    def get(
        self,
        key: str,
        request: Mapping[str, Any],
        read_reply: Callable[[str], _Answer | None],
        stored_form: Callable[[Any], Any],
    ) -> tuple[_Answer | None, bool]:
        """``(answer, rejected)``: the cached answer to exactly ``request``, or None.

        Args:
            key: the request's cache key.
            request: the request's identity, JSON values only (compared with the entry's).
            read_reply: the parser used on fresh replies (None: unreadable).
            stored_form: an answer as the entry stores it (compared with the entry's).

        Returns:
            The answer and False on a usable entry; None and False when there is none;
            None and True when an entry was there but rejected (a warning said why).
        """
        wanted = json.dumps(request, sort_keys=True, ensure_ascii=False)
        with self._lock:
            remembered = self._memory.get(key)
        if remembered is not None and remembered[0] == wanted:
            return remembered[1], False
        path = self._path(key)
        try:
            problem = self._shard_problem(key)
            if problem is not None:
                raise _UnusableEntry(problem, kind="shard link")
            text = _read_entry_text(path, self.max_entry_bytes)
            if text is None:
                return None, False
            answer = self._answer_of(text, request, read_reply, stored_form)
        except _UnusableEntry as unusable:
            self._warn_once(
                unusable.kind,
                f"judge cache entry {path} {unusable}; asked again (such entries are "
                "counted as cache_rejected in the judge's stats)",
            )
            return None, True
        return answer, False

    def find(
        self,
        key: str,
        request: Mapping[str, Any],
        read_reply: Callable[[str], _Answer | None],
        stored_form: Callable[[Any], Any],
        count: Callable[[str], None],
    ) -> _Answer | None:
        """:meth:`get`, counting ``cache_hits`` and ``cache_rejected`` with ``count``."""
        answer, rejected = self.get(key, request, read_reply, stored_form)
        if rejected:
            count("cache_rejected")
        if answer is not None:
            count("cache_hits")
        return answer

    @staticmethod
    def _answer_of(
        text: str,
        request: Mapping[str, Any],
        read_reply: Callable[[str], _Answer | None],
        stored_form: Callable[[Any], Any],
    ) -> _Answer:
        try:
            record = json.loads(text)
        except ValueError:
            raise _UnusableEntry("is not JSON", kind="unreadable") from None
        if not isinstance(record, dict) or record.get("format") != CACHE_ENTRY_FORMAT:
            raise _UnusableEntry("has no stored reply (an older layout)", kind="old")
        if record.get("request") != json.loads(json.dumps(request)):
            raise _UnusableEntry("answers another request", kind="request")
        reply = record.get("reply")
        answer = read_reply(reply) if isinstance(reply, str) else None
        if answer is None:
            raise _UnusableEntry("has no readable stored reply", kind="reply")
        if json.loads(json.dumps(stored_form(answer))) != record.get("answer"):
            raise _UnusableEntry("has an answer its stored reply does not give", kind="answer")
        return answer

    def put(
        self,
        key: str,
        request: Mapping[str, Any],
        reply: str,
        answer: Any,
        stored_answer: Any,
        details: Mapping[str, Any] | None = None,
    ) -> None:
        """Keep ``answer`` to ``request`` (in memory, and on disk when the folder allows).

        Args:
            key: the request's cache key.
            request: the request's identity, JSON values only.
            reply: the judge's raw reply the answer was read from.
            answer: the answer, as :meth:`get` returns it.
            stored_answer: the answer in JSON form, stored beside the reply.
            details: more to store for people reading the entry (not read back).
        """
        if not self.writable:
            self._remember(key, request, answer)
            return
        problem = self._shard_problem(key)
        if problem is not None:
            self._remember(key, request, answer)
            self._warn_once("shard link", f"judge cache {problem}; answer kept in memory")
            return
        record = {
            "format": CACHE_ENTRY_FORMAT,
            "request": dict(request),
            "reply": reply,
            "answer": stored_answer,
            **dict(details or {}),
        }
        try:
            write_text_atomic(self._path(key), json.dumps(record, ensure_ascii=False))
        except OSError as error:
            self._remember(key, request, answer)
            self._cannot_write(error)

    def _remember(self, key: str, request: Mapping[str, Any], answer: Any) -> None:
        """Keep an answer the disk did not take, for the rest of this run."""
        wanted = json.dumps(request, sort_keys=True, ensure_ascii=False)
        with self._lock:
            self._memory[key] = (wanted, answer)
