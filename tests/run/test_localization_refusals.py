"""A localisation answer that declines is a refusal, not an unreadable answer (dxparse19).

"I cannot help with this" was ``unparseable``; it now carries the status ``refusal`` (the
captioning parser's conservative detector), counted among the non-answers and scored as an
answer without boxes, as before. It is never "no target": the model did not say the image
is normal.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from novabench import registry
from novabench.run.parsers import parse_localization
from novabench.run.predictions import parse_raw, read_predictions

REFUSALS = [
    "I cannot help with this.",
    "As an AI language model, I cannot analyze medical images. Please consult a radiologist.",
    "I\u2019m sorry, but I can\u2019t assist with that request.",
]


@pytest.mark.parametrize("answer", REFUSALS)
def test_a_refusal_has_its_own_status_and_no_box(answer: str) -> None:
    parsed = parse_localization(answer, image_size=(480, 480))
    assert (parsed.status, parsed.boxes) == ("refusal", [])
    assert str(parsed.error).startswith("the model declined to localise: ")


@pytest.mark.parametrize(
    ("answer", "status"),
    [
        ("no target", "no_target"),  # the protocol's "nothing abnormal"
        ("I'm sorry, I cannot see any abnormality. no target", "no_target"),
        ("I cannot identify any abnormal region.", "unparseable"),  # names what it looked for
        ("I can't be sure, but lesion: [100, 200, 300, 400]", "ok"),
    ],
)
def test_no_target_and_boxes_beside_an_apology_stay_what_they_were(
    answer: str, status: str
) -> None:
    assert parse_localization(answer, image_size=(480, 480)).status == status


def test_a_refusal_is_counted_as_a_non_answer_in_a_raw_file(tmp_path: Path) -> None:
    assert "refusal" in registry.TASKS["localization"].failure_statuses
    images = [
        SimpleNamespace(filename=f"case0001_00{i}.png", case_id="case0001", width=480, height=480)
        for i in (1, 2)
    ]
    release = SimpleNamespace(images=images, cases=lambda: [])
    raw = tmp_path / "raw.jsonl"
    answers = [REFUSALS[0], "lesion: [100, 200, 300, 400]"]
    raw.write_text(
        "".join(
            json.dumps({"filename": image.filename, "raw_boxes": answer}) + "\n"
            for image, answer in zip(images, answers, strict=True)
        ),
        encoding="utf-8",
    )
    parsed = parse_raw(read_predictions(raw, release), release)
    assert parsed.parse_counts("localization") == {"ok": 1, "refusal": 1}
    # The refusal is scored as an answer without boxes.
    assert parsed.localization()[0]["boxes"] == []
