"""The runner: requests per task, resume after a crash, shards, manifests, the transformers path, CLI."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from novabench.cli import main
from novabench.data.release import read_release
from novabench.errors import NovaInputError
from novabench.run.backends import Answer, Request, TransformersBackend, effective_input_size
from novabench.run.predictions import RunManifest, read_manifest, read_predictions
from novabench.run.prompts import TaskPrompt, default_prompt, prompt_hash, render_diagnosis_prompt
from novabench.run.runner import (
    in_shard,
    parse_shard,
    parse_tasks,
    repair_partial_last_line,
    run_model,
)
from tests.release_factory import write_v1_release
from tests.run.tiny_vlm import build_tiny_llava


@pytest.fixture(scope="module")
def release_dir(tmp_path_factory):
    return write_v1_release(tmp_path_factory.mktemp("release"), n_cases=4, image_size=(40, 32))


@pytest.fixture(scope="module")
def release(release_dir):
    return read_release(release_dir)  # 4 cases, 1+2+3+1 = 7 images


@pytest.fixture(scope="session")
def tiny_llava(tmp_path_factory):
    return build_tiny_llava(tmp_path_factory.mktemp("tiny-llava"))


class ScriptedBackend:
    """Answers in the protocol's formats; remembers every request; can fail on purpose."""

    def __init__(self, name="scripted", *, crash_after=None, fail_items=(), batch_size=2):
        self.name = name
        self.batch_size = batch_size
        self.crash_after = crash_after
        self.fail_items = set(fail_items)
        self.requests: list[Request] = []

    def describe(self):
        return {
            "type": "test",
            "model": self.name,
            "generation": {"max_new_tokens": 8},
            "batch_size": self.batch_size,
        }

    def generate(self, requests):
        answers = []
        for request in requests:
            if self.crash_after is not None and len(self.requests) >= self.crash_after:
                raise RuntimeError("simulated crash")
            self.requests.append(request)
            if request.item_id in self.fail_items:
                answers.append(Answer(error="simulated failure"))
            elif request.task == "localization":
                answers.append(
                    Answer(
                        text="lesion: [100, 200, 500, 600]",
                        latency_s=0.01,
                        input_size=request.image_size,
                    )
                )
            elif request.task == "captioning":
                answers.append(Answer(text=f"Axial T2 of {request.item_id}.", latency_s=0.01))
            else:
                answers.append(
                    Answer(
                        text='{"most_likely_diagnosis": "glioma", "other_possible_diagnoses": []}'
                    )
                )
        return answers


def lines_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_all_tasks_ask_the_right_questions_and_write_one_line_per_item(release, tmp_path):
    backend = ScriptedBackend()
    out = tmp_path / "raw.jsonl"
    summary = run_model(release, tasks="all", backend=backend, out_path=out, progress=False)

    n_images, cases = len(release.images), release.cases()
    none_cut = {"errors": 0, "too_long": 0, "hit_token_limit": 0}
    # The scripted backend does not say why its answers ended: each one is counted unknown.
    assert summary.counts == {
        "localization": {"items": n_images, "done_before": 0, "answered": n_images, **none_cut,
                         "finish_unknown": n_images},
        "captioning": {"items": n_images, "done_before": 0, "answered": n_images, **none_cut,
                       "finish_unknown": n_images},
        "diagnosis": {"items": len(cases), "done_before": 0, "answered": len(cases), **none_cut,
                      "finish_unknown": len(cases)},
    }  # fmt: skip
    assert summary.complete and summary.n_errors == 0

    by_task = {
        task: [r for r in backend.requests if r.task == task]
        for task in ("localization", "captioning", "diagnosis")
    }
    assert [r.item_id for r in by_task["localization"]] == [
        image.filename for image in release.images
    ]
    for request, image in zip(by_task["captioning"], release.images):
        assert request.image.mode == "RGB" and request.image.size == (image.width, image.height)
        assert request.prompt == default_prompt("captioning").text
        assert request.context == {
            "filename": image.filename,
            "case_id": image.case_id,
            "width": 40,
            "height": 32,
        }
    for request, case in zip(by_task["diagnosis"], cases):
        assert request.image is None and request.item_id == case.case_id
        assert case.clinical_history in request.prompt
        assert all(caption.splitlines()[0] in request.prompt for caption in case.captions)
        assert request.prompt == render_diagnosis_prompt(
            default_prompt("diagnosis"), case.clinical_history, case.captions
        )
        assert request.context["findings"] == case.captions

    lines = lines_of(out)
    assert len(lines) == 2 * n_images + len(cases)
    first = lines[0]
    assert first == {
        "filename": release.images[0].filename,
        "task": "localization",
        "raw_boxes": "lesion: [100, 200, 500, 600]",
        "input_size": [40, 32],
        "latency_s": 0.01,
        "model": "scripted",
    }
    assert all("input_size" not in line for line in lines if line["task"] != "localization")


