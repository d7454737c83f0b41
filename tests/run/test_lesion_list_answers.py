"""An answer listing one JSON object per lesion scores every lesion's box.

Since "of several JSON answers, the last complete one is scored" (for a model restating or
correcting its answer), an unfenced "Lesion 1: {...} Lesion 2: {...}" kept only the second
box. A numbered enumeration of separate lesions, each with a box of its own and no word of a
final or corrected answer between them, is now scored whole; everything else keeps the rule.

Image 480 x 480 throughout; expected boxes are worked out by hand in the comments
(``[x, y, width, height]`` in pixels).
"""

from __future__ import annotations

import pytest

from novabench.run.parsers import parse_localization

IMAGE = (480, 480)
# Gemini's box_2d is [ymin, xmin, ymax, xmax] in 0..1000 of the image:
# [310, 402, 388, 470] -> x 402 * 0.48 = 192.96, y 310 * 0.48 = 148.8,
#                         width 68 * 0.48 = 32.64, height 78 * 0.48 = 37.44
LEFT = [192.96, 148.8, 32.64, 37.44]
# [520, 610, 580, 680] -> x 292.8, y 249.6, width 70 * 0.48 = 33.6, height 60 * 0.48 = 28.8
RIGHT = [292.8, 249.6, 33.6, 28.8]
# Qwen2.5-VL's bbox_2d is [x1, y1, x2, y2] in pixels of its 1036 px input, scaled by
# 480 / 1036: [402, 310, 470, 388] and [610, 520, 680, 580].
QWEN_SCALE = 480 / 1036
QWEN_LEFT = [402 * QWEN_SCALE, 310 * QWEN_SCALE, 68 * QWEN_SCALE, 78 * QWEN_SCALE]
QWEN_RIGHT = [610 * QWEN_SCALE, 520 * QWEN_SCALE, 70 * QWEN_SCALE, 60 * QWEN_SCALE]
# LLaVA's 0..1 [x1, y1, x2, y2]: [0.402, 0.31, 0.47, 0.388] is LEFT again, in fractions.

LISTS = {
    "gemini": (
        'Lesion 1: {"box_2d": [310, 402, 388, 470], "label": "left frontal FLAIR '
        'hyperintensity"}\nLesion 2: {"box_2d": [520, 610, 580, 680], "label": "right '
        'parietal ring-enhancing lesion"}',
        {},
        [LEFT, RIGHT],
    ),
    "qwen2.5-vl": (
        "There are two abnormal regions.\n**Lesion 1**:\n```json\n"
        '[{"bbox_2d": [402, 310, 470, 388], "label": "hyperintense lesion"}]\n```\n'
        '**Lesion 2**:\n```json\n[{"bbox_2d": [610, 520, 680, 580], "label": "mass"}]\n```',
        {"input_size": (1036, 1036)},
        [QWEN_LEFT, QWEN_RIGHT],
    ),
    "gpt-4o": (
        "I identified two lesions:\n\n1. Left frontal white matter lesion:\n```json\n"
        '{"boxes": [[310, 402, 388, 470]]}\n```\n2. Right parietal lesion:\n```json\n'
        '{"boxes": [[520, 610, 580, 680]]}\n```\nBoth show restricted diffusion.',
        {"convention": "protocol"},
        [LEFT, RIGHT],
    ),
    "llava": (
        'Lesion 1: {"bbox": [0.402, 0.31, 0.47, 0.388]}\n'
        'Lesion 2: {"bbox": [0.61, 0.52, 0.68, 0.58]}',
        {"convention": "xyxy_norm1"},
        [LEFT, RIGHT],
    ),
}


