"""The one scripted OpenAI-compatible chat-completions server of the test suite (127.0.0.1).

Start it with ``with FakeOpenAIServer() as server: ... server.base_url ...`` (``.../v1``;
``server.root_url`` is the same without ``/v1``). Each request is answered by, in order:

1. the next :class:`Reply` of ``server.script`` (a deque; tests append to it), which can
   set a status with headers (``Retry-After``), a raw body (garbage JSON, invalid UTF-8),
   content with lone surrogates, a delay, a stall, a body dripped one byte at a time, a
   connection closed before or during the reply, or a barrier;
2. else a ``MODE:<name>`` marker in the request's text (convenient when concurrent
   requests must each get their own behaviour, since attempts are counted per prompt):

   - ``MODE:500-once``   HTTP 500 on the first attempt, then 200;
   - ``MODE:429-once``   HTTP 429 (``Retry-After: 0``) on the first attempt, then 200;
   - ``MODE:always-500`` HTTP 500 every time;
   - ``MODE:slow``       sleeps ``slow_seconds`` before answering;
   - ``MODE:malformed``  200 with a body that is not a chat completion;
   - ``MODE:not-json``   200 with a body that is not JSON;
   - ``MODE:barrier``    waits until ``barrier_parties`` requests wait together;

3. else 200 with ``server.answer(body)`` as the content (by default
   ``"answer to <hash of the text> (with image|text only)"``).

The server counts requests in flight (``in_flight``, ``max_in_flight``), completions sent
whole (``n_answered``), and keeps every request body, header set, client port
(``peers``) and query string (``queries``). It speaks HTTP/1.0 (a connection per request)
unless ``keep_alive=True`` (HTTP/1.1, connections reused as vLLM's server does);
``latency(body)`` gives each unscripted request a delay in seconds (seeded latencies for
the kill test and benchmarks); ``record=False`` keeps no bodies (a benchmark sends
hundreds of megabytes). It is bounded: it stops after ``max_requests`` requests, after
``lifetime`` seconds, or on ``stop()``; stalls, delays, drips and barriers all end when it stops, so a failing test
cannot hang.
"""

from __future__ import annotations

import hashlib
import json
import re
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_MODE = re.compile(r"MODE:([a-z0-9-]+)")


@dataclass
class Reply:
    """One scripted reply.

    Attributes:
        content: the assistant content of a 200 chat completion (None: ``server.answer``).
        status: the HTTP status.
        body: a raw body sent instead of a chat completion (str is UTF-8 encoded).
        headers: extra response headers, e.g. ``{"Retry-After": "2"}``.
        delay: seconds to wait before replying.
        stall: hold the request until the server stops, then close without a reply.
        drip: seconds between the body's bytes, sent one at a time after the headers.
        close_after: send the headers and this many body bytes, then close the connection.
        hang_up: close the connection without sending anything.
        drop_after: reply normally, then close the connection without saying so (a kept-alive
            connection the server dropped while idle).
        barrier: wait until ``barrier_parties`` requests wait together before replying.
    """

    content: str | None = None
    status: int = 200
    body: bytes | str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    stall: bool = False
    drip: float | None = None
    close_after: int | None = None
    hang_up: bool = False
    drop_after: bool = False
    barrier: bool = False


@dataclass
class DripRecord:
    """How a dripped reply went: bytes written, of how many, and whether it finished."""

    total: int
    sent: int = 0
    finished: bool = False
    client_gone: bool = False


def chat_completion(content: str | None, model: str | None = "fake-model") -> bytes:
    """A minimal chat-completions body with ``content`` (JSON escapes lone surrogates)."""
    return json.dumps(
        {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
        }
    ).encode()


def request_text(body: dict[str, Any]) -> tuple[str, str | None]:
    """The text of every message of a request, joined, and the first image URL (or None)."""
    texts: list[str] = []
    image_url = None
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
            continue
        for part in content or []:
            if part.get("type") == "text":
                texts.append(part.get("text", ""))
            elif part.get("type") == "image_url" and image_url is None:
                image_url = part["image_url"]["url"]
    return "\n".join(texts), image_url


