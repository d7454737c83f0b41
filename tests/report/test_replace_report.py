"""nova evaluate never replaces an existing report without --force, and says what it held."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from novabench.cli import main
from novabench.data.release import read_release
from novabench.errors import NovaInputError
from novabench.run.predictions import RunManifest

FAST = ["--exclude", "BERTScore-F1", "--exclude", "METEOR", "--bootstrap", "0"]


@pytest.fixture(scope="module")
def runs(sample_release: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two localisation runs of differently named models: perfect boxes and no boxes."""
    folder = tmp_path_factory.mktemp("runs")
    release = read_release(sample_release)
    made = {}
    for model, boxes in (("oracle-v1", True), ("empty-v2", False)):
        path = folder / f"{model}.jsonl"
        lines = [
            {"filename": i.filename, "boxes": i.boxes if boxes else []} for i in release.images
        ]
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        RunManifest(model=model).write(path)
        made[model] = path
    return made


def _evaluate(release: Path, predictions: Path, out: Path, *extra: str) -> int:
    args = ["evaluate", "--data", str(release), "--predictions", str(predictions)]
    return main([*args, "--out", str(out), *FAST, *extra])


def test_an_existing_report_is_refused_naming_its_model_and_the_flag(
    sample_release: Path, runs: dict[str, Path], tmp_path: Path, capsys
) -> None:
    out, items = tmp_path / "A.report.json", tmp_path / "A-items"
    assert _evaluate(sample_release, runs["oracle-v1"], out, "--items", str(items)) == 0
    before = out.read_bytes()
    tables_before = {p.name: p.read_bytes() for p in items.iterdir()}
    capsys.readouterr()

    code = _evaluate(sample_release, runs["empty-v2"], out, "--items", str(tmp_path / "Z-items"))
    assert code == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "Traceback" not in error
    assert str(out) in error and "--out" in error
    assert "'oracle-v1'" in error and "written 20" in error  # what it holds, and when
    assert error.endswith("pass --force to replace it")
    assert out.read_bytes() == before  # nothing already written is lost
    assert {p.name: p.read_bytes() for p in items.iterdir()} == tables_before
    assert not (tmp_path / "Z-items").exists()


@pytest.mark.parametrize("option", ["--markdown", "--html"])
def test_an_existing_markdown_or_html_report_is_refused(
    sample_release: Path, runs: dict[str, Path], tmp_path: Path, capsys, option: str
) -> None:
    side = tmp_path / ("r.md" if option == "--markdown" else "r.html")
    first = _evaluate(sample_release, runs["oracle-v1"], tmp_path / "a.json", option, str(side))
    assert first == 0
    before = side.read_bytes()
    capsys.readouterr()
    # A new --out, but the same Markdown/HTML path: still refused.
    assert _evaluate(sample_release, runs["empty-v2"], tmp_path / "b.json", option, str(side)) == 2
    error = capsys.readouterr().err.strip()
    assert option in error and "oracle-v1" in error and "last modified" in error
    assert "--force" in error
    assert side.read_bytes() == before and not (tmp_path / "b.json").exists()


def test_force_replaces_and_says_when_the_old_tables_are_left_unpointed(
    sample_release: Path, runs: dict[str, Path], tmp_path: Path, capsys
) -> None:
    out, old_items = tmp_path / "A.report.json", tmp_path / "A-items"
    assert _evaluate(sample_release, runs["oracle-v1"], out, "--items", str(old_items)) == 0
    capsys.readouterr()
    new_items = tmp_path / "Z-items"
    code = _evaluate(sample_release, runs["empty-v2"], out, "--items", str(new_items), "--force")
    assert code == 0
    err = capsys.readouterr().err
    notes = [line for line in err.splitlines() if "A-items" in line]
    assert len(notes) == 1 and "no report points at them now" in notes[0]
    report = json.loads(out.read_text())
    assert report["predictions"]["manifests"][0]["model"] == "empty-v2"
    assert report["items"]["images"] == "Z-items/images.parquet"


def test_force_with_the_same_items_folder_replaces_both_consistently(
    sample_release: Path, runs: dict[str, Path], tmp_path: Path, capsys
) -> None:
    out, items = tmp_path / "A.report.json", tmp_path / "A-items"
    assert _evaluate(sample_release, runs["oracle-v1"], out, "--items", str(items)) == 0
    old_run = json.loads(out.read_text())["items"]["run_id"]
    capsys.readouterr()
    assert _evaluate(sample_release, runs["empty-v2"], out, "--items", str(items), "--force") == 0
    assert "no report points at them" not in capsys.readouterr().err
    pinned = json.loads(out.read_text())["items"]
    assert pinned["images"] == "A-items/images.parquet" and pinned["run_id"] != old_run


