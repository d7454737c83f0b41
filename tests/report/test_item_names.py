"""Errors raised while scoring name an item as the user's files do, never by a 0-based index.

The metrics know an item only by its index in the lists they are given ("example 1"), which
a user cannot find in a predictions file: `nova evaluate` names it by its filename or case
id, the `evaluate` face counts it from 1 (with the list index beside it).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from novabench.data.release import read_release
from novabench.errors import NovaInputError, NovaOutputError
from novabench.metrics.evaluate_adapter import examples_counted_from_one
from novabench.metrics.judge import JudgeError
from novabench.metrics.keyword_judge import KEYWORD_GROUPS, OpenAIKeywordJudge
from novabench.metrics.tasks import compute_task, examples_renamed
from novabench.report.scoring import evaluate_predictions
from tests.fake_openai_server import FakeOpenAIServer, request_text
from tests.release_factory import write_v1_release

NOT_KEYWORDS = ["BLEU-4", "ROUGE-L", "METEOR", "BERTScore-F1"]


@pytest.fixture(scope="module")
def release_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # 2 cases: case0001 (1 image), case0002 (2 images); release order is filename order.
    return write_v1_release(tmp_path_factory.mktemp("names"), n_cases=2, image_size=(32, 32))


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        yield fake


def _predictions(folder: Path, release_dir: Path) -> Path:
    release = read_release(release_dir)
    lines = [{"filename": image.filename, "caption": "Axial FLAIR."} for image in release.images]
    lines += [{"case_id": case.case_id, "diagnoses": ["Glioma"]} for case in release.cases()]
    path = folder / "predictions.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_a_keyword_judge_failure_names_the_image_by_its_filename(
    release_dir: Path, tmp_path: Path, server: FakeOpenAIServer
) -> None:
    release = read_release(release_dir)
    failing = release.images[1]  # list index 1: the old message said "example 1"
    empty = {group: [] for group in KEYWORD_GROUPS}

    def answer(body: dict) -> str:
        text, _ = request_text(body)
        if f"REFERENCE: {failing.caption.splitlines()[0]}" in text:
            return "no JSON here"
        return json.dumps({"reference": {**empty, "label": "abnormal"},
                           "prediction": {**empty, "label": "abnormal"}})  # fmt: skip

    server.answer = answer
    judge = OpenAIKeywordJudge(server.base_url, "judge-model", backoff=0.0, max_retries=0)
    with pytest.raises(JudgeError) as caught:
        evaluate_predictions(
            release_dir,
            _predictions(tmp_path, release_dir),
            tasks=("captioning",),
            n_resamples=0,
            keyword_judge=judge,
            caption_options={"exclude": NOT_KEYWORDS},
        )
    assert caught.value.case == failing.filename
    assert str(caught.value).startswith(f"{failing.filename}: 1 of ")
    assert "example" not in str(caught.value)


def test_a_failing_matcher_is_noted_with_the_case_id(release_dir: Path, tmp_path: Path) -> None:
    def matcher(reference: str, candidate: str) -> bool:
        if reference != read_release(release_dir).cases()[0].final_diagnosis:
            raise ValueError("the matcher's own failure")
        return False

    with pytest.raises(ValueError, match="the matcher's own failure") as caught:
        evaluate_predictions(
            release_dir,
            _predictions(tmp_path, release_dir),
            tasks=("diagnosis",),
            n_resamples=0,
            matcher=matcher,
        )
    # The second case, list index 1: the note said "while matching example 1 (case0002)".
    (note,) = caught.value.__notes__
    assert note.startswith("while matching case0002, prediction 1: reference ")


def test_the_all_face_names_the_row_counted_from_one_and_no_index_in_the_message() -> None:
    rows = [
        {
            "boxes": [[0, 0, 9, 9]],
            "caption": "Axial FLAIR.",
            "final_diagnosis": diagnosis,
            "case_id": "c1",
        }
        for diagnosis in ("Glioblastoma", "Meningioma")
    ]
    predictions = [{"boxes": [], "caption": "Axial FLAIR.", "diagnoses": ["Glioma"]}] * 2
    with pytest.raises(NovaInputError) as caught, examples_counted_from_one():
        compute_task("all", predictions, rows, exclude=["BERTScore-F1"])
    # Was "...: case c1 has two final diagnoses ('Glioblastoma' at example 0)": a 0-based
    # index the face's renaming of the record does not reach.
    assert str(caught.value) == (
        "example 2 (0-based index 1), field 'references.final_diagnosis': case c1 has two "
        "final diagnoses: 'Glioblastoma' on an earlier image of the case, 'Meningioma' on "
        "this one"
    )


def test_all_names_a_row_error_by_its_row_and_a_case_error_by_its_case_first_row() -> None:
    """trust24: a per-case task's "example K" is the K-th case, renamed as that case's first
    row; an error of the rows themselves (two images of a case differ) keeps its row."""
    rows = [
        {"boxes": [], "caption": "Axial FLAIR.", "final_diagnosis": diagnosis, "case_id": case}
        for case, diagnosis in (("c1", "MS"), ("c1", "MS"), ("c2", "ADEM"))
    ]
    predictions = [
        {"boxes": [], "caption": "Axial FLAIR.", "diagnoses": given}
        for given in (["MS"], ["ADEM"], ["ADEM"])
    ]
    with pytest.raises(NovaInputError) as caught, examples_counted_from_one():
        compute_task("all", predictions, rows, exclude=NOT_KEYWORDS)
    assert caught.value.record == "example 2 (0-based index 1)"  # the row, not case c2's
    predictions[1] = predictions[0]

    def matcher(reference: str, candidate: str) -> bool:
        if reference == "ADEM":
            raise RuntimeError("endpoint down")
        return reference == candidate

    with pytest.raises(RuntimeError) as failed, examples_counted_from_one():
        compute_task("all", predictions, rows, exclude=NOT_KEYWORDS, matcher=matcher)
    if sys.version_info >= (3, 11):  # add_note exists from Python 3.11
        assert failed.value.__notes__[0].startswith(
            "while matching example 3 (0-based index 2, c2), prediction 1: "
        )


def test_the_face_counts_a_judge_errors_example_from_one() -> None:
    with pytest.raises(JudgeError) as caught, examples_counted_from_one():
        raise JudgeError(
            "unreadable reply",
            case="example 0 (case0009), prediction 1",
            reference="Glioma",
            candidate="GBM",
        )
    assert caught.value.case == "example 1 (0-based index 0, case0009), prediction 1"
    assert str(caught.value) == (
        "example 1 (0-based index 0, case0009), prediction 1 (reference 'Glioma', "
        "candidate 'GBM'): unreadable reply"
    )


def _named_by_filename(index: int, detail: str | None) -> str:
    return ["case0001_001.png", "case0002_001.png", "case0002_002.png"][index]


@pytest.mark.parametrize(
    ("error_type", "arguments", "renamed_item", "message"),
    [
        (
            NovaInputError,
            {"message": "width must be >= 0, got -2.0", "source": "predictions.jsonl",
             "record": "example 2, box 1", "field": "boxes"},
            "case0002_002.png, box 1",
            "predictions.jsonl, case0002_002.png, box 1, field 'boxes': width must be >= 0, "
            "got -2.0",
        ),
        (
            JudgeError,
            {"message": "unreadable reply", "case": "example 1 (case0002), prediction 3",
             "reference": "Glioma", "candidate": "GBM", "reply": "maybe"},
            "case0002_001.png, prediction 3",
            "case0002_001.png, prediction 3 (reference 'Glioma', candidate 'GBM'): unreadable "
            "reply",
        ),
    ],
    ids=["input-error-record", "judge-error-case"],
)  # fmt: skip
def test_a_renamed_error_names_its_item_anew_and_keeps_everything_else(
    error_type: type[NovaInputError | JudgeError],
    arguments: dict[str, str],
    renamed_item: str,
    message: str,
) -> None:
    item_attribute = error_type.item_attribute
    assert item_attribute is not None
    with pytest.raises(error_type) as caught, examples_renamed(_named_by_filename):
        raise error_type(**arguments)
    assert getattr(caught.value, item_attribute) == renamed_item
    for name, value in arguments.items():
        if name != item_attribute:
            assert getattr(caught.value, name) == value, name
    assert str(caught.value) == message


def test_an_error_that_names_no_item_is_left_as_it_was_and_refuses_a_rename() -> None:
    error = NovaOutputError("example 0.json", "no space left on the device")
    with pytest.raises(NovaOutputError) as caught, examples_renamed(_named_by_filename):
        raise error
    assert str(caught.value) == "cannot write example 0.json: no space left on the device"
    with pytest.raises(TypeError, match="NovaOutputError names no item"):
        error.rename_item("case0001_001.png")
