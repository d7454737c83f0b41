"""A line holding a raw answer and parsed fields must hold what the raw answer reads as.

`nova parse` writes each raw answer beside what it read (boxes, caption or diagnoses) and the
``parse_status``. Such a line was accepted as written: parsed fields edited by hand, or a
status changed, were scored while the raw answer beside them said otherwise. The raw answer
is now read again (under the box convention the parse recorded) and a disagreement refused.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from novabench.cli import main
from novabench.data.release import read_release
from novabench.errors import NovaInputError
from novabench.report import evaluate_predictions
from novabench.run.manifest import RunManifest, file_record

NO_BERTSCORE = {"exclude": ["BERTScore-F1"]}
FAST = ["--bootstrap", "0", "--no-breakdowns", "--exclude", "BERTScore-F1", "--exclude", "METEOR"]


def raw_answers(release_folder: Path) -> list[dict[str, Any]]:
    """Answers as models give them: Qwen2.5-VL's bbox_2d JSON in pixels of a 1036 px input,
    GPT-4o's fenced JSON with prose, LLaVA's labelled line, Gemini's box_2d, "no target";
    captions; a JSON and a prose diagnosis."""
    release = read_release(release_folder)
    images = [image.filename for image in release.images]
    cases = [case.case_id for case in release.cases()]
    boxes = [
        '```json\n[{"bbox_2d": [402, 388, 517, 470], "label": "hyperintense lesion"}]\n```',
        'Here is the abnormal region:\n```json\n{"boxes": [[0.41, 0.37, 0.52, 0.46]]}\n```\n'
        "The lesion lies in the right frontal lobe.",
        "lesion: [380, 410, 470, 520]",
        '{"box_2d": [372, 405, 461, 512], "label": "mass"}',
        "no target",
    ]
    lines: list[dict[str, Any]] = []
    for filename, answer in zip(images, boxes):
        line = {"filename": filename, "task": "localization", "raw_boxes": answer}
        lines.append({**line, "input_size": [1036, 1036]})
    lines.append(
        {
            "filename": images[0],
            "task": "captioning",
            "raw_caption": "Axial FLAIR image shows a hyperintense lesion in the right frontal "
            "white matter without mass effect.",
        }
    )
    lines.append(
        {
            "case_id": cases[0],
            "task": "diagnosis",
            "raw_diagnoses": '{"most_likely_diagnosis": "Glioblastoma", "other_possible_'
            'diagnoses": ["Brain abscess", "Metastasis", "Lymphoma", "Tumefactive MS"]}',
        }
    )
    lines.append(
        {
            "case_id": cases[1],
            "task": "diagnosis",
            "raw_diagnoses": "Most likely: cerebral abscess. Differentials: necrotic glioma, "
            "metastasis.",
        }
    )
    return lines


@pytest.fixture
def parsed_run(sample_release: Path, tmp_path: Path) -> Path:
    """A hand-made raw file parsed by `nova parse` under qwen's convention (recorded)."""
    raw = tmp_path / "raw.jsonl"
    lines = raw_answers(sample_release)
    raw.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    parsed = tmp_path / "parsed.jsonl"
    arguments = ["parse", str(raw), "--data", str(sample_release), "--out", str(parsed)]
    assert main([*arguments, "--box-convention", "qwen", "-q"]) == 0
    return parsed


