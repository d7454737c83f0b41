"""The offline proxies under their own keys in every output; old reports read by their matcher.

``top1`` / ``top5`` and ``ClinicalF1`` / ``ModalityF1`` / ``BinaryF1`` are the paper's keys:
the lexicon matcher and keyword extractor give ``top1-lexicon``..., a pair judge
``top1-pairwise``; nothing may show a proxy as the paper's figure or rank two readings
together: the leaderboard leaves such a task unranked, each value under its own key, and
ranks the others (issue 20).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

from novabench.cli import main
from novabench.errors import NovaInputError
from novabench.published import published_rows
from novabench.report.html import render_comparison_html, render_html
from novabench.report.leaderboard import (
    build_leaderboard,
    render_leaderboard_html,
    render_leaderboard_markdown,
    render_leaderboard_text,
)
from novabench.report.render import (
    comparison_first_lines,
    render_markdown,
    render_table,
    with_current_keys,
)
from tests.report.contract_tables import cases_table, images_table, report_dict, write_items

LEXICON_MATCHER = "lexicon matcher (nova-diagnosis-lexicon, 867 entries, fuzzy_threshold=0.88)"
PROXY_WARNING = "top1-lexicon, top5-lexicon are not the paper's top1, top5"
PROXY_WARNING_HTML = PROXY_WARNING.replace("'", "&#x27;")


def lexicon_report(model: str = "tiny-vlm", top1: float = 0.25, **options: Any) -> dict:
    """``report_dict`` as the lexicon matcher scores it today: the proxy keys."""
    report = report_dict(model, top1=top1, **options)
    diagnosis = report["tasks"]["diagnosis"]
    diagnosis["metrics"] = {
        "top1-lexicon": top1,
        "top5-lexicon": diagnosis["metrics"]["top5"],
        "matcher": LEXICON_MATCHER,
        "match_rule": "matcher",
    }
    # report_dict's CI, drawn from the tables when it has them, under the proxy's key.
    diagnosis["confidence_intervals"] = {"top1-lexicon": diagnosis["confidence_intervals"]["top1"]}
    return report


def old_lexicon_report(model: str = "old-vlm", top1: float = 0.25, **options: Any) -> dict:
    """A report written before the keys named their reading: the lexicon's Top-1 as ``top1``."""
    report = report_dict(model, top1=top1, **options)
    metrics = report["tasks"]["diagnosis"]["metrics"]
    metrics["matcher"] = LEXICON_MATCHER
    del metrics["match_rule"]
    return report


def headline_rows(page: str) -> list[str]:
    start = page.index('id="headline"')
    table = page[start : page.index("</table>", start)]
    return table.split("<tr>")[2:]


def test_terminal_and_markdown_warn_above_the_proxy_keys() -> None:
    report = lexicon_report(with_breakdowns=False, human=False)
    table = render_table(report)
    lines = table.splitlines()
    warning = next(i for i, line in enumerate(lines) if PROXY_WARNING in line)
    header = next(i for i, line in enumerate(lines) if line.startswith("task "))
    assert lines[warning].startswith("warning: diagnosis:") and warning < header
    assert "case judge" in lines[warning]  # how to get the paper's
    assert any(line.split()[:2] == ["diagnosis", "top1-lexicon"] for line in lines)
    assert not any(line.split()[:2] == ["diagnosis", "top1"] for line in lines)
    # The published Top-1 is shown, but marked as another quantity than this report's.
    assert "diagnosis top1 (not comparable with this report's top1-lexicon) (paper) Gemini" in table
    markdown = render_markdown(report)
    assert PROXY_WARNING in markdown and "| diagnosis | top1-lexicon |" in markdown
    assert "| diagnosis | top1 |" not in markdown


