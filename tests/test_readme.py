"""The README's Python API block runs as written (on the sample, in a scratch folder)."""

from __future__ import annotations

import ast
import builtins
import json
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


def notebook_blocks() -> list[str]:
    """Every Python block under "In a notebook"."""
    text = README.read_text(encoding="utf-8")
    section = text.split("## In a notebook", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)


def undefined_names(block: str) -> set[str]:
    """Names a block reads that it neither imports, defines, assigns nor gets from builtins."""
    tree = ast.parse(block)
    defined = set(dir(builtins))
    read = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            defined |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, ast.arg):
            defined.add(node.arg)
        elif isinstance(node, ast.Name):
            (defined if isinstance(node.ctx, ast.Store) else read).add(node.id)
    return read - defined


@pytest.mark.parametrize("index", [0, 1])
def test_notebook_blocks_use_no_name_they_do_not_define(index: int) -> None:
    """A user pastes the block as it is: the user's model is a marked placeholder, not a name
    left undefined."""
    assert undefined_names(notebook_blocks()[index]) == set()


def test_the_undefined_name_check_finds_one() -> None:
    assert undefined_names("import evaluate\nfor batch in outputs:\n    f(batch.rows)\n") == {
        "outputs",
        "f",
    }


def test_readme_states_each_run_file_rule_once() -> None:
    text = README.read_text(encoding="utf-8")
    assert text.count("the endpoint URL and library versions are recorded, not compared") == 1


def test_speed_section_is_the_current_figures_and_links_the_history() -> None:
    text = README.read_text(encoding="utf-8")
    speed = text.split("\n## Speed\n", 1)[1].split("\n## ", 1)[0]
    assert len(speed.splitlines()) <= 40 and "(docs/benchmarks.md)" in speed
    history = (README.parent / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    assert "Issue 21's third pass" in history and "issue 11" in history


def test_notebook_block_runs_offline_as_written(
    sample_release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The block as written, offline with no BERTScore model cached, only the release path
    filled in."""
    import huggingface_hub
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(huggingface_hub, "try_to_load_from_cache", lambda *a, **k: None)
    block = notebook_blocks()[0]
    assert '"/path/to/Nova",' in block
    block = block.replace('"/path/to/Nova",', f"{str(sample_release)!r},")
    monkeypatch.chdir(tmp_path)
    names: dict[str, object] = {}
    exec(compile(block, str(README), "exec"), names)  # noqa: S102 (our own README)
    report = names["report"]
    assert (tmp_path / "runs" / "my-model.jsonl").is_file()
    assert {path.name for path in (tmp_path / "runs" / "my-model").iterdir()} >= {
        "report.json",
        "report.md",
        "report.html",
        "items",
    }
    assert report.model == "my_model"  # type: ignore[attr-defined]

    # "a rerun resumes": the cell pasted again runs through, its save included (input14:
    # the save refused a second run), and a file of the user's beside the report stays.
    notes = tmp_path / "runs" / "my-model" / "notes.txt"
    notes.write_text("compare with the 7B run\n", encoding="utf-8")
    again: dict[str, object] = {}
    exec(compile(block, str(README), "exec"), again)  # noqa: S102 (our own README)
    tasks = report.report["tasks"]  # type: ignore[attr-defined]
    rerun = again["report"].report["tasks"]  # type: ignore[attr-defined]
    # Compared as JSON text: a NaN (no box at all gives an undefined AP) equals itself there.
    assert json.dumps({task: rerun[task]["metrics"] for task in rerun}) == json.dumps(
        {task: tasks[task]["metrics"] for task in tasks}
    )
    assert notes.read_text(encoding="utf-8") == "compare with the 7B run\n"
    assert (tmp_path / "runs" / "my-model" / "report.json").is_file()


# Slow: `import evaluate` alone takes seconds; the name check above is the fast part.
@pytest.mark.slow
def test_evaluate_block_runs_as_written(
    sample_release: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    block = notebook_blocks()[1].replace('"/path/to/Nova"', repr(str(sample_release)))
    exec(compile(block, str(README), "exec"), {})  # noqa: S102 (our own README)
    assert "'mAP@30': 0.0" in capsys.readouterr().out  # the placeholder finds nothing


def test_what_the_readme_says_plain_load_dataset_gives_on_a_release_folder(
    sample_release: Path, tmp_path: Path
) -> None:
    # input14: the README explains `Unknown split "test"`; the facts it states hold.
    import datasets

    assert 'Not plain datasets.load_dataset("/path/to/Nova")' in README.read_text("utf-8")
    loaded = datasets.load_dataset(str(sample_release), cache_dir=str(tmp_path / "cache"))
    assert list(loaded) == ["train"] and loaded["train"].column_names == ["image"]
    with pytest.raises(ValueError, match='Unknown split "test"'):
        datasets.load_dataset(str(sample_release), split="test", cache_dir=str(tmp_path / "c2"))


def test_the_first_python_example_says_where_a_release_comes_from() -> None:
    # user21: the notebook block needs a release folder and never named `nova sample`.
    text = README.read_text(encoding="utf-8")
    section = text.split("## In a notebook", 1)[1]
    before_block = section.split("```python", 1)[0]
    assert "nova sample" in before_block
    assert "NOT THE REAL DATA" in before_block  # what a report on it says, said up front


def test_the_presets_section_names_how_python_lists_them() -> None:
    text = README.read_text(encoding="utf-8")
    section = text.split("### Presets", 1)[1].split("\n### ", 1)[0]
    assert "novabench.list_presets()" in section
    import novabench

    for name in novabench.list_presets():
        assert f"| `{name}` |" in section  # every preset has its row in the table
