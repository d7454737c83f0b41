"""Parsers against the table of realistic answers, plus their edge rules and ParseStats."""

from __future__ import annotations

import json

import pytest

from novabench.errors import NovaInputError
from novabench.registry import TASKS
from novabench.run.parsers import (
    CAPTION_STATUSES,
    CONVENTIONS,
    DIAGNOSIS_STATUSES,
    FAILURE_STATUSES,
    LOCALIZATION_STATUSES,
    ParsedBoxes,
    ParsedCaption,
    ParsedDiagnoses,
    ParseStats,
    parse_caption,
    parse_diagnoses,
    parse_localization,
)

from .answers_table import (
    CAPTION_CASES,
    DIAGNOSIS_CASES,
    LOCALIZATION_CASES,
    CaptionCase,
    DiagnosisCase,
    LocalizationCase,
)


def test_table_is_wide_and_covers_every_status() -> None:
    assert len(LOCALIZATION_CASES) + len(DIAGNOSIS_CASES) + len(CAPTION_CASES) >= 60
    # "ok_out_of_image" is declared for localisation but given by the predictions layer after
    # parsing (boxes clipped to the image), never by parse_localization itself.
    # "too_long" likewise: an answer beyond the size caps is never handed to a parser.
    assert "ok_out_of_image" in LOCALIZATION_STATUSES
    assert {case.status for case in LOCALIZATION_CASES} == set(LOCALIZATION_STATUSES) - {
        "ok_out_of_image",
        "too_long",
    }
    assert {case.status for case in DIAGNOSIS_CASES} == set(DIAGNOSIS_STATUSES) - {"too_long"}
    assert {case.status for case in CAPTION_CASES} == set(CAPTION_STATUSES) - {"too_long"}
    for table in (LOCALIZATION_CASES, DIAGNOSIS_CASES, CAPTION_CASES):
        ids = [case.id for case in table]
        assert len(ids) == len(set(ids))


@pytest.mark.parametrize("case", LOCALIZATION_CASES, ids=lambda case: case.id)
def test_localization_table(case: LocalizationCase) -> None:
    parsed = parse_localization(
        case.text,
        image_size=case.image_size,
        input_size=case.input_size,
        convention=case.convention,
    )
    assert parsed.status == case.status, parsed.error
    assert len(parsed.boxes) == len(case.boxes)
    for got, expected in zip(parsed.boxes, case.boxes):
        assert got == pytest.approx(expected, abs=1e-9)
    if case.labels is not None:
        assert parsed.labels == case.labels
    assert len(parsed.labels) == len(parsed.boxes)
    assert parsed.convention == case.convention_used
    assert parsed.n_out_of_range == case.n_out_of_range
    assert parsed.n_swapped == case.n_swapped
    assert parsed.n_degenerate_dropped == case.n_degenerate_dropped
    if case.note_contains:
        assert any(case.note_contains in note for note in parsed.notes), parsed.notes
    if case.error_contains:
        assert parsed.error is not None and case.error_contains in parsed.error
    if parsed.status in {"ok", "ok_order_from_keys", "truncated_ok", "no_target"}:
        assert parsed.error is None
    else:
        assert parsed.boxes == [] and parsed.error


@pytest.mark.parametrize("case", DIAGNOSIS_CASES, ids=lambda case: case.id)
def test_diagnosis_table(case: DiagnosisCase) -> None:
    parsed = parse_diagnoses(case.text)
    assert parsed.status == case.status, parsed.error
    assert parsed.diagnoses == case.diagnoses
    assert parsed.n_duplicates_removed == case.n_duplicates_removed
    assert (parsed.error is None) == (parsed.status not in {"empty", "unparseable", "refusal"})


@pytest.mark.parametrize("case", CAPTION_CASES, ids=lambda case: case.id)
def test_caption_table(case: CaptionCase) -> None:
    parsed = parse_caption(case.text)
    assert parsed.status == case.status
    assert parsed.caption == case.caption


# --- localisation rules not in the table


def test_runaway_list_keeps_every_box_beyond_the_metric_cap() -> None:
    # 150 boxes: more than the metric's 100 detections; the parser keeps all of them.
    answer = "\n".join(f"lesion {i}: [{i}, {i}, {i + 10}, {i + 10}]" for i in range(150))
    parsed = parse_localization(answer, image_size=(480, 480))
    assert parsed.status == "ok" and parsed.n_boxes == 150
    assert parsed.labels[149] == "lesion 149"


def test_all_conventions_read_the_same_box() -> None:
    # One box, x 48..240, y 120..360 on 480 x 480, written in every convention.
    expected = [48.0, 120.0, 192.0, 240.0]
    answers = {
        "protocol": "[250, 100, 750, 500]",  # ymin, xmin, ymax, xmax in 0..1000
        "qwen": "[96, 240, 480, 720]",  # xyxy pixels of a 960 x 960 input
        "xyxy_norm1": "[0.1, 0.25, 0.5, 0.75]",  # 48/480, 120/480, 240/480, 360/480
        "xyxy_norm1000": "[100, 250, 500, 750]",
        "xyxy_pixel": "[96, 240, 480, 720]",  # also pixels of the 960 x 960 input
        "xywh_pixel": "[96, 240, 384, 480]",  # width 480 - 96, height 720 - 240
        "yxyx_norm1": "[0.25, 0.1, 0.75, 0.5]",  # 120/480, 48/480, 360/480, 240/480
    }
    assert set(answers) == set(CONVENTIONS) - {"auto"}
    for convention, answer in answers.items():
        parsed = parse_localization(
            answer, image_size=(480, 480), input_size=(960, 960), convention=convention
        )
        assert parsed.status == "ok" and parsed.convention == convention
        assert parsed.boxes[0] == pytest.approx(expected), convention


def test_explicit_convention_overrides_the_form() -> None:
    # A bbox_2d answer from Qwen3-VL is 0..1000, not pixels: the caller says so.
    answer = '[{"bbox_2d": [100, 250, 500, 750]}]'
    auto = parse_localization(answer, image_size=(480, 480))
    explicit = parse_localization(answer, image_size=(480, 480), convention="xyxy_norm1000")
    # read as pixels, kept past the edge: w = 500 - 100 = 400, h = 750 - 250 = 500
    assert auto.convention == "qwen" and auto.boxes == [[100.0, 250.0, 400.0, 500.0]]
    assert explicit.boxes[0] == pytest.approx([48.0, 120.0, 192.0, 240.0])