def test_markdown_gives_each_proxy_warning_its_own_paragraph() -> None:
    report = lexicon_report(with_breakdowns=False, human=False)
    report["tasks"]["captioning"] = {
        "metrics": {
            "ClinicalF1-lexicon": 0.3,
            "keyword_source": "extractor",
            "keyword_extractor": "lexicon (offline, nova-keyword-lexicon-5)",
        },
        "notes": [],
        "coverage": {"items": 4, "answered": 4, "missing": 0, "errors": 0},
    }
    lines = render_markdown(report).splitlines()
    warnings = [i for i, line in enumerate(lines) if line.startswith("**warning:")]
    assert len(warnings) >= 2  # captioning's and diagnosis's
    for at in warnings:  # a blank line after each, or Markdown runs them into one paragraph
        assert lines[at + 1] == "", lines[at : at + 2]


def test_a_case_judge_report_gets_no_proxy_warning() -> None:
    report = report_dict(with_breakdowns=False, human=False)  # top1/top5 by the case judge
    assert "are not the paper's" not in render_table(report) + render_markdown(report)
    assert "not comparable with this report" not in render_table(report)


def test_html_marks_the_stand_in_in_the_headline_and_in_read_first() -> None:
    page = render_html(lexicon_report(with_breakdowns=False, human=False))
    warnings = page[page.index('<div class="warnings"') : page.index('<nav class="toc">')]
    assert PROXY_WARNING_HTML in warnings
    rows = [row for row in headline_rows(page) if "<td>diagnosis</td>" in row]
    assert len(rows) == 2  # top1 and top5, each by its stand-in
    assert "<td>top1-lexicon<br>" in rows[0] and "in place of the paper's top1" in rows[0]
    # The paper's published Top-1 (22.1) beside it, said not to be comparable with it.
    assert "1 figure: 22.1" in rows[0] and "not comparable with top1-lexicon" in rows[0]
    assert "<td>top1</td>" not in page  # never relabelled


def test_published_rows_mark_figures_beside_a_stand_in() -> None:
    rows = published_rows(lexicon_report(with_breakdowns=False))
    top1 = [row for row in rows if row[0] == "diagnosis"]
    assert [row[1] for row in top1] == ["top1 (not comparable with this report's top1-lexicon)"]
    judged = published_rows(report_dict(with_breakdowns=False))
    assert [row[1] for row in judged if row[0] == "diagnosis"] == ["top1"]
    captioning = lexicon_report(with_breakdowns=False)
    captioning["tasks"]["captioning"] = {"metrics": {"ClinicalF1-lexicon": 0.3}}
    marked = [row[1] for row in published_rows(captioning) if row[0] == "captioning"]
    assert marked and set(marked) == {
        "ClinicalF1 (not comparable with this report's ClinicalF1-lexicon)"
    }


def test_comparison_says_its_keys_are_the_proxies() -> None:
    difference = {"a": 0.5, "b": 0.25, "difference": 0.25, "ci": [0.0, 0.5], "p_value": 0.04}
    comparison = {
        "bootstrap": {"confidence": 0.95, "n_resamples": 100, "seed": 0},
        "tasks": {"diagnosis": {"top1-lexicon": difference, "top5-lexicon": difference}},
        "a": {"predictions": {"paths": ["a.jsonl"]}},
        "b": {"predictions": {"paths": ["b.jsonl"]}},
    }
    lines = comparison_first_lines(comparison)
    assert any(PROXY_WARNING in line for line in lines)
    assert PROXY_WARNING_HTML in render_comparison_html(comparison)


def saved(tmp_path: Path, name: str, report: dict) -> Path:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(report), encoding="utf-8")
    return path


def test_leaderboard_ranks_on_the_reading_the_reports_hold(tmp_path: Path) -> None:
    paths = [
        saved(tmp_path, "a", lexicon_report("a", top1=0.25, with_breakdowns=False)),
        saved(tmp_path, "b", lexicon_report("b", top1=0.5, with_breakdowns=False)),
    ]
    board = build_leaderboard([json.loads(p.read_text()) for p in paths], paths)
    assert board["ranking"]["diagnosis"]["metric"] == "top1-lexicon"
    ranks = {m["model"]: m["tasks"]["diagnosis"]["rank"] for m in board["models"]}
    assert ranks == {"b": 1, "a": 2}
    markdown = render_leaderboard_markdown(board)
    assert "| diagnosis | top1 (not comparable with this board's top1-lexicon) |" in markdown
    assert PROXY_WARNING in render_leaderboard_text(board)


