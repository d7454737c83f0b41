"""The on-disk verdict cache: keys, folder choice and the entries."""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from novabench._files import write_text_atomic
from novabench.errors import NovaInputError
from novabench.lexicon.diagnoses import normalize_diagnosis
from novabench.metrics.judge.prompts import _case_context


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


class _VerdictCache:
    """One small JSON file per verdict under ``<dir>/<key[:2]>/<key>.json`` (atomic writes).

    A writer that crashed between creating its temporary sibling and renaming it leaves
    ``.<key>.json.<random>.tmp`` behind; opening the cache removes such files once they
    are older than ``stale_after`` seconds (a live write takes milliseconds), and
    ``removed_stale`` says how many went.
    """

    def __init__(self, directory: str | os.PathLike[str], *, stale_after: float = 3600.0) -> None:
        self.directory = Path(directory).expanduser()
        self.directory.mkdir(parents=True, exist_ok=True)
        self.removed_stale = self._remove_stale_temporaries(stale_after)

    def _remove_stale_temporaries(self, stale_after: float) -> int:
        oldest_kept = time.time() - stale_after
        removed = 0
        for shard in os.scandir(self.directory):
            if not (_SHARD.fullmatch(shard.name) and shard.is_dir(follow_symlinks=False)):
                continue
            for entry in os.scandir(shard.path):
                if not _STALE_TEMPORARY.fullmatch(entry.name):
                    continue
                try:
                    if entry.stat(follow_symlinks=False).st_mtime < oldest_kept:
                        os.unlink(entry.path)
                        removed += 1
                except FileNotFoundError:  # another process cleaned it first
                    continue
        return removed

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> bool | None:
        path = self._path(key)
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as error:
            warnings.warn(
                f"unreadable judge cache entry {path} ({error}); judging again", stacklevel=3
            )
            return None
        verdict = record.get("match") if isinstance(record, dict) else None
        if not isinstance(verdict, bool):
            warnings.warn(
                f"judge cache entry {path} has no boolean 'match'; judging again", stacklevel=3
            )
            return None
        return verdict

    def put(self, key: str, verdict: bool, details: dict[str, Any]) -> None:
        write_text_atomic(
            self._path(key), json.dumps({"match": verdict, **details}, ensure_ascii=False)
        )


class _CaseVerdictCache(_VerdictCache):
    """The verdict cache layout, holding ``matched_slot`` instead of ``match``."""

    def get_slot(self, key: str) -> tuple[bool, int | None]:
        """``(found, slot)``: found is False when there is no usable entry."""
        path = self._path(key)
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return False, None
        except (OSError, ValueError) as error:
            warnings.warn(
                f"unreadable case judge cache entry {path} ({error}); judging again",
                stacklevel=3,
            )
            return False, None
        if not isinstance(record, dict) or "matched_slot" not in record:
            return False, None
        slot = record["matched_slot"]
        if slot is not None and (isinstance(slot, bool) or not isinstance(slot, int)):
            return False, None
        return True, slot

    def put_slot(self, key: str, slot: int | None, details: dict[str, Any]) -> None:
        write_text_atomic(
            self._path(key), json.dumps({"matched_slot": slot, **details}, ensure_ascii=False)
        )