def test_box_fully_outside_is_kept_and_counted() -> None:
    # 1500 * 0.48 = 720, (1900 - 1500) * 0.48 = 192: scored as given (a sure miss), counted.
    parsed = parse_localization(
        "far: [1500, 1500, 1900, 1900]", image_size=(480, 480), convention="protocol"
    )
    assert parsed.boxes == [pytest.approx([720.0, 720.0, 192.0, 192.0])]
    assert parsed.n_degenerate_dropped == 0 and parsed.n_out_of_range == 1


def test_no_target_mixed_with_box_keeps_box_and_notes_it() -> None:
    parsed = parse_localization(
        "lesion: [250, 100, 750, 500]\nOtherwise no target.", image_size=(480, 480)
    )
    assert parsed.n_boxes == 1
    assert any("no target" in note for note in parsed.notes)


def test_found_false_with_boxes_keeps_boxes_and_notes_it() -> None:
    parsed = parse_localization(
        '{"found": false, "boxes": [{"bbox_2d": [1, 2, 30, 40]}]}', image_size=(480, 480)
    )
    assert parsed.n_boxes == 1 and any("nothing was found" in note for note in parsed.notes)


def test_label_text_no_lesion_is_not_a_no_target_statement() -> None:
    parsed = parse_localization(
        '[{"bbox_2d": [1, 2, 30, 40], "label": "no lesion here?"}]', image_size=(480, 480)
    )
    assert parsed.notes == ("input_size not given: assumed the model saw the original image size",)


def test_decoded_json_input_is_accepted() -> None:
    parsed = parse_localization(
        [{"bbox_2d": [10, 20, 110, 220], "label": "cyst"}], image_size=(480, 480)
    )
    assert parsed.boxes == [[10.0, 20.0, 100.0, 200.0]]


def test_nan_coordinates_are_dropped() -> None:
    parsed = parse_localization(
        '{"bbox": [NaN, 10, 20, 30]}', image_size=(480, 480), convention="xyxy_pixel"
    )
    assert parsed.boxes == [] and parsed.n_degenerate_dropped == 1


def test_huge_numbers_do_not_overflow() -> None:
    parsed = parse_localization(
        "lesion: [1" + "0" * 400 + ", 0, 10, 10]", image_size=(480, 480), convention="protocol"
    )
    # 1e400 is not a finite number: the box is dropped and counted, never kept as infinite.
    assert parsed.status == "invalid_boxes" and parsed.boxes == []
    assert parsed.n_degenerate_dropped == 1


@pytest.mark.parametrize(
    "answer",
    [
        "lesion: [1e308, 198, 479, 348]",  # width 1e308 - 479, area 1e308 * 150: past a float
        "lesion: [-1e308, 198, 1e308, 348]",  # width 2e308: past a float
    ],
)
def test_a_box_too_large_for_a_float_is_dropped_and_counted_with_no_warning(answer: str) -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's overflow warning would fail the test
        parsed = parse_localization(
            answer + "\nmass: [10, 20, 110, 220]", image_size=(480, 480), convention="xyxy_pixel"
        )
    # The second box stands as written (x 10, y 20, width 100, height 200).
    assert parsed.boxes == [[10.0, 20.0, 100.0, 200.0]] and parsed.labels == ["mass"]
    assert parsed.n_degenerate_dropped == 1 and parsed.n_out_of_range == 0


def test_deep_nesting_is_not_a_crash() -> None:
    # 5000 brackets around one protocol box: no recursion error, the box is still read.
    # [ymin, xmin, ymax, xmax] = [1, 2, 3, 4] / 1000 of 480 -> x 0.96, y 0.48, w 0.96, h 0.96.
    parsed = parse_localization(
        "[" * 5000 + "1, 2, 3, 4" + "]" * 5000, image_size=(480, 480), prompt_convention="protocol"
    )
    assert (parsed.status, parsed.convention, parsed.error) == ("ok", "protocol", None)
    assert parsed.boxes == [pytest.approx([0.96, 0.48, 0.96, 0.96], abs=1e-12)]


def _strings_in(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _strings_in(item)]
    if isinstance(value, (list, tuple)):
        return [text for item in value for text in _strings_in(item)]
    return []


# A lone UTF-16 surrogate is no character: UTF-8 cannot encode it. Models' text arrives with
# one when a tokenizer or a client cuts an emoji's surrogate pair, or as a JSON escape.
SURROGATE_ANSWERS = [
    "\ud800",
    "lesion \ud83d: [250, 100, 750, 500]",
    '[{"bbox_2d": [10, 20, 110, 220], "label": "cyst \udc00"}]',
    '[{"bbox_2d": [10, 20, 110, 220], "label": "cyst \\udc00"}]',  # the JSON escape
    "Most likely: glioma \udfff. Differentials include lymphoma\ud800 and abscess.",
    '{"most_likely_diagnosis": "\\ud800Glioma", "differentials": ["Abscess\udbff"]}',
    "1. Glio\ud800ma\n2. Lymphoma",
    '{"caption": "Axial \ud800 T2 image."}',
    "<think>\ud800</think>\udc00Axial FLAIR image.",
    "\ude00\ud83d" * 50,
]


@pytest.mark.parametrize("answer", SURROGATE_ANSWERS, ids=lambda answer: ascii(answer)[:30])
def test_lone_surrogates_are_read_and_never_leak_into_results(answer: str) -> None:
    results = [
        parse_localization(answer, image_size=(480, 480)),
        parse_diagnoses(answer),
        parse_caption(answer),
    ]
    for parsed, statuses in zip(
        results, (LOCALIZATION_STATUSES, DIAGNOSIS_STATUSES, CAPTION_STATUSES)
    ):
        assert parsed.status in statuses
        assert parsed.error is None or "internal" not in parsed.error, parsed.error
        for text in _strings_in(parsed.to_dict()):
            text.encode("utf-8")  # raises UnicodeEncodeError on a surrogate


