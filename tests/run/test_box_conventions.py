"""Issue 20: box answers whose coordinate order is a guess, boxes counted twice, clipping.

The answers below are written in the styles GPT-4o, Qwen2.5-VL-72B and Qwen3-VL-32B use when
a prompt asks for JSON ``{"boxes": [[x1, y1, x2, y2]]}`` in 0..1000 (NOVA_REFERENCE section
5): code fences, ``//`` comments, prose after the fence restating a box, ``{"found": false,
"boxes": []}``, values up to 1036, lists cut off mid-way. Every expected box is worked out
by hand on a 480 x 480 image (one 0..1000 unit = 0.48 px) in the comment above it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from novabench.cli import main
from novabench.data.release import read_release
from novabench.errors import NovaInputError
from novabench.report import evaluate_predictions, render_markdown, render_table
from novabench.report.html import render_comparison_html, render_html
from novabench.report.render import report_first_lines, unread_boxes_line
from novabench.run.manifest import file_record
from novabench.run.parsers.boxes import PROMPT_CONVENTIONS, parse_localization
from novabench.run.predictions import (
    box_answer_summary,
    parse_raw,
    read_predictions,
    write_manifest,
)
from novabench.run.prompts import (
    PROMPT_BOX_CONVENTIONS,
    default_prompt,
    prompt_box_convention,
    prompt_hash,
)

SQUARE = (480, 480)

# [457, 523, 620, 603] read x-first (xyxy_norm1000): x = 457*0.48 = 219.36,
# y = 523*0.48 = 251.04, w = (620-457)*0.48 = 78.24, h = (603-523)*0.48 = 38.4.
X_FIRST = [219.36, 251.04, 78.24, 38.4]
# The same numbers read y-first (protocol): x = 523*0.48 = 251.04, y = 457*0.48 = 219.36,
# w = (603-523)*0.48 = 38.4, h = (620-457)*0.48 = 78.24.
Y_FIRST = [251.04, 219.36, 38.4, 78.24]

GPT4O_FENCED = (
    "```json\n"
    '{\n  "boxes": [\n    [457, 523, 620, 603]\n  ]\n}\n'
    "```\n"
    "The bounding box [457, 523, 620, 603] outlines the hyperintense lesion in the left "
    "parietal lobe."
)
QWEN25_COMMENTED = (
    '```json\n{"boxes": [[457, 523, 620, 603]]}  // lesion in the left parietal white matter\n```'
)
QWEN3_BARE = '{"boxes": [[457, 523, 620, 603]]}'
GPT4O_UNFENCED_REPEAT = (
    '{"boxes": [[457, 523, 620, 603]]}\n'
    "I placed one box, [457, 523, 620, 603], around the enhancing mass."
)
BARE_ANSWERS = {
    "gpt4o_fence_prose_repeat": GPT4O_FENCED,
    "qwen25_comment": QWEN25_COMMENTED,
    "qwen3_bare": QWEN3_BARE,
    "gpt4o_unfenced_repeat": GPT4O_UNFENCED_REPEAT,
}


@pytest.mark.parametrize("answer", BARE_ANSWERS.values(), ids=BARE_ANSWERS.keys())
def test_a_bare_list_without_a_prompt_on_record_is_not_read_in_either_order(answer: str) -> None:
    parsed = parse_localization(answer, image_size=SQUARE)
    assert parsed.status == "ambiguous_convention" and parsed.boxes == []
    assert parsed.readable_with == ("protocol", "xyxy_norm1000")
    assert "no coordinate order" in (parsed.error or "")


@pytest.mark.parametrize("answer", BARE_ANSWERS.values(), ids=BARE_ANSWERS.keys())
def test_a_bare_list_is_read_once_in_the_order_asked(answer: str) -> None:
    x_first = parse_localization(answer, image_size=SQUARE, convention="xyxy_norm1000")
    assert x_first.status == "ok"
    assert x_first.boxes == [pytest.approx(X_FIRST)]  # the prose repeat adds no second box
    y_first = parse_localization(answer, image_size=SQUARE, prompt_convention="protocol")
    assert (y_first.status, y_first.convention) == ("ok", "protocol")
    assert y_first.boxes == [pytest.approx(Y_FIRST)]


def test_the_prose_repeat_is_counted_in_a_note_not_as_a_box() -> None:
    parsed = parse_localization(GPT4O_UNFENCED_REPEAT, image_size=SQUARE, convention="protocol")
    assert parsed.n_boxes == 1
    assert any("after the JSON answer" in note for note in parsed.notes)


def test_a_fenced_list_of_boxes_then_prose_gives_each_box_once() -> None:
    # Qwen3-VL: a top-level list of two boxes, then prose quoting the first one.
    answer = (
        "```json\n[[100, 200, 300, 400], [500, 500, 600, 650]]\n```\n"
        "The larger region [100, 200, 300, 400] is the main lesion."
    )
    parsed = parse_localization(answer, image_size=SQUARE, convention="xyxy_norm1000")
    # [100, 200, 300, 400]: x 48, y 96, w 96, h 96; [500, 500, 600, 650]: x 240, y 240, w 48, h 72.
    assert parsed.boxes == [
        pytest.approx([48.0, 96.0, 96.0, 96.0]),
        pytest.approx([240.0, 240.0, 48.0, 72.0]),
    ]


def test_an_empty_answer_then_prose_with_numbers_is_no_target() -> None:
    answer = (
        '```json\n{"found": false, "boxes": []}\n```\n'
        "The ventricles [120, 200, 300, 400] are symmetric; no focal lesion."
    )
    for convention in ("auto", "xyxy_norm1000"):
        parsed = parse_localization(answer, image_size=SQUARE, convention=convention)
        assert (parsed.status, parsed.boxes) == ("no_target", [])


def test_values_above_1000_point_to_pixels() -> None:
    # Qwen2.5-VL answering in absolute pixels of its 1024 x 1024 input.
    answer = '```json\n{"boxes": [[212, 388, 530, 1036]]}\n```'
    parsed = parse_localization(answer, image_size=SQUARE, prompt_convention="protocol")
    assert parsed.status == "ambiguous_convention" and parsed.readable_with == ("xyxy_pixel",)
    pixels = parse_localization(
        answer, image_size=SQUARE, input_size=(1024, 1024), convention="xyxy_pixel"
    )
    # scale 480/1024 = 0.46875: x 99.375, y 181.875, x2 248.4375, y2 485.625 (past 480: kept).
    assert pixels.boxes == [pytest.approx([99.375, 181.875, 149.0625, 303.75])]
    assert pixels.n_out_of_range == 1


def test_a_cut_off_bare_list_keeps_its_complete_boxes() -> None:
    answer = '```json\n{"boxes": [[457, 523, 620, 603], // left parietal\n  [100, 210, 3'
    assert parse_localization(answer, image_size=SQUARE).status == "ambiguous_convention"
    parsed = parse_localization(answer, image_size=SQUARE, convention="xyxy_norm1000")
    assert parsed.status == "truncated_ok" and parsed.boxes == [pytest.approx(X_FIRST)]


def test_protocol_labelled_lines_still_decide_y_first() -> None:
    parsed = parse_localization("mass: [457, 523, 620, 603]", image_size=SQUARE)
    assert (parsed.status, parsed.convention) == ("ok", "protocol")
    assert parsed.boxes == [pytest.approx(Y_FIRST)]


# user19: a custom prompt asked "label: [x1, y1, x2, y2]"; the lines look like the protocol's.
LABELLED_X_FIRST = "mass: [457, 523, 620, 603]"


def test_labelled_lines_under_a_custom_prompt_are_not_read_y_first() -> None:
    parsed = parse_localization(LABELLED_X_FIRST, image_size=SQUARE, prompt_convention="custom")
    assert (parsed.status, parsed.boxes) == ("ambiguous_convention", [])
    assert parsed.readable_with == ("protocol", "xyxy_norm1000")
    assert "--prompt-file" in (parsed.error or "")


@pytest.mark.parametrize(("asked", "expected"), [("xyxy_norm1000", X_FIRST), ("protocol", Y_FIRST)])
def test_labelled_lines_follow_the_order_a_known_prompt_asked(asked: str, expected: list) -> None:
    # A preset's prompt asking x first (qwen2-vl, gpt-4o) reads the lines x first.
    parsed = parse_localization(LABELLED_X_FIRST, image_size=SQUARE, prompt_convention=asked)
    assert (parsed.status, parsed.convention) == ("ok", asked)
    assert parsed.boxes == [pytest.approx(expected)]


# The protocol's labelled line, then a sentence quoting the same box again (no JSON).
LABELLED_THEN_PROSE = (
    "left thalamic lesion: [457, 523, 620, 603]\n\n"
    "The box [457, 523, 620, 603] covers the T2-hyperintense lesion in the left thalamus."
)


@pytest.mark.parametrize("convention", ["auto", "protocol"])
def test_a_labelled_box_quoted_again_in_prose_is_one_box(convention: str) -> None:
    parsed = parse_localization(LABELLED_THEN_PROSE, image_size=SQUARE, convention=convention)
    assert (parsed.status, parsed.convention) == ("ok", "protocol")
    assert parsed.boxes == [pytest.approx(Y_FIRST)]
    assert parsed.labels == ["left thalamic lesion"]
    assert "1 box(es) quoted again in prose after the labelled lines not counted" in parsed.notes


def test_prose_repeats_of_several_labelled_boxes_are_each_left_out() -> None:
    answer = (
        "1. left thalamic lesion: [457, 523, 620, 603]\n"
        "2. right frontal lesion: [100, 200, 300, 400]\n"
        "Both [457, 523, 620, 603] and [100, 200, 300, 400] are hyperintense; the second, "
        "[100, 200, 300, 400], is smaller."
    )
    parsed = parse_localization(answer, image_size=SQUARE)
    # [100, 200, 300, 400] y-first: x = 200*0.48 = 96, y = 100*0.48 = 48, w = h = 200*0.48 = 96.
    assert parsed.boxes == [pytest.approx(Y_FIRST), pytest.approx([96.0, 48.0, 96.0, 96.0])]
    assert "3 box(es) quoted again in prose after the labelled lines not counted" in parsed.notes


def test_a_new_box_in_prose_after_labelled_lines_is_still_read() -> None:
    # Only a repeat of a labelled box is left out; a box the lines did not give is kept.
    answer = LABELLED_THEN_PROSE + " A second focus sits at [100, 200, 300, 400]."
    parsed = parse_localization(answer, image_size=SQUARE)
    assert parsed.boxes == [pytest.approx(Y_FIRST), pytest.approx([96.0, 48.0, 96.0, 96.0])]
    assert "1 box(es) quoted again in prose after the labelled lines not counted" in parsed.notes


# The protocol's line in 0..1 fractions, as some models answer the y-first prompt.
# [0.457, 0.523, 0.620, 0.603] y-first on 480 x 480: x = 0.523*480 = 251.04,
# y = 0.457*480 = 219.36, w = (0.603-0.523)*480 = 38.4, h = (0.620-0.457)*480 = 78.24.
FRACTION_LINE = "left parietal lesion: [0.457, 0.523, 0.620, 0.603]"


def test_y_first_fractions_are_read_by_choice_never_by_auto() -> None:
    auto = parse_localization(FRACTION_LINE, image_size=SQUARE)
    assert (auto.status, auto.boxes) == ("ambiguous_convention", [])
    assert auto.readable_with == ("yxyx_norm1",)
    chosen = parse_localization(FRACTION_LINE, image_size=SQUARE, convention="yxyx_norm1")
    assert (chosen.status, chosen.convention) == ("ok", "yxyx_norm1")
    assert chosen.boxes == [pytest.approx(Y_FIRST)]
    # A 640 x 480 slice: x = 0.523*640 = 334.72, y = 0.457*480 = 219.36,
    # w = 0.08*640 = 51.2, h = 0.163*480 = 78.24.
    wide = parse_localization(FRACTION_LINE, image_size=(640, 480), convention="yxyx_norm1")
    assert wide.boxes == [pytest.approx([334.72, 219.36, 51.2, 78.24])]


def test_bare_fractions_name_both_orders_unless_the_prompt_fixes_one() -> None:
    bare = '{"boxes": [[0.457, 0.523, 0.620, 0.603]]}'
    assert parse_localization(bare, image_size=SQUARE).readable_with == (
        "xyxy_norm1",
        "yxyx_norm1",
    )
    # The default prompt asked [ymin, xmin, ymax, xmax] (in 0..1000): y-first is what reads.
    asked = parse_localization(bare, image_size=SQUARE, prompt_convention="protocol")
    assert (asked.status, asked.readable_with) == ("ambiguous_convention", ("yxyx_norm1",))
    line = unread_boxes_line("localization", {"answered": 1, "ambiguous_convention": 1,
                                              "readable_with": {"yxyx_norm1": 1}})  # fmt: skip
    assert "--box-convention yxyx_norm1 if the model wrote [ymin, xmin, ymax, xmax] in 0..1" in (
        line or ""
    )


def test_nova_parse_takes_the_y_first_fraction_convention(
    sample_release: Path, tmp_path: Path
) -> None:
    image = read_release(sample_release).images[0]
    raw = _write(tmp_path / "raw.jsonl", [{"filename": image.filename, "raw_boxes": FRACTION_LINE}])
    out = tmp_path / "parsed.jsonl"
    args = ["parse", str(raw), "--data", str(sample_release), "--out", str(out)]
    assert main([*args, "--box-convention", "yxyx_norm1"]) == 0
    record = json.loads(out.read_text().splitlines()[0])
    width, height = image.width, image.height
    expected = [0.523 * width, 0.457 * height, 0.08 * width, 0.163 * height]
    assert record["boxes"] == [pytest.approx(expected)]


def test_a_box_quoted_in_a_sentence_is_not_a_labelled_line() -> None:
    parsed = parse_localization("The lesion is at [457, 523, 620, 603].", image_size=SQUARE)
    assert parsed.status == "ambiguous_convention"


@pytest.mark.parametrize(
    "answer, shown",
    [
        ('{"boxes": [[]]}', "[]"),
        ('{"boxes": ["left frontal", null]}', "'left frontal'"),
        ('{"boxes": [[457, 523, 620]]}', "[457, 523, 620]"),
    ],
)
def test_junk_under_boxes_is_a_clear_status_not_a_box(answer: str, shown: str) -> None:
    parsed = parse_localization(answer, image_size=SQUARE, convention="xyxy_norm1000")
    assert (parsed.status, parsed.boxes) == ("unparseable", [])
    assert shown in (parsed.error or "")


def test_the_default_prompt_is_known_to_ask_y_first() -> None:
    prompt = default_prompt("localization")
    assert "[ymin, xmin, ymax, xmax]" in prompt.text and "0 to 1000" in prompt.text
    assert PROMPT_BOX_CONVENTIONS[prompt.sha256] == "protocol"
    assert set(PROMPT_BOX_CONVENTIONS.values()) <= set(PROMPT_CONVENTIONS)
    with pytest.raises(NovaInputError, match="prompt_convention"):
        parse_localization(QWEN3_BARE, image_size=SQUARE, prompt_convention="xywh_pixel")
    custom = prompt_hash('Return JSON {"boxes": [[x1, y1, x2, y2]]} in 0..1000.')
    assert prompt_box_convention({"localization": {"sha256": custom}}) is None
    assert prompt_box_convention(None) is None


# --------------------------------------------------------------------------- through files


def _write(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _bare_raw_lines(release_dir: Path) -> list[dict]:
    """One bare-list answer per image, as a JSON-boxes prompt gets them."""
    return [
        {"filename": image.filename, "raw_boxes": QWEN3_BARE}
        for image in read_release(release_dir).images
    ]


def _manifest(sha256: str) -> dict:
    return {"model": "m", "prompts": {"localization": {"name": "p", "sha256": sha256}}}


def test_the_report_says_first_how_many_answers_were_not_read(
    sample_release: Path, tmp_path: Path
) -> None:
    raw = _write(tmp_path / "raw.jsonl", _bare_raw_lines(sample_release))
    n_images = len(read_release(sample_release).images)
    report = evaluate_predictions(sample_release, raw, n_resamples=0, tasks=["localization"])
    coverage = report["tasks"]["localization"]["coverage"]
    assert coverage["parse_status"] == {"ambiguous_convention": n_images}
    assert coverage["readable_with"] == {"protocol|xyxy_norm1000": n_images}
    first = render_table(report).splitlines()[1]  # after the synthetic sample's notice
    assert first.startswith(f"localization: {n_images} of {n_images} answers NOT READ")
    assert "--box-convention protocol" in first and "xyxy_norm1000" in first
    assert "NOT READ" in render_markdown(report).split("|")[0]  # before the table
    html = render_html(report)
    assert html.index("NOT READ") < html.index("<table>")


def test_compare_says_first_how_many_answers_of_each_side_were_not_read(
    sample_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    images = read_release(sample_release).images
    raw = _write(tmp_path / "raw.jsonl", _bare_raw_lines(sample_release))
    # B answers every image with its own first gold box (a box fixes no order question).
    gold = _write(
        tmp_path / "gold.jsonl",
        [{"filename": i.filename, "boxes": [list(i.boxes[0])] if i.boxes else []} for i in images],
    )
    out = tmp_path / "comparison.json"
    args = ["compare", "--data", str(sample_release), "--a", str(raw), "--b", str(gold)]
    args += ["--out", str(out), "--markdown", str(tmp_path / "c.md"), "--bootstrap", "20"]
    assert main([*args, "--task", "localization"]) == 0
    printed = [line for line in capsys.readouterr().out.splitlines() if line]
    n = len(images)
    # After the two lines naming A and B and the synthetic sample's notice, before the
    # table: A's unread answers, B has none.
    assert printed[2].startswith("notice: NOT THE REAL DATA")
    assert printed[3].startswith(f"A (raw) localization: {n} of {n} answers NOT READ")
    unread_reason = "(ambiguous_convention: their boxes leave the coordinate order or the scale"
    assert unread_reason in printed[3]
    # As `nova evaluate` does, the line names the conventions that would read them.
    assert "read by --box-convention" in printed[3] and "nova evaluate" not in printed[3]
    assert not printed[4].startswith("B ") and "NOT READ" not in "\n".join(printed[4:])
    markdown = [line for line in (tmp_path / "c.md").read_text().splitlines() if line]
    assert markdown[2].startswith(f"**A (raw) localization: {n} of {n} answers NOT READ")
    page = render_comparison_html(json.loads(out.read_text()))
    assert page.index("Read first") < page.index("<table>")
    assert f"A (raw) localization: {n} of {n} answers NOT READ" in page


def test_a_manifest_with_the_default_prompt_reads_bare_lists_y_first(
    sample_release: Path, tmp_path: Path
) -> None:
    raw = _write(tmp_path / "raw.jsonl", _bare_raw_lines(sample_release))
    write_manifest(raw, _manifest(default_prompt("localization").sha256))
    report = evaluate_predictions(sample_release, raw, n_resamples=0, tasks=["localization"])
    images = read_release(sample_release).images
    assert report["tasks"]["localization"]["coverage"]["parse_status"] == {"ok": len(images)}
    assert report["predictions"]["box_order_from_prompt"] == "protocol"
    assert "NOT READ" not in render_table(report)


def test_a_custom_prompt_fixes_no_order_unless_the_user_says(
    sample_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    raw = _write(tmp_path / "raw.jsonl", _bare_raw_lines(sample_release))
    write_manifest(raw, _manifest(prompt_hash("my own JSON-boxes prompt")))
    out = tmp_path / "parsed.jsonl"
    assert main(["parse", str(raw), "--data", str(sample_release), "--out", str(out)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert "answers NOT READ" in printed[0] and "--box-convention protocol" in printed[0]
    args = ["parse", str(raw), "--data", str(sample_release), "--out", str(out), "--force"]
    assert main([*args, "--box-convention", "xyxy_norm1000"]) == 0
    assert "NOT READ" not in capsys.readouterr().out


def test_labelled_lines_answering_a_custom_prompt_are_named_not_read_y_first(
    sample_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # user19's run: a --prompt-file prompt asked "label: [x1, y1, x2, y2]" and was obeyed.
    lines = [
        {"filename": image.filename, "raw_boxes": LABELLED_X_FIRST}
        for image in read_release(sample_release).images
    ]
    raw = _write(tmp_path / "raw.jsonl", lines)
    manifest = _manifest(prompt_hash("Answer label: [x1, y1, x2, y2] in 0..1000."))
    write_manifest(raw, {**manifest, "file": file_record(raw)})  # as the runner records it
    report = evaluate_predictions(sample_release, raw, n_resamples=0, tasks=["localization"])
    coverage = report["tasks"]["localization"]["coverage"]
    assert coverage["parse_status"] == {"ambiguous_convention": len(lines)}
    assert report["predictions"]["box_order_from_prompt"] == "custom"
    first = render_table(report).splitlines()[1]  # after the synthetic sample's notice
    assert f"{len(lines)} of {len(lines)} answers NOT READ" in first
    assert "--box-convention protocol" in first and "xyxy_norm1000" in first
    out = tmp_path / "parsed.jsonl"
    assert main(["parse", str(raw), "--data", str(sample_release), "--out", str(out)]) == 0
    assert "answers NOT READ" in capsys.readouterr().out.splitlines()[0]


def test_labelled_lines_read_y_first_with_no_prompt_on_record_are_named_first(
    sample_release: Path, tmp_path: Path
) -> None:
    # No manifest: the lines are read in the protocol's order, an assumption said first.
    images = read_release(sample_release).images
    lines = [{"filename": image.filename, "raw_boxes": LABELLED_X_FIRST} for image in images]
    lines[0]["raw_boxes"] = "no target"  # no box: nothing assumed of it
    raw = _write(tmp_path / "raw.jsonl", lines)
    report = evaluate_predictions(sample_release, raw, n_resamples=0, tasks=["localization"])
    assert report["predictions"]["box_answers"]["labelled_read_y_first"] == len(images) - 1
    first = render_table(report).splitlines()[1]  # after the synthetic sample's notice
    assert first.startswith(f"localization: {len(images) - 1} answers in labelled lines")
    assert "pass --box-convention xyxy_norm1000" in first
    # The default prompt on record asked y-first: nothing assumed, nothing said.
    write_manifest(raw, _manifest(default_prompt("localization").sha256))
    prompted = evaluate_predictions(sample_release, raw, n_resamples=0, tasks=["localization"])
    assert "labelled_read_y_first" not in prompted["predictions"]["box_answers"]
    assert "labelled lines" not in render_table(prompted)


def test_nova_parse_and_nova_compare_name_labelled_lines_read_y_first_as_evaluate_does(
    sample_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # user19's file again, read by the two other commands: they said nothing of the order.
    images = read_release(sample_release).images
    lines = [{"filename": image.filename, "raw_boxes": LABELLED_X_FIRST} for image in images]
    lines[0]["raw_boxes"] = "no target"  # no box: nothing assumed of it
    lines[1]["raw_boxes"] = '{"bbox_2d": [100, 120, 200, 220]}'  # x first by its key
    raw = _write(tmp_path / "raw.jsonl", lines)
    assumed = len(images) - 2
    said = (
        f"localization: {assumed} answers in labelled lines (label: [a, b, c, d]) read y-first "
        "as the protocol's [ymin, xmin, ymax, xmax]: no run manifest records the prompt, so "
        "its order is assumed; if it asked [x1, y1, x2, y2], pass --box-convention xyxy_norm1000"
    )
    report = evaluate_predictions(sample_release, raw, n_resamples=0, tasks=["localization"])
    assert said in render_table(report).splitlines()  # as nova evaluate says it

    parsed = tmp_path / "parsed.jsonl"
    capsys.readouterr()
    assert main(["parse", str(raw), "--data", str(sample_release), "--out", str(parsed)]) == 0
    assert capsys.readouterr().out.splitlines()[0] == said
    # A convention chosen, or a prompt on record: nothing assumed, nothing said.
    args = ["parse", str(raw), "--data", str(sample_release), "--out", str(parsed), "--force"]
    assert main([*args, "--box-convention", "protocol"]) == 0
    assert "labelled lines" not in capsys.readouterr().out

    comparison = tmp_path / "comparison.json"
    compare = ["compare", "--data", str(sample_release), "--a", str(raw), "--b", str(parsed)]
    assert main([*compare, "--out", str(comparison), "--bootstrap", "10"]) == 0
    printed = capsys.readouterr().out.splitlines()
    side_a = [line for line in printed if line.endswith(said)]
    assert len(side_a) == 1 and side_a[0].startswith("A (")  # B was parsed with protocol
    notices = json.loads(comparison.read_text(encoding="utf-8"))["notices"]
    assert [line for line in notices if "labelled lines" in line] == side_a


def test_a_parsed_file_records_labelled_lines_read_y_first_and_its_reports_say_so(
    sample_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # user22: nova parse said the assumption, but the parsed file's manifest recorded only
    # box_order_from_prompt None, so nova evaluate and nova compare of it said nothing.
    from novabench.run.manifest import RunManifest

    images = read_release(sample_release).images
    lines = [{"filename": image.filename, "raw_boxes": LABELLED_X_FIRST} for image in images]
    lines[0]["raw_boxes"] = "no target"  # no box: nothing assumed of it
    raw = _write(tmp_path / "raw.jsonl", lines)
    assumed = len(images) - 1
    said = (
        f"localization: {assumed} answers in labelled lines (label: [a, b, c, d]) read y-first "
        "as the protocol's [ymin, xmin, ymax, xmax]: no run manifest records the prompt, so "
        "its order is assumed; if it asked [x1, y1, x2, y2], pass --box-convention xyxy_norm1000"
    )
    parsed = tmp_path / "parsed.jsonl"
    assert main(["parse", str(raw), "--data", str(sample_release), "--out", str(parsed)]) == 0
    assert capsys.readouterr().out.splitlines()[0] == said
    manifest = RunManifest.read(parsed)
    assert manifest is not None and manifest.parsed is not None
    assert manifest.parsed["labelled_read_y_first"] == {
        "answers": assumed,
        "read_as": "protocol",
        "order": "[ymin, xmin, ymax, xmax]",
    }

    report = evaluate_predictions(sample_release, parsed, n_resamples=0, tasks=["localization"])
    assert report["predictions"]["box_answers"]["labelled_read_y_first"] == assumed
    assert said in render_table(report).splitlines()
    assert said in report_first_lines(report)

    comparison = tmp_path / "comparison.json"
    compare = ["compare", "--data", str(sample_release), "--a", str(raw), "--b", str(parsed)]
    assert main([*compare, "--out", str(comparison), "--bootstrap", "10"]) == 0
    printed = [line for line in capsys.readouterr().out.splitlines() if line.endswith(said)]
    assert [line[:3] for line in printed] == ["A (", "B ("]

    # A record that is not nova parse's: refused in one line naming the field.
    from dataclasses import replace

    broken = {**manifest.parsed, "labelled_read_y_first": {"answers": "many"}}
    replace(manifest, parsed=broken).write(parsed)
    with pytest.raises(NovaInputError, match=r"parsed\.labelled_read_y_first"):
        evaluate_predictions(sample_release, parsed, n_resamples=0, tasks=["localization"])

    # Parsed with an explicit convention: nothing assumed, nothing recorded, nothing said.
    args = ["parse", str(raw), "--data", str(sample_release), "--out", str(parsed), "--force"]
    assert main([*args, "--box-convention", "protocol"]) == 0
    manifest = RunManifest.read(parsed)
    assert manifest is not None and manifest.parsed is not None
    assert "labelled_read_y_first" not in manifest.parsed
    report = evaluate_predictions(sample_release, parsed, n_resamples=0, tasks=["localization"])
    assert "labelled_read_y_first" not in report["predictions"]["box_answers"]


def test_a_box_past_the_edge_is_the_same_box_on_both_paths(
    sample_release: Path, tmp_path: Path
) -> None:
    release = read_release(sample_release)
    image = release.images[0]
    assert (image.width, image.height) == SQUARE
    # "lesion: [-50, 100, 300, 500]": y1 = -24, x = 48, w = 400*0.48 = 192, h = 350*0.48 = 168.
    expected = [48.0, -24.0, 192.0, 168.0]
    raw = _write(
        tmp_path / "raw.jsonl",
        [{"filename": image.filename, "raw_boxes": "lesion: [-50, 100, 300, 500]"}],
    )
    given = _write(tmp_path / "given.jsonl", [{"filename": image.filename, "boxes": [expected]}])
    from_raw = parse_raw(read_predictions(raw, release), release)
    from_given = parse_raw(read_predictions(given, release), release)
    raw_record = from_raw.records["localization"][image.filename]
    given_record = from_given.records["localization"][image.filename]
    assert raw_record.boxes == [pytest.approx(expected)] and given_record.boxes == [expected]
    assert raw_record.parse_status == "ok_out_of_image"
    for parsed in (from_raw, from_given):
        summary = box_answer_summary(parsed, release)
        assert (summary["boxes_out_of_image"], summary["answers_out_of_image"]) == (1, 1)
    reports = [
        evaluate_predictions(sample_release, path, n_resamples=0, tasks=["localization"])
        for path in (raw, given)
    ]
    metrics = [report["tasks"]["localization"]["metrics"] for report in reports]
    assert metrics[0]["per_image_best_iou"] == pytest.approx(metrics[1]["per_image_best_iou"])
    assert "boxes past the image edge (scored as given): 1 in 1 answer" in render_table(reports[0])


def test_an_unknown_convention_names_the_python_argument():
    with pytest.raises(NovaInputError) as caught:
        parse_localization("mass: [10, 20, 30, 40]", image_size=(480, 480), convention="xyxy")
    assert caught.value.field == "convention"
    assert caught.value.message.startswith("convention='xyxy': unknown box convention; choose")


def test_a_box_convention_that_reads_no_answer_is_refused_not_recorded(
    sample_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # user19: --box-convention on a file nova parse wrote was ignored but recorded as applied.
    raw = _write(tmp_path / "raw.jsonl", _bare_raw_lines(sample_release))
    write_manifest(raw, _manifest(default_prompt("localization").sha256))
    parsed = tmp_path / "parsed.jsonl"
    assert main(["parse", str(raw), "--data", str(sample_release), "--out", str(parsed)]) == 0
    capsys.readouterr()
    out = tmp_path / "e" / "report.json"
    args = ["evaluate", "--data", str(sample_release), "--predictions", str(parsed)]
    args += ["--task", "localization", "--bootstrap", "0", "--out", str(out)]
    assert main([*args, "--box-convention", "xyxy_pixel"]) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "Traceback" not in error
    assert str(parsed) in error and "box convention auto" in error
    assert "leave out --box-convention" in error and not out.exists()
    with pytest.raises(NovaInputError, match="leave out box_convention="):
        evaluate_predictions(sample_release, parsed, n_resamples=0, box_convention="qwen")
    # The convention the parse recorded reads nothing either, but says what is true: kept.
    assert main([*args, "--box-convention", "auto"]) == 0
    assert json.loads(out.read_text())["predictions"]["box_convention"] == "auto"
    # The raw file is read with the option: it applies.
    report = evaluate_predictions(sample_release, raw, n_resamples=0, box_convention="qwen")
    assert report["predictions"]["box_convention"] == "qwen"
