"""The diagnosis judges' prompts are package resources, byte for byte what they were as code."""

from __future__ import annotations

import glob
import hashlib
from importlib import resources
from pathlib import Path

import pytest

from novabench.metrics.judge import (
    CASE_JUDGE_PROMPT_VERSION,
    CASE_JUDGE_SYSTEM_PROMPT,
    JUDGE_PROMPT_VERSION,
    JUDGE_SYSTEM_PROMPT,
    OpenAICaseJudge,
    OpenAIChatJudge,
)

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "src" / "novabench"

# SHA-256 of JUDGE_SYSTEM_PROMPT and CASE_JUDGE_SYSTEM_PROMPT when they were Python string
# constants in novabench/metrics/judge.py (commit 959fcd4), computed from those constants
# before they moved: reports made before and after the move must show the same hashes.
PAIR_PROMPT_SHA256 = "377832a9b61edc45123ef47cd8c54f43278dbe189f07290d963eecc2fc1be97a"
CASE_PROMPT_SHA256 = "427291d8026cb65512c26dba47fba072ae9dc3d5d0b0443944c3cb5d7d90ab10"


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_the_prompts_kept_their_bytes_versions_and_hashes() -> None:
    assert _sha256(JUDGE_SYSTEM_PROMPT) == PAIR_PROMPT_SHA256
    assert _sha256(CASE_JUDGE_SYSTEM_PROMPT) == CASE_PROMPT_SHA256
    # The versions are part of every verdict cache key: unchanged, old verdicts stay valid.
    assert (JUDGE_PROMPT_VERSION, CASE_JUDGE_PROMPT_VERSION) == (
        "nova-diagnosis-judge-1",
        "nova-case-judge-2",
    )
    assert OpenAIChatJudge("http://127.0.0.1:9", "m").prompt_sha256 == PAIR_PROMPT_SHA256
    assert OpenAICaseJudge("http://127.0.0.1:9", "m").prompt_sha256 == CASE_PROMPT_SHA256


@pytest.mark.parametrize(
    ("name", "judge"),
    [("diagnosis_pair_judge.txt", OpenAIChatJudge), ("diagnosis_case_judge.txt", OpenAICaseJudge)],
)
def test_each_prompt_resource_hashes_to_the_reported_value(name: str, judge: type) -> None:
    resource = resources.files("novabench").joinpath("resources", "prompts", name)
    text = resource.read_text(encoding="utf-8")
    assert text.endswith("\n") and not text.endswith("\n\n")  # one final newline, not sent
    assert judge("http://127.0.0.1:9", "m").prompt_sha256 == _sha256(text.strip())


def test_package_data_ships_every_resource() -> None:
    """pyproject's package-data globs (setuptools reads them as recursive globs) cover
    every file under resources/, the judge prompts included, so the wheel has them."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+; the package supports 3.10
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["novabench"]
    shipped = {
        path
        for pattern in patterns
        for path in glob.glob(pattern, root_dir=PACKAGE, recursive=True)
        if (PACKAGE / path).is_file()
    }
    present = {
        str(path.relative_to(PACKAGE))
        for path in (PACKAGE / "resources").rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    assert {"resources/prompts/diagnosis_pair_judge.txt",
            "resources/prompts/diagnosis_case_judge.txt"} <= present  # fmt: skip
    assert present <= shipped, sorted(present - shipped)
