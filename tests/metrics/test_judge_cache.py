"""The judge cache trusts an entry only as the answer to exactly this request, asked of this
server (issues 20, 22; user11).

A tampered entry (a flipped verdict, another request's entry copied over), an old entry
without its raw reply, or an entry that is not a readable regular file is a counted miss,
asked again; a folder that cannot be written keeps this run's verdicts in memory.
"""

from __future__ import annotations

import inspect
import json
import os
import shutil
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from novabench.cli import main
from novabench.data.release import read_release
from novabench.errors import NovaInputError
from novabench.metrics.judge import (
    JudgeEndpoint,
    OpenAICaseJudge,
    OpenAIChatJudge,
    case_verdict_cache_key,
    verdict_cache_key,
)
from novabench.metrics.judge.cache import MAX_CACHE_ENTRY_BYTES
from novabench.metrics.keyword_judge import (
    KEYWORD_GROUPS,
    OpenAIKeywordJudge,
    keyword_pair_cache_key,
)
from novabench.records import is_placeholder_diagnosis
from tests.fake_openai_server import FakeOpenAIServer, request_text

# The case judge answers slot 1 for the cases whose reference is in MATCHED, none otherwise.
MATCHED: set[str] = set()


def judge_answer(body: dict[str, Any]) -> str:
    text, _ = request_text(body)
    if "REFERENCE: " in text:
        side = {**{group: [] for group in KEYWORD_GROUPS}, "findings": ["lesion"]}
        return json.dumps(
            {"reference": {**side, "label": "abnormal"}, "prediction": {**side, "label": "normal"}}
        )
    if "Proposed diagnoses:" in text:
        reference = text.rsplit("Reference diagnosis: ", 1)[1].splitlines()[0]
        return json.dumps({"matched_slot": 1 if reference in MATCHED else None})
    user = text.splitlines()
    reference = user[-2].split(": ", 1)[1]
    candidate = user[-1].split(": ", 1)[1]
    return json.dumps({"match": reference.lower() == candidate.lower()})


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(answer=judge_answer) as fake:
        yield fake


@pytest.fixture
def predictions(sample_release: Path, tmp_path: Path) -> Path:
    release = read_release(sample_release)
    lines = [{"case_id": c.case_id, "diagnoses": ["anything", "else"]} for c in release.cases()]
    path = tmp_path / "predictions.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def scored_references(release_dir: Path) -> list[str]:
    return [
        case.final_diagnosis for case in read_release(release_dir).cases()
        if not is_placeholder_diagnosis(case.final_diagnosis)
    ]  # fmt: skip


def evaluate(
    release: Path, predictions: Path, out: Path, server_url: str, cache: Path
) -> tuple[int, dict[str, Any]]:
    code = main(
        [
            "evaluate",
            "--data",
            str(release),
            "--predictions",
            str(predictions),
            "--out",
            str(out),
            "--bootstrap",
            "0",
            "--task",
            "diagnosis",
            "--judge-endpoint",
            server_url,
            "--judge-model",
            "judge-model",
            "--judge-cache",
            str(cache),
        ]
    )
    report = json.loads(out.read_text(encoding="utf-8")) if code == 0 else {}
    return code, report


def entries(cache: Path) -> list[Path]:
    return sorted(cache.rglob("*.json"))


def flip_case_entry(path: Path) -> None:
    """Turn a case verdict into its opposite, wherever the entry keeps it."""
    record = json.loads(path.read_text(encoding="utf-8"))
    for holder in (record, record.get("answer")):
        if isinstance(holder, dict) and "matched_slot" in holder:
            holder["matched_slot"] = None if holder["matched_slot"] == 1 else 1
    path.write_text(json.dumps(record), encoding="utf-8")


@pytest.fixture
def half_matched(sample_release: Path) -> Iterator[list[str]]:
    """The judge matches every other scored case (sorted references), so Top-1 is not 0 or 1."""
    references = scored_references(sample_release)
    MATCHED.clear()
    MATCHED.update(sorted(set(references))[::2])
    yield references
    MATCHED.clear()


