"""Tests of the LLM-judge matchers against a scripted local chat-completions server."""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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
from tests.fake_openai_server import FakeOpenAIServer, Reply


class JudgeServer(FakeOpenAIServer):
    """The shared fake server answering as a judge when its script is empty.

    The verdict is ``reference.lower() == candidate.lower()`` or a synonym listed in ``same``.
    """

    def __init__(self, **options: Any) -> None:
        super().__init__(answer=self._verdict, **options)
        self.same: set[tuple[str, str]] = set()
        self.url = self.root_url  # the judge adds /v1/chat/completions itself

    @property
    def requests(self) -> list[dict[str, Any]]:
        return self.bodies

    def _verdict(self, body: dict[str, Any]) -> str:
        user = body["messages"][-1]["content"].splitlines()
        reference = user[0].split(": ", 1)[1]
        candidate = user[1].split(": ", 1)[1]
        return json.dumps(
            {"match": reference.lower() == candidate.lower() or (reference, candidate) in self.same}
        )


@pytest.fixture
def server() -> Iterator[JudgeServer]:
    with JudgeServer() as running:
        yield running


def _judge(server: JudgeServer, **options: Any) -> OpenAIChatJudge:
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


def test_correct_verdict_and_request_format(server: JudgeServer) -> None:
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
        (
            "https://api.example.org/v1/chat/completions",
            "https://api.example.org/v1/chat/completions",
        ),
    ],
)
def test_endpoint_forms(base_url: str, endpoint: str) -> None:
    assert OpenAIChatJudge(base_url, "m").endpoint == endpoint


def test_server_error_then_success_is_retried(server: JudgeServer) -> None:
    server.script.extend([Reply(status=500), Reply(status=503)])
    judge = _judge(server)
    assert judge("Glioma", "glioma") is True
    assert len(server.requests) == 3
    assert judge.stats.requests == 3 and judge.stats.retries == 2


def test_rate_limit_then_success_is_retried(server: JudgeServer) -> None:
    server.script.append(Reply(status=429, headers={"Retry-After": "0"}))
    assert _judge(server)("Glioma", "glioma") is True
    assert len(server.requests) == 2


def test_timeout_is_retried(server: JudgeServer) -> None:
    server.script.append(Reply(stall=True))  # held until the test ends, far beyond the timeout
    judge = _judge(server, timeout=1.0)  # room for the second, normal reply on a loaded machine
    assert judge("Glioma", "glioma") is True
    assert len(server.requests) == 2 and judge.stats.retries == 1


def test_timeouts_on_every_attempt_raise_judge_error(server: JudgeServer) -> None:
    server.script.extend([Reply(stall=True)] * 2)
    judge = _judge(server, timeout=0.2, max_retries=1)
    with pytest.raises(JudgeError, match="no verdict after 2 attempts"):
        judge("Glioma", "glioma")
    assert len(server.requests) == 2


def test_malformed_reply_after_retries_names_the_case(server: JudgeServer) -> None:
    server.script.extend([Reply(content="Probably, depending on grade")] * 3)
    judge = _judge(server, max_retries=2)
    with pytest.raises(JudgeError) as info:
        judge.match_many([("Glioma", "astrocytoma")], labels=["example 4 (case0005), prediction 2"])
    error = info.value
    assert error.case == "example 4 (case0005), prediction 2"
    assert error.reference == "Glioma" and error.candidate == "astrocytoma"
    assert error.reply == "Probably, depending on grade"
    assert "example 4 (case0005), prediction 2" in str(error) and "unreadable reply" in str(error)
    assert len(server.requests) == 3
    assert judge.stats.failures == 1 and judge.stats.requests == 3


def test_response_body_that_is_not_chat_json_raises_without_retrying(server: JudgeServer) -> None:
    server.script.extend([Reply(body="<html>gateway</html>")] * 2)
    with pytest.raises(JudgeError, match="malformed response body") as info:
        _judge(server, max_retries=1)("Glioma", "glioma")
    assert len(server.requests) == 1  # asking again would get the same page
    assert info.value.reply == "<html>gateway</html>"


