"""Tests of the LLM-judge matchers against a scripted local chat-completions server."""

from __future__ import annotations

import json
import socket
import threading
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Iterator

import pytest

from novabench.errors import NovaInputError
from novabench.metrics.diagnosis import score_diagnosis
from novabench.metrics.judge import (
    JUDGE_PROMPT_VERSION,
    CachedJudge,
    JudgeError,
    OpenAIChatJudge,
    build_judge_messages,
    parse_judge_verdict,
    verdict_cache_key,
)


class ScriptedChatServer:
    """A chat-completions server on 127.0.0.1 whose replies follow a script.

    Each request pops the next action from ``script``; when the script is empty the
    verdict is ``reference.lower() == candidate.lower()`` or a synonym listed in ``same``.
    Actions: ``("verdict", content)``, ``("status", code)``, ``("stall", None)`` (hold the
    request until the test ends, at most 5 s), ``("body", raw_text)``.
    """

    def __init__(self) -> None:
        self.script: deque[tuple[str, Any]] = deque()
        self.same: set[tuple[str, str]] = set()
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.hold_until_in_flight = 0  # >0: hold each request until that many are in flight ...
        self.expected_requests = 0  # ... or until this many have arrived (the last may be alone)
        self.condition = threading.Condition()
        self.release = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:  # noqa: N802 (http.server naming)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.condition:
                    server.requests.append(body)
                    server.headers.append(dict(self.headers))
                    action = server.script.popleft() if server.script else None
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                    server.condition.notify_all()
                    if server.hold_until_in_flight:
                        server.condition.wait_for(
                            lambda: server.in_flight >= server.hold_until_in_flight
                            or 0 < server.expected_requests <= len(server.requests), timeout=5.0)
                self._counted = True
                try:
                    self._answer(body, action)
                finally:
                    self._leave()

            def _leave(self) -> None:
                # Called before a reply is written: once the client has its answer it may send
                # the next request, which must not meet this one still counted in flight.
                if getattr(self, "_counted", False):
                    self._counted = False
                    with server.condition:
                        server.in_flight -= 1

            def _reply(self, code: int, payload: bytes, extra: dict[str, str] | None = None) -> None:
                self._leave()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                for name, value in (extra or {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def _answer(self, body: dict[str, Any], action: tuple[str, Any] | None) -> None:
                if action is None:
                    user = body["messages"][-1]["content"].splitlines()
                    reference = user[0].split(": ", 1)[1]
                    candidate = user[1].split(": ", 1)[1]
                    match = reference.lower() == candidate.lower() or (reference, candidate) in server.same
                    action = ("verdict", json.dumps({"match": match}))
                kind, value = action
                if kind == "stall":
                    server.release.wait(5.0)
                    return
                if kind == "status":
                    self._reply(value, b'{"error": "scripted"}', {"Retry-After": "0"} if value == 429 else None)
                    return
                if kind == "verdict":
                    payload = json.dumps({"id": "x", "object": "chat.completion", "choices": [
                        {"index": 0, "message": {"role": "assistant", "content": value},
                         "finish_reason": "stop"}]}).encode()
                else:  # raw body
                    payload = str(value).encode()
                self._reply(200, payload)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                       daemon=True)

    def __enter__(self) -> ScriptedChatServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        with self.condition:
            self.hold_until_in_flight = 0
            self.condition.notify_all()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5.0)


@pytest.fixture
def server() -> Iterator[ScriptedChatServer]:
    with ScriptedChatServer() as running:
        yield running


def _judge(server: ScriptedChatServer, **options: Any) -> OpenAIChatJudge:
    settings: dict[str, Any] = {"timeout": 5.0, "max_retries": 2, "backoff": 0.0}
    settings.update(options)
    return OpenAIChatJudge(server.url, "judge-model", **settings)


# ---------------------------------------------------------------------------------------
# Prompt and reply parsing
# ---------------------------------------------------------------------------------------


def test_prompt_keeps_the_protocol() -> None:
    system, user = build_judge_messages(" Glioblastoma ", "GBM")
    assert "synonym" in system["content"].lower()
    assert "broader or narrower" in system["content"]
    assert "different disease does not match" in system["content"]
    assert '{"match": true}' in system["content"]
    assert user["content"] == "Reference diagnosis: Glioblastoma\nProposed diagnosis: GBM"