@pytest.mark.parametrize("model", sorted(LISTS))
def test_one_object_per_numbered_lesion_scores_every_box(model: str) -> None:
    answer, options, expected = LISTS[model]
    parsed = parse_localization(answer, image_size=IMAGE, **options)
    assert parsed.status == "ok"
    assert parsed.boxes == [pytest.approx(box) for box in expected]
    assert parsed.notes == (
        "2 JSON answers, one per numbered lesion (Lesion 1, Lesion 2...), scored together",
    )


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        # A restatement after "Final answer:" of the same box: one box.
        (
            '{"box_2d": [310, 402, 388, 470], "label": "lesion"}\n'
            'Final answer: {"box_2d": [310, 402, 388, 470], "label": "lesion"}',
            [LEFT],
        ),
        # The list, then a corrected final answer: the correction alone.
        (
            'Lesion 1: {"box_2d": [310, 402, 388, 470]}\nLesion 2: {"box_2d": [520, 610, 580, '
            '680]}\nCorrected: {"box_2d": [520, 610, 580, 680]}',
            [RIGHT],
        ),
        # A lesion, then both together (a superset): the last answer, which holds both.
        (
            'Lesion 1: {"box_2d": [310, 402, 388, 470]}\nAll lesions: {"boxes": [{"box_2d": '
            '[310, 402, 388, 470]}, {"box_2d": [520, 610, 580, 680]}]}',
            [LEFT, RIGHT],
        ),
        # The same box under two numbers: a restatement, not two lesions.
        (
            'Lesion 1: {"box_2d": [310, 402, 388, 470]}\n'
            'Lesion 2: {"box_2d": [310, 402, 388, 470]}',
            [LEFT],
        ),
        # Numbers out of order: no enumeration to trust.
        (
            'Lesion 2: {"box_2d": [310, 402, 388, 470]}\n'
            'Lesion 1: {"box_2d": [520, 610, 580, 680]}',
            [RIGHT],
        ),
        # No numbering at all ("Another possibility"): the rule of the last answer, as before.
        (
            '{"box_2d": [310, 402, 388, 470]}\nAnother possibility: {"box_2d": [520, 610, 580, '
            "680]}",
            [RIGHT],
        ),
    ],
    ids=["final-answer", "corrected", "superset", "same-box", "out-of-order", "unnumbered"],
)
def test_a_restated_or_corrected_answer_keeps_the_last_one(
    answer: str, expected: list[list[float]]
) -> None:
    parsed = parse_localization(answer, image_size=IMAGE)
    assert parsed.status == "ok"
    assert parsed.boxes == [pytest.approx(box) for box in expected]
    assert any(note.startswith("an earlier JSON answer not counted") for note in parsed.notes)


def test_a_list_whose_last_lesion_is_cut_off_scores_the_complete_ones() -> None:
    # Three lesions listed, the third cut after its box: the two complete ones are a list,
    # the cut one is set aside as any cut-off later answer is.
    answer = (
        'Lesion 1: {"box_2d": [310, 402, 388, 470]}\nLesion 2: {"box_2d": [520, 610, 580, 680]}'
        '\nLesion 3: {"boxes": [[100, 200, 150, 260], [40'
    )
    parsed = parse_localization(answer, image_size=IMAGE)
    assert parsed.boxes == [pytest.approx(LEFT), pytest.approx(RIGHT)]
    assert any(note.startswith("a later JSON answer cut off") for note in parsed.notes)


# user20: numbered answers that revise one box or offer another place were scored as two
# lesions. bbox_2d [x1, y1, x2, y2] in pixels of the 480 px image itself (no input_size).
REVISED_OR_ALTERNATIVE = {
    # IoU of [100, 100, 200, 200] and [110, 105, 205, 198]: overlap 90 x 93 = 8370, union
    # 10000 + 95 x 93 - 8370 = 10465: 0.80; and "estimate", "Refined".
    "refined-estimate": (
        '1. Initial estimate: {"bbox_2d": [100, 100, 200, 200]}\n'
        '2. Refined estimate after looking closer: {"bbox_2d": [110, 105, 205, 198]}',
        [110.0, 105.0, 95.0, 93.0],
    ),
    # No overlap; "Alternative" says it is another place for the one finding.
    "alternative-location": (
        '1) Most likely location: {"bbox_2d": [100, 100, 200, 200]}\n'
        '2) Alternative location if the first is an artefact: {"bbox_2d": [300, 300, 350, 360]}',
        [300.0, 300.0, 50.0, 60.0],
    ),
    # "or" between the numbered answers: one lesion in one of two places.
    "either-or": (
        'Lesion 1: {"bbox_2d": [100, 100, 200, 200]}\nor, if the signal is flow-related,\n'
        'Lesion 2: {"bbox_2d": [300, 300, 350, 360]}',
        [300.0, 300.0, 50.0, 60.0],
    ),
    "options": (
        'Option 1: {"bbox_2d": [100, 100, 200, 200]}\nOption 2: {"bbox_2d": [300, 300, 350, 360]}',
        [300.0, 300.0, 50.0, 60.0],
    ),
}


@pytest.mark.parametrize(
    ("answer", "expected"), list(REVISED_OR_ALTERNATIVE.values()), ids=list(REVISED_OR_ALTERNATIVE)
)
def test_numbered_revisions_and_alternatives_keep_the_last_answer(
    answer: str, expected: list[float]
) -> None:
    parsed = parse_localization(answer, image_size=IMAGE)
    assert (parsed.status, parsed.boxes) == ("ok", [pytest.approx(expected)])
    assert any(note.startswith("an earlier JSON answer not counted") for note in parsed.notes)


