"""Fault tests of the one chat-completions client against the scripted local server.

No wall-clock assertions: waits between attempts go through a recording ``sleep``, and
concurrency and deadlines are judged by counts and orderings seen at the server.
"""

from __future__ import annotations

import email.utils
import json
import socket
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from novabench.client import (
    RETRYABLE_STATUS,
    ChatClient,
    ChatClientError,
    endpoint_problem,
    parse_retry_after,
    read_chat_reply,
    retry_delay,
)
from novabench.errors import NovaError, NovaInputError
from tests.fake_openai_server import FakeOpenAIServer, Reply

HELLO = [{"role": "user", "content": "Hello"}]
SECRET = "sk-very-secret-4711"


def client_for(
    server: FakeOpenAIServer, delays: list[float] | None = None, **options: Any
) -> ChatClient:
    settings: dict[str, Any] = {
        "timeout": 60.0,
        "max_retries": 2,
        "backoff": 0.25,
        "max_wait": 30.0,
    }
    settings.update(options)
    sleep = delays.append if delays is not None else (lambda seconds: None)
    return ChatClient(server.base_url, "fake-model", sleep=sleep, **settings)


def test_a_reply_and_the_request_it_answers() -> None:
    with FakeOpenAIServer(script=[Reply(content="Hi there")]) as server:
        client = client_for(server, api_key=SECRET)
        reply = client.chat(
            HELLO,
            max_tokens=8,
            temperature=0.0,
            response_format={"type": "json_object"},
            extra_body={"seed": 3},
        )
    assert (reply.text, reply.finish_reason, reply.attempts, reply.replaced) == (
        "Hi there",
        "stop",
        1,
        0,
    )
    [body] = server.bodies
    assert body == {
        "model": "fake-model",
        "messages": HELLO,
        "seed": 3,
        "max_tokens": 8,
        "temperature": 0.0,
        "response_format": {"type": "json_object"},
        "stream": False,
    }
    assert server.headers[0]["Authorization"] == f"Bearer {SECRET}"
    assert client.stats.requests == 1 and client.stats.retries == 0 and client.stats.failures == 0


def test_options_left_out_are_not_sent() -> None:
    with FakeOpenAIServer() as server:
        client_for(server).chat(HELLO)
    assert set(server.bodies[0]) == {"model", "messages", "stream"}


def test_a_dripping_server_cannot_keep_an_attempt_past_its_deadline() -> None:
    # One byte every 0.5 s never trips a per-read timeout of 0.8 s; the attempt's deadline must.
    with FakeOpenAIServer(
        script=[Reply(content="a reply long enough to drip for a minute", drip=0.5)]
    ) as server:
        client = client_for(server, timeout=0.8, max_retries=0)
        with pytest.raises(ChatClientError) as info:
            client.chat(HELLO)
        [drip] = server.drips
        assert not drip.finished and drip.sent < drip.total  # the client left mid-reply
    error = info.value
    assert error.kind == "timeout" and error.attempts == 1 and error.retryable
    assert "timed out" in str(error) and "0.8 s" in str(error)


def test_a_reply_that_arrives_byte_by_byte_within_the_deadline_is_read_whole() -> None:
    with FakeOpenAIServer(script=[Reply(content="slow but complete", drip=0.001)]) as server:
        assert client_for(server).chat(HELLO).text == "slow but complete"
        assert len(server.drips) == 1  # (whether the server marked it finished yet is a race)


def test_a_stalled_attempt_times_out_and_the_retry_answers() -> None:
    with FakeOpenAIServer(script=[Reply(stall=True), Reply(content="second try")]) as server:
        client = client_for(server, timeout=1.0)
        reply = client.chat(HELLO)
    assert reply.text == "second try" and reply.attempts == 2 and server.n_requests == 2


def test_rate_limit_waits_for_retry_after_in_seconds() -> None:
    delays: list[float] = []
    script = [
        Reply(status=429, headers={"Retry-After": "7"}),
        Reply(status=429, headers={"Retry-After": "120"}),
        Reply(content="ok"),
    ]
    with FakeOpenAIServer(script=script) as server:
        reply = client_for(server, delays, max_wait=30.0).chat(HELLO)
    assert reply.text == "ok" and reply.attempts == 3
    assert delays == [7.0, 30.0]  # the server's wait, then the cap


