"""LLM-judge matchers for the diagnosis metric.

The paper decides whether a predicted diagnosis matches the final diagnosis with an LLM
judge that accepts synonyms and differences in specificity but not a different disease.
Any callable ``(reference, candidate) -> bool`` is a matcher for
:func:`novabench.metrics.diagnosis.score_diagnosis`; this module adds:

- :class:`CachedJudge`: wraps any matcher with an on-disk cache of verdicts, so a second
  scoring run (or a rerun after a crash) costs no model call;
- :class:`OpenAIChatJudge`: a client for OpenAI-compatible ``/v1/chat/completions``
  endpoints (vLLM, TGI, llama.cpp server, hosted APIs) with our judge prompt, retries with
  exponential backoff, strict reply parsing, a cache and bounded concurrency.

Both expose ``match_many``: ``score_diagnosis(..., matcher=judge)`` sends every distinct
pair in one batch, judged by at most ``max_workers`` threads; ``judge.last_batch`` then
says how many verdicts came from the cache.

Example:
    >>> import tempfile
    >>> from novabench.metrics.diagnosis import score_diagnosis
    >>> def exact(reference, candidate):
    ...     return reference.lower() == candidate.lower()
    >>> judge = CachedJudge(exact, tempfile.mkdtemp(), identity="exact-v1")
    >>> score_diagnosis([["glioma"], ["abscess"]], ["Glioma", "Lymphoma"], matcher=judge)["top1"]
    0.5
    >>> judge.last_batch.cache_hits, judge.last_batch.judged
    (0, 2)
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from novabench._files import write_text_atomic
from novabench.client import ChatClient, ChatClientError
from novabench.errors import NovaError, NovaInputError
from novabench.lexicon.diagnoses import normalize_diagnosis
from novabench.progress import progress_bar

__all__ = [
    "CASE_JUDGE_PROMPT_VERSION",
    "CASE_JUDGE_SYSTEM_PROMPT",
    "CACHE_ENV",
    "CaseJudgeStats",
    "CaseVerdict",
    "JUDGE_PROMPT_VERSION",
    "JUDGE_SYSTEM_PROMPT",
    "CachedJudge",
    "JudgeBatchSummary",
    "JudgeError",
    "JudgeStats",
    "OpenAICaseJudge",
    "OpenAIChatJudge",
    "build_case_judge_messages",
    "case_verdict_cache_key",
    "build_judge_messages",
    "default_cache_dir",
    "parse_case_verdict",
    "parse_judge_verdict",
    "shown_cache_folder",
    "verdict_cache_key",
]

JUDGE_PROMPT_VERSION = "nova-diagnosis-judge-1"


def _prompt_resource(name: str) -> str:
    """A judge's system prompt, read from ``novabench/resources/prompts/<name>``."""
    resource = resources.files("novabench").joinpath(f"resources/prompts/{name}")
    return resource.read_text(encoding="utf-8").strip()


#: The pair judge's system prompt (``resources/prompts/diagnosis_pair_judge.txt``); its
#: SHA-256 is :attr:`OpenAIChatJudge.prompt_sha256`.
JUDGE_SYSTEM_PROMPT = _prompt_resource("diagnosis_pair_judge.txt")


def build_judge_messages(reference: str, candidate: str) -> list[dict[str, str]]:
    """The chat messages sent to the judge model for one pair.

    Args:
        reference: the final diagnosis of the case.
        candidate: the diagnosis proposed by the model under test.

    Returns:
        A system message with :data:`JUDGE_SYSTEM_PROMPT` and a user message with the pair.

    Example:
        >>> messages = build_judge_messages("Glioblastoma", "GBM")
        >>> [m["role"] for m in messages]
        ['system', 'user']
        >>> print(messages[1]["content"])
        Reference diagnosis: Glioblastoma
        Proposed diagnosis: GBM
    """
    return [
        {"role": "system", "content": JUDGE_SYSTEM_PROMPT},
        {
            "role": "user",
            "content": f"Reference diagnosis: {reference.strip()}\n"
            f"Proposed diagnosis: {candidate.strip()}",
        },
    ]


_YES = frozenset({"true", "yes", "match", "matches", "correct", "same"})
_NO = frozenset({"false", "no", "mismatch", "incorrect", "different"})
_THINKING = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_JSON_OBJECT = re.compile(r"\{[^{}]*\}")


