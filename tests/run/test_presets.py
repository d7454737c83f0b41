"""Presets: each family's answers read through its preset, manifests, overrides, resume, CLI.

The answers below are written in each family's own style (code fences, prose after the
JSON, box tokens, coordinates past 1000 for Qwen2.5-VL's resized input). Every expected
box was computed by hand in the comment beside it.
"""

from __future__ import annotations

import json

import pytest

from novabench.cli import main
from novabench.evaluator import Endpoint, _apply_preset
from novabench.run.backends import qwen2_5_vl_input_size
from novabench.run.defaults import PRESET_NAMES
from novabench.run.parsers import parse_localization
from novabench.run.predictions import read_manifest
from novabench.run.presets import PRESETS, get_preset, resolve_preset
from novabench.run.prompts import default_prompt, prompt_box_convention
from tests.release_factory import write_v1_release

# One image of 640 x 480 and one box: x 160..320, y 240..360 -> [x, y, w, h] = [160, 240, 160, 120].
# In 0..1000 units: x 250..500, y 500..750. In 0..1 units: x 0.25..0.5, y 0.5..0.75.
WIDE = (640, 480)
BOX = [[160.0, 240.0, 160.0, 120.0]]

ANSWERS = {
    "nova-protocol": "ring-enhancing lesion: [500, 250, 750, 500]",
    "qwen2-vl": (
        "<|object_ref_start|>hyperintense lesion<|object_ref_end|>"
        "<|box_start|>(250,500),(500,750)<|box_end|>"
    ),
    "qwen3-vl": (
        '```json\n[\n  {"bbox_2d": [250, 500, 500, 750], '
        '"label": "hyperintense lesion in the left frontal lobe"}\n]\n```'
    ),
    "gemini": (
        '```json\n[\n  {"box_2d": [500, 250, 750, 500], "label": "enhancing mass"}\n]\n```\n'
    ),
    "gpt-4o": (
        '```json\n{"boxes": [[250, 500, 500, 750]]}\n```\n'
        "The box marks the T2 hyperintense region in the left frontal lobe "
        "([250, 500, 500, 750])."
    ),
    "llava": "The abnormal region is at [0.25, 0.50, 0.50, 0.75].",
}


def _flat(boxes):
    return [value for box in boxes for value in box]


def _auto_with_recorded_prompt(name: str, text: str, **sizes):
    """Parse as `nova evaluate` does with --box-convention auto and the preset's prompt on record."""
    prompt = get_preset(name).prompt("localization")
    recorded = {"localization": {"name": prompt.name, "sha256": prompt.sha256}}
    return parse_localization(
        text, convention="auto", prompt_convention=prompt_box_convention(recorded), **sizes
    )


@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_each_family_answer_reads_to_the_hand_computed_box(name):
    preset = get_preset(name)
    explicit = parse_localization(ANSWERS[name], image_size=WIDE, convention=preset.box_convention)
    assert explicit.status == "ok" and explicit.boxes == BOX
    auto = _auto_with_recorded_prompt(name, ANSWERS[name], image_size=WIDE)
    assert auto.status == "ok" and auto.boxes == BOX and auto.convention == explicit.convention


def test_qwen2_5_vl_pixels_of_its_resized_input_past_1000():
    # A 1024 x 768 image is resized to 1036 x 756 (multiples of 28). The answer is in those
    # pixels: x scale 1024/1036, y scale 768/756.
    # Box 1: (518, 189)-(777, 567) -> (512, 192)-(768, 576) -> [512, 192, 256, 384].
    # Box 2: (777, 378)-(1036, 567) -> (768, 384)-(1024, 576) -> [768, 384, 256, 192].
    input_size = qwen2_5_vl_input_size(1024, 768)
    assert input_size == (1036, 756) and get_preset("qwen2.5-vl").input_size_rule == "qwen2.5-vl"
    answer = (
        "```json\n[\n"
        '\t{"bbox_2d": [518, 189, 777, 567], "label": "ring-enhancing lesion"},\n'
        '\t{"bbox_2d": [777, 378, 1036, 567], "label": "perilesional oedema"}\n'
        "]\n```\nThe lesion lies in the right parietal lobe with surrounding oedema."
    )
    expected = [[512.0, 192.0, 256.0, 384.0], [768.0, 384.0, 256.0, 192.0]]
    sizes = {"image_size": (1024, 768), "input_size": input_size}
    explicit = parse_localization(answer, convention="qwen", **sizes)
    assert explicit.status == "ok" and _flat(explicit.boxes) == pytest.approx(_flat(expected))
    auto = _auto_with_recorded_prompt("qwen2.5-vl", answer, **sizes)
    assert auto.status == "ok" and _flat(auto.boxes) == pytest.approx(_flat(expected))