def test_rate_limit_waits_for_retry_after_as_an_http_date() -> None:
    delays: list[float] = []
    far = email.utils.format_datetime(datetime.now(timezone.utc) + timedelta(days=2), usegmt=True)
    past = email.utils.format_datetime(datetime(2015, 10, 21, tzinfo=timezone.utc), usegmt=True)
    script = [
        Reply(status=429, headers={"Retry-After": far}),
        Reply(status=503, headers={"Retry-After": past}),
        Reply(content="ok"),
    ]
    with FakeOpenAIServer(script=script) as server:
        assert client_for(server, delays, backoff=0.25, max_wait=30.0).chat(HELLO).text == "ok"
    assert delays == [30.0, 0.5]  # capped; a past date leaves the backoff (0.25 * 2**1)


def test_parse_retry_after_forms() -> None:
    now = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
    assert parse_retry_after("0") == 0.0 and parse_retry_after(" 12 ") == 12.0
    assert parse_retry_after("Fri, 02 Jan 2026 03:05:05 GMT", now=now) == 60.0
    assert parse_retry_after("Fri, 02 Jan 2026 03:00:00 GMT", now=now) == 0.0
    for unreadable in (None, "", "-3", "soon", "1e400", "Fri, 99 Foo 2026"):
        assert parse_retry_after(unreadable) is None


def test_retry_delay_is_exponential_deterministic_and_capped() -> None:
    assert [retry_delay(n, backoff=1.0, max_wait=10.0) for n in range(6)] == [1, 2, 4, 8, 10, 10]
    assert retry_delay(10_000, backoff=1.0, max_wait=5.0) == 5.0  # no overflow
    assert retry_delay(1, backoff=1.0, max_wait=10.0, retry_after=0.5) == 2.0  # backoff is a floor


def test_server_errors_then_success() -> None:
    delays: list[float] = []
    script = [Reply(status=500), Reply(status=502), Reply(status=503), Reply(content="finally")]
    with FakeOpenAIServer(script=script) as server:
        client = client_for(server, delays, max_retries=3, backoff=0.25)
        reply = client.chat(HELLO)
    assert reply.text == "finally" and reply.attempts == 4 and server.n_requests == 4
    assert delays == [0.25, 0.5, 1.0]
    assert (client.stats.requests, client.stats.retries, client.stats.failures) == (4, 3, 0)


def test_retries_exhausted_raise_a_named_error() -> None:
    with FakeOpenAIServer(script=[Reply(status=500, body="overloaded")] * 3) as server:
        client = client_for(server, max_retries=2)
        with pytest.raises(ChatClientError) as info:
            client.chat(HELLO)
        assert server.n_requests == 3
    error = info.value
    assert isinstance(error, NovaError)
    assert (error.kind, error.status, error.attempts, error.body) == ("http", 500, 3, "overloaded")
    assert error.retryable and error.url == server.base_url + "/chat/completions"
    assert str(error) == f"POST {error.url} failed after 3 attempts: HTTP 500: overloaded"
    assert (client.stats.requests, client.stats.retries, client.stats.failures) == (3, 2, 1)


@pytest.mark.parametrize("status", [408, 409, 425, 429, 500, 599])
def test_every_retryable_status_is_retried(status: int) -> None:
    assert status in RETRYABLE_STATUS
    with FakeOpenAIServer(script=[Reply(status=status), Reply(content="ok")]) as server:
        assert client_for(server).chat(HELLO).attempts == 2


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_other_statuses_fail_at_once(status: int) -> None:
    with FakeOpenAIServer(script=[Reply(status=status)]) as server:
        with pytest.raises(ChatClientError) as info:
            client_for(server).chat(HELLO)
        assert server.n_requests == 1
    assert info.value.status == status and not info.value.retryable and info.value.attempts == 1


