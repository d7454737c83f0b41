"""A preset applies to a plain Python function as it does to an endpoint.

The ``qwen2.5-vl`` preset asks for ``bbox_2d`` boxes in pixels of the image Qwen2.5-VL's
processor resized; an endpoint run records that size for every image, so the boxes are
rescaled to the original. A function wrapping such a model answers in the same pixels,
and its run must record the same size (user11 found it recorded the original size,
silently). A function that returns original-image pixels says so with
``CallableBackend(..., input_size_rule="original")``, which the preset leaves alone.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from novabench import evaluate_model
from novabench.data.release import read_release
from novabench.errors import NovaInputError
from novabench.evaluator import CallableBackend
from novabench.run.backends import Answer, Request


def _no_target(image: object, prompt: str) -> str:
    return '{"bbox_2d": null}' if image is None else "[]"


def _run_with_the_qwen_preset(model: object, release: Path, run_file: Path, **extra: object):
    """The run's input sizes and its manifest's backend entry, localisation only."""
    evaluate_model(
        model,
        release,
        tasks="localization",
        preset="qwen2.5-vl",
        run_file=run_file,
        n_resamples=0,
        progress=False,
        **extra,
    )
    lines = [json.loads(line) for line in run_file.read_text().splitlines()]
    sizes = {tuple(line["input_size"]) for line in lines if line.get("input_size")}
    manifest = json.loads(run_file.with_name(run_file.name + ".manifest.json").read_text())
    return sizes, manifest["backend"]


def test_the_qwen_preset_records_the_resized_input_of_a_function(sample_release, tmp_path):
    sizes = {(image.width, image.height) for image in read_release(sample_release).images}
    assert sizes == {(480, 480)}  # the sample's slices; Qwen's processor makes them 476 x 476
    sizes, backend = _run_with_the_qwen_preset(_no_target, sample_release, tmp_path / "q.jsonl")
    assert sizes == {(476, 476)}  # 480 / 28 = 17.1 -> 17 * 28
    assert backend["input_size_rule"] == "qwen2.5-vl"


def test_a_function_that_answers_in_original_pixels_keeps_them(sample_release, tmp_path):
    model = CallableBackend(_no_target, input_size_rule="original")
    run_file = tmp_path / "original.jsonl"
    sizes, backend = _run_with_the_qwen_preset(model, sample_release, run_file, name="mine")
    assert sizes == {(480, 480)}
    assert "input_size_rule" not in backend and backend["model"] == "mine"


def test_a_resume_with_another_input_size_rule_is_refused_naming_the_rule(sample_release, tmp_path):
    # user12: the refusal said the file "holds another model's answers"; the same function
    # changed only how its boxes are read.
    run_file = tmp_path / "q.jsonl"
    _run_with_the_qwen_preset(_no_target, sample_release, run_file, limit=2)
    with pytest.raises(NovaInputError) as caught:
        _run_with_the_qwen_preset(
            CallableBackend(_no_target, input_size_rule="original"), sample_release, run_file
        )
    message = str(caught.value)
    assert "another input size rule ('qwen2.5-vl' now 'original')" in message
    assert "another model" not in message and len(message.splitlines()) == 1
    assert caught.value.field == "backend.input_size_rule"


class _CallableBaseline:
    """A backend that can also be called (as some wrappers are): a backend, not a function."""

    name = "callable-baseline"
    tasks = ("localization",)

    def describe(self) -> dict[str, object]:
        return {"model": self.name, "kind": "a backend of the user's"}

    def generate(self, requests: list[Request]) -> list[Answer]:
        return [Answer(text="no target") for _ in requests]

    def __call__(self, image: object, prompt: str) -> str:
        raise AssertionError("a backend is driven through generate(), never called")


def test_a_preset_leaves_a_callable_backend_a_backend(sample_release, tmp_path):
    # The preset wraps only what as_backend makes a CallableBackend of; both ask the one
    # _model_kind, so a callable backend is driven as the backend it is, its rule untouched.
    run_file = tmp_path / "backend.jsonl"
    sizes, backend = _run_with_the_qwen_preset(_CallableBaseline(), sample_release, run_file)
    assert backend == {"model": "callable-baseline", "kind": "a backend of the user's"}
    assert sizes == {(480, 480)}  # the original size: no Qwen rule was given to it


def test_presets_are_found_from_the_top_level_package() -> None:
    # user21 looked for them in dir(novabench) and found none: evaluate_model(preset=) takes
    # a name the notebook user had no way to list.
    import novabench
    from novabench.run import presets

    assert "PRESETS" in novabench.__all__ and "list_presets" in novabench.__all__
    assert novabench.PRESETS is presets.PRESETS
    listed = novabench.list_presets()
    assert list(listed) == list(presets.PRESETS)
    assert {"nova-protocol", "qwen2.5-vl", "gemini", "gpt-4o"} <= set(listed)
    assert listed["gemini"] == presets.PRESETS["gemini"].description


def _pixel_boxes(image: object, prompt: str) -> str:
    """Boxes in pixels of the image the function was given (480 x 480 on the sample)."""
    if image is None:
        return '{"most_likely_diagnosis": "glioma", "other_possible_diagnoses": []}'
    return json.dumps([{"bbox_2d": [100, 120, 200, 260], "label": "lesion"}])


def _first_lines(model: object, release: Path, run_file: Path, preset: str | None) -> list[str]:
    report = evaluate_model(
        model,
        release,
        tasks="localization",
        preset=preset,
        run_file=run_file,
        n_resamples=0,
        progress=False,
        limit=2,
    )
    return report.report["notices"] if "notices" in report.report else str(report).splitlines()


def test_a_presets_input_size_rule_applied_to_a_function_is_said_first(sample_release, tmp_path):
    """user21: preset="qwen2.5-vl" with a plain function rescaled its pixel boxes by 480/476
    with nothing in the report saying so (documented, yet easy to miss)."""
    lines = _first_lines(_pixel_boxes, sample_release, tmp_path / "q.jsonl", "qwen2.5-vl")
    said = [line for line in lines if "input-size rule" in line]
    assert len(said) == 1 and said[0].startswith("warning: localization: preset qwen2.5-vl")
    assert "476 x 476" in said[0] and 'input_size_rule="original"' in said[0]
    # Not said without the preset, nor when the function's own rule was chosen.
    assert not any(
        "input-size rule" in line
        for line in _first_lines(_pixel_boxes, sample_release, tmp_path / "n.jsonl", None)
    )
    original = CallableBackend(_pixel_boxes, input_size_rule="original")
    assert not any(
        "input-size rule" in line
        for line in _first_lines(original, sample_release, tmp_path / "o.jsonl", "qwen2.5-vl")
    )