def test_adjacent_lesions_that_overlap_a_little_are_two_lesions() -> None:
    # [100, 100, 200, 200] and [180, 100, 280, 200]: overlap 20 x 100 = 2000, union
    # 10000 + 10000 - 2000 = 18000: IoU 0.11, two lesions side by side.
    answer = (
        "I found two adjacent lesions.\n"
        '1. Left periventricular lesion: {"bbox_2d": [100, 100, 200, 200]}\n'
        '2. Left parietal lesion: {"bbox_2d": [180, 100, 280, 200]}'
    )
    parsed = parse_localization(answer, image_size=IMAGE)
    assert parsed.status == "ok"
    assert parsed.boxes == [[100.0, 100.0, 100.0, 100.0], [180.0, 100.0, 100.0, 100.0]]
    assert parsed.notes[0].startswith("2 JSON answers, one per numbered lesion")


# user22: parse20's rule read any word anywhere, and an overlap, both ways wrong. The labels
# of the numbered items decide now. box_2d [ymin, xmin, ymax, xmax] in 0..1000 of the
# 480 px image: [100, 100, 200, 200] -> [48, 48, 48, 48] px; [600, 600, 700, 700] ->
# [288, 288, 48, 48]; [100, 100, 300, 300] -> [48, 48, 96, 96]; [120, 120, 320, 330] ->
# x 57.6, y 57.6, width 210 * 0.48 = 100.8, height 200 * 0.48 = 96.
FIRST, SECOND = [48.0, 48.0, 48.0, 48.0], [288.0, 288.0, 48.0, 48.0]
SEPARATE_LESIONS = {
    # "possible" in a Lesion N's description is no alternative: a satellite is a lesion.
    "possible-satellite": (
        'Lesion 1: {"box_2d": [100, 100, 200, 200], "label": "mass"}\n'
        'Lesion 2 (possible satellite lesion): {"box_2d": [600, 600, 700, 700], "label": '
        '"satellite"}',
        [FIRST, SECOND],
    ),
    # "or" in a sentence between the items is about the diagnosis, not the place.
    "metastasis-or-abscess": (
        'Lesion 1: {"box_2d": [100, 100, 200, 200], "label": "mass"}\n'
        "This could be a metastasis or an abscess.\n"
        'Lesion 2 (possible satellite lesion): {"box_2d": [600, 600, 700, 700], "label": '
        '"satellite"}',
        [FIRST, SECOND],
    ),
    "possible-second-metastasis": (
        'Lesion 1: {"box_2d": [100, 100, 200, 200]}\n'
        'Lesion 2 (right occipital, possible second metastasis): {"box_2d": [600, 600, 700, '
        "700]}",
        [FIRST, SECOND],
    ),
    # IoU of the two written boxes: overlap 180 x 180 = 32400, union 40000 + 42000 - 32400
    # = 49600: 0.65. Still two boxes the model chose to give.
    "core-and-edema": (
        'Lesion 1: {"box_2d": [100, 100, 300, 300], "label": "tumor core"}\n'
        'Lesion 2: {"box_2d": [120, 120, 320, 330], "label": "surrounding edema"}',
        [[48.0, 48.0, 96.0, 96.0], [57.6, 57.6, 100.8, 96.0]],
    ),
    # Two "Lesion N" boxes overlapping at IoU 0.80 (bbox_2d pixels; see "refined-estimate"
    # above): user20's "same lesion moved", merged by parse20 and scored whole again, as
    # before it: the labels, not an overlap, say what the model meant.
    "lesions-overlapping": (
        'Lesion 1: {"bbox_2d": [100, 100, 200, 200], "label": "left frontal lesion"}\n'
        'Lesion 2: {"bbox_2d": [110, 105, 205, 198], "label": "left frontal lesion"}',
        [[100.0, 100.0, 100.0, 100.0], [110.0, 105.0, 95.0, 93.0]],
    ),
    # A numbered label that names a lesion is one, whatever its description adds.
    "numbered-lesion-estimated": (
        '1. Lesion in the left frontal lobe, estimated: {"box_2d": [100, 100, 200, 200]}\n'
        '2. Lesion in the right occipital lobe: {"box_2d": [600, 600, 700, 700]}',
        [FIRST, SECOND],
    ),
}


@pytest.mark.parametrize(
    ("answer", "expected"), list(SEPARATE_LESIONS.values()), ids=list(SEPARATE_LESIONS)
)
def test_lesion_labels_are_separate_lesions_whatever_their_description_says(
    answer: str, expected: list[list[float]]
) -> None:
    parsed = parse_localization(answer, image_size=IMAGE, prompt_convention=None)
    assert parsed.status == "ok"
    assert parsed.boxes == [pytest.approx(box) for box in expected]
    assert parsed.notes[0] == (
        "2 JSON answers, one per numbered lesion (Lesion 1, Lesion 2...), scored together"
    )