def test_an_unreadable_verdict_is_asked_again_within_the_same_budget(server: JudgeServer) -> None:
    server.script.extend(
        [Reply(status=500), Reply(content="hmm"), Reply(content='{"match": true}')]
    )
    judge = _judge(server, max_retries=2)
    assert judge("Glioma", "astrocytoma") is True
    assert judge.stats.requests == 3 and judge.stats.retries == 2


def test_server_errors_and_unreadable_verdicts_share_one_budget(server: JudgeServer) -> None:
    server.script.extend(
        [
            Reply(status=503),
            Reply(content="hmm"),
            Reply(content="hmm"),
            Reply(content='{"match": true}'),
        ]
    )
    judge = _judge(server, max_retries=2)
    with pytest.raises(JudgeError, match="no verdict after 3 attempts"):
        judge("Glioma", "astrocytoma")
    assert len(server.requests) == 3 and judge.stats.retries == 2


def test_the_api_key_stays_out_of_judge_errors(server: JudgeServer) -> None:
    server.script.append(Reply(status=403, body="key sk-judge-secret is not allowed"))
    judge = _judge(server, api_key="sk-judge-secret")
    with pytest.raises(JudgeError) as info:
        judge("Glioma", "glioma")
    assert "sk-judge-secret" not in str(info.value) + (info.value.reply or "") + repr(judge)
    assert "HTTP 403" in str(info.value)


def test_client_errors_are_not_retried(server: JudgeServer) -> None:
    server.script.append(Reply(status=401))
    with pytest.raises(JudgeError, match="HTTP 401") as info:
        _judge(server)("Glioma", "glioma")
    assert len(server.requests) == 1
    assert info.value.reply == '{"error": "scripted"}'


def test_refused_connection_is_retried_then_raises() -> None:
    with socket.socket() as probe:  # a port nobody listens on once closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    judge = OpenAIChatJudge(
        f"http://127.0.0.1:{port}", "m", timeout=2.0, max_retries=2, backoff=0.0
    )
    with pytest.raises(JudgeError, match="no verdict after 3 attempts"):
        judge("Glioma", "glioma")
    assert judge.stats.requests == 3 and judge.stats.retries == 2


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("timeout", 0),
        ("timeout", -1.0),
        ("max_retries", -1),
        ("max_retries", 1.5),
        ("backoff", -0.1),
        ("max_workers", 0),
        ("temperature", -1.0),
        ("max_tokens", 0),
    ],
)
def test_options_are_validated(option: str, value: object) -> None:
    with pytest.raises(NovaInputError, match=option):
        OpenAIChatJudge("http://h", "m", **{option: value})


@pytest.mark.parametrize("option", ["temperature", "backoff", "timeout"])
def test_infinite_settings_are_refused_by_the_judge_itself(option: str) -> None:
    # An infinite temperature would be sent as the non-JSON token Infinity.
    with pytest.raises(NovaInputError) as error:
        OpenAIChatJudge("http://h", "m", **{option: float("inf")})
    assert (error.value.source, error.value.field) == ("OpenAIChatJudge", option)
    assert "must be a number" in error.value.message and "got inf" in error.value.message


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