def one_judged_two_lexicon(tmp_path: Path) -> list[Path]:
    """A case-judged report (top1 50 %) and two lexicon reports (top1-lexicon 25 %, 50 %), with
    per-item tables, localisation hits 24, 23 and 10 of 40 images (mAP@30 60, 57.5, 25 %)."""
    paths = []
    for name, hits, top1, judged in (
        ("judged", 24, 0.5, True),
        ("lex-a", 23, 0.25, False),
        ("lex-b", 10, 0.5, False),
    ):
        ious = [0.6] * hits + [0.1] * (40 - hits)
        # Tables as nova evaluate writes them: hits giving the stated Top-1 (of 4 cases),
        # under the reading's own column.
        cases = cases_table([i < 4 * top1 for i in range(4)], reading="" if judged else "-lexicon")
        entry = write_items(tmp_path / f"{name}-items", images_table(ious), cases)
        make = report_dict if judged else lexicon_report
        paths.append(saved(tmp_path, name, make(name, top1=top1, hit_30=hits / 40, items=entry)))
    return paths


def test_two_readings_leave_only_that_task_unranked(tmp_path: Path) -> None:
    paths = one_judged_two_lexicon(tmp_path)
    board = build_leaderboard([json.loads(p.read_text()) for p in paths], paths, n_resamples=50)
    ranks = {m["model"]: m["tasks"]["diagnosis"]["rank"] for m in board["models"]}
    assert ranks == {"judged": None, "lex-a": None, "lex-b": None}
    # The other task is ranked as before. 24 and 23 hits differ on one image, which a resample
    # leaves out with probability (39/40)^40 ~ 0.36 > 2.5 %: the interval reaches 0, a tie;
    # 23 and 10 differ on 13 images, (27/40)^40 ~ 1e-7: separable.
    localization = {m["model"]: m["tasks"]["localization"]["rank"] for m in board["models"]}
    assert localization == {"judged": 1, "lex-a": 1, "lex-b": 3}
    assert board["ranking"]["localization"]["ranked"] is True
    rule = board["ranking"]["diagnosis"]
    assert rule["ranked"] is False and rule["metric"] is None and rule["neighbours"] == []
    assert rule["readings"] == {
        "top1": [str(paths[0])],
        "top1-lexicon": [str(p) for p in paths[1:]],
    }
    reason = rule["reason"]
    assert "\n" not in reason and "different readings" in reason
    assert all(str(path) in reason for path in paths)
    assert "nova evaluate" in reason and "--judge-mode" in reason  # how to make them comparable
    # Each value stays under its own key: the lexicon's 50 % is never shown as top1.
    values = {m["model"]: m["tasks"]["diagnosis"]["metrics"] for m in board["models"]}
    # Top-5 as the tables give it: cases_table's top5 hits are its top1 hits.
    assert values["lex-b"] == {"top1-lexicon": 0.5, "top5-lexicon": 0.5}
    assert values["judged"] == {"top1": 0.5, "top5": 0.5}


def _table_rows(lines: list[str], first: str) -> list[dict[str, str]]:
    """The Markdown table whose header starts with ``first``, as {column: cell} per row."""
    start = next(i for i, line in enumerate(lines) if line.startswith(first))
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return [dict(zip(rows[0], row)) for row in rows[2:]]