@pytest.mark.parametrize(
    "broken",
    [Reply(hang_up=True), Reply(close_after=0), Reply(close_after=12)],
    ids=["before-status", "after-headers", "mid-body"],
)
def test_a_closed_connection_is_retried(broken: Reply) -> None:
    with FakeOpenAIServer(script=[broken, Reply(content="ok")]) as server:
        reply = client_for(server).chat(HELLO)
    assert reply.text == "ok" and reply.attempts == 2


def test_connections_closed_every_time_end_in_a_connection_error() -> None:
    with FakeOpenAIServer(script=[Reply(close_after=12)] * 2) as server:
        with pytest.raises(ChatClientError) as info:
            client_for(server, max_retries=1).chat(HELLO)
    assert info.value.kind == "connection" and info.value.attempts == 2
    assert "connection failed" in str(info.value)


def test_a_thread_keeps_its_connection_alive_when_the_server_allows_it() -> None:
    with FakeOpenAIServer(keep_alive=True) as server:
        client = client_for(server)
        texts = [client.chat([{"role": "user", "content": f"q{i}"}]).text for i in range(3)]
        assert len(set(texts)) == 3 and len(set(server.peers)) == 1  # one TCP connection
        client.close()  # closes it; the client stays usable on a new one
        assert client.chat(HELLO).text and len(set(server.peers)) == 2
        client.close()
    with FakeOpenAIServer() as server:  # HTTP/1.0: the server closes after each reply
        client = client_for(server)
        for i in range(3):
            client.chat([{"role": "user", "content": f"q{i}"}])
        assert len(set(server.peers)) == 3


def test_a_connection_dropped_while_idle_is_replaced_within_the_same_attempt() -> None:
    script = [Reply(content="first", drop_after=True), Reply(content="second")]
    with FakeOpenAIServer(script=script, keep_alive=True) as server:
        client = client_for(server)
        assert client.chat(HELLO).text == "first"
        reply = client.chat(HELLO)
        assert reply.text == "second" and reply.attempts == 1
        assert client.stats.retries == 0 and len(set(server.peers)) == 2


def test_a_reused_connection_still_has_a_deadline_per_attempt() -> None:
    script = [Reply(content="warm"), Reply(content="a reply dripped for a minute", drip=0.5)]
    with FakeOpenAIServer(script=script, keep_alive=True) as server:
        client = client_for(server, timeout=0.8, max_retries=0)
        assert client.chat(HELLO).text == "warm"
        with pytest.raises(ChatClientError) as info:
            client.chat(HELLO)
        [drip] = server.drips
        assert not drip.finished and drip.sent < drip.total
        assert len(set(server.peers)) == 1  # the drip came on the kept connection
    assert info.value.kind == "timeout"


def test_a_hang_up_on_a_reused_connection_is_a_failure_once_a_fresh_one_hangs_up_too() -> None:
    # The first hang-up looks like an idle drop (replaced at once); the second is real.
    script = [Reply(content="warm"), Reply(hang_up=True), Reply(hang_up=True), Reply(content="ok")]
    with FakeOpenAIServer(script=script, keep_alive=True) as server:
        client = client_for(server)
        client.chat(HELLO)
        reply = client.chat(HELLO)
    assert reply.text == "ok" and reply.attempts == 2 and server.n_requests == 4


def test_a_refused_connection_is_retried_then_named() -> None:
    with socket.socket() as probe:  # a port nobody listens on once closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = ChatClient(f"http://127.0.0.1:{port}/v1", "m", max_retries=1, sleep=lambda s: None)
    with pytest.raises(ChatClientError) as info:
        client.chat(HELLO)
    assert info.value.kind == "connection" and info.value.attempts == 2
    assert "ConnectionRefusedError" in str(info.value)


