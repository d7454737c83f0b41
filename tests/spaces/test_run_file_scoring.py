"""Both Spaces read a `nova run` file as `nova evaluate` reads it, manifest included.

The run here answers localisation with bare 4-number lists in prose ("The lesion is at
[ymin, xmin, ymax, xmax]."): only the prompt fixes their order, and the prompt is on
record only in the run's manifest. With the manifest, the Spaces must give the numbers
`nova evaluate` gives for the run; without it, the numbers `nova evaluate` gives for the
file alone, and their first lines must say so.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from novabench.escaping import markdown_text_with_code

REPO = Path(__file__).resolve().parents[2]
MODULE_DIR = REPO / "metrics" / "nova_metric"
RESAMPLES = 40


def protocol_box(box: list[float], width: int, height: int) -> list[int]:
    """A gold ``[x, y, w, h]`` box as the default prompt asks: [ymin, xmin, ymax, xmax] in 0..1000."""
    x, y, w, h = box
    return [
        round(1000 * y / height),
        round(1000 * x / width),
        round(1000 * (y + h) / height),
        round(1000 * (x + w) / width),
    ]


@pytest.fixture(scope="module")
def run(sample_release: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A raw run on the sample: its file, its manifest, and what was built into it."""
    from novabench.data.release import read_release
    from novabench.run.manifest import file_record
    from novabench.run.prompts import default_prompt

    release = read_release(sample_release)
    folder = tmp_path_factory.mktemp("run13")
    lines: list[dict[str, Any]] = []
    hits = 0
    gold_images = [image for image in release.images if image.boxes]
    no_line = gold_images[1].filename  # an image the run never answered
    failed = gold_images[3].filename  # an image whose model call failed
    for index, image in enumerate(release.images):
        if image.filename == no_line:
            continue
        if image.filename == failed:
            lines.append({"filename": image.filename, "task": "localization", "error": "HTTP 500"})
            continue
        if image.boxes and index % 2 == 0:
            # The gold box itself, rounded to the 0..1000 grid: IoU far above 0.5, a hit.
            box = protocol_box(list(image.boxes[0]), image.width, image.height)
            hits += 1
        else:
            box = [0, 0, 40, 40]  # the image's top-left corner, outside the head: a miss
        answer = f"The lesion is located at [{', '.join(map(str, box))}]."
        lines.append({"filename": image.filename, "task": "localization", "raw_boxes": answer})
    cases = release.cases()
    unreadable = cases[0].case_id  # an empty diagnosis answer: not readable
    for case in cases[1:-1]:  # the last case has no diagnosis line
        answer = json.dumps(
            {"most_likely_diagnosis": case.final_diagnosis, "other_possible_diagnoses": []}
        )
        lines.append({"case_id": case.case_id, "task": "diagnosis", "raw_diagnoses": answer})
    lines.append({"case_id": unreadable, "task": "diagnosis", "raw_diagnoses": ""})
    path = folder / "bare.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    prompt = default_prompt("localization")
    manifest = {
        "format": "novabench-raw-answers",
        "format_version": 1,
        "model": "fake-vlm",
        "prompts": {"localization": {"name": "default", "sha256": prompt.sha256}},
        "box_convention": "auto",
        "release": {"layout": "v1", "fingerprint": release.fingerprint()},
        "tasks": ["localization", "diagnosis"],
        "status": "complete",
        # The bytes it wrote, as nova run records them once it ends.
        "file": file_record(path),
    }
    manifest_text = json.dumps(manifest, indent=2)
    (folder / "bare.jsonl.manifest.json").write_text(manifest_text, encoding="utf-8")
    alone = folder / "alone" / "bare.jsonl"  # the same file without its manifest
    alone.parent.mkdir()
    shutil.copyfile(path, alone)
    return {
        "release": release,
        "path": path,
        "alone": alone,
        "manifest": manifest_text,
        "hits": hits,
        "n_images": len(release.images),
        "n_box_answers": len(release.images) - 2,
        "no_line": no_line,
        "failed": failed,
        "unreadable_case": unreadable,
        "no_line_case": cases[-1].case_id,
        "other_release_manifest": json.dumps({**manifest, "release": {"fingerprint": "0" * 16}}),
    }