def test_the_overview_gives_each_reading_its_own_column(tmp_path: Path) -> None:
    paths = one_judged_two_lexicon(tmp_path)
    board = build_leaderboard([json.loads(p.read_text()) for p in paths], paths, n_resamples=50)
    lines = render_leaderboard_markdown(board).splitlines()
    overview = _table_rows(lines, "| model | localization mAP@30 (%)")
    assert list(overview[0]) == [
        "model",
        "localization mAP@30 (%)",
        "localization rank",
        "diagnosis top1 (%)",
        "diagnosis top1-lexicon (%)",
        "diagnosis rank",
    ]
    by_model = {row["model"]: row for row in overview}
    assert by_model["judged"]["diagnosis top1 (%)"].startswith("50.0")
    assert by_model["judged"]["diagnosis top1-lexicon (%)"] == ""
    assert by_model["lex-a"]["diagnosis top1 (%)"] == ""
    assert by_model["lex-a"]["diagnosis top1-lexicon (%)"].startswith("25.0")
    assert {row["diagnosis rank"] for row in overview} == {"not ranked"}
    assert [by_model[m]["localization rank"] for m in ("judged", "lex-a", "lex-b")] == [
        "1",
        "1",
        "3",
    ]
    # The task's table: blank, not n/a, under a reading a model does not hold; rows by reading.
    diagnosis = lines[lines.index("## diagnosis") :]
    assert diagnosis[2].startswith("Not ranked: the reports hold different readings")
    rows = _table_rows(diagnosis, "| model | rank")
    assert [row["model"] for row in rows] == ["judged", "lex-b", "lex-a"]
    # No column marked: each reading's reports agree on their matcher (the judged one
    # alone records none); the readings themselves are told apart by their keys.
    assert rows[0]["top1-lexicon (%)"] == ""
    assert rows[1]["top1 (%)"] == ""
    assert [row["rank"] for row in rows] == ["not ranked"] * 3
    assert "n/a" not in "\n".join(diagnosis)


def test_two_readings_in_every_output_of_the_command(tmp_path: Path, capsys) -> None:
    paths = one_judged_two_lexicon(tmp_path)
    out = {kind: tmp_path / f"board.{kind}" for kind in ("json", "md", "html", "csv")}
    arguments = ["--out", str(out["json"]), "--markdown", str(out["md"])]
    arguments += ["--html", str(out["html"]), "--csv", str(out["csv"]), "--bootstrap", "50"]
    assert main(["leaderboard", *map(str, paths), *arguments]) == 0
    terminal = capsys.readouterr().out.splitlines()
    at = terminal.index("diagnosis")
    assert terminal[at + 2].startswith("Not ranked: the reports hold different readings")
    assert "Not ranked: the reports hold different readings" in out["html"].read_text()
    board = json.loads(out["json"].read_text())
    rule = board["ranking"]["diagnosis"]
    assert (rule["ranked"], rule["metric"]) == (False, None)
    assert rule["readings"] == {
        "top1": ["judged.json"],
        "top1-lexicon": ["lex-a.json", "lex-b.json"],
    }
    table = list(csv.DictReader(io.StringIO(out["csv"].read_text())))
    # One column per reading; titles of key and unit only, whatever the board holds.
    assert {"diagnosis rank", "diagnosis top1 (%)", "diagnosis top1-lexicon (%)"} <= set(table[0])
    notes = {row["diagnosis note"] for row in table if row["model"] in ("judged", "lex-a")}
    assert notes == {"not ranked: the reports hold different readings of its ranking metric"}


def test_proxy_warnings_come_before_every_table(tmp_path: Path, capsys) -> None:
    paths = one_judged_two_lexicon(tmp_path)
    board = build_leaderboard([json.loads(p.read_text()) for p in paths], paths, n_resamples=50)
    [warning] = [line for line in board["warnings"] if PROXY_WARNING in line]
    assert not any(PROXY_WARNING in note for note in board["notes"])  # said once, first
    text = render_leaderboard_text(board)
    assert text.index(PROXY_WARNING) < text.index("Overview")
    lines = render_leaderboard_markdown(board).splitlines()
    at = next(i for i, line in enumerate(lines) if PROXY_WARNING in line)
    assert lines[at].startswith("**warning:") and lines[at + 1] == ""
    assert at < lines.index("## Overview")
    assert PROXY_WARNING not in "\n".join(lines[at + 1 :])
    page = render_leaderboard_html(board)
    warnings = page[page.index('<div class="warnings"') : page.index('<h2 id="overview">')]
    assert PROXY_WARNING_HTML in warnings
    assert page.count(PROXY_WARNING_HTML) == 1


