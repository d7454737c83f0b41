"""Pair judges: one verdict per (reference, candidate), cached."""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from novabench import checks
from novabench.errors import NovaInputError, for_caller
from novabench.lexicon.diagnoses import normalize_diagnosis
from novabench.metrics.judge.cache import _VerdictCache, shown_cache_folder, verdict_cache_key
from novabench.metrics.judge.common import (
    JudgeBatchSummary,
    JudgeError,
    JudgeStats,
)
from novabench.metrics.judge.http import JudgeEndpoint, _endpoint_of, _HttpJudge
from novabench.metrics.judge.prompts import (
    JUDGE_PROMPT_VERSION,
    JUDGE_SYSTEM_PROMPT,
    build_judge_messages,
)
from novabench.metrics.judge.verdicts import parse_judge_verdict
from novabench.progress import progress_bar


def _stored_verdict(verdict: bool) -> dict[str, bool]:
    """A pair verdict as its cache entry stores it."""
    return {"match": verdict}


class _CachingJudge:
    """Shared machinery: cache lookups, counters and bounded-concurrency batches."""

    identity: str
    prompt_version: str

    def __init__(
        self, cache_dir: str | os.PathLike[str] | None, max_workers: int, source: str
    ) -> None:
        checks.bounded_number(
            max_workers, minimum=0, strict=True, integer=True, source=source, field="max_workers"
        )
        self.max_workers = max_workers
        self.cache_dir = Path(cache_dir).expanduser() if cache_dir is not None else None
        self._cache = _VerdictCache(cache_dir) if cache_dir is not None else None
        self._lock = threading.Lock()
        self._counts = {
            "calls": 0,
            "cache_hits": 0,
            "cache_misses": 0,
            "cache_rejected": 0,
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

    def _judge_uncached(self, reference: str, candidate: str, case: str | None) -> tuple[Any, str]:
        """The verdict and the raw reply it was read from."""
        raise NotImplementedError

    def _key(self, reference: str, candidate: str) -> str:
        return verdict_cache_key(self.identity, self.prompt_version, reference, candidate)

    def _request(self, reference: str, candidate: str) -> dict[str, Any]:
        """What a cached verdict must answer: this judge, its prompt, the normalised pair."""
        prompt_sha256 = getattr(self, "prompt_sha256", None)
        return {
            "judge": self.identity,
            "prompt_version": self.prompt_version,
            "prompt_sha256": prompt_sha256 if isinstance(prompt_sha256, str) else None,
            "reference": normalize_diagnosis(reference),
            "candidate": normalize_diagnosis(candidate),
        }

    def _cached(self, reference: str, candidate: str) -> bool | None:
        if self._cache is None:
            return None
        verdict, rejected = self._cache.get(
            self._key(reference, candidate),
            self._request(reference, candidate),
            parse_judge_verdict,
            _stored_verdict,
        )
        if rejected:
            self._count("cache_rejected")
        return verdict

    def _judge_and_store(self, reference: str, candidate: str, case: str | None) -> bool:
        try:
            verdict, reply = self._judge_uncached(reference, candidate, case)
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
                self._request(reference, candidate),
                reply,
                verdict,
                _stored_verdict(verdict),
                {"asked": {"reference": reference, "candidate": candidate}},
            )
        return verdict

    def _check_pair(self, reference: Any, candidate: Any, case: str | None) -> None:
        for name, value in (("reference", reference), ("candidate", candidate)):
            checks.text(value, source="judge", record=case, field=name, allow_blank=True)

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
        checks.bounded_number(
            workers, minimum=0, strict=True, integer=True, source="judge", field="max_workers"
        )
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
            judge_and_store = for_caller(self._judge_and_store)  # warnings: the user's line
            with ThreadPoolExecutor(max_workers=min(workers, len(todo))) as pool:
                # Every pair unpacked into two above, so [0] and [1] are the whole pair.
                futures = {
                    pool.submit(
                        judge_and_store,
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
        identity: names the judge in the cache key; defaults to ``judge.identity`` (an
            endpoint judge's names its model, temperature and server) or the judge's
            qualified name. Change it whenever the judge's behaviour changes.
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

    @property
    def prompt_sha256(self) -> str | None:
        """The wrapped judge's prompt hash, when it has one (part of what an entry answers)."""
        value = getattr(self.judge, "prompt_sha256", None)
        return value if isinstance(value, str) else None

    def _judge_uncached(self, reference: str, candidate: str, case: str | None) -> tuple[Any, str]:
        ask = getattr(self.judge, "ask_with_reply", None)
        if callable(ask):  # an OpenAIChatJudge: keep its raw reply and case label
            verdict, reply = ask(reference, candidate, case=case)
            return verdict, reply
        verdict = self.judge(reference, candidate)
        if isinstance(verdict, (bool, np.bool_)):
            verdict = bool(verdict)
            # A plain matcher gives no reply text: the verdict word stands for it.
            return verdict, "true" if verdict else "false"
        return verdict, ""


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
        endpoint: a :class:`~novabench.metrics.judge.JudgeEndpoint` (the one signature all
            three OpenAI judges share), or its ``base_url`` followed by ``model`` and any
            of its fields as keywords (the older form, still accepted).
        model: the model name, in the older form only.
        **settings: :class:`~novabench.metrics.judge.JudgeEndpoint` fields, in the older
            form only.

    Raises:
        NovaInputError: an empty URL or model, or a non-positive timeout/backoff/worker count.

    Example:
        >>> judge = OpenAIChatJudge("http://localhost:8000", "Qwen2.5-72B-Instruct")
        >>> judge.endpoint
        'http://localhost:8000/v1/chat/completions'
        >>> judge.identity
        'openai-chat:Qwen2.5-72B-Instruct:temperature=0:endpoint=http://localhost:8000/v1/chat/completions'
    """

    def __init__(
        self, endpoint: JudgeEndpoint | str, model: str | None = None, **settings: Any
    ) -> None:
        chosen = _endpoint_of("OpenAIChatJudge", endpoint, model, settings)
        self._connect(
            "OpenAIChatJudge", "openai-chat", JUDGE_PROMPT_VERSION, chosen, default_timeout=30.0
        )
        super().__init__(chosen.cache_dir, chosen.max_workers, "OpenAIChatJudge")

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
        return self.ask_with_reply(reference, candidate, case=case)[0]

    def ask_with_reply(
        self, reference: str, candidate: str, *, case: str | None = None
    ) -> tuple[bool, str]:
        """:meth:`ask`, also giving the raw reply the verdict was read from.

        Returns:
            The verdict and the reply text (what the cache keeps to read it again).

        Raises:
            JudgeError: as :meth:`ask`.
        """
        return self._ask_until_read(
            build_judge_messages(reference, candidate),
            parse_judge_verdict,
            what="verdict",
            unreadable="unreadable reply",
            error_fields={"case": case, "reference": reference, "candidate": candidate},
        )

    def _judge_uncached(self, reference: str, candidate: str, case: str | None) -> tuple[Any, str]:
        return self.ask_with_reply(reference, candidate, case=case)
