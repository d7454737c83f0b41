"""A raw answer beyond registry.MAX_RAW_ANSWER_CHARS is stored cut, marked and counted."""

from __future__ import annotations

import json

import pytest

from novabench import registry
from novabench.cli import main
from novabench.data.release import read_release
from novabench.errors import NovaInputError
from novabench.run.backends import Answer, OpenAIEndpointBackend
from novabench.run.predictions import (
    cap_raw_answer,
    merge_prediction_files,
    parse_raw,
    read_manifest,
    read_predictions,
    write_predictions,
)
from novabench.run.runner import run_model
from tests.fake_openai_server import FakeOpenAIServer, Reply
from tests.release_factory import write_v1_release

CAP = registry.MAX_RAW_ANSWER_CHARS
# A runaway generation whose first line is a good answer: parsing the stored prefix as if it
# were the whole answer would score a hit, so a hit in the report would expose that.
RUNAWAY = "1. Rare disease 1\n" + "2. Glioma, or something else entirely. " * 26_000
GOOD_ANSWER = '["Rare disease 1", "Rare disease 2"]'


@pytest.fixture(scope="module")
def release_dir(tmp_path_factory):
    return write_v1_release(tmp_path_factory.mktemp("release"), n_cases=3, image_size=(36, 30))


def one_at_a_time(server):
    """Requests in release order, so the scripted first reply answers the first item."""
    return OpenAIEndpointBackend(
        server.base_url, "fake-vlm", max_concurrency=1, timeout=120.0, max_retries=0
    )


def lines_of(path):
    return [json.loads(text) for text in path.read_text(encoding="utf-8").splitlines()]


def test_a_megabyte_answer_is_stored_cut_marked_and_scored_as_a_failure(
    release_dir, tmp_path, capsys
):
    assert len(RUNAWAY) > 1_000_000 and RUNAWAY.count("\n") == 1
    raw = tmp_path / "raw.jsonl"
    with FakeOpenAIServer(script=[Reply(content=RUNAWAY)], answer=lambda body: GOOD_ANSWER) as s:
        summary = run_model(
            read_release(release_dir),
            tasks="diagnosis",
            backend=one_at_a_time(s),
            out_path=raw,
            progress=False,
        )
    assert summary.counts["diagnosis"]["answered"] == 3 and summary.n_too_long == 1
    assert summary.counts["diagnosis"]["too_long"] == 1
    assert read_manifest(raw)["counts"]["diagnosis"]["too_long"] == 1

    stored = {line["case_id"]: line for line in lines_of(raw)}
    assert stored["case0001"]["raw_diagnoses"] == RUNAWAY[:CAP]
    assert stored["case0001"]["raw_truncated_from"] == len(RUNAWAY)
    assert raw.stat().st_size < CAP + 1000  # the prefix and two short lines, not a megabyte
    assert all("raw_truncated_from" not in stored[c] for c in ("case0002", "case0003"))
    assert stored["case0002"]["raw_diagnoses"] == GOOD_ANSWER

    parsed = tmp_path / "parsed.jsonl"
    assert main(["parse", str(raw), "--data", str(release_dir), "--out", str(parsed)]) == 0
    assert "too_long 1" in capsys.readouterr().out
    parsed_lines = {line["case_id"]: line for line in lines_of(parsed)}
    cut = parsed_lines["case0001"]
    assert cut["parse_status"] == "too_long" and cut["diagnoses"] == []
    assert cut["raw_truncated_from"] == len(RUNAWAY) and cut["raw_diagnoses"] == RUNAWAY[:CAP]

    # Scored as no answer: the same report as a file that gives case0001 nothing.
    by_hand = tmp_path / "by_hand.jsonl"
    write_predictions(
        by_hand,
        [
            {"case_id": case_id, "diagnoses": [] if case_id == "case0001" else line["diagnoses"]}
            for case_id, line in parsed_lines.items()
        ],
    )
    reports = {}
    for name, predictions in (("raw", raw), ("parsed", parsed), ("by_hand", by_hand)):
        out = tmp_path / f"{name}.report.json"
        args = ["evaluate", "--data", str(release_dir), "--predictions", str(predictions)]
        assert main([*args, "--out", str(out), "--task", "diagnosis", "--bootstrap", "0"]) == 0
        reports[name] = json.loads(out.read_text(encoding="utf-8"))["tasks"]["diagnosis"]
    assert "too_long 1" in capsys.readouterr().out
    for name in ("raw", "parsed"):
        assert reports[name]["coverage"]["parse_status"]["too_long"] == 1
        assert reports[name]["metrics"] == reports["by_hand"]["metrics"]
    assert "too_long" in registry.TASKS["diagnosis"].failure_statuses