def default_answer(body: dict[str, Any]) -> str:
    """``"answer to <hash> (with image|text only)"``: distinct per prompt, stable across runs."""
    text, image_url = request_text(body)
    has_image = "with image" if image_url else "text only"
    return f"answer to {hashlib.sha256(text.encode()).hexdigest()[:8]} ({has_image})"


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # 32 clients connecting at once must not be reset (default 5)


class FakeOpenAIServer:
    """A scripted chat-completions server; see the module docstring."""

    def __init__(
        self,
        *,
        script: list[Reply] | None = None,
        answer: Callable[[dict[str, Any]], str] = default_answer,
        slow_seconds: float = 1.5,
        barrier_parties: int = 1,
        hold_seconds: float = 0.0,
        max_requests: int = 200,
        barrier_timeout: float = 30.0,
        lifetime: float = 300.0,
        keep_alive: bool = False,
        latency: Callable[[dict[str, Any]], float] | None = None,
        record: bool = True,
    ) -> None:
        self.script: deque[Reply] = deque(script or [])
        self.answer = answer
        self.slow_seconds = slow_seconds
        self.hold_seconds = hold_seconds
        self.max_requests = max_requests
        self.lifetime = lifetime
        self.keep_alive = keep_alive
        self.latency = latency
        self.record = record  # keep bodies, headers and peers (off for benchmarks)
        self.peers: list[int] = []
        self.n_answered = 0
        self.barrier = threading.Barrier(barrier_parties, timeout=barrier_timeout)
        self.lock = threading.Lock()
        self.attempts: dict[str, int] = {}
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.queries: list[str] = []  # each request's query string (an API key some hosts take)
        self.drips: list[DripRecord] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.n_requests = 0
        self._stop = threading.Event()
        self._server = _Server(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._server.timeout = 0.1  # handle_request wakes up to check the stop conditions
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def root_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def base_url(self) -> str:
        return self.root_url + "/v1"

    def _serve(self) -> None:
        ends = time.monotonic() + self.lifetime
        while (
            not self._stop.is_set()
            and self.n_requests < self.max_requests
            and time.monotonic() < ends
        ):
            self._server.handle_request()

    def __enter__(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def stop(self) -> None:
        self._stop.set()
        self.barrier.abort()
        self._wake_server()
        self._thread.join(timeout=5)
        self._server.server_close()

    def _wake_server(self) -> None:
        # handle_request waits up to its timeout for a connection before looking at the stop
        # conditions; an empty connection ends that wait now (a tenth of a second per test).
        if not self._thread.is_alive():
            return
        try:
            socket.create_connection(self._server.server_address[:2], timeout=1).close()
        except OSError:
            pass  # the serving loop has already ended: nothing to wake

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1" if fake.keep_alive else "HTTP/1.0"
            disable_nagle_algorithm = True  # headers and body go out at once, no 40 ms stall

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def _head(self, code: int, length: int, headers: dict[str, str]) -> None:
                # The request stops counting as in flight before its reply can reach the
                # client: otherwise a client thread that already has its answer and sends
                # the next request is counted as one more concurrent request.
                self._leave()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(length))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()

            def _send(self, code: int, body: bytes, headers: dict[str, str] | None = None) -> None:
                try:
                    self._head(code, len(body), headers or {})
                    self.wfile.write(body)
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    return  # the client gave up (deadline); nothing to do
                if code == 200:
                    with fake.lock:
                        fake.n_answered += 1

            def _hang_up(self) -> None:
                self._leave()
                self.close_connection = True
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

            def do_POST(self) -> None:  # noqa: N802 (http.server naming)
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length))
                with fake.lock:
                    fake.n_requests += 1
                    if fake.record:
                        fake.bodies.append(body)
                        fake.headers.append(dict(self.headers.items()))
                        fake.peers.append(int(self.client_address[1]))
                        fake.queries.append(self.path.partition("?")[2])
                    fake.in_flight += 1
                    fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
                    scripted = fake.script.popleft() if fake.script else None
                self._counted = True
                try:
                    if self.path.partition("?")[0] != "/v1/chat/completions":
                        self._send(404, b'{"error": "not found"}')
                    elif scripted is not None:
                        self._play(scripted, body)
                    else:
                        self._by_mode(body)
                finally:
                    self._leave()

            def _leave(self) -> None:
                if getattr(self, "_counted", False):
                    self._counted = False
                    with fake.lock:
                        fake.in_flight -= 1

            def _play(self, reply: Reply, body: dict[str, Any]) -> None:
                if reply.delay and fake._stop.wait(reply.delay):
                    return self._hang_up()
                if reply.stall:
                    fake._stop.wait(fake.lifetime)
                    return self._hang_up()
                if reply.barrier:
                    try:
                        fake.barrier.wait()
                    except threading.BrokenBarrierError:
                        return self._send(500, b'{"error": "requests did not overlap"}')
                if reply.hang_up:
                    return self._hang_up()
                if reply.body is not None:
                    payload = reply.body.encode() if isinstance(reply.body, str) else reply.body
                elif reply.status != 200:
                    payload = b'{"error": "scripted"}'
                else:
                    content = reply.content if reply.content is not None else fake.answer(body)
                    payload = chat_completion(content, body.get("model"))
                if reply.close_after is not None:
                    try:
                        self._head(reply.status, len(payload), reply.headers)
                        self.wfile.write(payload[: reply.close_after])
                    except (BrokenPipeError, ConnectionResetError):
                        pass
                    return self._hang_up()
                if reply.drip is not None:
                    return self._drip(reply, payload)
                self._send(reply.status, payload, reply.headers)
                if reply.drop_after:
                    self._hang_up()

            def _drip(self, reply: Reply, payload: bytes) -> None:
                record = DripRecord(total=len(payload))
                with fake.lock:
                    fake.drips.append(record)
                try:
                    self._head(reply.status, len(payload), reply.headers)
                    for index in range(len(payload)):
                        if fake._stop.wait(reply.drip):
                            return self._hang_up()
                        self.wfile.write(payload[index : index + 1])
                        record.sent += 1
                    record.finished = True
                except (BrokenPipeError, ConnectionResetError):
                    record.client_gone = True

            def _by_mode(self, body: dict[str, Any]) -> None:
                text, image_url = request_text(body)
                match = _MODE.search(text)
                mode = match.group(1) if match else "ok"
                key = hashlib.sha256((text + (image_url or "")).encode()).hexdigest()
                with fake.lock:
                    attempt = fake.attempts.get(key, 0)
                    fake.attempts[key] = attempt + 1
                if fake.hold_seconds:
                    time.sleep(fake.hold_seconds)
                if fake.latency is not None and fake._stop.wait(fake.latency(body)):
                    return self._hang_up()
                if mode == "500-once" and attempt == 0 or mode == "always-500":
                    return self._send(500, b'{"error": "server overloaded"}')
                if mode == "429-once" and attempt == 0:
                    return self._send(429, b'{"error": "slow down"}', {"Retry-After": "0"})
                if mode == "slow" and fake._stop.wait(fake.slow_seconds):
                    return self._hang_up()
                if mode == "malformed":
                    return self._send(
                        200, b'{"id": "x", "object": "chat.completion", "choices": []}'
                    )
                if mode == "not-json":
                    return self._send(200, b"<html>gateway says hello</html>")
                if mode == "barrier":
                    try:
                        fake.barrier.wait()
                    except threading.BrokenBarrierError:
                        return self._send(500, b'{"error": "requests did not overlap"}')
                self._send(200, chat_completion(fake.answer(body), body.get("model")))

        return Handler
