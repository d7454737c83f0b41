"""The kill test: `nova run --endpoint` SIGKILLed at seeded random moments, resumed each time.

A real `nova run` process talks to the scripted local server (127.0.0.1, seeded long-tailed
latencies, answers that depend only on the question) and is killed again and again, some
rounds after a random number of new answers, some at a random time after its start (which
can land in start-up, the resume repair or a manifest write). After every kill:

- every line that was complete when the process died is still in the file, unchanged;
- what the server had answered but the file lacks is at most the requests in flight;

and at the end the file parses, holds every item exactly once, and `nova evaluate` gives
the same scores as an uninterrupted run. No wall-clock assertion: time only picks moments.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import novabench
from novabench.cli import main
from novabench.data.release import read_release
from novabench.run.predictions import read_predictions
from tests.fake_openai_server import FakeOpenAIServer, request_text
from tests.release_factory import write_v1_release

pytestmark = pytest.mark.slow  # about ten `nova run` processes: 20-40 s on 2 shared cores

CONCURRENCY = 4
KILLS = 10
SEED = 20261203

CAPTIONS = (
    "Axial FLAIR: right frontal hyperintensity with mass effect.",
    "Ring-enhancing lesion in the left temporal lobe with surrounding oedema.",
    "No acute abnormality; age-appropriate volume loss.",
)
DIAGNOSES = ("Glioblastoma", "Brain abscess", "Multiple sclerosis", "Meningioma")


def _digest(body: dict[str, Any]) -> int:
    text, image_url = request_text(body)
    return int(hashlib.sha256((text + (image_url or "")).encode()).hexdigest()[:12], 16)


def scripted_answer(body: dict[str, Any]) -> str:
    """An answer of the asked task that depends only on the question (prompt and image)."""
    text, image_url = request_text(body)
    value = _digest(body)
    if image_url is None:
        return json.dumps({"most_likely_diagnosis": DIAGNOSES[value % len(DIAGNOSES)]})
    if "box" in text.lower():
        x, y = value % 20, (value // 20) % 15
        return json.dumps([[x, y, 10 + value % 7, 8 + value % 5]])
    return CAPTIONS[value % len(CAPTIONS)]


def scripted_latency(body: dict[str, Any]) -> float:
    """Seeded, long-tailed: mostly tens of milliseconds, now and then a few hundred."""
    value = _digest(body) % 1000
    return 0.4 if value < 60 else 0.02 + (value % 100) / 1000


def complete_part(path: Path) -> bytes:
    """The file up to its last newline (the lines a reader would accept)."""
    data = path.read_bytes() if path.exists() else b""
    return data[: data.rfind(b"\n") + 1]


def answer_lines(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in data.decode("utf-8").splitlines() if line]


def item_key(line: dict[str, Any]) -> tuple[str, str]:
    return line["task"], line.get("filename") or line["case_id"]


@pytest.fixture(scope="module")
def release_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # 30 cases, about 150 questions over the three tasks: a whole run asks for several
    # seconds even on an idle machine, so the seeded kill moments land inside runs.
    return write_v1_release(tmp_path_factory.mktemp("release"), n_cases=30, image_size=(64, 64))


def nova_run(release_dir: Path, server: FakeOpenAIServer, out: Path) -> list[str]:
    return [
        "run",
        "--data",
        str(release_dir),
        "--task",
        "all",
        "--endpoint",
        server.base_url,
        "--model-name",
        "fake-vlm",
        "--max-concurrency",
        str(CONCURRENCY),
        "--timeout",
        "120",
        "--out",
        str(out),
        "--no-progress",
    ]


def evaluate(release_dir: Path, raw: Path, out: Path) -> dict[str, Any]:
    args = ["evaluate", "--data", str(release_dir), "--predictions", str(raw)]
    assert main([*args, "--out", str(out), "--bootstrap", "0", "--exclude", "BERTScore-F1"]) == 0
    report = json.loads(out.read_text())
    return {task: entry["metrics"] for task, entry in report["tasks"].items()}


def test_runs_killed_at_random_moments_lose_only_what_was_in_flight(
    release_dir: Path, tmp_path: Path
) -> None:
    rng = random.Random(SEED)
    env = {
        **os.environ,
        "PYTHONPATH": str(Path(novabench.__file__).resolve().parents[1]),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
    }
    out = tmp_path / "killed.jsonl"
    kills = 0
    with FakeOpenAIServer(
        answer=scripted_answer,
        latency=scripted_latency,
        keep_alive=True,
        max_requests=5000,
    ) as server:
        command = [sys.executable, "-m", "novabench.cli", *nova_run(release_dir, server, out)]
        finished = False
        for round_number in range(KILLS):
            kept = complete_part(out)
            answered_before = server.n_answered
            process = subprocess.Popen(
                command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
            )
            try:
                if round_number % 2 == 0:  # after a few more answers, plus a random instant
                    target = len(answer_lines(kept)) + rng.randint(1, 8)
                    while process.poll() is None and len(answer_lines(complete_part(out))) < target:
                        time.sleep(0.01)
                    time.sleep(rng.uniform(0, 0.15))
                else:  # at a random time after the start: start-up, repair or answering
                    time.sleep(rng.uniform(0.3, 2.0))
                if process.poll() is None:
                    process.send_signal(signal.SIGKILL)
                    kills += 1
            finally:
                process.wait(timeout=300)
                stderr = process.stderr.read().decode() if process.stderr else ""
                if process.stderr:
                    process.stderr.close()
            if process.returncode == 0:
                finished = True
                break
            assert process.returncode == -signal.SIGKILL, stderr
            now = complete_part(out)
            # Complete lines are never rewritten or dropped (a cut-off tail is set aside).
            assert now.startswith(kept), f"round {round_number}: earlier answers changed"
            # Asked and answered but not in the file: only what was in flight at the kill.
            time.sleep(0.2)  # let the server finish writing replies nobody reads any more
            written = len(answer_lines(now)) - len(answer_lines(kept))
            assert server.n_answered - answered_before - written <= CONCURRENCY
        if not finished:  # the last resume runs to the end
            kept = complete_part(out)
            result = subprocess.run(command, env=env, capture_output=True, timeout=300)
            assert result.returncode == 0, result.stderr.decode()
            assert complete_part(out).startswith(kept)

        uninterrupted = tmp_path / "uninterrupted.jsonl"
        assert main(nova_run(release_dir, server, uninterrupted)) == 0

    assert kills >= KILLS // 2  # the test really killed runs mid-way
    lines = answer_lines(out.read_bytes())
    keys = [item_key(line) for line in lines]
    assert len(keys) == len(set(keys)), "an item was answered twice"
    assert not any("error" in line for line in lines)
    release = read_release(release_dir)
    predictions = read_predictions(out, release)
    expected = {"localization": len(release.images), "captioning": len(release.images)}
    expected["diagnosis"] = len(release.cases())
    assert {task: len(records) for task, records in predictions.records.items()} == expected

    def answers(lines: list[dict[str, Any]]) -> list[str]:  # latency aside, in any order
        kept = [{k: v for k, v in line.items() if k != "latency_s"} for line in lines]
        return sorted(json.dumps(line) for line in kept)

    assert answers(lines) == answers(answer_lines(uninterrupted.read_bytes()))

    scores = evaluate(release_dir, out, tmp_path / "killed-report.json")
    reference = evaluate(release_dir, uninterrupted, tmp_path / "reference-report.json")
    assert scores == reference
