"""The one-call API (`novabench.evaluate_model`): the same report as `nova run` + `nova evaluate`.

Three kinds of model go through it, as a researcher would pass them: a plain function, an
OpenAI-compatible endpoint (the suite's fake server) and a real transformers pipeline (the
offline tiny LLaVA, slow). Each report must equal, number for number, what the command line
gives for the same answers.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from novabench import evaluate_model
from novabench.cli import main
from novabench.errors import NovaInputError
from novabench.evaluator import CallableBackend, Endpoint, NovaReport, as_backend
from novabench.report.items import read_item_tables
from novabench.report.render import render_markdown, report_first_lines, shareable_paths
from novabench.run.backends import model_display_name
from tests.fake_openai_server import FakeOpenAIServer, request_text

NO_BERTSCORE = {"exclude": ["BERTScore-F1"]}
RESAMPLES = 50


def _digest(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)


def answer_from_text(text: str, has_image: bool) -> str:
    """A deterministic answer per task, varied enough that every metric moves."""
    seed = _digest(text)
    if "most_likely_diagnosis" in text or not has_image:
        names = ["glioblastoma", "meningioma", "multiple sclerosis", "abscess", "metastasis"]
        first = names[seed % 5]
        return json.dumps({"most_likely_diagnosis": first, "other_possible_diagnoses": names[:4]})
    if "[ymin, xmin, ymax, xmax]" in text or "no target" in text:
        if seed % 4 == 0:
            return "no target"
        top, left = 200 + seed % 300, 150 + (seed >> 4) % 400
        return f"lesion: [{top}, {left}, {top + 250}, {left + 200}]"
    return ["Axial FLAIR: right frontal hyperintensity.", "Normal brain MRI."][seed % 2]


def image_aware_answer(image: Any, prompt: str) -> str:
    """A function model: the answer depends on the image's pixels and the prompt."""
    key = prompt if image is None else prompt + hashlib.sha256(image.tobytes()).hexdigest()
    return answer_from_text(key if image is None else prompt + key[-16:], image is not None)