def test_lone_surrogates_become_replacement_characters_and_pairs_are_joined() -> None:
    boxes = parse_localization(
        '[{"bbox_2d": [10, 20, 110, 220], "label": "cyst \\udc00"}]', image_size=(480, 480)
    )
    assert boxes.boxes == [[10.0, 20.0, 100.0, 200.0]] and boxes.labels == ["cyst \ufffd"]
    diagnoses = parse_diagnoses(
        '{"most_likely_diagnosis": "Glioma \\ud83d\\ude00", "differentials": ["Abscess\udbff"]}'
    )
    assert diagnoses.diagnoses == ["Glioma \U0001f600", "Abscess\ufffd"]
    assert parse_caption("Axial \ud83d\ude00 T2\ud800.").caption == "Axial \U0001f600 T2\ufffd."


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"image_size": (480, 480), "convention": "yxyx"}, "convention"),
        ({"image_size": (0, 480)}, "image_size"),
        ({"image_size": "480"}, "image_size"),
        ({"image_size": (480, 480), "input_size": (-1, 5)}, "input_size"),
    ],
)
def test_bad_arguments_raise_input_error(kwargs: dict, field: str) -> None:
    with pytest.raises(NovaInputError) as info:
        parse_localization("lesion: [1, 2, 3, 4]", **kwargs)
    assert info.value.field == field


def test_to_dict_is_json_serialisable() -> None:
    parsed = parse_localization("lesion: [250, 100, 750, 500]", image_size=(480, 480))
    data = json.loads(json.dumps(parsed.to_dict()))
    assert data["boxes"] == [[48.0, 120.0, 192.0, 240.0]] and data["status"] == "ok"
    assert json.loads(json.dumps(parse_diagnoses("1. A").to_dict()))["diagnoses"] == ["A"]
    assert parse_caption("Axial.").to_dict()["caption"] == "Axial."


# --- diagnosis and caption rules not in the table


def test_diagnosis_prefers_the_contract_object_over_other_json() -> None:
    answer = (
        'Scores: {"confidence": 0.7}\n'
        '{"most_likely_diagnosis": "Abscess", "other_possible_diagnoses": ["Glioma"]}'
    )
    assert parse_diagnoses(answer).diagnoses == ["Abscess", "Glioma"]


def test_diagnosis_most_likely_property() -> None:
    assert parse_diagnoses("").most_likely is None
    assert parse_diagnoses('{"most_likely_diagnosis": "X"}').most_likely == "X"


def test_caption_keeps_inner_markdown_text() -> None:
    parsed = parse_caption("Axial *T2* image with a **large** cyst.")
    assert parsed.caption == "Axial T2 image with a large cyst."


@pytest.mark.parametrize(
    "marker", ["{n}.", "{n})", "({n})", "{n}:", "-", "*", "\u2022", "+", "**{n}.**"]
)
@pytest.mark.parametrize(
    "heading",
    [
        "",
        "Differential diagnosis:\n",
        "**Differential diagnoses:**\n\n",
        "<think>\n1. Glioma? No.\n</think>\n\n",
        "Ranked list:\n",
    ],
)
def test_diagnosis_list_items_starting_with_label_words(marker: str, heading: str) -> None:
    # "Primary", "Leading", "Final", "Working", "Other": label words of "Primary diagnosis: X"
    # lines, but here the first word of a name.
    names = [
        "Primary CNS lymphoma",
        "Leading-edge demyelination",
        "Final stage CJD",
        "Other thing",
        "Working memory disorder",
        "Primary angiitis of the CNS",
    ]
    answer = heading + "\n".join(f"{marker.format(n=i)} {name}" for i, name in enumerate(names, 1))
    parsed = parse_diagnoses(answer)
    assert parsed.status == "fallback_list" and parsed.diagnoses == names


@pytest.mark.parametrize(
    "label",
    [
        "Others",
        "Other diagnoses",
        "Other possible diagnoses",
        "Alternatives",
        "Differentials",
        "Differential diagnosis",
        "Differential (ranked)",
        "DDx",
        "**Others**",
        "Other considerations",
    ],
)
@pytest.mark.parametrize("separator", [", ", "; ", ", or "])
def test_diagnosis_labelled_others_line(label: str, separator: str) -> None:
    answer = f"Most likely: Multiple sclerosis\n{label}: ADEM{separator}NMOSD"
    assert parse_diagnoses(answer).diagnoses == ["Multiple sclerosis", "ADEM", "NMOSD"]


def test_diagnosis_labelled_others_inside_a_list() -> None:
    answer = "- Most likely: Meningioma\n- Others: Schwannoma, Metastasis\n- Most likely: ignored"
    assert parse_diagnoses(answer).diagnoses == ["Meningioma", "Schwannoma", "Metastasis"]


def test_diagnosis_label_needs_a_separator() -> None:
    # "Primary is X" and "Primary - X" are labels; "Primary isolated ..." and "Primary-..." are names.
    assert parse_diagnoses("Primary is glioma").diagnoses == ["glioma"]
    assert parse_diagnoses("Primary diagnosis - glioma").diagnoses == ["glioma"]
    assert parse_diagnoses("1. Primary isolated angiitis\n2. Vasculitis").diagnoses == [
        "Primary isolated angiitis",
        "Vasculitis",
    ]


def test_diagnosis_value_ends_at_its_first_sentence() -> None:
    parsed = parse_diagnoses("Most likely diagnosis: Glioblastoma. It crosses the corpus callosum.")
    assert parsed.diagnoses == ["Glioblastoma"]
    parsed = parse_diagnoses(
        "1. N. meningitidis meningitis. Common in young adults.\n2. E. coli abscess"
    )
    assert parsed.diagnoses == ["N. meningitidis meningitis", "E. coli abscess"]


# --- diagnoses in prose


