"""An error names a setting in the words of the face that raised it.

A notebook user who called ``report.save(folder)`` or ``evaluate_model(...)`` has no
``--items``, ``--force`` or ``--task`` to pass: the message names the Python argument
(``folder``, ``overwrite=True``, ``tasks=``). The same failure on the command line names
the option. Each error holds the setting as an ``Option``; ``str(error)`` says its Python
name and ``nova`` its flag. ``NovaReport.save``'s cases are in ``test_report_save.py`` and
``report/test_all_or_none.py``.
"""

from __future__ import annotations

import argparse
import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from novabench import evaluate_model
from novabench.cli import cli_message, main
from novabench.data.release import read_release
from novabench.errors import NovaInputError
from novabench.evaluator import CallableBackend
from novabench.report import evaluate_predictions
from novabench.run.backends import TransformersBackend
from novabench.run.predictions import RunManifest, merge_prediction_files


def _no_target(image: object, prompt: str) -> str:
    return "no target"


def test_a_function_that_answers_fewer_tasks_is_told_about_tasks(sample_release, tmp_path):
    only_boxes = CallableBackend(_no_target, name="boxes-only", tasks=["localization"])
    with pytest.raises(NovaInputError) as refused:
        evaluate_model(
            only_boxes,
            sample_release,
            run_file=tmp_path / "r.jsonl",
            exclude=["BERTScore-F1"],
            progress=False,
        )
    assert refused.value.field == "tasks"
    assert refused.value.message == (
        "boxes-only does not answer captioning, diagnosis (it answers localization); choose "
        "among those with tasks= or take another backend"
    )


def _localisation_only_run(release: Path, path: Path) -> Path:
    lines = [{"filename": image.filename, "boxes": []} for image in read_release(release).images]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_answered_only_is_named_as_the_python_argument_and_as_the_flag(
    sample_release, tmp_path, capsys
):
    run = _localisation_only_run(sample_release, tmp_path / "boxes.jsonl")
    with pytest.raises(NovaInputError) as refused:
        evaluate_predictions(
            sample_release, run, tasks=["localization", "diagnosis"], answered_only=True
        )
    assert refused.value.message == (
        "no line answers diagnosis, so answered_only=True leaves nothing to score; leave the "
        "task out (tasks=) or score without answered_only=True"
    )
    arguments = ["evaluate", "--data", str(sample_release), "--predictions", str(run)]
    arguments += ["--task", "localization", "--task", "diagnosis", "--answered-only"]
    assert main([*arguments, "--out", str(tmp_path / "r.json"), "--bootstrap", "0"]) == 2
    assert (
        capsys.readouterr()
        .err.strip()
        .endswith(
            "no line answers diagnosis, so --answered-only leaves nothing to score; leave the "
            "task out (--task) or score without --answered-only"
        )
    )


def test_merging_over_a_users_file_names_out_and_overwrite_in_each_face(
    sample_release, tmp_path, capsys
):
    shard = _localisation_only_run(sample_release, tmp_path / "shard.jsonl")
    RunManifest(model="m").write(shard)
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    with pytest.raises(NovaInputError) as refused:
        merge_prediction_files([shard], notes, overwrite=True)
    assert str(refused.value) == (
        f"{notes}, field 'out': is not a predictions file novabench wrote (no run manifest "
        "beside it and not predictions lines); overwrite=True replaces only such a file: "
        "remove it yourself or choose another path"
    )
    assert main(["merge", str(shard), "--out", str(notes), "--force"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"nova merge: error: {notes}, field '--out': is not a predictions file novabench "
        "wrote (no run manifest beside it and not predictions lines); --force replaces only "
        "such a file: remove it yourself or choose another path"
    )
    assert notes.read_text() == "my notes\n"


def test_a_model_that_does_not_load_is_named_by_its_argument_and_by_its_option(monkeypatch):
    def no_such_repo(**_: Any) -> None:
        raise OSError("no such repo")

    # A stand-in transformers module: _load imports `pipeline` from it at call time.
    monkeypatch.setitem(sys.modules, "transformers", types.SimpleNamespace(pipeline=no_such_repo))
    with pytest.raises(NovaInputError) as refused:
        TransformersBackend("some/model")
    python = str(refused.value)
    assert python.startswith("some/model, field 'model': cannot load 'some/model'")
    assert python.endswith("(trust_remote_code=True for models that ship their own code)")
    command_line = cli_message(refused.value, argparse.Namespace(model="some/model"))
    assert command_line.startswith("some/model, field '--model': cannot load 'some/model'")
    assert command_line.endswith("(--trust-remote-code for models that ship their own code)")


def test_a_release_folder_is_out_dir_in_python_and_OUT_on_the_command_line(tmp_path, capsys):
    from novabench.data.sample import write_sample_release

    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(NovaInputError) as refused:
        write_sample_release(mine, n_cases=1, progress=False, overwrite=True)
    assert str(refused.value) == (
        f"{mine}, field 'out_dir': was not written by `nova sample` (no .novabench-output.json "
        "in it); overwrite=True replaces only a folder that command wrote: choose another path "
        "or remove it yourself"
    )
    assert main(["sample", str(mine), "--cases", "1", "--quiet", "--overwrite"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"nova sample: error: {mine}, field 'OUT': was not written by `nova sample` (no "
        ".novabench-output.json in it); --overwrite replaces only a folder that command wrote: "
        "choose another path or remove it yourself"
    )
    assert (mine / "notes.txt").read_text(encoding="utf-8") == "mine"