@pytest.mark.parametrize(
    ("reply", "verdict"),
    [
        ('{"match": true}', True),
        ('{"match": false}', False),
        (' {"match": "yes"} ', True),
        ('```json\n{"match": false}\n```', False),
        ('Sure. {"match": true} These are synonyms.', True),
        ('<think>GBM is glioblastoma, so {"match": false} is wrong</think>{"match": true}', True),
        ("Yes", True),
        ("no.", False),
        ("TRUE", True),
        ("Incorrect", False),
        ('{"match": true} {"match": false}', None),  # contradicting objects
        ('{"match": 1}', None),
        ('{"verdict": true}', None),
        ("Yes and no", None),
        ("It depends on the grade", None),
        ("", None),
        (None, None),
    ],
)
def test_parse_judge_verdict(reply: str | None, verdict: bool | None) -> None:
    assert parse_judge_verdict(reply) is verdict


def test_cache_key_separates_judges_prompts_and_pairs_but_not_spelling() -> None:
    key = verdict_cache_key("m", "v1", "Glioma", "GBM")
    assert len(key) == 64 and int(key, 16) >= 0
    assert key == verdict_cache_key("m", "v1", "glioma.", "gbm")
    assert key != verdict_cache_key("other", "v1", "Glioma", "GBM")
    assert key != verdict_cache_key("m", "v2", "Glioma", "GBM")
    assert key != verdict_cache_key("m", "v1", "GBM", "Glioma")


# ---------------------------------------------------------------------------------------
# The HTTP client
# ---------------------------------------------------------------------------------------


def test_correct_verdict_and_request_format(server: ScriptedChatServer) -> None:
    judge = _judge(server, api_key="test-token", temperature=0.0, max_tokens=16)
    server.same.add(("Glioblastoma", "GBM"))
    assert judge("Glioblastoma", "GBM") is True
    assert judge("Glioblastoma", "meningioma") is False
    body = server.requests[0]
    assert body["model"] == "judge-model"
    assert body["temperature"] == 0.0 and body["max_tokens"] == 16
    assert body["messages"] == build_judge_messages("Glioblastoma", "GBM")
    assert server.headers[0]["Authorization"] == "Bearer test-token"
    assert "test-token" not in judge.description + repr(judge)
    assert judge.stats.requests == 2 and judge.stats.retries == 0


@pytest.mark.parametrize(
    ("base_url", "endpoint"),
    [
        ("http://h:8000", "http://h:8000/v1/chat/completions"),
        ("http://h:8000/", "http://h:8000/v1/chat/completions"),
        ("http://h:8000/v1", "http://h:8000/v1/chat/completions"),
        ("https://api.example.org/v1/chat/completions", "https://api.example.org/v1/chat/completions"),
    ],
)
def test_endpoint_forms(base_url: str, endpoint: str) -> None:
    assert OpenAIChatJudge(base_url, "m").endpoint == endpoint


def test_server_error_then_success_is_retried(server: ScriptedChatServer) -> None:
    server.script.extend([("status", 500), ("status", 503)])
    judge = _judge(server)
    assert judge("Glioma", "glioma") is True
    assert len(server.requests) == 3
    assert judge.stats.requests == 3 and judge.stats.retries == 2


def test_rate_limit_then_success_is_retried(server: ScriptedChatServer) -> None:
    server.script.append(("status", 429))
    assert _judge(server)("Glioma", "glioma") is True
    assert len(server.requests) == 2


def test_timeout_is_retried(server: ScriptedChatServer) -> None:
    server.script.append(("stall", None))  # held until the test ends, far beyond the timeout
    judge = _judge(server, timeout=1.0)  # room for the second, normal reply on a loaded machine
    assert judge("Glioma", "glioma") is True
    assert len(server.requests) == 2 and judge.stats.retries == 1


def test_timeouts_on_every_attempt_raise_judge_error(server: ScriptedChatServer) -> None:
    server.script.extend([("stall", None)] * 2)
    judge = _judge(server, timeout=0.2, max_retries=1)
    with pytest.raises(JudgeError, match="no verdict after 2 attempts"):
        judge("Glioma", "glioma")
    assert len(server.requests) == 2


def test_malformed_reply_after_retries_names_the_case(server: ScriptedChatServer) -> None:
    server.script.extend([("verdict", "Probably, depending on grade")] * 3)
    judge = _judge(server, max_retries=2)
    with pytest.raises(JudgeError) as info:
        judge.match_many([("Glioma", "astrocytoma")], labels=["example 4 (case0005), prediction 2"])
    error = info.value
    assert error.case == "example 4 (case0005), prediction 2"
    assert error.reference == "Glioma" and error.candidate == "astrocytoma"
    assert error.reply == "Probably, depending on grade"
    assert "example 4 (case0005), prediction 2" in str(error) and "unreadable reply" in str(error)
    assert len(server.requests) == 3


def test_response_body_that_is_not_chat_json_raises(server: ScriptedChatServer) -> None:
    server.script.extend([("body", "<html>gateway</html>")] * 2)
    with pytest.raises(JudgeError, match="malformed response body"):
        _judge(server, max_retries=1)("Glioma", "glioma")