@pytest.mark.parametrize("length", [1, CAP - 1, CAP])
def test_answers_up_to_the_cap_are_stored_exactly_as_received(release_dir, tmp_path, length):
    # Characters from every UTF-8 width, a newline, quotes and a backslash: JSON escapes them.
    alphabet = 'aé€😀\n"\\ '
    answer = "".join(alphabet[i % len(alphabet)] for i in range(length))
    raw = tmp_path / "raw.jsonl"
    with FakeOpenAIServer(script=[Reply(content=answer)]) as server:
        summary = run_model(
            read_release(release_dir),
            tasks="captioning",
            backend=one_at_a_time(server),
            out_path=raw,
            limit=1,
            progress=False,
        )
    assert summary.n_too_long == 0
    (line,) = raw.read_text(encoding="utf-8").splitlines()
    assert json.loads(line)["raw_caption"] == answer and "raw_truncated_from" not in line
    as_json = json.dumps(answer, ensure_ascii=False)  # the answer's own bytes, escaped only
    assert f'"raw_caption": {as_json},'.encode() in line.encode("utf-8")


class Runaway:
    """A batch backend (as the transformers model and the baselines are) that never stops."""

    name = "runaway"
    batch_size = 2

    def describe(self):
        return {"type": "test", "model": "runaway"}

    def generate(self, requests):
        return [Answer(text="Axial FLAIR. " * (CAP // 13 + 1)) for _ in requests]


def test_batch_backends_answers_take_the_same_cap(release_dir, tmp_path):
    raw = tmp_path / "raw.jsonl"
    release = read_release(release_dir)
    summary = run_model(
        release, tasks="captioning", backend=Runaway(), out_path=raw, progress=False
    )
    assert summary.n_too_long == len(release.images) == summary.n_answered
    lines = lines_of(raw)
    assert {len(line["raw_caption"]) for line in lines} == {CAP}
    assert {line["raw_truncated_from"] for line in lines} == {13 * (CAP // 13 + 1)}
    parsed = parse_raw(read_predictions(raw, release), release)
    assert parsed.parse_counts("captioning") == {"too_long": len(release.images)}
    assert set(parsed.captions()) == {""}


def test_cap_raw_answer_keeps_short_answers_and_cuts_long_ones_at_the_cap():
    short = "x" * CAP
    assert cap_raw_answer(short) == (short, None) and cap_raw_answer(short)[0] is short
    kept, length = cap_raw_answer("y" * CAP + "tail")
    assert kept == "y" * CAP and length == CAP + 4


def test_a_cut_prefix_is_never_parsed_even_when_it_reads_as_a_whole_answer(tmp_path):
    path = tmp_path / "raw.jsonl"
    line = {"case_id": "case0001", "raw_diagnoses": '["Glioma"]', "raw_truncated_from": 10**6}
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    (record,) = read_predictions(path).records["diagnosis"].values()
    assert record.parse_status == "too_long" and record.diagnoses == []
    assert record.raw == '["Glioma"]' and record.raw_truncated_from == 10**6

    merged = tmp_path / "merged.jsonl"  # merging and rewriting keep the mark
    merge_prediction_files([path], merged)
    write_predictions(tmp_path / "again.jsonl", read_predictions(merged))
    again = read_predictions(tmp_path / "again.jsonl").records["diagnosis"]["case0001"]
    assert (again.raw_truncated_from, again.parse_status) == (10**6, "too_long")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ({"case_id": "case0001", "diagnoses": ["a"], "raw_truncated_from": 9}, "without"),
        ({"case_id": "case0001", "raw_diagnoses": "abc", "raw_truncated_from": 3}, "3 are stored"),
        ({"case_id": "case0001", "raw_diagnoses": "abc", "raw_truncated_from": "9"}, "integer"),
        ({"case_id": "case0001", "raw_diagnoses": "abc", "raw_truncated_from": 9.5}, "integer"),
        ({"case_id": "case0001", "raw_diagnoses": "abc", "raw_truncated_from": True}, "integer"),
        (
            {
                "filename": "case0001_001.png",
                "raw_boxes": "[]",
                "raw_caption": "x",
                "raw_truncated_from": 9,
            },
            "one task",
        ),
    ],
)
def test_a_bad_truncation_mark_is_refused_naming_line_and_field(tmp_path, line, message):
    path = tmp_path / "raw.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    with pytest.raises(NovaInputError, match=message) as caught:
        read_predictions(path)
    assert "line 1" in str(caught.value) and "raw_truncated_from" in str(caught.value)


def test_nova_run_says_how_many_answers_it_stored_cut(release_dir, tmp_path, capsys):
    raw = tmp_path / "raw.jsonl"
    with FakeOpenAIServer(script=[Reply(content="x" * (CAP + 1))]) as server:
        args = ["run", "--data", str(release_dir), "--task", "captioning", "--limit", "2"]
        endpoint = ["--endpoint", server.base_url, "--model-name", "fake-vlm"]
        settings = ["--max-concurrency", "1", "--out", str(raw), "--no-progress"]
        assert main([*args, *endpoint, *settings]) == 0
    assert f"1 answer(s) were longer than {CAP} characters" in capsys.readouterr().err
    assert [line.get("raw_truncated_from") for line in lines_of(raw)] == [CAP + 1, None]
