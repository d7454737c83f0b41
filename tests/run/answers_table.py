"""Realistic model answers with the results the parsers must give, as data.

The answers are modelled on what GPT-4o, Gemini, Qwen2-VL, Qwen2.5-VL-72B and
Qwen3-VL really write to NOVA-style prompts (NOVA_REFERENCE section 2): code
fences with prose around them, ``//`` comments in JSON, coordinates slightly
above the input size, ``{"found": false, "boxes": []}``, empty strings and
``None``, JSON cut off mid-list, runaway lists. Every expected box was
computed by hand; the arithmetic is shown for the first of each kind.

Boxes are ``[x, y, width, height]`` in pixels of the original image.
Protocol answers are ``[ymin, xmin, ymax, xmax]`` in 0..1000, so on a 480 x 480
image one unit is 0.48 px.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SQUARE = (480, 480)  # (width, height), the NOVA release size
WIDE = (640, 512)  # not square, so a swapped x/y shows up


@dataclass(frozen=True)
class LocalizationCase:
    id: str
    text: Any
    status: str
    boxes: list[list[float]] = field(default_factory=list)
    labels: list[str] | None = None
    convention_used: str | None = None
    image_size: tuple[int, int] = SQUARE
    input_size: tuple[int, int] | None = None
    convention: str = "auto"
    n_out_of_range: int = 0
    n_swapped: int = 0
    n_degenerate_dropped: int = 0
    note_contains: str | None = None
    error_contains: str | None = None


@dataclass(frozen=True)
class DiagnosisCase:
    id: str
    text: Any
    status: str
    diagnoses: list[str] = field(default_factory=list)
    n_duplicates_removed: int = 0


@dataclass(frozen=True)
class CaptionCase:
    id: str
    text: Any
    status: str
    caption: str = ""


def _runaway_answer(count: int) -> str:
    objects = ",\n  ".join(
        f'{{"bbox_2d": [{10 * i}, {10 * i}, {10 * i + 20}, {10 * i + 20}], "label": "lesion"}}'
        for i in range(count)
    )
    return f"```json\n[\n  {objects}\n]\n```"


RUNAWAY_COUNT = 40
# Box i is x1 = y1 = 10 i, x2 = y2 = 10 i + 20 in pixels of a 480 x 480 input that is
# the original image: [10 i, 10 i, 20, 20]; the last one ends at 410 < 480, so none is clipped.
RUNAWAY_BOXES = [[10.0 * i, 10.0 * i, 20.0, 20.0] for i in range(RUNAWAY_COUNT)]


LOCALIZATION_CASES: list[LocalizationCase] = [
    # --- the protocol format (GPT-4o, Gemini, most instruction-following models)
    LocalizationCase(
        "protocol_single",
        "lesion: [250, 100, 750, 500]",
        "ok",
        # x = 100 * 0.48 = 48, y = 250 * 0.48 = 120,
        # w = (500 - 100) * 0.48 = 192, h = (750 - 250) * 0.48 = 240
        [[48, 120, 192, 240]],
        ["lesion"],
        "protocol",
    ),
    LocalizationCase(
        "protocol_not_square",
        "mass: [250, 100, 750, 500]",
        "ok",
        # 640 x 512: x = 100/1000 * 640 = 64, y = 250/1000 * 512 = 128,
        # w = 400/1000 * 640 = 256, h = 500/1000 * 512 = 256
        [[64, 128, 256, 256]],
        ["mass"],
        "protocol",
        image_size=WIDE,
    ),
    LocalizationCase(
        "label_with_brackets",
        "lesion [left]: [120, 80, 300, 260]",
        "ok",
        # x = 80 * 0.48 = 38.4, y = 120 * 0.48 = 57.6, w = 180 * 0.48 = 86.4, h = 180 * 0.48 = 86.4
        [[38.4, 57.6, 86.4, 86.4]],
        ["lesion [left]"],
        "protocol",
    ),
    LocalizationCase(
        "label_with_colons",
        "Finding: ring-enhancing mass: [400, 300, 600, 550]",
        "ok",
        # x = 300 * 0.48 = 144, y = 400 * 0.48 = 192, w = 250 * 0.48 = 120, h = 200 * 0.48 = 96
        [[144, 192, 120, 96]],
        ["Finding: ring-enhancing mass"],
        "protocol",
    ),
    LocalizationCase(
        "two_lines",
        "Tumor: [200, 150, 400, 350]\nEdema: [150, 100, 500, 450]",
        "ok",
        # 1: x = 150*0.48 = 72, y = 200*0.48 = 96, w = 200*0.48 = 96, h = 96
        # 2: x = 100*0.48 = 48, y = 150*0.48 = 72, w = 350*0.48 = 168, h = 168
        [[72, 96, 96, 96], [48, 72, 168, 168]],
        ["Tumor", "Edema"],
        "protocol",
    ),
    LocalizationCase(
        "numbered_list",
        "1. Left frontal mass: [200, 150, 400, 350]\n2. Perilesional oedema: [150, 100, 500, 450]",
        "ok",
        [[72, 96, 96, 96], [48, 72, 168, 168]],
        ["Left frontal mass", "Perilesional oedema"],
        "protocol",
    ),
    LocalizationCase(
        "gpt4o_prose_and_bold",
        "Here are the abnormal regions I identified:\n\n"
        "- **Hyperintense lesion**: [300, 550, 450, 700]\n\nThese coordinates are approximate.",
        "ok",
        # x = 550*0.48 = 264, y = 300*0.48 = 144, w = 150*0.48 = 72, h = 72
        [[264, 144, 72, 72]],
        ["Hyperintense lesion"],
        "protocol",
    ),
    LocalizationCase(
        "protocol_in_fence",
        "```\nlesion: [100, 200, 300, 400]\n```",
        "ok",
        # x = 200*0.48 = 96, y = 100*0.48 = 48, w = 200*0.48 = 96, h = 96
        [[96, 48, 96, 96]],
        ["lesion"],
        "protocol",
    ),
    LocalizationCase(
        "prose_sentence_before_label",
        "The image shows [likely] a tumour. lesion: [250, 100, 750, 500]",
        "ok",
        [[48, 120, 192, 240]],
        ["lesion"],
        "protocol",
    ),
    LocalizationCase(
        "space_separated",
        "lesion: [120 80 300 260]",
        "ok",
        [[38.4, 57.6, 86.4, 86.4]],
        ["lesion"],
        "protocol",
    ),
    LocalizationCase(
        "parentheses",
        "lesion: (250, 100, 750, 500)",
        "ok",
        [[48, 120, 192, 240]],
        ["lesion"],
        "protocol",
    ),
    LocalizationCase(
        "protocol_floats",
        "lesion: [250.5, 100.0, 750.5, 500.0]",
        "ok",
        # y = 250.5 * 0.48 = 120.24; h = (750.5 - 250.5) * 0.48 = 240
        [[48, 120.24, 192, 240]],
        ["lesion"],
        "protocol",
    ),
    LocalizationCase(
        "two_boxes_one_line",
        "lesion: [100, 100, 200, 200], [300, 300, 400, 400]",
        "ok",
        # 100*0.48 = 48, 100*0.48 = 48; 300*0.48 = 144
        [[48, 48, 48, 48], [144, 144, 48, 48]],
        ["lesion", "lesion"],
        "protocol",
    ),
    LocalizationCase(
        "swapped_corners",
        "lesion: [750, 500, 250, 100]",
        "ok",
        # corners reordered to [250, 100, 750, 500]: as protocol_single
        [[48, 120, 192, 240]],
        ["lesion"],
        "protocol",
        n_swapped=1,
    ),
    LocalizationCase(
        "negative_value",
        "lesion: [-50, 100, 300, 500]",
        "ok",
        # y1 = -50*0.48 = -24, kept (not clipped); h = 300*0.48 + 24 = 168
        [[48, -24, 192, 168]],
        ["lesion"],
        "protocol",
        n_out_of_range=1,
    ),
    LocalizationCase(
        "zero_area_dropped",
        "spot: [300, 300, 300, 500]\nmass: [100, 100, 200, 200]",
        "ok",
        # the first has ymin == ymax: zero height, dropped
        [[48, 48, 48, 48]],
        ["mass"],
        "protocol",
        n_degenerate_dropped=1,
    ),
    LocalizationCase(
        "only_zero_area",
        "dot: [500, 500, 500, 500]",
        "invalid_boxes",
        [],
        [],
        "protocol",
        n_degenerate_dropped=1,
        note_contains="zero area",
    ),
    LocalizationCase(
        "protocol_truncated_line",
        "lesion: [200, 150, 400, 350]\nedema: [150, 100, 5",
        "truncated_ok",
        [[72, 96, 96, 96]],
        ["lesion"],
        "protocol",
    ),
    LocalizationCase(
        "bytes_input",
        b"lesion: [250, 100, 750, 500]",
        "ok",
        [[48, 120, 192, 240]],
        ["lesion"],
        "protocol",
    ),
    LocalizationCase(
        "label_map_json",
        '{"left thalamic lesion": [400, 450, 550, 600]}',
        # A label as the key fixes no coordinate order: y-first or x-first is a guess.
        "ambiguous_convention",
        error_contains="no coordinate order",
    ),
    LocalizationCase(
        "gemini_box_2d",
        '```json\n[\n  {"box_2d": [250, 100, 750, 500], "label": "lesion"}\n]\n```',
        "ok",
        [[48, 120, 192, 240]],
        ["lesion"],
        "protocol",
    ),
    LocalizationCase(
        "protocol_explicit_above_1000_kept",
        "lesion: [100, 200, 1200, 900]",
        "ok",
        # y2 = 1200*0.48 = 576, kept; x = 96, y = 48, w = 700*0.48 = 336, h = 576 - 48 = 528
        [[96, 48, 336, 528]],
        ["lesion"],
        "protocol",
        convention="protocol",
        n_out_of_range=1,
    ),
    # --- "no target" and empty answers
    LocalizationCase("no_target_plain", "no target", "no_target"),
    LocalizationCase("no_target_period", "No target.", "no_target"),
    LocalizationCase("no_target_caps", "NO TARGET", "no_target"),
    LocalizationCase("no_target_bold", "**No target**", "no_target"),
    LocalizationCase("no_abnormality", "no abnormality", "no_target"),
    LocalizationCase(
        "no_abnormality_sentence", "There is no abnormality visible in this image.", "no_target"
    ),
    LocalizationCase("no_abnormal_findings", "No abnormal findings detected.", "no_target"),
    LocalizationCase("appears_normal", "The brain appears normal.", "no_target"),
    LocalizationCase("no_target_underscore", '"no_target"', "no_target"),
    LocalizationCase("found_false", '{"found": false, "boxes": []}', "no_target"),
    LocalizationCase(
        "found_false_fenced_comment",
        '```json\n{\n  "found": false, // nothing abnormal\n  "boxes": []\n}\n```',
        "no_target",
    ),
    LocalizationCase("empty_json_list", "```json\n[]\n```", "no_target"),
    LocalizationCase("empty_string", "", "empty"),
    LocalizationCase("whitespace", "  \n\t ", "empty"),
    LocalizationCase("python_none", None, "empty"),
    LocalizationCase("none_string", "None", "empty"),
    LocalizationCase("refusal", "I'm unable to analyse medical images.", "refusal"),
    LocalizationCase("prose_only", "The lesion is in the left frontal lobe.", "unparseable"),
    LocalizationCase("not_text", 42, "unparseable", error_contains="int"),
    LocalizationCase(
        "cut_before_first_box",
        '```json\n[\n  {"bbox_2d": [12',
        "unparseable",
        error_contains="cut off",
    ),
    # --- Qwen2.5-VL: bbox_2d in pixels of its resized input
    LocalizationCase(
        "qwen_fence_comment_prose",
        '```json\n[\n\t{"bbox_2d": [310, 402, 455, 530], "label": "hyperintense lesion"} '
        "// right hemisphere\n]\n```\nThe box marks the lesion.",
        "ok",
        # input 960 -> image 480 halves everything: x = 155, y = 201,
        # w = (455 - 310) / 2 = 72.5, h = (530 - 402) / 2 = 64
        [[155, 201, 72.5, 64]],
        ["hyperintense lesion"],
        "qwen",
        input_size=(960, 960),
    ),
    LocalizationCase(
        "qwen_slightly_above_input",
        '[{"bbox_2d": [512, 256, 1036, 768], "label": "edema"}]',
        "ok",
        # scale 480/1024 = 0.46875: x1 = 240, y1 = 120, x2 = 1036*0.46875 = 485.625 (kept),
        # y2 = 768*0.46875 = 360 -> [240, 120, 245.625, 240]
        [[240, 120, 245.625, 240]],
        ["edema"],
        "qwen",
        input_size=(1024, 1024),
        n_out_of_range=1,
    ),
    LocalizationCase(
        "qwen_no_input_size",
        '[{"bbox_2d": [48, 120, 240, 360], "label": "mass"}]',
        "ok",
        [[48, 120, 192, 240]],
        ["mass"],
        "qwen",
        note_contains="input_size not given",
    ),
    LocalizationCase(
        "qwen_truncated_mid_list",
        '```json\n[\n  {"bbox_2d": [100, 100, 200, 200], "label": "a"},\n'
        '  {"bbox_2d": [300, 300, 400, 400], "label": "b"},\n  {"bbox_2d": [500, 50',
        "truncated_ok",
        [[100, 100, 100, 100], [300, 300, 100, 100]],
        ["a", "b"],
        "qwen",
        input_size=SQUARE,
    ),
    LocalizationCase(
        "qwen_single_quotes_trailing_commas",
        "[{'bbox_2d': [10, 20, 110, 220], 'label': 'cyst',},]",
        "ok",
        [[10, 20, 100, 200]],
        ["cyst"],
        "qwen",
        input_size=SQUARE,
    ),
    LocalizationCase(
        "qwen_numeric_strings",
        '[{"bbox_2d": ["10", "20", "110", "220"], "label": "cyst"}]',
        "ok",
        [[10, 20, 100, 200]],
        ["cyst"],
        "qwen",
        input_size=SQUARE,
    ),
    LocalizationCase(
        "qwen_found_true_nested",
        '{"found": true, "boxes": [{"label": "mass", "bbox_2d": [100, 100, 300, 200]}]}',
        "ok",
        [[100, 100, 200, 100]],
        ["mass"],
        "qwen",
    ),
    LocalizationCase(
        "qwen_runaway_list",
        _runaway_answer(RUNAWAY_COUNT),
        "ok",
        RUNAWAY_BOXES,
        ["lesion"] * RUNAWAY_COUNT,
        "qwen",
        input_size=SQUARE,
    ),
    LocalizationCase(
        "qwen3_bbox_2d_norm1000",
        '[{"bbox_2d": [100, 250, 500, 750], "label": "lesion"}]',
        "ok",
        # xyxy in 0..1000: x1 = 48, y1 = 120, x2 = 240, y2 = 360
        [[48, 120, 192, 240]],
        ["lesion"],
        "xyxy_norm1000",
        convention="xyxy_norm1000",
    ),
    LocalizationCase(
        "qwen2_box_tokens",
        "<|object_ref_start|>tumor<|object_ref_end|><|box_start|>(100,250),(500,750)<|box_end|>",
        "ok",
        [[48, 120, 192, 240]],
        ["tumor"],
        "xyxy_norm1000",
    ),
    LocalizationCase(
        "qwen2_box_tokens_two_objects",
        "<|object_ref_start|>tumor<|object_ref_end|><|box_start|>(100,250),(500,750)<|box_end|> and "
        "<|object_ref_start|>edema<|object_ref_end|><|box_start|>(0,0),(1000,500)<|box_end|>",
        "ok",
        # second: x1 = 0, y1 = 0, x2 = 1000*0.48 = 480, y2 = 500*0.48 = 240
        [[48, 120, 192, 240], [0, 0, 480, 240]],
        ["tumor", "edema"],
        "xyxy_norm1000",
    ),
    # --- 0..1 fractions, explicit pixel conventions, ambiguity
    LocalizationCase(
        "norm1_generic_key",
        '[{"label": "lesion", "box": [0.1, 0.25, 0.5, 0.75]}]',
        # Fractions fix the scale, not the order: [y, x, ...] or [x, y, ...] is a guess.
        "ambiguous_convention",
        image_size=WIDE,
        error_contains="no coordinate order",
    ),
    LocalizationCase(
        "norm1_label_line",
        "lesion: [0.25, 0.1, 0.75, 0.5]",
        # The protocol's line says y first; no convention reads y-first fractions, and
        # reading them x-first would swap the axes.
        "ambiguous_convention",
        error_contains="y-first fractions",
    ),
    LocalizationCase(
        "norm1_truncated_container",
        '```json\n{"boxes": [{"label": "a", "bbox": [0.1, 0.1, 0.2, 0.2]}, {"label": "b", "bbox": [0.3',
        "ambiguous_convention",
        error_contains="generic box key",
    ),
    LocalizationCase(
        "generic_bbox_ambiguous",
        '{"bbox": [120, 80, 300, 260]}',
        "ambiguous_convention",
        error_contains="convention=",
    ),
    LocalizationCase(
        "generic_bbox_xyxy_pixel",
        '{"bbox": [120, 80, 300, 260]}',
        "ok",
        [[120, 80, 180, 180]],
        [""],
        "xyxy_pixel",
        convention="xyxy_pixel",
    ),
    LocalizationCase(
        "generic_bbox_xywh_pixel",
        '{"bbox": [120, 80, 300, 260]}',
        "ok",
        [[120, 80, 300, 260]],
        [""],
        "xywh_pixel",
        convention="xywh_pixel",
    ),
    LocalizationCase(
        # The gemini preset forces protocol; the model answered named corners in 0..1000.
        # Keys fix x first: x 250 * 0.64 = 160, y 100 * 0.512 = 51.2, x2 500 * 0.64 = 320,
        # y2 400 * 0.512 = 204.8 -> [160, 51.2, 160, 153.6].
        "named_corners_under_protocol",
        '```json\n[{"xmin": 250, "ymin": 100, "xmax": 500, "ymax": 400, "label": "mass"}]\n```',
        "ok_order_from_keys",
        [[160, 51.2, 160, 153.6]],
        ["mass"],
        "protocol",
        image_size=WIDE,
        convention="protocol",
        note_contains="read in the order they fix, [x1, y1, x2, y2], not protocol's",
    ),
    LocalizationCase(
        "xyxy_pixel_rescaled",
        "[[100, 200, 300, 400]]",
        "ok",
        # input 960 -> image 480: x = 50, y = 100, w = 100, h = 100
        [[50, 100, 100, 100]],
        [""],
        "xyxy_pixel",
        convention="xyxy_pixel",
        input_size=(960, 960),
    ),
    LocalizationCase(
        "named_xywh_keys",
        '{"x": 100, "y": 50, "width": 120, "height": 90, "label": "mass"}',
        "ok",
        [[100, 50, 120, 90]],
        ["mass"],
        "xywh_pixel",
    ),
    LocalizationCase(
        "above_1000_ambiguous",
        "lesion: [100, 200, 1200, 900]",
        "ambiguous_convention",
        error_contains="1000",
    ),
    LocalizationCase("zero_one_ambiguous", "lesion: [0, 0, 1, 1]", "ambiguous_convention"),
    LocalizationCase(
        "mixed_forms_ambiguous",
        '[{"bbox_2d": [1, 2, 3, 4]}, {"box_2d": [1, 2, 3, 4]}]',
        "ambiguous_convention",
        error_contains="several forms",
    ),
    # --- thinking models: the <think> block is reasoning, never boxes or a "no target" statement
    LocalizationCase(
        "think_then_protocol_box",
        "<think>\nThe hyperintensity could be at [100, 100, 200, 200], or is there no abnormality? "
        "Looking again it is larger.\n</think>\n\nlesion: [250, 100, 750, 500]",
        "ok",
        # only the answer's box: as protocol_single
        [[48, 120, 192, 240]],
        ["lesion"],
        "protocol",
        note_contains="reasoning block was removed",
    ),
    LocalizationCase(
        "think_box_then_no_target",
        "<think>Maybe lesion: [250, 100, 750, 500]? No, that is the normal choroid plexus.</think>\n"
        "No target.",
        "no_target",
        note_contains="reasoning",
    ),
    LocalizationCase(
        "qwen3_think_then_fenced_json",
        "<think>\nI should answer bbox_2d in 0..1000, e.g. [0, 0, 1000, 1000] would be the whole image.\n"
        '</think>\n\n```json\n[{"bbox_2d": [100, 250, 500, 750], "label": "tumor"}]\n```',
        "ok",
        [[48, 120, 192, 240]],
        ["tumor"],
        "xyxy_norm1000",
        convention="xyxy_norm1000",
    ),
    LocalizationCase(
        "think_closing_tag_only",
        "The prompt opened the block. A box at [1, 2, 3, 4]?\n</think>\nmass: [250, 100, 750, 500]",
        "ok",
        [[48, 120, 192, 240]],
        ["mass"],
        "protocol",
    ),
    LocalizationCase(
        "think_cut_off_by_max_tokens",
        "<think>\nThe lesion is in the left frontal lobe, roughly [200, 150, 400, 350], but let me check",
        "empty",
        error_contains="cut off",
    ),
]


DIAGNOSIS_CASES: list[DiagnosisCase] = [
    DiagnosisCase(
        "clean_json",
        '{"most_likely_diagnosis": "Glioblastoma", "other_possible_diagnoses": '
        '["Lymphoma", "Metastasis", "Abscess", "Tumefactive demyelination"]}',
        "ok",
        ["Glioblastoma", "Lymphoma", "Metastasis", "Abscess", "Tumefactive demyelination"],
    ),
    DiagnosisCase(
        "gpt4o_prose_around_unfenced_json",
        "Based on the history and findings, here is my assessment:\n"
        '{"most_likely_diagnosis": "Creutzfeldt-Jakob disease", "other_possible_diagnoses": '
        '["Wernicke encephalopathy", "Hypoxic-ischemic encephalopathy", "Autoimmune encephalitis", '
        '"Hypoglycemia"]}\nPlease correlate clinically.',
        "ok",
        [
            "Creutzfeldt-Jakob disease",
            "Wernicke encephalopathy",
            "Hypoxic-ischemic encephalopathy",
            "Autoimmune encephalitis",
            "Hypoglycemia",
        ],
    ),
    DiagnosisCase(
        "fence_single_quotes_comment_other_keys",
        "```json\n{'most likely diagnosis': 'Herpes encephalitis', // top\n"
        " 'differentials': ['Limbic encephalitis', 'Status epilepticus', 'Glioma',],}\n```\n"
        "These are based on the history.",
        "partial",
        ["Herpes encephalitis", "Limbic encephalitis", "Status epilepticus", "Glioma"],
    ),
    DiagnosisCase(
        "title_case_keys",
        '{"Most Likely Diagnosis": "Moyamoya disease", "Differential Diagnoses": '
        '["Intracranial atherosclerosis", "Vasculitis", "Sickle cell vasculopathy", "NF1 vasculopathy"]}',
        "ok",
        [
            "Moyamoya disease",
            "Intracranial atherosclerosis",
            "Vasculitis",
            "Sickle cell vasculopathy",
            "NF1 vasculopathy",
        ],
    ),
    DiagnosisCase(
        "more_than_four_kept",
        '{"most_likely_diagnosis": "A", "other_possible_diagnoses": ["B", "C", "D", "E", "F", "G"]}',
        "ok",
        ["A", "B", "C", "D", "E", "F", "G"],
    ),
    DiagnosisCase(
        "truncated_json",
        '{"most_likely_diagnosis": "Neurosarcoidosis", "other_possible_diagnoses": '
        '["Tuberculous meningitis", "Lymphoma", "IgG4-related dis',
        "partial",
        ["Neurosarcoidosis", "Tuberculous meningitis", "Lymphoma"],
    ),
    DiagnosisCase(
        "duplicates_case_insensitive",
        '{"most_likely_diagnosis": "Glioblastoma", "other_possible_diagnoses": '
        '["glioblastoma", "GBM", "Lymphoma", "Lymphoma ", "Metastasis"]}',
        "partial",
        ["Glioblastoma", "GBM", "Lymphoma", "Metastasis"],
        n_duplicates_removed=2,
    ),
    DiagnosisCase(
        "semicolon_string_value",
        '{"diagnosis": "CADASIL", "differential_diagnosis": "MS; Susac syndrome"}',
        "partial",
        ["CADASIL", "MS", "Susac syndrome"],
    ),
    DiagnosisCase(
        "nested_with_dict_items",
        '{"answer": {"most_likely_diagnosis": "Toxoplasmosis", "other_possible_diagnoses": '
        '[{"diagnosis": "Lymphoma", "probability": 0.2}, {"name": "Tuberculoma"}]}}',
        "partial",
        ["Toxoplasmosis", "Lymphoma", "Tuberculoma"],
    ),
    DiagnosisCase(
        "template_echoed",
        '{"most_likely_diagnosis": "...", "other_possible_diagnoses": ["...", "..."]}',
        "unparseable",
    ),
    DiagnosisCase(
        "json_list_of_strings",
        '["Meningioma", "Schwannoma", "meningioma"]',
        "fallback_list",
        ["Meningioma", "Schwannoma"],
        n_duplicates_removed=1,
    ),
    DiagnosisCase(
        "numbered_list",
        "1. Glioblastoma\n2. Lymphoma\n3. Metastasis",
        "fallback_list",
        ["Glioblastoma", "Lymphoma", "Metastasis"],
    ),
    DiagnosisCase(
        "markdown_sections",
        "**Most likely diagnosis:** Neurocysticercosis\n\n**Differential diagnoses:**\n"
        "- Tuberculoma - common in endemic areas\n- **Toxoplasmosis**: immunocompromised\n- Abscess",
        "fallback_list",
        ["Neurocysticercosis", "Tuberculoma", "Toxoplasmosis", "Abscess"],
    ),
    DiagnosisCase(
        "one_line_most_likely_and_differentials",
        "Most likely: CADASIL. Differentials: MS, small vessel disease, Susac syndrome",
        "fallback_list",
        ["CADASIL", "MS", "small vessel disease", "Susac syndrome"],
    ),
    DiagnosisCase("bare_one_line", "Moyamoya disease", "fallback_list", ["Moyamoya disease"]),
    # --- bare answers without marker or label: lists cut, names with qualifiers kept whole
    DiagnosisCase(
        "bare_comma_list_five",
        "Multiple sclerosis, ADEM, NMOSD, glioma, lymphoma",
        "fallback_list",
        ["Multiple sclerosis", "ADEM", "NMOSD", "glioma", "lymphoma"],
    ),
    DiagnosisCase(
        "bare_semicolon_list",
        "MS; ADEM; NMOSD",
        "fallback_list",
        ["MS", "ADEM", "NMOSD"],
    ),
    DiagnosisCase(
        "bare_one_name_per_line",
        "Tumefactive demyelination\nPrimary CNS lymphoma\nGlioblastoma, IDH-wildtype\n",
        "fallback_list",
        ["Tumefactive demyelination", "Primary CNS lymphoma", "Glioblastoma, IDH-wildtype"],
    ),
    DiagnosisCase(
        "bare_name_with_inverted_qualifier",
        "Meningioma, atypical",
        "fallback_comma_one_name",
        ["Meningioma, atypical"],
    ),
    DiagnosisCase("refusal", "I'm sorry, but I can't provide a diagnosis.", "refusal"),
    DiagnosisCase("empty", "", "empty"),
    DiagnosisCase("none", None, "empty"),
    DiagnosisCase("none_string", "None", "empty"),
    DiagnosisCase("bytes", b'{"most_likely_diagnosis": "Abscess"}', "partial", ["Abscess"]),
    # --- numbered lists whose items start with a label word ("Primary ...")
    DiagnosisCase(
        "numbered_list_primary_first",
        "1. Primary CNS lymphoma\n2. Tuberculoma\n3. Abscess",
        "fallback_list",
        ["Primary CNS lymphoma", "Tuberculoma", "Abscess"],
    ),
    DiagnosisCase(
        "numbered_list_primary_second",
        "1. Glioblastoma\n2. Primary CNS lymphoma\n3. Metastasis\n4. Primary angiitis of the CNS",
        "fallback_list",
        ["Glioblastoma", "Primary CNS lymphoma", "Metastasis", "Primary angiitis of the CNS"],
    ),
    DiagnosisCase(
        "heading_then_numbered_primary",
        "Differential diagnosis:\n1. Primary CNS lymphoma\n2. Toxoplasmosis\n3. Glioblastoma",
        "fallback_list",
        ["Primary CNS lymphoma", "Toxoplasmosis", "Glioblastoma"],
    ),
    DiagnosisCase(
        "bold_numbers_primary",
        "**1.** Primary CNS lymphoma\n**2.** Glioblastoma",
        "fallback_list",
        ["Primary CNS lymphoma", "Glioblastoma"],
    ),
    DiagnosisCase(
        "primary_progressive_is_a_name",
        "1. Primary-progressive multiple sclerosis\n2. Primary isolated angiitis\n3. ADEM",
        "fallback_list",
        ["Primary-progressive multiple sclerosis", "Primary isolated angiitis", "ADEM"],
    ),
    DiagnosisCase(
        "list_item_with_its_own_sentences",
        "1. CADASIL. Anterior temporal involvement is typical.\n2. Susac syndrome. Less likely: vasculitis"
        "\n3. Multiple sclerosis",
        "fallback_list",
        ["CADASIL", "Susac syndrome", "Multiple sclerosis"],
    ),
    DiagnosisCase(
        "genus_initials_are_not_list_markers",
        '{"most_likely_diagnosis": "E. coli meningitis", "other_possible_diagnoses": '
        '["C. neoformans meningitis", "B. burgdorferi (Lyme) neuroborreliosis", "a) Tuberculous meningitis"]}',
        "partial",
        [
            "E. coli meningitis",
            "C. neoformans meningitis",
            "B. burgdorferi (Lyme) neuroborreliosis",
            "Tuberculous meningitis",
        ],
    ),
    DiagnosisCase(
        "list_item_abbreviation_kept",
        "1. St. Louis encephalitis\n2. West Nile encephalitis",
        "fallback_list",
        ["St. Louis encephalitis", "West Nile encephalitis"],
    ),
    # --- labelled "others" lines after the most likely one
    DiagnosisCase(
        "most_likely_then_others_line",
        "Most likely: Multiple sclerosis\nOthers: ADEM, NMOSD, Susac syndrome",
        "fallback_list",
        ["Multiple sclerosis", "ADEM", "NMOSD", "Susac syndrome"],
    ),
    DiagnosisCase(
        "bold_alternatives_semicolons",
        "**Most likely diagnosis:** Herpes simplex encephalitis\n"
        "**Alternatives:** Limbic encephalitis; Status epilepticus; Gliomatosis cerebri",
        "fallback_list",
        [
            "Herpes simplex encephalitis",
            "Limbic encephalitis",
            "Status epilepticus",
            "Gliomatosis cerebri",
        ],
    ),
    DiagnosisCase(
        "one_line_other_possibilities_include",
        "Most likely: Glioblastoma. Other possibilities include lymphoma, metastasis, or abscess.",
        "fallback_list",
        ["Glioblastoma", "lymphoma", "metastasis", "abscess"],
    ),
    DiagnosisCase(
        "numbered_most_likely_then_others",
        "1. Most likely: Meningioma. Others: Hemangiopericytoma, Dural metastasis",
        "fallback_list",
        ["Meningioma", "Hemangiopericytoma", "Dural metastasis"],
    ),
    DiagnosisCase(
        "others_are_less_likely_is_a_remark",
        "Most likely: Meningioma\nOthers are less likely.",
        "fallback_list",
        ["Meningioma"],
    ),
    # --- thinking models
    DiagnosisCase(
        "think_then_numbered_list",
        "<think>\nA periventricular enhancing mass in an immunocompromised patient. Toxoplasmosis?\n"
        "1. Toxoplasmosis would be ring-enhancing...\n</think>\n\n"
        "1. Primary CNS lymphoma\n2. Toxoplasmosis\n3. Glioblastoma",
        "fallback_list",
        ["Primary CNS lymphoma", "Toxoplasmosis", "Glioblastoma"],
    ),
    DiagnosisCase(
        "think_with_json_then_json",
        '<think>Draft: {"most_likely_diagnosis": "Glioma", "other_possible_diagnoses": []}. '
        "No, the rim is smooth.</think>\n"
        '{"most_likely_diagnosis": "Abscess", "other_possible_diagnoses": ["Glioblastoma", "Metastasis"]}',
        "partial",
        ["Abscess", "Glioblastoma", "Metastasis"],
    ),
    DiagnosisCase(
        "thinking_tags_then_most_likely",
        "<thinking>Bilateral thalamic T2 signal...</thinking>\n"
        "Most likely: Deep venous thrombosis\nDifferentials: Wernicke encephalopathy, CJD",
        "fallback_list",
        ["Deep venous thrombosis", "Wernicke encephalopathy", "CJD"],
    ),
    DiagnosisCase(
        "think_closing_tag_only",
        "The chat template opened the block. Most likely: glioma? Let me reconsider.\n</think>\n\n"
        "1. Abscess\n2. Glioblastoma",
        "fallback_list",
        ["Abscess", "Glioblastoma"],
    ),
    DiagnosisCase(
        "think_cut_off_by_max_tokens",
        "<think>\nRing enhancement with restricted diffusion. Most likely: abscess. Differentials: "
        "glioblastoma, metastasis. But wait",
        "empty",
    ),
    # --- prose: GPT-4o-class models that ignore the JSON instruction. The lead statement's
    # name comes first, then the differentials in the order written; " and " is read with the
    # diagnosis lexicon (a known name containing "and" stays whole).
    DiagnosisCase(
        "prose_most_likely_then_differentials",
        "Based on the findings, the most likely diagnosis is glioblastoma. Differential diagnoses "
        "include lymphoma, metastasis and abscess.",
        "fallback_list",
        ["glioblastoma", "lymphoma", "metastasis", "abscess"],
    ),
    DiagnosisCase(
        "prose_subject_first_trailing_clause_dropped",
        "Glioblastoma is the most likely diagnosis, given the irregular ring enhancement and "
        "central necrosis in this elderly patient. Other considerations include primary CNS "
        "lymphoma, metastases, or a brain abscess.",
        "fallback_list",
        ["Glioblastoma", "primary CNS lymphoma", "metastases", "brain abscess"],
    ),
    DiagnosisCase(
        "prose_most_consistent_with_in_this_patient",
        "The imaging findings are most consistent with herpes simplex encephalitis in this "
        "patient. Differentials include autoimmune limbic encephalitis and status epilepticus.",
        "fallback_list",
        ["herpes simplex encephalitis", "autoimmune limbic encephalitis", "status epilepticus"],
    ),
    DiagnosisCase(
        "prose_favour_over_then_less_likely",
        "Given the incomplete ring of enhancement, I favour tumefactive demyelination over a "
        "high-grade glioma. Other possibilities include lymphoma and, less likely, abscess.",
        "fallback_list",
        ["tumefactive demyelination", "lymphoma", "abscess"],
    ),
    DiagnosisCase(
        "prose_suggestive_of_then_to_consider",
        "The findings are suggestive of neurocysticercosis. To consider: tuberculoma, "
        "toxoplasmosis, pyogenic abscess and metastasis.",
        "fallback_list",
        ["neurocysticercosis", "tuberculoma", "toxoplasmosis", "pyogenic abscess", "metastasis"],
    ),
    DiagnosisCase(
        "prose_name_with_comma_and_and_kept",
        "The most likely diagnosis is hand, foot and mouth disease (enterovirus 71 "
        "rhombencephalitis). Differential diagnoses include ADEM, listeria rhombencephalitis and "
        "Bickerstaff encephalitis.",
        "fallback_list",
        [
            "hand, foot and mouth disease (enterovirus 71 rhombencephalitis)",
            "ADEM",
            "listeria rhombencephalitis",
            "Bickerstaff encephalitis",
        ],
    ),
    DiagnosisCase(
        "prose_lexicon_name_with_and_kept",
        "Findings favour hypomyelination with atrophy of the basal ganglia and cerebellum (H-ABC). "
        "Differentials include Pelizaeus-Merzbacher disease and vanishing white matter disease.",
        "fallback_list",
        [
            "hypomyelination with atrophy of the basal ganglia and cerebellum (H-ABC)",
            "Pelizaeus-Merzbacher disease",
            "vanishing white matter disease",
        ],
    ),
    DiagnosisCase(
        "prose_and_between_two_known_diseases",
        "Most consistent with tuberous sclerosis and subependymal giant cell astrocytoma.",
        "fallback_list",
        ["tuberous sclerosis", "subependymal giant cell astrocytoma"],
    ),
    DiagnosisCase(
        "prose_represents_then_oxford_or",
        "This most likely represents a meningioma. Differential diagnoses include a dural "
        "metastasis, a solitary fibrous tumour, or lymphoma.",
        "fallback_list",
        ["meningioma", "dural metastasis", "solitary fibrous tumour", "lymphoma"],
    ),
    DiagnosisCase(
        "prose_should_also_be_considered",
        "The lesion most likely represents a pilocytic astrocytoma; medulloblastoma and ependymoma "
        "should also be considered.",
        "fallback_list",
        ["pilocytic astrocytoma", "medulloblastoma", "ependymoma"],
    ),
    DiagnosisCase(
        "prose_i_think_subject_other_considerations",
        "Given the age and location, I think pilocytic astrocytoma is the most likely diagnosis; "
        "medulloblastoma and ependymoma are other considerations.",
        "fallback_list",
        ["pilocytic astrocytoma", "medulloblastoma", "ependymoma"],
    ),
    DiagnosisCase(
        "prose_followed_by",
        "Given the history of HIV, toxoplasmosis is the most likely diagnosis, followed by primary "
        "CNS lymphoma and progressive multifocal leukoencephalopathy.",
        "fallback_list",
        ["toxoplasmosis", "primary CNS lymphoma", "progressive multifocal leukoencephalopathy"],
    ),
    DiagnosisCase(
        "prose_with_as_differentials",
        "The most likely diagnosis is glioblastoma (WHO grade 4), with metastasis, lymphoma and "
        "abscess as differentials.",
        "fallback_list",
        ["glioblastoma (WHO grade 4)", "metastasis", "lymphoma", "abscess"],
    ),
    DiagnosisCase(
        "prose_negated_favour_skipped",
        "I would not favour lymphoma given the absence of restricted diffusion. The leading "
        "diagnosis is glioblastoma; differentials are metastasis and abscess.",
        "fallback_list",
        ["glioblastoma", "metastasis", "abscess"],
    ),
    DiagnosisCase(
        "prose_not_x_but_y",
        "The most likely diagnosis is not glioblastoma but primary CNS lymphoma, given the "
        "homogeneous enhancement.",
        "fallback_list",
        ["primary CNS lymphoma"],
    ),
    DiagnosisCase(
        "prose_qualifier_after_comma_known_to_lexicon",
        "The most likely diagnosis is glioblastoma, IDH-wildtype, given the necrosis. Differential "
        "diagnoses include: primary CNS lymphoma; metastasis; abscess.",
        "fallback_list",
        ["glioblastoma, IDH-wildtype", "primary CNS lymphoma", "metastasis", "abscess"],
    ),
    DiagnosisCase(
        "prose_broad_differential_then_lead",
        "The differential diagnosis is broad and includes metastasis, lymphoma and high-grade "
        "glioma, but the most likely diagnosis is glioblastoma.",
        "fallback_list",
        ["glioblastoma", "metastasis", "lymphoma", "high-grade glioma"],
    ),
    DiagnosisCase(
        "prose_bold_names",
        "Based on the imaging, the most likely diagnosis is **neurocysticercosis**. Differential "
        "diagnoses include **tuberculoma**, **toxoplasmosis** and **pyogenic abscess**.",
        "fallback_list",
        ["neurocysticercosis", "tuberculoma", "toxoplasmosis", "pyogenic abscess"],
    ),
    DiagnosisCase(
        "prose_lead_before_numbered_list",
        "The findings are most consistent with a demyelinating process.\n\n"
        "Differential diagnosis:\n1. Multiple sclerosis - periventricular ovoid lesions\n"
        "2. ADEM\n3. Susac syndrome",
        "fallback_list",
        ["demyelinating process", "Multiple sclerosis", "ADEM", "Susac syndrome"],
    ),
    DiagnosisCase(
        "prose_consistent_with_under_list_item_is_no_lead",
        "1. Glioblastoma\n   The irregular rim is consistent with necrosis.\n2. Lymphoma",
        "fallback_list",
        ["Glioblastoma", "Lymphoma"],
    ),
    DiagnosisCase(
        "prose_after_thinking",
        "<think>\nMaybe the most likely diagnosis is lymphoma? The rim is irregular.\n</think>\n\n"
        "The most likely diagnosis is glioblastoma. Differentials include lymphoma and metastasis.",
        "fallback_list",
        ["glioblastoma", "lymphoma", "metastasis"],
    ),
]


CAPTION_CASES: list[CaptionCase] = [
    CaptionCase(
        "plain",
        "Axial FLAIR image showing a left frontal hyperintense lesion.",
        "ok",
        "Axial FLAIR image showing a left frontal hyperintense lesion.",
    ),
    CaptionCase(
        "sure_here_is_quoted",
        'Sure! Here is the caption:\n\n"Axial FLAIR image  showing a left frontal lesion."',
        "ok",
        "Axial FLAIR image showing a left frontal lesion.",
    ),
    CaptionCase(
        "bold_prefix",
        "**Caption:** Axial T2-weighted MRI showing a hyperintense lesion in the right thalamus.",
        "ok",
        "Axial T2-weighted MRI showing a hyperintense lesion in the right thalamus.",
    ),
    CaptionCase(
        "header_and_bullets",
        "## Description\n- **Sequence:** T1 post-contrast\n- **Plane:** axial\n"
        "- **Findings:** ring-enhancing lesion",
        "ok",
        "Sequence: T1 post-contrast. Plane: axial. Findings: ring-enhancing lesion.",
    ),
    CaptionCase(
        "code_fence",
        "```\nCoronal FLAIR: bilateral hippocampal hyperintensity.\n```",
        "ok",
        "Coronal FLAIR: bilateral hippocampal hyperintensity.",
    ),
    CaptionCase(
        "answer_prefix_and_courtesy",
        "Answer: Sagittal T1 showing a Chiari malformation.\n\nLet me know if you need more detail.",
        "ok",
        "Sagittal T1 showing a Chiari malformation.",
    ),
    CaptionCase(
        "json_caption",
        '{"caption": "Axial DWI: restricted diffusion."}',
        "ok",
        "Axial DWI: restricted diffusion.",
    ),
    CaptionCase(
        "certainly_then_description",
        "Certainly.\nDescription: Axial T2 image.",
        "ok",
        "Axial T2 image.",
    ),
    CaptionCase(
        "curly_quotes",
        "\u201cAxial SWI: multiple microbleeds.\u201d",
        "ok",
        "Axial SWI: multiple microbleeds.",
    ),
    CaptionCase(
        "multi_paragraph",
        "Axial T2-weighted image.\n\nThere is a   hyperintense lesion in the pons.",
        "ok",
        "Axial T2-weighted image. There is a hyperintense lesion in the pons.",
    ),
    # --- refusals: the whole answer declines; scored as the empty caption, counted
    CaptionCase("refusal_sorry", "I'm sorry, I can't describe medical images.", "refusal"),
    CaptionCase(
        "refusal_as_an_ai",
        "As an AI language model, I cannot interpret medical images such as MRI scans. "
        "Please consult a qualified radiologist.",
        "refusal",
    ),
    CaptionCase(
        "refusal_unable_bold",
        "**I'm unable to provide a description of this image.** Please consult a healthcare "
        "professional for an accurate interpretation.",
        "refusal",
    ),
    CaptionCase(
        "disclaimer_then_caption",
        "As an AI, I cannot give a diagnosis, but this axial FLAIR image shows a right "
        "temporal hyperintense lesion.",
        "ok",
        "As an AI, I cannot give a diagnosis, but this axial FLAIR image shows a right "
        "temporal hyperintense lesion.",
    ),
    CaptionCase(
        "cannot_be_excluded",
        "Axial T2 image; a low-grade glioma cannot be excluded.",
        "ok",
        "Axial T2 image; a low-grade glioma cannot be excluded.",
    ),
    CaptionCase("only_quotes", "''", "empty"),
    CaptionCase("whitespace", "\n\n  ", "empty"),
    CaptionCase("none", None, "empty"),
    CaptionCase("none_string", "None", "empty"),
    CaptionCase("not_text", 3.5, "unparseable"),
    # --- thinking models: only the text after the reasoning is the caption
    CaptionCase(
        "think_then_caption",
        "<think>\nI see a bright region in the left frontal lobe. Maybe a glioma?\n</think>\n\n"
        "Axial FLAIR image shows a left frontal hyperintense lesion.",
        "ok",
        "Axial FLAIR image shows a left frontal hyperintense lesion.",
    ),
    CaptionCase(
        "thinking_tags_then_prefix",
        "<thinking>The sequence looks T2-weighted.</thinking>\nCaption: Axial T2 image with a pontine lesion.",
        "ok",
        "Axial T2 image with a pontine lesion.",
    ),
    CaptionCase(
        "qwen3_empty_think_block",
        "<think>\n\n</think>\n\nSagittal T1 image showing a Chiari malformation.",
        "ok",
        "Sagittal T1 image showing a Chiari malformation.",
    ),
    CaptionCase(
        "think_closing_tag_only",
        "Hmm, which plane is this? Coronal.\n</think>\nCoronal FLAIR image.",
        "ok",
        "Coronal FLAIR image.",
    ),
    CaptionCase(
        "think_cut_off_by_max_tokens",
        "<think>\nThe image is an axial FLAIR. There is a hyperintense lesion in the",
        "empty",
    ),
    CaptionCase("list_of_numbers_is_not_a_caption", [1, 2], "unparseable"),
    CaptionCase(
        "list_of_sentences",
        ["Axial FLAIR image.", 3, "  ", "Left frontal lesion."],
        "ok",
        "Axial FLAIR image. Left frontal lesion.",
    ),
]