def test_client_errors_are_not_retried(server: ScriptedChatServer) -> None:
    server.script.append(("status", 401))
    with pytest.raises(JudgeError, match="HTTP 401") as info:
        _judge(server)("Glioma", "glioma")
    assert len(server.requests) == 1
    assert info.value.reply == '{"error": "scripted"}'


def test_refused_connection_is_retried_then_raises() -> None:
    with socket.socket() as probe:  # a port nobody listens on once closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    judge = OpenAIChatJudge(f"http://127.0.0.1:{port}", "m", timeout=2.0, max_retries=2, backoff=0.0)
    with pytest.raises(JudgeError, match="no verdict after 3 attempts"):
        judge("Glioma", "glioma")
    assert judge.stats.requests == 3 and judge.stats.retries == 2


@pytest.mark.parametrize(
    ("option", "value"),
    [("timeout", 0), ("timeout", -1.0), ("max_retries", -1), ("max_retries", 1.5), ("backoff", -0.1),
     ("max_workers", 0), ("temperature", -1.0), ("max_tokens", 0)],
)
def test_options_are_validated(option: str, value: object) -> None:
    with pytest.raises(NovaInputError, match=option):
        OpenAIChatJudge("http://h", "m", **{option: value})


def test_url_and_model_are_required() -> None:
    with pytest.raises(NovaInputError, match="base_url"):
        OpenAIChatJudge("", "m")
    with pytest.raises(NovaInputError, match="model"):
        OpenAIChatJudge("http://h", " ")


# ---------------------------------------------------------------------------------------
# Cache, batches, concurrency, scoring
# ---------------------------------------------------------------------------------------

PREDICTIONS = [["GBM", "meningioma"], ["abscess", "lymphoma", "PCNSL"], ["stroke"]]
REFERENCES = ["Glioblastoma", "Primary CNS lymphoma", "Final diagnosis not found."]
SYNONYMS = {("Glioblastoma", "GBM"), ("Primary CNS lymphoma", "PCNSL")}


def test_scoring_with_the_judge_and_its_cache(server: ScriptedChatServer, tmp_path: Path) -> None:
    server.same |= SYNONYMS
    judge = _judge(server, cache_dir=tmp_path / "cache", max_workers=3)
    first = score_diagnosis(PREDICTIONS, REFERENCES, matcher=judge)
    # case 0 hits at rank 1 (GBM); case 1 hits at rank 3 (PCNSL); case 2 has no reference.
    # top1 = 1/2, top5 = 2/2; five distinct pairs are judged (the placeholder case sends none).
    assert first["top1"] == pytest.approx(0.5) and first["top5"] == pytest.approx(1.0)
    assert first["n_cases"] == 2 and first["n_cases_without_reference"] == 1
    assert first["matcher"] == judge.description
    assert len(server.requests) == 5
    assert judge.last_batch is not None
    assert (judge.last_batch.n_pairs, judge.last_batch.cache_hits, judge.last_batch.judged) == (5, 0, 5)

    second = score_diagnosis(PREDICTIONS, REFERENCES, matcher=judge)
    assert second == first
    assert len(server.requests) == 5  # zero new HTTP calls
    assert (judge.last_batch.cache_hits, judge.last_batch.judged, judge.last_batch.requests) == (5, 0, 0)

    fresh = _judge(server, cache_dir=tmp_path / "cache")  # a new instance on the same directory
    assert score_diagnosis(PREDICTIONS, REFERENCES, matcher=fresh) == first
    assert len(server.requests) == 5
    assert fresh.stats.cache_hits == 5 and fresh.stats.cache_misses == 0 and fresh.stats.requests == 0

    other_model = OpenAIChatJudge(server.url, "another-model", backoff=0.0, cache_dir=tmp_path / "cache")
    score_diagnosis(PREDICTIONS, REFERENCES, matcher=other_model)
    assert len(server.requests) == 10  # the model is part of the cache key


def test_single_calls_use_the_cache_too(server: ScriptedChatServer, tmp_path: Path) -> None:
    judge = _judge(server, cache_dir=tmp_path)
    assert judge("Glioma", "glioma") is True
    assert judge("Glioma.", "GLIOMA") is True  # same normalised pair -> same entry
    assert len(server.requests) == 1
    assert judge.stats == type(judge.stats)(calls=2, cache_hits=1, cache_misses=1, requests=1, retries=0)
    cached = list(tmp_path.rglob("*.json"))
    assert len(cached) == 1
    record = json.loads(cached[0].read_text())
    assert record["match"] is True and record["prompt_version"] == JUDGE_PROMPT_VERSION