@pytest.mark.parametrize(
    "names, expected",
    [
        # both sides known diseases: two diagnoses
        ("metastasis and abscess", ["metastasis", "abscess"]),
        ("CADASIL and CARASIL", ["CADASIL", "CARASIL"]),
        # the whole is a name of the lexicon: kept, even with a comma inside
        (
            "hypomyelination with atrophy of the basal ganglia and cerebellum",
            ["hypomyelination with atrophy of the basal ganglia and cerebellum"],
        ),
        (
            "mitochondrial encephalomyopathy, lactic acidosis, and stroke-like episodes, and CADASIL",
            [
                "mitochondrial encephalomyopathy, lactic acidosis, and stroke-like episodes",
                "CADASIL",
            ],
        ),
        (
            "hypomyelination with atrophy of the basal ganglia and cerebellum and Alexander disease",
            [
                "hypomyelination with atrophy of the basal ganglia and cerebellum",
                "Alexander disease",
            ],
        ),
        ("Hand, foot and mouth disease, ADEM", ["Hand, foot and mouth disease", "ADEM"]),
        # the words show one name: one unknown word before "and", or an "X with/of ... and ..."
        ("foot and mouth disease", ["foot and mouth disease"]),
        ("hypoxic and ischaemic injury", ["hypoxic and ischaemic injury"]),
        (
            "glioblastoma with necrosis and haemorrhage",
            ["glioblastoma with necrosis and haemorrhage"],
        ),
        (
            "leukoencephalopathy with brainstem and spinal cord involvement and lactate elevation, "
            "and Alexander disease",
            [
                "leukoencephalopathy with brainstem and spinal cord involvement and lactate elevation",
                "Alexander disease",
            ],
        ),
        # otherwise the whole is not a known name: split
        (
            "post-treatment change and radiation-induced injury",
            ["post-treatment change", "radiation-induced injury"],
        ),
        ("toxo and lymphoma", ["toxo", "lymphoma"]),
        # brackets are never cut, semicolons beat commas, inline numbers separate
        (
            "CADASIL (cerebral autosomal dominant arteriopathy with subcortical infarcts and "
            "leukoencephalopathy), Susac syndrome",
            [
                "CADASIL (cerebral autosomal dominant arteriopathy with subcortical infarcts and "
                "leukoencephalopathy)",
                "Susac syndrome",
            ],
        ),
        (
            "Glioblastoma, IDH-wildtype; lymphoma, EBV-positive; abscess",
            ["Glioblastoma, IDH-wildtype", "lymphoma, EBV-positive", "abscess"],
        ),
        (
            "1) glioblastoma 2) lymphoma (grade 2) 3) abscess",
            ["glioblastoma", "lymphoma (grade 2)", "abscess"],
        ),
    ],
)
def test_diagnosis_differential_list_and_rule(names: str, expected: list[str]) -> None:
    parsed = parse_diagnoses(f"Differential diagnoses include {names}.")
    assert parsed.status == "fallback_list" and parsed.diagnoses == expected


@pytest.mark.parametrize(
    "sentence",
    [
        "The most likely diagnosis is glioblastoma.",
        "The leading diagnosis here is glioblastoma.",
        "My top diagnosis would be glioblastoma.",
        "Glioblastoma is the most likely diagnosis.",
        "Based on the findings, glioblastoma is the most likely diagnosis.",
        "Overall, I think that glioblastoma is my favoured diagnosis.",
        "Glioblastoma is favoured.",
        "This most likely represents a glioblastoma.",
        "The lesion is most likely a glioblastoma.",
        "I favour glioblastoma over lymphoma.",
        "The features favor glioblastoma.",
        "The findings are in favour of a glioblastoma.",
        "The findings are most consistent with a glioblastoma.",
        "The findings are suggestive of glioblastoma in this patient.",
        "The imaging features strongly suggest glioblastoma.",
        "Highly suggestive of glioblastoma.",
        "The diagnosis is probably glioblastoma, given the necrosis.",
        "The most likely diagnosis is glioblastoma, which explains the necrosis.",
        "The most likely diagnosis is glioblastoma because of the necrosis.",
        "The most likely diagnosis: glioblastoma - typical butterfly pattern.",
        "I would not favour lymphoma; the most likely diagnosis is glioblastoma.",
    ],
)
def test_diagnosis_lead_statements(sentence: str) -> None:
    parsed = parse_diagnoses(f"{sentence} Differentials include lymphoma and metastasis.")
    assert [d.lower() for d in parsed.diagnoses] == ["glioblastoma", "lymphoma", "metastasis"]


@pytest.mark.parametrize(
    "sentence",
    [
        "Differential diagnoses include lymphoma and metastasis.",
        "Differentials include lymphoma and metastasis.",
        "Differentials are lymphoma and metastasis.",
        "Other considerations include lymphoma and metastasis.",
        "Other possibilities are lymphoma, and metastasis.",
        "The main differentials include lymphoma, metastasis.",
        "The differential diagnosis for this ring-enhancing lesion includes lymphoma and metastasis.",
        "To consider: lymphoma; metastasis.",
        "Also consider lymphoma or metastasis.",
        "Lymphoma and metastasis should also be considered.",
        "Lymphoma and metastasis are also in the differential.",
        "The differential is broad and includes lymphoma and metastasis.",
    ],
)
def test_diagnosis_differential_statements(sentence: str) -> None:
    parsed = parse_diagnoses(f"The most likely diagnosis is glioblastoma. {sentence}")
    assert [d.lower() for d in parsed.diagnoses] == ["glioblastoma", "lymphoma", "metastasis"]


@pytest.mark.parametrize(
    "answer",
    [
        "Differentials include lymphoma and metastasis, but glioblastoma is the most likely diagnosis.",
        "Differentials include lymphoma and metastasis, and the most likely diagnosis is glioblastoma.",
        "The differential includes lymphoma and metastasis, but the most likely diagnosis is "
        "glioblastoma.",
    ],
)
def test_diagnosis_lead_statement_after_the_list_ends_it(answer: str) -> None:
    assert parse_diagnoses(answer).diagnoses == ["glioblastoma", "lymphoma", "metastasis"]


def test_diagnosis_prose_ranks_the_lead_first_and_keeps_the_written_order() -> None:
    answer = (
        "Differentials include lymphoma and metastasis. Abscess should also be considered. "
        "However, glioblastoma is the most likely diagnosis. Later: the most likely "
        "diagnosis is lymphoma."
    )
    expected = ["glioblastoma", "lymphoma", "metastasis", "Abscess"]
    assert parse_diagnoses(answer).diagnoses == expected


@pytest.mark.parametrize(
    "answer",
    [
        "I would not favour lymphoma. The rim is thin.",
        "The findings are not suggestive of a tumour. The rim is thin.",
        "The lesion is most likely. It is large.",
    ],
)
def test_diagnosis_negated_or_empty_lead_reads_nothing(answer: str) -> None:
    parsed = parse_diagnoses(answer)
    assert parsed.status == "unparseable" and parsed.diagnoses == []


