"""The protocol-mode case judge: one request per case, against the shared fake server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from novabench.errors import NovaInputError
from novabench.metrics.diagnosis import score_diagnosis
from novabench.metrics.judge import (
    CASE_JUDGE_SYSTEM_PROMPT,
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


def test_the_case_judge_alone_gives_the_paper_keys_top1_and_top5(server) -> None:
    # One case judged slot 3 (Top-5 only), the other slot 1 (Top-1 and Top-5); both cases hold
    # five predictions, so whichever case a reply reaches first the counts are the same.
    server.script.extend(
        [Reply(content='{"matched_slot": 3}'), Reply(content='{"matched_slot": 1}')]
    )
    result = score_diagnosis(
        [FIVE, list(reversed(FIVE))], ["Glioblastoma", "Glioblastoma"], case_judge=_judge(server)
    )
    assert (result["top1"], result["top5"]) == (0.5, 1.0)  # 1 of 2; 2 of 2
    assert result["match_rule"] == "case-judge"
    assert not any(key.startswith(("top1-", "top5-")) for key in result)


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


def test_the_clinical_history_is_sent_and_a_blank_one_is_not(server) -> None:
    server.script.extend(Reply(content='{"matched_slot": 1}') for _ in range(3))
    judge = _judge(server)
    judge.judge_case("Glioblastoma", FIVE, context="  A 61-year-old man with seizures. ")
    judge.judge_case("Glioblastoma", FIVE, context="   ")
    judge.judge_case("Glioblastoma", FIVE)
    sent = [request_text(body)[0] for body in server.bodies]
    user_lines = [text.split(CASE_JUDGE_SYSTEM_PROMPT + "\n")[1].splitlines() for text in sent]
    assert user_lines[0][:2] == [
        "Case context: A 61-year-old man with seizures.",
        "Reference diagnosis: Glioblastoma",
    ]
    # Blank and missing histories send the same request, without a context line.
    assert user_lines[1] == user_lines[2]
    assert user_lines[1][0] == "Reference diagnosis: Glioblastoma"
    assert not any("Case context" in text for text in sent[1:])


def test_the_cache_tells_two_histories_apart(server, tmp_path: Path) -> None:
    server.script.extend(
        [Reply(content='{"matched_slot": 2}'), Reply(content='{"matched_slot": null}')]
    )
    judge = _judge(server, cache_dir=tmp_path)
    assert judge.judge_case("Abscess", FIVE, context="Fever.").matched_slot == 2
    assert judge.judge_case("Abscess", FIVE, context="No fever.").matched_slot is None
    assert server.n_requests == 2
    # A verdict made without the history is not reused for a case with one, and back.
    server.script.append(Reply(content='{"matched_slot": 5}'))
    assert judge.judge_case("Abscess", FIVE).matched_slot == 5
    assert server.n_requests == 3
    again = _judge(server, cache_dir=tmp_path)
    assert again.judge_case("Abscess", FIVE, context=" Fever. ").matched_slot == 2
    assert again.judge_case("Abscess", FIVE, context="").matched_slot == 5
    assert again.stats.cache_hits == 2 and server.n_requests == 3


def test_judge_cases_takes_one_context_per_case(server) -> None:
    def answer(body: dict) -> str:
        text, _ = request_text(body)
        return json.dumps({"matched_slot": 1 if "Case context: Headache." in text else None})

    server.answer = answer
    judge = _judge(server)
    cases = [("Glioma", ["glioma"]), ("Glioma", ["glioma"])]
    verdicts = judge.judge_cases(cases, contexts=["Headache.", None])
    assert [v.matched_slot for v in verdicts] == [1, None]
    assert [v.matched_slot for v in judge.judge_cases(cases)] == [None, None]
    with pytest.raises(NovaInputError, match="1 contexts for 2 cases"):
        judge.judge_cases(cases, contexts=["Headache."])
    with pytest.raises(NovaInputError, match="context"):
        judge.judge_cases(cases, contexts=["Headache.", 3])  # type: ignore[list-item]


def test_score_diagnosis_sends_the_rows_history_or_the_contexts_given(server) -> None:
    server.answer = lambda body: json.dumps({"matched_slot": None})
    rows = [
        {"case_id": "case0001", "final_diagnosis": "Glioma", "clinical_history": "Seizures."},
        {"case_id": "case0002", "final_diagnosis": "Abscess", "clinical_history": None},
        {"case_id": "case0003", "final_diagnosis": "Lymphoma"},
    ]
    score_diagnosis([["x"]] * 3, rows, case_judge=_judge(server))
    sent = sorted(request_text(body)[0] for body in server.bodies)
    contexts = [line for text in sent for line in text.splitlines() if "Case context" in line]
    assert contexts == ["Case context: Seizures."]

    score_diagnosis(
        [["x"], ["y"]], ["Glioma", "Abscess"], case_judge=_judge(server), contexts=["Fever.", " "]
    )
    sent = [request_text(body)[0] for body in server.bodies[3:]]
    assert sum("Case context: Fever.\nReference diagnosis: Glioma" in t for t in sent) == 1
    assert not any("Reference diagnosis: Abscess" in t and "Case context" in t for t in sent)
    with pytest.raises(NovaInputError, match="contexts"):
        score_diagnosis([["x"]], ["Glioma"], case_judge=_judge(server), contexts=[])


def test_a_case_judge_without_contexts_still_works_on_plain_references() -> None:
    class SlotOne:
        def judge_cases(self, cases, *, labels=None):
            return [CaseVerdict.from_slot(1) for _ in cases]

    assert score_diagnosis([["a"]], ["Glioma"], case_judge=SlotOne())["top1"] == 1.0


def test_close_drops_kept_alive_connections_and_the_judge_reconnects() -> None:
    with FakeOpenAIServer(keep_alive=True) as server:
        server.script.extend([Reply(content='{"matched_slot": 1}')] * 2)
        with _judge(server) as judge:
            assert judge.judge_case("Glioma", ["glioma"]).top1
            assert judge._client._kept  # the connection stayed open for the next case
            judge.close()
            assert not judge._client._kept
            assert judge.judge_case("Glioma", ["glioma", "x"]).top1  # usable after close
        assert not judge._client._kept  # leaving the with-block closed it again