def test_bbox_2d_in_0_1000_is_not_read_as_pixels_once_the_prompt_asked_for_0_1000():
    # Without the prompt on record, bbox_2d is Qwen2.5-VL's pixels: [250, 500, 250, 250].
    plain = parse_localization(ANSWERS["qwen3-vl"], image_size=WIDE, convention="auto")
    assert plain.convention == "qwen" and plain.boxes == [[250.0, 500.0, 250.0, 250.0]]
    # With the qwen3-vl prompt on record, values past 1000 cannot be its 0..1000 units.
    past = _auto_with_recorded_prompt(
        "qwen3-vl", '[{"bbox_2d": [250, 500, 1036, 750]}]', image_size=WIDE
    )
    assert past.status == "ambiguous_convention" and past.readable_with == ("qwen",)


@pytest.mark.parametrize("name", ["qwen2.5-vl", "qwen3-vl", "gemini", "gpt-4o", "llava"])
def test_nothing_found_in_each_family_style_is_no_target(name):
    empty = {"gpt-4o": '{"boxes": []}', "llava": "no target"}.get(name, "```json\n[]\n```")
    assert _auto_with_recorded_prompt(name, empty, image_size=WIDE).status == "no_target"


def test_every_preset_prompt_is_on_record_with_the_convention_it_asks_for():
    assert PRESET_NAMES == tuple(PRESETS)
    for preset in PRESETS.values():
        prompt = preset.prompt("localization")
        recorded = {"localization": {"name": prompt.name, "sha256": prompt.sha256}}
        assert prompt_box_convention(recorded) == preset.box_convention, preset.name
        assert preset.temperature == 0.0
    assert PRESETS["nova-protocol"].prompt("localization") == default_prompt("localization")


def test_explicit_options_override_the_preset_and_are_named():
    choice = resolve_preset(
        "qwen2.5-vl",
        tasks=("localization", "captioning"),
        prompts={"captioning": "mine.txt"},
        input_size_rule="original",
        temperature=0.2,
    )
    assert choice.prompts["captioning"] == "mine.txt"
    assert choice.prompts["localization"].name == "preset:qwen2.5-vl"
    assert (choice.input_size_rule, choice.temperature, choice.max_new_tokens) == (
        "original",
        0.2,
        512,
    )
    assert choice.record() == {
        "name": "qwen2.5-vl",
        "overridden": ["prompt:captioning", "input_size_rule", "temperature"],
    }
    none = resolve_preset(None)
    assert (none.box_convention, none.input_size_rule, none.max_new_tokens) == (
        "auto",
        "original",
        256,
    )


def test_an_endpoint_field_changed_from_its_default_wins_over_the_preset():
    endpoint = Endpoint("http://127.0.0.1:9/v1", "qwen", max_tokens=100)
    model, prompts, convention, record = _apply_preset(
        "qwen2.5-vl", endpoint, ("localization",), None, None
    )
    assert (model.input_size_rule, model.max_tokens, convention) == ("qwen2.5-vl", 100, "qwen")
    assert prompts["localization"].name == "preset:qwen2.5-vl"
    assert record == {"name": "qwen2.5-vl", "overridden": ["max_new_tokens"]}


@pytest.fixture(scope="module")
def release_dir(tmp_path_factory):
    return write_v1_release(tmp_path_factory.mktemp("release"), n_cases=2, image_size=(40, 32))


def _run(release_dir, out, *options):
    return main(
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
            "--quiet",
            *options,
        ]
    )


def test_nova_run_records_the_preset_and_refuses_to_resume_with_another(
    release_dir, tmp_path, capsys
):
    out = tmp_path / "gemini.jsonl"
    assert _run(release_dir, out, "--preset", "gemini", "--limit", "1") == 0
    manifest = read_manifest(out)
    assert manifest["preset"] == {"name": "gemini", "overridden": []}
    assert manifest["box_convention"] == "protocol"
    assert manifest["prompts"]["localization"]["name"] == "preset:gemini"
    assert manifest["task_settings"]["localization"]["preset"] == "gemini"
    before = out.read_text()
    capsys.readouterr()
    for other in (["--preset", "qwen3-vl"], []):
        assert _run(release_dir, out, *other) == 2
        error = capsys.readouterr().err.strip()
        assert len(error.splitlines()) == 1 and "preset" in error, error
        assert out.read_text() == before
    assert _run(release_dir, out, "--preset", "gemini") == 0  # the same preset resumes

    overridden = tmp_path / "override.jsonl"
    assert (
        _run(release_dir, overridden, "--preset", "gemini", "--box-convention", "xyxy_norm1000")
        == 0
    )
    manifest = read_manifest(overridden)
    assert manifest["preset"] == {"name": "gemini", "overridden": ["box_convention"]}
    assert manifest["box_convention"] == "xyxy_norm1000"
    assert json.loads(overridden.read_text().splitlines()[0])["task"] == "localization"

    # The report's settings lines name the preset and what was overridden.
    markdown = tmp_path / "report.md"
    report_args = ["--out", str(tmp_path / "report.json"), "--markdown", str(markdown)]
    code = main(
        ["evaluate", "--data", str(release_dir), "--predictions", str(overridden)]
        + report_args
        + ["--bootstrap", "0", "--task", "localization"]
    )
    assert code == 0
    settings = "answers asked with preset gemini (overridden: box\\_convention)"  # Markdown-escaped
    assert settings in markdown.read_text()