def test_manifest_records_what_is_needed_to_reproduce_the_run(release, tmp_path):
    out = tmp_path / "raw.jsonl"
    mine = TaskPrompt.from_text("captioning", "Describe the slice briefly.", name="short.txt")
    run_model(
        release,
        tasks=["captioning", "diagnosis"],
        backend=ScriptedBackend(),
        out_path=out,
        prompts={"captioning": mine},
        box_convention="protocol",
        progress=False,
    )
    manifest = read_manifest(out)
    from importlib.metadata import version

    assert manifest["novabench_version"] == version("novabench")  # the installed distribution
    assert manifest["backend"] == {
        "type": "test",
        "model": "scripted",
        "generation": {"max_new_tokens": 8},
    }
    assert manifest["runtime"]["batch_size"] == 2  # how it ran, kept apart from what answered
    assert manifest["model"] == "scripted" and manifest["generation"] == {"max_new_tokens": 8}
    assert manifest["prompts"] == {
        "captioning": {"name": "short.txt", "sha256": prompt_hash("Describe the slice briefly.")},
        "diagnosis": {"name": "default", "sha256": prompt_hash(default_prompt("diagnosis").text)},
    }
    assert manifest["box_convention"] == "protocol" and manifest["shard"] is None
    assert manifest["tasks"] == ["captioning", "diagnosis"]
    assert manifest["release"]["fingerprint"] == release.fingerprint()
    assert manifest["status"] == "complete" and manifest["created_at"] <= manifest["updated_at"]
    assert manifest["counts"]["diagnosis"]["answered"] == len(release.cases())


def test_a_crash_midway_loses_nothing_and_the_rerun_finishes_without_duplicates(release, tmp_path):
    out = tmp_path / "raw.jsonl"
    crashing = ScriptedBackend(crash_after=5)
    with pytest.raises(RuntimeError, match="simulated crash"):
        run_model(release, tasks="all", backend=crashing, out_path=out, progress=False)
    written = lines_of(out)
    assert len(written) == 4  # answers of the completed batches (2 per batch) are on disk
    assert read_manifest(out)["status"] == "interrupted"

    resumed = ScriptedBackend()
    summary = run_model(release, tasks="all", backend=resumed, out_path=out, progress=False)
    assert summary.counts["localization"]["done_before"] == 4
    assert [r.item_id for r in resumed.requests[:3]] == [i.filename for i in release.images[4:]]
    assert lines_of(out)[:4] == written
    predictions = read_predictions(out, release)  # would raise on a duplicate
    assert all(
        predictions.missing(task) == [] for task in ("localization", "captioning", "diagnosis")
    )
    assert read_manifest(out)["status"] == "complete"


def test_a_cut_off_last_line_is_set_aside_and_the_item_asked_again(release, tmp_path):
    out = tmp_path / "raw.jsonl"
    run_model(release, tasks="captioning", backend=ScriptedBackend(), out_path=out, progress=False)
    complete = out.read_bytes()
    cut = complete[: complete.rstrip(b"\n").rfind(b"\n") + 1] + complete.splitlines()[-1][:25]
    out.write_bytes(cut)  # as if the process died while writing the last line
    # ...so its manifest is the one written as it started: running, over an empty file.
    started = RunManifest.read(out)
    started.status = "running"
    started.file = {"sha256": hashlib.sha256(b"").hexdigest(), "bytes": 0}
    started.write(out)

    resumed = ScriptedBackend()
    summary = run_model(release, tasks="captioning", backend=resumed, out_path=out, progress=False)
    assert [r.item_id for r in resumed.requests] == [release.images[-1].filename]
    assert summary.repaired_fragment.read_bytes() == complete.splitlines()[-1][:25]
    assert out.read_bytes().startswith(cut[: cut.rfind(b"\n") + 1])
    assert read_predictions(out, release).missing("captioning") == []


def test_repair_keeps_a_complete_last_line_that_only_lacks_its_newline(tmp_path):
    path = tmp_path / "raw.jsonl"
    path.write_text('{"case_id": "case0001", "raw_diagnoses": "a"}')
    assert repair_partial_last_line(path) is None
    assert path.read_text() == '{"case_id": "case0001", "raw_diagnoses": "a"}\n'
    assert repair_partial_last_line(path) is None and len(list(tmp_path.iterdir())) == 1


