"""``box_2d`` under ``auto``: the scale comes from the prompt's contract, or is not guessed.

A run asked with the llava preset's prompt (``[x1, y1, x2, y2]`` in 0..1 fractions), scored
with box convention ``auto``, read ``{"box_2d": [0.12, 0.30, 0.25, 0.41]}`` as Gemini's
0..1000 units: a box of a fraction of a pixel in the image's corner. The key fixes the order
(y first) and the prompt the scale, so it is now read as ``yxyx_norm1``; without a prompt
that asked for fractions such values are ``ambiguous_convention`` (counted, named, and
``yxyx_norm1`` reads them).

Image 480 x 480; expected boxes worked out by hand.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from novabench.run.parsers import parse_localization
from novabench.run.predictions import parse_raw, read_predictions
from novabench.run.presets import get_preset
from novabench.run.prompts import prompt_box_convention

IMAGE = (480, 480)
FRACTIONS = '```json\n[{"box_2d": [0.12, 0.30, 0.25, 0.41], "label": "lesion"}]\n```'
# y-first fractions: x 0.30 * 480 = 144, y 0.12 * 480 = 57.6,
# width (0.41 - 0.30) * 480 = 52.8, height (0.25 - 0.12) * 480 = 62.4
READ_AS_FRACTIONS = [144.0, 57.6, 52.8, 62.4]
PER_MILLE = '{"box_2d": [120, 300, 250, 410], "label": "lesion"}'


def llava_prompt_convention() -> str | None:
    """What the manifest of a run asked with the llava preset's prompt says to the parser."""
    prompt = get_preset("llava").prompt("localization")
    return prompt_box_convention({"localization": {"name": prompt.name, "sha256": prompt.sha256}})


def test_the_llava_prompt_asks_for_fractions() -> None:
    assert llava_prompt_convention() == "xyxy_norm1"


def test_box_2d_fractions_under_a_fractions_prompt_are_read_as_fractions() -> None:
    parsed = parse_localization(FRACTIONS, image_size=IMAGE, prompt_convention="xyxy_norm1")
    assert (parsed.status, parsed.convention) == ("ok", "yxyx_norm1")
    assert parsed.boxes == [pytest.approx(READ_AS_FRACTIONS)]


def test_box_2d_units_under_a_fractions_prompt_are_not_guessed() -> None:
    parsed = parse_localization(PER_MILLE, image_size=IMAGE, prompt_convention="xyxy_norm1")
    assert (parsed.status, parsed.boxes) == ("ambiguous_convention", [])
    assert parsed.readable_with == ("protocol",)
    assert "asked for 0..1 fractions" in (parsed.error or "")


@pytest.mark.parametrize("prompt", [None, "protocol", "xyxy_norm1000"])
def test_box_2d_fractions_no_prompt_asked_for_are_ambiguous(prompt: str | None) -> None:
    parsed = parse_localization(FRACTIONS, image_size=IMAGE, prompt_convention=prompt)
    assert (parsed.status, parsed.boxes) == ("ambiguous_convention", [])
    assert parsed.readable_with == ("yxyx_norm1",)
    chosen = parse_localization(FRACTIONS, image_size=IMAGE, convention="yxyx_norm1")
    assert chosen.boxes == [pytest.approx(READ_AS_FRACTIONS)]


@pytest.mark.parametrize("prompt", [None, "protocol", "xyxy_norm1000"])
def test_gemini_units_are_read_as_before(prompt: str | None) -> None:
    # [120, 300, 250, 410] in 0..1000, y first: x 300 * 0.48 = 144, y 120 * 0.48 = 57.6,
    # width 110 * 0.48 = 52.8, height 130 * 0.48 = 62.4: the same box as the fractions'.
    parsed = parse_localization(PER_MILLE, image_size=IMAGE, prompt_convention=prompt)
    assert (parsed.status, parsed.convention) == ("ok", "protocol")
    assert parsed.boxes == [pytest.approx(READ_AS_FRACTIONS)]


def test_a_run_file_is_read_per_its_prompt(tmp_path: Path) -> None:
    image = SimpleNamespace(filename="case0001_001.png", case_id="case0001", width=480, height=480)
    release = SimpleNamespace(images=[image], cases=lambda: [])
    path = tmp_path / "run.jsonl"
    line = {"filename": image.filename, "task": "localization", "raw_boxes": FRACTIONS}
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    parsed = parse_raw(
        read_predictions(path, release),
        release,
        box_convention="auto",
        prompt_convention=llava_prompt_convention(),
    )
    record = parsed.records["localization"][image.filename]
    assert record.parse_status == "ok"
    assert record.boxes == [pytest.approx(READ_AS_FRACTIONS)]


# user20: fractions beside Gemini's units in one answer were read as 0..1000 with no word:
# [0.1, 0.1, 0.2, 0.2] -> a box 0.048 px wide at (0.048, 0.048).
MIXED_SCALES = {
    "one-list": '[{"box_2d": [0.1, 0.1, 0.2, 0.2], "label": "left frontal lesion"}, '
    '{"box_2d": [500, 500, 700, 650], "label": "right parietal lesion"}]',
    "numbered-lesions": 'Lesion 1: {"box_2d": [0.1, 0.1, 0.2, 0.2]}\n'
    'Lesion 2: {"box_2d": [500, 500, 700, 650]}',
    "fraction-second": '```json\n[{"box_2d": [310, 402, 388, 470]}, '
    '{"box_2d": [0.52, 0.61, 0.58, 0.68]}]\n```',
}


@pytest.mark.parametrize("answer", list(MIXED_SCALES.values()), ids=list(MIXED_SCALES))
@pytest.mark.parametrize("prompt", [None, "protocol"])
def test_box_2d_fractions_beside_units_make_the_answer_ambiguous(
    answer: str, prompt: str | None
) -> None:
    # As an answer mixing box forms is: not read, counted, the reason given.
    parsed = parse_localization(answer, image_size=IMAGE, prompt_convention=prompt)
    assert (parsed.status, parsed.boxes, parsed.convention) == ("ambiguous_convention", [], None)
    assert "box_2d values in 0..1 in 1 of 2 boxes" in (parsed.error or "")


def test_box_2d_units_alone_and_a_chosen_convention_read_as_before() -> None:
    # [500, 500, 700, 650] y first in 0..1000 of 480 px: x 240, y 240, width 150 * 0.48 = 72,
    # height 200 * 0.48 = 96.
    alone = parse_localization('{"box_2d": [500, 500, 700, 650]}', image_size=IMAGE)
    assert (alone.status, alone.boxes) == ("ok", [pytest.approx([240.0, 240.0, 72.0, 96.0])])
    # Chosen by the user, protocol reads every box_2d as 0..1000, fractions included:
    # [0.1, 0.1, 0.2, 0.2] -> x 0.1 * 0.48 = 0.048, width 0.1 * 0.48 = 0.048.
    chosen = parse_localization(MIXED_SCALES["one-list"], image_size=IMAGE, convention="protocol")
    assert chosen.boxes == [
        pytest.approx([0.048, 0.048, 0.048, 0.048]),
        pytest.approx([240.0, 240.0, 72.0, 96.0]),
    ]
