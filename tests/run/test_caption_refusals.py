"""A caption answer that declines to describe the image is a refusal, not a caption (fixb14).

Refusals were parsed as ``ok`` captions and scored as text ("I'm sorry, I can't describe
medical images" against the reference). They now carry the status ``refusal``, count among
the non-answers, and are scored as the empty caption, the card's rule for an empty
prediction. The detector is conservative: the whole answer must be a refusal.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from novabench import registry
from novabench.run.parsers import parse_caption
from novabench.run.parsers.stats import ParseStats
from novabench.run.predictions import parse_raw, read_predictions

# Written as chat models word them when they decline (GPT-4-class, Llama, Gemma styles).
REFUSALS = [
    "I'm sorry, I can't describe medical images.",
    "I'm sorry, but I can't assist with that request.",
    "Sorry, I can't help with that.",
    "I apologize, but I am not able to view or analyze images.",
    "As an AI language model, I cannot interpret medical images such as MRI scans. Please "
    "consult a qualified radiologist for an accurate assessment.",
    "As an AI, I'm not able to provide medical image interpretations. If you have questions "
    "about this scan, please speak with your doctor.",
    "Unfortunately, I'm unable to analyze medical imaging. I recommend consulting a "
    "radiologist or another healthcare professional.",
    "I cannot provide a description of this brain MRI.",
    "Sure! Here is the caption:\n\nI'm sorry, but I can't provide that.",
]
# Captions that must stay captions: negations, hedges, disclaimers before a description.
CAPTIONS = [
    "Axial FLAIR image showing a left frontal hyperintense lesion.",
    "Axial T2 image; a low-grade glioma cannot be excluded.",
    "Cannot exclude a small infarct in the right thalamus on this DWI image.",
    "No abnormality is seen.",
    "I don't see any abnormality on this image.",
    "Normal brain MRI.",
    "I can see an axial T1-weighted post-contrast image with a ring-enhancing lesion.",
    "As an AI, I cannot give a diagnosis, but this axial FLAIR image shows a right temporal "
    "hyperintense lesion.",
    "I'm sorry, the image is small, but it appears to be a sagittal T1 image with a Chiari "
    "malformation.",
    "Sorry for the brevity: coronal FLAIR, bilateral hippocampal hyperintensity.",
]


@pytest.mark.parametrize("answer", REFUSALS)
def test_a_whole_answer_refusal_is_a_refusal_with_no_caption(answer: str) -> None:
    parsed = parse_caption(answer)
    assert (parsed.status, parsed.caption) == ("refusal", "")
    assert str(parsed.error).startswith("the model declined to describe the image: ")


@pytest.mark.parametrize("answer", CAPTIONS)
def test_captions_that_negate_hedge_or_apologise_stay_captions(answer: str) -> None:
    parsed = parse_caption(answer)
    assert parsed.status == "ok" and parsed.caption == answer


def test_a_refusal_is_a_non_answer_in_the_counts() -> None:
    assert "refusal" in registry.TASKS["captioning"].failure_statuses
    stats = ParseStats.from_results(parse_caption(a) for a in [REFUSALS[0], CAPTIONS[0]])
    assert stats.status_counts == {"refusal": 1, "ok": 1} and stats.n_failed == 1


def test_a_refusal_is_scored_as_the_empty_caption(tmp_path: Path) -> None:
    images = [
        SimpleNamespace(filename=f"case0001_00{i}.png", case_id="case0001", width=480, height=480)
        for i in (1, 2)
    ]
    release = SimpleNamespace(images=images, cases=lambda: [])
    raw = tmp_path / "raw.jsonl"
    lines = [
        {"filename": images[0].filename, "task": "captioning", "raw_caption": REFUSALS[4]},
        {"filename": images[1].filename, "task": "captioning", "raw_caption": CAPTIONS[1]},
    ]
    raw.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    parsed = parse_raw(read_predictions(raw, release), release)
    assert parsed.parse_counts("captioning") == {"refusal": 1, "ok": 1}
    # What the caption metrics receive: "" for the refusal, as for an empty answer.
    assert parsed.captions() == ["", CAPTIONS[1]]


# user17: GPT-4o and Claude write typographic apostrophes and quotes (U+2019, U+201C/D); such
# refusals were read as `ok` captions while their ASCII twins were refusals.
TYPOGRAPHIC_REFUSALS = [
    "I\u2019m sorry, but I can\u2019t help with interpreting medical images.",
    "I\u2019m not able to interpret medical images like this one. Please consult a radiologist.",
    "I can\u2019t provide a diagnosis or description of this scan\u2014please ask a qualified "
    "professional.",
    "I won\u2019t be able to describe this image, as I\u2019m not a medical professional.",
    "\u201cI\u2019m sorry, I can\u2019t assist with that.\u201d",
    "I\u02bcm unable to analyze this image.",  # modifier-letter apostrophe
    "\uff29\u2019m sorry, I can\u2019t help with that.",  # full-width I
    "I can\u200b\u2019t help with that request.",  # a zero-width space inside the word
]


def _ascii_form(answer: str) -> str:
    """The answer typed on an ASCII keyboard (written out here, not by the code under test)."""
    for typographic, plain in [
        ("\u2019", "'"),
        ("\u02bc", "'"),
        ("\u201c", '"'),
        ("\u201d", '"'),
        ("\u2014", "-"),
        ("\uff29", "I"),
        ("\u200b", ""),
    ]:
        answer = answer.replace(typographic, plain)
    return answer


@pytest.mark.parametrize("answer", TYPOGRAPHIC_REFUSALS)
def test_a_refusal_with_typographic_apostrophes_is_a_refusal_as_its_ascii_form(answer: str) -> None:
    plain = _ascii_form(answer)
    assert plain.isascii() and plain != answer
    assert parse_caption(plain).status == "refusal"
    parsed = parse_caption(answer)
    assert (parsed.status, parsed.caption) == ("refusal", "")


@pytest.mark.parametrize(
    "caption",
    [
        "Axial FLAIR image: a right temporal lesion\u2014glioma can\u2019t be excluded.",
        "I\u2019m sorry, the image is small, but it appears to be a sagittal T1 image with a "
        "Chiari malformation.",
    ],
)
def test_typographic_captions_stay_captions_with_their_characters(caption: str) -> None:
    # The folding only feeds the detector: the caption keeps the model's characters.
    parsed = parse_caption(caption)
    assert (parsed.status, parsed.caption) == ("ok", caption)