def test_force_never_replaces_a_file_novabench_did_not_write(
    sample_release: Path, runs: dict[str, Path], tmp_path: Path, capsys
) -> None:
    notes = tmp_path / "notes.json"
    notes.write_text('{"my": "notes"}')
    assert _evaluate(sample_release, runs["oracle-v1"], notes, "--force") == 2
    assert "is not a report novabench wrote" in capsys.readouterr().err
    assert notes.read_text() == '{"my": "notes"}'


def test_library_save_refuses_to_replace_a_saved_report(
    sample_release: Path, runs: dict[str, Path], tmp_path: Path
) -> None:
    from novabench.evaluator import evaluate_model

    def no_answer(image, prompt):
        return "no target"

    report = evaluate_model(
        no_answer,
        sample_release,
        tasks="localization",
        run_file=tmp_path / "loc.jsonl",
        n_resamples=0,
        progress=False,
    )
    folder = tmp_path / "saved"
    report.save(folder)
    before = (folder / "report.json").read_bytes()
    with pytest.raises(
        NovaInputError, match=r"report\.json.*holds the report of model .*overwrite=True"
    ):
        report.save(folder)
    assert (folder / "report.json").read_bytes() == before
    assert report.save(folder, overwrite=True)["report"] == folder / "report.json"


def test_tables_of_an_older_report_are_replaced_only_with_force(
    sample_release: Path, runs: dict[str, Path], tmp_path: Path, capsys
) -> None:
    import pyarrow.parquet as pq

    old_out, items = tmp_path / "old.report.json", tmp_path / "old-items"
    assert _evaluate(sample_release, runs["oracle-v1"], old_out, "--items", str(items)) == 0
    # As a novabench before the pins wrote them: no run id in the report or the tables.
    report = json.loads(old_out.read_text())
    report["items"] = {key: report["items"][key] for key in ("images", "cases")}
    old_out.write_text(json.dumps(report))
    for name in ("images", "cases"):
        table = pq.read_table(items / f"{name}.parquet")
        pq.write_table(table.replace_schema_metadata(None), items / f"{name}.parquet")
    before = {p.name: p.read_bytes() for p in items.iterdir()}
    capsys.readouterr()

    new_out = tmp_path / "new.report.json"
    assert _evaluate(sample_release, runs["empty-v2"], new_out, "--items", str(items)) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and str(items) in error and "--items" in error
    assert "record no report" in error and error.endswith("pass --force to replace them")
    assert {p.name: p.read_bytes() for p in items.iterdir()} == before
    assert not new_out.exists()

    capsys.readouterr()
    assert (
        _evaluate(sample_release, runs["empty-v2"], new_out, "--items", str(items), "--force") == 0
    )
    assert json.loads(new_out.read_text())["items"]["images"] == "old-items/images.parquet"
    # Replaced, and said so: the files, and that they record no version (new.report.json
    # is not the report that pointed at them).
    [warning] = capsys.readouterr().err.strip().splitlines()
    assert warning.startswith("nova evaluate: warning: replaced the per-item tables of an older")
    assert str(items) in warning and all(name in warning for name in before)
    assert "version is not recorded" in warning


def _older_tables(release: Path, predictions: Path, out: Path, items: Path) -> None:
    """Tables and their report as a novabench before the pins wrote them (no run id)."""
    import pyarrow.parquet as pq

    assert _evaluate(release, predictions, out, "--items", str(items)) == 0
    report = json.loads(out.read_text())
    report["items"] = {key: report["items"][key] for key in ("images", "cases")}
    report["toolkit"]["version"] = "0.0.9"
    out.write_text(json.dumps(report))
    for name in ("images", "cases"):
        table = pq.read_table(items / f"{name}.parquet")
        pq.write_table(table.replace_schema_metadata(None), items / f"{name}.parquet")


def test_forcing_over_older_tables_names_the_version_of_the_report_replaced_with_them(
    sample_release: Path, runs: dict[str, Path], tmp_path: Path, capsys
) -> None:
    out, items = tmp_path / "r.json", tmp_path / "items"
    _older_tables(sample_release, runs["oracle-v1"], out, items)
    capsys.readouterr()

    assert _evaluate(sample_release, runs["empty-v2"], out, "--items", str(items), "--force") == 0
    [warning] = capsys.readouterr().err.strip().splitlines()
    assert warning.startswith("nova evaluate: warning: ")
    assert "images.parquet, images.csv, cases.parquet, cases.csv" in warning
    assert f"written by novabench 0.0.9, the version of {out}" in warning

    capsys.readouterr()  # the tables are this novabench's now: replaced without a word
    assert _evaluate(sample_release, runs["oracle-v1"], out, "--items", str(items), "--force") == 0
    assert capsys.readouterr().err == ""