def test_an_old_lexicon_top1_is_never_ranked_with_a_case_judge_top1(tmp_path: Path) -> None:
    paths = [
        saved(tmp_path, "old", old_lexicon_report("old", with_breakdowns=False)),
        saved(tmp_path, "judged", report_dict("judged", with_breakdowns=False)),
    ]
    board = build_leaderboard([json.loads(p.read_text()) for p in paths], paths)
    assert board["ranking"]["diagnosis"]["readings"] == {
        "top1": [str(paths[1])],
        "top1-lexicon": [str(paths[0])],
    }
    assert [m["tasks"]["diagnosis"]["rank"] for m in board["models"]] == [None, None]
    old = board["models"][0]["tasks"]["diagnosis"]["metrics"]
    assert "top1" not in old and old["top1-lexicon"] == 0.25


def test_compare_scores_both_sides_under_one_reading(
    sample_release: Path, tmp_path: Path, capsys
) -> None:
    # nova compare scores both prediction sets itself with one set of options, so its two
    # sides never hold two readings; its outputs warn about the proxy before the table.
    from novabench.data.release import read_release
    from novabench.report import compare_predictions

    cases = read_release(sample_release).cases()
    files = []
    for name, answer in (("a", "glioblastoma"), ("b", "meningioma")):
        lines = [json.dumps({"case_id": case.case_id, "diagnoses": [answer]}) for case in cases]
        files.append(tmp_path / f"{name}.jsonl")
        files[-1].write_text("\n".join(lines) + "\n", encoding="utf-8")
    lexicon = compare_predictions(sample_release, *files, n_resamples=10)
    assert set(lexicon["tasks"]["diagnosis"]) == {"top1-lexicon", "top5-lexicon"}
    paired = compare_predictions(sample_release, *files, n_resamples=10, matcher=str.__eq__)
    assert set(paired["tasks"]["diagnosis"]) == {"top1-pairwise", "top5-pairwise"}
    out = tmp_path / "c.json"
    arguments = ["--data", str(sample_release), "--a", str(files[0]), "--b", str(files[1])]
    assert main(["compare", *arguments, "--out", str(out), "--bootstrap", "10", "-q"]) == 0
    printed = capsys.readouterr().out
    assert printed.index(PROXY_WARNING) < printed.index("task ")


def test_an_old_lexicon_report_is_read_as_top1_lexicon(tmp_path: Path) -> None:
    old = old_lexicon_report(with_breakdowns=True)
    current = with_current_keys(old)["tasks"]["diagnosis"]
    assert current["metrics"]["top1-lexicon"] == 0.25 and "top1" not in current["metrics"]
    assert current["confidence_intervals"] == {"top1-lexicon": [0.0, 0.55]}
    rows = with_current_keys(old)["breakdowns"]["diagnosis"]["pathology_category"]
    assert "top1-lexicon" in rows[0] and "top1" not in rows[0]
    # With its per-item tables (their hit column is still called top1), beside a new report.
    entry = write_items(tmp_path / "old-items", images_table([0.6]), cases_table([True, False]))
    new_cases = cases_table([True, True], reading="-lexicon")
    new_entry = write_items(tmp_path / "new-items", images_table([0.6]), new_cases)
    new_report = lexicon_report("new", top1=1.0, hit_30=1.0, items=new_entry, with_breakdowns=False)
    paths = [
        saved(tmp_path, "old", old_lexicon_report("old", top1=0.5, hit_30=1.0, items=entry)),
        saved(tmp_path, "new", new_report),
    ]
    board = build_leaderboard([json.loads(p.read_text()) for p in paths], paths, n_resamples=50)
    assert board["ranking"]["diagnosis"]["metric"] == "top1-lexicon"
    assert board["ranking"]["diagnosis"]["neighbours"]  # the per-case tables were read
    old_row = next(m for m in board["models"] if m["model"] == "old")
    # top5 as its tables give it ([True, False]), renamed with top1.
    assert old_row["tasks"]["diagnosis"]["metrics"] == {"top1-lexicon": 0.5, "top5-lexicon": 0.5}