def test_diagnosis_prose_without_the_lexicon_still_cuts_at_punctuation(monkeypatch) -> None:
    from novabench.run.parsers import diagnosis_prose

    calls: list[str] = []

    def broken() -> None:
        calls.append("load")
        raise RuntimeError("lexicon unavailable")

    monkeypatch.setattr(diagnosis_prose, "load_diagnosis_lexicon", broken)
    parsed = parse_diagnoses(
        "The most likely diagnosis is glioblastoma. Differentials include "
        "lymphoma, metastasis, and abscess."
    )
    assert parsed.diagnoses == ["glioblastoma", "lymphoma", "metastasis", "abscess"]
    assert calls  # the parser did ask for the lexicon, and carried on without it


@pytest.mark.parametrize(
    ("text", "separator", "pieces"),
    [
        ("glioma; lymphoma", ";", ["glioma", " lymphoma"]),
        ("glioma (grade 4; IDH-wildtype)", ";", ["glioma (grade 4; IDH-wildtype)"]),
        ("a [b, (c, d)], e", ",", ["a [b, (c, d)]", " e"]),
        ("a), b", ",", ["a)", " b"]),  # a stray closing bracket opens nothing to skip
        ("a, b; c", ";", ["a, b", " c"]),  # only the separator asked for cuts
        ("no separator", ",", ["no separator"]),
    ],
)
def test_diagnosis_prose_cuts_at_semicolons_and_commas_outside_brackets_alike(
    text: str, separator: str, pieces: list[str]
) -> None:
    # One scan serves both separators (it was two copies of the same loop).
    from novabench.run.parsers import diagnosis_prose

    assert diagnosis_prose._split_outside_brackets(text, separator) == pieces
    if separator == ";":
        assert diagnosis_prose._semicolon_outside_brackets(text) == (len(pieces) > 1)
    else:
        assert diagnosis_prose._commas_outside_brackets(text) == pieces


def test_diagnosis_runaway_prose_list_is_read_up_to_its_first_100_names() -> None:
    names = [f"disease {i}" for i in range(150)]
    parsed = parse_diagnoses("Differentials include " + ", ".join(names) + ".")
    assert parsed.diagnoses == names[:100]


_HOSTILE = 200_000