HEDGES = {
    "likelihood": (
        '1. Most likely location: {"box_2d": [100, 100, 200, 200]}\n'
        '2. Less likely location: {"box_2d": [600, 600, 700, 700]}'
    ),
    "guesses": (
        '1. First guess: {"box_2d": [100, 100, 200, 200]}\n'
        '2. Second guess: {"box_2d": [600, 600, 700, 700]}'
    ),
    "hypotheses": (
        '1. Primary hypothesis: {"box_2d": [100, 100, 200, 200]}\n'
        '2. Secondary hypothesis, if the first is a vessel: {"box_2d": [600, 600, 700, 700]}'
    ),
    "candidates": (
        '1. Candidate A: {"box_2d": [100, 100, 200, 200]}\n'
        '2. Candidate B: {"box_2d": [600, 600, 700, 700]}'
    ),
    "numbered-options": (
        '1. Option 1: {"box_2d": [100, 100, 200, 200]}\n'
        '2. Option 2: {"box_2d": [600, 600, 700, 700]}'
    ),
    "alternative-location": (
        '1. Most likely location: {"box_2d": [100, 100, 200, 200]}\n'
        '2. Alternative location: {"box_2d": [600, 600, 700, 700]}'
    ),
    # A revision of a lesion's box is one lesion read twice, lesion word or not.
    "second-read": (
        '1. Lesion (first read): {"box_2d": [100, 100, 200, 200]}\n'
        '2. Lesion (second read, after zooming): {"box_2d": [600, 600, 700, 700]}'
    ),
}


@pytest.mark.parametrize("answer", list(HEDGES.values()), ids=list(HEDGES))
def test_numbered_hedges_score_the_last_answer_alone(answer: str) -> None:
    # A second guess is no second lesion: the last complete answer, with its note.
    parsed = parse_localization(answer, image_size=IMAGE, prompt_convention=None)
    assert (parsed.status, parsed.boxes) == ("ok", [pytest.approx(SECOND)])
    assert parsed.notes[0] == (
        "an earlier JSON answer not counted (1 box(es): [100, 100, 200, 200]): the last "
        "complete JSON answer is the model's final answer"
    )


# user23: boxfix22 read a hedge anywhere in a numbered label as alternatives, so a label
# that names a lesion and hedges its diagnosis ("likely GBM") dropped the first lesion
# (d3f667c scored both). A label that names a lesion-like thing or a place in the brain is
# a lesion; only a pure hedge ("1. Most likely location", "2. Second guess") is an
# alternative. [x1, y1, x2, y2] pixels of the 480 px image: [100, 100, 150, 160] ->
# [100, 100, 50, 60]; [300, 300, 350, 360] -> [300, 300, 50, 60].
A, B = '{"boxes": [[100, 100, 150, 160]]}', '{"boxes": [[300, 300, 350, 360]]}'
HEDGED_LESIONS = {
    "likely-diagnoses": (
        f"1. Right frontal lesion (likely GBM): {A}\n"
        f"2. Left parietal lesion (likely metastasis): {B}"
    ),
    "likely-satellite": f"1. Primary lesion: {A}\n2. Likely satellite lesion: {B}",
    "second-lesion-likely": (
        f"1. Enhancing lesion: {A}\n2. Second lesion, likely a metastasis: {B}"
    ),
    "region-likely-oedema": (
        f"1. Hyperintense lesion: {A}\n2. Surrounding region, likely oedema: {B}"
    ),
    "candidate-lesions": (
        f"1. Candidate lesion (right frontal): {A}\n2. Candidate lesion (left occipital): {B}"
    ),
}


@pytest.mark.parametrize("answer", list(HEDGED_LESIONS.values()), ids=list(HEDGED_LESIONS))
def test_numbered_labels_naming_a_lesion_stay_separate_whatever_they_hedge(answer: str) -> None:
    parsed = parse_localization(answer, image_size=IMAGE, convention="xyxy_pixel")
    assert parsed.status == "ok"
    assert parsed.boxes == [[100.0, 100.0, 50.0, 60.0], [300.0, 300.0, 50.0, 60.0]]
    assert parsed.notes[0] == (
        "2 JSON answers, one per numbered lesion (Lesion 1, Lesion 2...), scored together"
    )


# boxfix24: last session's leftovers. box_2d [100, 100, 200, 200] -> FIRST and
# [600, 600, 700, 700] -> SECOND (see above); every answer read with no prompt on record.
BOX_1, BOX_2 = '{"box_2d": [100, 100, 200, 200]}', '{"box_2d": [600, 600, 700, 700]}'
LAST_ALONE_NOTE = (
    "an earlier JSON answer not counted (1 box(es): [100, 100, 200, 200]): the last "
    "complete JSON answer is the model's final answer"
)
LISTED_NOTE = "2 JSON answers, one per numbered lesion (Lesion 1, Lesion 2...), scored together"

