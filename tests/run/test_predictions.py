"""Prediction files: round trips, every bad line named by file/line/field, missing items, merge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from novabench.data.release import read_release
from novabench.errors import NovaInputError
from novabench.run.predictions import (
    _iter_json_lines,
    manifest_path_for,
    merge_prediction_files,
    parse_raw,
    read_manifest,
    read_predictions,
    write_manifest,
    write_predictions,
)
from tests.release_factory import write_v1_release


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    # 3 cases with 1, 2 and 3 images: 6 images, non-square so width/height mix-ups show.
    root = write_v1_release(tmp_path_factory.mktemp("release"), n_cases=3, image_size=(40, 32))
    return read_release(root)


def write_lines(path: Path, lines: list) -> Path:
    path.write_text(
        "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    )
    return path


def full_predictions(release) -> list[dict]:
    lines: list[dict] = []
    for index, image in enumerate(release.images):
        lines.append(
            {
                "filename": image.filename,
                "boxes": [[1.5 + index, 2.0, 10.0, 4.25]],
                "scores": [0.5],
                "caption": f"Axial FLAIR {index}",
            }
        )
    for case in release.cases():
        lines.append({"case_id": case.case_id, "diagnoses": [f"glioma {case.case_id}", "abscess"]})
    return lines


def test_round_trip_aligns_to_release_order(release, tmp_path):
    lines = full_predictions(release)
    path = tmp_path / "pred.jsonl"
    # Written in reverse: the reader must align to the release, not to the file order.
    assert write_predictions(path, list(reversed(lines))) == len(lines)
    predictions = read_predictions(path, release)

    image_lines = lines[: len(release.images)]
    assert predictions.localization() == [
        {"boxes": line["boxes"], "scores": line["scores"]} for line in image_lines
    ]
    assert predictions.captions() == [line["caption"] for line in image_lines]
    assert predictions.diagnoses() == [line["diagnoses"] for line in lines[len(release.images) :]]
    assert predictions.missing_images == [] and predictions.missing_cases == []
    summary = predictions.summary()
    assert summary["localization"] == {
        "items": 6,
        "answered": 6,
        "missing": 0,
        "errors": 0,
        "parse_status": {},
    }
    assert summary["diagnosis"]["items"] == 3


def test_prediction_set_rewrites_to_an_equivalent_file(release, tmp_path):
    first = read_predictions(write_lines(tmp_path / "a.jsonl", full_predictions(release)), release)
    write_predictions(tmp_path / "b.jsonl", first)
    second = read_predictions(tmp_path / "b.jsonl", release)
    assert second.localization() == first.localization()
    assert second.captions() == first.captions()
    assert second.diagnoses() == first.diagnoses()


def test_write_appends_and_keeps_earlier_lines(tmp_path):
    path = tmp_path / "pred.jsonl"
    write_predictions(path, [{"case_id": "case0001", "diagnoses": ["a"]}])
    before = path.read_text()
    write_predictions(path, [{"case_id": "case0002", "diagnoses": ["b"]}])
    assert path.read_text().startswith(before)
    assert read_predictions(path).diagnoses() == [["a"], ["b"]]


def test_write_refuses_a_bad_line_naming_the_line_it_would_have_been(tmp_path):
    path = tmp_path / "pred.jsonl"
    write_predictions(path, [{"case_id": "case0001", "diagnoses": ["a"]}])
    with pytest.raises(NovaInputError) as caught:
        write_predictions(
            path, [{"filename": "case0001_001.png", "boxes": [[float("nan"), 0, 1, 1]]}]
        )
    assert caught.value.record.startswith("line 2") and caught.value.field == "boxes[0][0]"
    assert len(path.read_text().splitlines()) == 1  # nothing bad reached the file


GOOD_IMAGE = {"filename": "case0001_001.png", "boxes": [[1, 2, 3, 4]]}

BAD_FILES = [
    # (lines, bad line number, field named, words in the message)
    ([GOOD_IMAGE, '{"filename": "case0002_001.png", "boxes": [[1, 2'], 2, None, "not valid JSON"),
    # Cut inside a string: json's own "starting at" is not doubled into "at at column".
    (
        [GOOD_IMAGE, '{"filename": "case0002_001.png", "raw_boxes": "[1, 2'],
        2,
        None,
        "Unterminated string starting at column 47",  # its opening quote
    ),
    ([{"filename": "case9999_001.png", "boxes": []}], 1, "filename", "unknown filename"),
    # A path or another case where the bare filename goes: the release's own name offered.
    (
        [{"filename": "images/CASE0001_001.PNG", "boxes": []}],
        1,
        "filename",
        "did you mean 'case0001_001.png'?",
    ),
    # A raw answer written as null: that field is named, not the parsed one never written.
    ([{"filename": "case0001_001.png", "raw_boxes": None}], 1, "raw_boxes", "is null"),
    # A raw answer given as a list: the field for an answer already read is named.
    (
        [{"filename": "case0001_001.png", "raw_boxes": [[1, 2, 3, 4]]}],
        1,
        "raw_boxes",
        "an answer already read goes under 'boxes'",
    ),
    ([{"case_id": "case0042", "diagnoses": ["x"]}], 1, "case_id", "unknown case id"),
    (
        [GOOD_IMAGE, {"case_id": "case0001", "diagnoses": []}, GOOD_IMAGE],
        3,
        "filename",
        "already given at",
    ),
    (['{"filename": "case0001_001.png", "boxes": [[NaN, 2, 3, 4]]}'], 1, "boxes[0][0]", "finite"),
    (
        ['{"filename": "case0001_001.png", "boxes": [[1, 2, Infinity, 4]]}'],
        1,
        "boxes[0][2]",
        "finite",
    ),
    ([{"filename": "case0001_001.png", "boxes": "1,2,3,4"}], 1, "boxes", "list"),
    (
        [{"filename": "case0001_001.png", "boxes": [[1, 2, 3]]}],
        1,
        "boxes[0]",
        "[x, y, width, height]",
    ),
    ([{"filename": "case0001_001.png", "boxes": [[1, 2, "3", 4]]}], 1, "boxes[0][2]", "number"),
    ([{"filename": "case0001_001.png", "boxes": [[1, 2, True, 4]]}], 1, "boxes[0][2]", "number"),
    ([{"filename": "case0001_001.png", "boxes": [[1, 2, -3, 4]]}], 1, "boxes[0]", "negative"),
    # A 400-digit integer is valid JSON but no float: named, not an OverflowError traceback.
    (
        [{"filename": "case0001_001.png", "boxes": [[1, 2, 10**400, 4]]}],
        1,
        "boxes[0][2]",
        "too large",
    ),
    (
        [{"filename": "case0001_001.png", "raw_boxes": "x", "input_size": [10**400, 10]}],
        1,
        "input_size",
        "positive",
    ),
    (
        [{"filename": "case0001_001.png", "boxes": [[1, 2, 3, 4]], "scores": [0.1, 0.2]}],
        1,
        "scores",
        "one score per box",
    ),
    ([{"filename": "case0001_001.png", "scores": [0.1]}], 1, "scores", "without boxes"),
    ([{"filename": "case0001_001.png", "caption": 5}], 1, "caption", "string"),
    ([{"case_id": "case0001", "diagnoses": "glioma"}], 1, "diagnoses", "list"),
    ([{"case_id": "case0001", "diagnoses": ["glioma", 3]}], 1, "diagnoses[1]", "string"),
    (
        [{"filename": "case0001_001.png", "raw_boxes": "x", "input_size": [0, 10]}],
        1,
        "input_size",
        "positive",
    ),
    (
        [{"filename": "case0001_001.png", "caption": "x", "latency_s": float("nan")}],
        1,
        "latency_s",
        "finite",
    ),
    ([{"filename": "case0001_001.png", "box": [[1, 2, 3, 4]]}], 1, "box", "unknown key"),
    ([{"filename": "case0001_001.png", "diagnoses": ["x"]}], 1, "diagnoses", "unknown key"),
    (
        [{"filename": "case0001_001.png", "case_id": "case0001", "caption": "x"}],
        1,
        "filename",
        "exactly one",
    ),
    ([["case0001_001.png", [1, 2, 3, 4]]], 1, None, "JSON object"),
    ([{"filename": "", "caption": "x"}], 1, "filename", "empty"),
    ([{"filename": "case0001_001.png"}], 1, "filename", "carries no prediction"),
    (
        [{"filename": "case0001_001.png", "task": "captioning", "raw_boxes": "x"}],
        1,
        "raw_boxes",
        "task",
    ),
    ([{"filename": "case0001_001.png", "error": "HTTP 500"}], 1, "task", "which task"),
]


@pytest.mark.parametrize(("lines", "line_number", "field", "words"), BAD_FILES)
def test_every_bad_line_is_named_by_file_line_and_field(
    release, tmp_path, lines, line_number, field, words
):
    path = write_lines(tmp_path / "bad.jsonl", lines)
    with pytest.raises(NovaInputError) as caught:
        read_predictions(path, release)
    error = caught.value
    assert error.source == str(path)
    assert error.record.split(" (")[0] == f"line {line_number}"
    assert error.field == field
    assert words in str(error)


def test_unknown_names_pass_without_a_release_and_fail_when_aligned_later(release, tmp_path):
    path = write_lines(
        tmp_path / "pred.jsonl", [{"filename": "case9999_001.png", "raw_caption": "x"}]
    )
    loose = read_predictions(path)
    assert loose.filenames == ["case9999_001.png"] and not loose.aligned
    with pytest.raises(NovaInputError, match="unknown filename") as caught:
        parse_raw(loose, release)
    assert caught.value.record == "line 1"


def test_a_file_of_another_release_is_said_to_be_one_not_an_unknown_line(release, tmp_path):
    # The same model's answers on another NOVA copy: every item is foreign to this release.
    foreign = [
        {"filename": f"case9{index:03d}_001.png", "caption": "Axial FLAIR."} for index in range(5)
    ] + [{"case_id": "case9000", "diagnoses": ["glioma"]}]
    path = write_lines(tmp_path / "other.jsonl", foreign)
    with pytest.raises(NovaInputError, match="6 of 6 lines name images or cases") as caught:
        read_predictions(path, release)
    assert "another release" in str(caught.value) and caught.value.record is None
    # One stray line among this release's own items stays that line's error.
    own = full_predictions(release)
    stray = write_lines(tmp_path / "stray.jsonl", [*own[:2], foreign[0], *own[2:]])
    with pytest.raises(NovaInputError, match="unknown filename") as caught:
        read_predictions(stray, release)
    assert caught.value.record == "line 3 (case9000_001.png)"


def test_a_run_whose_manifest_names_another_release_says_so_before_a_line_error(release, tmp_path):
    # The first image is in both releases, the second only in the other one: the line
    # error would come at line 2, but the manifest already says whose run this is.
    own = full_predictions(release)
    other_release = "0123456789abcdef"
    lines = [own[0], {**own[1], "filename": "case0001_009.png"}, *own[2:]]
    path = write_lines(tmp_path / "other.jsonl", lines)
    write_manifest(path, {"model": "m", "release": {"fingerprint": other_release}})
    with pytest.raises(NovaInputError) as caught:
        read_predictions(path, release)
    message = str(caught.value)
    assert caught.value.field == "release.fingerprint" and caught.value.record is None
    assert "made for another release" in message
    assert f"fingerprint {other_release[:8]}," in message and other_release[8:] not in message
    assert f"the release in {release.root} has {release.fingerprint()[:8]}" in message
    assert "first problem: line 2 (case0001_009.png)" in message
    # The manifest of this very release changes nothing: the line's own error is said.
    write_manifest(path, {"model": "m", "release": {"fingerprint": release.fingerprint()}})
    with pytest.raises(NovaInputError, match="unknown filename") as caught:
        read_predictions(path, release)
    assert caught.value.record == "line 2 (case0001_009.png)"


@pytest.mark.parametrize("name", ["report.json", "comparison.json", "leaderboard.json"])
def test_a_nova_report_passed_as_predictions_is_named_as_one(tmp_path, name):
    # As nova evaluate/compare/leaderboard write them: indented JSON, the toolkit first.
    document = {"toolkit": {"name": "novabench", "version": "0.1.0"}, "tasks": {}}
    if name == "comparison.json":
        document = {"a": document, "b": document, "differences": {}}
    elif name == "leaderboard.json":
        document = {"toolkit": document["toolkit"], "release": "c2e6", "models": [], "notes": []}
    path = tmp_path / name
    path.write_text(json.dumps(document, indent=2))
    with pytest.raises(NovaInputError) as caught:
        read_predictions(path)
    assert str(caught.value) == (
        f"{path}: this is a nova report, not predictions: pass the run file (the .jsonl that "
        "nova run wrote)"
    )
    # The same object on one line (a compact report) is told apart from predictions too.
    path.write_text(json.dumps(document) + "\n")
    with pytest.raises(NovaInputError, match="this is a nova report, not predictions"):
        read_predictions(path)


def test_an_unknown_box_convention_names_the_argument_even_with_no_raw_answer(release, tmp_path):
    # Parsed answers only: the convention is never used, and still refused, not ignored.
    path = write_lines(tmp_path / "pred.jsonl", full_predictions(release))
    with pytest.raises(
        NovaInputError, match=r"box_convention='xyxy': unknown box convention"
    ) as caught:
        parse_raw(read_predictions(path, release), release, box_convention="xyxy")
    assert caught.value.field == "box_convention"


def test_a_cut_off_last_line_says_how_to_repair_it(tmp_path):
    path = tmp_path / "pred.jsonl"
    path.write_text(json.dumps(GOOD_IMAGE) + '\n{"filename": "case0001_0')
    with pytest.raises(NovaInputError, match="cut off") as caught:
        read_predictions(path)
    assert caught.value.record == "line 2"


def test_missing_predictions_are_counted_and_scored_as_nothing(release, tmp_path):
    names = [image.filename for image in release.images]
    case_ids = [case.case_id for case in release.cases()]
    path = write_lines(
        tmp_path / "partial.jsonl",
        [
            {"filename": names[1], "boxes": [[1, 1, 2, 2]]},
            {"filename": names[4], "caption": "Sagittal T1."},
            {"case_id": case_ids[2], "diagnoses": ["meningioma"]},
        ],
    )
    predictions = read_predictions(path, release)
    assert predictions.missing_images == [n for i, n in enumerate(names) if i not in (1, 4)]
    assert predictions.missing_cases == case_ids[:2]
    assert predictions.missing("localization") == [n for i, n in enumerate(names) if i != 1]
    assert predictions.missing("captioning") == [n for i, n in enumerate(names) if i != 4]
    boxes = predictions.localization()
    assert boxes[1] == {"boxes": [[1.0, 1.0, 2.0, 2.0]]}
    assert [b for i, b in enumerate(boxes) if i != 1] == [{"boxes": []}] * 5
    assert predictions.captions()[4] == "Sagittal T1." and predictions.captions().count("") == 5
    assert predictions.diagnoses() == [[], [], ["meningioma"]]
    summary = predictions.summary()
    assert (summary["localization"]["answered"], summary["localization"]["missing"]) == (1, 5)
    assert (summary["diagnosis"]["answered"], summary["diagnosis"]["missing"]) == (1, 2)


def test_an_error_line_counts_as_missing_and_a_later_answer_supersedes_it(release, tmp_path):
    name = release.images[0].filename
    failed = {"filename": name, "task": "captioning", "error": "timed out", "model": "m"}
    path = write_lines(tmp_path / "pred.jsonl", [failed])
    predictions = read_predictions(path, release)
    assert predictions.errors("captioning") == {name: "timed out"}
    assert name in predictions.missing("captioning")
    assert predictions.captions()[0] == ""

    write_lines(path, [failed, {"filename": name, "task": "captioning", "caption": "Axial T2."}])
    retried = read_predictions(path, release)
    assert retried.superseded == 1
    assert retried.errors("captioning") == {} and retried.captions()[0] == "Axial T2."

    # An answer is final: a second answer for the same task and item is a duplicate.
    write_lines(
        path,
        [
            {"filename": name, "caption": "a"},
            {"filename": name, "task": "captioning", "error": "x"},
        ],
    )
    with pytest.raises(NovaInputError, match="line 1"):
        read_predictions(path, release)


def test_one_line_may_answer_both_image_tasks_but_not_twice(release, tmp_path):
    name = release.images[0].filename
    path = write_lines(tmp_path / "pred.jsonl", [{"filename": name, "boxes": [], "caption": "c"}])
    predictions = read_predictions(path, release)
    assert predictions.localization()[0] == {"boxes": []} and predictions.captions()[0] == "c"
    write_lines(path, [{"filename": name, "boxes": []}, {"filename": name, "caption": "c"}])
    assert read_predictions(path, release).missing_images == [
        i.filename for i in release.images[1:]
    ]


def test_raw_answers_must_be_parsed_before_scoring(release, tmp_path):
    path = write_lines(
        tmp_path / "raw.jsonl", [{"filename": release.images[0].filename, "raw_boxes": "no target"}]
    )
    with pytest.raises(NovaInputError, match="parse") as caught:
        read_predictions(path, release).localization()
    assert caught.value.field == "raw_boxes" and caught.value.record.startswith("line 1")


def test_a_model_s_own_text_keeps_its_lone_surrogates_and_a_parsed_answer_may_not(
    release, tmp_path
):
    # A tokenizer that cuts an emoji's surrogate pair leaves one in the raw answer or in a
    # server's error text: the run writes it as a JSON escape and the parsers replace it.
    first, second = (image.filename for image in release.images[:2])
    lines = [
        {"filename": first, "raw_caption": "Axial FLAIR \ud83d, right frontal."},
        {"filename": second, "task": "captioning", "error": "HTTP 500: \udc00 cut"},
    ]
    predictions = read_predictions(write_lines(tmp_path / "raw.jsonl", lines), release)
    assert predictions.records["captioning"][first].raw == "Axial FLAIR \ud83d, right frontal."
    assert predictions.records["captioning"][second].error == "HTTP 500: \udc00 cut"
    parsed = [{"filename": first, "caption": "Axial FLAIR \ud83d, right frontal."}]
    with pytest.raises(NovaInputError, match="lone surrogate U\\+D83D at character 12") as caught:
        read_predictions(write_lines(tmp_path / "parsed.jsonl", parsed), release)
    assert (caught.value.record, caught.value.field) == (f"line 1 ({first})", "caption")


def test_parse_raw_uses_the_parsers_and_counts_statuses(release, tmp_path):
    images = release.images
    case = release.cases()[0]
    answers = [
        {
            "filename": images[0].filename,
            "raw_boxes": "lesion: [100, 200, 500, 600]",
            "input_size": [40, 32],
        },
        {
            "filename": images[1].filename,
            "raw_boxes": '[{"bbox_2d": [10, 20, 30, 40]}]',
            "input_size": [80, 64],
        },
        {"filename": images[2].filename, "raw_boxes": "no target"},
        {"filename": images[3].filename, "raw_boxes": ""},
        {"filename": images[0].filename, "raw_caption": "```\nAxial FLAIR, right frontal.\n```"},
        {
            "case_id": case.case_id,
            "raw_diagnoses": '{"most_likely_diagnosis": "glioma", "other_possible_diagnoses": ["a"]}',
        },
        {"filename": images[5].filename, "boxes": [[0, 0, 1, 1]]},  # already parsed: kept
    ]
    parsed = parse_raw(
        read_predictions(write_lines(tmp_path / "raw.jsonl", answers), release), release
    )

    # Expected values by hand (the images are 40x32):
    # 0: protocol [ymin, xmin, ymax, xmax] / 1000 = [100, 200, 500, 600] -> x 0.2 * 40 = 8,
    #    y 0.1 * 32 = 3.2, w 0.4 * 40 = 16, h 0.4 * 32 = 12.8.
    # 1: Qwen pixel xyxy [10, 20, 30, 40] on an 80x64 model input, halved to the 40x32 image:
    #    [5, 10, 15, 20] -> xywh [5, 10, 10, 10].
    expected = [
        [[8.0, 3.2, 16.0, 12.8]],
        [[5.0, 10.0, 10.0, 10.0]],
        [],  # "no target"
        [],  # empty answer
        [],  # no answer
        [[0.0, 0.0, 1.0, 1.0]],
    ]
    assert [p["boxes"] for p in parsed.localization()] == expected
    assert parsed.parse_counts("localization") == {"ok": 2, "no_target": 1, "empty": 1}
    assert parsed.captions()[0] == "Axial FLAIR, right frontal."  # the code fence is dropped
    assert parsed.diagnoses()[0] == ["glioma", "a"]
    assert parsed.parse_counts("diagnosis") == {"partial": 1}  # fewer than five names

    # The parsed set writes out with raw text and status kept, and reads back the same.
    write_predictions(tmp_path / "pred.jsonl", parsed)
    again = read_predictions(tmp_path / "pred.jsonl", release)
    assert again.localization() == parsed.localization()
    assert again.parse_counts("localization") == parsed.parse_counts("localization")
    assert again.records["localization"][images[0].filename].raw == answers[0]["raw_boxes"]


@pytest.mark.parametrize(
    "both",
    [
        {"boxes": [[4.0, 6.0, 12.0, 9.0]], "raw_boxes": "no target"},
        {"caption": "Axial FLAIR, right frontal.", "raw_caption": "Coronal T1, normal."},
    ],
    ids=["boxes", "caption"],
)
def test_a_line_holding_a_parsed_and_a_raw_answer_of_one_task_is_refused(release, tmp_path, both):
    parsed_field, raw_field = both
    lines = [
        {"filename": release.images[0].filename, "raw_boxes": "lesion: [100, 200, 500, 600]"},
        {"filename": release.images[1].filename, **both},
    ]
    path = write_lines(tmp_path / "both.jsonl", lines)
    with pytest.raises(NovaInputError) as refused:
        read_predictions(path, release)
    message = str(refused.value)
    assert f"line 2 ({release.images[1].filename})" in message
    assert f"{parsed_field}/{raw_field}" in message and "two answers" in message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("status", "field"),
    [
        ("banana", "parse_status"),
        ("OK", "parse_status"),  # the parsers write lower case
        ("fallback_list", "parse_status"),  # a diagnosis status, not a localization one
        ({"localization": "banana"}, "parse_status.localization"),
    ],
)
def test_a_line_with_a_parse_status_no_parser_gives_is_refused(release, tmp_path, status, field):
    # user17: any status was accepted beside boxes + raw_boxes, and the report printed
    # "parse: banana 1".
    name = release.images[0].filename
    line = {"filename": name, "boxes": [[4.0, 6.0, 12.0, 9.0]], "raw_boxes": "[4, 6, 12, 9]"}
    path = write_lines(tmp_path / "status.jsonl", [{**line, "parse_status": status}])
    with pytest.raises(NovaInputError) as refused:
        read_predictions(path, release)
    message = str(refused.value)
    assert str(path) in message and f"line 1 ({name})" in message and field in message
    assert "not a localization parse status" in message and "ok_out_of_image" in message
    assert "\n" not in message
    # The parser's own statuses still read, as nova parse writes them.
    for known in ("ok", "ok_out_of_image", "invalid_boxes"):
        write_lines(path, [{**line, "parse_status": known}])
        assert read_predictions(path, release).parse_counts("localization") == {known: 1}


def test_a_case_line_holding_parsed_and_raw_diagnoses_is_refused(release, tmp_path):
    case_id = release.cases()[0].case_id
    line = {"case_id": case_id, "diagnoses": ["CADASIL"], "raw_diagnoses": "Migraine"}
    with pytest.raises(NovaInputError, match=r"line 1 \(case0001\).*diagnoses/raw_diagnoses"):
        read_predictions(write_lines(tmp_path / "both.jsonl", [line]), release)


def test_a_parsed_line_of_nova_parse_keeps_both_answers_with_its_status(release, tmp_path):
    # What parse_raw writes: the answer read, the raw text, and the status it was read with.
    line = {
        "filename": release.images[0].filename,
        "boxes": [],
        "raw_boxes": "no target",
        "parse_status": "no_target",
    }
    read = read_predictions(write_lines(tmp_path / "parsed.jsonl", [line]), release)
    assert read.records["localization"][release.images[0].filename].raw == "no target"


def test_manifest_is_written_atomically_and_read_back(tmp_path):
    target = tmp_path / "pred.jsonl"
    write_manifest(target, {"model": "a"})
    write_manifest(target, {"model": "b"})
    assert read_manifest(target) == {"model": "b"}
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "pred.jsonl.manifest.json"
    ]  # no temp files left
    manifest_path_for(target).write_text("{broken")
    with pytest.raises(NovaInputError, match="not valid JSON"):
        read_manifest(target)


def shard_files(release, tmp_path, manifests=True):
    lines = full_predictions(release)
    first, second = tmp_path / "s0.jsonl", tmp_path / "s1.jsonl"
    write_lines(first, lines[::2])
    write_lines(second, lines[1::2])
    if manifests:
        base = {"model": "m", "prompts": {"captioning": {"sha256": "abc"}}, "status": "complete"}
        write_manifest(
            first,
            {**base, "shard": {"index": 0, "count": 2}, "counts": {"captioning": {"answered": 3}}},
        )
        write_manifest(
            second,
            {**base, "shard": {"index": 1, "count": 2}, "counts": {"captioning": {"answered": 4}}},
        )
    return first, second


def test_merge_joins_shards_and_their_manifests(release, tmp_path):
    first, second = shard_files(release, tmp_path)
    merged = merge_prediction_files([first, second], tmp_path / "all.jsonl", release=release)
    assert merged.missing_images == [] and merged.missing_cases == []
    reread = read_predictions(tmp_path / "all.jsonl", release)
    whole = read_predictions(
        write_lines(tmp_path / "whole.jsonl", full_predictions(release)), release
    )
    assert reread.localization() == whole.localization() and reread.diagnoses() == whole.diagnoses()
    manifest = read_manifest(tmp_path / "all.jsonl")
    assert manifest["shard"] is None and manifest["model"] == "m"
    assert manifest["counts"] == {"captioning": {"answered": 7}}
    assert [entry["shard"]["index"] for entry in manifest["merged_from"]] == [0, 1]


def test_merge_of_shards_without_a_count_lists_no_missing_shard(release, tmp_path):
    # A shard entry without "count" cannot tell which shards are missing; it used to crash
    # the merge with int(None) after the merged file was already written.
    first, second = shard_files(release, tmp_path)
    for path, index in ((first, 0), (second, 1)):
        manifest = read_manifest(path)
        manifest["shard"] = {"index": index}
        write_manifest(path, manifest)
    merge_prediction_files([first, second], tmp_path / "all.jsonl", release=release)
    manifest = read_manifest(tmp_path / "all.jsonl")
    assert manifest["missing_shards"] == [] and manifest["counts"] == {
        "captioning": {"answered": 7}
    }


def test_merge_refuses_duplicates_naming_both_files_and_lines(release, tmp_path):
    first, second = shard_files(release, tmp_path, manifests=False)
    with second.open("a") as handle:
        handle.write(json.dumps(full_predictions(release)[0]) + "\n")  # line 1 of s0
    n_second = len(second.read_text().splitlines())
    with pytest.raises(NovaInputError) as caught:
        merge_prediction_files([first, second], tmp_path / "all.jsonl")
    message = str(caught.value)
    assert f"{first}, line 1" in message and caught.value.source == str(second)
    assert caught.value.record.startswith(f"line {n_second}")
    assert not (tmp_path / "all.jsonl").exists()


def test_merge_refuses_shards_of_different_runs(release, tmp_path):
    first, second = shard_files(release, tmp_path)
    manifest = read_manifest(second)
    manifest["prompts"] = {"captioning": {"sha256": "other"}}
    write_manifest(second, manifest)
    with pytest.raises(NovaInputError, match="prompts") as caught:
        merge_prediction_files([first, second], tmp_path / "all.jsonl")
    assert caught.value.field == "prompts"

    manifest_path_for(second).unlink()
    with pytest.raises(NovaInputError, match="no manifest"):
        merge_prediction_files([first, second], tmp_path / "all.jsonl")


def test_merge_never_overwrites_by_accident(release, tmp_path):
    first, second = shard_files(release, tmp_path, manifests=False)
    out = write_lines(tmp_path / "all.jsonl", [GOOD_IMAGE])
    with pytest.raises(NovaInputError, match="exists"):
        merge_prediction_files([first, second], out)
    assert read_predictions(out).filenames == ["case0001_001.png"]
    merge_prediction_files([first, second], out, overwrite=True)
    assert len(read_predictions(out).filenames) == 6
    with pytest.raises(NovaInputError, match="is an input of this command"):
        merge_prediction_files([first, out], out, overwrite=True)
    manifest_of_first = first.with_name(first.name + ".manifest.json")
    with pytest.raises(NovaInputError, match="the manifest of a shard"):
        merge_prediction_files([first, second], manifest_of_first, overwrite=True)
    notes = tmp_path / "notes.txt"
    notes.write_text("not predictions", encoding="utf-8")
    with pytest.raises(NovaInputError, match="not a predictions file novabench wrote"):
        merge_prediction_files([first, second], notes, overwrite=True)
    assert notes.read_text(encoding="utf-8") == "not predictions"


def test_clipped_boxes_are_counted_apart_from_clean_ones(release, tmp_path):
    # Qwen3-VL answers bbox_2d in 0..1000; read as Qwen2.5-VL pixels of a 40x32 input they
    # run past the image and get clipped: the status says so instead of a plain "ok".
    image = release.images[0]
    answers = [
        {
            "filename": image.filename,
            "raw_boxes": '[{"bbox_2d": [389, 466, 487, 565]}]',
            "input_size": [image.width, image.height],
        },
        {
            "filename": release.images[1].filename,
            "raw_boxes": '[{"bbox_2d": [2, 3, 10, 12]}]',
            "input_size": [release.images[1].width, release.images[1].height],
        },
    ]
    parsed = parse_raw(
        read_predictions(write_lines(tmp_path / "raw.jsonl", answers), release),
        release,
        box_convention="qwen",
    )
    assert parsed.parse_counts("localization") == {"ok": 1, "ok_out_of_image": 1}


# ------------------------------------------------------------------- several files, one reader


def test_reading_several_files_gives_one_set_in_release_order(release, tmp_path):
    lines = full_predictions(release)
    images = write_lines(tmp_path / "images.jsonl", [line for line in lines if "filename" in line])
    cases = write_lines(tmp_path / "cases.jsonl", [line for line in lines if "case_id" in line])
    both = read_predictions([cases, images], release)
    whole = read_predictions(write_lines(tmp_path / "whole.jsonl", lines), release)
    assert both.localization() == whole.localization()
    assert both.captions() == whole.captions() and both.diagnoses() == whole.diagnoses()
    assert both.source == f"{cases}, {images}"
    # A single path given as a list reads exactly like the path itself.
    alone = read_predictions(images, release)
    assert read_predictions([images], release).captions() == alone.captions()


def test_an_item_repeated_across_files_is_refused_naming_both_files(release, tmp_path):
    image = release.images[0].filename
    first = write_lines(tmp_path / "first.jsonl", [{"filename": image, "caption": "Axial T2."}])
    second = write_lines(
        tmp_path / "second.jsonl",
        [
            {"case_id": release.cases()[0].case_id, "diagnoses": ["x"]},
            {"filename": image, "caption": "Again."},
        ],
    )
    with pytest.raises(NovaInputError) as caught:
        read_predictions([first, second], release)
    message = str(caught.value)
    assert str(first) in message and str(second) in message
    assert f"{first}, line 1" in message and caught.value.record.startswith("line 2")
    assert caught.value.field == "filename"


def test_across_files_an_answer_replaces_a_failure_and_a_failure_never_replaces_an_answer(
    release, tmp_path
):
    case_id = release.cases()[0].case_id
    failed = {"case_id": case_id, "task": "diagnosis", "error": "timeout"}
    answer = {"case_id": case_id, "diagnoses": ["glioma"]}
    failed_path = write_lines(tmp_path / "failed.jsonl", [failed])
    answer_path = write_lines(tmp_path / "answer.jsonl", [answer])
    for order in ([failed_path, answer_path], [answer_path, failed_path]):
        predictions = read_predictions(order, release)
        assert predictions.diagnoses()[0] == ["glioma"] and predictions.errors("diagnosis") == {}
        assert predictions.superseded == 1  # the failed attempt is counted, not hidden
    # Within one file an answer followed by a failure is still a duplicate.
    with pytest.raises(NovaInputError, match="duplicate diagnosis"):
        read_predictions(write_lines(tmp_path / "one.jsonl", [answer, failed]), release)


def test_reading_no_file_is_refused(release):
    with pytest.raises(NovaInputError, match="no predictions file"):
        read_predictions([], release)


# --------------------------------------------------------------------------- RunManifest


def run_manifest(**changes):
    from novabench.run.predictions import RunManifest

    base = RunManifest(
        format="novabench-raw-answers",
        format_version=1,
        backend={"type": "baseline", "model": "floor"},
        model="floor",
        prompts={"captioning": {"name": "default", "sha256": "abc"}},
        box_convention="protocol",
        shard={"index": 0, "count": 2},
        release={"layout": "v1", "fingerprint": "f00d", "n_images": 6, "n_cases": 3},
        tasks=["captioning"],
        status="complete",
        counts={"captioning": {"answered": 3}},
        extra={"note": "kept as written"},
    )
    from dataclasses import replace

    return replace(base, **changes)


def test_run_manifest_round_trips_through_its_file(tmp_path):
    from novabench.run.predictions import RunManifest

    manifest = run_manifest()
    path = manifest.write(tmp_path / "pred.jsonl")
    assert path == manifest_path_for(tmp_path / "pred.jsonl")
    again = RunManifest.read(tmp_path / "pred.jsonl")
    assert again == manifest
    on_disk = json.loads(path.read_text())
    assert on_disk["note"] == "kept as written"  # unknown keys survive a rewrite
    assert "revision" in on_disk and on_disk["revision"] is None  # a run states every run field
    assert read_manifest(tmp_path / "pred.jsonl") == on_disk  # the thin reader gives the JSON
    # Through the thin writer too, from a plain dict.
    write_manifest(tmp_path / "copy.jsonl", on_disk)
    assert RunManifest.read(tmp_path / "copy.jsonl") == manifest
    assert RunManifest.read(tmp_path / "absent.jsonl") is None


def test_run_manifest_refuses_a_field_of_the_wrong_kind_naming_file_and_field(tmp_path):
    from novabench.run.predictions import RunManifest

    manifest_path_for(tmp_path / "pred.jsonl").write_text(json.dumps({"release": "v1"}))
    with pytest.raises(NovaInputError) as caught:
        RunManifest.read(tmp_path / "pred.jsonl")
    assert caught.value.field == "release"
    assert caught.value.source.endswith("pred.jsonl.manifest.json")
    manifest_path_for(tmp_path / "list.jsonl").write_text("[1, 2]")
    with pytest.raises(NovaInputError, match="JSON object"):
        RunManifest.read(tmp_path / "list.jsonl")


def test_run_manifest_compares_runs_ignoring_shard_fields_and_release_layout():
    first = run_manifest()
    sibling = run_manifest(
        shard={"index": 1, "count": 2},
        status="running",
        counts={"captioning": {"answered": 4}},
        release={"layout": "export", "fingerprint": "f00d", "n_images": 6, "n_cases": 3},
    )
    assert first.differences(sibling) == []
    assert first.release_identity == {"fingerprint": "f00d", "n_images": 6, "n_cases": 3}
    assert first.release_fingerprint == "f00d"
    other = run_manifest(model="other", box_convention="qwen")
    assert first.differences(other) == ["box_convention", "model"]


def test_run_manifest_merged_adds_counts_and_lists_missing_shards():
    from novabench.run.predictions import RunManifest

    first = run_manifest(shard={"index": 0, "count": 3})
    second = run_manifest(
        shard={"index": 2, "count": 3}, status="interrupted", counts={"captioning": {"answered": 4}}
    )
    merged = RunManifest.merged([(Path("a.jsonl"), first), (Path("b.jsonl"), second)])
    assert merged.shard is None and merged.to_dict()["shard"] is None
    assert merged.counts == {"captioning": {"answered": 7}}
    assert merged.missing_shards == [1]
    assert merged.status == "mixed: complete, interrupted"
    assert [entry["path"] for entry in merged.merged_from] == ["a.jsonl", "b.jsonl"]
    assert merged.model == first.model and merged.extra == first.extra


def test_answers_beyond_the_size_caps_are_marked_too_long_not_parsed(release, tmp_path):
    from novabench import registry

    image, other = release.images[0].filename, release.images[1].filename
    long_raw = "Axial FLAIR. " * (registry.MAX_RAW_ANSWER_CHARS // 13 + 1)
    long_caption = "x" * (registry.MAX_CAPTION_CHARS + 1)
    path = write_lines(
        tmp_path / "raw.jsonl",
        [
            {"filename": image, "raw_caption": long_raw},
            {"filename": other, "caption": long_caption},
            {"case_id": "case0001", "diagnoses": ["y" * registry.MAX_CAPTION_CHARS, "z"]},
            {"case_id": "case0002", "raw_diagnoses": "Glioma"},
        ],
    )
    assert len(long_raw) > registry.MAX_RAW_ANSWER_CHARS
    predictions = read_predictions(path, release)
    assert predictions.records["captioning"][other].caption == ""
    assert predictions.records["captioning"][other].parse_status == "too_long"
    assert predictions.records["diagnosis"]["case0001"].diagnoses == []
    parsed = parse_raw(predictions, release)
    assert parsed.records["captioning"][image].caption == ""
    assert parsed.parse_counts("captioning") == {"too_long": 2}
    assert parsed.parse_counts("diagnosis")["too_long"] == 1
    assert parsed.records["diagnosis"]["case0002"].diagnoses == ["Glioma"]  # short: parsed
    # A caption exactly at the cap is still scored.
    at_cap = write_lines(
        tmp_path / "cap.jsonl", [{"filename": image, "caption": "x" * registry.MAX_CAPTION_CHARS}]
    )
    assert read_predictions(at_cap, release).captions()[0] == "x" * registry.MAX_CAPTION_CHARS


def test_a_cut_off_line_before_good_ones_is_placed_on_its_own_line(tmp_path) -> None:
    # The parser's position must not run into the next line (it said "column 1" there).
    cut = '{"filename": "case0002_001.png", "boxes": [[1, 2'
    path = tmp_path / "cut.jsonl"
    path.write_text(cut + "\n" + json.dumps(GOOD_IMAGE) + "\n")
    with pytest.raises(NovaInputError) as caught:
        list(_iter_json_lines(path))
    assert caught.value.record == "line 1"
    assert f"at column {len(cut) + 1}" in str(caught.value)


def test_nova_parse_keeps_a_raw_answer_with_a_lone_surrogate_as_written(
    release, tmp_path, capsys
) -> None:
    from novabench.cli import main

    # A raw file from elsewhere: its JSON escapes name half of a surrogate pair.
    raw = tmp_path / "raw.jsonl"
    raw.write_bytes(
        b'{"filename": "case0001_001.png", "task": "captioning", '
        b'"raw_caption": "Axial \\ud800 T2 image."}\n'
        b'{"case_id": "case0002", "task": "diagnosis", "raw_diagnoses": "Glioma \\udc00"}\n'
    )
    out = tmp_path / "parsed.jsonl"
    assert main(["parse", str(raw), "--data", str(release.root), "--out", str(out)]) == 0
    text = out.read_bytes().decode("utf-8")  # valid UTF-8 throughout
    lines = [json.loads(line) for line in text.splitlines()]
    caption = next(line for line in lines if line["task"] == "captioning")
    diagnosis = next(line for line in lines if line["task"] == "diagnosis")
    assert caption["raw_caption"] == "Axial \ud800 T2 image."  # the raw answer as it came
    assert caption["caption"] == "Axial \ufffd T2 image."  # U+FFFD, as for undecodable bytes
    assert diagnosis["raw_diagnoses"] == "Glioma \udc00"
    assert diagnosis["diagnoses"] == ["Glioma \ufffd"]