def _fill(unit: str, prefix: str = "") -> str:
    return (prefix + unit * (_HOSTILE // len(unit) + 1))[:_HOSTILE]


@pytest.mark.parametrize(
    "answer",
    [
        _fill("the most likely diagnosis is "),
        _fill("glioma is the most likely diagnosis "),
        _fill("a, is most likely "),
        _fill("a, ", "Differential diagnoses include "),
        _fill("glioma and ", "Differentials include "),
        _fill("xx and ", "Differentials include "),
        _fill("lymphoma, ", "Differentials include "),
        _fill("Differentials include a, b and c. "),
        _fill("(", "Differentials include "),
        _fill("1) a ", "Differentials include "),
        _fill("findings are consistent with "),
        _fill("not favour x "),
        _fill("with a, b "),
        _fill("with a as differentials "),
        _fill("a should be considered "),
        _fill("a, b, should be considered "),
        _fill("followed by "),
        _fill(" and", "Differentials include a"),
        _fill("I think ", "x, ") + " is the most likely diagnosis",
        _fill("possibly the ", "Differentials include "),
        _fill("in the the ", "Differentials include glioma "),
        "Differentials include" + " " * _HOSTILE + "glioma",
        "Most likely: " + _fill("glioma and "),
        "\n".join(
            f"The most likely diagnosis is g{i}. Differentials include lymphoma, metastasis "
            "and abscess."
            for i in range(3000)
        )[:_HOSTILE],
    ],
    ids=lambda answer: answer[:30],
)
def test_diagnosis_prose_reads_hostile_answers_without_error(answer: str) -> None:
    # Inputs shaped to trigger regex backtracking; no wall-clock assertion here (speed
    # belongs to benchmarks), but a quadratic pattern would make this file visibly slow.
    parsed = parse_diagnoses(answer)
    assert parsed.status in DIAGNOSIS_STATUSES
    # Whatever it reads obeys the output contract: at most 100 clean, distinct names, an
    # error exactly when nothing could be read, and never an internal error.
    assert len(parsed.diagnoses) <= 100
    assert all(name and name == name.strip() for name in parsed.diagnoses)
    assert len({name.casefold() for name in parsed.diagnoses}) == len(parsed.diagnoses)
    assert (parsed.error is None) == (parsed.status not in {"empty", "unparseable"}), parsed.error
    assert bool(parsed.diagnoses) == (parsed.status not in {"empty", "unparseable"})
    assert parsed.error is None or "internal" not in parsed.error


# --- reasoning blocks of thinking models


@pytest.mark.parametrize(
    "opening, closing",
    [
        ("<think>", "</think>"),
        ("<thinking>", "</thinking>"),
        ("<THINK>", "</THINK>"),
        ("\u25c1think\u25b7", "\u25c1/think\u25b7"),
        ("", "</think>"),
    ],
)
def test_reasoning_is_removed_from_every_task(opening: str, closing: str) -> None:
    reasoning = (
        "\nlesion: [100, 100, 200, 200]? Most likely: glioma. No target? "
        '{"most_likely_diagnosis": "Glioma"}\n'
    )
    caption = parse_caption(f"{opening}{reasoning}{closing}\n\nAxial T2 image.")
    assert caption == ParsedCaption("Axial T2 image.", "ok", None)
    diagnoses = parse_diagnoses(
        f"{opening}{reasoning}{closing}\n1. Abscess\n2. Primary CNS lymphoma"
    )
    assert diagnoses.diagnoses == ["Abscess", "Primary CNS lymphoma"]
    assert "a <think> reasoning block was removed" in diagnoses.notes
    boxes = parse_localization(
        f"{opening}{reasoning}{closing}mass: [250, 100, 750, 500]", image_size=(480, 480)
    )
    assert boxes.status == "ok" and boxes.boxes == [[48.0, 120.0, 192.0, 240.0]]
    assert boxes.labels == ["mass"] and "a <think> reasoning block was removed" in boxes.notes


def test_reasoning_between_answer_parts_is_removed() -> None:
    answer = "Axial FLAIR image.<think>was it FLAIR? yes</think> Left frontal lesion."
    assert parse_caption(answer).caption == "Axial FLAIR image. Left frontal lesion."
    nested = "<think>a <think> tag inside</think>Axial DWI."
    assert parse_caption(nested).caption == "Axial DWI."


@pytest.mark.parametrize(
    "answer",
    [
        "<think>\nAxial FLAIR with a lesion, lesion: [250, 100, 750, 500], most likely glioma",
        "<think>\n\n</think>\n\n",
        "Some reasoning</think>  ",
    ],
)
def test_answer_that_is_only_reasoning_is_a_counted_failure(answer: str) -> None:
    results = [
        parse_caption(answer),
        parse_diagnoses(answer),
        parse_localization(answer, image_size=(480, 480)),
    ]
    cut_off = "</think>" not in answer
    for parsed in results:
        assert parsed.status == "empty" and parsed.error
        assert ("cut off" in parsed.error) == cut_off, parsed.error
    assert ParseStats.from_results(results[1:2]).n_failed == 1


def test_answer_before_a_cut_off_reasoning_block_is_kept() -> None:
    parsed = parse_caption("Axial T1 image. <think>\nwait, is it T1? The fat is")
    assert parsed.caption == "Axial T1 image."


def test_cut_off_reasoning_counts_as_failed_in_stats() -> None:
    answers = ["<think>\nI think this is axial FLAIR with", "<think>x</think>Axial FLAIR."]
    stats = ParseStats.from_results(parse_caption(a) for a in answers)
    assert stats.status_counts == {"empty": 1, "ok": 1} and stats.n_failed == 1


# --- the task registry and ParseStats


def test_statuses_are_the_registry_declarations() -> None:
    assert LOCALIZATION_STATUSES == TASKS["localization"].parse_statuses
    assert DIAGNOSIS_STATUSES == TASKS["diagnosis"].parse_statuses
    assert CAPTION_STATUSES == TASKS["captioning"].parse_statuses
    assert FAILURE_STATUSES == {
        "empty",
        "unparseable",
        "ambiguous_convention",
        "invalid_boxes",
        "too_long",
        "refusal",
    }
    for spec in TASKS.values():
        assert (
            spec.failure_statuses
            <= FAILURE_STATUSES
            <= set().union(*(other.parse_statuses for other in TASKS.values()))
        )


def test_each_result_type_names_its_task_and_counters() -> None:
    parser_of = {
        ParsedBoxes: parse_localization,
        ParsedDiagnoses: parse_diagnoses,
        ParsedCaption: parse_caption,
    }
    assert {kind.TASK for kind in parser_of} == set(TASKS)
    for kind, parser in parser_of.items():
        assert TASKS[kind.TASK].load_parser() is parser  # the registry's parser gives this type
        for name in kind.COUNTED:
            assert isinstance(getattr(ParseStats(), name), int) and hasattr(kind(), name)
        for name in kind.TALLIED:
            assert isinstance(getattr(ParseStats(), f"{name}_counts"), dict)


def test_parse_stats_as_dict_reports_each_task_its_own_counters() -> None:
    boxes = ParseStats.from_results([parse_localization("no target", image_size=(4, 4))])
    diagnoses = ParseStats.from_results([parse_diagnoses("1. A")])
    captions = ParseStats.from_results([parse_caption("Axial T1.")])
    common = {"task", "n_answers", "status_counts", "n_failed", "failure_rate"}
    assert set(boxes.as_dict()) == common | {
        "convention_counts",
        "n_boxes",
        "n_degenerate_dropped",
        "n_out_of_range",
        "n_swapped",
        "n_order_from_keys",
    }
    assert set(diagnoses.as_dict()) == common | {"n_diagnoses", "n_duplicates_removed"}
    assert set(captions.as_dict()) == common
    assert ParseStats(task="localization").as_dict()["convention_counts"] == {}


def test_parse_stats_counts_localization() -> None:
    answers = [
        "lesion: [250, 100, 750, 500]",
        "lesion: [-50, 100, 300, 500]",
        "no target",
        "",
        '{"bbox": [1, 2, 3, 4]}',
        "lesion: [750, 500, 250, 100]",
    ]
    stats = ParseStats.from_results(parse_localization(a, image_size=(480, 480)) for a in answers)
    assert stats.task == "localization" and stats.n_answers == 6
    assert stats.status_counts == {"ok": 3, "no_target": 1, "empty": 1, "ambiguous_convention": 1}
    assert stats.convention_counts == {"protocol": 3}
    assert (stats.n_boxes, stats.n_out_of_range, stats.n_swapped) == (3, 1, 1)
    # empty + ambiguous are failures: 2 of 6
    assert stats.n_failed == 2 and stats.failure_rate == pytest.approx(2 / 6)
    report = stats.as_dict()
    assert report["n_boxes"] == 3 and report["status_counts"]["ok"] == 3
    assert json.loads(json.dumps(report)) == report
    assert stats.summary().startswith("localization: 6 answers, 2 unusable (33.3%); ok 3")


def test_parse_stats_counts_diagnoses_and_refuses_mixing() -> None:
    stats = ParseStats()
    stats.add(parse_diagnoses('["A", "a", "B"]'))
    stats.add(parse_diagnoses("no idea at all, sorry, I cannot say anything about this case"))
    assert stats.as_dict()["n_diagnoses"] == 2 and stats.n_duplicates_removed == 1
    assert stats.status_counts == {"fallback_list": 1, "unparseable": 1}
    with pytest.raises(NovaInputError, match="diagnosis"):
        stats.add(parse_caption("Axial T1."))
    with pytest.raises(NovaInputError):
        stats.add("not a parse result")  # type: ignore[arg-type]


def test_parse_stats_empty() -> None:
    stats = ParseStats()
    assert stats.failure_rate == 0.0 and stats.as_dict()["n_answers"] == 0
    assert ParsedBoxes().to_dict() == {
        "boxes": [],
        "labels": [],
        "status": "ok",
        "convention": None,
        "n_degenerate_dropped": 0,
        "n_out_of_range": 0,
        "n_swapped": 0,
        "dropped_why": {},
        "error": None,
        "notes": [],
        "readable_with": [],
        "n_order_from_keys": 0,
    }


def test_an_empty_box_list_under_its_key_says_no_target() -> None:
    # {"boxes": []} with nothing else: the model's explicit "I found nothing".
    parsed = parse_localization('{"boxes": []}', image_size=(480, 480))
    assert parsed.status == "no_target"
    assert parsed.boxes == []


def test_a_box_written_as_two_corner_points_is_read() -> None:
    # Qwen's key, absolute pixels: corners (100, 200) and (300, 400) -> x, y, w, h 100, 200, 200, 200.
    parsed = parse_localization(
        '{"label": "lesion", "bbox_2d": [[100, 200], [300, 400]]}', image_size=(1000, 1000)
    )
    assert parsed.status == "ok"
    assert parsed.boxes == [[100.0, 200.0, 200.0, 200.0]]
    assert parsed.labels == ["lesion"]


@pytest.mark.parametrize(
    "entry, shown",
    [
        ("n/a", "'n/a'"),
        # 38 characters, 40 with quotes: shown whole.
        ("lesion in the left frontal lobe, 2 cm.", "'lesion in the left frontal lobe, 2 cm.'"),
        # Longer: its first 37 characters (the quote and 36 letters) and "...".
        (
            "left frontal lesion, see the report for details",
            "'left frontal lesion, see the report ...",
        ),
    ],
)
def test_junk_in_a_box_list_is_quoted_once_and_cut_at_40_characters(entry, shown) -> None:
    parsed = parse_localization(json.dumps({"boxes": [entry]}), image_size=(480, 480))
    assert parsed.status == "unparseable"
    assert f"the box list holds {shown} where a box of 4 numbers" in (parsed.error or "")


@pytest.mark.parametrize(
    "answer, readable_with",
    [
        # 1000 is still a 0..1000 unit; 1001 can only be pixels.
        ("[100, 200, 1000, 1000]", ("protocol", "xyxy_norm1000")),
        ("[100, 200, 1001, 900]", ("xyxy_pixel",)),
        ('{"x1": 100, "y1": 200, "x2": 1000, "y2": 1000}', ("xyxy_norm1000", "xyxy_pixel")),
        ('{"x1": 100, "y1": 200, "x2": 1001, "y2": 900}', ("xyxy_pixel",)),
        ("lesion: [100, 200, 1001, 900]", ("xyxy_pixel",)),
    ],
)
def test_auto_reads_1000_as_the_top_of_the_per_mille_range(answer, readable_with) -> None:
    parsed = parse_localization(answer, image_size=(2000, 2000))
    assert parsed.status == "ambiguous_convention"
    assert parsed.readable_with == readable_with


def test_a_protocol_line_or_prompted_list_reaching_1000_is_read() -> None:
    # Protocol line [ymin, xmin, ymax, xmax] per mille of 2000 px: y 200..2000, x 400..2000.
    line = parse_localization("lesion: [100, 200, 1000, 1000]", image_size=(2000, 2000))
    assert (line.status, line.convention) == ("ok", "protocol")
    assert line.boxes == [[400.0, 200.0, 1600.0, 1800.0]]
    # The run's prompt asked for x1, y1, x2, y2 per mille: x 200..2000, y 400..2000.
    prompted = parse_localization(
        "[100, 200, 1000, 1000]", image_size=(2000, 2000), prompt_convention="xyxy_norm1000"
    )
    assert (prompted.status, prompted.boxes) == ("ok", [[200.0, 400.0, 1800.0, 1600.0]])


def test_json_objects_one_per_line_are_one_answer() -> None:
    answer = (
        '{"bbox_2d": [100, 200, 300, 400], "label": "lesion"}\n'
        '{"bbox_2d": [500, 500, 600, 650], "label": "edema"}'
    )
    parsed = parse_localization(answer, image_size=(1000, 1000))
    assert parsed.status == "ok"
    # Qwen's x1, y1, x2, y2 pixels as x, y, w, h, by hand.
    assert parsed.boxes == [[100.0, 200.0, 200.0, 200.0], [500.0, 500.0, 100.0, 150.0]]
    assert parsed.labels == ["lesion", "edema"]


def test_json_after_a_fence_of_prose_is_still_read() -> None:
    # The only fenced block holds no JSON: the answer is the object after it.
    answer = (
        "Findings:\n```text\nRing-enhancing lesion in the left frontal lobe.\n```\n"
        '{"bbox_2d": [100, 200, 300, 400], "label": "lesion"}'
    )
    parsed = parse_localization(answer, image_size=(1000, 1000))
    assert (parsed.status, parsed.convention) == ("ok", "qwen")
    assert parsed.boxes == [[100.0, 200.0, 200.0, 200.0]]


@pytest.mark.parametrize(
    "junk, note",
    [
        (["n/a"], "1 entry of a box list not 4 numbers ('n/a'): not read"),
        (
            ["a", "b", "c", "d"],
            "4 entries of a box list not 4 numbers ('a', 'b', 'c'): not read",
        ),
    ],
)
def test_junk_beside_a_box_is_counted_in_a_note(junk, note) -> None:
    answer = json.dumps({"boxes": [[100, 200, 300, 400], *junk]})
    parsed = parse_localization(answer, image_size=(1000, 1000), convention="xyxy_pixel")
    assert parsed.boxes == [[100.0, 200.0, 200.0, 200.0]]
    assert note in parsed.notes


# --- bare answers: no JSON, no list marker, no label, no statement -------------------------

FIVE_DEMYELINATING = ["Multiple sclerosis", "ADEM", "NMOSD", "glioma", "lymphoma"]


def test_a_comma_list_reads_as_the_same_names_as_the_json_object() -> None:
    as_json = parse_diagnoses(
        '{"most_likely_diagnosis": "Multiple sclerosis", '
        '"other_possible_diagnoses": ["ADEM", "NMOSD", "glioma", "lymphoma"]}'
    )
    as_line = parse_diagnoses("Multiple sclerosis, ADEM, NMOSD, glioma, lymphoma")
    assert as_json.diagnoses == FIVE_DEMYELINATING
    assert as_line.diagnoses == FIVE_DEMYELINATING
    assert as_line.status == "fallback_list"
    assert "a one-line list cut at its commas" in as_line.notes


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        # GPT-style: abbreviations in brackets stay with their name
        (
            "Multiple sclerosis, acute disseminated encephalomyelitis (ADEM), neuromyelitis "
            "optica spectrum disorder (NMOSD), CNS vasculitis, lymphoma",
            [
                "Multiple sclerosis",
                "acute disseminated encephalomyelitis (ADEM)",
                "neuromyelitis optica spectrum disorder (NMOSD)",
                "CNS vasculitis",
                "lymphoma",
            ],
        ),
        # a terse model ending its list with a period
        (
            "Tuberculoma, neurocysticercosis, toxoplasmosis, abscess, metastasis.",
            ["Tuberculoma", "neurocysticercosis", "toxoplasmosis", "abscess", "metastasis"],
        ),
        # ", and" / " and " before the last name
        ("Multiple sclerosis, ADEM and NMOSD", ["Multiple sclerosis", "ADEM", "NMOSD"]),
        (
            "Ependymoma, medulloblastoma, and pilocytic astrocytoma",
            ["Ependymoma", "medulloblastoma", "pilocytic astrocytoma"],
        ),
        # two names, each a disease the lexicon knows
        ("Susac syndrome, CADASIL", ["Susac syndrome", "CADASIL"]),
        # semicolons cut; commas between them belong to the names
        ("MS; ADEM; NMOSD", ["MS", "ADEM", "NMOSD"]),
        (
            "Glioblastoma, IDH-wildtype; primary CNS lymphoma; metastasis; abscess",
            ["Glioblastoma, IDH-wildtype", "primary CNS lymphoma", "metastasis", "abscess"],
        ),
        # one name per line; a heading line is no name; commas inside a line stay
        (
            "Final answer\nTumefactive demyelination\nMeningioma, atypical\nLymphoma",
            ["Tumefactive demyelination", "Meningioma, atypical", "Lymphoma"],
        ),
        ("Diagnoses:\nMS\nADEM\nNMOSD", ["MS", "ADEM", "NMOSD"]),
    ],
)
def test_a_bare_list_is_cut_into_its_names(answer: str, expected: list[str]) -> None:
    parsed = parse_diagnoses(answer)
    assert parsed.status == "fallback_list"
    assert parsed.diagnoses == expected