def test_failed_items_are_recorded_counted_and_retried_on_rerun(release, tmp_path):
    out = tmp_path / "raw.jsonl"
    bad = release.images[2].filename
    summary = run_model(
        release,
        tasks="localization",
        backend=ScriptedBackend(fail_items={bad}),
        out_path=out,
        progress=False,
    )
    assert summary.counts["localization"]["errors"] == 1 and not summary.complete
    assert read_manifest(out)["status"] == "complete-with-errors"
    failed = [line for line in lines_of(out) if "error" in line]
    assert failed == [
        {"filename": bad, "task": "localization", "error": "simulated failure", "model": "scripted"}
    ]

    retry = ScriptedBackend()
    summary = run_model(release, tasks="localization", backend=retry, out_path=out, progress=False)
    assert [r.item_id for r in retry.requests] == [bad] and summary.complete
    predictions = read_predictions(out, release)
    assert predictions.superseded == 1 and predictions.errors("localization") == {}


def test_resuming_with_another_configuration_is_refused(release, tmp_path):
    out = tmp_path / "raw.jsonl"
    run_model(
        release,
        tasks="captioning",
        backend=ScriptedBackend(),
        out_path=out,
        progress=False,
        limit=2,
    )
    with pytest.raises(NovaInputError) as caught:
        run_model(
            release,
            tasks="captioning",
            backend=ScriptedBackend("other-model"),
            out_path=out,
            progress=False,
        )
    assert caught.value.field == "backend"
    other_prompt = {"captioning": TaskPrompt.from_text("captioning", "Say anything.")}
    with pytest.raises(NovaInputError) as caught:
        run_model(
            release,
            tasks="captioning",
            backend=ScriptedBackend(),
            out_path=out,
            prompts=other_prompt,
            progress=False,
        )
    assert caught.value.field == "prompts.captioning"
    with pytest.raises(NovaInputError) as caught:
        run_model(
            release,
            tasks="captioning",
            backend=ScriptedBackend(),
            out_path=out,
            shard=(0, 2),
            progress=False,
        )
    assert caught.value.field == "shard"
    # A runtime setting (batch size) may change; so may the task list.
    summary = run_model(
        release, tasks="all", backend=ScriptedBackend(batch_size=3), out_path=out, progress=False
    )
    assert summary.counts["captioning"]["done_before"] == 2 and summary.complete
    assert read_manifest(out)["tasks"] == ["localization", "captioning", "diagnosis"]
    # Once the answers are deleted, a stale manifest no longer binds the file name.
    out.unlink()
    run_model(
        release,
        tasks="diagnosis",
        backend=ScriptedBackend("other-model"),
        out_path=out,
        progress=False,
    )
    assert read_manifest(out)["model"] == "other-model" and read_manifest(out)["tasks"] == [
        "diagnosis"
    ]


def test_a_run_on_the_release_resumes_on_its_export_and_not_on_other_data(sample_release, tmp_path):
    from novabench.data.export import export_release

    # The sample's boxes survive float32 exactly, so its export has the same fingerprint
    # (release_dir's deliberately float32-unfriendly boxes would not).
    release = read_release(sample_release)
    out = tmp_path / "raw.jsonl"
    run_model(
        release,
        tasks="captioning",
        backend=ScriptedBackend(),
        out_path=out,
        progress=False,
        limit=3,
    )
    exported = read_release(
        export_release(sample_release, tmp_path / "export", progress=False).out_dir
    )
    assert exported.layout == "export" and exported.fingerprint() == release.fingerprint()
    summary = run_model(
        exported, tasks="captioning", backend=ScriptedBackend(), out_path=out, progress=False
    )
    assert summary.counts["captioning"]["done_before"] == 3 and summary.complete
    # Shards of one run made on the folder and on its export merge too (same content).
    shards = [tmp_path / "s0.jsonl", tmp_path / "s1.jsonl"]
    for index, data in enumerate((release, exported)):
        run_model(
            data,
            tasks="diagnosis",
            backend=ScriptedBackend(),
            out_path=shards[index],
            shard=(index, 2),
            progress=False,
        )
    assert (
        main(
            [
                "merge",
                *map(str, shards),
                "--out",
                str(tmp_path / "m.jsonl"),
                "--data",
                str(sample_release),
            ]
        )
        == 0
    )
    # Other content (one caption changed) is still refused.
    edited = read_release(sample_release)
    edited.images[0].caption = (edited.images[0].caption or "") + " Edited."
    with pytest.raises(NovaInputError) as caught:
        run_model(
            edited, tasks="captioning", backend=ScriptedBackend(), out_path=out, progress=False
        )
    assert caught.value.field == "release"


def test_a_foreign_file_is_never_appended_to(release, tmp_path):
    out = tmp_path / "mine.jsonl"
    out.write_text('{"case_id": "case0001", "diagnoses": ["x"]}\n')
    with pytest.raises(NovaInputError, match="no manifest"):
        run_model(
            release, tasks="diagnosis", backend=ScriptedBackend(), out_path=out, progress=False
        )
    assert out.read_text() == '{"case_id": "case0001", "diagnoses": ["x"]}\n'


