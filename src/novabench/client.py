"""One client for OpenAI-compatible chat-completions servers (vLLM, TGI, llama.cpp, hosted APIs).

Everything in novabench that talks to a chat model over HTTP goes through
:class:`ChatClient`: the runner's endpoint backend and the LLM judges. Callers pass a
messages list and get the reply text back; the client owns the rules that must not differ
from one caller to the next:

- **Deadline.** ``timeout`` bounds each attempt as a whole (connect, send, status line,
  headers, body), not each socket read: every read is given only the time left, so a
  server that drips a byte now and then cannot keep a request alive past the deadline.
  (Name resolution is left to the operating system and is not bounded.)
- **Retries.** HTTP 408, 409, 425, 429 and 5xx, refused/reset/closed connections (also
  mid-reply) and an exceeded deadline are retried up to ``max_retries`` times. The wait
  before retry ``n`` (0-based) is ``backoff * 2**n`` seconds, no jitter, or the server's
  ``Retry-After`` (delta-seconds or HTTP-date) when that is longer, never more than
  ``max_wait``. Other statuses and malformed replies are not retried: asking again would
  get the same answer.
- **Endpoint-wide failures.** :func:`endpoint_problem` says when a failure is one every
  request to the endpoint would get (unreachable, HTTP 401/403/404), so a caller with many
  requests can stop early instead of trying each one.
- **Concurrency.** At most ``max_concurrency`` requests are in flight at once, whatever
  the number of threads calling :meth:`ChatClient.chat`; a retry waiting out its backoff
  does not hold a slot.
- **Connections.** Each calling thread keeps its HTTP connection alive between requests
  when the server allows it (HTTP/1.1, as vLLM, TGI and hosted APIs do), so a run pays no
  TCP/TLS handshake per request; a kept-alive connection the server closed while idle is
  replaced at once within the same attempt (nothing of a reply had come back).
- **Reply text.** The text is ``choices[0].message.content`` (a string, or a list of text
  parts, joined). Anything else is a :class:`ChatClientError`. JSON must be UTF-8: each
  byte of invalid UTF-8 in the body and each lone UTF-16 surrogate in the content (a
  ``"\\ud800"`` escape without its pair) becomes one U+FFFD, so the text always encodes to
  UTF-8 and can be written to any report or JSONL file; :attr:`ChatReply.replaced` counts
  them, so no change is silent.
- **Secrets.** The API key is sent as a bearer token and never appears in ``repr``, in
  errors or in :meth:`ChatClient.describe`; credentials in the URL are stripped the same way.

Only the standard library is used: importing this module imports no numpy, torch or datasets.

Example:
    >>> client = ChatClient("http://127.0.0.1:8000/v1", "qwen2.5-72b", api_key="sk-secret")
    >>> client.url
    'http://127.0.0.1:8000/v1/chat/completions'
    >>> "sk-secret" in repr(client)
    False
"""

from __future__ import annotations

import email.utils
import http.client
import io
import json
import math
import os
import re
import socket
import ssl
import threading
import time
import urllib.parse
from base64 import b64encode
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, cast

from novabench import checks
from novabench._version import __version__
from novabench.errors import NovaError, NovaInputError

__all__ = [
    "ENDPOINT_WIDE_STATUS",
    "RETRYABLE_STATUS",
    "ChatClient",
    "ChatClientError",
    "ChatClientStats",
    "ChatReply",
    "DataURL",
    "encode_chat_body",
    "endpoint_problem",
    "parse_retry_after",
    "read_chat_reply",
    "retry_delay",
]

_MEDIA_TYPE = re.compile(r"[a-z]+/[a-z0-9.+-]+")
# What a DataURL stands for while the body is encoded: a string no caller sends (it holds
# NUL characters), whose JSON form is then replaced by the URL's own bytes.
_SPLICE_MARK = "\x00novabench-data-url\x00"
_SPLICE_TOKEN = json.dumps(_SPLICE_MARK).encode("ascii")


@dataclass(frozen=True, eq=False)
class DataURL:
    """A file for a chat message, sent as a base64 ``data:`` URL.

    Put it where a message holds the URL string (``{"image_url": {"url": DataURL(...)}}``):
    :class:`ChatClient` writes its base64 straight into the request body instead of passing
    a string of hundreds of kilobytes through the JSON encoder (base64 needs no escaping), so
    a request with an image costs about a third of the CPU. ``str()`` gives the URL.

    Args:
        media_type: e.g. ``"image/png"``.
        data: the file's bytes.

    Example:
        >>> str(DataURL("image/png", b"PNG"))
        'data:image/png;base64,UE5H'
    """

    media_type: str
    data: bytes

    def __post_init__(self) -> None:
        if not isinstance(self.media_type, str) or not _MEDIA_TYPE.fullmatch(self.media_type):
            raise NovaInputError(
                f"not a media type: {self.media_type!r}", source="DataURL", field="media_type"
            )
        if not isinstance(self.data, (bytes, bytearray, memoryview)):
            raise NovaInputError(
                f"expected bytes, got {type(self.data).__name__}", source="DataURL", field="data"
            )

    def to_bytes(self) -> bytes:
        """The URL as ASCII bytes (what goes between the quotes of the JSON body)."""
        return b"data:" + self.media_type.encode("ascii") + b";base64," + b64encode(self.data)

    def __str__(self) -> str:
        return self.to_bytes().decode("ascii")