def test_an_unknown_preset_is_one_line_and_exit_2(release_dir, tmp_path, capsys):
    out = tmp_path / "x.jsonl"
    assert _run(release_dir, out, "--preset", "qwen4") == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "qwen4" in error and not out.exists()


def test_evaluate_model_with_a_preset_reads_the_family_answers(release_dir, tmp_path):
    from novabench.evaluator import evaluate_model

    asked = []

    def gpt_style(image, prompt):
        asked.append(prompt)
        return '```json\n{"boxes": [[250, 500, 500, 750]]}\n```\nOne hyperintense focus.'

    run_file = tmp_path / "gpt.jsonl"
    report = evaluate_model(
        gpt_style,
        release_dir,
        tasks=["localization"],
        preset="gpt-4o",
        run_file=run_file,
        n_resamples=0,
        progress=False,
    )
    assert set(asked) == {get_preset("gpt-4o").prompt("localization").text}
    manifest = read_manifest(run_file)
    assert manifest["preset"] == {"name": "gpt-4o", "overridden": []}
    assert manifest["box_convention"] == "xyxy_norm1000"
    # Every image's answer is read as x-first 0..1000: on the 40 x 32 images x 250..500 is
    # 10..20 and y 500..750 is 16..24; the images table writes [x1, y1, x2, y2].
    boxes = [[list(box) for box in image] for image in report.images["predicted_boxes_xyxy"]]
    assert len(boxes) == 3 and all(image == [[10.0, 16.0, 20.0, 24.0]] for image in boxes), boxes


def test_a_default_run_resumes_under_nova_protocol_which_asks_the_same(
    release_dir, tmp_path, capsys
):
    """nova-protocol is the default prompts and generation settings: its run resumes a run
    made without a preset (it was refused on the preset's name). The file keeps the box
    convention it recorded (auto), so its answers are read as before, and says so."""
    out = tmp_path / "default.jsonl"
    assert _run(release_dir, out, "--limit", "1") == 0
    first = out.read_text()
    assert read_manifest(out)["box_convention"] == "auto"
    capsys.readouterr()

    assert _run(release_dir, out, "--preset", "nova-protocol") == 0
    said = [line for line in capsys.readouterr().err.splitlines() if "resuming" in line]
    assert len(said) == 1 and "keep the box convention recorded, auto" in said[0]
    assert out.read_text().startswith(first) and len(out.read_text()) > len(first)
    manifest = read_manifest(out)
    assert manifest["box_convention"] == "auto"
    assert manifest["task_settings"]["localization"]["box_convention"] == "auto"
    assert manifest["preset"]["kept_from_file"] == ["box_convention"]


def test_a_resume_is_still_refused_where_the_asking_really_differs(release_dir, tmp_path, capsys):
    out = tmp_path / "default.jsonl"
    assert _run(release_dir, out, "--limit", "1") == 0
    before = out.read_text()
    capsys.readouterr()
    refusals = {
        # Another prompt: the preset's name is in the message, beside what differs.
        ("--preset", "gemini"): "asked with another prompt (no preset; this run uses the "
        "preset 'gemini'): 'default' now 'preset:gemini'",
        # The same prompts, but a convention chosen explicitly: compared as any setting.
        ("--preset", "nova-protocol", "--box-convention", "protocol"): "asked with another "
        "box_convention (no preset; this run uses the preset 'nova-protocol'): 'auto' now "
        "'protocol'",
    }
    for options, words in refusals.items():
        assert _run(release_dir, out, *options) == 2
        error = capsys.readouterr().err.strip()
        assert len(error.splitlines()) == 1 and words in error, error
        assert out.read_text() == before