def evaluate_report(sample_release: Path, predictions: Path, out: Path) -> dict[str, Any]:
    """The report `nova evaluate` writes for ``predictions`` (its manifest read if beside it)."""
    from novabench.cli import main

    args = ["evaluate", "--data", str(sample_release), "--predictions", str(predictions)]
    args += ["--out", str(out), "--bootstrap", str(RESAMPLES), "--exclude", "BERTScore-F1"]
    assert main([*args, "--quiet"]) == 0
    return json.loads(out.read_text(encoding="utf-8"))


def space_scores(sample_release: Path, run: dict[str, Any], manifest: str) -> tuple[Any, str]:
    from novabench.spaces import metric

    given = {"manifest_text": manifest} if manifest else {}  # none: the call as it always was
    return metric.score_inputs(
        MODULE_DIR, "all", run["path"].read_text(encoding="utf-8"), metric.REFERENCES_FROM_DATA,
        "", n_resamples=RESAMPLES, seed=0, data_source=str(sample_release), **given,
    )  # fmt: skip


def assert_table_is_the_reports(rows: list[list[str]], report: dict[str, Any]) -> None:
    shown = {(row[0], row[1]): row[2:] for row in rows}
    compared = 0
    for task, part in report["tasks"].items():
        for key, value in part["metrics"].items():
            if isinstance(value, float) and not isinstance(value, bool) and value == value:
                low, high = part["confidence_intervals"][key]
                expected = [f"{100 * value:.1f}", f"{100 * low:.1f} – {100 * high:.1f}"]
                assert shown[(task, f"{key} (%)")] == expected, (task, key)
                compared += 1
    assert compared > 10


def assert_notices_first(message: str, notices: list[str], first: str | None = None) -> None:
    """The message opens with ``first`` (if any) then every notice of the report, in order
    (a notice naming the command's --box-convention worded for the Space, which has none)."""
    paragraphs = message.split("\n\n")
    unworded = "--box-convention"
    expected = ([first] if first else []) + [markdown_text_with_code(line) for line in notices]
    assert len(paragraphs) > len(expected)
    for shown, notice in zip(paragraphs, expected):
        if unworded in notice:
            assert unworded not in shown and shown.startswith(notice.split(unworded)[0])
        else:
            assert shown == notice
    assert paragraphs[len(expected)].startswith("References: ")


def test_the_metric_space_scores_a_run_with_its_manifest_as_nova_evaluate(
    sample_release: Path, run: dict[str, Any], tmp_path: Path
) -> None:
    report = evaluate_report(sample_release, run["path"], tmp_path / "report.json")
    rows, message = space_scores(sample_release, run, run["manifest"])
    assert_table_is_the_reports(rows, report)
    # Built into the run: the even-indexed images with gold are answered with their gold box.
    mAP30 = next(row for row in rows if row[:2] == ["localization", "mAP@30 (%)"])[2]
    assert mAP30 == f"{100 * run['hits'] / run['n_images']:.1f}" and run["hits"] > 0
    assert report["notices"][0].startswith("notice: NOT THE REAL DATA")
    assert_notices_first(message, report["notices"])
    assert "no run manifest given" not in message