@pytest.mark.parametrize(
    "answer",
    [
        # names the lexicon knows with their commas (WHO CNS5 style, inverted syndromes)
        "Astrocytoma, IDH-mutant, CNS WHO grade 2",
        "Glioblastoma, IDH-wildtype",
        "Hand, foot and mouth disease",
        "Mitochondrial encephalomyopathy, lactic acidosis, and stroke-like episodes",
    ],
)
def test_a_known_name_with_commas_stays_one_diagnosis(answer: str) -> None:
    parsed = parse_diagnoses(answer)
    assert parsed.diagnoses == [answer]
    assert parsed.status == "fallback_list"


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("Meningioma, atypical", "'atypical' qualifies the name"),
        ("Leukoencephalopathy, progressive multifocal", "'progressive multifocal' qualifies"),
        ("Lymphoma, primary CNS", "'primary CNS' qualifies"),
        ("Ependymoma, posterior fossa, grade 3", "'posterior fossa' qualifies"),
        ("Encephalitis, herpes simplex", "fewer than 3 pieces"),
        ("CJD, likely sporadic, autoimmune encephalitis", "'likely sporadic' reads as a clause"),
    ],
)
def test_a_comma_line_that_may_be_one_name_is_kept_whole_and_counted(
    answer: str, reason: str
) -> None:
    parsed = parse_diagnoses(answer)
    assert parsed.diagnoses == [answer]
    assert parsed.status == "fallback_comma_one_name"
    assert any(reason in note for note in parsed.notes), parsed.notes
    stats = ParseStats.from_results([parsed, parse_diagnoses("Glioma, lymphoma, metastasis")])
    assert stats.status_counts == {"fallback_comma_one_name": 1, "fallback_list": 1}