# Read as alternatives or revisions of one answer: the last box, with its note (3482645
# scored both boxes of each).
ONE_LESION_TWICE = {
    # (1) Words after "Lesion N" that only revise, or an explicit alternative (boxfix25: a
    # likelihood alone is no longer one, see CONFIDENCE_RATES_A_LESION).
    "lesion-second-read": f"Lesion 1: {BOX_1}\nLesion 2 (second read): {BOX_2}",
    "lesion-revised": f"Lesion 1 (initial): {BOX_1}\nLesion 2 (revised): {BOX_2}",
    "lesion-refined-box": f"Lesion 1: {BOX_1}\nLesion 2 (refined box): {BOX_2}",
    "lesion-alternative-location": (f"Lesion 1: {BOX_1}\nLesion 2 (alternative location): {BOX_2}"),
    "lesion-second-guess-bold": f"**Lesion 1:** {BOX_1}\n**Lesion 2 (second guess):** {BOX_2}",
    # (3) A pure hedge before the brackets wins over a place word inside them.
    "alternative-location-left-side": (
        f"1. Right frontal lesion: {BOX_1}\n2. Alternative location (left side): {BOX_2}"
    ),
    "other-possible-location": (
        f"1. Right frontal lesion: {BOX_1}\n2. Other possible location (left parietal): {BOX_2}"
    ),
    "second-guess-occipital": (
        f"1. First guess (right frontal): {BOX_1}\n2. Second guess (left occipital): {BOX_2}"
    ),
    "hypothesis-n-temporal": (
        f"1. Hypothesis 1 (right temporal): {BOX_1}\n2. Hypothesis 2 (left temporal): {BOX_2}"
    ),
    # (4) A markdown heading naming no lesion is no label (boxfix25): the last answer.
    "heading-second-guess": f"### 1. First guess\n{BOX_1}\n### 2. Second guess\n{BOX_2}",
}


@pytest.mark.parametrize("answer", list(ONE_LESION_TWICE.values()), ids=list(ONE_LESION_TWICE))
def test_hedged_or_revised_labels_score_the_last_answer_alone(answer: str) -> None:
    parsed = parse_localization(answer, image_size=IMAGE)
    assert (parsed.status, parsed.boxes) == ("ok", [SECOND])
    assert parsed.notes == (LAST_ALONE_NOTE,)


# Read as separate lesions, both boxes scored (3482645 scored the last alone for the
# headings, the diagnosis after "or" and the words describing a lesion in its label).
TWO_LESIONS = {
    # (4) Markdown headings, like "**Lesion 2:**" already was.
    "heading-lesions-fenced": (
        f"### Lesion 1\n```json\n{BOX_1}\n```\n### Lesion 2\n```json\n{BOX_2}\n```"
    ),
    "heading-numbered-places": (
        f"## 1. Left frontal lesion\n{BOX_1}\n## 2. Right occipital lesion\n{BOX_2}"
    ),
    "heading-bold-lesions": f"#### **Lesion 1**\n{BOX_1}\n#### **Lesion 2**\n{BOX_2}",
    # (2) A finished sentence opened by "or" that names no place hedges the diagnosis.
    "or-possibly-an-abscess": f"Lesion 1: {BOX_1}\nOr possibly an abscess.\nLesion 2: {BOX_2}",
    "or-a-plaque": (
        f"Lesion 1: {BOX_1}\nor a demyelinating plaque; DWI would help.\n\nLesion 2: {BOX_2}"
    ),
    # (6) "final" on every label is the model's style; "together with" links two lesions.
    "final-on-every-label": f"Lesion 1 (final): {BOX_1}\nLesion 2 (final): {BOX_2}",
    "together-with": (
        f"Lesion 1: {BOX_1}\nLesion 2 (together with lesion 1 forming a cluster): {BOX_2}"
    ),
}


@pytest.mark.parametrize("answer", list(TWO_LESIONS.values()), ids=list(TWO_LESIONS))
def test_labels_of_separate_lesions_score_both_boxes(answer: str) -> None:
    parsed = parse_localization(answer, image_size=IMAGE)
    assert (parsed.status, parsed.boxes) == ("ok", [FIRST, SECOND])
    assert parsed.notes == (LISTED_NOTE,)