def test_corrupt_cache_entry_is_judged_again_with_a_warning(server: ScriptedChatServer, tmp_path: Path) -> None:
    judge = _judge(server, cache_dir=tmp_path)
    judge("Glioma", "glioma")
    (entry,) = tmp_path.rglob("*.json")
    entry.write_text("{not json")
    with pytest.warns(UserWarning, match="unreadable judge cache entry"):
        assert judge("Glioma", "glioma") is True
    assert len(server.requests) == 2
    assert json.loads(entry.read_text())["match"] is True  # repaired


def test_concurrency_bound_is_respected(server: ScriptedChatServer) -> None:
    # Each request is held until two are in flight, so a bound of 2 is reached exactly and
    # a client exceeding it would show a larger maximum. The last request is released on
    # arrival: its partner may already have finished, and holding it alone would run into
    # the client's timeout and a retry (a seventh request) on a loaded machine.
    server.hold_until_in_flight = 2
    server.expected_requests = 6
    judge = _judge(server, max_workers=2)
    pairs = [(f"Disease {i}", f"disease {i}") for i in range(6)]
    assert judge.match_many(pairs) == [True] * 6
    assert server.max_in_flight == 2
    assert len(server.requests) == 6


def test_batch_deduplicates_pairs_with_the_same_key(server: ScriptedChatServer) -> None:
    judge = _judge(server)
    verdicts = judge.match_many([("Glioma", "glioma"), ("glioma", "Glioma."), ("Glioma", "lymphoma")])
    assert verdicts == [True, True, False]
    assert len(server.requests) == 2


def test_batch_rejects_bad_pairs_and_labels(server: ScriptedChatServer) -> None:
    judge = _judge(server)
    with pytest.raises(NovaInputError, match="labels"):
        judge.match_many([("a", "b")], labels=["x", "y"])
    with pytest.raises(NovaInputError) as info:
        judge.match_many([("a", None)], labels=["example 2, prediction 1"])  # type: ignore[list-item]
    assert info.value.record == "example 2, prediction 1" and info.value.field == "candidate"
    assert server.requests == []


def test_judge_error_in_scoring_names_the_case(server: ScriptedChatServer) -> None:
    server.script.extend([("verdict", "maybe")] * 2)
    judge = _judge(server, max_retries=1, max_workers=1)
    rows = [{"case_id": "case0009", "final_diagnosis": "Glioma"}]
    with pytest.raises(JudgeError, match=r"example 0 \(case0009\), prediction 1"):
        score_diagnosis([["astrocytoma"]], rows, matcher=judge)


def test_cached_judge_wraps_any_callable(tmp_path: Path) -> None:
    calls: list[tuple[str, str]] = []

    def lowercase_equal(reference: str, candidate: str) -> bool:
        calls.append((reference, candidate))
        return reference.lower() == candidate.lower()

    judge = CachedJudge(lowercase_equal, tmp_path, identity="lowercase-v1")
    result = score_diagnosis([["glioma", "x"], ["Lymphoma"]], ["Glioma", "lymphoma"], matcher=judge)
    # both cases hit at rank 1 -> top1 = 2/2
    assert result["top1"] == 1.0 and len(calls) == 3
    again = CachedJudge(lowercase_equal, tmp_path, identity="lowercase-v1")
    assert score_diagnosis([["glioma", "x"], ["Lymphoma"]], ["Glioma", "lymphoma"], matcher=again) == {
        **result, "matcher": again.description}
    assert len(calls) == 3 and again.stats.cache_hits == 3
    renamed = CachedJudge(lowercase_equal, tmp_path, identity="lowercase-v2")
    renamed("Glioma", "glioma")
    assert len(calls) == 4  # a new identity does not reuse old verdicts


def test_cached_judge_rejects_non_bool_verdicts_and_non_callables(tmp_path: Path) -> None:
    judge = CachedJudge(lambda reference, candidate: "yes", tmp_path, identity="bad")
    with pytest.raises(JudgeError, match="not a bool"):
        judge("a", "b")
    assert list(tmp_path.rglob("*.json")) == []  # nothing cached
    with pytest.raises(NovaInputError, match="judge"):
        CachedJudge("not callable", tmp_path)  # type: ignore[arg-type]


def test_cached_judge_around_the_http_judge_keeps_case_labels(server: ScriptedChatServer, tmp_path: Path) -> None:
    server.script.extend([("verdict", "unsure")] * 2)
    inner = _judge(server, max_retries=1)
    judge = CachedJudge(inner, tmp_path)
    assert judge.identity == inner.identity and judge.prompt_version == JUDGE_PROMPT_VERSION
    with pytest.raises(JudgeError) as info:
        judge.match_many([("Glioma", "x")], labels=["example 1, prediction 3"])
    assert info.value.case == "example 1, prediction 3"