def test_scoring_with_the_judge_and_its_cache(server: JudgeServer, tmp_path: Path) -> None:
    server.same |= SYNONYMS
    judge = _judge(server, cache_dir=tmp_path / "cache", max_workers=3)
    first = score_diagnosis(PREDICTIONS, REFERENCES, matcher=judge)
    # case 0 hits at rank 1 (GBM); case 1 hits at rank 3 (PCNSL); case 2 has no reference.
    # top1 = 1/2, top5 = 2/2; five distinct pairs are judged (the placeholder case sends none).
    # A pair judge is not the paper's one call per case: its own keys.
    assert first["top1-pairwise"] == pytest.approx(0.5)
    assert first["top5-pairwise"] == pytest.approx(1.0)
    assert first["n_cases"] == 2 and first["n_cases_without_reference"] == 1
    assert first["matcher"] == judge.description
    assert len(server.requests) == 5
    assert judge.last_batch is not None
    assert (judge.last_batch.n_pairs, judge.last_batch.cache_hits, judge.last_batch.judged) == (
        5,
        0,
        5,
    )

    second = score_diagnosis(PREDICTIONS, REFERENCES, matcher=judge)
    assert second == first
    assert len(server.requests) == 5  # zero new HTTP calls
    assert (judge.last_batch.cache_hits, judge.last_batch.judged, judge.last_batch.requests) == (
        5,
        0,
        0,
    )

    fresh = _judge(server, cache_dir=tmp_path / "cache")  # a new instance on the same directory
    assert score_diagnosis(PREDICTIONS, REFERENCES, matcher=fresh) == first
    assert len(server.requests) == 5
    assert (
        fresh.stats.cache_hits == 5 and fresh.stats.cache_misses == 0 and fresh.stats.requests == 0
    )

    other_model = OpenAIChatJudge(
        server.url, "another-model", backoff=0.0, cache_dir=tmp_path / "cache"
    )
    score_diagnosis(PREDICTIONS, REFERENCES, matcher=other_model)
    assert len(server.requests) == 10  # the model is part of the cache key


def test_single_calls_use_the_cache_too(server: JudgeServer, tmp_path: Path) -> None:
    judge = _judge(server, cache_dir=tmp_path)
    assert judge("Glioma", "glioma") is True
    assert judge("Glioma.", "GLIOMA") is True  # same normalised pair -> same entry
    assert len(server.requests) == 1
    assert judge.stats == type(judge.stats)(
        calls=2, cache_hits=1, cache_misses=1, requests=1, retries=0
    )
    cached = list(tmp_path.rglob("*.json"))
    assert len(cached) == 1
    record = json.loads(cached[0].read_text())
    assert record["answer"] == {"match": True} and record["reply"] == '{"match": true}'
    assert record["request"]["prompt_version"] == JUDGE_PROMPT_VERSION


def test_corrupt_cache_entry_is_judged_again_with_a_warning(
    server: JudgeServer, tmp_path: Path
) -> None:
    judge = _judge(server, cache_dir=tmp_path)
    judge("Glioma", "glioma")
    (entry,) = tmp_path.rglob("*.json")
    entry.write_text("{not json")
    with pytest.warns(UserWarning, match="judge cache entry .* is not JSON"):
        assert judge("Glioma", "glioma") is True
    assert len(server.requests) == 2 and judge.stats.cache_rejected == 1
    assert json.loads(entry.read_text())["answer"] == {"match": True}  # repaired


def test_opening_the_cache_removes_stale_temporaries_of_crashed_writers(
    server: JudgeServer, tmp_path: Path
) -> None:
    judge = _judge(server, cache_dir=tmp_path)
    judge("Glioma", "glioma")
    (entry,) = tmp_path.rglob("*.json")
    stale = entry.parent / f".{entry.name}.k3j_x9.tmp"  # write_text_atomic's naming
    fresh = entry.parent / f".{entry.name}.a1b2c3.tmp"  # a writer busy right now
    foreign = entry.parent / "notes.tmp"
    outside = tmp_path / f".{entry.name}.old.tmp"  # not in a shard folder: not ours to judge
    for path in (stale, fresh, foreign, outside):
        path.write_text("{half a verd")
    two_hours_ago = time.time() - 7200
    for path in (stale, foreign, outside):
        os.utime(path, (two_hours_ago, two_hours_ago))
    reopened = _judge(server, cache_dir=tmp_path)
    assert not stale.exists()
    assert fresh.exists() and foreign.exists() and outside.exists() and entry.exists()
    assert reopened._cache is not None and reopened._cache.removed_stale == 1
    assert reopened("Glioma", "glioma") is True and len(server.requests) == 1  # entry intact


def test_concurrency_bound_is_respected() -> None:
    # Each request waits at the server until two wait together, so a bound of 2 is reached
    # exactly and a client exceeding it would show a larger maximum.
    with JudgeServer(barrier_parties=2, script=[Reply(barrier=True)] * 6) as server:
        judge = _judge(server, max_workers=2, timeout=60.0)
        pairs = [(f"Disease {i}", f"disease {i}") for i in range(6)]
        assert judge.match_many(pairs) == [True] * 6
        assert server.max_in_flight == 2
        assert len(server.requests) == 6