def test_unmarked_lines_of_prose_are_not_read_as_names() -> None:
    answer = "The lesion enhances.\nIt is probably a glioma."
    assert parse_diagnoses(answer).status == "unparseable"


@pytest.mark.parametrize(
    "raw",
    [
        "lesión：［502，392，552，454］",  # a CJK input method's brackets, comma and colon
        '```json\n［{"bbox_2d"：［502，392，552，454］，"label"："病变"}］\n```',
        "lesion:\u3000[502、392、552、454]",  # ideographic space and comma
        "lesion: [５０２, ３９２, ５５２, ４５４]",  # fullwidth digits
        "lesion：【502，392，552，454】",  # lenticular brackets
    ],
)
def test_fullwidth_punctuation_is_read_as_ascii_and_said(raw: str) -> None:
    parsed = parse_localization(raw, image_size=(600, 600), convention="xyxy_pixel")
    assert (parsed.status, parsed.boxes) == ("ok", [[502.0, 392.0, 50.0, 62.0]])
    assert "fullwidth characters read as their ASCII forms" in parsed.notes


def test_an_answer_without_fullwidth_forms_gets_no_note() -> None:
    parsed = parse_localization("lesion: [502, 392, 552, 454]", image_size=(600, 600))
    assert parsed.status == "ok" and parsed.notes == ()


def test_ollamas_thinking_lines_are_reasoning_not_the_answer() -> None:
    """Ollama's command line wraps a thinking model's reasoning in "Thinking..." and
    "...done thinking."; a box quoted there is no answer, and the final "no target" is."""
    raw = (
        "Thinking...\nMaybe lesion: [10, 10, 50, 50]? No, it is normal.\n"
        "...done thinking.\n\nno target"
    )
    parsed = parse_localization(raw, image_size=(600, 600), convention="xyxy_pixel")
    assert (parsed.status, parsed.boxes) == ("no_target", [])
    windows = parse_localization(raw.replace("\n", "\r\n"), image_size=(600, 600))
    assert (windows.status, windows.boxes) == ("no_target", [])  # saved with CRLF (user12)
    cut = parse_localization("Thinking...\nlesion: [10, 10, 50, 50]", image_size=(600, 600))
    assert (cut.status, cut.boxes) == ("empty", [])  # cut off while thinking: no answer
    # "Thinking..." elsewhere than on the first line is the answer's own text
    kept = parse_localization(
        "lesion: [10, 10, 50, 50]\nThinking...\n", image_size=(600, 600), convention="xyxy_pixel"
    )
    assert kept.boxes == [[10.0, 10.0, 40.0, 40.0]]