def test_no_connection_within_the_timeout_is_the_hosts_failure_not_the_requests(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A host that never answers (a firewall dropping packets): connecting times out. Unlike
    # a late reply, every request would get it, so it counts as the endpoint's failure.
    attempts: list[float | None] = []

    def silent_host(address: Any, timeout: float | None = None, *args: Any) -> socket.socket:
        attempts.append(timeout)
        raise TimeoutError("timed out")

    monkeypatch.setattr(socket, "create_connection", silent_host)
    client = ChatClient(
        "http://10.0.0.9:8000/v1", "m", timeout=5, max_retries=1, sleep=lambda s: None
    )
    with pytest.raises(ChatClientError) as info:
        client.chat(HELLO)
    assert info.value.kind == "connection" and info.value.attempts == 2 and len(attempts) == 2
    assert all(timeout is not None and 0 < timeout <= 5 for timeout in attempts)
    assert endpoint_problem(info.value) == (
        "cannot reach http://10.0.0.9:8000/v1/chat/completions: "
        "no connection within 5 s (the host does not answer)"
    )


def test_a_late_reply_is_the_requests_own_failure() -> None:
    with FakeOpenAIServer(script=[Reply(content="late", delay=2.0)]) as server:
        client = client_for(server, timeout=0.3, max_retries=0)
        with pytest.raises(ChatClientError) as info:
            client.chat(HELLO)
    assert info.value.kind == "timeout" and endpoint_problem(info.value) is None


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ("<html>gateway says hello</html>", "not JSON"),
        ('{"choices": [', "not JSON"),
        ('{"choices": []}', "no choices[0].message.content"),
        ('{"choices": [{"text": "completion style"}]}', "no choices[0].message.content"),
        ("[1, 2]", "no choices[0].message.content"),
        ('{"choices": [{"message": {"content": 42}}]}', "content is int"),
        (
            '{"choices": [{"message": {"content": null}, "finish_reason": "length"}]}',
            "content is null, finish_reason 'length'",
        ),
        ('{"choices": [{"message": {"content": [{"type": "text", "text": 3}]}}]}', "text part"),
    ],
)
def test_malformed_replies_are_named_and_not_retried(body: str, words: str) -> None:
    with FakeOpenAIServer(script=[Reply(body=body), Reply(content="never asked")]) as server:
        with pytest.raises(ChatClientError) as info:
            client_for(server).chat(HELLO)
        assert server.n_requests == 1
    error = info.value
    assert error.kind == "reply" and error.status == 200 and not error.retryable
    assert "malformed reply" in str(error) and words in str(error)
    assert error.body == body[:300]


def test_content_parts_are_joined() -> None:
    parts = [
        {"type": "text", "text": "left "},
        {"type": "image_url", "image_url": {"url": "x"}},
        {"type": "text", "text": "right"},
    ]
    body = json.dumps({"choices": [{"message": {"content": parts}}]})
    with FakeOpenAIServer(script=[Reply(body=body)]) as server:
        assert client_for(server).chat(HELLO).text == "left right"


def test_a_lone_surrogate_in_the_content_becomes_a_replacement_character() -> None:
    script = [Reply(content="left \ud800 right \udfff"), Reply(content="smile \U0001f600")]
    with FakeOpenAIServer(script=script) as server:
        client = client_for(server)
        lone, paired = client.chat(HELLO), client.chat(HELLO)
    assert lone.text == "left \ufffd right \ufffd" and lone.replaced == 2
    assert lone.text.encode("utf-8").decode("utf-8") == lone.text  # writable anywhere
    assert paired.text == "smile \U0001f600" and paired.replaced == 0  # a real pair is kept


def test_invalid_utf8_in_the_body_becomes_replacement_characters() -> None:
    raw = b'{"choices": [{"message": {"content": "caf\xe9 \xff\xfe ok"}}]}'
    with FakeOpenAIServer(script=[Reply(body=raw)]) as server:
        reply = client_for(server).chat(HELLO)
    assert reply.text == "caf\ufffd \ufffd\ufffd ok" and reply.replaced == 3
    assert read_chat_reply(raw) == reply.__class__(reply.text, None, 1, 3)


def test_concurrency_bound_is_respected_across_threads() -> None:
    # Every request waits at the server until two wait together, so two in flight is
    # reached; a client letting a third through would show it in max_in_flight.
    n_calls = 6
    script = [Reply(content="ok", barrier=True) for _ in range(n_calls)]
    with FakeOpenAIServer(script=script, barrier_parties=2) as server:
        client = client_for(server, max_concurrency=2, max_retries=0)
        with ThreadPoolExecutor(max_workers=n_calls) as pool:
            replies = list(pool.map(lambda _: client.chat(HELLO), range(n_calls)))
        assert [reply.text for reply in replies] == ["ok"] * n_calls
        assert server.max_in_flight == 2 and server.n_requests == n_calls