def test_the_metric_space_without_the_manifest_says_so_first_then_the_reports_notices(
    sample_release: Path, run: dict[str, Any], tmp_path: Path
) -> None:
    report = evaluate_report(sample_release, run["alone"], tmp_path / "report.json")
    rows, message = space_scores(sample_release, run, "")
    assert_table_is_the_reports(rows, report)  # the file alone, as nova evaluate scores it
    mAP30 = next(row for row in rows if row[:2] == ["localization", "mAP@30 (%)"])[2]
    assert mAP30 == "0.0"  # no bare list is read without the prompt on record
    assert message.startswith("warning: no run manifest given")
    from novabench.spaces.run_file import manifest_missing_line

    missing = manifest_missing_line(report)
    assert f"its {run['n_box_answers']} raw box answers" in missing
    assert_notices_first(message, report["notices"], markdown_text_with_code(missing))
    assert "NOT THE REAL DATA" in message and "ambiguous\\_convention" in message
    unread = [line for line in report["notices"] if "answers NOT READ" in line]
    assert unread and unread[0].startswith(
        f"localization: {run['n_box_answers']} of {run['n_box_answers']} answers NOT READ"
    )


def test_the_metric_space_refuses_a_manifest_it_cannot_use_in_one_line(
    sample_release: Path, run: dict[str, Any], tmp_path: Path
) -> None:
    from novabench.spaces import metric

    text = run["path"].read_text(encoding="utf-8")
    refused = [
        space_scores(sample_release, run, '{"prompts": '),
        space_scores(sample_release, run, '{"box_convention": 7}'),
        space_scores(sample_release, run, run["other_release_manifest"]),
        metric.score_inputs(
            MODULE_DIR,
            "localization",
            text,
            metric.REFERENCES_PASTED,
            "[]",
            manifest_text=run["manifest"],
        ),  # fmt: skip
    ]
    for rows, message in refused:
        assert rows == [] and message.startswith("**Could not score.**") and "\n" not in message
        assert "/tmp" not in message and str(tmp_path) not in message
    assert "the run manifest: not valid JSON" in refused[0][1]
    assert "the run manifest, field 'box\\_convention'" in refused[1][1]
    assert "the run was made on other data" in refused[2][1]
    assert "a run manifest applies only to a run file" in refused[3][1]


def test_the_explorer_reads_a_run_with_its_manifest_as_the_item_table_does(
    sample_release: Path, run: dict[str, Any]
) -> None:
    from novabench.report.items import build_item_tables
    from novabench.report.scoring import ScoringOptions
    from novabench.spaces import explorer

    manifest = run["path"].with_name("bare.jsonl.manifest.json")
    answers = explorer.read_model_answers(run["path"], run["release"], "bare.jsonl", manifest)
    options = ScoringOptions(tasks=("localization",), n_resamples=0, breakdowns=False)
    tables = build_item_tables(sample_release, run["path"], options)  # its manifest beside it
    table = {row.filename: row for row in tables.images.itertuples()}
    by_name = {image.filename: image for image in run["release"].images}
    checked = 0
    for filename, boxes in answers.boxes.items():
        image = by_name[filename]
        if not image.boxes:
            continue
        cell = explorer._slice_iou_cell(answers, image)
        assert cell == f"{table[filename].best_iou:.2f}", filename
        checked += 1
    assert checked == sum(1 for image in run["release"].images if image.boxes) - 2
    assert sum(row.hit_30 for row in table.values()) == run["hits"]  # the hits are real
    assert answers.notices == []  # the run's own reading: nothing left unread


def test_the_explorer_without_the_manifest_says_why_a_slice_has_no_iou(
    sample_release: Path, run: dict[str, Any]
) -> None:
    from novabench.spaces import explorer

    answers = explorer.read_model_answers(run["path"], run["release"], "bare.jsonl")
    assert answers.notices[0].startswith("warning: no run manifest given")
    assert any("answers NOT READ" in line for line in answers.notices)
    by_name = {image.filename: image for image in run["release"].images}
    answered = next(
        name
        for name in by_name
        if by_name[name].boxes and name not in (run["no_line"], run["failed"])
    )
    cells = {
        name: explorer._slice_iou_cell(answers, by_name[name])
        for name in (answered, run["no_line"], run["failed"])
    }
    assert cells == {
        answered: "answer not readable (ambiguous\\_convention)",
        run["no_line"]: "no line",
        run["failed"]: "no answer (the model call failed)",
    }
    status = explorer.upload_status_text(answers)
    assert status.startswith("**warning: no run manifest given")
    assert status.index("answers NOT READ") < status.index("Loaded **bare.jsonl**")


