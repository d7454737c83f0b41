"""The evaluate module where users look for it: novabench.metric_path(), `nova metric copy`,
and the configuration used when evaluate.load names none."""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

import pytest

from novabench import metric_path
from novabench.cli import main
from novabench.errors import NovaInputError
from novabench.metric_module import METRIC_FILES
from tests.lazy_import import LazyModule

# Imported by the first test that reads it (tests/lazy_import.py), not at collection.
evaluate = LazyModule("evaluate")

REPO = Path(__file__).resolve().parents[1]


def test_metric_path_is_the_single_source_folder_in_a_checkout() -> None:
    # Editable install: the repository's folder itself, not a second copy of it.
    assert Path(metric_path()) == REPO / "metrics" / "nova_metric"


def test_setup_py_ships_exactly_the_module_files() -> None:
    tree = ast.parse((REPO / "setup.py").read_text(encoding="utf-8"))
    shipped = next(
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign) and node.targets[0].id == "MODULE_FILES"
    )
    assert tuple(shipped) == METRIC_FILES
    assert all((REPO / "metrics" / "nova_metric" / name).is_file() for name in METRIC_FILES)


def test_no_configuration_means_all_and_a_warning_names_the_others() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        metric = evaluate.load(metric_path())
    messages = [str(w.message) for w in caught if "nova_metric" in str(w.message)]
    assert metric.task == "all"
    assert len(messages) == 1
    for name in ("'all'", "'localization'", "'captioning'", "'diagnosis'"):
        assert name in messages[0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        named = evaluate.load(metric_path(), "diagnosis")
    assert named.task == "diagnosis"
    assert not [w for w in caught if "nova_metric" in str(w.message)]


def test_an_unknown_configuration_is_refused_by_name() -> None:
    with pytest.raises(NovaInputError, match="config_name.*unknown configuration 'boxes'"):
        evaluate.load(metric_path(), "boxes")


@pytest.mark.parametrize(
    ("spelling", "task"),
    [("localisation", "localization"), ("Localisation", "localization"), ("caption", "captioning")],
)
def test_a_configuration_takes_every_spelling_evaluate_model_takes(spelling, task) -> None:
    # user21: evaluate_model(tasks="localisation") ran, evaluate.load(..., "localisation")
    # was refused; both take the registry's spellings now.
    from novabench.run.runner import parse_tasks

    assert parse_tasks(spelling) == (task,)  # what evaluate_model(tasks=) reads it as
    metric = evaluate.load(metric_path(), spelling)
    assert metric.task == task
    assert metric.config_name == task  # evaluate's own record names the canonical task


def test_metric_copy_writes_a_loadable_folder_and_keeps_an_existing_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    notebooks = tmp_path / "notebooks"
    assert main(["metric", "copy", str(notebooks)]) == 0
    copied = notebooks / "nova_metric"
    for name in METRIC_FILES:
        assert (copied / name).read_bytes() == (
            REPO / "metrics" / "nova_metric" / name
        ).read_bytes()
    assert str(copied) in capsys.readouterr().out

    # Two of three diagnoses right at rank 1 (hand-counted): top1 = 2/3.
    result = evaluate.load(str(copied), "diagnosis").compute(
        predictions=[["glioblastoma"], ["meningioma"], ["multiple sclerosis"]],
        references=["Glioblastoma", "Multiple sclerosis", "Multiple sclerosis"],
    )
    assert result["top1-lexicon"] == pytest.approx(2 / 3)

    (copied / "nova_metric.py").write_text("# my edits\n", encoding="utf-8")
    (copied / "notes.txt").write_text("mine", encoding="utf-8")
    assert main(["metric", "copy", str(notebooks)]) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "already exists" in error and "--force" in error
    assert (copied / "nova_metric.py").read_text(encoding="utf-8") == "# my edits\n"

    assert main(["metric", "copy", str(notebooks), "--force"]) == 0
    assert (copied / "nova_metric.py").read_bytes() == (
        REPO / "metrics" / "nova_metric" / "nova_metric.py"
    ).read_bytes()
    assert (copied / "notes.txt").read_text(encoding="utf-8") == "mine"


def test_metric_copy_into_a_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "results.json"
    target.write_text("{}", encoding="utf-8")
    assert main(["metric", "copy", str(target)]) == 2
    error = capsys.readouterr().err.strip()
    assert "results.json" in error and "is a file" in error
    assert target.read_text(encoding="utf-8") == "{}"


def test_metric_path_prints_the_folder(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["metric", "path"]) == 0
    assert capsys.readouterr().out.strip() == metric_path()