def test_one_slot_means_strictly_one_request_at_a_time() -> None:
    with FakeOpenAIServer(hold_seconds=0.01) as server:
        client = client_for(server, max_concurrency=1)
        with ThreadPoolExecutor(max_workers=4) as pool:
            list(pool.map(lambda i: client.chat([{"role": "user", "content": f"q{i}"}]), range(8)))
        assert server.max_in_flight == 1 and server.n_requests == 8


def test_the_api_key_never_shows() -> None:
    echo = f'{{"error": "invalid token Bearer {SECRET}"}}'
    with FakeOpenAIServer(script=[Reply(status=401, body=echo)]) as server:
        client = client_for(server, api_key=SECRET)
        with pytest.raises(ChatClientError) as info:
            client.chat(HELLO)
    error = info.value
    shown = [
        str(error),
        repr(error),
        error.body or "",
        error.cause,
        repr(client),
        json.dumps(client.describe()),
    ]
    assert all(SECRET not in text for text in shown)
    assert "invalid token Bearer ***" in str(error)


def test_url_credentials_become_basic_auth_and_never_show() -> None:
    with FakeOpenAIServer(script=[Reply(status=500, body="pw-in-url hunter2")]) as server:
        url = server.base_url.replace("http://", "http://alice:hunter2@")
        client = ChatClient(url, "m", max_retries=0)
        with pytest.raises(ChatClientError) as info:
            client.chat(HELLO)
    assert server.headers[0]["Authorization"] == "Basic YWxpY2U6aHVudGVyMg=="  # alice:hunter2
    assert all("hunter2" not in text for text in (str(info.value), repr(client), client.url))


def test_the_api_key_can_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NOVA_CLIENT_TEST_KEY", "sk-from-env")
    with FakeOpenAIServer() as server:
        client_for(server, api_key_env="NOVA_CLIENT_TEST_KEY").chat(HELLO)
    assert server.headers[0]["Authorization"] == "Bearer sk-from-env"
    monkeypatch.delenv("NOVA_CLIENT_TEST_KEY")
    with pytest.raises(NovaInputError, match="NOVA_CLIENT_TEST_KEY"):
        ChatClient("http://127.0.0.1:9/v1", "m", api_key_env="NOVA_CLIENT_TEST_KEY")


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"base_url": "localhost:8000"}, "base_url"),
        ({"base_url": "ftp://h/v1"}, "base_url"),
        ({"model": " "}, "model"),
        ({"timeout": 0}, "timeout"),
        ({"timeout": float("inf")}, "timeout"),
        ({"max_retries": -1}, "max_retries"),
        ({"max_retries": 1.5}, "max_retries"),
        ({"backoff": -1}, "backoff"),
        ({"max_wait": -1}, "max_wait"),
        ({"max_concurrency": 0}, "max_concurrency"),
    ],
)
def test_bad_settings_are_refused(options: dict[str, Any], field: str) -> None:
    settings: dict[str, Any] = {"base_url": "http://127.0.0.1:9/v1", "model": "m"}
    settings.update(options)
    with pytest.raises(NovaInputError) as info:
        ChatClient(**settings)
    assert info.value.field == field


@pytest.mark.parametrize("messages", [[], "Hello", [{"content": "no role"}], [("user", "hi")]])
def test_bad_messages_are_refused_before_sending(messages: Any) -> None:
    with FakeOpenAIServer() as server:
        with pytest.raises(NovaInputError, match="messages"):
            client_for(server).chat(messages)
        assert server.n_requests == 0


def test_the_endpoint_keeps_a_query_string() -> None:
    client = ChatClient("https://example.org/openai/v1/?api-version=2024-06-01", "m")
    assert client.url == "https://example.org/openai/v1/chat/completions?api-version=2024-06-01"


def test_importing_the_client_loads_no_heavy_library() -> None:
    code = (
        "import sys, novabench.client; "
        "print([m for m in ('numpy', 'torch', 'datasets', 'PIL') if m in sys.modules])"
    )
    output = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert output.stdout.strip() == "[]"
