"""The README's Python API block runs as written (on the sample, in a scratch folder)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def python_api_block() -> str:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Python API", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)
    return block


def test_block_is_about_ten_lines_of_calls() -> None:
    statements = [
        line
        for line in python_api_block().splitlines()
        if line and not line.startswith(("from ", "import ", "#", " ", ")"))
    ]
    assert len(statements) <= 10  # statements: comments and wrapped arguments do not count


def test_every_name_the_block_imports_exists() -> None:
    imports = [line for line in python_api_block().splitlines() if line.startswith("from ")]
    exec("\n".join(imports), {})  # noqa: S102 (our own README)


# Slow: builds a sample, runs two baselines, scores and compares (~20 s on 2 shared cores);
# the import check above is the fast part of the same guarantee.
@pytest.mark.slow
def test_python_api_block_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    exec(compile(python_api_block(), str(README), "exec"), {})  # noqa: S102 (our own README)
    printed = capsys.readouterr().out
    assert printed.startswith("# NOVA evaluation report: baseline:floor")
    assert "'difference':" in printed and "'p_value':" in printed
    page = (tmp_path / "runs" / "floor.html").read_text(encoding="utf-8")
    assert "<title>NOVA report: baseline:floor</title>" in page


def notebook_block() -> str:
    """The README's first code block under "In a notebook": the one-call API."""
    text = README.read_text(encoding="utf-8")
    section = text.split("## In a notebook", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)[0]


def test_notebook_block_runs_with_its_placeholders_filled(
    sample_release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The block as written, with a function for `pipe` and the sample for the release path
    (offline, so BERTScore's download is left out where the path is filled in)."""
    block = notebook_block()
    assert '"/path/to/Nova",' in block and "pipe," in block
    block = block.replace(
        '"/path/to/Nova",',
        f'{str(sample_release)!r}, caption_options={{"exclude": ["BERTScore-F1"]}}, n_resamples=20,',
    )
    monkeypatch.chdir(tmp_path)

    def pipe(image: object, prompt: str) -> str:
        return "no target" if image is not None else '{"most_likely_diagnosis": "glioma"}'

    names: dict[str, object] = {"pipe": pipe}
    exec(compile(block, str(README), "exec"), names)  # noqa: S102 (our own README)
    report = names["report"]
    assert (tmp_path / "runs" / "my-model.jsonl").is_file()
    assert {path.name for path in (tmp_path / "runs" / "my-model").iterdir()} >= {
        "report.json",
        "report.md",
        "report.html",
        "items",
    }
    assert report.model == "pipe"  # type: ignore[attr-defined]