def encode_chat_body(body: Mapping[str, Any]) -> bytes:
    """``body`` as the UTF-8 JSON a chat request sends, :class:`DataURL` values spliced in.

    Equal to ``json.dumps`` of the same body with each :class:`DataURL` as its string.

    Example:
        >>> encode_chat_body({"url": DataURL("image/png", b"PNG"), "n": 1})
        b'{"url": "data:image/png;base64,UE5H", "n": 1}'
    """
    spliced: list[bytes] = []

    def placeholder(value: Any) -> str:
        if isinstance(value, DataURL):
            spliced.append(value.to_bytes())
            return _SPLICE_MARK
        return _url_string(value)  # refuses anything else, as json.dumps would

    encoded = json.dumps(body, default=placeholder).encode("utf-8")
    if not spliced:
        return encoded
    pieces = encoded.split(_SPLICE_TOKEN)
    if len(pieces) != len(spliced) + 1:  # a caller's own string held the mark: no splicing
        return json.dumps(body, default=_url_string).encode("utf-8")
    joined = [pieces[0]]
    for url, after in zip(spliced, pieces[1:]):
        joined += [b'"', url, b'"', after]
    return b"".join(joined)


def _url_string(value: Any) -> str:
    if isinstance(value, DataURL):
        return str(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


RETRYABLE_STATUS: frozenset[int] = frozenset({408, 409, 425, 429}) | frozenset(range(500, 600))
"""HTTP statuses worth another attempt: timeout, conflict, too early, rate limit, server errors."""

ENDPOINT_WIDE_STATUS: frozenset[int] = frozenset({401, 403, 404})
"""HTTP statuses every request to an endpoint gets alike: bad key, no access, wrong URL or model."""

# What the user can check for each endpoint-wide status.
_STATUS_HINTS = {
    401: "check the API key",
    403: "check the API key and its access",
    404: "check the endpoint URL and the model name",
}

_ERROR_EXCERPT = 300  # characters of an error body kept in messages
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class ChatClientError(NovaError):
    """A chat request that gave no usable reply.

    Args:
        url: the endpoint, without credentials.
        attempts: HTTP attempts made (retries included).
        cause: what went wrong on the last attempt, in a few words.
        kind: ``"http"`` (an error status), ``"timeout"`` (deadline exceeded),
            ``"connection"`` (refused, reset, closed), ``"certificate"`` (TLS verification
            failed; not retried) or ``"reply"`` (a 2xx that is not a readable chat completion).
        status: the HTTP status of the last attempt, if one came back.
        body: an excerpt of the last error body or malformed reply, if any.
        reason: the cause in a user's words when ``cause`` is technical (``"connection
            refused"``); ``cause`` when not given.

    Example:
        >>> error = ChatClientError("http://h/v1/chat/completions", 3, "HTTP 503: busy",
        ...                         kind="http", status=503)
        >>> str(error)
        'POST http://h/v1/chat/completions failed after 3 attempts: HTTP 503: busy'
        >>> error.retryable
        True
    """

    def __init__(
        self,
        url: str,
        attempts: int,
        cause: str,
        *,
        kind: str,
        status: int | None = None,
        body: str | None = None,
        reason: str | None = None,
    ) -> None:
        self.url = url
        self.attempts = attempts
        self.cause = cause
        self.kind = kind
        self.status = status
        self.body = body
        self.reason = reason or cause
        plural = "" if attempts == 1 else "s"
        super().__init__(f"POST {url} failed after {attempts} attempt{plural}: {cause}")

    @property
    def retryable(self) -> bool:
        """Whether the last failure was of a kind the client retries (so retries ran out)."""
        if self.kind == "http":
            return self.status in RETRYABLE_STATUS
        return self.kind in ("timeout", "connection")


def endpoint_problem(error: BaseException | None) -> str | None:
    """Why no request to the endpoint can succeed, when ``error`` is such a failure; else None.

    The failures every request to an endpoint shares, whatever it asks: the server cannot
    be reached (connection refused, reset or closed, no connection within the timeout, an
    unknown host name, a rejected TLS certificate) or it refuses the request itself (HTTP
    401, 403, 404: a bad key, no access, a wrong URL or model name). Callers that send many
    requests stop early on one of these while nothing has succeeded yet, instead of trying
    every request (``nova run``, the keyword judge). A late reply (connected, but no reply
    within the timeout), 429, 5xx and malformed replies can be one request's own and are
    not counted. ``error`` may be a :class:`ChatClientError` or an error raised from one
    (its ``__cause__`` chain is followed).

    Returns:
        One phrase naming the endpoint and the cause, e.g. ``"cannot reach URL: connection
        refused"`` or ``"URL answers HTTP 401: ... (check the API key)"``; None otherwise.

    Example:
        >>> refused = ChatClientError("http://h:9/v1/chat/completions", 4, "connection failed: "
        ...     "ConnectionRefusedError: [Errno 111]", kind="connection",
        ...     reason="connection refused")
        >>> endpoint_problem(refused)
        'cannot reach http://h:9/v1/chat/completions: connection refused'
        >>> endpoint_problem(ChatClientError("http://h/v1/chat/completions", 1, "HTTP 401: no key",
        ...                                  kind="http", status=401))
        'http://h/v1/chat/completions answers HTTP 401: no key (check the API key)'
        >>> endpoint_problem(ChatClientError("u", 4, "HTTP 503: busy", kind="http", status=503))
    """
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, ChatClientError):
            if error.kind in ("connection", "certificate"):
                return f"cannot reach {error.url}: {error.reason}"
            if error.kind == "http" and error.status in ENDPOINT_WIDE_STATUS:
                hint = _STATUS_HINTS[error.status]
                return f"{error.url} answers {error.reason} ({hint})"
            return None
        error = error.__cause__
    return None


