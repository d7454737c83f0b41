"""The judges through `nova evaluate` and the report: modes, what the report records, the cache."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from novabench.cli import main
from novabench.data.release import read_release
from novabench.errors import NovaInputError
from novabench.metrics.judge import (
    CASE_JUDGE_SYSTEM_PROMPT,
    OpenAICaseJudge,
    OpenAIChatJudge,
)
from novabench.metrics.keyword_judge import KEYWORD_GROUPS, OpenAIKeywordJudge
from novabench.records import is_placeholder_diagnosis
from novabench.report import evaluate_predictions
from novabench.report.render import shareable_path
from novabench.report.scoring import ScoringOptions
from tests.fake_openai_server import FakeOpenAIServer, Reply, request_text

SAME_KEYWORDS = {
    **{group: [] for group in KEYWORD_GROUPS},
    "findings": ["lesion"],
    "sequence_plane": ["axial"],
    "label": "abnormal",
}


def judge_answer(body: dict[str, Any]) -> str:
    """Keyword requests get the same keywords on both sides; case requests slot 1; pairs a match."""
    text, _ = request_text(body)
    if "REFERENCE: " in text:
        return json.dumps({"reference": SAME_KEYWORDS, "prediction": SAME_KEYWORDS})
    if "Proposed diagnoses:" in text:
        return json.dumps({"matched_slot": 1})
    return json.dumps({"match": True})


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(answer=judge_answer) as fake:
        yield fake


@pytest.fixture
def predictions(sample_release: Path, tmp_path: Path) -> Path:
    release = read_release(sample_release)
    lines = [{"filename": i.filename, "caption": "Axial image: a lesion."} for i in release.images]
    lines += [{"case_id": c.case_id, "diagnoses": ["anything", "else"]} for c in release.cases()]
    path = tmp_path / "predictions.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def scored_cases(release_dir: Path) -> int:
    return sum(
        1 for case in read_release(release_dir).cases()
        if not is_placeholder_diagnosis(case.final_diagnosis)
    )  # fmt: skip


def evaluate(
    release: Path, predictions: Path, out: Path, *options: str
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
            "--exclude",
            "BERTScore-F1",
            "--exclude",
            "METEOR",
            *options,
        ]
    )
    report = json.loads(out.read_text(encoding="utf-8")) if code == 0 else {}
    return code, report


def test_an_endpoint_means_the_case_judge_and_the_report_records_both_judges(
    sample_release: Path, predictions: Path, server: FakeOpenAIServer, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    endpoint = ["--judge-endpoint", server.base_url, "--judge-model", "judge-model"]
    endpoint += ["--judge-cache", str(cache), "--keyword-judge"]
    code, report = evaluate(sample_release, predictions, tmp_path / "r1.json", *endpoint)
    assert code == 0
    n_cases = scored_cases(sample_release)
    n_images = len(read_release(sample_release).images)
    diagnosis = report["tasks"]["diagnosis"]
    # Every case answered slot 1 by the judge (the lexicon would match none of "anything").
    assert diagnosis["metrics"]["top1"] == 1.0 and diagnosis["metrics"]["n_cases"] == n_cases
    # The case judge is the paper's procedure: its keys alone, no proxy beside them.
    assert not any(key.startswith(("top1-", "top5-")) for key in diagnosis["metrics"])
    judge = diagnosis["judge"]
    assert judge["kind"] == "case" and judge["model"] == "judge-model"
    assert judge["prompt_version"] == "nova-case-judge-2"
    assert judge["prompt_sha256"] == OpenAICaseJudge(server.base_url, "m").prompt_sha256
    assert judge["stats"]["calls"] == n_cases and judge["stats"]["cache_hits"] == 0
    assert judge["stats"]["failures"] == 0
    assert any(note.startswith("case judge judge-model") for note in diagnosis["notes"])
    captioning = report["tasks"]["captioning"]
    # The same keywords on both sides of every pair: every keyword F1 is 1.
    for key in ("ClinicalF1", "ModalityF1", "BinaryF1"):
        assert captioning["metrics"][key] == 1.0, key
    assert captioning["metrics"]["keyword_extractor"].startswith("LLM keyword judge judge-model")
    keywords = captioning["judge"]
    assert keywords["kind"] == "keyword" and keywords["prompt_version"] == "nova-keyword-judge-1"
    assert keywords["prompt_sha256"] == OpenAIKeywordJudge(server.base_url, "m").prompt_sha256
    distinct_pairs = len({i.caption for i in read_release(sample_release).images})
    assert keywords["stats"]["calls"] == distinct_pairs
    assert server.n_requests == n_cases + distinct_pairs
    assert n_images >= distinct_pairs

    # A second run: everything from the cache, the report says so.
    code, again = evaluate(sample_release, predictions, tmp_path / "r2.json", *endpoint)
    assert code == 0 and server.n_requests == n_cases + distinct_pairs
    assert again["tasks"]["diagnosis"]["judge"]["stats"]["cache_hits"] == n_cases
    assert again["tasks"]["captioning"]["judge"]["stats"]["cache_hits"] == distinct_pairs
    assert again["tasks"]["diagnosis"]["metrics"]["top1"] == 1.0


def test_case_mode_sends_each_case_its_clinical_history_from_the_release(
    sample_release: Path, predictions: Path, server: FakeOpenAIServer, tmp_path: Path
) -> None:
    endpoint = ["--judge-endpoint", server.base_url, "--judge-model", "judge-model"]
    endpoint += ["--judge-cache", str(tmp_path / "cache"), "--judge-mode", "case"]
    endpoint += ["--task", "diagnosis"]
    code, _ = evaluate(sample_release, predictions, tmp_path / "r.json", *endpoint)
    assert code == 0
    scored = [
        case for case in read_release(sample_release).cases()
        if not is_placeholder_diagnosis(case.final_diagnosis)
    ]  # fmt: skip
    assert scored and all(case.clinical_history for case in scored)
    expected = sorted(
        f"Case context: {case.clinical_history.strip()}\n"
        f"Reference diagnosis: {case.final_diagnosis.strip()}\n"
        for case in scored
        if case.clinical_history is not None and case.final_diagnosis is not None
    )
    sent = sorted(
        request_text(body)[0].split(CASE_JUDGE_SYSTEM_PROMPT + "\n")[1].split("Proposed")[0]
        for body in server.bodies
    )
    assert sent == expected


def test_pair_mode_and_lexicon_mode(
    sample_release: Path, predictions: Path, server: FakeOpenAIServer, tmp_path: Path
) -> None:
    endpoint = ["--judge-endpoint", server.base_url, "--judge-model", "judge-model"]
    endpoint += ["--judge-cache", str(tmp_path / "cache")]
    code, report = evaluate(
        sample_release,
        predictions,
        tmp_path / "pair.json",
        *endpoint,
        "--judge-mode",
        "pair",
        "--task",
        "diagnosis",
    )
    assert code == 0
    judge = report["tasks"]["diagnosis"]["judge"]
    assert judge["kind"] == "pair" and judge["prompt_version"] == "nova-diagnosis-judge-1"
    # Two distinct predictions per case, each a pair of its own.
    assert judge["stats"]["calls"] == 2 * scored_cases(sample_release)
    assert report["tasks"]["diagnosis"]["metrics"]["top1-pairwise"] == 1.0
    assert "top1" not in report["tasks"]["diagnosis"]["metrics"]

    # Lexicon mode with the keyword judge: the endpoint serves the captions only.
    code, report = evaluate(
        sample_release,
        predictions,
        tmp_path / "lexicon.json",
        *endpoint,
        "--judge-mode",
        "lexicon",
        "--keyword-judge",
    )
    assert code == 0
    assert "judge" not in report["tasks"]["diagnosis"]
    # "anything" matches nothing; the lexicon's reading under its own key.
    assert report["tasks"]["diagnosis"]["metrics"]["top1-lexicon"] == 0.0
    assert "top1" not in report["tasks"]["diagnosis"]["metrics"]
    assert report["tasks"]["captioning"]["metrics"]["ClinicalF1"] == 1.0  # the keyword judge's
    assert report["tasks"]["captioning"]["judge"]["kind"] == "keyword"


@pytest.mark.parametrize(
    "options",
    [
        ["--judge-mode", "case"],
        ["--keyword-judge"],
        ["--judge-endpoint", "http://127.0.0.1:9", "--judge-model", "m", "--judge-mode", "lexicon"],
        ["--judge-endpoint", "http://127.0.0.1:9"],
    ],
)
def test_judge_options_that_cannot_work_are_refused(
    sample_release: Path, predictions: Path, tmp_path: Path, options: list[str]
) -> None:
    code, _ = evaluate(sample_release, predictions, tmp_path / "r.json", *options)
    assert code == 2
    assert not (tmp_path / "r.json").exists()


def test_scoring_options_refuse_two_diagnosis_judges_and_route_each_judge() -> None:
    pair = OpenAIChatJudge("http://127.0.0.1:9", "m")
    case = OpenAICaseJudge("http://127.0.0.1:9", "m")
    keywords = OpenAIKeywordJudge("http://127.0.0.1:9", "m")
    with pytest.raises(NovaInputError, match="not both"):
        ScoringOptions(matcher=pair, case_judge=case)
    # BERTScore left out: offline without roberta-large, metric_options would refuse it.
    options = ScoringOptions(
        case_judge=case, keyword_judge=keywords, caption_options={"exclude": ["BERTScore-F1"]}
    )
    assert options.judged_tasks == ("captioning", "diagnosis")
    assert options.metric_options("diagnosis") == ({"case_judge": case}, [])
    assert options.metric_options("captioning")[0]["keyword_judge"] is keywords
    assert options.judge_kind("localization") is None


def test_the_python_api_records_the_judge_too(
    sample_release: Path, predictions: Path, server: FakeOpenAIServer
) -> None:
    case = OpenAICaseJudge(server.base_url, "judge-model", backoff=0.0)
    report = evaluate_predictions(
        sample_release, predictions, tasks=("diagnosis",), n_resamples=0, case_judge=case
    )
    record = report["tasks"]["diagnosis"]["judge"]
    assert record["kind"] == "case" and record["stats"]["requests"] == server.n_requests
    assert record["description"] == case.description


def test_compare_records_the_judge_and_notes_it(
    sample_release: Path, predictions: Path, server: FakeOpenAIServer, tmp_path: Path
) -> None:
    out = tmp_path / "comparison.json"
    code = main(
        [
            "compare",
            "--data",
            str(sample_release),
            "--a",
            str(predictions),
            "--b",
            str(predictions),
            "--out",
            str(out),
            "--task",
            "diagnosis",
            "--bootstrap",
            "20",
            "--judge-endpoint",
            server.base_url,
            "--judge-model",
            "judge-model",
            "--judge-cache",
            str(tmp_path / "cache"),
        ]
    )
    assert code == 0
    comparison = json.loads(out.read_text(encoding="utf-8"))
    n_cases = scored_cases(sample_release)
    record = comparison["judges"]["diagnosis"]
    # A and B are the same file: the second model's cases all come from the cache.
    assert record["kind"] == "case" and record["stats"]["calls"] == 2 * n_cases
    assert record["stats"]["cache_hits"] == n_cases and server.n_requests == n_cases
    assert comparison["tasks"]["diagnosis"]["top1"]["a"] == 1.0
    assert any(note.startswith("case judge") for note in comparison["notes"]["diagnosis"])


def test_a_judge_that_cannot_answer_stops_the_report_with_the_pairs_named(
    sample_release: Path,
    predictions: Path,
    server: FakeOpenAIServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    distinct_pairs = len({i.caption for i in read_release(sample_release).images})
    # A client error is not retried, so each pair fails at once.
    server.script.extend(Reply(status=400, body="bad request") for _ in range(distinct_pairs))
    code, _ = evaluate(
        sample_release,
        predictions,
        tmp_path / "r.json",
        "--judge-endpoint",
        server.base_url,
        "--judge-model",
        "judge-model",
        "--judge-mode",
        "lexicon",
        "--keyword-judge",
        "--judge-cache",
        str(tmp_path / "cache"),
        "--task",
        "captioning",
    )
    assert code == 2 and not (tmp_path / "r.json").exists()
    assert f"{distinct_pairs} of {distinct_pairs} distinct caption pairs got no keywords" in (
        capsys.readouterr().err
    )


@pytest.mark.parametrize("variable", ["NOVABENCH_CACHE", "XDG_CACHE_HOME", "HOME"])
def test_the_default_cache_is_the_users_not_the_current_folder(
    sample_release: Path,
    predictions: Path,
    server: FakeOpenAIServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    variable: str,
) -> None:
    home, elsewhere, work = tmp_path / "home", tmp_path / "elsewhere", tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("HOME", str(home))
    for name in ("NOVABENCH_CACHE", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    expected = {
        "NOVABENCH_CACHE": elsewhere / "verdicts",
        "XDG_CACHE_HOME": elsewhere / "novabench" / "judge",
        "HOME": home / ".cache" / "novabench" / "judge",
    }[variable]
    if variable != "HOME":
        monkeypatch.setenv(variable, str(expected if variable == "NOVABENCH_CACHE" else elsewhere))
    endpoint = ["--judge-endpoint", server.base_url, "--judge-model", "judge-model"]
    code, report = evaluate(sample_release, predictions, tmp_path / "r.json", *endpoint)
    assert code == 0
    assert list(work.iterdir()) == []  # no .nova-judge-cache where the command ran
    assert len(list(expected.rglob("*.json"))) == scored_cases(sample_release)
    # The report shows where the answers are kept: under the home folder as ~/..., elsewhere
    # as a shared report names files (relative to its folder, or by name).
    shown = (
        "~/.cache/novabench/judge"
        if variable == "HOME"
        else shareable_path(expected, tmp_path / "r.json")
    )
    diagnosis = report["tasks"]["diagnosis"]
    assert diagnosis["judge"]["cache_folder"] == shown
    assert any(f"from the cache ({shown})" in note for note in diagnosis["notes"])
    assert str(home) not in json.dumps(report)


def test_judge_cache_overrides_the_default_and_shows_as_given(
    sample_release: Path,
    predictions: Path,
    server: FakeOpenAIServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NOVABENCH_CACHE", str(tmp_path / "not-this-one"))
    endpoint = ["--judge-endpoint", server.base_url, "--judge-model", "judge-model"]
    code, report = evaluate(
        sample_release, predictions, tmp_path / "r.json", *endpoint, "--judge-cache", "mine"
    )
    assert code == 0 and report["tasks"]["diagnosis"]["judge"]["cache_folder"] == "mine"
    assert (tmp_path / "mine").is_dir() and not (tmp_path / "not-this-one").exists()