def _as_verdict(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _YES | _NO:
        return value.strip().lower() in _YES
    return None


def parse_judge_verdict(text: str | None) -> bool | None:
    """Read a judge reply: a JSON object with ``match``, or a single yes/no word.

    Reasoning blocks (``<think>...</think>``) and code fences are ignored. A reply is read
    as a verdict when its JSON objects agree on a boolean ``match`` (``true``/``false``,
    or the strings ``"yes"``/``"no"``...), or when the whole reply is one word among
    true/yes/match/correct/same and false/no/mismatch/incorrect/different. Anything else,
    including contradicting objects, is unreadable.

    Args:
        text: the reply content (``None`` for a missing content).

    Returns:
        The verdict, or ``None`` when the reply cannot be read.

    Example:
        >>> parse_judge_verdict('```json\\n{"match": true}\\n```')
        True
        >>> parse_judge_verdict("No.")
        False
        >>> parse_judge_verdict("It depends on the grade.") is None
        True
    """
    if not isinstance(text, str):
        return None
    text = _THINKING.sub(" ", text)
    found: set[bool] = set()
    saw_json = False
    for chunk in _JSON_OBJECT.findall(text):
        try:
            obj = json.loads(chunk)
        except ValueError:
            continue
        if isinstance(obj, dict) and "match" in obj:
            saw_json = True
            verdict = _as_verdict(obj["match"])
            if verdict is None:
                return None
            found.add(verdict)
    if saw_json:
        return found.pop() if len(found) == 1 else None
    words = re.findall(r"[a-z]+", text.lower().replace("```", " "))
    if len(words) == 1 and words[0] in _YES | _NO:
        return words[0] in _YES
    return None


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


class JudgeError(NovaError):
    """The judge could not give a verdict (unreadable replies, HTTP errors after retries).

    Args:
        message: what went wrong.
        case: where the pair comes from, e.g. ``"example 3 (case0004), prediction 2"``.
        reference: the reference diagnosis of the pair.
        candidate: the candidate diagnosis of the pair.
        reply: the last reply text or error body, if any.

    Example:
        >>> str(JudgeError("unreadable reply", case="example 0, prediction 1",
        ...                reference="Glioma", candidate="GBM"))
        "example 0, prediction 1 (reference 'Glioma', candidate 'GBM'): unreadable reply"
    """

    def __init__(
        self,
        message: str,
        *,
        case: str | None = None,
        reference: str | None = None,
        candidate: str | None = None,
        reply: str | None = None,
    ) -> None:
        self.message = message
        self.case = case
        self.reference = reference
        self.candidate = candidate
        self.reply = reply
        where = case or "pair"
        if reference is not None or candidate is not None:
            where += f" (reference {reference!r}, candidate {candidate!r})"
        super().__init__(f"{where}: {message}")


@dataclass(frozen=True)
class JudgeStats:
    """Counters of a judge since it was created.

    Attributes:
        calls: verdicts asked for (single calls plus pairs of batches).
        cache_hits: verdicts read from the cache.
        cache_misses: verdicts that had to be judged (by the model or the wrapped matcher).
        requests: HTTP requests sent, retries included (0 for wrapped callables).
        retries: requests that were repeats after a failure.
        failures: verdicts that could not be obtained (a :class:`JudgeError` was raised).
    """

    calls: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    requests: int = 0
    retries: int = 0
    failures: int = 0


@dataclass(frozen=True)
class JudgeBatchSummary:
    """What one ``match_many`` batch cost.

    Attributes:
        n_pairs: pairs asked for.
        cache_hits: verdicts read from the cache.
        judged: verdicts judged anew (cache misses).
        requests: HTTP requests sent for this batch, retries included.
    """

    n_pairs: int
    cache_hits: int
    judged: int
    requests: int


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


def _check_positive(
    value: Any, name: str, source: str, *, allow_zero: bool = False, integer: bool = False
) -> None:
    kinds = (int,) if integer else (int, float)
    ok = (
        isinstance(value, kinds)
        and not isinstance(value, bool)
        and (value >= 0 if allow_zero else value > 0)
    )
    if not ok:
        bound = ">= 0" if allow_zero else "> 0"
        raise NovaInputError(
            f"must be {'an integer' if integer else 'a number'} {bound}, got {value!r}",
            source=source,
            field=name,
        )


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


_Answer = TypeVar("_Answer")


_Cache = TypeVar("_Cache", bound=_VerdictCache)


class _HttpJudge:
    """What every judge behind an HTTP endpoint shares: closing its kept-alive connections."""

    _client: ChatClient
    _lock: threading.Lock
    _counts: dict[str, int]

    def _connect(
        self,
        source: str,
        kind: str,
        prompt_version: str,
        base_url: str,
        model: str,
        *,
        api_key: str | None,
        timeout: float,
        max_retries: int,
        backoff: float,
        temperature: float,
        max_workers: int,
        max_tokens: int | None,
    ) -> None:
        """Check the endpoint settings, open the judge's one client, set what reports show."""
        client_settings = _judge_client_settings(
            source, base_url, model, timeout, max_retries, backoff, temperature, max_tokens
        )
        _check_positive(max_workers, "max_workers", source, integer=True)
        self._client = ChatClient(
            _v1_url(base_url),
            model,
            api_key=api_key,
            max_concurrency=max_workers,
            **client_settings,
        )
        self.endpoint = self._client.url  # without credentials
        self.model = model
        self.max_retries = max_retries
        self.temperature = float(temperature)
        self.max_tokens = max_tokens
        self.identity = f"{kind}:{model}:temperature={self.temperature:g}"
        self.prompt_version = prompt_version

    def _keep_state(
        self,
        max_workers: int,
        cache_dir: str | os.PathLike[str] | None,
        cache_type: type[_Cache],
    ) -> _Cache | None:
        """Set the batch bound, the lock and the counters; open the verdict cache (None: none)."""
        self.max_workers = max_workers
        self.cache_dir = Path(cache_dir).expanduser() if cache_dir is not None else None
        self._lock = threading.Lock()
        self._counts = {"calls": 0, "cache_hits": 0, "requests": 0, "retries": 0, "failures": 0}
        return cache_type(cache_dir) if cache_dir is not None else None

    def _count(self, name: str, amount: int = 1) -> None:
        with self._lock:
            self._counts[name] += amount

    @property
    def cache_folder(self) -> str | None:
        """The verdict cache folder as reports show it (``~`` for the home folder; None: none)."""
        return shown_cache_folder(getattr(self, "cache_dir", None))

    def _count_attempts(self, attempts: int, *, asked_before: bool) -> None:
        """Count one client call: each attempt is a request; all but an answer's first retry."""
        self._count("requests", attempts)
        self._count("retries", attempts - (0 if asked_before else 1))

    def _ask_until_read(
        self,
        messages: list[dict[str, str]],
        read: Callable[[str], _Answer | None],
        *,
        what: str,
        unreadable: str,
        error_fields: dict[str, Any],
        shown_reply: Callable[[str], str] = repr,
    ) -> _Answer:
        """Ask until ``read`` accepts a reply; ``max_retries`` retries cover every cause.

        Transport retries (the client's) and unreadable replies (asked again here) draw on one
        budget of ``max_retries + 1`` attempts, all counted.

        Raises:
            JudgeError: "no <what> after N attempts", naming the cause or the last reply, with
                ``error_fields`` (case, reference, candidate) attached.
        """
        budget = self.max_retries + 1
        used = 0
        while True:
            try:
                reply = self._client.chat(
                    messages,
                    temperature=self.temperature,
                    max_tokens=self.max_tokens,
                    max_retries=budget - used - 1,
                )
            except ChatClientError as error:
                self._count_attempts(error.attempts, asked_before=used > 0)
                used += error.attempts
                problem = error.cause
                if error.kind == "reply":
                    problem = f"malformed response body: {problem}"
                raise JudgeError(
                    f"no {what} after {used} attempt{'s' if used != 1 else ''} "
                    f"({problem}) from {self.endpoint}",
                    reply=error.body,
                    **error_fields,
                ) from error
            self._count_attempts(reply.attempts, asked_before=used > 0)
            used += reply.attempts
            answer = read(reply.text)
            if answer is not None:
                return answer
            if used >= budget:
                raise JudgeError(
                    f"no {what} after {used} attempt{'s' if used != 1 else ''} "
                    f"({unreadable}); last reply: {shown_reply(reply.text)}",
                    reply=reply.text,
                    **error_fields,
                )
            self._client.wait_before_retry(used - 1)

    def close(self) -> None:
        """Close the judge's kept-alive connections (it stays usable; a call reconnects).

        Example:
            >>> OpenAICaseJudge("http://127.0.0.1:9", "judge-model").close()
        """
        self._client.close()

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class _CachingJudge:
    """Shared machinery: cache lookups, counters and bounded-concurrency batches."""

    identity: str
    prompt_version: str

    def __init__(
        self, cache_dir: str | os.PathLike[str] | None, max_workers: int, source: str
    ) -> None:
        _check_positive(max_workers, "max_workers", source, integer=True)
        self.max_workers = max_workers
        self.cache_dir = Path(cache_dir).expanduser() if cache_dir is not None else None
        self._cache = _VerdictCache(cache_dir) if cache_dir is not None else None
        self._lock = threading.Lock()
        self._counts = {
            "calls": 0,
            "cache_hits": 0,
            "cache_misses": 0,
            "requests": 0,
            "retries": 0,
            "failures": 0,
        }
        self.last_batch: JudgeBatchSummary | None = None

    @property
    def cache_folder(self) -> str | None:
        """The verdict cache folder as reports show it (``~`` for the home folder; None: none)."""
        return shown_cache_folder(self.cache_dir)

    def _count(self, name: str, amount: int = 1) -> None:
        with self._lock:
            self._counts[name] += amount

    @property
    def stats(self) -> JudgeStats:
        """A snapshot of the counters (see :class:`JudgeStats`)."""
        with self._lock:
            return JudgeStats(**self._counts)

    def _judge_uncached(self, reference: str, candidate: str, case: str | None) -> bool:
        raise NotImplementedError

    def _key(self, reference: str, candidate: str) -> str:
        return verdict_cache_key(self.identity, self.prompt_version, reference, candidate)

    def _cached(self, reference: str, candidate: str) -> bool | None:
        if self._cache is None:
            return None
        return self._cache.get(self._key(reference, candidate))

    def _judge_and_store(self, reference: str, candidate: str, case: str | None) -> bool:
        try:
            verdict = self._judge_uncached(reference, candidate, case)
        except JudgeError:
            self._count("failures")
            raise
        if not isinstance(verdict, bool):
            self._count("failures")
            raise JudgeError(
                f"the judge returned {type(verdict).__name__}, not a bool",
                case=case,
                reference=reference,
                candidate=candidate,
            )
        if self._cache is not None:
            self._cache.put(
                self._key(reference, candidate),
                verdict,
                {
                    "identity": self.identity,
                    "prompt_version": self.prompt_version,
                    "reference": reference,
                    "candidate": candidate,
                },
            )
        return verdict

    def _check_pair(self, reference: Any, candidate: Any, case: str | None) -> None:
        for name, value in (("reference", reference), ("candidate", candidate)):
            if not isinstance(value, str):
                raise NovaInputError(
                    f"expected a string, got {type(value).__name__}",
                    source="judge",
                    record=case,
                    field=name,
                )

    def __call__(self, reference: str, candidate: str) -> bool:
        """Judge one pair, reading and filling the cache.

        Raises:
            JudgeError: no verdict could be obtained.
        """
        self._check_pair(reference, candidate, None)
        self._count("calls")
        cached = self._cached(reference, candidate)
        if cached is not None:
            self._count("cache_hits")
            return cached
        self._count("cache_misses")
        return self._judge_and_store(reference, candidate, None)

    def match_many(
        self,
        pairs: Sequence[tuple[str, str]],
        *,
        labels: Sequence[str] | None = None,
        max_workers: int | None = None,
    ) -> list[bool]:
        """Judge many pairs: cached verdicts first, the rest by at most ``max_workers`` threads.

        Verdicts are cached as they arrive, so a batch interrupted by an error resumes
        where it stopped on the next run. ``last_batch`` summarises the batch.

        Args:
            pairs: ``(reference, candidate)`` pairs.
            labels: where each pair comes from, for error messages (same length as pairs).
            max_workers: concurrency bound for this batch; the judge's default otherwise.

        Returns:
            One verdict per pair, in order.

        Raises:
            JudgeError: a pair got no verdict (the first such error is raised).
            NovaInputError: labels of a different length, a pair that is not two strings.
        """
        batch = [tuple(pair) for pair in pairs]  # tuples of any length; _check_pair vets them
        if labels is not None and len(labels) != len(batch):
            raise NovaInputError(
                f"{len(labels)} labels for {len(batch)} pairs", source="judge", field="labels"
            )
        cases = list(labels) if labels is not None else [f"pair {i}" for i in range(len(batch))]
        workers = self.max_workers if max_workers is None else max_workers
        _check_positive(workers, "max_workers", "judge", integer=True)
        for (reference, candidate), case in zip(batch, cases):
            self._check_pair(reference, candidate, case)
        requests_before = self.stats.requests
        verdicts: list[bool | None] = [None] * len(batch)
        todo: dict[str, list[int]] = {}
        hits = 0
        for i, (reference, candidate) in enumerate(batch):
            self._count("calls")
            cached = self._cached(reference, candidate)
            if cached is not None:
                verdicts[i] = cached
                hits += 1
                continue
            todo.setdefault(self._key(reference, candidate), []).append(i)
        self._count("cache_hits", hits)
        self._count("cache_misses", len(batch) - hits)
        if todo:
            with ThreadPoolExecutor(max_workers=min(workers, len(todo))) as pool:
                # Every pair unpacked into two above, so [0] and [1] are the whole pair.
                futures = {
                    pool.submit(
                        self._judge_and_store,
                        batch[positions[0]][0],
                        batch[positions[0]][1],
                        cases[positions[0]],
                    ): positions
                    for positions in todo.values()
                }
                try:
                    arriving = progress_bar(futures.items(), desc="judging", unit="pair")
                    for future, positions in arriving:
                        verdict = future.result()
                        for i in positions:
                            verdicts[i] = verdict
                except BaseException:
                    for future in futures:
                        future.cancel()
                    raise
        self.last_batch = JudgeBatchSummary(
            len(batch), hits, len(batch) - hits, self.stats.requests - requests_before
        )
        return [bool(v) for v in verdicts]


class CachedJudge(_CachingJudge):
    """Any matcher with an on-disk cache of its verdicts.

    The cache key is a SHA-256 of (judge identity, prompt version, normalised reference,
    normalised candidate); each verdict is one small JSON file in ``cache_dir`` (written
    atomically, safe across threads and processes), so a new instance on the same
    directory reuses every verdict.

    Args:
        judge: a callable ``(reference, candidate) -> bool``.
        cache_dir: directory of the cache (created if missing).
        identity: names the judge in the cache key; defaults to ``judge.identity`` or the
            judge's qualified name. Change it whenever the judge's behaviour changes.
        prompt_version: second part of the key; defaults to ``judge.prompt_version`` or
            ``"none"``.
        max_workers: default concurrency of :meth:`match_many`.

    Raises:
        NovaInputError: ``judge`` is not callable or ``max_workers`` < 1.

    Example:
        >>> import tempfile
        >>> folder = tempfile.mkdtemp()
        >>> judge = CachedJudge(lambda r, c: r.lower() == c.lower(), folder, identity="lower-v1")
        >>> judge("Glioma", "glioma"), judge("Glioma", "glioma"), judge.stats.cache_hits
        (True, True, 1)
        >>> CachedJudge(print, folder, identity="lower-v1")("Glioma", "glioma")  # from the cache
        True
    """

    def __init__(
        self,
        judge: Callable[[str, str], bool],
        cache_dir: str | os.PathLike[str],
        *,
        identity: str | None = None,
        prompt_version: str | None = None,
        max_workers: int = 4,
    ) -> None:
        if not callable(judge):
            raise NovaInputError(
                "the judge must be callable as judge(reference, candidate)",
                source="CachedJudge",
                field="judge",
            )
        super().__init__(cache_dir, max_workers, "CachedJudge")
        self.judge = judge
        default_identity = getattr(judge, "identity", None)
        if not isinstance(default_identity, str):
            default_identity = f"{getattr(judge, '__module__', '')}.{getattr(judge, '__qualname__', type(judge).__qualname__)}"
        self.identity = identity or default_identity
        version = getattr(judge, "prompt_version", None)
        self.prompt_version = prompt_version or (version if isinstance(version, str) else "none")

    @property
    def description(self) -> str:
        """One line for reports."""
        return f"cached judge {self.identity} (prompt {self.prompt_version})"

    def _judge_uncached(self, reference: str, candidate: str, case: str | None) -> bool:
        ask = getattr(self.judge, "ask", None)
        if callable(ask):  # an OpenAIChatJudge: keep the case label in its errors
            return ask(reference, candidate, case=case)
        verdict = self.judge(reference, candidate)
        return bool(verdict) if isinstance(verdict, (bool, np.bool_)) else verdict


class OpenAIChatJudge(_CachingJudge, _HttpJudge):
    """An LLM judge behind an OpenAI-compatible ``/v1/chat/completions`` endpoint.

    Each pair is sent with :func:`build_judge_messages` (our prompt, version
    :data:`JUDGE_PROMPT_VERSION`) and the reply is read with :func:`parse_judge_verdict`.
    The HTTP side is a :class:`novabench.client.ChatClient` and follows its rules: a
    deadline of ``timeout`` seconds per attempt; HTTP 408/409/425/429/5xx, dropped
    connections and deadlines retried, waiting ``backoff * 2**attempt`` seconds (or a longer
    ``Retry-After``, capped at 60 s); other HTTP errors and malformed response bodies fail at
    once. An unreadable verdict is asked again the same way. All attempts of one verdict
    share the budget of ``max_retries + 1``. The API key is sent as a bearer token and never
    written to the cache, to errors or to descriptions.

    Args:
        base_url: server address, e.g. ``"http://localhost:8000"``, ``".../v1"`` or the full
            ``".../v1/chat/completions"``.
        model: model name at the endpoint.
        api_key: bearer token, if the endpoint needs one.
        timeout: seconds for each HTTP attempt, as a whole (a deadline).
        max_retries: retries after the first attempt.
        backoff: base of the exponential wait between attempts, in seconds.
        temperature: sampling temperature (0 for reproducible verdicts).
        cache_dir: directory of the verdict cache; ``None`` for no cache.
        max_workers: default concurrency of :meth:`match_many`, and the most requests this
            judge has in flight at once whatever the number of calling threads.
        max_tokens: reply length limit sent to the endpoint (``None``: not sent).

    Raises:
        NovaInputError: an empty URL or model, or a non-positive timeout/backoff/worker count.

    Example:
        >>> judge = OpenAIChatJudge("http://localhost:8000", "Qwen2.5-72B-Instruct")
        >>> judge.endpoint
        'http://localhost:8000/v1/chat/completions'
        >>> judge.identity
        'openai-chat:Qwen2.5-72B-Instruct:temperature=0'
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout: float = 30.0,
        max_retries: int = 3,
        backoff: float = 1.0,
        temperature: float = 0.0,
        cache_dir: str | os.PathLike[str] | None = None,
        max_workers: int = 4,
        max_tokens: int | None = None,
    ) -> None:
        self._connect(
            "OpenAIChatJudge",
            "openai-chat",
            JUDGE_PROMPT_VERSION,
            base_url,
            model,
            api_key=api_key,
            timeout=timeout,
            max_retries=max_retries,
            backoff=backoff,
            temperature=temperature,
            max_workers=max_workers,
            max_tokens=max_tokens,
        )
        super().__init__(cache_dir, max_workers, "OpenAIChatJudge")
        self.timeout = float(timeout)
        self.backoff = float(backoff)

    @property
    def prompt_sha256(self) -> str:
        """SHA-256 of the system prompt, for reports."""
        return hashlib.sha256(JUDGE_SYSTEM_PROMPT.encode("utf-8")).hexdigest()

    @property
    def description(self) -> str:
        """One line for reports (no API key)."""
        return f"LLM judge {self.model} at {self.endpoint} (prompt {self.prompt_version})"

    def __repr__(self) -> str:
        return f"OpenAIChatJudge({self.endpoint!r}, {self.model!r}, cache_dir={self.cache_dir!r})"

    def ask(self, reference: str, candidate: str, *, case: str | None = None) -> bool:
        """Ask the endpoint for one verdict, without the cache.

        Args:
            reference: the final diagnosis.
            candidate: the proposed diagnosis.
            case: where the pair comes from, for the error message.

        Returns:
            The verdict.

        Raises:
            JudgeError: a non-retryable HTTP error, or no readable reply after all retries.
        """
        return self._ask_until_read(
            build_judge_messages(reference, candidate),
            parse_judge_verdict,
            what="verdict",
            unreadable="unreadable reply",
            error_fields={"case": case, "reference": reference, "candidate": candidate},
        )

    def _judge_uncached(self, reference: str, candidate: str, case: str | None) -> bool:
        return self.ask(reference, candidate, case=case)


# ---------------------------------------------------------------------------------------
# Protocol mode: one call per case, the whole ranked list at once
# ---------------------------------------------------------------------------------------

CASE_JUDGE_PROMPT_VERSION = "nova-case-judge-2"

# The co-authors' procedure (one call per case: its clinical context, the reference and the
# ranked list), in our words (``resources/prompts/diagnosis_case_judge.txt``); its SHA-256 is
# OpenAICaseJudge.prompt_sha256.
CASE_JUDGE_SYSTEM_PROMPT = _prompt_resource("diagnosis_case_judge.txt")


def build_case_judge_messages(
    reference: str, predictions: Sequence[str], context: str | None = None
) -> list[dict[str, str]]:
    """The chat messages sent to the case judge: the reference and the numbered predictions.

    Args:
        reference: the final diagnosis of the case.
        predictions: the model's ranked diagnoses (at most five are expected); a blank item
            is shown as ``(no answer)`` so the numbering keeps the ranks.
        context: the case's clinical context (its clinical history), shown first as a
            ``Case context:`` line; None or blank: no such line.

    Returns:
        A system message with :data:`CASE_JUDGE_SYSTEM_PROMPT` and one user message.

    Example:
        >>> messages = build_case_judge_messages("Glioblastoma", ["Meningioma", "GBM"])
        >>> print(messages[1]["content"])
        Reference diagnosis: Glioblastoma
        Proposed diagnoses:
        1. Meningioma
        2. GBM
        >>> print(build_case_judge_messages("Glioblastoma", ["GBM"], "Headache.")[1]["content"])
        Case context: Headache.
        Reference diagnosis: Glioblastoma
        Proposed diagnoses:
        1. GBM
    """
    lines = []
    shown_context = _case_context(context)
    if shown_context is not None:
        lines.append(f"Case context: {shown_context}")
    lines.append(f"Reference diagnosis: {reference.strip()}")
    lines.append("Proposed diagnoses:")
    for slot, item in enumerate(predictions, start=1):
        lines.append(f"{slot}. {item.strip() or '(no answer)'}")
    return [
        {"role": "system", "content": CASE_JUDGE_SYSTEM_PROMPT},
        {"role": "user", "content": "\n".join(lines)},
    ]


def _case_context(context: str | None) -> str | None:
    """The context as the judge sees it: stripped, with None for none or blank."""
    if context is None or not context.strip():
        return None
    return context.strip()


@dataclass(frozen=True)
class CaseVerdict:
    """The case judge's verdict on one case.

    Attributes:
        top1: the first prediction matches the reference.
        top5: one of the (at most five) predictions matches.
        matched_slot: 1-based number of the first matching prediction, ``None`` for none.
    """

    top1: bool
    top5: bool
    matched_slot: int | None

    @classmethod
    def from_slot(cls, slot: int | None) -> CaseVerdict:
        """The verdict naming ``slot`` (``None``: no match).

        Example:
            >>> CaseVerdict.from_slot(3)
            CaseVerdict(top1=False, top5=True, matched_slot=3)
        """
        return cls(top1=slot == 1, top5=slot is not None and 1 <= slot <= 5, matched_slot=slot)


def parse_case_verdict(text: str | None, n_predictions: int = 5) -> CaseVerdict | None:
    """Read a case judge reply: one JSON object ``{"matched_slot": k or null}``.

    Reasoning blocks (``<think>...</think>``) and code fences are ignored. The slot must be
    an integer in ``1..n_predictions`` (and at most 5) or null; every JSON object carrying
    ``matched_slot`` must agree. Anything else is unreadable.

    Args:
        text: the reply content (``None`` for a missing content).
        n_predictions: how many predictions were shown to the judge.

    Returns:
        The verdict, or ``None`` when the reply is malformed or names a slot out of range.

    Example:
        >>> parse_case_verdict('```json\\n{"matched_slot": 3}\\n```')
        CaseVerdict(top1=False, top5=True, matched_slot=3)
        >>> parse_case_verdict('{"matched_slot": null}')
        CaseVerdict(top1=False, top5=False, matched_slot=None)
        >>> parse_case_verdict('{"matched_slot": 4}', n_predictions=2) is None
        True
        >>> parse_case_verdict("slot two") is None
        True
    """
    if not isinstance(text, str):
        return None
    text = _THINKING.sub(" ", text)
    slots: set[int | None] = set()
    for chunk in _JSON_OBJECT.findall(text):
        try:
            obj = json.loads(chunk)
        except ValueError:
            continue
        if not (isinstance(obj, dict) and "matched_slot" in obj):
            continue
        slot = obj["matched_slot"]
        if slot is not None and (isinstance(slot, bool) or not isinstance(slot, int)):
            return None
        if slot is not None and not 1 <= slot <= min(n_predictions, 5):
            return None
        slots.add(slot)
    if len(slots) != 1:
        return None
    return CaseVerdict.from_slot(slots.pop())


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


@dataclass(frozen=True)
class CaseJudgeStats:
    """Counters of a case judge since it was created.

    Attributes:
        calls: case verdicts asked for.
        cache_hits: verdicts read from the cache.
        requests: HTTP requests sent, retries included.
        retries: requests that repeated a failed or unreadable one.
        failures: cases that got no verdict (a :class:`JudgeError` was raised).
    """

    calls: int = 0
    cache_hits: int = 0
    requests: int = 0
    retries: int = 0
    failures: int = 0


def _v1_url(base_url: str) -> str:
    import urllib.parse

    # The path only: a query string (an API key some hosts take there) stays at the end.
    parts = urllib.parse.urlsplit(base_url.strip())
    path = parts.path.rstrip("/")
    if path.endswith("/chat/completions"):
        path = path[: -len("/chat/completions")]
    elif not path.endswith("/v1"):
        path += "/v1"
    return urllib.parse.urlunsplit(parts._replace(path=path))


def _judge_client_settings(
    source: str,
    base_url: Any,
    model: Any,
    timeout: Any,
    max_retries: Any,
    backoff: Any,
    temperature: Any,
    max_tokens: Any,
) -> dict[str, Any]:
    """Check the settings both judges share; the ChatClient keywords they give."""
    if not isinstance(base_url, str) or not base_url.strip():
        raise NovaInputError("an endpoint URL is needed", source=source, field="base_url")
    if not isinstance(model, str) or not model.strip():
        raise NovaInputError("a model name is needed", source=source, field="model")
    _check_positive(timeout, "timeout", source)
    _check_positive(max_retries, "max_retries", source, allow_zero=True, integer=True)
    _check_positive(backoff, "backoff", source, allow_zero=True)
    _check_positive(temperature, "temperature", source, allow_zero=True)
    if max_tokens is not None:
        _check_positive(max_tokens, "max_tokens", source, integer=True)
    return {"timeout": timeout, "max_retries": max_retries, "backoff": backoff}


def _check_context(context: Any, case: str | None) -> None:
    """A case context is a string or None."""
    if context is not None and not isinstance(context, str):
        raise NovaInputError(
            f"expected a string or None, got {type(context).__name__}",
            source="judge",
            record=case,
            field="context",
        )


class OpenAICaseJudge(_HttpJudge):
    """The protocol-mode judge: one call per case decides its Top-1 and Top-5.

    The case's clinical context (its clinical history, when given), the reference and the
    whole ranked list go to the endpoint in one request (:func:`build_case_judge_messages`,
    prompt :data:`CASE_JUDGE_PROMPT_VERSION`); a None or blank context sends no context
    line. The reply names the first matching slot (:func:`parse_case_verdict`). HTTP retries
    follow :class:`novabench.client.ChatClient`; an unreadable or out-of-range verdict is
    asked again within the same budget of ``max_retries + 1`` attempts. Verdicts are cached
    on disk under a hash of (model, temperature, prompt version, reference, predictions,
    context), so a case judged without its history is judged again with it.

    Args:
        base_url: server address (``.../v1``, the root, or the full completions URL).
        model: model name at the endpoint.
        api_key: bearer token, if needed (never cached or reported).
        timeout: seconds for each HTTP attempt.
        max_retries: retries after the first attempt, per case.
        backoff: base of the exponential wait between attempts, in seconds.
        temperature: sampling temperature.
        cache_dir: directory of the verdict cache; ``None`` for no cache.
        max_workers: most cases judged at once.
        max_tokens: reply length limit sent to the endpoint (``None``: not sent).

    Raises:
        NovaInputError: an empty URL or model, or a non-positive timeout/worker count.

    Example:
        >>> judge = OpenAICaseJudge("http://localhost:8000", "Qwen2.5-72B-Instruct")
        >>> judge.endpoint, judge.prompt_version
        ('http://localhost:8000/v1/chat/completions', 'nova-case-judge-2')
        >>> len(judge.prompt_sha256)
        64
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout: float = 30.0,
        max_retries: int = 3,
        backoff: float = 1.0,
        temperature: float = 0.0,
        cache_dir: str | os.PathLike[str] | None = None,
        max_workers: int = 4,
        max_tokens: int | None = None,
    ) -> None:
        self._connect(
            "OpenAICaseJudge",
            "openai-case",
            CASE_JUDGE_PROMPT_VERSION,
            base_url,
            model,
            api_key=api_key,
            timeout=timeout,
            max_retries=max_retries,
            backoff=backoff,
            temperature=temperature,
            max_workers=max_workers,
            max_tokens=max_tokens,
        )
        self._cache = self._keep_state(max_workers, cache_dir, _CaseVerdictCache)

    @property
    def prompt_sha256(self) -> str:
        """SHA-256 of the system prompt, for reports."""
        return hashlib.sha256(CASE_JUDGE_SYSTEM_PROMPT.encode("utf-8")).hexdigest()

    @property
    def description(self) -> str:
        """One line for reports (no API key)."""
        return (
            f"LLM case judge {self.model} at {self.endpoint} "
            f"(prompt {self.prompt_version}, sha256 {self.prompt_sha256[:12]})"
        )

    @property
    def stats(self) -> CaseJudgeStats:
        """A snapshot of the counters (see :class:`CaseJudgeStats`)."""
        with self._lock:
            return CaseJudgeStats(**self._counts)

    def __repr__(self) -> str:
        return f"OpenAICaseJudge({self.endpoint!r}, {self.model!r}, cache_dir={self.cache_dir!r})"

    def judge_case(
        self,
        reference: str,
        predictions: Sequence[str],
        *,
        case: str | None = None,
        context: str | None = None,
    ) -> CaseVerdict:
        """Top-1 and Top-5 of one case from one verdict (the cache first).

        Args:
            reference: the final diagnosis.
            predictions: the ranked predictions (1 to 5 strings).
            case: where the case comes from, for error messages.
            context: the case's clinical history, sent with the case; None or blank: none.

        Returns:
            The case verdict.

        Raises:
            JudgeError: no readable verdict within the retry budget (counted in ``failures``).
            NovaInputError: a reference, prediction or context that is not a string, or a
                list that is empty or longer than five.
        """
        items = self._check_case(reference, predictions, case)
        _check_context(context, case)
        context = _case_context(context)
        self._count("calls")
        key = case_verdict_cache_key(self.identity, self.prompt_version, reference, items, context)
        if self._cache is not None:
            found, slot = self._cache.get_slot(key)
            if found and (slot is None or 1 <= slot <= len(items)):
                self._count("cache_hits")
                return CaseVerdict.from_slot(slot)
        try:
            verdict = self._ask(reference, items, case, context)
        except JudgeError:
            self._count("failures")
            raise
        if self._cache is not None:
            self._cache.put_slot(
                key,
                verdict.matched_slot,
                {
                    "identity": self.identity,
                    "prompt_version": self.prompt_version,
                    "reference": reference,
                    "predictions": items,
                    "context": context,
                },
            )
        return verdict

    def judge_cases(
        self,
        cases: Sequence[tuple[str, Sequence[str]]],
        *,
        labels: Sequence[str] | None = None,
        contexts: Sequence[str | None] | None = None,
    ) -> list[CaseVerdict]:
        """Judge many cases, at most ``max_workers`` at once, keeping their order.

        Args:
            cases: ``(reference, predictions)`` per case.
            labels: where each case comes from, for error messages.
            contexts: each case's clinical history (None or blank: none); None: no context
                for any case.

        Returns:
            One verdict per case.

        Raises:
            JudgeError: a case got no verdict (the first such error is raised).
            NovaInputError: labels or contexts of a different length, or a malformed case.
        """
        batch = list(cases)
        for name, given in (("labels", labels), ("contexts", contexts)):
            if given is not None and len(given) != len(batch):
                raise NovaInputError(
                    f"{len(given)} {name} for {len(batch)} cases", source="judge", field=name
                )
        names = list(labels) if labels is not None else [f"case {i}" for i in range(len(batch))]
        histories = list(contexts) if contexts is not None else [None] * len(batch)
        for (reference, predictions), name, context in zip(batch, names, histories):
            self._check_case(reference, predictions, name)
            _check_context(context, name)
        if not batch:
            return []
        with ThreadPoolExecutor(max_workers=min(self.max_workers, len(batch))) as pool:
            futures = [
                pool.submit(self.judge_case, reference, predictions, case=name, context=context)
                for (reference, predictions), name, context in zip(batch, names, histories)
            ]
            try:
                return [future.result() for future in futures]
            except BaseException:
                for future in futures:
                    future.cancel()
                raise

    def _check_case(self, reference: Any, predictions: Any, case: str | None) -> list[str]:
        if not isinstance(reference, str):
            raise NovaInputError(
                f"expected a string, got {type(reference).__name__}",
                source="judge",
                record=case,
                field="reference",
            )
        if isinstance(predictions, str) or not isinstance(predictions, Sequence):
            raise NovaInputError(
                "expected a list of predictions", source="judge", record=case, field="predictions"
            )
        items = list(predictions)
        if not 1 <= len(items) <= 5 or not all(isinstance(item, str) for item in items):
            raise NovaInputError(
                f"expected 1 to 5 strings, got {len(items)} items",
                source="judge",
                record=case,
                field="predictions",
            )
        return items

    def _ask(
        self, reference: str, items: list[str], case: str | None, context: str | None
    ) -> CaseVerdict:
        return self._ask_until_read(
            build_case_judge_messages(reference, items, context),
            lambda text: parse_case_verdict(text, len(items)),
            what="verdict",
            unreadable="unreadable or out-of-range reply",
            error_fields={
                "case": case,
                "reference": reference,
                "candidate": f"{len(items)} predictions",
            },
        )