def cli_warnings(capsys: pytest.CaptureFixture[str], words: str) -> list[str]:
    """The warnings ``nova evaluate`` printed (one line each) that contain ``words``."""
    lines = capsys.readouterr().err.splitlines()
    return [line for line in lines if line.startswith("nova evaluate: warning: ") and words in line]


def test_flipped_verdicts_in_the_cache_are_rejected_and_asked_again(
    sample_release: Path,
    predictions: Path,
    server: FakeOpenAIServer,
    half_matched: list[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    n_cases = len(half_matched)
    # What the judge says, computed from its rule (not from the code under test).
    honest_top1 = sum(reference in MATCHED for reference in half_matched) / n_cases
    assert 0 < honest_top1 < 1
    cache = tmp_path / "cache"
    code, first = evaluate(
        sample_release, predictions, tmp_path / "r1.json", server.base_url, cache
    )
    assert code == 0 and first["tasks"]["diagnosis"]["metrics"]["top1"] == honest_top1
    assert len(entries(cache)) == n_cases
    for path in entries(cache):
        flip_case_entry(path)
    capsys.readouterr()
    code, again = evaluate(
        sample_release, predictions, tmp_path / "r2.json", server.base_url, cache
    )
    assert code == 0
    diagnosis = again["tasks"]["diagnosis"]
    # Before: Top-1 became 1 - honest_top1 with no request and no warning.
    assert diagnosis["metrics"]["top1"] == honest_top1
    assert len(cli_warnings(capsys, "does not give")) == 1
    stats = diagnosis["judge"]["stats"]
    assert stats["cache_rejected"] == n_cases and stats["cache_hits"] == 0
    assert stats["requests"] == n_cases and server.n_requests == 2 * n_cases
    assert any(f"{n_cases} cache entries rejected" in note for note in diagnosis["notes"])
    # The entries were replaced: a third run reads them all, asking nothing.
    code, third = evaluate(
        sample_release, predictions, tmp_path / "r3.json", server.base_url, cache
    )
    assert third["tasks"]["diagnosis"]["judge"]["stats"]["cache_hits"] == n_cases
    assert server.n_requests == 2 * n_cases


def test_one_match_entry_copied_over_the_others_is_rejected(
    sample_release: Path,
    predictions: Path,
    server: FakeOpenAIServer,
    half_matched: list[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    n_cases = len(half_matched)
    honest_top1 = sum(reference in MATCHED for reference in half_matched) / n_cases
    cache = tmp_path / "cache"
    code, _ = evaluate(sample_release, predictions, tmp_path / "r1.json", server.base_url, cache)
    assert code == 0
    texts = [path.read_text(encoding="utf-8") for path in entries(cache)]
    matching = next(text for text in texts if '"matched_slot": 1' in text)
    copied_over = 0
    for path, text in zip(entries(cache), texts):
        if text != matching:
            path.write_text(matching, encoding="utf-8")
            copied_over += 1
    capsys.readouterr()
    code, again = evaluate(
        sample_release, predictions, tmp_path / "r2.json", server.base_url, cache
    )
    # Before: every case read the copied "match" entry and Top-1 was 100%.
    assert again["tasks"]["diagnosis"]["metrics"]["top1"] == honest_top1
    assert len(cli_warnings(capsys, "answers another request")) == 1
    stats = again["tasks"]["diagnosis"]["judge"]["stats"]
    assert stats["cache_rejected"] == copied_over and stats["cache_hits"] == n_cases - copied_over


def test_a_cache_copied_from_another_run_gives_the_same_report(
    sample_release: Path,
    predictions: Path,
    server: FakeOpenAIServer,
    half_matched: list[str],
    tmp_path: Path,
) -> None:
    first_cache, copied = tmp_path / "cache", tmp_path / "elsewhere" / "copied"
    code, first = evaluate(
        sample_release, predictions, tmp_path / "r1.json", server.base_url, first_cache
    )
    assert code == 0
    shutil.copytree(first_cache, copied)
    asked = server.n_requests
    code, again = evaluate(
        sample_release, predictions, tmp_path / "r2.json", server.base_url, copied
    )
    assert code == 0 and server.n_requests == asked  # nothing asked again
    assert again["tasks"]["diagnosis"]["metrics"] == first["tasks"]["diagnosis"]["metrics"]
    stats = again["tasks"]["diagnosis"]["judge"]["stats"]
    assert stats["cache_hits"] == len(half_matched) and stats["cache_rejected"] == 0


# ---------------------------------------------------------------------------------------
# One judge at a time: what an entry must be
# ---------------------------------------------------------------------------------------


def pair_judge(server: FakeOpenAIServer, cache: Path | str) -> OpenAIChatJudge:
    return OpenAIChatJudge(server.base_url, "judge-model", cache_dir=cache, backoff=0.0)


def pair_entry(judge: OpenAIChatJudge, cache: Path, reference: str, candidate: str) -> Path:
    key = verdict_cache_key(judge.identity, judge.prompt_version, reference, candidate)
    return cache / key[:2] / f"{key}.json"


def test_a_flipped_pair_verdict_is_read_again_from_its_stored_reply(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    judge = pair_judge(server, tmp_path)
    assert judge("Glioma", "Abscess") is False
    entry = pair_entry(judge, tmp_path, "Glioma", "Abscess")
    record = json.loads(entry.read_text(encoding="utf-8"))
    record["answer"]["match"] = True  # the reply stored beside it still says false
    entry.write_text(json.dumps(record), encoding="utf-8")
    with pytest.warns(UserWarning, match="does not give"):
        assert pair_judge(server, tmp_path)("Glioma", "Abscess") is False
    assert server.n_requests == 2


def test_a_pair_entry_from_an_older_layout_without_a_reply_is_asked_again(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    judge = pair_judge(server, tmp_path)
    entry = pair_entry(judge, tmp_path, "Glioma", "Abscess")
    entry.parent.mkdir(parents=True)
    # What the cache wrote before it kept replies: a bare verdict, here a wrong one.
    old = {"match": True, "identity": judge.identity, "prompt_version": judge.prompt_version}
    entry.write_text(json.dumps({**old, "reference": "Glioma", "candidate": "Abscess"}))
    with pytest.warns(UserWarning, match="no stored reply"):
        assert judge("Glioma", "Abscess") is False
    assert judge.stats.cache_rejected == 1 and server.n_requests == 1
    assert json.loads(entry.read_text(encoding="utf-8"))["reply"] == '{"match": false}'


def test_a_keyword_entry_copied_from_another_pair_is_rejected(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    judge = OpenAIKeywordJudge(server.base_url, "judge-model", cache_dir=tmp_path, backoff=0.0)
    judge.judge_pair("Axial FLAIR: a lesion.", "Axial T2: a lesion.")
    judge.judge_pair("Axial FLAIR: a lesion.", "")  # a blank prediction: no label
    first, second = entries(tmp_path)
    second.write_text(first.read_text(encoding="utf-8"), encoding="utf-8")
    again = OpenAIKeywordJudge(server.base_url, "judge-model", cache_dir=tmp_path, backoff=0.0)
    with pytest.warns(UserWarning, match="answers another request"):
        blank = again.judge_pair("Axial FLAIR: a lesion.", "")
        judged = again.judge_pair("Axial FLAIR: a lesion.", "Axial T2: a lesion.")
    assert blank.prediction.abnormal is None and judged.prediction.abnormal is False
    assert again.stats.cache_rejected == 1 and again.stats.cache_hits == 1
    assert server.n_requests == 3


def run_with_deadline(work: Any, seconds: float = 60.0) -> Any:
    """``work()`` in a thread; a hang fails the test instead of stalling the suite."""
    outcome: dict[str, Any] = {}

    def target() -> None:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            outcome["value"] = work()
        outcome["warnings"] = [str(w.message) for w in caught]

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "reading the judge cache hung"
    return outcome["value"], outcome["warnings"]


@pytest.mark.parametrize("kind", ["fifo", "folder", "oversize", "link", "not utf-8"])
def test_an_entry_that_is_not_a_small_regular_file_is_a_counted_miss(
    server: FakeOpenAIServer, tmp_path: Path, kind: str
) -> None:
    cache = tmp_path / "cache"
    judge = pair_judge(server, cache)
    entry = pair_entry(judge, cache, "Glioma", "Glioma")
    entry.parent.mkdir(parents=True)
    if kind == "fifo":
        os.mkfifo(entry)
    elif kind == "folder":
        entry.mkdir()
    elif kind == "oversize":
        entry.write_text(" " * (MAX_CACHE_ENTRY_BYTES + 1))
    elif kind == "link":
        elsewhere = tmp_path / "elsewhere.json"
        elsewhere.write_text("{}")
        entry.symlink_to(elsewhere)
    else:
        entry.write_bytes(b'{"reply": "\xff"}')
    verdict, warned = run_with_deadline(lambda: judge("Glioma", "Glioma"))
    assert verdict is True
    assert judge.stats.cache_rejected == 1 and server.n_requests == 1
    assert len([m for m in warned if str(entry) in m]) == 1


def test_a_fifo_in_the_case_cache_does_not_hang_and_is_counted(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    judge = OpenAICaseJudge(server.base_url, "judge-model", cache_dir=tmp_path, backoff=0.0)
    key = case_verdict_cache_key(judge.identity, judge.prompt_version, "Glioma", ["GBM"])
    (tmp_path / key[:2]).mkdir()
    os.mkfifo(tmp_path / key[:2] / f"{key}.json")
    verdict, warned = run_with_deadline(lambda: judge.judge_case("Glioma", ["GBM"]))
    assert verdict.matched_slot is None  # "Glioma" is not in MATCHED
    assert judge.stats.cache_rejected == 1 and len(warned) == 1


def test_a_shard_folder_linking_out_of_the_cache_is_not_followed(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    cache, outside = tmp_path / "cache", tmp_path / "outside"
    # A genuine entry for the same request, in another folder the link points to.
    pair_judge(server, outside)("Glioma", "Glioma")
    (shard,) = [path for path in outside.iterdir() if path.is_dir()]
    before = {path: path.read_bytes() for path in outside.rglob("*.json")}
    cache.mkdir()
    (cache / shard.name).symlink_to(shard)
    judge = pair_judge(server, cache)
    with pytest.warns(UserWarning, match="links out of the cache folder"):
        assert judge("Glioma", "Glioma") is True
    assert judge.stats.cache_rejected == 1 and server.n_requests == 2
    assert {path: path.read_bytes() for path in outside.rglob("*.json")} == before  # not written


def test_a_cache_folder_that_cannot_be_made_keeps_the_runs_verdicts_in_memory(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.warns(UserWarning, match=f"judge cache folder {blocker / 'cache'} cannot be"):
        judge = pair_judge(server, blocker / "cache")
    assert judge("Glioma", "Glioma") is True
    assert judge("Glioma", "Glioma") is True  # paid for once, kept for the run
    assert server.n_requests == 1 and judge.stats.cache_hits == 1


def test_a_write_that_fails_mid_run_loses_no_verdict(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    judge = pair_judge(server, tmp_path)
    entry = pair_entry(judge, tmp_path, "Glioma", "Abscess")
    entry.parent.write_text("a file where the shard folder goes")
    with pytest.warns(UserWarning, match="cannot be written"):
        verdicts = judge.match_many([("Glioma", "Abscess"), ("Glioma", "Glioma")])
    assert verdicts == [False, True]
    assert judge.match_many([("Glioma", "Abscess"), ("Glioma", "Glioma")]) == [False, True]
    assert server.n_requests == 2 and judge.stats.cache_hits == 2


# ---------------------------------------------------------------------------------------
# One signature for the three OpenAI judges (issue 21)
# ---------------------------------------------------------------------------------------

JUDGE_TYPES = [OpenAIChatJudge, OpenAICaseJudge, OpenAIKeywordJudge]


def test_the_three_openai_judges_share_one_signature() -> None:
    signatures = {str(inspect.signature(kind)) for kind in JUDGE_TYPES}
    assert len(signatures) == 1


@pytest.mark.parametrize("kind", JUDGE_TYPES)
def test_an_endpoint_value_and_the_keyword_form_build_the_same_judge(
    kind: type[Any], tmp_path: Path
) -> None:
    endpoint = JudgeEndpoint(
        "http://127.0.0.1:9/v1",
        "judge-model",
        api_key="secret",
        timeout=12.5,
        max_retries=1,
        temperature=0.2,
        max_tokens=64,
        max_workers=2,
        cache_dir=tmp_path,
    )
    from_value = kind(endpoint)
    from_keywords = kind(
        "http://127.0.0.1:9/v1",
        "judge-model",
        api_key="secret",
        timeout=12.5,
        max_retries=1,
        temperature=0.2,
        max_tokens=64,
        max_workers=2,
        cache_dir=tmp_path,
    )
    shown = ("endpoint", "identity", "timeout", "max_retries", "max_tokens", "max_workers")
    for name in (*shown, "cache_dir"):
        assert getattr(from_value, name) == getattr(from_keywords, name), name
    assert from_value.identity.endswith(
        ":judge-model:temperature=0.2:endpoint=http://127.0.0.1:9/v1/chat/completions"
    )
    assert "secret" not in repr(endpoint) + repr(from_value)


def test_each_judge_keeps_its_own_default_timeout() -> None:
    endpoint = JudgeEndpoint("http://127.0.0.1:9", "m")
    # Keyword lists are long replies: the keyword judge waited 60 s, the verdict judges 30 s.
    assert [kind(endpoint).timeout for kind in JUDGE_TYPES] == [30.0, 30.0, 60.0]


@pytest.mark.parametrize("kind", JUDGE_TYPES)
def test_an_endpoint_value_with_keywords_besides_is_refused(kind: type[Any]) -> None:
    endpoint = JudgeEndpoint("http://127.0.0.1:9", "m")
    with pytest.raises(NovaInputError, match="JudgeEndpoint alone") as error:
        kind(endpoint, cache_dir="verdicts")
    assert error.value.field == "endpoint"
    with pytest.raises(TypeError, match="'cache_folder'"):
        kind("http://127.0.0.1:9", "m", cache_folder="verdicts")
    with pytest.raises(NovaInputError, match="timeout"):
        kind(JudgeEndpoint("http://127.0.0.1:9", "m", timeout=0))


def test_a_consistent_edit_of_reply_and_answer_is_not_detected_but_the_report_says_it_was_cached(
    sample_release: Path, predictions: Path, server: FakeOpenAIServer, half_matched: list[str],
    tmp_path: Path,
) -> None:  # fmt: skip
    """The documented limit: only a secret could catch this edit; the report shows the share."""
    from novabench.report import evaluate_predictions, render_markdown, render_table
    from novabench.report.html import render_html

    cache = tmp_path / "cache"
    n_cases = len(scored_references(sample_release))

    def scored() -> dict[str, Any]:
        judge = OpenAICaseJudge(server.base_url, "judge-model", cache_dir=cache)
        return evaluate_predictions(
            sample_release, predictions, tasks=["diagnosis"], n_resamples=0, case_judge=judge
        )

    first = scored()
    honest_top1 = first["tasks"]["diagnosis"]["metrics"]["top1"]
    assert 0 < honest_top1 < 1
    expected = f"case judge judge-model: 0 of {n_cases} verdicts from the cache, 0 cache entries"
    assert expected in render_table(first)
    for path in entries(cache):  # the reply and the answer edited alike: "no match"
        record = json.loads(path.read_text(encoding="utf-8"))
        record["reply"] = json.dumps({"matched_slot": None})
        record["answer"]["matched_slot"] = None
        path.write_text(json.dumps(record), encoding="utf-8")
    edited = scored()
    assert edited["tasks"]["diagnosis"]["metrics"]["top1"] == 0.0  # trusted: what the docs say
    assert server.n_requests == n_cases  # nothing asked again
    shown = f"case judge judge-model: {n_cases} of {n_cases} verdicts from the cache"
    for text in (render_table(edited), render_markdown(edited), render_html(edited)):
        assert shown in text


# ---------------------------------------------------------------------------------------
# A verdict belongs to the server that gave it
# ---------------------------------------------------------------------------------------

D3_LINES = [
    {"case_id": "case0002", "diagnoses": ["NMOSD", "MS", "MOGAD", "ADEM", "Sarcoidosis"]},
    {
        "case_id": "case0004",
        "diagnoses": [
            "Neurocysticercosis",
            "Tuberculoma",
            "Toxoplasmosis",
            "Abscess",
            "Metastasis",
        ],
    },
    {
        "case_id": "case0008",
        "diagnoses": ["Susac syndrome", "MS", "ADEM", "SLE vasculitis", "Migraine"],
    },
]


def test_two_servers_under_one_model_name_do_not_share_verdicts(
    sample_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """user11: the second server's run was scored from the first server's cached verdicts."""
    predictions = tmp_path / "d3.jsonl"
    predictions.write_text("".join(json.dumps(line) + "\n" for line in D3_LINES), encoding="utf-8")
    cache = tmp_path / "jcache"
    always = FakeOpenAIServer(answer=lambda body: json.dumps({"matched_slot": 1}))
    never = FakeOpenAIServer(answer=lambda body: json.dumps({"matched_slot": None}))
    reports = []
    with always, never:
        for name, server in (("first", always), ("second", never)):
            out = tmp_path / f"{name}.json"
            arguments = ["evaluate", "--data", str(sample_release), "--predictions",
                         str(predictions), "--out", str(out), "--answered-only", "--bootstrap",
                         "0", "-q", "--no-breakdowns", "--judge-endpoint", server.base_url,
                         "--judge-model", "judge-x", "--judge-cache", str(cache)]  # fmt: skip
            assert main(arguments) == 0
            reports.append(json.loads(out.read_text(encoding="utf-8")))
        assert (always.n_requests, never.n_requests) == (3, 3)
    first, second = (report["tasks"]["diagnosis"] for report in reports)
    # Every reply of the first server names slot 1, of the second none.
    assert (first["metrics"]["top1"], second["metrics"]["top1"]) == (1.0, 0.0)
    assert second["judge"]["stats"]["cache_hits"] == 0
    assert second["judge"]["endpoint"] == never.base_url + "/chat/completions"
    assert "0 from the cache" in capsys.readouterr().out
    assert len(entries(cache)) == 6  # each server's verdicts kept apart


def keyword_ask(judge: Any) -> Any:
    return judge.judge_pair("Axial FLAIR: a lesion.", "Axial T2: a lesion.")


JUDGE_ASKS = {
    OpenAIChatJudge: lambda judge: judge("Glioma", "glioma"),
    OpenAICaseJudge: lambda judge: judge.judge_case("Glioma", ["GBM", "glioma"]),
    OpenAIKeywordJudge: keyword_ask,
}


@pytest.mark.parametrize("kind", JUDGE_TYPES)
def test_each_judge_asks_another_server_again_and_reuses_its_own_however_spelled(
    kind: type[Any], tmp_path: Path
) -> None:
    ask = JUDGE_ASKS[kind]
    with FakeOpenAIServer(answer=judge_answer) as one, FakeOpenAIServer(answer=judge_answer) as two:
        ask(kind(one.base_url, "judge-model", cache_dir=tmp_path))
        other = kind(two.base_url, "judge-model", cache_dir=tmp_path)
        ask(other)
        assert (one.n_requests, two.n_requests) == (1, 1)
        assert other.stats.cache_hits == 0 and other.stats.cache_rejected == 0
        # The same server written another way: root URL, a trailing slash, the full path,
        # upper-case host, credentials and a query token (neither is part of the key).
        host, port = one.root_url.removeprefix("http://").split(":")
        spellings = [
            one.root_url,
            one.base_url + "/",
            one.base_url + "/chat/completions",
            f"HTTP://{host.upper()}:{port}/v1",
            f"http://user:hunter2@{host}:{port}/v1?api_key=sk-test-0123456789",
        ]
        for spelling in spellings:
            again = kind(spelling, "judge-model", cache_dir=tmp_path)
            ask(again)
            assert again.stats.cache_hits == 1, spelling
        assert (one.n_requests, two.n_requests) == (1, 1)
    written = "".join(path.read_text(encoding="utf-8") for path in entries(tmp_path))
    assert "hunter2" not in written and "sk-test" not in written


@pytest.mark.parametrize("kind", JUDGE_TYPES)
def test_a_query_parameter_choosing_the_model_keeps_verdicts_apart_and_a_key_stays_out(
    kind: type[Any], tmp_path: Path, server: FakeOpenAIServer
) -> None:
    """trust13: `?model=a` and `?model=b` on one host may be two models; a key in the query
    string is neither part of the key nor written to an entry."""
    ask = JUDGE_ASKS[kind]
    secret = "SECRET-4f9c2e"
    for model in ("a", "b"):
        judge = kind(f"{server.base_url}?model={model}&api-key={secret}", "m", cache_dir=tmp_path)
        ask(judge)
        assert judge.stats.cache_hits == 0, model
    assert server.n_requests == 2
    assert server.queries == [f"model=a&api-key={secret}", f"model=b&api-key={secret}"]
    # The same parameters in another order, with another key (or none): the same server.
    for spelling in ("?token=t-1&model=b", "?model=b", "?Api_Key=x&model=b"):
        again = kind(server.base_url + spelling, "m", cache_dir=tmp_path)
        ask(again)
        assert again.stats.cache_hits == 1, spelling
    assert server.n_requests == 2
    written = "".join(path.read_text(encoding="utf-8") for path in entries(tmp_path))
    assert len(entries(tmp_path)) == 2
    assert "model=a" in written and "model=b" in written
    assert secret not in written and "api-key" not in written.lower()


@pytest.mark.parametrize("kind", JUDGE_TYPES)
def test_an_entry_written_before_keys_named_the_server_is_a_plain_miss(
    kind: type[Any], tmp_path: Path, server: FakeOpenAIServer
) -> None:
    """Entries keyed on model and temperature alone are served to no server: asked once."""
    ask = JUDGE_ASKS[kind]
    judge = kind(server.base_url, "judge-model", cache_dir=tmp_path)
    ask(judge)
    (entry,) = entries(tmp_path)
    record = json.loads(entry.read_text(encoding="utf-8"))
    old_identity = judge.identity.split(":endpoint=")[0]
    assert record["request"]["judge"] == judge.identity != old_identity
    # The entry as the former key wrote it: the same reply, under the identity without server.
    record["request"]["judge"] = old_identity
    request = record["request"]
    if kind is OpenAIChatJudge:
        key = verdict_cache_key(old_identity, judge.prompt_version, "Glioma", "glioma")
    elif kind is OpenAICaseJudge:
        key = case_verdict_cache_key(
            old_identity, judge.prompt_version, "Glioma", ["GBM", "glioma"]
        )
    else:
        key = keyword_pair_cache_key(
            old_identity, judge.prompt_version, judge.prompt_sha256,
            request["reference"], request["prediction"],
        )  # fmt: skip
    entry.unlink()
    old = tmp_path / key[:2] / f"{key}.json"
    old.parent.mkdir(exist_ok=True)
    old.write_text(json.dumps(record), encoding="utf-8")
    again = kind(server.base_url, "judge-model", cache_dir=tmp_path)
    ask(again)
    assert again.stats.cache_hits == 0 and again.stats.cache_rejected == 0
    assert server.n_requests == 2
