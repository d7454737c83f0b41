"""The protocol-mode case judge: one request per case, against the shared fake server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from novabench.errors import NovaInputError
from novabench.metrics.diagnosis import score_diagnosis
from novabench.metrics.judge import (
    CaseVerdict,
    JudgeError,
    OpenAICaseJudge,
    build_case_judge_messages,
    parse_case_verdict,
)
from tests.fake_openai_server import FakeOpenAIServer, Reply, request_text

FIVE = ["meningioma", "abscess", "glioblastoma", "lymphoma", "metastasis"]


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        yield fake


def _judge(server: FakeOpenAIServer, **options: object) -> OpenAICaseJudge:
    options.setdefault("backoff", 0.0)
    return OpenAICaseJudge(server.base_url, "judge-model", **options)  # type: ignore[arg-type]


def test_slot_three_is_top5_only_and_one_request_carries_all_five(server) -> None:
    server.script.append(Reply(content='{"matched_slot": 3}'))
    verdict = _judge(server).judge_case("Glioblastoma", FIVE)
    assert verdict == CaseVerdict(top1=False, top5=True, matched_slot=3)
    assert server.n_requests == 1
    text, _ = request_text(server.bodies[0])
    for slot, item in enumerate(FIVE, start=1):
        assert f"{slot}. {item}" in text
    assert "Reference diagnosis: Glioblastoma" in text


def test_slot_one_and_null(server) -> None:
    server.script.extend(
        [Reply(content='{"matched_slot": 1}'), Reply(content='{"matched_slot": null}')]
    )
    judge = _judge(server)
    assert judge.judge_case("Glioma", ["glioma"]) == CaseVerdict(True, True, 1)
    assert judge.judge_case("Glioma", ["abscess"]) == CaseVerdict(False, False, None)


def test_malformed_verdict_is_asked_again(server) -> None:
    server.script.extend([Reply(content="the third one"), Reply(content='{"matched_slot": 2}')])
    judge = _judge(server, max_retries=1)
    assert judge.judge_case("Abscess", FIVE).matched_slot == 2
    assert server.n_requests == 2
    assert judge.stats.requests == 2 and judge.stats.retries == 1 and judge.stats.failures == 0


def test_out_of_range_slot_is_a_counted_failure(server) -> None:
    server.script.append(Reply(content='{"matched_slot": 4}'))
    judge = _judge(server, max_retries=0)
    with pytest.raises(JudgeError, match="out-of-range"):
        judge.judge_case("Abscess", ["glioma", "abscess"])
    assert judge.stats.failures == 1 and judge.stats.calls == 1


def test_second_run_reads_the_cache(server, tmp_path: Path) -> None:
    server.script.append(Reply(content='{"matched_slot": 3}'))
    first = _judge(server, cache_dir=tmp_path).judge_case("Glioblastoma", FIVE)
    again = _judge(server, cache_dir=tmp_path)
    assert again.judge_case("Glioblastoma", FIVE) == first
    assert server.n_requests == 1
    assert again.stats.cache_hits == 1 and again.stats.requests == 0
    # A different list is another key: it is judged anew.
    server.script.append(Reply(content='{"matched_slot": null}'))
    assert again.judge_case("Glioblastoma", FIVE[::-1]).matched_slot is None
    assert server.n_requests == 2


def test_score_diagnosis_with_case_judge(server) -> None:
    def answer(body: dict) -> str:
        text, _ = request_text(body)
        slot = {"Glioma": 1, "Abscess": 4, "Lymphoma": None}[
            text.split("Reference diagnosis: ")[1].split("\n")[0]
        ]
        return json.dumps({"matched_slot": slot})

    server.answer = answer
    predictions = [["glioma"], FIVE, ["x", "y"], ["anything"], ["", " "]]
    references = ["Glioma", "Abscess", "Lymphoma", "Final diagnosis not found.", "Glioma"]
    result = score_diagnosis(predictions, references, case_judge=_judge(server))
    # Scored: Glioma (slot 1), Abscess (slot 4), Lymphoma (none), blank list (miss, not sent).
    assert result["n_cases"] == 4 and result["n_cases_without_reference"] == 1
    assert result["top1"] == 1 / 4 and result["top5"] == 2 / 4
    assert server.n_requests == 3
    assert result["matcher"].startswith("LLM case judge judge-model")


def test_case_judge_and_matcher_are_exclusive(server) -> None:
    with pytest.raises(NovaInputError, match="not both"):
        score_diagnosis([["a"]], ["a"], matcher=lambda r, c: True, case_judge=_judge(server))


def test_parse_and_messages() -> None:
    assert parse_case_verdict('{"matched_slot": true}') is None
    assert parse_case_verdict('{"matched_slot": 6}', n_predictions=6) is None
    assert parse_case_verdict('{"matched_slot": 1} {"matched_slot": 2}') is None
    assert parse_case_verdict('<think>{"matched_slot": 5}</think>{"matched_slot": 2}') == (
        CaseVerdict(False, True, 2)
    )
    content = build_case_judge_messages("X", ["a", ""], context="45F, seizures")[1]["content"]
    assert content.splitlines() == [
        "Case context: 45F, seizures",
        "Reference diagnosis: X",
        "Proposed diagnoses:",
        "1. a",
        "2. (no answer)",
    ]