def test_the_explorer_tells_an_unreadable_diagnosis_from_no_line(
    sample_release: Path, run: dict[str, Any]
) -> None:
    from novabench.spaces import explorer

    manifest = run["path"].with_name("bare.jsonl.manifest.json")
    answers = explorer.read_model_answers(run["path"], run["release"], "bare.jsonl", manifest)
    cases = {case.case_id: case for case in run["release"].cases()}
    shown = {
        case_id: explorer.case_markdown(cases[case_id], answers)
        for case_id in (run["unreadable_case"], run["no_line_case"])
    }
    assert "diagnoses (bare.jsonl).** answer not readable (empty)" in shown[run["unreadable_case"]]
    assert "diagnoses (bare.jsonl).** no line" in shown[run["no_line_case"]]


def _running_manifest(run: dict[str, Any]) -> str:
    """The run's manifest as a `nova run` still at work (or SIGKILLed) leaves it."""
    return json.dumps({**json.loads(run["manifest"]), "status": "running"})


def test_the_metric_space_names_the_uploaded_file_and_never_calls_its_writer_killed(
    sample_release: Path, run: dict[str, Any]
) -> None:
    """user15: the notices said `predictions.jsonl ... its writer ended, e.g. killed`."""
    from novabench.spaces import metric

    rows, message = metric.score_inputs(
        MODULE_DIR, "localization", run["path"].read_text(encoding="utf-8"),
        metric.REFERENCES_FROM_DATA, "", n_resamples=0, data_source=str(sample_release),
        manifest_text=_running_manifest(run), predictions_name="qwen-run.jsonl",
    )  # fmt: skip
    assert rows
    assert "qwen-run.jsonl is not finished (no end record)" in message
    assert "predictions.jsonl" not in message and "killed" not in message


def test_the_metric_space_names_the_upload_in_a_refusal_too(
    sample_release: Path, run: dict[str, Any]
) -> None:
    from novabench.spaces import metric

    rows, message = metric.score_inputs(
        MODULE_DIR, "localization", '{"filename": "case9999_001.png", "boxes": []}\n',
        metric.REFERENCES_FROM_DATA, "", n_resamples=0, data_source=str(sample_release),
        predictions_name="qwen-run.jsonl",
    )  # fmt: skip
    assert rows == [] and "qwen-run.jsonl" in message and "predictions.jsonl" not in message


def test_the_explorer_names_the_uploaded_file_and_never_calls_its_writer_killed(
    sample_release: Path, run: dict[str, Any], tmp_path: Path
) -> None:
    from novabench.spaces import explorer

    manifest = tmp_path / "bare.jsonl.manifest.json"  # the upload's own manifest
    manifest.write_text(_running_manifest(run), encoding="utf-8")
    answers = explorer.read_model_answers(run["path"], run["release"], "bare.jsonl", manifest)
    shown = "\n".join(answers.notices)
    assert "bare.jsonl is not finished (no end record)" in shown
    assert "predictions.jsonl" not in shown and "killed" not in shown


def test_the_metric_space_names_its_own_setting_not_the_commands_flag(
    sample_release: Path, run: dict[str, Any]
) -> None:
    """user15: its notices said "read by --box-convention protocol", a flag it does not have."""
    from novabench.spaces import explorer

    rows, message = space_scores(sample_release, run, "")
    assert "box-convention" not in message
    assert 'read by box\\_convention "protocol" if the prompt asked' in message
    assert '"box\\_convention" in the run manifest box' in message
    answers = explorer.read_model_answers(run["path"], run["release"], "bare.jsonl")
    shown = "\n".join(answers.notices)
    assert "box-convention" not in shown
    assert '"box_convention" in the run manifest uploaded' in shown