# Unchanged from 3482645 (the conservative form): each kept as it was read.
BOTH, LAST = [FIRST, SECOND], [SECOND]
UNCHANGED = {
    "possible-satellite": (
        f"Lesion 1: {BOX_1}\nLesion 2 (possible satellite lesion): {BOX_2}",
        BOTH,
    ),
    "likely-metastasis": (f"Lesion 1: {BOX_1}\nLesion 2 (likely metastasis): {BOX_2}", BOTH),
    "likely-gbm": (f"Lesion 1: {BOX_1}\nLesion 2 (likely GBM): {BOX_2}", BOTH),
    "possible": (f"Lesion 1: {BOX_1}\nLesion 2 (possible): {BOX_2}", BOTH),
    "option-b-after-lesion": (f"Lesion 1: {BOX_1}\nLesion 2 (option B): {BOX_2}", BOTH),
    "second-read-and-a-place": (
        f"Lesion 1: {BOX_1}\nLesion 2 (second read, left frontal): {BOX_2}",
        BOTH,
    ),
    "left-parietal-likely-metastasis": (
        f"1. Right frontal lesion (likely GBM): {BOX_1}\n"
        f"2. Left parietal lesion (likely metastasis): {BOX_2}",
        BOTH,
    ),
    "alternative-lesion-left": (
        f"1. Right frontal lesion: {BOX_1}\n2. Alternative lesion (left side): {BOX_2}",
        BOTH,
    ),
    "alternative-location-no-brackets": (
        f"1. Right frontal lesion: {BOX_1}\n2. Alternative location, left side: {BOX_2}",
        BOTH,
    ),
    "or-if-the-other-hemisphere": (
        f"Lesion 1: {BOX_1}\nor, if considering the other hemisphere,\nLesion 2: {BOX_2}",
        LAST,
    ),
    "or-sentence-naming-a-place": (
        f"Lesion 1: {BOX_1}\nOr possibly in the other hemisphere.\nLesion 2: {BOX_2}",
        LAST,
    ),
    "or-alone-between-numbered-lesions": (
        f"1. Left frontal lesion: {BOX_1}\nor\n2. Right occipital lesion: {BOX_2}",
        LAST,
    ),
    "final-on-the-second-label-only": (f"Lesion 1: {BOX_1}\nLesion 2 (final): {BOX_2}", LAST),
    "corrected": (f"Lesion 1: {BOX_1}\nLesion 2 (corrected): {BOX_2}", LAST),
    "final-answer-line": (f"Lesion 1: {BOX_1}\nFinal answer:\nLesion 2: {BOX_2}", LAST),
    "actually-the-same-lesion": (
        f"Lesion 1: {BOX_1}\nLesion 2 (actually the same lesion, refined): {BOX_2}",
        LAST,
    ),
    # "with" after a word of a corrected answer other than together/combined changes nothing.
    "revised-with": (f"Lesion 1: {BOX_1}\nLesion 2 (revised with the oedema): {BOX_2}", LAST),
    "alternatively": (f"Lesion 1: {BOX_1}\nAlternatively:\nLesion 2: {BOX_2}", LAST),
    # The same box twice: a restatement, one box (its note names the repeat).
    "heading-same-box": (f"### Lesion 1\n{BOX_1}\n### Lesion 2\n{BOX_1}", [FIRST]),
    "headings-likely": (f"### Lesion 1 (likely)\n{BOX_1}\n### Lesion 2 (likely)\n{BOX_2}", BOTH),
}


@pytest.mark.parametrize(("answer", "expected"), list(UNCHANGED.values()), ids=list(UNCHANGED))
def test_shapes_read_right_before_read_the_same(answer: str, expected: list[list[float]]) -> None:
    parsed = parse_localization(answer, image_size=IMAGE)
    assert (parsed.status, parsed.boxes) == ("ok", expected)
    if expected == BOTH:
        assert parsed.notes == (LISTED_NOTE,)
    elif expected == LAST:
        assert parsed.notes == (LAST_ALONE_NOTE,)


# (5) Two unnumbered JSON answers: every such answer in this suite's corpora is a correction
# or another place ("Corrected:", "Another possibility:", "Final answer:"), so an
# unlabelled later answer stays the final one, the earlier named in a note (never silently
# dropped). Two objects with nothing between them are one answer, both boxes scored.
@pytest.mark.parametrize(
    "answer",
    [
        f"```json\n{BOX_1}\n```\n\n```json\n{BOX_2}\n```",
        f"{BOX_1}\nThere is also a second lesion:\n{BOX_2}",
    ],
    ids=["two-fenced-blocks", "prose-between"],
)
def test_two_unnumbered_json_answers_score_the_last_with_a_note(answer: str) -> None:
    parsed = parse_localization(answer, image_size=IMAGE)
    assert (parsed.status, parsed.boxes, parsed.notes) == ("ok", [SECOND], (LAST_ALONE_NOTE,))


