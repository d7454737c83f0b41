"""An error names a setting in the words of the face that raised it.

A notebook user who called ``report.save(folder)`` or ``evaluate_model(...)`` has no
``--items``, ``--force`` or ``--task`` to pass: the message names the Python argument
(``folder``, ``overwrite=True``, ``tasks=``). The same failure on the command line names
the option (user13's report: save's refusals told a Python caller to pass ``--force``).
Each error holds the setting as an ``Option``; ``str(error)`` says its Python name and
``nova`` its flag.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import sys
import types
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from novabench import evaluate_model
from novabench.cli import cli_message, main
from novabench.data.release import read_release
from novabench.errors import NovaInputError, NovaOutputError
from novabench.evaluator import CallableBackend
from novabench.report import evaluate_predictions
from novabench.run.backends import TransformersBackend
from novabench.run.predictions import RunManifest, merge_prediction_files


def _no_target(image: object, prompt: str) -> str:
    return "no target"


@pytest.fixture(scope="module")
def report(sample_release: Path, tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("words")
    return evaluate_model(
        _no_target,
        sample_release,
        tasks="localization",
        run_file=folder / "run.jsonl",
        n_resamples=0,
        progress=False,
    )


def _forget_owner(items: Path) -> None:
    """The tables as a novabench before the pins wrote them: no report recorded."""
    for name in ("images", "cases"):
        table = pq.read_table(items / f"{name}.parquet")
        pq.write_table(table.replace_schema_metadata(None), items / f"{name}.parquet")


def test_save_over_tables_recording_no_report_names_folder_and_overwrite(report, tmp_path):
    folder = tmp_path / "saved"
    report.save(folder)
    for name in ("report.json", "report.md", "report.html"):  # only the tables are left
        (folder / name).unlink()
    _forget_owner(folder / "items")
    with pytest.raises(NovaInputError) as refused:
        report.save(folder)
    message = str(refused.value)
    assert message.startswith(f"{folder / 'items'}, field 'folder': holds per-item tables")
    assert message.endswith("; pass overwrite=True to replace them")
    assert "--" not in message.replace(str(tmp_path), "")


def test_save_over_another_reports_tables_names_the_folder_argument(report, tmp_path):
    folder = tmp_path / "saved"
    report.save(folder)
    # A second report in the same folder, pinning the tables the first one wrote.
    pinning = folder / "other.json"
    pinning.write_text((folder / "report.json").read_text())
    for name in ("images", "cases"):
        path = folder / "items" / f"{name}.parquet"
        table = pq.read_table(path)
        owner = json.loads(table.schema.metadata[b"novabench.items"])
        owner["report"] = "../other.json"
        metadata = {**table.schema.metadata, b"novabench.items": json.dumps(owner).encode()}
        pq.write_table(table.replace_schema_metadata(metadata), path)
    with pytest.raises(NovaInputError) as refused:
        report.save(folder, overwrite=True)
    assert refused.value.field == "folder"
    assert refused.value.message == (
        f"holds the per-item tables of the report {pinning}, which points at them; a second "
        "report would replace them: give folder= another folder"
    )


def test_a_save_cut_short_by_a_full_disk_says_overwrite_true(report, tmp_path, monkeypatch):
    folder = tmp_path / "saved"
    report.save(folder)
    real_replace = os.replace

    def disk_full_at_the_markdown(source: Any, target: Any) -> None:
        if Path(target).name == "report.md":
            raise OSError(errno.ENOSPC, "No space left on device", str(source))
        real_replace(source, target)

    monkeypatch.setattr(os, "replace", disk_full_at_the_markdown)
    with pytest.raises(NovaOutputError) as failed:
        report.save(folder, overwrite=True)
    message = str(failed.value)
    assert message.startswith(f"cannot write {folder / 'report.md'}: no space left on the device")
    assert message.endswith("write them again (with overwrite=True) to have them all")


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