def _as_written(value: Any) -> Any:
    """The value as the report's JSON holds it: NaN (an undefined metric) is null."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {key: _as_written(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_as_written(item) for item in value]
    return value


def _numbers(report: dict[str, Any]) -> dict[str, Any]:
    """What two reports of the same answers must share: every score, note and count."""
    keys = ("tasks", "human_reference", "breakdowns", "bootstrap", "answered_only")
    return {key: _as_written(report[key]) for key in keys}


def _cli_report(release: Path, run_file: Path, out: Path) -> dict[str, Any]:
    arguments = ["evaluate", "--data", str(release), "--predictions", str(run_file)]
    arguments += ["--out", str(out), "--bootstrap", str(RESAMPLES), "--exclude", "BERTScore-F1"]
    arguments += ["--items", str(out.parent / f"{out.stem}-items"), "--quiet"]
    assert main(arguments) == 0
    return json.loads(out.read_text())


def test_a_function_gives_the_report_nova_evaluate_gives_for_its_answers(sample_release, tmp_path):
    run_file = tmp_path / "function.jsonl"
    report = evaluate_model(
        image_aware_answer,
        sample_release,
        run_file=run_file,
        n_resamples=RESAMPLES,
        caption_options=NO_BERTSCORE,
        progress=False,
    )
    assert isinstance(report, NovaReport) and report.run_file == run_file
    assert report.model == "image_aware_answer"
    cli = _cli_report(sample_release, run_file, tmp_path / "cli.json")
    assert _numbers(report.report) == _numbers(cli)
    # The same provenance, once named as a shared report names it (relative to its folder).
    shared = shareable_paths(report.report, tmp_path / "cli.json")
    assert shared["predictions"] == cli["predictions"] and shared["data"] == cli["data"]

    # The tables are those `--items` writes, row for row (both read back from Parquet).
    report.tables.write(tmp_path / "api-items")
    for name in ("images", "cases"):
        written = pd.read_parquet(tmp_path / "cli-items" / f"{name}.parquet")
        ours = pd.read_parquet(tmp_path / "api-items" / f"{name}.parquet")
        assert len(ours) == len(getattr(report, name))
        pd.testing.assert_frame_equal(ours, written)

    # The headline is the report's headline keys, in percent, with their intervals.
    headline = report.headline
    top1 = headline[(headline.task == "diagnosis") & (headline.metric == "top1-lexicon")].iloc[0]
    assert top1.value == pytest.approx(100 * cli["tasks"]["diagnosis"]["metrics"]["top1-lexicon"])
    low, high = cli["tasks"]["diagnosis"]["confidence_intervals"]["top1-lexicon"]
    assert (top1.ci_low, top1.ci_high) == pytest.approx((100 * low, 100 * high))
    assert set(headline.task) == {"localization", "captioning", "diagnosis"}
    # beside each value, how far it compares with the paper's figure of that name
    assert top1.vs_paper == "no: another quantity"
    map30 = headline[headline.metric == "mAP@30"].iloc[0]
    # the paper's definition, but scored on the synthetic sample: no figure of the paper fits
    assert map30.vs_paper == "no: not the NOVA release"
    assert "mAP@30" in report.to_text() and report.to_markdown().startswith("# NOVA evaluation")


def test_a_second_call_with_the_same_run_file_resumes_without_asking(sample_release, tmp_path):
    calls: list[str] = []

    def counting(image: Any, prompt: str) -> str:
        calls.append(prompt)
        return image_aware_answer(image, prompt)

    settings = dict(
        run_file=tmp_path / "run.jsonl",
        n_resamples=0,
        caption_options=NO_BERTSCORE,
        progress=False,
        name="counting",
    )
    first = evaluate_model(counting, sample_release, **settings)
    asked = len(calls)
    assert asked == 2 * len(first.release.images) + len(first.release.cases())
    second = evaluate_model(counting, sample_release, **settings)
    assert len(calls) == asked  # nothing asked again
    assert second.run_summary is not None and second.run_summary.n_answered == 0
    for task, section in second.report["tasks"].items():  # the resume says so, then as before
        assert section["notes"].pop(0).startswith(f"resumed {tmp_path / 'run.jsonl'}: ")
        from_file = section["coverage"].pop("answers_from_run_file")
        assert from_file == first.report["tasks"][task]["coverage"]["answered"]
    assert _numbers(second.report) == _numbers(first.report)


def test_the_release_is_read_once_and_scored_as_it_was_run(sample_release, tmp_path, monkeypatch):
    # evaluate_model read the release for the run, then again (from its folder) to score.
    import novabench.data.release as release_module
    from novabench.data.release import read_release

    reads: list[Path] = []

    def counting_read(path: Any, *args: Any, **kwargs: Any) -> Any:
        reads.append(Path(path))
        return read_release(path, *args, **kwargs)

    monkeypatch.setattr(release_module, "read_release", counting_read)
    settings = dict(tasks="diagnosis", n_resamples=0, progress=False)
    from_folder = evaluate_model(
        image_aware_answer, sample_release, run_file=tmp_path / "a.jsonl", **settings
    )
    assert reads == [Path(sample_release)]
    already_read = read_release(sample_release)
    given = evaluate_model(
        image_aware_answer, already_read, run_file=tmp_path / "b.jsonl", **settings
    )
    assert reads == [Path(sample_release)]  # the release given is not read again
    assert given.release is already_read
    # Named by its folder either way, as `nova evaluate` names it.
    assert given.report["data"] == from_folder.report["data"]
    assert given.report["data"]["path"] == str(Path(sample_release))


def test_a_limit_scores_only_what_was_answered_and_says_so(sample_release, tmp_path):
    report = evaluate_model(
        image_aware_answer,
        sample_release,
        tasks="diagnosis",
        limit=3,
        run_file=tmp_path / "part.jsonl",
        n_resamples=0,
        progress=False,
    )
    assert report.report["answered_only"] is True
    assert report.report["tasks"]["diagnosis"]["coverage"]["scored"] == 3
    assert len(report.cases) == 3
    # First after the synthetic-data notice the sample release carries.
    assert report.to_text().splitlines()[1].startswith("answered items only: diagnosis 3 of")


def test_a_limited_run_gives_the_numbers_of_nova_evaluate_answered_only(
    sample_release, tmp_path, capsys
):
    """user21: `limit=10` gave mAP@30 20.0 and `nova evaluate` of its run file 1.52: the CLI
    scores the items never asked as misses unless `--answered-only`, and its hint said only
    to run the model on them."""
    run_file = tmp_path / "limited.jsonl"
    report = evaluate_model(
        image_aware_answer,
        sample_release,
        tasks="localization",
        limit=4,
        run_file=run_file,
        n_resamples=0,
        progress=False,
    )
    capsys.readouterr()
    arguments = ["evaluate", "--data", str(sample_release), "--predictions", str(run_file)]
    arguments += ["--bootstrap", "0", "--task", "localization"]
    assert main([*arguments, "--out", str(tmp_path / "all.json")]) == 0
    hint = [line for line in capsys.readouterr().out.splitlines() if "what to do" in line]
    assert len(hint) == 1 and "--answered-only" in hint[0], hint
    assert "limit=4" in hint[0]
    assert main([*arguments, "--answered-only", "--out", str(tmp_path / "answered.json")]) == 0
    answered = json.loads((tmp_path / "answered.json").read_text())
    assert _numbers(report.report) == _numbers(answered)
    every = json.loads((tmp_path / "all.json").read_text())["tasks"]["localization"]
    assert every["coverage"]["missing"] == every["coverage"]["items"] - 4


def test_failures_of_the_function_are_counted_not_raised(sample_release, tmp_path):
    calls = []

    def flaky(image: Any, prompt: str) -> Any:
        calls.append(prompt)
        if len(calls) == 1:  # one answer first: failures after it never stop the run
            return "Axial FLAIR: a right frontal hyperintensity."
        if image is None:
            raise RuntimeError("CUDA out of memory")
        return 42  # not text

    report = evaluate_model(
        flaky,
        sample_release,
        tasks=["captioning", "diagnosis"],
        run_file=tmp_path / "flaky.jsonl",
        n_resamples=0,
        caption_options=NO_BERTSCORE,
        progress=False,
    )
    coverage = report.report["tasks"]["diagnosis"]["coverage"]
    assert coverage["errors"] == coverage["items"] == len(report.release.cases())
    captions = report.report["tasks"]["captioning"]["coverage"]
    assert captions["errors"] == captions["items"] - 1
    lines = [json.loads(line) for line in (tmp_path / "flaky.jsonl").read_text().splitlines()]
    assert {line["error"] for line in lines if line["task"] == "diagnosis"} == {
        "RuntimeError: CUDA out of memory"
    }
    assert {line.get("error") for line in lines if line["task"] == "captioning"} == {
        None,
        "the function returned int, not str",
    }


def test_an_endpoint_gives_the_report_of_nova_run_and_nova_evaluate(sample_release, tmp_path):
    def answer(body: dict[str, Any]) -> str:
        text, image_url = request_text(body)
        # The image's bytes vary the answer as the function model's pixels do.
        key = text if image_url is None else text + hashlib.sha256(image_url.encode()).hexdigest()
        return answer_from_text(key, image_url is not None)

    with FakeOpenAIServer(keep_alive=True) as server:
        server.answer = answer
        cli_run = tmp_path / "cli-run.jsonl"
        arguments = ["run", "--data", str(sample_release), "--task", "all"]
        arguments += ["--endpoint", server.base_url, "--model-name", "served-model"]
        arguments += ["--out", str(cli_run), "--quiet"]
        assert main(arguments) == 0
        report = evaluate_model(
            Endpoint(server.base_url, "served-model"),
            sample_release,
            run_file=tmp_path / "api-run.jsonl",
            n_resamples=RESAMPLES,
            caption_options=NO_BERTSCORE,
            progress=False,
        )
    cli = _cli_report(sample_release, cli_run, tmp_path / "cli.json")
    assert _numbers(report.report) == _numbers(cli)
    assert report.model == "served-model"
    parse = report.report["tasks"]["localization"]["coverage"]["parse_status"]
    assert parse.get("ok", 0) > 0 and parse.get("no_target", 0) > 0  # real boxes were read


def test_save_writes_what_nova_evaluate_writes(sample_release, tmp_path):
    report = evaluate_model(
        image_aware_answer,
        sample_release,
        tasks="localization",
        run_file=tmp_path / "loc.jsonl",
        n_resamples=0,
        progress=False,
    )
    paths = report.save(tmp_path / "out")
    saved = json.loads(paths["report"].read_text())
    assert _numbers(saved) == _numbers(report.report)
    assert not os.path.isabs(saved["data"]["path"])  # a shared report names no local folder
    assert saved["items"]["images"] == "items/images.parquet"
    # The tables are pinned to this report: the readers of nova evaluate's files accept them.
    tables = read_item_tables(saved, paths["report"])
    assert len(tables["images"]) == len(report.images)
    assert paths["markdown"].read_text() == render_markdown(
        shareable_paths(report.report, paths["report"])
    )
    # The notices the Markdown shows first, for programs, as nova evaluate writes them.
    assert saved["notices"] == report_first_lines(shareable_paths(report.report, paths["report"]))
    assert saved["notices"][0].startswith("notice: NOT THE REAL DATA: ")
    assert paths["html"].read_text().lstrip().lower().startswith("<!doctype html>")
    assert str(tmp_path) not in paths["markdown"].read_text() + paths["report"].read_text()


def test_what_is_not_a_model_is_refused_in_one_line():
    with pytest.raises(NovaInputError, match="a URL is a server, not a model"):
        as_backend("https://api.example.org/v1")
    with pytest.raises(NovaInputError, match="cannot evaluate a int"):
        as_backend(3)
    with pytest.raises(NovaInputError, match="expected a function"):
        CallableBackend("not callable")  # type: ignore[arg-type]
    with pytest.raises(NovaInputError, match="SOME_UNSET_KEY"):
        Endpoint("http://127.0.0.1:9/v1", "m", api_key_env="SOME_UNSET_KEY").backend()
    with pytest.raises(NovaInputError, match="not the key itself") as refused:
        Endpoint("http://127.0.0.1:9/v1", "m", api_key_env="sk-live-4f9a8b7c6d5e").backend()
    assert "sk-live" not in str(refused.value)


def test_display_names_are_the_models_own_never_a_local_path(tmp_path):
    folder = tmp_path / "models" / "my-vlm"
    folder.mkdir(parents=True)
    assert model_display_name(str(folder)) == "my-vlm"
    assert model_display_name(str(folder) + "/") == "my-vlm"
    assert model_display_name("Qwen/Qwen2.5-VL-72B-Instruct") == "Qwen/Qwen2.5-VL-72B-Instruct"
    assert model_display_name("./relative/checkpoint-500") == "checkpoint-500"
    assert CallableBackend(lambda image, prompt: "").name == "function"
    assert Endpoint("http://h/v1", "served", name="Mine").backend().display_name == "Mine"
    assert as_backend(Endpoint("http://h/v1", "served"), name="Other").display_name == "Other"


@pytest.mark.slow
def test_a_transformers_pipeline_gives_the_report_of_nova_run_and_nova_evaluate(
    sample_release, tmp_path
):
    from transformers import pipeline

    from tests.run.tiny_vlm import build_tiny_llava

    folder = build_tiny_llava(tmp_path / "tiny-llava")
    cli_run = tmp_path / "cli-run.jsonl"
    arguments = ["run", "--data", str(sample_release), "--task", "all", "--model", str(folder)]
    arguments += ["--out", str(cli_run), "--max-new-tokens", "6", "--quiet"]
    assert main(arguments) == 0
    manifest = json.loads(Path(f"{cli_run}.manifest.json").read_text())
    assert manifest["model"] == "tiny-llava"  # the folder's name, not its path

    pipe = pipeline("image-text-to-text", model=str(folder))
    from novabench.run.backends import TransformersBackend

    backend = TransformersBackend(pipe, max_new_tokens=6)
    report = evaluate_model(
        backend,
        sample_release,
        run_file=tmp_path / "api-run.jsonl",
        n_resamples=RESAMPLES,
        caption_options=NO_BERTSCORE,
        progress=False,
    )
    assert report.model == "tiny-llava"
    cli = _cli_report(sample_release, cli_run, tmp_path / "cli.json")
    assert _numbers(report.report) == _numbers(cli)
    # A bare pipeline goes through the same backend with its defaults.
    bare = evaluate_model(
        pipe,
        sample_release,
        tasks="diagnosis",
        limit=2,
        run_file=tmp_path / "bare.jsonl",
        n_resamples=0,
        progress=False,
    )
    assert bare.model == "tiny-llava" and len(bare.cases) == 2


def test_a_users_wrapper_with_model_and_task_attributes_is_a_function(sample_release) -> None:
    """user18: a class answering (image, prompt) that keeps `model` and `task` attributes,
    as wrappers often do, was driven as a transformers pipeline: a bare AttributeError."""

    class MyVLM:
        def __init__(self) -> None:
            self.model = object()
            self.task = "localization"

        def __call__(self, image, prompt) -> str:
            return "no target"

    report = evaluate_model(
        MyVLM(), sample_release, tasks="localization", limit=3, n_resamples=0, progress=False
    )
    assert report.run_summary.counts["localization"]["answered"] == 3


def test_rows_of_load_nova_are_refused_before_any_model_is_loaded(sample_release) -> None:
    from novabench.data.hf import load_nova

    rows = load_nova(sample_release, "images")
    asked: list[str] = []
    with pytest.raises(NovaInputError, match=r"a Dataset \(rows of load_nova or load_dataset\) "
                       r"is no release: pass the release folder"):  # fmt: skip
        evaluate_model(
            lambda image, prompt: asked.append(prompt) or "",
            rows,
            tasks="diagnosis",
            progress=False,
        )
    assert asked == []