def test_batch_deduplicates_pairs_with_the_same_key(server: JudgeServer) -> None:
    judge = _judge(server)
    verdicts = judge.match_many(
        [("Glioma", "glioma"), ("glioma", "Glioma."), ("Glioma", "lymphoma")]
    )
    assert verdicts == [True, True, False]
    assert len(server.requests) == 2


def test_batch_rejects_bad_pairs_and_labels(server: JudgeServer) -> None:
    judge = _judge(server)
    with pytest.raises(NovaInputError, match="labels"):
        judge.match_many([("a", "b")], labels=["x", "y"])
    with pytest.raises(NovaInputError) as info:
        judge.match_many([("a", None)], labels=["example 2, prediction 1"])  # type: ignore[list-item]
    assert info.value.record == "example 2, prediction 1" and info.value.field == "candidate"
    assert server.requests == []


def test_judge_error_in_scoring_names_the_case(server: JudgeServer) -> None:
    server.script.extend([Reply(content="maybe")] * 2)
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
    assert result["top1-pairwise"] == 1.0 and len(calls) == 3
    again = CachedJudge(lowercase_equal, tmp_path, identity="lowercase-v1")
    assert score_diagnosis(
        [["glioma", "x"], ["Lymphoma"]], ["Glioma", "lymphoma"], matcher=again
    ) == {**result, "matcher": again.description}
    assert len(calls) == 3 and again.stats.cache_hits == 3
    renamed = CachedJudge(lowercase_equal, tmp_path, identity="lowercase-v2")
    renamed("Glioma", "glioma")
    assert len(calls) == 4  # a new identity does not reuse old verdicts


def test_cached_judge_keeps_diagnoses_apart_that_differ_in_letters_beyond_ascii(
    tmp_path: Path,
) -> None:
    """The cache key is the normalised pair: a Greek letter or a word in another script used
    to vanish from it, so alpha's verdict answered for beta and one CJK pair for another."""
    calls: list[tuple[str, str]] = []

    def same(reference: str, candidate: str) -> bool:
        calls.append((reference, candidate))
        return reference == candidate

    judge = CachedJudge(same, tmp_path, identity="same-v1")
    pairs = [
        ("α-mannosidosis", "α-mannosidosis"),
        ("α-mannosidosis", "β-mannosidosis"),
        ("脑膜瘤", "脑膜瘤"),
        ("脑膜瘤", "胶质瘤"),
        ("ヘルペス脳炎", "ヘルヘス脳炎"),  # pe and he differ by a voicing mark only
    ]
    assert [judge(reference, candidate) for reference, candidate in pairs] == [
        True, False, True, False, False,
    ]  # fmt: skip
    assert calls == pairs and judge.stats.cache_hits == 0
    # A spelling of the same letter is the same request: alpha spelled out hits alpha's entry.
    assert judge("alpha-mannosidosis", "Α-MANNOSIDOSIS") and judge.stats.cache_hits == 1


def test_cached_judge_rejects_non_bool_verdicts_and_non_callables(tmp_path: Path) -> None:
    judge = CachedJudge(lambda reference, candidate: "yes", tmp_path, identity="bad")
    with pytest.raises(JudgeError, match="not a bool"):
        judge("a", "b")
    assert list(tmp_path.rglob("*.json")) == []  # nothing cached
    with pytest.raises(NovaInputError, match="judge"):
        CachedJudge("not callable", tmp_path)  # type: ignore[arg-type]


def test_cached_judge_around_the_http_judge_keeps_case_labels(
    server: JudgeServer, tmp_path: Path
) -> None:
    server.script.extend([Reply(content="unsure")] * 2)
    inner = _judge(server, max_retries=1)
    judge = CachedJudge(inner, tmp_path)
    assert judge.identity == inner.identity and judge.prompt_version == JUDGE_PROMPT_VERSION
    with pytest.raises(JudgeError) as info:
        judge.match_many([("Glioma", "x")], labels=["example 1, prediction 3"])
    assert info.value.case == "example 1, prediction 3"