def edit_line(path: Path, index: int, **changes: Any) -> None:
    """One line of a parsed file edited by hand; its manifest records the edited bytes (the
    edit is not a stranger's file, so only the line's own agreement can catch it)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[index])
    record.update(changes)
    lines[index] = json.dumps(record, ensure_ascii=False)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    manifest = RunManifest.read(path)
    assert manifest is not None
    manifest.file = file_record(path)
    manifest.write(path)


def line_of(path: Path, index: int) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8").splitlines()[index])


def test_what_nova_parse_writes_agrees_with_itself(
    sample_release: Path, sample_floor_run: Path, parsed_run: Path, tmp_path: Path
) -> None:
    # Read again under the convention the parse recorded (qwen), not this call's (auto).
    report = evaluate_predictions(
        sample_release, parsed_run, n_resamples=0, breakdowns=False, caption_options=NO_BERTSCORE
    )
    assert report["tasks"]["localization"]["coverage"]["answered"] == 5
    parsed_floor = tmp_path / "floor-parsed.jsonl"
    arguments = ["parse", str(sample_floor_run), "--data", str(sample_release)]
    assert main([*arguments, "--out", str(parsed_floor), "-q"]) == 0
    out = tmp_path / "report.json"
    arguments = ["evaluate", "--data", str(sample_release), "--predictions", str(parsed_floor)]
    assert main([*arguments, "--out", str(out), *FAST]) == 0


@pytest.mark.parametrize(
    ("index", "changes", "field"),
    [
        # Qwen's box moved by hand (its raw answer still says 402, 388, ...).
        (0, {"boxes": [[10.0, 10.0, 50.0, 50.0]]}, "boxes"),
        # "no target" marked as a box answer with the status of one.
        (4, {"parse_status": "ok"}, "parse_status"),
        # The caption rewritten, the raw caption kept.
        (5, {"caption": "Normal brain MRI."}, "caption"),
        # The diagnoses put in another order.
        (6, {"diagnoses": ["Brain abscess", "Glioblastoma"]}, "diagnoses"),
    ],
)
def test_parsed_fields_that_disagree_with_the_raw_answer_are_refused_in_one_line(
    sample_release: Path,
    parsed_run: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    index: int,
    changes: dict[str, Any],
    field: str,
) -> None:
    kept = line_of(parsed_run, index)
    task = kept["task"]
    key = kept.get("filename") or kept["case_id"]
    edit_line(parsed_run, index, **changes)
    out = tmp_path / "report.json"
    arguments = ["evaluate", "--data", str(sample_release), "--predictions", str(parsed_run)]
    capsys.readouterr()
    assert main([*arguments, "--out", str(out), *FAST]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"{parsed_run}, line {index + 1} ({key}), field '{field}': {task}: " in err
    assert "drop " in err and "to score" in err and not out.exists()


def test_either_way_forward_the_refusal_names_is_scored(
    sample_release: Path, parsed_run: Path
) -> None:
    edit_line(parsed_run, 0, boxes=[[10.0, 10.0, 50.0, 50.0]])
    with pytest.raises(NovaInputError) as refused:
        evaluate_predictions(
            sample_release,
            parsed_run,
            n_resamples=0,
            breakdowns=False,
            caption_options=NO_BERTSCORE,
        )
    assert refused.value.field == "boxes" and "under box convention qwen" in str(refused.value)

    lines = [json.loads(line) for line in parsed_run.read_text(encoding="utf-8").splitlines()]
    dropped_parse = {k: v for k, v in lines[0].items() if k not in ("boxes", "parse_status")}
    named = str(refused.value).rsplit(", or drop ", 1)[1].split(" to score")[0].split(", ")
    assert named[:2] == ["raw_boxes", "input_size"]  # and the counts that describe it
    dropped_raw = {k: v for k, v in lines[0].items() if k not in named}
    for replacement, expected in ((dropped_parse, None), (dropped_raw, [[10.0, 10.0, 50.0, 50.0]])):
        edited = [replacement, *lines[1:]]
        parsed_run.write_text("".join(json.dumps(line) + "\n" for line in edited), "utf-8")
        manifest = RunManifest.read(parsed_run)
        assert manifest is not None
        manifest.file = file_record(parsed_run)
        manifest.write(parsed_run)
        from novabench.report.scoring import score_predictions

        scored = score_predictions(
            sample_release,
            parsed_run,
            n_resamples=0,
            breakdowns=False,
            caption_options=NO_BERTSCORE,
        )
        boxes = scored.prediction_set.records["localization"][lines[0]["filename"]].boxes
        if expected is None:  # read again: the box the raw answer holds
            assert boxes != [[10.0, 10.0, 50.0, 50.0]] and len(boxes) == 1
        else:  # the edited box, as given
            assert boxes == expected