def _connection_reason(error: BaseException) -> str:
    """A failed connection in a user's words: refused, reset, closed, unknown host."""
    if isinstance(error, ConnectionRefusedError):
        return "connection refused"
    if isinstance(error, (ConnectionResetError, BrokenPipeError)):
        return "connection reset by the server"
    if isinstance(error, socket.gaierror):
        return f"host name not found ({error.strerror or error})"
    if isinstance(error, http.client.RemoteDisconnected):
        return "the server closed the connection without replying"
    if isinstance(error, http.client.IncompleteRead):
        return "the server closed the connection mid-reply"
    if isinstance(error, ssl.SSLError):
        return f"TLS failed ({error.reason or error})"
    if isinstance(error, OSError) and error.strerror:
        return f"connection failed ({error.strerror})"
    return f"connection failed ({type(error).__name__})"


@dataclass(frozen=True)
class ChatReply:
    """A chat completion's answer.

    Attributes:
        text: ``choices[0].message.content`` (see the module docstring for the text rule).
        finish_reason: ``choices[0].finish_reason`` as the server sent it, or None.
        attempts: HTTP attempts it took (1 when the first one answered).
        replaced: invalid UTF-8 bytes and lone surrogates replaced by U+FFFD in ``text``.
    """

    text: str
    finish_reason: str | None = None
    attempts: int = 1
    replaced: int = 0