def test_limit_and_bad_arguments(release, tmp_path):
    summary = run_model(
        release,
        tasks="diagnosis",
        backend=ScriptedBackend(),
        out_path=tmp_path / "a.jsonl",
        limit=2,
        progress=False,
    )
    assert summary.counts["diagnosis"]["items"] == 2 and len(lines_of(tmp_path / "a.jsonl")) == 2
    for kwargs, field in [
        ({"tasks": "segmentation"}, "tasks"),
        ({"tasks": "all", "box_convention": "yxyx"}, "box_convention"),
        ({"tasks": "all", "shard": "2/2"}, "shard"),
        ({"tasks": "all", "limit": -1}, "limit"),
        ({"tasks": "captioning", "prompts": {"diagnosis": default_prompt("diagnosis")}}, "prompts"),
    ]:
        with pytest.raises(NovaInputError) as caught:
            run_model(
                release,
                backend=ScriptedBackend(),
                out_path=tmp_path / "b.jsonl",
                progress=False,
                **kwargs,
            )
        assert caught.value.field == field, kwargs


def test_unknown_box_convention_is_worded_as_in_parse_and_evaluate(release, tmp_path):
    # nova parse / evaluate say "box_convention='yxyx': unknown box convention; choose one
    # of auto, ..."; run_model said "expected one of" in its own words.
    with pytest.raises(NovaInputError) as caught:
        run_model(
            release,
            tasks="localization",
            backend=ScriptedBackend(),
            out_path=tmp_path / "b.jsonl",
            box_convention="yxyx",
            progress=False,
        )
    assert caught.value.message == (
        "box_convention='yxyx': unknown box convention; choose one of auto, protocol, qwen, "
        "xyxy_norm1, xyxy_norm1000, xyxy_pixel, xywh_pixel, yxyx_norm1"
    )
    assert not (tmp_path / "b.jsonl").exists()


def test_a_backend_that_loses_answers_stops_the_run(release, tmp_path):
    class Lossy(ScriptedBackend):
        def generate(self, requests):
            return super().generate(requests)[:-1]

    with pytest.raises(RuntimeError, match="returned 1 answers for 2 requests"):
        run_model(
            release,
            tasks="captioning",
            backend=Lossy(),
            out_path=tmp_path / "a.jsonl",
            progress=False,
        )


def test_shards_cover_every_item_exactly_once_and_merge(release, release_dir, tmp_path, capsys):
    shard_paths = []
    for index in range(2):
        path = tmp_path / f"shard{index}.jsonl"
        run_model(
            release,
            tasks="all",
            backend=ScriptedBackend(),
            out_path=path,
            shard=(index, 2),
            progress=False,
        )
        shard_paths.append(path)
    keys = [
        {(line["task"], line.get("filename") or line.get("case_id")) for line in lines_of(p)}
        for p in shard_paths
    ]
    assert keys[0] and keys[1] and not keys[0] & keys[1]
    everything = {(t, i.filename) for t in ("localization", "captioning") for i in release.images}
    everything |= {("diagnosis", c.case_id) for c in release.cases()}
    assert keys[0] | keys[1] == everything
    # The same image falls in the same shard for both image tasks.
    assert {k for t, k in keys[0] if t == "localization"} == {
        k for t, k in keys[0] if t == "captioning"
    }

    merged = tmp_path / "merged.jsonl"
    code = main(["merge", *map(str, shard_paths), "--out", str(merged), "--data", str(release_dir)])
    assert code == 0
    predictions = read_predictions(merged, release)
    assert all(
        predictions.missing(task) == [] for task in ("localization", "captioning", "diagnosis")
    )
    assert read_manifest(merged)["shard"] is None and read_manifest(merged)["missing_shards"] == []
    partial = tmp_path / "partial.jsonl"
    assert (
        main(["merge", str(shard_paths[0]), "--out", str(partial), "--data", str(release_dir)]) == 0
    )
    assert read_manifest(partial)["missing_shards"] == [1]
    assert "shard(s) [1]" in capsys.readouterr().err  # said aloud, not only in the manifest
    # Exactly the other shard's items are missing.
    partial_predictions = read_predictions(partial, release)
    for task in ("localization", "captioning", "diagnosis"):
        assert sorted(partial_predictions.missing(task)) == sorted(
            k for t, k in keys[1] if t == task
        )
    assert main(["merge", *map(str, shard_paths), "--out", str(merged)]) == 2  # exists: refused


def test_shard_helpers():
    assert parse_shard("0/1") == (0, 1) and parse_shard((3, 4)) == (3, 4)
    for bad in ("1/1", "a/2", "1-2", "-1/2", (0, 0)):
        with pytest.raises(NovaInputError) as info:
            parse_shard(bad)
        assert info.value.field == "shard", bad
    ids = [f"case{i:04d}_00{j}.png" for i in range(200) for j in range(1, 3)]
    # Every item falls in exactly one of the four shards, and no shard is empty.
    assert all(sum(in_shard(item, (k, 4)) for k in range(4)) == 1 for item in ids)
    counts = [sum(in_shard(item, (k, 4)) for item in ids) for k in range(4)]
    assert min(counts) > 0
    assert parse_tasks(["captioning", "all"]) == ("localization", "captioning", "diagnosis")