@pytest.mark.parametrize(
    ("matcher", "expected"),
    [
        ("LLM case judge gpt at http://127.0.0.1:9/v1 (prompt nova-case-judge-2)", "top1"),
        ("LLM judge gpt at http://127.0.0.1:9/v1 (prompt nova-diagnosis-judge-1)", "top1-pairwise"),
        ("callable exact", "top1-pairwise"),
    ],
)
def test_old_reports_are_read_by_their_recorded_matcher(matcher: str, expected: str) -> None:
    old = old_lexicon_report(with_breakdowns=False)
    old["tasks"]["diagnosis"]["metrics"]["matcher"] = matcher
    metrics = with_current_keys(old)["tasks"]["diagnosis"]["metrics"]
    assert metrics[expected] == 0.25 and [k for k in metrics if k.startswith("top1")] == [expected]


def test_an_old_report_whose_matcher_says_nothing_is_refused_with_the_command(
    tmp_path: Path, capsys
) -> None:
    old = old_lexicon_report("old", with_breakdowns=False)
    old["tasks"]["diagnosis"]["metrics"]["matcher"] = "my own judge"
    path = saved(tmp_path, "old", old)
    assert main(["leaderboard", str(path)]) == 2
    error = capsys.readouterr().err.strip()
    assert "\n" not in error and "old.json" in error
    assert "'my own judge'" in error and "nova evaluate" in error


def test_an_old_report_unreadable_in_two_tasks_is_refused_for_the_first_in_registry_order() -> None:
    # Each task reads its own old keys (novabench.tasks.<task>.legacy_key_names), in registry
    # order: captioning's unreadable extractor is named before diagnosis's unreadable matcher.
    old = old_lexicon_report(with_breakdowns=False)
    old["tasks"]["diagnosis"]["metrics"]["matcher"] = "my own judge"
    old["tasks"]["captioning"] = {"metrics": {"BinaryF1": 0.7, "keyword_extractor": "Mine"}}
    with pytest.raises(NovaInputError, match="keyword_extractor") as refused:
        with_current_keys(old, source="old.json")
    assert refused.value.field == "tasks.captioning.metrics.keyword_extractor"
    del old["tasks"]["captioning"]
    with pytest.raises(NovaInputError, match="my own judge"):
        with_current_keys(old, source="old.json")


def test_old_captioning_keywords_are_read_by_their_recorded_extractor() -> None:
    old = report_dict(with_breakdowns=False)
    old["tasks"]["captioning"] = {
        "metrics": {"ClinicalF1": 0.3, "BinaryF1": 0.7, "keyword_extractor": "lexicon (offline)"},
        "confidence_intervals": {"ClinicalF1": [0.2, 0.4]},
    }
    captioning = with_current_keys(old)["tasks"]["captioning"]
    assert captioning["metrics"] == {
        "ClinicalF1-lexicon": 0.3,
        "BinaryF1-lexicon": 0.7,
        "keyword_extractor": "lexicon (offline)",
    }
    assert captioning["confidence_intervals"] == {"ClinicalF1-lexicon": [0.2, 0.4]}
    versioned = "lexicon (offline, nova-keyword-lexicon-5)"  # what lexicon 5 records
    old["tasks"]["captioning"]["metrics"]["keyword_extractor"] = versioned
    assert "ClinicalF1-lexicon" in with_current_keys(old)["tasks"]["captioning"]["metrics"]
    judged = "LLM keyword judge m at http://127.0.0.1:9/v1 (prompt nova-keyword-judge-1)"
    old["tasks"]["captioning"]["metrics"]["keyword_extractor"] = judged
    assert "ClinicalF1" in with_current_keys(old)["tasks"]["captioning"]["metrics"]
    old["tasks"]["captioning"]["metrics"]["keyword_extractor"] = "MyExtractor"
    with pytest.raises(NovaInputError, match="keyword_extractor"):
        with_current_keys(old, source="old.json")