@dataclass(frozen=True)
class ChatClientStats:
    """Counters of a client since it was created.

    Attributes:
        requests: HTTP attempts sent, retries included.
        retries: attempts that repeated a failed one.
        failures: :meth:`ChatClient.chat` calls that raised :class:`ChatClientError`.
    """

    requests: int = 0
    retries: int = 0
    failures: int = 0


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header: delta-seconds or an HTTP-date.

    A date in the past means no wait (0.0); an unreadable value is ignored (None).

    Args:
        value: the header value, or None when absent.
        now: the current time for HTTP-dates (the clock when None).

    Example:
        >>> parse_retry_after("7"), parse_retry_after("soon") is None
        (7.0, True)
        >>> now = datetime(2015, 10, 21, 7, 27, 30, tzinfo=timezone.utc)
        >>> parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=now)
        30.0
        >>> parse_retry_after("Wed, 21 Oct 2015 07:00:00 GMT", now=now)
        0.0
    """
    if value is None or not value.strip():
        return None
    text = value.strip()
    if re.fullmatch(r"\d+(\.\d+)?", text):  # RFC 9110 says an integer; decimals are harmless
        seconds = float(text)
    else:
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        seconds = (when - (now or datetime.now(timezone.utc))).total_seconds()
    return max(0.0, seconds) if math.isfinite(seconds) else None


def retry_delay(
    retry: int, *, backoff: float, max_wait: float, retry_after: float | None = None
) -> float:
    """Seconds to wait before retry number ``retry`` (0 for the first retry).

    ``backoff * 2**retry``, or the server's ``Retry-After`` when longer, capped at ``max_wait``.

    Example:
        >>> [retry_delay(n, backoff=0.5, max_wait=60) for n in range(4)]
        [0.5, 1.0, 2.0, 4.0]
        >>> retry_delay(0, backoff=0.5, max_wait=60, retry_after=10.0)
        10.0
        >>> retry_delay(0, backoff=0.5, max_wait=60, retry_after=3600.0)
        60.0
    """
    delay = backoff * 2.0 ** min(retry, 64)  # the bound keeps the float finite
    if retry_after is not None:
        delay = max(delay, retry_after)
    return float(min(delay, max_wait))


def _replace_lone_surrogates(text: str) -> tuple[str, int]:
    return _LONE_SURROGATE.subn("\ufffd", text)


def read_chat_reply(payload: bytes) -> ChatReply:
    """Read a chat-completions response body (see the module docstring for the text rule).

    Args:
        payload: the raw HTTP body.

    Returns:
        The reply (``attempts`` is left at 1).

    Raises:
        ValueError: the body is not JSON or has no string ``choices[0].message.content``;
            the message starts with ``"malformed reply"`` and says what is missing.

    Example:
        >>> read_chat_reply(b'{"choices": [{"message": {"content": "no target"}}]}').text
        'no target'
        >>> reply = read_chat_reply(b'{"choices": [{"message": {"content": "a\\\\ud800 b\\xff"}}]}')
        >>> reply.text, reply.replaced
        ('a\ufffd b\ufffd', 2)
        >>> read_chat_reply(b'{"choices": []}')
        Traceback (most recent call last):
        ...
        ValueError: malformed reply (no choices[0].message.content): {"choices": []}
    """
    # Invalid bytes become lone surrogates here, so one rule below replaces both kinds.
    decoded = payload.decode("utf-8", errors="surrogateescape")
    try:
        data = json.loads(decoded)
    except ValueError:
        excerpt, _ = _replace_lone_surrogates(decoded[:200])
        raise ValueError(f"malformed reply (not JSON): {excerpt!r}") from None
    try:
        choice = data["choices"][0]
        content = choice["message"]["content"]
    except (KeyError, IndexError, TypeError):
        excerpt, _ = _replace_lone_surrogates(decoded[:200])
        raise ValueError(f"malformed reply (no choices[0].message.content): {excerpt}") from None
    finish_reason = choice.get("finish_reason") if isinstance(choice, dict) else None
    finish = finish_reason if isinstance(finish_reason, str) else None
    if isinstance(content, list):  # content parts: keep the text ones, in order
        if not all(isinstance(part, dict) for part in content):
            raise ValueError("malformed reply (content parts that are not objects)")
        texts = [part.get("text") for part in content if part.get("type") == "text"]
        if not all(isinstance(text, str) for text in texts):
            raise ValueError("malformed reply (a text part without a string 'text')")
        content = "".join(cast(list[str], texts))
    if not isinstance(content, str):
        kind = "null" if content is None else type(content).__name__
        raise ValueError(f"malformed reply (content is {kind}, finish_reason {finish!r})")
    text, replaced = _replace_lone_surrogates(content)
    return ChatReply(text=text, finish_reason=finish, replaced=replaced)


class _DeadlineReader(io.RawIOBase):
    """A socket's bytes where every read gets only the time left before the deadline."""

    def __init__(self, sock: Any, deadline: float) -> None:
        super().__init__()
        self._sock = sock
        # The socket's own raw file holds a reference, so closing the connection while the
        # response is still being read (HTTP/1.0, ``Connection: close``) keeps the socket open.
        self._raw = sock.makefile("rb", buffering=0)
        self._deadline = deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        remaining = self._deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("deadline exceeded")
        self._sock.settimeout(remaining)
        return int(self._raw.readinto(buffer) or 0)

    def close(self) -> None:
        self._raw.close()
        super().close()


class _DeadlineSocket:
    """What ``http.client.HTTPResponse`` needs from a socket: a deadline-bound ``makefile``."""

    def __init__(self, sock: Any, deadline: float) -> None:
        self._sock = sock
        self._deadline = deadline

    def makefile(self, mode: str, *args: Any, **kwargs: Any) -> io.BufferedReader:
        return io.BufferedReader(_DeadlineReader(self._sock, self._deadline))


def _deadline_response(deadline: float) -> Callable[..., http.client.HTTPResponse]:
    """An ``HTTPConnection.response_class`` whose reads all end by ``deadline``."""

    def make(sock: Any, *args: Any, **kwargs: Any) -> http.client.HTTPResponse:
        return http.client.HTTPResponse(cast(Any, _DeadlineSocket(sock, deadline)), *args, **kwargs)

    return make


class _StaleConnection(Exception):
    """A kept-alive connection the server had closed: nothing of a reply came back."""


class _ConnectTimedOut(Exception):
    """No connection within the deadline: the host did not answer at all."""