def test_effective_input_size_reads_the_patch_grid_of_dynamic_processors():
    import numpy as np
    from PIL import Image

    class GridProcessor:
        patch_size = 14

        def __call__(self, images, return_tensors):
            width, height = images[0].size
            return {"image_grid_thw": np.array([[1, round(height / 14), round(width / 14)]])}

    class FixedProcessor:
        def __call__(self, images, return_tensors):
            return {"pixel_values": np.zeros((1, 3, 28, 28))}

    image = Image.new("RGB", (480, 470))
    assert effective_input_size(GridProcessor(), image) == (
        14 * round(480 / 14),
        14 * round(470 / 14),
    )
    assert effective_input_size(FixedProcessor(), image) is None


class GreedyDecoder:
    """Stands in for a decoder-only model: ``generate`` returns prompt + new token ids, each
    row padded (id 0) after its end token (id 2) to the batch's longest, as transformers does."""

    config = type("Config", (), {"is_encoder_decoder": False})()
    generation_config = type("GenerationConfig", (), {"eos_token_id": 2})()
    name_or_path = "greedy-decoder"

    def __init__(self, new_tokens):
        self.new_tokens = new_tokens  # per request, in order: the ids it generates
        self.calls = 0

    def generate(self, input_ids, max_new_tokens, **_settings):
        import numpy as np

        rows = [self.new_tokens[self.calls + i][:max_new_tokens] for i in range(len(input_ids))]
        self.calls += len(input_ids)
        width = max(len(row) for row in rows)
        padded = [row + [0] * (width - len(row)) for row in rows]
        return np.concatenate([input_ids, np.array(padded)], axis=1)


class TextPipeline:
    """Stands in for ``pipeline("image-text-to-text")``: tokenises, generates, gives text only."""

    tokenizer = None

    def __init__(self, model):
        self.model = model

    def __call__(self, chats, *, batch_size, max_new_tokens, return_full_text, generate_kwargs):
        import numpy as np

        prompts = np.array([[5, 6, 7]] * len(chats))
        sequences = self.model.generate(input_ids=prompts, max_new_tokens=max_new_tokens)
        return [[{"generated_text": " ".join(map(str, row[3:]))}] for row in sequences.tolist()]


def test_a_local_model_answer_cut_at_max_new_tokens_is_recorded_as_such(release, tmp_path):
    """A pipeline answer that used up max_new_tokens is "length" on its line, as an endpoint's
    is; one that ended with its end token is not marked (the manifest counts no unknown end)."""
    # 3 requests, max_new_tokens 4: ended at its end token / used all 4 / ended at token 4.
    model = GreedyDecoder([[11, 12, 2], [11, 12, 13, 14, 15], [11, 12, 13, 2]])
    backend = TransformersBackend(TextPipeline(model), batch_size=3, max_new_tokens=4)
    answers = backend.generate(
        [Request(f"case000{i}", "diagnosis", "History: ...") for i in (1, 2, 3)]
    )
    assert [a.finish_reason for a in answers] == ["stop", "length", "stop"]
    assert "generate" not in vars(model)  # the model is left as it was

    model = GreedyDecoder([[11, 2]] * 2 + [[11, 12, 13, 14, 15]] * 2)
    backend = TransformersBackend(TextPipeline(model), batch_size=2, max_new_tokens=4)
    out = tmp_path / "raw.jsonl"
    summary = run_model(release, tasks="diagnosis", backend=backend, out_path=out, progress=False)
    marked = {line["case_id"]: line.get("finish_reason") for line in lines_of(out)}
    assert sorted(marked.values(), key=str) == [None, None, "length", "length"]
    assert summary.counts["diagnosis"]["hit_token_limit"] == 2
    assert read_manifest(out)["counts"]["diagnosis"]["finish_unknown"] == 0


