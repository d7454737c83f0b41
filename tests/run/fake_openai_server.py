"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for endpoint tests.

Each request's behaviour is chosen by a marker in its prompt text, ``MODE:<name>``; the
server counts attempts per distinct prompt so "fail, then succeed" is deterministic even
with concurrent clients:

- (no marker)      200 with an answer derived from the prompt and the image;
- ``MODE:500-once``  HTTP 500 on the first attempt, then 200;
- ``MODE:429-once``  HTTP 429 (Retry-After: 0) on the first attempt, then 200;
- ``MODE:always-500`` HTTP 500 every time;
- ``MODE:slow``      sleeps ``slow_seconds`` before answering (longer than the client timeout);
- ``MODE:malformed`` 200 with a body that is not a chat completion;
- ``MODE:not-json``  200 with a body that is not JSON;
- ``MODE:barrier``   waits until ``barrier_parties`` requests are in flight together (bounded),
  so a test proves requests really overlap.

The serving loop is bounded: it stops after ``max_requests`` requests or on ``stop()``, and
every wait has a timeout, so a failing test cannot hang.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_MODE = re.compile(r"MODE:([a-z0-9-]+)")


class FakeOpenAIServer:
    """Start with ``with FakeOpenAIServer() as server: ... server.base_url ...``."""

    def __init__(
        self,
        *,
        slow_seconds: float = 1.5,
        barrier_parties: int = 1,
        hold_seconds: float = 0.0,
        max_requests: int = 200,
        barrier_timeout: float = 60.0,
    ) -> None:
        self.slow_seconds = slow_seconds
        self.hold_seconds = hold_seconds
        self.max_requests = max_requests
        self.barrier = threading.Barrier(barrier_parties, timeout=barrier_timeout)
        self.lock = threading.Lock()
        self.attempts: dict[str, int] = {}
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.n_requests = 0
        self._stop = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._server.timeout = 0.1  # handle_request wakes up to check the stop flag
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def _serve(self) -> None:
        while not self._stop.is_set() and self.n_requests < self.max_requests:
            self._server.handle_request()

    def __enter__(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def stop(self) -> None:
        self._stop.set()
        self.barrier.abort()
        self._thread.join(timeout=5)
        self._server.server_close()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def _send(self, code: int, body: bytes, headers: dict[str, str] | None = None) -> None:
                # The request stops counting as in flight before its reply can reach the
                # client: otherwise a client thread that already has its answer and sends
                # the next request is counted as a third concurrent one.
                self._leave()
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    for name, value in (headers or {}).items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout); nothing to do

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length))
                with fake.lock:
                    fake.n_requests += 1
                    fake.bodies.append(body)
                    fake.headers.append(dict(self.headers.items()))
                    fake.in_flight += 1
                    fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
                self._counted = True
                try:
                    self._respond(body)
                finally:
                    self._leave()

            def _leave(self) -> None:
                if getattr(self, "_counted", False):
                    self._counted = False
                    with fake.lock:
                        fake.in_flight -= 1

            def _respond(self, body: dict[str, Any]) -> None:
                if self.path != "/v1/chat/completions":
                    self._send(404, b'{"error": "not found"}')
                    return
                content = body["messages"][0]["content"]
                if isinstance(content, str):
                    text, image_url = content, None
                else:
                    text = "".join(
                        part.get("text", "") for part in content if part["type"] == "text"
                    )
                    urls = [
                        part["image_url"]["url"] for part in content if part["type"] == "image_url"
                    ]
                    image_url = urls[0] if urls else None
                match = _MODE.search(text)
                mode = match.group(1) if match else "ok"
                key = hashlib.sha256((text + (image_url or "")).encode()).hexdigest()
                with fake.lock:
                    attempt = fake.attempts.get(key, 0)
                    fake.attempts[key] = attempt + 1
                if fake.hold_seconds:
                    time.sleep(fake.hold_seconds)
                if mode == "500-once" and attempt == 0 or mode == "always-500":
                    self._send(500, b'{"error": "server overloaded"}')
                    return
                if mode == "429-once" and attempt == 0:
                    self._send(429, b'{"error": "slow down"}', {"Retry-After": "0"})
                    return
                if mode == "slow":
                    time.sleep(fake.slow_seconds)
                if mode == "malformed":
                    self._send(200, b'{"id": "x", "object": "chat.completion", "choices": []}')
                    return
                if mode == "not-json":
                    self._send(200, b"<html>gateway says hello</html>")
                    return
                if mode == "barrier":
                    try:
                        fake.barrier.wait()
                    except threading.BrokenBarrierError:
                        self._send(500, b'{"error": "requests did not overlap"}')
                        return
                has_image = "with image" if image_url else "text only"
                answer = f"answer to {hashlib.sha256(text.encode()).hexdigest()[:8]} ({has_image})"
                reply = {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion",
                    "model": body.get("model"),
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": answer},
                            "finish_reason": "stop",
                        }
                    ],
                }
                self._send(200, json.dumps(reply).encode())

        return Handler