def test_two_json_objects_on_consecutive_lines_are_one_answer() -> None:
    parsed = parse_localization(f"{BOX_1}\n{BOX_2}", image_size=IMAGE)
    assert (parsed.status, parsed.boxes, parsed.notes) == ("ok", [FIRST, SECOND], ())


def test_one_labelled_answer_is_no_list() -> None:
    # One answer after "Lesion 1:" is the answer itself: no note of a list scored together.
    parsed = parse_localization(f"Lesion 1: {BOX_1}", image_size=IMAGE)
    assert (parsed.status, parsed.boxes, parsed.notes) == ("ok", [FIRST], ())


# boxfix25: a hostile review of boxfix24 (211 answers, /work/notes/u25w) found the rules
# above fire on shapes they were not written for. Each answer below but the two marked
# (kept from boxfix24) reads as 3482645 read it (checked against that tree); 7498804 read
# every one but those two differently.
THIRD_BOX = '{"box_2d": [300, 700, 400, 800]}'
# [300, 700, 400, 800] -> x 700 * 0.48 = 336, y 300 * 0.48 = 144, width = height = 48
THIRD = [336.0, 144.0, 48.0, 48.0]
Q_1 = '```json\n[{"bbox_2d": [48, 48, 96, 96]}]\n```'  # pixels: FIRST again
Q_2 = '```json\n[{"bbox_2d": [288, 288, 336, 336]}]\n```'  # pixels: SECOND again
# Pixel boxes read with no input_size on record say so.
PIXELS_NOTE = "input_size not given: assumed the model saw the original image size"


def expected_notes(answer: str, first_note: str) -> tuple[str, ...]:
    """The notes of an answer: ``first_note`` (naming Q_1's own numbers when it is set
    aside), then the pixel note when the answer has a bbox_2d box."""
    if Q_1 in answer:
        first_note = first_note.replace("[100, 100, 200, 200]", "[48, 48, 96, 96]")
        return (first_note, PIXELS_NOTE)
    return (first_note,)


# (1) A likelihood or confidence after "Lesion N" rates that lesion: every lesion is scored.
CONFIDENCE_RATES_A_LESION = {
    "probable": f"Lesion 1: {BOX_1}\nLesion 2 (probable): {BOX_2}",
    "definite-probable": f"Lesion 1 (definite): {BOX_1}\nLesion 2 (probable): {BOX_2}",
    "very-likely": f"Lesion 1 (very likely): {BOX_1}\nLesion 2: {BOX_2}",
    "less-likely": f"Lesion 1 (most likely): {BOX_1}\nLesion 2 (less likely): {BOX_2}",
    "estimate": f"Lesion 1 (estimate): {BOX_1}\nLesion 2 (estimate): {BOX_2}",
    "comma-likely": f"Lesion 1, likely: {BOX_1}\nLesion 2, likely: {BOX_2}",
    "another-possible-site": f"Lesion 1: {BOX_1}\nLesion 2 (another possible site): {BOX_2}",
    "finding-probable": f"Finding 1 (probable): {BOX_1}\nFinding 2 (probable): {BOX_2}",
    "bold-probable": f"**Lesion 1:**\n{Q_1}\n\n**Lesion 2 (probable):**\n{Q_2}",
    # (2) A hedge before a diagnosis, or another site, with its place in brackets.
    "likely-haemorrhage": (
        f"1. Likely haemorrhage (right basal ganglia): {BOX_1}\n"
        f"2. Likely haemorrhage (left thalamus): {BOX_2}"
    ),
    "candidate-infarct": (
        f"1. Candidate infarct (right frontal): {BOX_1}\n"
        f"2. Candidate infarct (left occipital): {BOX_2}"
    ),
    "likely-sides": f"1. Likely (right side): {BOX_1}\n2. Likely (left side): {BOX_2}",
    "another-site-of-involvement": (
        f"1. Primary tumour (right frontal): {BOX_1}\n"
        f"2. Another possible site of involvement (left parietal): {BOX_2}"
    ),
    "other-location-of-disease": (
        f"1. Right frontal mass: {BOX_1}\n"
        f"2. Other possible location of disease (left cerebellum): {BOX_2}"
    ),
    # (5) "or" opening a diagnosis keeps both (boxfix24, kept: 3482645 read the last alone).
    "or-it-may-be-an-abscess": (
        f"1. Right frontal lesion: {BOX_1}\nOr it may be an abscess.\n"
        f"2. Left parietal lesion: {BOX_2}"
    ),
    "or-both-could-be-metastases": (
        f"Lesion 1: {BOX_1}\nOr both could be metastases.\nLesion 2: {BOX_2}"
    ),
}