class _Failure(Exception):
    """One failed attempt, as the retry loop sees it."""

    def __init__(
        self,
        cause: str,
        kind: str,
        *,
        status: int | None = None,
        body: str | None = None,
        retry_after: float | None = None,
        reason: str | None = None,
    ) -> None:
        super().__init__(cause)
        self.cause = cause
        self.kind = kind
        self.status = status
        self.body = body
        self.retry_after = retry_after
        self.reason = reason

    @property
    def retryable(self) -> bool:
        if self.kind == "http":
            return self.status in RETRYABLE_STATUS
        return self.kind in ("timeout", "connection")


class ChatClient:
    """``POST {base_url}/chat/completions`` with deadlines, retries and bounded concurrency.

    See the module docstring for the rules. Thread-safe: one client may serve many threads.

    Args:
        base_url: the API root, e.g. ``http://localhost:8000/v1``; a query string (such as
            ``?api-version=...``) is kept. Credentials in it (``user:pass@``) are sent as
            HTTP basic authentication when there is no API key, and never shown.
        model: the ``model`` field of each request.
        api_key: bearer token; when None, read from the environment variable ``api_key_env``.
        api_key_env: name of an environment variable holding the key (must be set if given
            and ``api_key`` is None).
        timeout: seconds for each attempt as a whole (the deadline).
        max_retries: attempts after the first one.
        backoff: base of the exponential wait between attempts, in seconds.
        max_wait: longest wait between attempts, ``Retry-After`` included.
        max_concurrency: requests in flight at most, across threads.
        sleep: how to wait between attempts (``time.sleep``; tests pass a recorder).

    Raises:
        NovaInputError: a URL that is not http(s), an empty model, a missing environment
            variable, or a setting out of range.

    Example:
        >>> client = ChatClient("http://127.0.0.1:8000/v1", "m", timeout=30, max_retries=2)
        >>> client.describe()["endpoint"], client.stats.requests
        ('http://127.0.0.1:8000/v1/chat/completions', 0)
        >>> client.chat([{"role": "user", "content": "Hello"}]).text  # doctest: +SKIP
        'Hello! How can I help?'
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        api_key_env: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        backoff: float = 1.0,
        max_wait: float = 60.0,
        max_concurrency: int = 4,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        parts = urllib.parse.urlsplit(base_url.strip() if isinstance(base_url, str) else "")
        if parts.scheme not in ("http", "https") or not parts.hostname:
            shown = without_credentials(base_url) if isinstance(base_url, str) else base_url
            raise NovaInputError(
                f"must be an http(s) URL such as http://host:8000/v1, got {shown!r}",
                source="ChatClient",
                field="base_url",
            )
        if not isinstance(model, str) or not model.strip():
            raise NovaInputError("a model name is needed", source="ChatClient", field="model")
        checks.bounded_number(timeout, minimum=0, strict=True, source="ChatClient", field="timeout")
        checks.bounded_number(
            max_retries, minimum=0, integer=True, source="ChatClient", field="max_retries"
        )
        checks.bounded_number(backoff, minimum=0, source="ChatClient", field="backoff")
        checks.bounded_number(max_wait, minimum=0, source="ChatClient", field="max_wait")
        checks.bounded_number(
            max_concurrency, minimum=1, integer=True, source="ChatClient", field="max_concurrency"
        )
        if api_key is None and api_key_env:
            api_key = api_key_from_environment(api_key_env, field="api_key_env")
        try:
            port = parts.port
        except ValueError as error:
            raise NovaInputError(str(error), source="ChatClient", field="base_url") from None
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = port
        path = parts.path.rstrip("/") + "/chat/completions"
        self._target = path + (f"?{parts.query}" if parts.query else "")
        self.url = without_credentials(
            urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))
        )
        self.model = model
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self.backoff = float(backoff)
        self.max_wait = float(max_wait)
        self.max_concurrency = max_concurrency
        self._secrets = [secret for secret in (api_key, *url_credentials(base_url)) if secret]
        self._authorization: str | None = None
        if api_key:
            self._authorization = f"Bearer {api_key}"
        elif parts.username is not None:
            user = urllib.parse.unquote(parts.username)
            password = urllib.parse.unquote(parts.password or "")
            token = b64encode(f"{user}:{password}".encode()).decode("ascii")
            self._authorization = f"Basic {token}"
        self._sleep = sleep or time.sleep
        self._slots = threading.BoundedSemaphore(max_concurrency)
        self._local = threading.local()  # each thread's kept-alive connection
        self._kept: set[http.client.HTTPConnection] = set()  # all of them, for close()
        self._lock = threading.Lock()
        self._counts = {"requests": 0, "retries": 0, "failures": 0}

    def __repr__(self) -> str:
        key = "'***'" if self._authorization else None
        return (
            f"ChatClient({self.url!r}, {self.model!r}, api_key={key}, timeout={self.timeout:g}, "
            f"max_retries={self.max_retries}, max_concurrency={self.max_concurrency})"
        )

    @property
    def stats(self) -> ChatClientStats:
        """A snapshot of the counters (see :class:`ChatClientStats`)."""
        with self._lock:
            return ChatClientStats(**self._counts)

    def describe(self) -> dict[str, Any]:
        """Endpoint (without credentials), model and retry settings, for manifests and reports.

        Example:
            >>> ChatClient("http://u:pw@h:1/v1", "m").describe()["endpoint"]
            'http://h:1/v1/chat/completions'
        """
        return {
            "endpoint": self.url,
            "model": self.model,
            "timeout_s": self.timeout,
            "max_retries": self.max_retries,
            "backoff_s": self.backoff,
            "max_wait_s": self.max_wait,
            "max_concurrency": self.max_concurrency,
        }

    def _count(self, name: str) -> None:
        with self._lock:
            self._counts[name] += 1

    def _scrub(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

    def wait_before_retry(self, retry: int, retry_after: float | None = None) -> float:
        """Sleep before retry number ``retry`` (0 first) by the client's rule; return the delay.

        For callers that retry on their own grounds (a judge re-asking after an unreadable
        verdict) and should wait as the client would.

        Example:
            >>> ChatClient("http://h/v1", "m", backoff=0, sleep=print).wait_before_retry(2)
            0.0
            0.0
        """
        delay = retry_delay(
            retry, backoff=self.backoff, max_wait=self.max_wait, retry_after=retry_after
        )
        self._sleep(delay)
        return delay

    def _body(self, messages: Sequence[Mapping[str, Any]], options: Mapping[str, Any]) -> bytes:
        if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence) or not messages:
            raise NovaInputError(
                "expected a non-empty list of chat messages", source="ChatClient", field="messages"
            )
        for index, message in enumerate(messages):
            if (
                not isinstance(message, Mapping)
                or "role" not in message
                or "content" not in message
            ):
                raise NovaInputError(
                    "each message needs 'role' and 'content'",
                    source="ChatClient",
                    record=f"message {index}",
                    field="messages",
                )
        body: dict[str, Any] = {"model": self.model, "messages": list(messages)}
        body.update({name: value for name, value in options.items() if value is not None})
        body["stream"] = False  # the reader expects one JSON document
        return encode_chat_body(body)

    def chat(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        response_format: Mapping[str, Any] | None = None,
        extra_body: Mapping[str, Any] | None = None,
        max_retries: int | None = None,
    ) -> ChatReply:
        """Send one chat request (retrying by the client's rules) and read the reply.

        Args:
            messages: OpenAI chat messages, each with ``role`` and ``content``.
            max_tokens: reply length limit (not sent when None).
            temperature: sampling temperature (not sent when None).
            response_format: e.g. ``{"type": "json_object"}`` for servers that support it.
            extra_body: further request fields (``top_p``, ``seed``, ...); they win over the
                named ones (``stream`` is always false: the reader expects one document).
            max_retries: retries for this call instead of the client's ``max_retries``.

        Returns:
            The reply; ``reply.text`` is the answer.

        Raises:
            ChatClientError: no readable reply (after the retries, for retryable failures).
            NovaInputError: malformed ``messages``.

        Example:
            >>> hello = [{"role": "user", "content": "Say hi"}]
            >>> client.chat(hello, max_tokens=8).text  # doctest: +SKIP
            'Hi!'
        """
        options: dict[str, Any] = {
            "max_tokens": max_tokens,
            "temperature": temperature,
            "response_format": dict(response_format) if response_format else None,
            **dict(extra_body or {}),
        }
        body = self._body(messages, options)
        allowed = self.max_retries if max_retries is None else max_retries
        checks.bounded_number(
            allowed, minimum=0, integer=True, source="ChatClient", field="max_retries"
        )
        attempt = 0
        while True:
            attempt += 1
            self._count("requests")
            if attempt > 1:
                self._count("retries")
            try:
                with self._slots:
                    payload = self._attempt(body)
                try:
                    reply = read_chat_reply(payload)
                except ValueError as error:
                    excerpt = payload[:_ERROR_EXCERPT].decode("utf-8", "replace")
                    raise _Failure(str(error), "reply", status=200, body=excerpt) from None
                return ChatReply(reply.text, reply.finish_reason, attempt, reply.replaced)
            except _Failure as failure:
                if not failure.retryable or attempt > allowed:
                    self._count("failures")
                    body_text = self._scrub(failure.body) if failure.body is not None else None
                    raise ChatClientError(
                        self.url,
                        attempt,
                        self._scrub(failure.cause),
                        kind=failure.kind,
                        status=failure.status,
                        body=body_text,
                        reason=self._scrub(failure.reason) if failure.reason else None,
                    ) from None
                self.wait_before_retry(attempt - 1, failure.retry_after)

    def _connection(self, timeout: float) -> http.client.HTTPConnection:
        if self._https:
            return http.client.HTTPSConnection(
                self._host or "", self._port, timeout=timeout, context=ssl.create_default_context()
            )
        return http.client.HTTPConnection(self._host or "", self._port, timeout=timeout)

    def close(self) -> None:
        """Close every kept-alive connection; call it when no request is in flight.

        The client stays usable: a later request opens a new connection.

        Example:
            >>> ChatClient("http://h/v1", "m").close()
        """
        with self._lock:
            kept, self._kept = self._kept, set()
        for connection in kept:
            connection.close()

    def _exchange(
        self,
        connection: http.client.HTTPConnection,
        body: bytes,
        headers: Mapping[str, str],
        deadline: float,
        reused: bool,
    ) -> tuple[int, bytes, str, float | None, bool]:
        """Send ``body`` and read the whole reply: status, payload, reason, Retry-After, close."""
        if connection.sock is None:
            connection.timeout = max(deadline - time.monotonic(), 1e-3)
            try:
                connection.connect()
            except TimeoutError:  # unlike a slow reply, this is the host, not the request
                raise _ConnectTimedOut() from None
            # http.client sends a large body apart from its headers; without this the
            # body's last segment can wait for a delayed ACK (tens of milliseconds).
            cast(Any, connection.sock).setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock = connection.sock
        sock.settimeout(max(deadline - time.monotonic(), 1e-3))  # sendall: a total bound
        cast(Any, connection).response_class = _deadline_response(deadline)
        try:
            connection.request("POST", self._target, body=body, headers=dict(headers))
            response = connection.getresponse()
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
            if reused:  # the server closed it while idle; the request never got an answer
                raise _StaleConnection() from None
            raise
        payload = response.read()
        retry_after = parse_retry_after(response.getheader("Retry-After"))
        return response.status, payload, response.reason or "", retry_after, response.will_close

    def _attempt(self, body: bytes) -> bytes:
        """One HTTP attempt within ``timeout``; the body of a 2xx, else raises :class:`_Failure`.

        The thread's connection is kept alive between attempts when the server allows it
        (HTTP/1.1), so a run does not pay a TCP (and TLS) handshake per request. A kept-alive
        connection the server has meanwhile closed is replaced once, within the same attempt.
        """
        deadline = time.monotonic() + self.timeout
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": f"novabench/{__version__}",
        }
        if self._authorization:
            headers["Authorization"] = self._authorization
        connection = getattr(self._local, "connection", None)
        self._local.connection = None  # held by this attempt; put back only if reusable
        if connection is not None:
            with self._lock:
                if connection in self._kept:
                    self._kept.discard(connection)
                else:  # closed by close() meanwhile
                    connection = None
        reused = connection is not None
        if connection is None:
            connection = self._connection(self.timeout)
        keep = False
        try:
            try:
                status, payload, reason, retry_after, will_close = self._exchange(
                    connection, body, headers, deadline, reused
                )
            except _StaleConnection:
                connection.close()
                connection = self._connection(self.timeout)
                status, payload, reason, retry_after, will_close = self._exchange(
                    connection, body, headers, deadline, False
                )
            keep = not will_close
        except ssl.SSLCertVerificationError as error:  # retrying cannot fix a certificate
            raise _Failure(f"TLS certificate rejected: {error}", "certificate") from None
        except _ConnectTimedOut:
            raise _Failure(
                f"connection failed: no connection within {self.timeout:g} s",
                "connection",
                reason=f"no connection within {self.timeout:g} s (the host does not answer)",
            ) from None
        except TimeoutError:
            raise _Failure(
                f"timed out: no complete reply within {self.timeout:g} s", "timeout"
            ) from None
        except (OSError, http.client.HTTPException) as error:
            # refused, reset, closed before or during the reply (RemoteDisconnected,
            # IncompleteRead), DNS failures, broken status lines
            detail = str(error) or type(error).__name__
            raise _Failure(
                f"connection failed: {type(error).__name__}: {detail}",
                "connection",
                reason=_connection_reason(error),
            ) from None
        finally:
            if keep:
                self._local.connection = connection
                with self._lock:
                    self._kept.add(connection)
            else:
                connection.close()
        if not 200 <= status < 300:
            excerpt = payload[: _ERROR_EXCERPT * 4].decode("utf-8", "replace").strip()
            excerpt = excerpt[:_ERROR_EXCERPT]
            reason = excerpt or reason
            raise _Failure(
                f"HTTP {status}: {reason}".rstrip(": "),
                "http",
                status=status,
                body=excerpt,
                retry_after=retry_after,
            )
        return payload


# A value shaped like a credential: API keys and tokens of the usual hosts, a bearer token,
# or a long run of letters, digits and _- holding both letters and digits.
SECRET_TOKEN = re.compile(
    r"(?:\b(?:sk|pk|rk|hf|ghp|gho|ghs|glpat|xox[abpr])[-_][A-Za-z0-9_\-]{6,}"
    r"|\bBearer\s+\S+"
    r"|(?=[A-Za-z0-9_\-]*\d)(?=[A-Za-z0-9_\-]*[A-Za-z])\b[A-Za-z0-9_\-]{32,})"
)
_ENVIRONMENT_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def looks_like_secret(text: str) -> bool:
    """Whether ``text`` holds something shaped like an API key or token (never to be shown).

    Example:
        >>> looks_like_secret("sk-live-4f9a8b7c6d"), looks_like_secret("OPENAI_API_KEY")
        (True, False)
    """
    return SECRET_TOKEN.search(text) is not None


def api_key_from_environment(name: str, *, field: str = "api_key_env") -> str:
    """The API key held by the environment variable ``name``.

    Raises:
        NovaInputError: naming ``field`` when the variable is unset or empty, or when
            ``name`` is no variable name but, by its look, the key itself (which the
            message then does not repeat).

    Example:
        >>> api_key_from_environment("sk-live-4f9a8b7c6d", field="--api-key-env")
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: field '--api-key-env': takes the name of an environment variable holding the key (such as OPENAI_API_KEY), not the key itself (the value given is not shown)
    """
    if not _ENVIRONMENT_NAME.fullmatch(name) or looks_like_secret(name):
        raise NovaInputError(
            "takes the name of an environment variable holding the key (such as "
            "OPENAI_API_KEY), not the key itself (the value given is not shown)",
            field=field,
        )
    value = os.environ.get(name)
    if not value:
        raise NovaInputError(f"environment variable {name} is empty or unset", field=field)
    return value


# Query parameters that carry a credential: their values never reach a manifest, a report
# or a message. Names are compared lower-cased with "-" read as "_".
_CREDENTIAL_PARAMETER = re.compile(
    r"(?:^|_)(?:key|apikey|token|secret|password|passwd|pwd|sig|signature|auth|authorization"
    r"|credential|credentials|session|code)$|token|secret|password|apikey|api_key"
)
MASK = "***"


def is_credential_parameter(name: str) -> bool:
    """Whether a URL query parameter named ``name`` holds a credential (API key, token...).

    Example:
        >>> [is_credential_parameter(n) for n in ("api_key", "X-Amz-Signature", "key", "model")]
        [True, True, True, False]
    """
    return bool(_CREDENTIAL_PARAMETER.search(name.strip().lower().replace("-", "_")))


def url_credentials(url: str) -> list[str]:
    """The secrets written in ``url``: its password and its credential query values.

    Example:
        >>> url_credentials("https://user:pw@h/v1?api_key=sk-abc&model=m")
        ['pw', 'sk-abc']
    """
    parts = urllib.parse.urlsplit(url)
    found = [urllib.parse.unquote(parts.password)] if parts.password else []
    for name, value in urllib.parse.parse_qsl(parts.query, keep_blank_values=True):
        if value and is_credential_parameter(name):
            found.append(value)
    return found


def without_credentials(url: str) -> str:
    """``url`` as it may be recorded or shown: no ``user:password@``, credential values masked.

    Query parameters whose names look like credentials (``api_key``, ``key``, ``token``,
    ``access_token``, ``sig``, ``X-Amz-Signature``...) keep their name with the value
    ``***``; every other part of the URL is kept as written.

    Example:
        >>> without_credentials("https://u:pw@api.example.org/v1?api-version=2&api_key=sk-abc")
        'https://api.example.org/v1?api-version=2&api_key=***'
        >>> without_credentials("http://127.0.0.1:8000/v1")
        'http://127.0.0.1:8000/v1'
    """
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:  # not even a URL: shown as given only when it cannot hold a secret
        return url if "@" not in url and "=" not in url else MASK
    netloc = parts.netloc
    if parts.username is not None or parts.password is not None:
        netloc = parts.hostname or ""
        if ":" in netloc:  # an IPv6 literal
            netloc = f"[{netloc}]"
        try:
            port = parts.port
        except ValueError:
            port = None
        if port:
            netloc += f":{port}"
    query = (
        "&".join(_masked_parameter(pair) if pair else pair for pair in parts.query.split("&"))
        if parts.query
        else parts.query
    )
    if netloc == parts.netloc and query == parts.query:
        return url
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _masked_parameter(pair: str) -> str:
    """One ``name=value`` of a query string, the value masked when the name says credential."""
    name, equals, value = pair.partition("=")
    if equals and value and is_credential_parameter(urllib.parse.unquote_plus(name)):
        return f"{name}={MASK}"
    return pair