# Building and loading the tiny LLaVA (torch, transformers) takes 10-20 s on 2 shared
# cores; the runner's own path is covered in the fast run through the baselines.
@pytest.mark.slow
def test_transformers_backend_end_to_end_on_a_tiny_llava(release, tiny_llava, tmp_path):
    backend = TransformersBackend(str(tiny_llava), batch_size=3, max_new_tokens=4)
    description = backend.describe()
    assert description["type"] == "transformers" and description["model"] == str(tiny_llava)
    assert description["model_class"] == "LlavaForConditionalGeneration"
    assert description["generation"] == {"max_new_tokens": 4, "do_sample": False}
    assert "transformers" in description["versions"] and description["device"] == "cpu"

    out = tmp_path / "raw.jsonl"
    summary = run_model(release, tasks="all", backend=backend, out_path=out, progress=False)
    assert summary.complete and summary.n_errors == 0
    lines = lines_of(out)
    assert len(lines) == 2 * len(release.images) + len(release.cases())
    raw_field = {
        "localization": "raw_boxes",
        "captioning": "raw_caption",
        "diagnosis": "raw_diagnoses",
    }
    for line in lines:
        assert isinstance(line[raw_field[line["task"]]], str)
        # Reports name the model by its folder's name, never by where it sits here.
        assert line["model"] == tiny_llava.name and line["latency_s"] >= 0
        if line["task"] == "localization":
            assert line["input_size"] == [
                40,
                32,
            ]  # a fixed-size processor: the original size is kept
    manifest = read_manifest(out)
    assert manifest["backend"]["model_class"] == "LlavaForConditionalGeneration"
    # Why each answer ended is read from the generated tokens: none is left unknown.
    assert all(c["finish_unknown"] == 0 for c in manifest["counts"].values())
    cut = sum(c["hit_token_limit"] for c in manifest["counts"].values())
    assert cut == sum(line.get("finish_reason") == "length" for line in lines)
    # Which image backend transformers chose (torchvision or PIL) is part of the record.
    assert (
        manifest["backend"]["image_processor_class"] == "LlavaImageProcessorPil"
    )  # no torchvision here
    assert manifest["runtime"]["batch_size"] == 3 and manifest["runtime"]["device"] == "cpu"

    # Mixed image and text requests in one call are split into separate batches.
    image = read_release(release.root).images[0]
    from PIL import Image

    with Image.open(image.image_path) as opened:
        picture = opened.convert("RGB")
    answers = backend.generate(
        [
            Request("x.png", "captioning", "Describe.", picture),
            Request("case0001", "diagnosis", "Why?"),
        ]
    )
    assert [type(a.text) for a in answers] == [str, str]
    assert answers[0].input_size == (40, 32) and answers[1].input_size is None


# Building and loading the tiny LLaVA (torch, transformers) takes 10-20 s on 2 shared
# cores; the runner's own path is covered in the fast run through the baselines.
@pytest.mark.slow
def test_nova_run_then_parse_on_the_tiny_llava(release_dir, tiny_llava, tmp_path, capsys):
    raw, parsed = tmp_path / "raw.jsonl", tmp_path / "pred.jsonl"
    arguments = [
        "run",
        "--data",
        str(release_dir),
        "--task",
        "all",
        "--model",
        str(tiny_llava),
        "--out",
        str(raw),
        "--limit",
        "2",
        "--max-new-tokens",
        "3",
        "--batch-size",
        "2",
        "--no-progress",
    ]
    assert main(arguments) == 0
    assert len(lines_of(raw)) == 6
    assert main(arguments) == 0  # resumed: nothing left to ask
    assert "already done     2" in capsys.readouterr().out
    assert len(lines_of(raw)) == 6

    assert main(["parse", str(raw), "--data", str(release_dir), "--out", str(parsed)]) == 0
    printed = capsys.readouterr().out
    assert "localization" in printed and "parse:" in printed
    release = read_release(release_dir)
    predictions = read_predictions(parsed, release)
    counts = predictions.summary()
    assert sum(counts["localization"]["parse_status"].values()) == 2
    assert sum(counts["diagnosis"]["parse_status"].values()) == 2
    assert len(predictions.localization()) == len(
        release.images
    )  # aligned; unasked images are missing
    assert counts["localization"]["missing"] == len(release.images) - 2
    assert read_manifest(parsed)["parsed"]["box_convention"] == "auto"
    assert (
        main(["parse", str(raw), "--data", str(release_dir), "--out", str(parsed)]) == 2
    )  # exists


def test_nova_run_with_a_baseline_or_bad_arguments(release_dir, tmp_path, capsys):
    out = str(tmp_path / "raw.jsonl")
    base = ["run", "--data", str(release_dir), "--task", "all", "--out", out, "--no-progress"]
    assert main([*base, "--model", "x", "--prompt-file", "localization"]) == 2
    assert main([*base, "--model", "x", "--shard", "3/2"]) == 2
    assert main([*base, "--endpoint", "http://127.0.0.1:9/v1"]) == 2  # no --model-name
    assert "--model-name" in capsys.readouterr().err
    assert main([*base, "--model", "x", "--baseline", "floor"]) == 2  # two sources
    assert "not allowed with argument" in capsys.readouterr().err
    code = main([*base, "--baseline", "no-such-baseline"])
    assert code == 2 and "baseline" in capsys.readouterr().err
    assert not Path(out).exists()


