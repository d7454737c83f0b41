"""The LLM keyword judge: one request per caption pair, against the shared fake server."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import pytest

from novabench.errors import NovaInputError
from novabench.metrics.captioning import score_captioning
from novabench.metrics.judge import JudgeError
from novabench.metrics.keyword_judge import (
    KEYWORD_GROUPS,
    JudgedCaption,
    OpenAIKeywordJudge,
    keyword_judge_prompt,
    parse_keyword_reply,
)
from tests.fake_openai_server import FakeOpenAIServer, Reply, request_text

KEYWORDS_ONLY = ["BLEU-4", "ROUGE-L", "METEOR", "BERTScore-F1"]


def side(label: str = "abnormal", **groups: list[str]) -> dict:
    return {**{group: groups.get(group, []) for group in KEYWORD_GROUPS}, "label": label}


def reply(reference: dict, prediction: dict) -> str:
    return json.dumps({"reference": reference, "prediction": prediction})


# Two pairs with their keywords scripted by reference caption.
PAIR_0 = ("Axial DWI: left thalamic infarct, no haemorrhage.", "Axial FLAIR: thalamic infarct.")
PAIR_1 = ("Sagittal image: normal study.", "Sagittal T1: cerebellar mass.")
REPLIES = {
    PAIR_0[0]: reply(
        side(
            anatomy=["Thalamus"],
            findings=["infarct"],
            negated=["haemorrhage"],
            sequence_plane=["axial", "dwi"],
        ),
        side(anatomy=["thalamus"], findings=["Infarct."], sequence_plane=["axial", "flair"]),
    ),
    PAIR_1[0]: reply(
        side("normal", sequence_plane=["sagittal"]),
        side(anatomy=["cerebellum"], findings=["mass"], sequence_plane=["sagittal", "t1w"]),
    ),
}


def answer_by_reference(body: dict) -> str:
    text, _ = request_text(body)
    reference = text.split("REFERENCE: ")[1].split("\n")[0]
    return REPLIES[reference]


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        yield fake


def _judge(server: FakeOpenAIServer, **options: object) -> OpenAIKeywordJudge:
    options.setdefault("backoff", 0.0)
    return OpenAIKeywordJudge(server.base_url, "judge-model", **options)  # type: ignore[arg-type]


def test_scores_from_the_judge_keywords_by_hand(server) -> None:
    server.answer = answer_by_reference
    judge = _judge(server)
    references, predictions = [PAIR_0[0], PAIR_1[0]], [PAIR_0[1], PAIR_1[1]]
    result = score_captioning(predictions, references, exclude=KEYWORDS_ONLY, keyword_judge=judge)
    # Pair 0: modality R {axial, dwi} P {axial, flair}: 2*1/(2+2) = 1/2;
    #         clinical R {thalamus, infarct, no:haemorrhage} P {thalamus, infarct}: 2*2/(3+2) = 4/5.
    # Pair 1: modality R {sagittal} P {sagittal, t1w}: 2*1/(1+2) = 2/3;
    #         clinical R {} P {cerebellum, mass}: 0.
    assert result["ModalityF1"] == pytest.approx((1 / 2 + 2 / 3) / 2)
    assert result["ClinicalF1"] == pytest.approx((4 / 5 + 0) / 2)
    # Labels: R abnormal, normal; P abnormal, abnormal -> TP 1, FP 1, FN 0: 2/(2+1+0).
    assert result["BinaryF1"] == pytest.approx(2 / 3)
    assert result["keyword_extractor"].startswith("LLM keyword judge judge-model")
    # The paper's keys only with the judge: no lexicon reading beside them.
    assert result["keyword_source"] == "judge"
    assert not any(key.endswith("-lexicon") for key in result)
    # One request per pair, both captions in it.
    assert server.n_requests == 2
    for body in server.bodies:
        text, _ = request_text(body)
        assert ("REFERENCE: " + PAIR_0[0] in text) == ("PREDICTION: " + PAIR_0[1] in text)
    assert judge.stats.calls == 2 and judge.stats.failures == 0


def test_a_second_run_reads_the_cache(server, tmp_path: Path) -> None:
    server.answer = answer_by_reference
    first = _judge(server, cache_dir=tmp_path).judge_pair(*PAIR_0)
    again = _judge(server, cache_dir=tmp_path)
    assert again.judge_pair(*PAIR_0) == first
    assert server.n_requests == 1
    assert again.stats.cache_hits == 1 and again.stats.requests == 0
    # Swapping the captions is another key.
    server.answer = lambda body: REPLIES[PAIR_0[0]]
    again.judge_pair(PAIR_0[1], PAIR_0[0])
    assert server.n_requests == 2


def test_a_malformed_reply_is_asked_again(server) -> None:
    server.script.extend([Reply(content='{"reference": {"anatomy": ['), Reply(content=None)])
    server.answer = answer_by_reference
    judge = _judge(server, max_retries=1)
    judged = judge.judge_pair(*PAIR_0)
    assert judged.reference.negated == frozenset({"haemorrhage"})
    assert server.n_requests == 2
    assert judge.stats.requests == 2 and judge.stats.retries == 1 and judge.stats.failures == 0


def test_a_missing_group_is_a_counted_failure_and_the_rest_is_cached(
    server, tmp_path: Path
) -> None:
    broken = json.loads(REPLIES[PAIR_1[0]])
    del broken["prediction"]["findings"]

    def answer(body: dict) -> str:
        text, _ = request_text(body)
        return json.dumps(broken) if PAIR_1[0] in text else REPLIES[PAIR_0[0]]

    server.answer = answer
    judge = _judge(server, max_retries=0, cache_dir=tmp_path)
    with pytest.raises(JudgeError, match="1 of 2 distinct caption pairs got no keywords") as raised:
        judge.extract_pairs([PAIR_0, PAIR_1], labels=["example 0", "example 1"])
    assert "example 1" in str(raised.value)
    assert judge.stats.failures == 1 and judge.stats.calls == 2
    # The good pair was cached: a rerun asks only for the failed one.
    server.answer = answer_by_reference
    rerun = _judge(server, cache_dir=tmp_path)
    rerun.extract_pairs([PAIR_0, PAIR_1])
    assert rerun.stats.cache_hits == 1 and rerun.stats.requests == 1


def test_scoring_does_not_drop_failed_pairs(server) -> None:
    server.answer = lambda body: "the thalamus and an infarct"
    with pytest.raises(JudgeError, match="1 of 1"):
        score_captioning(
            [PAIR_0[1]],
            [PAIR_0[0]],
            exclude=KEYWORDS_ONLY,
            keyword_judge=_judge(server, max_retries=0),
        )


def test_a_blank_prediction_has_no_keywords_and_no_label(server) -> None:
    # The reply's prediction side is ignored (here it even lacks its groups).
    server.answer = lambda body: json.dumps(
        {"reference": side(findings=["infarct"]), "prediction": {"label": "normal"}}
    )
    judge = _judge(server)
    judged = judge.judge_pair(PAIR_0[0], "  ")
    assert judged.prediction == JudgedCaption()
    assert judged.reference.findings == frozenset({"infarct"})
    text, _ = request_text(server.bodies[0])
    assert "PREDICTION: (no caption)" in text


def test_ten_term_keywords_count_for_modality_whatever_their_group() -> None:
    caption = JudgedCaption(
        characteristics=frozenset({"t2w", "hyperintensity"}),
        sequence_plane=frozenset({"swi", "axial"}),
        negated=frozenset({"dwi"}),
        abnormal=True,
    )
    keywords = caption.keywords()
    assert keywords.modality == {"t2w", "swi", "axial"}
    assert keywords.clinical == {"hyperintensity", "no:dwi"}


@pytest.mark.parametrize(
    "text",
    [
        None,
        "",
        "no JSON here",
        '{"reference": ' + json.dumps(side()) + "}",  # no prediction
        reply(side(label="maybe"), side()),  # a label outside normal/abnormal
        reply({**side(), "anatomy": "thalamus"}, side()),  # a group that is not a list
        reply({**side(), "findings": [1]}, side()),  # a keyword that is not a string
        reply(side(), side()) + reply(side("normal"), side()),  # two objects that disagree
    ],
)
def test_unreadable_replies(text: str | None) -> None:
    assert parse_keyword_reply(text) is None


def test_fences_thinking_and_agreeing_repeats_are_read() -> None:
    body = reply(side(findings=["Cyst "]), side("Normal"))
    parsed = parse_keyword_reply(f"<think>{{'x'}}</think>```json\n{body}\n```\n{body}")
    assert parsed is not None
    assert parsed.reference.findings == {"cyst"} and parsed.prediction.abnormal is False


def test_judge_and_extractor_are_exclusive_and_the_judge_is_checked(server) -> None:
    with pytest.raises(NovaInputError, match="not both"):
        score_captioning(
            ["a"],
            ["b"],
            exclude=KEYWORDS_ONLY,
            keyword_judge=_judge(server),
            keyword_extractor=lambda text: None,
        )
    with pytest.raises(NovaInputError, match="extract_pairs"):
        score_captioning(["a"], ["b"], exclude=KEYWORDS_ONLY, keyword_judge=object())
    with pytest.raises(NovaInputError, match="reference"):
        _judge(server).judge_pair(" ", "x")


def test_the_prompt_is_a_versioned_hashed_resource_that_keeps_the_procedure() -> None:
    path = resources.files("novabench").joinpath("resources", "prompts", "keyword_judge.txt")
    text = path.read_text(encoding="utf-8").strip()
    judge = OpenAIKeywordJudge("http://127.0.0.1:9/v1", "m")
    assert judge.prompt_sha256 == hashlib.sha256(text.encode("utf-8")).hexdigest()
    prompt = keyword_judge_prompt().lower()
    for needle in ("together", "broader", "canonical", "absent", "normal", *KEYWORD_GROUPS):
        assert needle in prompt, needle


def _closed_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_an_unreachable_endpoint_stops_the_batch_at_once() -> None:
    # Connection refused on the first pair, with nothing judged yet: the other pairs would
    # wait out the same retries, so the batch stops instead of trying all 40.
    judge = OpenAIKeywordJudge(
        f"http://127.0.0.1:{_closed_port()}/v1", "m", backoff=0.05, max_retries=1, max_workers=2
    )
    pairs = [(f"axial flair lesion {i}", f"a lesion {i}") for i in range(40)]
    with pytest.raises(
        JudgeError,
        match=r"^keyword judge: cannot reach http://127\.0\.0\.1:\d+/v1/chat/completions: "
        "connection refused, so no caption pair was judged$",
    ):
        judge.judge_pairs(pairs)
    # A pair takes two refused attempts and a pause: only the pairs already started by the
    # two workers when the first failure came back were tried, not all 40.
    assert judge.stats.calls <= 6


def test_a_refused_key_stops_the_batch_at_once(server) -> None:
    # HTTP 401 is what every request gets with a bad key: the batch stops as for a refused
    # connection, and the message says what to check.
    from tests.fake_openai_server import Reply

    server.script.extend(Reply(status=401, body='{"error": "bad key"}') for _ in range(40))
    judge = _judge(server, max_workers=1)
    pairs = [(f"axial flair lesion {i}", f"a lesion {i}") for i in range(40)]
    with pytest.raises(JudgeError, match=r"answers HTTP 401: .*bad key.*\(check the API key\)"):
        judge.judge_pairs(pairs)
    # 401 is not retried; the one worker may start a next pair or two before the stop
    # reaches it (more often on a loaded machine), but never the rest of the 40.
    assert server.n_requests == 1  # the worker stops itself: nothing queued is sent


def test_pairs_after_a_success_are_all_tried_despite_connection_errors(server) -> None:
    # Once the endpoint has answered, a later dropped connection is not "unreachable": every
    # pair is still tried, so that the judged ones reach the cache.
    from tests.fake_openai_server import Reply

    server.answer = answer_by_reference
    server.script.extend([Reply(), Reply(hang_up=True), Reply(hang_up=True)])
    judge = _judge(server, max_workers=1, max_retries=0)
    pairs = [PAIR_0, PAIR_1, (PAIR_1[0], "another caption")]
    with pytest.raises(JudgeError, match="2 of 3 distinct caption pairs got no keywords"):
        judge.judge_pairs(pairs)
    assert server.n_requests == 3


def test_pairs_a_worker_stopped_are_judged_when_an_earlier_pair_came_back(server) -> None:
    # Two workers: pair 0 answers late, pair 1 meets HTTP 401 first, so the workers stop
    # sending. Pair 0 then comes back, so the batch is not "unreachable" after all: the
    # pairs the workers held back are judged (in the calling thread), and only pair 1 fails.
    import threading
    import time

    from novabench.client import ChatClientError
    from novabench.metrics.judge.common import JudgeError

    server.answer = answer_by_reference
    judge = _judge(server, max_workers=2)
    first_failed = threading.Event()
    real_judge_pair = judge.judge_pair
    refused = ChatClientError(
        "http://h/v1/chat/completions", 1, "HTTP 401: no", kind="http", status=401
    )

    def judge_pair(reference: str, prediction: str, *, pair: str | None = None):
        if pair == "pair 0":
            first_failed.wait(5)
            time.sleep(0.05)  # the other worker has taken its next pair and stopped
            return real_judge_pair(reference, prediction, pair=pair)
        if pair == "pair 1":
            try:
                raise JudgeError("refused", case=pair) from refused
            finally:
                first_failed.set()
        return real_judge_pair(reference, prediction, pair=pair)

    judge.judge_pair = judge_pair  # type: ignore[method-assign]
    held_back = [(PAIR_0[0], f"another caption {i}") for i in range(4)]  # distinct pairs
    pairs = [PAIR_0, PAIR_1, *held_back]
    with pytest.raises(JudgeError, match=r"^pair 1: 1 of 6 distinct caption pairs got no keywords"):
        judge.judge_pairs(pairs)
    assert server.n_requests == 5  # pair 0 and the four held back, all judged
