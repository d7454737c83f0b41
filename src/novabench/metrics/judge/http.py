"""The HTTP side every judge behind an OpenAI-compatible endpoint shares."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from novabench import checks
from novabench.client import ChatClient, ChatClientError
from novabench.errors import NovaInputError
from novabench.metrics.judge.cache import _VerdictCache, cache_endpoint, shown_cache_folder
from novabench.metrics.judge.common import JudgeError

_Answer = TypeVar("_Answer")


@dataclass(frozen=True)
class JudgeEndpoint:
    """Where and how an OpenAI-compatible judge asks: the settings all three judges take.

    One value configures :class:`~novabench.metrics.judge.OpenAIChatJudge`,
    :class:`~novabench.metrics.judge.OpenAICaseJudge` and
    :class:`~novabench.metrics.keyword_judge.OpenAIKeywordJudge` alike; the judge checks
    it when built (a :class:`~novabench.errors.NovaInputError` naming the field).

    Attributes:
        base_url: server address, e.g. ``"http://localhost:8000"``, ``".../v1"`` or the full
            ``".../v1/chat/completions"``.
        model: model name at the endpoint.
        api_key: bearer token, if the endpoint needs one (never cached, reported or shown
            by ``repr``).
        timeout: seconds for each HTTP attempt, as a whole (a deadline); None: the judge's
            default (30 s for verdicts, 60 s for keyword lists, which are longer replies).
        max_retries: retries after the first attempt, per answer.
        backoff: base of the exponential wait between attempts, in seconds.
        temperature: sampling temperature (0 for reproducible answers).
        max_tokens: reply length limit sent to the endpoint (None: not sent).
        max_workers: most answers asked at once.
        cache_dir: folder of the answer cache; None for no cache.

    Example:
        >>> from novabench.metrics.judge import OpenAICaseJudge, OpenAIChatJudge
        >>> endpoint = JudgeEndpoint("http://localhost:8000", "judge-model", api_key="secret")
        >>> "secret" in repr(endpoint)
        False
        >>> OpenAICaseJudge(endpoint).model, OpenAIChatJudge(endpoint).endpoint
        ('judge-model', 'http://localhost:8000/v1/chat/completions')
    """

    base_url: str
    model: str
    api_key: str | None = field(default=None, repr=False)
    timeout: float | None = None
    max_retries: int = 3
    backoff: float = 1.0
    temperature: float = 0.0
    max_tokens: int | None = None
    max_workers: int = 4
    cache_dir: str | os.PathLike[str] | None = None


def _endpoint_of(
    source: str, endpoint: JudgeEndpoint | str, model: str | None, settings: dict[str, Any]
) -> JudgeEndpoint:
    """The judge's settings: ``endpoint`` itself, or built from the older keyword form.

    Raises:
        NovaInputError: a JudgeEndpoint given with a model or keywords besides it.
        TypeError: a keyword that is not a :class:`JudgeEndpoint` field (as for any call).
    """
    if isinstance(endpoint, JudgeEndpoint):
        if model is not None or settings:
            extra = ", ".join(["model"] * (model is not None) + sorted(settings))
            raise NovaInputError(
                f"give a JudgeEndpoint alone, or a URL, a model and keywords ({extra} given "
                "with a JudgeEndpoint)",
                source=source,
                field="endpoint",
            )
        return endpoint
    unknown = sorted(set(settings) - set(JudgeEndpoint.__dataclass_fields__))
    if unknown:
        raise TypeError(f"{source}() got an unexpected keyword argument {unknown[0]!r}")
    return JudgeEndpoint(endpoint, model, **settings)  # type: ignore[arg-type]  # checked later


class _HttpJudge:
    """What every judge behind an HTTP endpoint shares: closing its kept-alive connections."""

    _client: ChatClient
    _lock: threading.Lock
    _counts: dict[str, int]
    #: Each judge's own: the start of its identity, its prompt version, its default timeout.
    _IDENTITY_KIND: ClassVar[str]
    _PROMPT_VERSION: ClassVar[str]
    _DEFAULT_TIMEOUT: ClassVar[float]

    def __init__(
        self, endpoint: JudgeEndpoint | str, model: str | None = None, **settings: Any
    ) -> None:
        """Connect to ``endpoint`` (or the older ``url, model, **settings``), open the cache."""
        source = type(self).__name__
        chosen = _endpoint_of(source, endpoint, model, settings)
        self._connect(
            source,
            self._IDENTITY_KIND,
            self._PROMPT_VERSION,
            chosen,
            default_timeout=self._DEFAULT_TIMEOUT,
        )
        self._cache = self._keep_state(chosen.max_workers, chosen.cache_dir)

    def _connect(
        self,
        source: str,
        kind: str,
        prompt_version: str,
        settings: JudgeEndpoint,
        *,
        default_timeout: float,
    ) -> None:
        """Check the endpoint settings, open the judge's one client, set what reports show."""
        timeout = default_timeout if settings.timeout is None else settings.timeout
        client_settings = _judge_client_settings(
            source,
            settings.base_url,
            settings.model,
            timeout,
            settings.max_retries,
            settings.backoff,
            settings.temperature,
            settings.max_tokens,
        )
        checks.bounded_number(
            settings.max_workers,
            minimum=0,
            strict=True,
            integer=True,
            source=source,
            field="max_workers",
        )
        self._client = ChatClient(
            _v1_url(settings.base_url),
            settings.model,
            api_key=settings.api_key,
            max_concurrency=settings.max_workers,
            **client_settings,
        )
        self.settings = settings
        self.endpoint = self._client.url  # without credentials
        self.model = settings.model
        self.max_retries = settings.max_retries
        self.timeout = float(timeout)
        self.backoff = float(settings.backoff)
        self.temperature = float(settings.temperature)
        self.max_tokens = settings.max_tokens
        # The one place every endpoint judge's cache key comes from: the server is in it, so
        # a verdict is never served to another server under the same model name.
        self.identity = (
            f"{kind}:{settings.model}:temperature={self.temperature:g}"
            f":endpoint={cache_endpoint(self.endpoint)}"
        )
        self.prompt_version = prompt_version

    def _keep_state(
        self, max_workers: int, cache_dir: str | os.PathLike[str] | None
    ) -> _VerdictCache | None:
        """Set the batch bound, the lock and the counters; open the verdict cache (None: none)."""
        self.max_workers = max_workers
        self.cache_dir = Path(cache_dir).expanduser() if cache_dir is not None else None
        self._lock = threading.Lock()
        self._counts = {
            "calls": 0,
            "cache_hits": 0,
            "cache_rejected": 0,
            "requests": 0,
            "retries": 0,
            "failures": 0,
        }
        return _VerdictCache(cache_dir) if cache_dir is not None else None

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
    ) -> tuple[_Answer, str]:
        """Ask until ``read`` accepts a reply; ``max_retries`` retries cover every cause.

        Transport retries (the client's) and unreadable replies (asked again here) draw on one
        budget of ``max_retries + 1`` attempts, all counted.

        Returns:
            The answer and the raw reply it was read from (kept in the cache with it).

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
                return answer, reply.text
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
            >>> from novabench.metrics.judge import OpenAICaseJudge
            >>> OpenAICaseJudge("http://127.0.0.1:9", "judge-model").close()
        """
        self._client.close()

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


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
    checks.bounded_number(timeout, minimum=0, strict=True, source=source, field="timeout")
    checks.bounded_number(max_retries, minimum=0, integer=True, source=source, field="max_retries")
    checks.bounded_number(backoff, minimum=0, source=source, field="backoff")
    checks.bounded_number(temperature, minimum=0, source=source, field="temperature")
    if max_tokens is not None:
        checks.bounded_number(
            max_tokens, minimum=0, strict=True, integer=True, source=source, field="max_tokens"
        )
    return {"timeout": timeout, "max_retries": max_retries, "backoff": backoff}
