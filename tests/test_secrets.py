"""Secrets never recorded or shown: URL credentials, option values, abbreviated options."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from novabench.cli import build_parser, main, mask_secrets
from novabench.client import without_credentials
from tests.fake_openai_server import FakeOpenAIServer, request_text

RUN_KEY = "sk-run-7Hq2x9Lm4Pz8"
JUDGE_KEY = "sk-judge-3Vb6n1Kw5Rt0"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://api.example.org/v1?api_key=sk-1", "https://api.example.org/v1?api_key=***"),
        ("https://h/v1?api-version=2024-06&key=abc", "https://h/v1?api-version=2024-06&key=***"),
        ("https://h/v1?access_token=t&model=m", "https://h/v1?access_token=***&model=m"),
        ("https://h/v1?X-Amz-Signature=f00d&sv=1", "https://h/v1?X-Amz-Signature=***&sv=1"),
        ("http://user:pw@10.0.0.1:8000/v1?token=t", "http://10.0.0.1:8000/v1?token=***"),
        ("http://[::1]:8000/v1?apikey=z", "http://[::1]:8000/v1?apikey=***"),
        ("http://127.0.0.1:8000/v1?stream=false", "http://127.0.0.1:8000/v1?stream=false"),
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),
    ],
)
def test_credentials_in_a_url_are_masked(url: str, shown: str) -> None:
    assert without_credentials(url) == shown


def _parsers(
    parser: argparse.ArgumentParser, name: str
) -> list[tuple[str, argparse.ArgumentParser]]:
    found = [(name, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command, sub in action.choices.items():
                found.extend(_parsers(sub, f"{name} {command}"))
    return found


def test_no_command_takes_an_abbreviated_option() -> None:
    parsers = _parsers(build_parser(), "nova")
    assert {name for name, _ in parsers} >= {"nova run", "nova evaluate", "nova space build"}
    assert [name for name, parser in parsers if parser.allow_abbrev] == []


def test_an_api_key_given_as_an_option_is_refused_and_never_printed(
    sample_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", "--data", str(sample_release), "--task", "diagnosis", "--baseline", "floor"]
    argv += ["--out", str(tmp_path / "raw.jsonl"), "--api-key", RUN_KEY]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err == "nova: error: unrecognized arguments: --api-key ***\n"
    assert list(tmp_path.iterdir()) == []


def test_argument_errors_mask_what_looks_like_a_secret() -> None:
    assert mask_secrets(f"unrecognized arguments: --token={RUN_KEY} --limit 3") == (
        "unrecognized arguments: --token=*** --limit 3"
    )
    assert mask_secrets(f"invalid choice: 'http://h/v1?key={RUN_KEY}'") == (
        "invalid choice: 'http://h/v1?key=***'"
    )
    assert mask_secrets("argument --limit: invalid int value: 'five'") == (
        "argument --limit: invalid int value: 'five'"
    )


def _answer(body: dict) -> str:
    """The case judge's verdict to the judge, two diagnoses to the model being run."""
    text, _ = request_text(body)
    return '{"matched_slot": 1}' if "Proposed diagnoses:" in text else '["glioma", "abscess"]'


def test_a_key_in_the_endpoint_query_is_sent_but_never_recorded_or_shown(
    sample_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    raw, report = tmp_path / "raw.jsonl", tmp_path / "report.json"
    markdown, page = tmp_path / "report.md", tmp_path / "report.html"
    with FakeOpenAIServer(answer=_answer) as server:
        run = ["run", "--data", str(sample_release), "--task", "diagnosis", "--no-progress"]
        run += ["--endpoint", f"{server.base_url}?api_key={RUN_KEY}", "--model-name", "vlm"]
        assert main([*run, "--out", str(raw)]) == 0
        n_run_requests = server.n_requests
        evaluate = ["evaluate", "--data", str(sample_release), "--predictions", str(raw)]
        evaluate += ["--out", str(report), "--markdown", str(markdown), "--html", str(page)]
        evaluate += ["--bootstrap", "0", "--task", "diagnosis", "--judge-model", "judge"]
        evaluate += ["--judge-endpoint", f"{server.base_url}?key={JUDGE_KEY}"]
        evaluate += ["--judge-cache", str(tmp_path / "cache")]
        assert main(evaluate) == 0
    # The server got each key in the query, as the host wants it.
    assert server.queries[:n_run_requests] == [f"api_key={RUN_KEY}"] * n_run_requests
    assert set(server.queries[n_run_requests:]) == {f"key={JUDGE_KEY}"}
    manifest = json.loads((tmp_path / "raw.jsonl.manifest.json").read_text(encoding="utf-8"))
    assert manifest["backend"]["endpoint"].endswith("/v1/chat/completions?api_key=***")
    judge = json.loads(report.read_text(encoding="utf-8"))["tasks"]["diagnosis"]["judge"]
    assert judge["endpoint"].endswith("/v1/chat/completions?key=***")
    printed = capsys.readouterr()
    for text in (
        printed.out,
        printed.err,
        *(path.read_text(encoding="utf-8") for path in tmp_path.rglob("*") if path.is_file()),
    ):
        assert RUN_KEY not in text and JUDGE_KEY not in text


@pytest.mark.parametrize("option", ["--api-key-env", "--judge-api-key-env"])
def test_a_key_given_where_a_variable_name_goes_is_refused_and_never_printed(
    option: str, sample_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    endpoint = "http://127.0.0.1:9/v1"  # never reached: the option is refused first
    if option == "--api-key-env":
        argv = ["run", "--data", str(sample_release), "--task", "diagnosis"]
        argv += ["--endpoint", endpoint, "--model-name", "m", "--out", str(tmp_path / "r.jsonl")]
    else:
        predictions = tmp_path / "p.jsonl"
        predictions.write_text('{"case_id": "case0001", "diagnoses": ["glioma"]}\n')
        argv = ["evaluate", "--data", str(sample_release), "--predictions", str(predictions)]
        argv += ["--out", str(tmp_path / "r.json"), "--judge-endpoint", endpoint]
        argv += ["--judge-model", "m", "--bootstrap", "0", "--task", "diagnosis"]
    assert main([*argv, option, RUN_KEY]) == 2
    err = capsys.readouterr().err
    assert RUN_KEY not in err and f"field '{option}'" in err and "not the key itself" in err
    assert len(err.strip().splitlines()) == 1