@pytest.mark.parametrize(
    "answer", list(CONFIDENCE_RATES_A_LESION.values()), ids=list(CONFIDENCE_RATES_A_LESION)
)
def test_confidence_and_diagnosis_hedges_keep_every_lesion(answer: str) -> None:
    parsed = parse_localization(answer, image_size=IMAGE)
    assert (parsed.status, parsed.boxes) == ("ok", [FIRST, SECOND])
    assert parsed.notes == expected_notes(answer, LISTED_NOTE)


def test_a_likelihood_on_the_third_lesion_keeps_all_three() -> None:
    answer = f"Lesion 1: {BOX_1}\nLesion 2: {BOX_2}\nLesion 3 (likely): {THIRD_BOX}"
    parsed = parse_localization(answer, image_size=IMAGE)
    assert (parsed.status, parsed.boxes) == ("ok", [FIRST, SECOND, THIRD])
    assert parsed.notes == (
        "3 JSON answers, one per numbered lesion (Lesion 1, Lesion 2...), scored together",
    )


# (3) Markdown headings naming a step, a view, a box or a form of the coordinates; (5) an
# "or" sentence naming a direction, a size, a place or the same lesion; (6) "combined with".
# The last answer alone, its note naming the earlier.
ONE_ANSWER_REVISED = {
    "heading-verification": f"### 1. Initial localization\n{Q_1}\n### 2. Verification\n{Q_2}",
    "heading-coarse-fine": f"## 1. Coarse localization\n{Q_1}\n## 2. Fine localization\n{Q_2}",
    "heading-box-tighter": f"### Box 1\n{Q_1}\n### Box 2 (tighter)\n{Q_2}",
    "heading-raw-post": f"## 1. Raw model output\n{Q_1}\n## 2. Post-processed\n{Q_2}",
    "heading-same-lesion": f"## 1. Axial view\n{Q_1}\n## 2. Same lesion, zoomed\n{Q_2}",
    "heading-approximate-region": (
        f"### 1. Approximate region\n{Q_1}\n### 2. Precise bounding box\n{Q_2}"
    ),
    "or-more-posterior": f"Lesion 1: {BOX_1}\nOr possibly more posterior.\nLesion 2: {BOX_2}",
    "or-a-bit-anterior": f"Lesion 1: {BOX_1}\nOr perhaps a bit more anterior.\nLesion 2: {BOX_2}",
    "or-the-hippocampus": f"Lesion 1: {BOX_1}\nOr possibly the hippocampus.\nLesion 2: {BOX_2}",
    "or-posterior-fossa": (
        f"Lesion 1: {BOX_1}\nOr possibly in the posterior fossa.\nLesion 2: {BOX_2}"
    ),
    "or-same-lesion": f"Lesion 1: {BOX_1}\nOr maybe it is the same lesion.\nLesion 2: {BOX_2}",
    "or-slightly-larger": f"Lesion 1: {BOX_1}\nOr maybe slightly larger.\nLesion 2: {BOX_2}",
    "or-box-lower": f"Lesion 1: {BOX_1}\nOr the box could be slightly lower.\nLesion 2: {BOX_2}",
    "heading-lesion-steps": (
        f"### 1. Lesion localization\n{Q_1}\n### 2. Lesion verification\n{Q_2}"
    ),
    "or-an-area-behind": f"Lesion 1: {BOX_1}\nOr an area just behind it.\nLesion 2: {BOX_2}",
    "combined-with-margin": (
        f"Lesion 1: {BOX_1}\nLesion 2 (lesions 1 and 2 combined with margin): {BOX_2}"
    ),
}


@pytest.mark.parametrize("answer", list(ONE_ANSWER_REVISED.values()), ids=list(ONE_ANSWER_REVISED))
def test_steps_and_or_places_keep_the_last_answer(answer: str) -> None:
    parsed = parse_localization(answer, image_size=IMAGE)
    assert (parsed.status, parsed.boxes) == ("ok", [SECOND])
    assert parsed.notes == expected_notes(answer, LAST_ALONE_NOTE)


def test_one_box_in_two_coordinate_forms_under_headings_is_one_box() -> None:
    # (4) The same box as box_2d (0..1000) and as bbox_2d pixels: [100, 100, 200, 200] * 0.48
    # = [48, 48, 96, 96]. Read as two lesions, two conventions made it 0 boxes; the last
    # answer alone is FIRST.
    answer = (
        "## 1. Normalized coordinates (0-1000)\n```json\n" + BOX_1 + "\n```\n"
        "## 2. Pixel coordinates\n" + Q_1
    )
    parsed = parse_localization(answer, image_size=IMAGE)
    assert (parsed.status, parsed.boxes) == ("ok", [FIRST])
    assert parsed.notes == (LAST_ALONE_NOTE, PIXELS_NOTE)