def test_a_model_that_cannot_be_loaded_is_a_clear_error_not_a_traceback(
    release_dir, tmp_path, capsys
):
    out = tmp_path / "raw.jsonl"
    missing = tmp_path / "no-such-model"
    code = main(
        [
            "run",
            "--data",
            str(release_dir),
            "--task",
            "captioning",
            "--model",
            str(missing),
            "--out",
            str(out),
            "--no-progress",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert "cannot load" in err and str(missing) in err and "--model" in err
    assert "Traceback" not in err and not out.exists()


def test_out_of_memory_at_load_is_not_dressed_up_as_a_wrong_model(monkeypatch):
    import sys
    import types

    import torch

    def out_of_memory(**_):
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    def missing(**_):
        raise OSError("no such repo")

    # A stand-in transformers module: _load imports `pipeline` from it at call time.
    monkeypatch.setitem(sys.modules, "transformers", types.SimpleNamespace(pipeline=out_of_memory))
    with pytest.raises(torch.OutOfMemoryError):
        TransformersBackend("some/model")
    monkeypatch.setitem(sys.modules, "transformers", types.SimpleNamespace(pipeline=missing))
    with pytest.raises(NovaInputError, match="cannot load 'some/model'.*no such repo"):
        TransformersBackend("some/model")


def test_trust_remote_code_reaches_the_pipeline(monkeypatch, release_dir, tmp_path):
    from novabench.run import backends

    seen = {}

    def fake_load(model, **options):
        seen.update(options, model=model)
        raise NovaInputError("stop here", field="--model")

    monkeypatch.setattr(backends.TransformersBackend, "_load", staticmethod(fake_load))
    base = [
        "run",
        "--data",
        str(release_dir),
        "--task",
        "captioning",
        "--model",
        "m",
        "--out",
        str(tmp_path / "raw.jsonl"),
        "--no-progress",
    ]
    assert main(base) == 2 and seen["trust_remote_code"] is False
    assert main([*base, "--trust-remote-code"]) == 2 and seen["trust_remote_code"] is True


def test_a_task_the_backend_cannot_answer_is_refused_before_anything_is_written(
    release_dir, tmp_path, capsys
):
    out = tmp_path / "raw.jsonl"
    code = main(
        [
            "run",
            "--data",
            str(release_dir),
            "--task",
            "all",
            "--baseline",
            "outlier-detector",
            "--out",
            str(out),
            "--no-progress",
        ]
    )
    err = capsys.readouterr().err
    assert (
        code == 2
        and "does not answer captioning, diagnosis" in err
        and "(it answers localization); choose among those with --task or take another" in err
    )
    assert not out.exists()
    # The task it does answer runs as before.
    assert (
        main(
            [
                "run",
                "--data",
                str(release_dir),
                "--task",
                "localization",
                "--baseline",
                "outlier-detector",
                "--out",
                str(out),
                "--no-progress",
            ]
        )
        == 0
    )


class TunedBackend(ScriptedBackend):
    """The scripted backend with its own generation settings (e.g. a longer answer budget)."""

    def __init__(self, max_new_tokens: int, **kwargs):
        super().__init__(**kwargs)
        self.max_new_tokens = max_new_tokens

    def describe(self):
        return {**super().describe(), "generation": {"max_new_tokens": self.max_new_tokens}}


def test_runs_of_different_tasks_into_one_file_keep_every_tasks_settings(release, tmp_path):
    out = tmp_path / "raw.jsonl"
    run_model(
        release,
        tasks="localization",
        backend=TunedBackend(64),
        out_path=out,
        box_convention="xyxy_norm1000",
        progress=False,
    )
    # Captions asked later with the default convention and a larger budget: another task's
    # settings, so the file takes them without forgetting how the boxes were asked.
    run_model(release, tasks="captioning", backend=TunedBackend(256), out_path=out, progress=False)
    manifest = read_manifest(out)
    assert manifest["box_convention"] == "xyxy_norm1000"  # what `nova parse` reads boxes with
    assert manifest["task_settings"] == {
        "localization": {"generation": {"max_new_tokens": 64}, "box_convention": "xyxy_norm1000"},
        "captioning": {"generation": {"max_new_tokens": 256}},
    }
    assert manifest["generation"] is None and "generation" not in manifest["backend"]
    assert set(manifest["prompts"]) == {"localization", "captioning"}
    assert manifest["counts"]["localization"]["answered"] == 7  # 7 images, kept from run one
    assert manifest["counts"]["captioning"]["answered"] == 7
    # The same task again with other settings is still refused, naming the task and setting.
    for backend, convention, field in (
        (TunedBackend(64), "auto", "task_settings.localization.box_convention"),
        (TunedBackend(128), "xyxy_norm1000", "task_settings.localization.generation"),
    ):
        with pytest.raises(NovaInputError) as caught:
            run_model(
                release,
                tasks="localization",
                backend=backend,
                out_path=out,
                box_convention=convention,
                progress=False,
            )
        assert caught.value.field == field
    before = out.read_bytes()
    summary = run_model(
        release,
        tasks="localization",
        backend=TunedBackend(64),
        out_path=out,
        box_convention="xyxy_norm1000",
        progress=False,
    )
    assert summary.counts["localization"]["done_before"] == 7 and out.read_bytes() == before


def test_a_parse_output_is_refused_as_a_run_output_and_left_as_it_was(
    release_dir, tmp_path, capsys
):
    raw, parsed = tmp_path / "raw.jsonl", tmp_path / "raw.p.jsonl"
    run = ["run", "--data", str(release_dir), "--task", "diagnosis", "--baseline", "floor", "-q"]
    assert main([*run, "--out", str(raw), "--limit", "2"]) == 0
    assert main(["parse", str(raw), "--data", str(release_dir), "--out", str(parsed), "-q"]) == 0
    capsys.readouterr()
    manifest = parsed.with_name(parsed.name + ".manifest.json")
    # A cut-off last line must not be "repaired" either: nothing of the file is touched.
    with parsed.open("ab") as handle:
        handle.write(b'{"case_id": "case0')
    before = (parsed.read_bytes(), manifest.read_bytes())

    # A rerun that would ask the rest, and one that would ask nothing: both refused.
    for limit in ([], ["--limit", "2"]):
        assert main([*run, "--out", str(parsed), *limit]) == 2
        error = capsys.readouterr().err
        assert error.count("\n") == 1 and "Traceback" not in error
        assert f"{parsed}: is a `nova parse` output" in error
        assert f"run on the raw answers file ({raw}), then parse it again" in error
        assert (parsed.read_bytes(), manifest.read_bytes()) == before
        assert [p.name for p in tmp_path.iterdir() if ".partial-" in p.name] == []
        assert "parsed" in json.loads(manifest.read_text())


def test_a_cut_off_line_set_aside_is_said_before_the_run_is_interrupted(
    release, tmp_path, capsys, file_notes
):
    out = tmp_path / "raw.jsonl"
    run_model(
        release,
        tasks="captioning",
        backend=ScriptedBackend(),
        out_path=out,
        limit=3,
        progress=False,
    )
    with out.open("a") as handle:
        handle.write('{"filename": "case00')

    class Interrupted(ScriptedBackend):
        def generate(self, requests):
            raise KeyboardInterrupt  # Ctrl-C while the first question is asked

    capsys.readouterr()
    file_notes()
    with pytest.raises(KeyboardInterrupt):
        run_model(release, tasks="captioning", backend=Interrupted(), out_path=out, progress=False)
    (fragment,) = tmp_path.glob("raw.jsonl.partial-*")
    said = file_notes()  # a library prints nothing: told as warnings, which nova prints
    assert capsys.readouterr().err == ""
    assert said == [
        f"the cut-off last line of {out} (left by an interrupted writer) was set aside "
        f"in {fragment}; every complete line is kept"
    ]


def test_merge_of_other_tasks_by_one_model_names_the_joint_evaluation(
    release, release_dir, tmp_path, capsys
):
    paths = {}
    for task, model in (("localization", "m"), ("captioning", "m"), ("diagnosis", "other")):
        paths[task] = tmp_path / f"{task}.jsonl"
        backend = ScriptedBackend(name=model)
        run_model(release, tasks=task, backend=backend, out_path=paths[task], progress=False)
    merged = tmp_path / "merged.jsonl"
    capsys.readouterr()
    assert (
        main(["merge", str(paths["localization"]), str(paths["captioning"]), "--out", str(merged)])
        == 2
    )
    error = capsys.readouterr().err
    assert (
        error.count("\n") == 1 and "only shard fields may differ (these are runs of other " in error
    )
    assert "localization and captioning, by the same model" in error
    files = f"{paths['localization']} {paths['captioning']}"
    assert f"score them together with nova evaluate --predictions {files})" in error
    # Another model: no joint score to suggest.
    assert (
        main(["merge", str(paths["localization"]), str(paths["diagnosis"]), "--out", str(merged)])
        == 2
    )
    error = capsys.readouterr().err
    assert "differs from" in error and "nova evaluate" not in error
    assert not merged.exists()


def test_a_resumed_nova_run_says_what_it_takes_from_its_file_before_it_asks(
    release_dir, tmp_path, capsys
):
    """user16/input14: a resumed run said nothing until its closing table."""
    raw = tmp_path / "raw.jsonl"
    run = ["run", "--data", str(release_dir), "--task", "diagnosis", "--baseline", "floor"]
    assert main([*run, "--out", str(raw), "--limit", "2", "--no-progress"]) == 0
    assert "resumed" not in capsys.readouterr().err  # a new file resumes nothing
    assert main([*run, "--out", str(raw), "--no-progress"]) == 0  # the release's 4 cases
    said = capsys.readouterr().err.splitlines()
    assert f"resumed {raw}: 2 answers from the file, 2 to ask now" in said
