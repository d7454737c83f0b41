"""The leaderboard ranks only what it can trust: values checked, copies and edits refused.

Found by a new user (board8): a lexicon report hand-edited to ``top1`` = 0.95 was ranked
first while its pinned tables still gave 5 %; ``"0.9"`` (a string) and 1.7 were shown and
ranked; a copied report was a second model; a partial run looked like a full one.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from novabench.cli import main
from novabench.errors import NovaInputError
from novabench.report.leaderboard import (
    build_leaderboard,
    leaderboard_csv,
    render_leaderboard_markdown,
    render_leaderboard_text,
)
from tests.report.board_edits import manifest_of_cut_run
from tests.report.contract_tables import cases_table, images_table, report_dict, write_items
from tests.report.test_board_more_keys import with_older_tables
from tests.report.test_board_user12 import without_rescoring

FAST = ["--exclude", "BERTScore-F1", "--exclude", "METEOR", "--bootstrap", "20", "-q"]


def evaluate(release: Path, predictions: Path, out: Path, *options: str) -> None:
    args = ["evaluate", "--data", str(release), "--predictions", str(predictions)]
    assert main([*args, "--out", str(out), *FAST, *options]) == 0


def one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("nova leaderboard: error:")
    return lines[0]


@pytest.fixture(scope="module")
def scored(
    sample_release: Path, sample_floor_run: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Path]:
    """The floor run scored offline on diagnosis (top1-lexicon) and localisation, with tables;
    and the same run cut to its first 3 localisation answers, scored in full and answered-only."""
    folder = tmp_path_factory.mktemp("scored")
    reports = {}
    for name, task in (("diagnosis", "diagnosis"), ("localization", "localization")):
        reports[name] = folder / f"{name}.json"
        evaluate(
            sample_release,
            sample_floor_run,
            reports[name],
            "--task",
            task,
            "--items",
            str(folder / f"{name}-items"),
        )
    lines = sample_floor_run.read_text(encoding="utf-8").splitlines()
    partial = [line for line in lines if json.loads(line)["task"] == "localization"][:3]
    cut = folder / "cut.jsonl"
    cut.write_text("\n".join(partial) + "\n", encoding="utf-8")
    manifest_of_cut_run(sample_floor_run, cut)
    for name, options in (("partial", ()), ("partial-answered", ("--answered-only",))):
        reports[name] = folder / f"{name}.json"
        evaluate(sample_release, cut, reports[name], "--task", "localization", *options)
    return reports


def copied(source: Path, name: str, edit: Any = None) -> Path:
    """A copy of a report beside its own (its tables resolve), edited by ``edit``."""
    report = json.loads(source.read_text(encoding="utf-8"))
    if edit is not None:
        edit(report)
    path = source.parent / name
    path.write_text(json.dumps(report), encoding="utf-8")
    return path


# 1. The values ranked are the values the pinned tables give.


def test_a_lexicon_report_edited_into_a_judged_top1_is_refused(
    scored: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    lexicon = scored["diagnosis"]
    stated = json.loads(lexicon.read_text())["tasks"]["diagnosis"]["metrics"]["top1-lexicon"]

    def judged(report: dict) -> None:  # the paper's keys and a judged report's matcher block
        diagnosis = report["tasks"]["diagnosis"]
        metrics = diagnosis["metrics"]
        metrics["top1"], metrics["top5"] = 0.95, 0.97
        del metrics["top1-lexicon"], metrics["top5-lexicon"]
        diagnosis["confidence_intervals"] = {}
        metrics["matcher"] = "LLM case judge gpt-4o at http://127.0.0.1:9/v1 (nova-case-judge-2)"
        metrics["match_rule"] = "case-judge"

    edited = copied(lexicon, "edited.json", judged)
    capsys.readouterr()
    assert main(["leaderboard", str(edited), "--bootstrap", "20"]) == 2
    message = one_error_line(capsys)
    assert str(edited) in message and "tasks.diagnosis.metrics.top1" in message
    assert "holds top1-lexicon, not top1" in message  # the column its pinned tables hold
    assert stated < 0.95


def test_a_stated_value_its_tables_do_not_give_is_refused_with_both_values(
    scored: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    source = scored["localization"]
    truth = json.loads(source.read_text())["tasks"]["localization"]["metrics"]["mAP@30"]

    def inflated(report: dict) -> None:
        report["tasks"]["localization"]["metrics"]["mAP@30"] = 0.95
        report["tasks"]["localization"]["confidence_intervals"]["mAP@30"] = [0.9, 1.0]

    edited = copied(source, "inflated.json", inflated)
    capsys.readouterr()
    assert main(["leaderboard", str(edited), "--bootstrap", "20"]) == 2
    message = one_error_line(capsys)
    assert str(edited) in message and "tasks.localization.metrics.mAP@30" in message
    assert "0.95" in message and repr(truth) in message


def test_values_of_reports_without_tables_are_said_to_be_taken_as_stated_once(
    tmp_path: Path,
) -> None:
    """The warning said it, and an older note said it again at the end of every output."""
    from novabench.report.leaderboard import render_leaderboard_html

    paths = []
    for name, hits in (("a", 0.5), ("b", 0.25)):
        paths.append(tmp_path / f"{name}.json")
        paths[-1].write_text(json.dumps(report_dict(name, hit_30=hits)), encoding="utf-8")
    board = build_leaderboard([json.loads(p.read_text()) for p in paths], paths)
    [warning] = [line for line in board["warnings"] if "no per-item tables" in line]
    assert "taken as stated" in warning and str(paths[0]) in warning
    assert not [note for note in board["notes"] if "per-item tables" in note]
    outputs = {
        "terminal": render_leaderboard_text(board),
        "markdown": render_leaderboard_markdown(board),
        "html": render_leaderboard_html(board),
        "csv": leaderboard_csv(board),
    }
    for name, text in outputs.items():
        assert text.count("taken as stated") == (0 if name == "csv" else 1), name
    # The ranks of such reports follow their point estimates: each task's method says so.
    assert "ties cannot be assessed" in board["ranking"]["localization"]["method"]


# 2. Values a board cannot show are refused, naming the report and field.


def _rewritten(path: Path, edit: Any) -> Path:
    report = json.loads(path.read_text())
    edit(report["tasks"]["localization"])
    path.write_text(json.dumps(report), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("edit", "field", "said"),
    [
        (
            lambda t: t["metrics"].update({"hit@30": "0.9"}),
            "metrics.hit@30",
            "'0.9' is not a number",
        ),
        (lambda t: t["metrics"].update({"hit@30": 1.7}), "metrics.hit@30", "not a fraction"),
        (
            lambda t: t["metrics"].update({"hit@30": float("inf")}),
            "metrics.hit@30",
            "not a finite number",
        ),
        (
            lambda t: t["confidence_intervals"].update({"hit@30": [0.9]}),
            "confidence_intervals.hit@30",
            "not an interval",
        ),
        (
            lambda t: t["confidence_intervals"].update({"hit@30": [0.7, 0.3]}),
            "confidence_intervals.hit@30",
            "low end above high end",
        ),
        (
            lambda t: t["confidence_intervals"].update({"hit@30": [0.3, None]}),
            "confidence_intervals.hit@30",
            "not an interval of two fractions",
        ),
    ],
)
def test_a_value_the_board_cannot_show_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: Any, field: str, said: str
) -> None:
    # report_dict: hit@30 0.5 with the interval [0.3, 0.7].
    good = tmp_path / "good.json"
    good.write_text(json.dumps(report_dict("good", hit_30=0.25)), encoding="utf-8")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(report_dict("bad", hit_30=0.5)), encoding="utf-8")
    _rewritten(bad, edit)
    assert main(["leaderboard", str(good), str(bad)]) == 2
    message = one_error_line(capsys)
    assert str(bad) in message and f"tasks.localization.{field}" in message and said in message


def test_a_value_outside_its_own_interval_is_shown_not_refused(tmp_path: Path) -> None:
    # A percentile interval can miss its own value (a statistic that is no mean, or few
    # resamples): legitimate, so the board shows it; the ranking metric is checked against
    # the item tables instead.
    report = report_dict("skewed", hit_30=0.5)
    report["tasks"]["localization"]["metrics"]["COCO-AP@30"] = 0.75
    report["tasks"]["localization"]["confidence_intervals"]["COCO-AP@30"] = [0.3, 0.7]
    board = build_leaderboard([report], ["skewed.json"])
    shown = board["models"][0]["tasks"]["localization"]
    assert shown["metrics"]["COCO-AP@30"] == 0.75 and shown["ci"]["COCO-AP@30"] == [0.3, 0.7]


def test_an_interval_nothing_defined_is_no_interval(tmp_path: Path) -> None:
    report = report_dict("a", hit_30=0.5)
    report["tasks"]["localization"]["confidence_intervals"]["hit@30"] = [None, None]
    board = build_leaderboard([report], ["a.json"])
    assert board["models"][0]["tasks"]["localization"]["ci"]["hit@30"] == [None, None]


# 3. One evaluation is one row.


def test_a_copied_report_is_refused_naming_both_files(
    scored: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = scored["localization"]
    copy = copied(source, "localization-copy.json")
    capsys.readouterr()
    assert main(["leaderboard", str(source), str(copy), "--bootstrap", "20"]) == 2
    message = one_error_line(capsys)
    assert str(source) in message and str(copy) in message and "run id" in message


def test_a_copy_with_another_run_id_is_still_refused_by_its_pinned_tables(
    tmp_path: Path,
) -> None:
    entry = write_items(tmp_path / "items", images_table([0.6, 0.1]), cases_table([True]))
    a = report_dict("a", hit_30=0.5, top1=1.0, items=entry)
    b = json.loads(json.dumps(a))
    b["items"]["run_id"] = "f" * 32
    with pytest.raises(
        NovaInputError,
        match=r"a\.json and .*b\.json are one evaluation \(the same pinned images.parquet, SHA-256",
    ):
        build_leaderboard([a, b], [tmp_path / "a.json", tmp_path / "b.json"])


# 4. Coverage is said before the tables.


def test_a_partial_run_is_warned_about_with_its_coverage_before_the_tables(
    scored: dict[str, Path],
) -> None:
    paths = [scored["localization"], scored["partial"], scored["partial-answered"]]
    board = build_leaderboard([json.loads(p.read_text()) for p in paths], paths, n_resamples=20)
    n_images = json.loads(paths[0].read_text())["tasks"]["localization"]["coverage"]["items"]
    full, answered = [line for line in board["warnings"] if "answered only part" in line]
    assert str(paths[1]) in full and f"localization 3/{n_images} answered" in full
    assert "scored as no prediction" in full
    assert str(paths[2]) in answered and "left out" in answered
    assert not any(str(paths[0]) + " " in line for line in board["warnings"])  # complete
    text = render_leaderboard_text(board)
    assert text.index(full) < text.index("Overview")


# 5. Marks of a board holding both readings of Top-1.


def _readings_board(tmp_path: Path) -> dict:
    """Lexicon reports a (1 of 4 cases) and c (2 of 4), the same matcher, and judged b."""
    paths, reports = [], []
    for name, hits, judged in (("a", 1, False), ("b", 2, True), ("c", 2, False)):
        cases = cases_table([i < hits for i in range(4)], reading="" if judged else "-lexicon")
        entry = write_items(tmp_path / f"{name}-items", images_table([0.6, 0.1]), cases)
        report = report_dict(name, hit_30=0.5, top1=hits / 4, items=entry, with_breakdowns=False)
        report["tasks"]["localization"]["confidence_intervals"] = {}
        if not judged:
            report["tasks"]["diagnosis"]["metrics"] = {
                "top1-lexicon": hits / 4,
                "top5-lexicon": hits / 4,
                "matcher": "lexicon matcher (nova-diagnosis-lexicon-5, 944 entries)",
                "match_rule": "matcher",
            }
            report["tasks"]["diagnosis"]["confidence_intervals"] = {}
        paths.append(tmp_path / f"{name}.json")
        paths[-1].write_text(json.dumps(report), encoding="utf-8")
        reports.append(report)
    return build_leaderboard(reports, paths, n_resamples=20)


def test_the_published_top1_stays_marked_beside_a_judged_top1(tmp_path: Path) -> None:
    markdown = render_leaderboard_markdown(_readings_board(tmp_path))
    assert "| diagnosis | top1 (not comparable with this board's top1-lexicon) |" in markdown


def test_keys_held_by_reports_of_one_matcher_are_not_marked(tmp_path: Path) -> None:
    board = _readings_board(tmp_path)
    assert board["setting_differences"] == []
    markdown = render_leaderboard_markdown(board)
    assert "settings differ" not in markdown
    assert "| top1-lexicon (%) |" in markdown


def test_csv_titles_are_key_and_unit_only_with_the_marks_in_notes(tmp_path: Path) -> None:
    table = list(csv.DictReader(io.StringIO(leaderboard_csv(_readings_board(tmp_path)))))
    titles = list(table[0])
    assert "diagnosis rank" in titles and "diagnosis top1-lexicon (%)" in titles
    assert not [title for title in titles if "differ" in title or "ranked" in title]
    assert table[0]["diagnosis rank"] == ""
    assert "readings" in table[0]["diagnosis note"]


def test_the_overview_says_not_ranked_where_a_task_is_left_unranked(tmp_path: Path) -> None:
    lines = render_leaderboard_markdown(_readings_board(tmp_path)).splitlines()
    overview = lines[lines.index("## Overview") :]
    header = next(line for line in overview if line.startswith("| model"))
    column = [cell.strip() for cell in header.strip("|").split("|")].index("diagnosis rank")
    rows = [line for line in overview[2:] if line.startswith("| ") and "---" not in line][1:]
    assert [[c.strip() for c in row.strip("|").split("|")][column] for row in rows[:3]] == [
        "not ranked"
    ] * 3


# 6. The METEOR stand-in is warned about as the others.


def test_the_meteor_stand_in_is_among_the_warnings(tmp_path: Path) -> None:
    note = (
        "METEOR not computed: the nltk WordNet corpus is not installed, so METEOR-exact+stem "
        "is given instead"
    )
    reports = []
    for name in ("a", "b"):
        report = report_dict(name, hit_30=0.5 if name == "a" else 0.25)
        report["tasks"]["captioning"] = {
            "metrics": {"ROUGE-L": 0.2, "METEOR-exact+stem": 0.19, "METEOR_variant": "exact+stem"},
            "confidence_intervals": {},
            "notes": [note],
            "coverage": {"items": 4, "answered": 4, "missing": 0, "errors": 0, "parse_status": {}},
        }
        reports.append(report)
    board = build_leaderboard(reports, ["a.json", "b.json"])
    assert [line for line in board["warnings"] if "METEOR" in line] == [
        f"warning: captioning: {note}"
    ]


# 7. A swapped table names its real cause.


def test_a_changed_table_is_refused_for_its_sha256_not_a_run_id(
    scored: dict[str, Path], tmp_path: Path
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from novabench.report.items import read_item_tables

    report_path = tmp_path / "report.json"
    items = tmp_path / "localization-items"  # where the report's items entry points
    shutil.copytree(scored["localization"].parent / "localization-items", items)
    report = json.loads(scored["localization"].read_text())
    report_path.write_text(json.dumps(report), encoding="utf-8")
    table = pq.read_table(items / "images.parquet")
    # Every image a hit; the table's metadata (its run id) kept, as an edit would.
    at = table.schema.get_field_index("best_iou")
    swapped = table.set_column(at, "best_iou", pa.array([1.0] * table.num_rows))
    pq.write_table(swapped.replace_schema_metadata(table.schema.metadata), items / "images.parquet")
    with pytest.raises(NovaInputError) as raised:
        read_item_tables(report, report_path)
    message = str(raised.value)
    assert "SHA-256" in message and report["items"]["run_id"] not in message


# 8. Neighbours are named as the board names reports.


def test_neighbours_name_the_reports_not_only_the_models(tmp_path: Path) -> None:
    paths, reports = [], []
    for name, hits in (("a", 2), ("b", 1)):
        entry = write_items(
            tmp_path / f"{name}-items",
            images_table([0.6] * hits + [0.1] * (2 - hits)),
            cases_table([True]),
        )
        report = report_dict("baseline:floor", hit_30=hits / 2, top1=1.0, items=entry)
        report["tasks"]["localization"]["confidence_intervals"] = {}
        paths.append(tmp_path / f"{name}.json")
        reports.append(report)
    board = build_leaderboard(reports, paths, n_resamples=20)
    [pair] = board["ranking"]["localization"]["neighbours"]
    assert (pair["a"], pair["b"]) == ("baseline:floor", "baseline:floor")
    assert (pair["a_report"], pair["b_report"]) == (str(paths[0]), str(paths[1]))


# 6. Found by a second new user (board9).


def _answered_only_pair(tmp_path: Path) -> list[Path]:
    """Two --answered-only reports whose localisation tables hold different images (2 and 3);
    their diagnosis tables cover the same two cases."""
    paths = []
    for name, ious, hits, top1 in (
        ("a", [0.6, 0.1], 0.5, [True, False]),
        ("b", [0.6, 0.6, 0.1], 2 / 3, [False, True]),
    ):
        folder = tmp_path / name
        folder.mkdir()
        entry = write_items(folder / "items", images_table(ious), cases_table(top1))
        report = report_dict(name, hit_30=hits, top1=0.5, items=entry)
        report["answered_only"] = True
        paths.append(folder / "report.json")
        paths[-1].write_text(json.dumps(report), encoding="utf-8")
    return paths


def test_answered_only_reports_of_different_items_leave_the_task_unranked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = _answered_only_pair(tmp_path)
    out = tmp_path / "board.md"
    assert main(["leaderboard", *map(str, paths), "--markdown", str(out), "-q"]) == 0
    board = build_leaderboard([json.loads(p.read_text()) for p in paths], paths, n_resamples=20)
    localization = board["ranking"]["localization"]
    assert localization["ranked"] is False
    assert str(paths[0]) in localization["reason"] and str(paths[1]) in localization["reason"]
    assert all(m["tasks"]["localization"]["rank"] is None for m in board["models"])
    assert board["ranking"]["diagnosis"]["ranked"] is True  # same cases: ranked as usual
    assert "scored different localization items" in out.read_text(encoding="utf-8")


def test_the_meteor_warning_comes_before_the_stand_ins_as_in_nova_evaluate() -> None:
    note = (
        "METEOR not computed: the nltk WordNet corpus is not installed, so METEOR-exact+stem "
        "is given instead"
    )
    report = report_dict("a", hit_30=0.5)
    diagnosis = report["tasks"]["diagnosis"]
    diagnosis["metrics"] = {"top1-lexicon": 0.25, "match_rule": "lexicon"}
    diagnosis["confidence_intervals"] = {}
    report["tasks"]["captioning"] = {
        "metrics": {"ROUGE-L": 0.2, "METEOR-exact+stem": 0.19, "METEOR_variant": "exact+stem"},
        "confidence_intervals": {},
        "notes": [note],
    }
    warnings = build_leaderboard([report], ["a.json"])["warnings"]
    meteor = warnings.index(f"warning: captioning: {note}")
    stand_in = next(i for i, line in enumerate(warnings) if "top1-lexicon" in line)
    assert meteor < stand_in


def test_a_task_only_one_of_two_reports_holds_says_so_not_one_model_only() -> None:
    a = report_dict("a", hit_30=0.5)
    b = report_dict("b", hit_30=0.25)
    a["tasks"]["captioning"] = {"metrics": {"ROUGE-L": 0.2}, "confidence_intervals": {}}
    b["tasks"]["captioning"] = {"metrics": {"BLEU-4": 0.1}, "confidence_intervals": {}}
    board = build_leaderboard([a, b], ["a.json", "b.json"])
    text = render_leaderboard_text(board)
    assert "Not ranked: only one report holds ROUGE-L (a.json)" in text
    assert "One model only" not in text


def test_a_copy_without_its_tables_is_refused_naming_both_files(
    scored: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    source = scored["localization"]
    copy = copied(source, "no-items-copy.json", lambda report: report.pop("items"))
    capsys.readouterr()
    assert main(["leaderboard", str(source), str(copy), "--bootstrap", "20"]) == 2
    message = one_error_line(capsys)
    assert str(source) in message and str(copy) in message
    assert "same value and CI for every" in message


def test_two_runs_with_tables_and_equal_values_are_both_ranked(
    scored: dict[str, Path], sample_release: Path, sample_floor_run: Path
) -> None:
    # A deterministic model run twice: the same answers (other timings), equal values, but
    # two runs, each evaluation with its own run id and tables, so the board ranks both (a
    # tie), as any two genuine evaluations. (One run file scored twice is refused.)
    source = scored["localization"]
    again = source.parent / "rerun.json"
    rerun = source.parent / "rerun.jsonl"
    lines = [json.loads(line) for line in sample_floor_run.read_text().splitlines()]
    rerun.write_text("".join(json.dumps({**line, "latency_s": 0.5}) + "\n" for line in lines))
    evaluate(
        sample_release,
        rerun,
        again,
        "--task",
        "localization",
        "--items",
        str(source.parent / "rerun-items"),
    )
    reports = [json.loads(path.read_text()) for path in (source, again)]
    board = build_leaderboard(reports, [source, again], n_resamples=20)
    assert [model["tasks"]["localization"]["rank"] for model in board["models"]] == [1, 1]


def test_reports_scoring_nothing_alike_are_no_copies() -> None:
    empty = [report_dict(name, hit_30=0.0) for name in ("a", "b")]
    for report in empty:
        report.pop("items", None)
        for section in report["tasks"].values():
            section["metrics"] = {key: 0.0 for key in section["metrics"]}
            section["confidence_intervals"] = {key: [0.0, 0.0] for key in section["metrics"]}
    board = build_leaderboard(empty, ["a.json", "b.json"])
    assert [model["path"] for model in board["models"]] == ["a.json", "b.json"]


def test_reports_without_tables_are_warned_about_first_and_their_values_marked(
    tmp_path: Path,
) -> None:
    a, b = report_dict("a", hit_30=0.5), report_dict("b", hit_30=0.25)
    board = build_leaderboard([a, b], ["a.json", "b.json"])
    [warning] = [line for line in board["warnings"] if "no per-item tables" in line]
    assert "a.json, b.json" in warning and "unverified" in warning and "†" in warning
    text = render_leaderboard_text(board)
    assert text.index(warning) < text.index("Overview")
    assert "50.0 [30.0, 70.0] †" in text  # hit@30 of a, as stated, marked


@pytest.mark.parametrize("resamples", [100, 1000])
def test_a_mean_outside_its_own_interval_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], resamples: int
) -> None:
    # The second user's edit: top1-lexicon set to 0.99, its interval left at [18.2, 72.7] %.
    report = report_dict("edited", hit_30=0.5)
    report["bootstrap"]["n_resamples"] = resamples
    report["tasks"]["diagnosis"]["metrics"] = {"top1-lexicon": 0.99, "match_rule": "matcher"}
    report["tasks"]["diagnosis"]["confidence_intervals"] = {"top1-lexicon": [0.182, 0.727]}
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(report), encoding="utf-8")
    assert main(["leaderboard", str(path)]) == 2
    message = one_error_line(capsys)
    assert str(path) in message and "tasks.diagnosis.metrics.top1-lexicon" in message
    assert "outside its own interval" in message


def test_a_mean_outside_an_interval_of_few_resamples_is_shown() -> None:
    # Under 100 resamples a percentile interval may miss even a mean (nova evaluate warns).
    report = report_dict("few", hit_30=0.5)
    report["bootstrap"]["n_resamples"] = 20
    report["tasks"]["localization"]["confidence_intervals"]["hit@30"] = [0.1, 0.45]
    board = build_leaderboard([report], ["few.json"])
    assert board["models"][0]["tasks"]["localization"]["ci"]["hit@30"] == [0.1, 0.45]


@pytest.mark.parametrize(
    ("task", "key"),
    [("diagnosis", "top5-lexicon"), ("localization", "mAP@50"), ("localization", "hit@50")],
)
def test_every_key_the_tables_hold_is_checked_not_only_the_ranking_one(
    scored: dict[str, Path], capsys: pytest.CaptureFixture[str], task: str, key: str
) -> None:
    source = scored[task]
    truth = json.loads(source.read_text())["tasks"][task]["metrics"][key]

    def inflated(report: dict) -> None:
        report["tasks"][task]["metrics"][key] = 0.99
        report["tasks"][task]["confidence_intervals"].pop(key, None)

    edited = copied(source, f"inflated-{key}.json", inflated)
    capsys.readouterr()
    assert main(["leaderboard", str(edited), "--bootstrap", "20"]) == 2
    message = one_error_line(capsys)
    assert str(edited) in message and f"tasks.{task}.metrics.{key}" in message
    assert "0.99" in message and repr(truth) in message


def test_keys_the_tables_cannot_recompute_are_noted_as_taken_as_stated(
    scored: dict[str, Path],
) -> None:
    paths = [scored["localization"]]
    # Tables written before the board scored their boxes again (no predicted_scores): their
    # COCO-AP, ACC50, TP30, FP30, FNR cannot be recomputed (board13b).
    older = with_older_tables(paths[0], "older", without_rescoring)
    board = build_leaderboard([older], paths, n_resamples=20)
    [note] = [line for line in board["warnings"] if "taken as stated" in line]
    assert str(paths[0]) in note and "COCO-AP@30" in note and "mAP@30" not in note
    # Those keys are marked where shown; the keys the tables checked are not (user12).
    entry = board["models"][0]["tasks"]["localization"]
    assert entry["verified"] is False and "COCO-AP@30" in entry["taken_as_stated"]
    text = render_leaderboard_text(board)
    table = text.split("\nlocalization\n", 1)[1]
    (row,) = [line for line in table.splitlines() if line.startswith("baseline:floor ")]
    assert row.count("†") == len(entry["taken_as_stated"])


def test_coverage_is_counted_from_the_tables_when_the_report_lost_it(tmp_path: Path) -> None:
    paths = _answered_only_pair(tmp_path)
    reports = [json.loads(p.read_text()) for p in paths]
    for report in reports:  # the second user deleted tasks.*.coverage
        for section in report["tasks"].values():
            del section["coverage"]
    board = build_leaderboard(reports, paths, n_resamples=20)
    [a_line] = [line for line in board["warnings"] if line.startswith(f"warning: {paths[0]} ")]
    # a's tables: 2 of the release's 4 images, 2 of its 4 cases, left out (--answered-only).
    assert "localization 2/4 answered" in a_line and "diagnosis 2/4 answered" in a_line
    assert "left out" in a_line


def test_coverage_neither_recorded_nor_countable_is_said_to_be_unknown() -> None:
    report = report_dict("a", hit_30=0.5)
    del report["tasks"]["diagnosis"]["coverage"]
    warnings = build_leaderboard([report], ["a.json"])["warnings"]
    [line] = [line for line in warnings if "unknown" in line]
    assert "a.json" in line and "diagnosis" in line and "localization" not in line


def test_the_csv_carries_the_warnings_per_row_and_still_reads_with_pandas(
    scored: dict[str, Path], sample_release: Path, tmp_path: Path
) -> None:
    import pandas as pd

    paths = [scored["localization"], scored["partial"]]  # with tables; without, 3 answered
    board = build_leaderboard([json.loads(p.read_text()) for p in paths], paths, n_resamples=20)
    path = tmp_path / "board.csv"
    path.write_text(leaderboard_csv(board), encoding="utf-8")
    table = pd.read_csv(path, keep_default_na=False).set_index("model")
    n_images = json.loads(paths[0].read_text())["tasks"]["localization"]["coverage"]["items"]
    full, partial = table.iloc[0], table.iloc[1]
    assert full["data"] == "synthetic sample"
    # every key recomputed from the tables, COCO-AP, ACC50... from their boxes (board13b)
    assert full["verified"] == "yes"
    assert full["localization coverage"] == f"{n_images}/{n_images}"
    assert (partial["verified"], partial["localization coverage"]) == ("no", f"3/{n_images}")
    assert [row for row in table.index if row.startswith("human")]  # raters keep their rows


def test_a_report_stating_the_boards_fingerprint_but_another_size_is_refused(
    scored: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """user19: a 40-case report without tables, its fingerprint edited to the board's, was
    ranked first above the 906-image one, flagged only "unverified", though its own n_images
    and n_cases contradicted the release that fingerprint names."""
    source = scored["localization"]
    data = json.loads(source.read_text())["data"]

    def smaller(report: dict) -> None:
        del report["items"]
        report["data"]["n_images"] = data["n_images"] - 7
        report["data"]["n_cases"] = data["n_cases"] - 2
        report["tasks"]["localization"]["coverage"]["items"] = data["n_images"] - 7
        report["predictions"]["manifests"][0]["model"] = "other-model"
        report["predictions"]["sha256"] = ["0" * 64]  # another model's answers
        localization = report["tasks"]["localization"]
        localization["metrics"] = {
            key: value / 2 if isinstance(value, float) else value
            for key, value in localization["metrics"].items()
        }
        localization["confidence_intervals"] = {}

    edited = copied(source, "smaller.json", smaller)
    capsys.readouterr()
    assert main(["leaderboard", str(source), str(edited), "--bootstrap", "20"]) == 2
    message = one_error_line(capsys)
    assert f"the reports state one release (fingerprint {data['fingerprint']})" in message
    assert f"{edited} {data['n_images'] - 7} images, {data['n_cases'] - 2} cases" in message
    assert "data.n_images" in message


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda data, tasks: data.pop("n_images"), "data.n_images"),
        (lambda data, tasks: data.update(n_cases=None), "data.n_cases"),
        (lambda data, tasks: tasks["localization"]["coverage"].update(items=7), "coverage.items"),
    ],
    ids=["size-deleted", "size-null", "size-kept-coverage-edited"],
)
def test_a_reports_size_deleted_or_contradicted_by_its_coverage_is_refused(
    scored: dict[str, Path], capsys: pytest.CaptureFixture[str], edit: Any, field: str
) -> None:
    """user20: with n_images deleted or null, or set back to the board's while its own
    coverage counted another number of items, the edited report passed and ranked first."""
    source = scored["localization"]

    def edited_report(report: dict) -> None:
        del report["items"]
        report["predictions"]["sha256"] = ["0" * 64]
        report["predictions"]["manifests"][0]["model"] = "other-model"
        localization = report["tasks"]["localization"]
        localization["metrics"] = {
            key: value / 2 if isinstance(value, float) else value
            for key, value in localization["metrics"].items()
        }
        localization["confidence_intervals"] = {}
        edit(report["data"], report["tasks"])

    edited = copied(source, f"edited-{field}.json", edited_report)
    capsys.readouterr()
    assert main(["leaderboard", str(source), str(edited), "--bootstrap", "20"]) == 2
    message = one_error_line(capsys)
    assert str(edited) in message and field in message
