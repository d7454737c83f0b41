"""nova leaderboard: one release, ranks with ties from paired bootstrap over per-item tables."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from novabench.cli import main
from novabench.errors import NovaInputError
from novabench.escaping import markdown_text
from novabench.metrics.bleu import corpus_bleu
from novabench.report.leaderboard import (
    build_leaderboard,
    leaderboard_csv,
    read_item_tables,
    render_leaderboard_html,
    render_leaderboard_markdown,
)
from tests.report.contract_tables import cases_table, images_table, report_dict, write_items

N_IMAGES = 40


def saved_report(tmp_path: Path, name: str, hits: int, *, items: bool = True, **options) -> Path:
    """A report whose localisation mAP@30 is hits/N_IMAGES, backed by matching item tables."""
    ious = [0.6] * hits + [0.1] * (N_IMAGES - hits)
    entry = None
    if items:
        entry = write_items(tmp_path / f"{name}-items", images_table(ious), cases_table([True]))
    # The report states what its tables give: the one case is a hit (top1 = 1).
    report = report_dict(name, hit_30=hits / N_IMAGES, top1=1.0, items=entry, **options)
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(report), encoding="utf-8")
    return path


def load(paths: list[Path]) -> list[dict]:
    return [json.loads(p.read_text()) for p in paths]


def ranks(board: dict, task: str = "localization") -> dict[str, int]:
    return {m["model"]: m["tasks"][task]["rank"] for m in board["models"]}


def test_neighbours_the_bootstrap_cannot_separate_share_a_rank(tmp_path: Path) -> None:
    # B misses one image A hits: a resample leaves that image out with probability ~e^-1,
    # so the lower end of the 95% interval of A - B is 0 -> tie. C hits nothing -> separable.
    paths = [
        saved_report(tmp_path, "C", 0),
        saved_report(tmp_path, "A", 40),
        saved_report(tmp_path, "B", 39),
    ]
    board = build_leaderboard(load(paths), paths, n_resamples=300)
    assert ranks(board) == {"A": 1, "B": 1, "C": 3}
    neighbours = board["ranking"]["localization"]["neighbours"]
    assert [(n["a"], n["b"], n["separable"]) for n in neighbours] == [
        ("A", "B", False),
        ("B", "C", True),
    ]
    assert neighbours[0]["difference"] == pytest.approx(1 / 40)
    assert neighbours[0]["ci"][0] == 0.0
    assert "paired bootstrap" in board["ranking"]["localization"]["method"]


def test_without_items_ranks_follow_point_estimates_and_say_so(tmp_path: Path) -> None:
    paths = [
        saved_report(tmp_path, "A", 40, items=False),
        saved_report(tmp_path, "B", 39, items=False),
    ]
    board = build_leaderboard(load(paths), paths)
    assert ranks(board) == {"A": 1, "B": 2}
    assert "ties cannot be assessed" in board["ranking"]["localization"]["method"]
    assert any("no per-item tables" in line for line in board["warnings"])


def test_reports_on_other_releases_are_refused_naming_the_files(tmp_path: Path) -> None:
    paths = [
        saved_report(tmp_path, "A", 4, items=False),
        saved_report(tmp_path, "B", 3, items=False, fingerprint="other"),
    ]
    with pytest.raises(NovaInputError) as caught:
        build_leaderboard(load(paths), paths)
    message = str(caught.value)
    assert "\n" not in message and str(paths[0]) in message and str(paths[1]) in message
    assert "abc123" in message and "other" in message


def test_table_has_cis_ranks_and_the_human_rows(tmp_path: Path) -> None:
    paths = [saved_report(tmp_path, "A", 20), saved_report(tmp_path, "B", 10)]
    board = build_leaderboard(load(paths), paths, n_resamples=200)
    rows = list(csv.reader(io.StringIO(leaderboard_csv(board))))
    header = rows[0]
    assert header[:5] == [
        "model",
        "localization rank",
        "localization mAP@30 (%)",
        "localization mAP@30 CI low (%)",
        "localization mAP@30 CI high (%)",
    ]
    by_model = {row[0]: dict(zip(header, row)) for row in rows[1:]}
    hit = ("localization hit@30 (%)", "localization hit@30 CI low (%)")
    # The CI A's report states (the one its tables give), in percent.
    low, high = load(paths)[0]["tasks"]["localization"]["confidence_intervals"]["hit@30"]
    assert [by_model["A"][column] for column in hit] == ["50.0000", f"{100 * low:.4f}"]
    assert by_model["A"]["localization hit@30 CI high (%)"] == f"{100 * high:.4f}"
    assert by_model["A"]["localization rank"] == "1"
    assert by_model["A"]["localization note"] == "ranked on mAP@30"
    assert by_model["human: rater 1 vs gold"]["localization hit@30 (%)"] == "90.0000"
    assert by_model["human: rater 1 vs gold"]["localization hit@30 CI low (%)"] == ""
    assert by_model["human: rater 1 vs rater 2"]["localization hit@30 (%)"] == "80.0000"
    assert by_model["human: rater 1 vs gold"]["localization rank"] == ""


def test_cli_writes_markdown_html_and_csv(tmp_path: Path, capsys) -> None:
    paths = [saved_report(tmp_path, "A", 20), saved_report(tmp_path, "B", 10)]
    out = {kind: tmp_path / f"board.{kind}" for kind in ("md", "html", "csv")}
    code = main(
        [
            "leaderboard",
            *map(str, paths),
            "--markdown",
            str(out["md"]),
            "--html",
            str(out["html"]),
            "--csv",
            str(out["csv"]),
            "--bootstrap",
            "100",
        ]
    )
    assert code == 0
    markdown = out["md"].read_text()
    assert markdown.startswith("# NOVA leaderboard") and "| A | 1 |" in markdown
    page = out["html"].read_text()
    assert "<td>human: rater 1 vs gold</td>" in page
    assert '<img alt="hit rate against the IoU threshold"' in page  # one curve per model
    assert out["csv"].read_text().splitlines()[0].startswith("model,")
    printed = capsys.readouterr().out
    assert any(line.split()[:2] == ["B", "2"] for line in printed.splitlines())


def test_cli_refuses_mixed_releases_in_one_line(tmp_path: Path, capsys) -> None:
    paths = [
        saved_report(tmp_path, "A", 4, items=False),
        saved_report(tmp_path, "B", 3, items=False, fingerprint="zzz"),
    ]
    assert main(["leaderboard", *map(str, paths)]) == 2
    error = capsys.readouterr().err.strip()
    assert "\n" not in error and error.startswith("nova leaderboard: error:")
    assert "A.json" in error and "B.json" in error


def test_html_curve_has_one_line_per_model_and_the_raters(tmp_path: Path) -> None:
    from novabench.report.plots import hit_rate_curve

    paths = [saved_report(tmp_path, "A", 20), saved_report(tmp_path, "B", 10)]
    images = {
        name: read_item_tables(report, path)["images"]
        for name, report, path in zip("AB", load(paths), paths)
    }
    labels = [line.get_label() for line in hit_rate_curve(images).axes[0].lines]
    assert labels == ["A", "B", "rater 1 vs gold", "rater 2 vs gold"]
    assert "data:image/png;base64," in render_leaderboard_html(
        build_leaderboard(load(paths), paths, n_resamples=50), images
    )


def test_cases_without_a_final_diagnosis_are_left_out_of_the_tie_test(tmp_path: Path) -> None:
    paths = []
    for name, hit in (("A", True), ("B", False)):
        cases = cases_table([hit] * 29 + [False])
        cases.loc[29, "final_diagnosis"] = "Final diagnosis not found."
        entry = write_items(tmp_path / f"{name}-items", images_table([0.5] * 4), cases)
        report = report_dict(name, hit_30=1.0, top1=1.0 if hit else 0.0, items=entry)
        paths.append(tmp_path / f"{name}.json")
        paths[-1].write_text(json.dumps(report), encoding="utf-8")
    board = build_leaderboard(load(paths), paths, n_resamples=50)
    (neighbours,) = board["ranking"]["diagnosis"]["neighbours"]
    assert neighbours["difference"] == 1.0  # 29 of 29 scored cases; 29/30 with the placeholder


def test_a_ranking_metric_its_tables_do_not_hold_is_refused(tmp_path: Path) -> None:
    # The report states ROUGE-L but its pinned tables hold no caption's: nothing backs the
    # figure, so it is refused rather than ranked as stated.
    paths = []
    for name, hits in (("A", 20), ("B", 10)):
        images = images_table([0.6] * hits + [0.1] * (N_IMAGES - hits))
        images["ROUGE-L"] = None
        entry = write_items(tmp_path / f"{name}-items", images, cases_table([True]))
        report = report_dict(name, hit_30=hits / N_IMAGES, top1=1.0, items=entry)
        report["tasks"]["captioning"] = {
            "metrics": {"ROUGE-L": hits / 100},
            "confidence_intervals": {},
            "coverage": {"items": 4, "answered": 4, "missing": 0, "errors": 0, "parse_status": {}},
        }
        paths.append(tmp_path / f"{name}.json")
        paths[-1].write_text(json.dumps(report), encoding="utf-8")
    with pytest.raises(NovaInputError, match="ROUGE-L = 0.2 but its per-item tables give no value"):
        build_leaderboard(load(paths), paths, n_resamples=50)


def _sections(markdown: str) -> dict[str, list[str]]:
    """Markdown lines under each '## ' heading."""
    sections: dict[str, list[str]] = {}
    current = ""
    for line in markdown.splitlines():
        if line.startswith("## "):
            current = line[3:]
            sections[current] = []
        elif current:
            sections[current].append(line)
    return sections


def _header_cells(lines: list[str]) -> list[str]:
    header = next(line for line in lines if line.startswith("| model"))
    return [cell.strip() for cell in header.strip("|").split("|")]


def _two_task_reports(tmp_path: Path) -> list[Path]:
    paths = []
    for name, hits in (("A", 20), ("B", 10)):
        images = images_table([0.6] * hits + [0.1] * (N_IMAGES - hits))
        images["ROUGE-L"] = hits / 100  # every caption's, so their mean is the report's
        entry = write_items(tmp_path / f"{name}-items", images, cases_table([True]))
        report = report_dict(name, hit_30=hits / N_IMAGES, top1=1.0, items=entry)
        # The corpus BLEU of the table's captions, as the board scores them again.
        bleu = corpus_bleu(list(images["caption_prediction"]), list(images["caption_reference"]))
        report["tasks"]["captioning"] = {
            "metrics": {"BLEU-4": bleu, "ROUGE-L": hits / 100},
            "confidence_intervals": {},
            "coverage": {"items": 4, "answered": 4, "missing": 0, "errors": 0, "parse_status": {}},
        }
        paths.append(tmp_path / f"{name}.json")
        paths[-1].write_text(json.dumps(report), encoding="utf-8")
    return paths


def test_markdown_has_an_overview_and_one_table_per_task_with_its_headline_keys(
    tmp_path: Path,
) -> None:
    from novabench.registry import TASKS
    from novabench.report.leaderboard import render_leaderboard_markdown

    paths = _two_task_reports(tmp_path)
    board = build_leaderboard(load(paths), paths, n_resamples=50)
    sections = _sections(render_leaderboard_markdown(board))
    assert list(sections)[:4] == ["Overview", "localization", "captioning", "diagnosis"]
    # The overview: the model and, per task, its one ranking metric and rank.
    assert _header_cells(sections["Overview"]) == [
        "model",
        "localization mAP@30 (%)",
        "localization rank",
        "captioning ROUGE-L (%)",
        "captioning rank",
        "diagnosis top1 (%)",
        "diagnosis rank",
    ]
    # Each task's table: model, rank, then that task's headline keys the reports hold.
    held = {
        "localization": {"mAP@30", "hit@30", "hit@50"},
        "captioning": {"BLEU-4", "ROUGE-L"},
        "diagnosis": {"top1", "top5"},
    }
    for task, keys in held.items():
        expected = [k for k in TASKS[task].headline_keys if k in keys]
        assert _header_cells(sections[task]) == ["model", "rank"] + [f"{k} (%)" for k in expected]
    rows = [line for line in sections["localization"] if line.startswith("| ")][1:]
    assert [row.split(" | ")[0] for row in rows] == [
        "| A",
        "| B",
        "| human: rater 1 vs gold",
        "| human: rater 2 vs gold",
        "| human: rater 1 vs rater 2",
    ]
    assert not any(line.startswith("| human") for line in sections["captioning"])


def test_html_has_the_same_overview_and_per_task_tables(tmp_path: Path) -> None:
    paths = _two_task_reports(tmp_path)
    page = render_leaderboard_html(build_leaderboard(load(paths), paths, n_resamples=50))
    headings = [h for h in page.split("<h2") if h.startswith(" id=")]
    assert [h.split('"')[1] for h in headings] == [
        "overview",
        "localization",
        "captioning",
        "diagnosis",
        "published",  # the published figures of the same keys, after the models' tables
    ]
    captioning = page[page.index('<h2 id="captioning">') : page.index('<h2 id="diagnosis">')]
    assert "<th>model</th><th>rank</th><th>BLEU-4 (%)</th><th>ROUGE-L (%)</th></tr>" in captioning
    assert "mAP@30" not in captioning


def test_csv_stays_one_wide_table(tmp_path: Path) -> None:
    paths = _two_task_reports(tmp_path)
    rows = list(csv.reader(io.StringIO(leaderboard_csv(build_leaderboard(load(paths), paths)))))
    assert {len(row) for row in rows} == {len(rows[0])}
    assert "captioning ROUGE-L (%)" in rows[0] and "diagnosis top1 (%)" in rows[0]
    # Numbers, ready for pandas: every non-empty cell past the model name parses, but the
    # notes and what the warnings say per row, at the end.
    tasks = ["localization", "captioning", "diagnosis"]
    trailer = [f"{t} note" for t in tasks] + ["data", "verified"] + [f"{t} coverage" for t in tasks]
    trailer.append("run")  # the run's status when it had not finished, else empty
    trailer += ["ci_level (%)", "ci_resamples"]  # each row's CIs: their level, resamples
    assert rows[0][-len(trailer) :] == trailer
    numbers = list(range(1, len(rows[0]) - len(trailer)))
    assert all(float(row[i]) == float(row[i]) for row in rows[1:] for i in numbers if row[i])


def test_human_rows_show_their_confidence_intervals(tmp_path: Path) -> None:
    path = saved_report(tmp_path, "A", 20, items=False)
    report = json.loads(path.read_text())
    report["human_reference"]["localization"]["rater_1_vs_gold"]["confidence_intervals"] = {
        "hit@30": [0.8, 1.0]
    }
    board = build_leaderboard([report], [path])
    rows = {row[0]: row for row in csv.reader(io.StringIO(leaderboard_csv(board)))}
    header = list(csv.reader(io.StringIO(leaderboard_csv(board))))[0]
    rater = rows["human: rater 1 vs gold"]
    assert [
        rater[header.index(f"localization hit@30{part} (%)")]
        for part in ("", " CI low", " CI high")
    ] == [
        "90.0000",
        "80.0000",
        "100.0000",
    ]


def test_the_curve_names_the_models_it_leaves_out_and_how_to_include_them(
    tmp_path: Path, capsys
) -> None:
    paths = [saved_report(tmp_path, "A", 20), saved_report(tmp_path, "B", 10, items=False)]
    page_path = tmp_path / "board.html"
    code = main(["leaderboard", *map(str, paths), "--html", str(page_path), "--bootstrap", "50"])
    assert code == 0
    page = page_path.read_text()
    assert '<img alt="hit rate against the IoU threshold"' in page
    note = page[page.index('<p class="note">') :]
    assert "leaves out B" in note and "nova evaluate --items DIR" in note and "A" not in note[:40]
    assert "leaves out B" in capsys.readouterr().out


def test_without_any_item_tables_the_page_says_why_there_is_no_curve(tmp_path: Path) -> None:
    from novabench.report.leaderboard import curve_tables

    paths = [saved_report(tmp_path, n, h, items=False) for n, h in (("A", 20), ("B", 10))]
    board = build_leaderboard(load(paths), paths)
    images, left_out = curve_tables(board, load(paths), paths)
    page = render_leaderboard_html(board, images or None, left_out=left_out)
    assert images == {} and left_out == ["A", "B"]
    assert "No hit-rate curve" in page and "A, B" in page and "<img" not in page


def test_models_of_the_same_name_get_a_curve_each(tmp_path: Path) -> None:
    from novabench.report.leaderboard import curve_tables

    first = saved_report(tmp_path, "A", 20)
    (tmp_path / "again").mkdir()
    second = saved_report(tmp_path / "again", "A", 10)
    board = build_leaderboard(load([first, second]), [first, second], n_resamples=50)
    images, left_out = curve_tables(board, load([first, second]), [first, second])
    assert len(images) == 2 and left_out == []


def test_one_model_gets_no_rank_and_no_tie_statement(tmp_path: Path) -> None:
    from novabench.report.leaderboard import render_leaderboard_markdown

    path = saved_report(tmp_path, "A", 20)
    board = build_leaderboard(load([path]), [path], n_resamples=50)
    assert ranks(board) == {"A": None}
    assert board["ranking"]["localization"]["ranked"] is False
    assert "one model only" in board["ranking"]["localization"]["reason"]
    markdown = render_leaderboard_markdown(board)
    localization = _sections(markdown)["localization"]
    assert "One model only: not ranked" in "\n".join(localization)
    assert "tie" not in markdown and "neighbour" not in markdown
    assert "| A |  | 50.0" in markdown  # the rank cell is empty


def test_two_models_are_worded_as_a_pair_not_neighbours(tmp_path: Path) -> None:
    paths = [saved_report(tmp_path, "A", 20), saved_report(tmp_path, "B", 10)]
    method = build_leaderboard(load(paths), paths, n_resamples=50)["ranking"]["localization"][
        "method"
    ]
    assert "the two models" in method and "neighbour" not in method
    three = [*paths, saved_report(tmp_path, "C", 5)]
    method = build_leaderboard(load(three), three, n_resamples=50)["ranking"]["localization"][
        "method"
    ]
    assert "neighbours" in method


def _with_settings(path: Path, **captioning_settings) -> Path:
    """Give a saved report a captioning task with these recorded settings."""
    report = json.loads(path.read_text())
    metrics = {"ROUGE-L": 0.2, "BERTScore-F1": 0.5, "METEOR": 0.2, **captioning_settings}
    report["tasks"]["captioning"] = {"metrics": metrics, "confidence_intervals": {}}
    path.write_text(json.dumps(report), encoding="utf-8")
    return path


def test_differing_bertscore_settings_are_marked_and_named_in_every_output(
    tmp_path: Path,
) -> None:
    # roberta-large layer 17 both (the one BERTScore-F1), under two bert_score versions.
    older, newer = (
        f"roberta-large_L17_no-idf_version={version}(hug_trans=5.24.0)"
        for version in ("0.3.12", "0.3.13")
    )
    paths = [
        _with_settings(saved_report(tmp_path, "A", 4, items=False), BERTScore_hash=older),
        _with_settings(saved_report(tmp_path, "B", 3, items=False), BERTScore_hash=newer),
    ]
    board = build_leaderboard(load(paths), paths)
    [difference] = board["setting_differences"]
    assert (difference["task"], difference["setting"]) == ("captioning", "BERTScore_hash")
    assert difference["metrics"] == ["BERTScore-F1"]
    sentence = difference["sentence"]
    assert str(paths[0]) in sentence and older in sentence
    assert str(paths[1]) in sentence and newer in sentence
    # BERTScore is not the ranking metric: captioning stays ranked on ROUGE-L.
    assert ranks(board, "captioning") == {"A": 1, "B": 1}
    markdown = render_leaderboard_markdown(board)
    # The sentence holds report paths: Markdown shows it escaped.
    assert markdown_text(sentence) in markdown and "BERTScore-F1 (%, settings differ)" in markdown
    assert sentence in render_leaderboard_html(board)
    table = list(csv.DictReader(io.StringIO(leaderboard_csv(board))))
    assert "captioning BERTScore-F1 (%)" in table[0]  # the title stays put: scripts read it
    assert table[0]["captioning note"] == "ranked on ROUGE-L; settings differ: BERTScore-F1"
    assert sentence in board["notes"]


def test_a_differing_setting_of_the_ranking_metric_leaves_the_task_unranked(
    tmp_path: Path,
) -> None:
    paths = [saved_report(tmp_path, name, hits, items=False) for name, hits in (("A", 4), ("B", 3))]
    reports = load(paths)
    reports[0]["tasks"]["diagnosis"]["metrics"]["matcher"] = "lexicon matcher"
    reports[1]["tasks"]["diagnosis"]["metrics"]["matcher"] = "case judge gpt"
    board = build_leaderboard(reports, paths)
    assert ranks(board, "diagnosis") == {"A": None, "B": None}
    assert ranks(board) == {"A": 1, "B": 2}  # localisation is unaffected
    # The JSON says so per task, for a script: ranked or not, why, and the reading held.
    rule = board["ranking"]["diagnosis"]
    assert (rule["ranked"], rule["metric"]) == (False, "top1") and "matcher" in rule["reason"]
    assert rule["readings"] == {"top1": [str(path) for path in paths]}
    assert (
        board["ranking"]["localization"]["ranked"],
        board["ranking"]["localization"]["reason"],
    ) == (True, None)
    markdown = render_leaderboard_markdown(board)
    line = markdown.split("## diagnosis")[1].splitlines()[2]
    assert line.startswith("Not ranked:") and "matcher" in line
    assert "lexicon matcher" in markdown and "case judge gpt" in markdown


def test_a_report_without_the_setting_counts_as_unknown(tmp_path: Path) -> None:
    paths = [
        _with_settings(saved_report(tmp_path, "A", 4, items=False), METEOR_variant="exact+stem"),
        _with_settings(saved_report(tmp_path, "B", 3, items=False)),
    ]
    board = build_leaderboard(load(paths), paths)
    [difference] = board["setting_differences"]
    assert difference["setting"] == "METEOR_variant"
    assert f"{paths[1]} (unknown" in difference["sentence"]


def _captioning_metrics(path: Path, metrics: dict) -> Path:
    """Give a saved report a captioning task holding exactly these metrics."""
    report = json.loads(path.read_text())
    report["tasks"]["captioning"] = {
        "metrics": metrics,
        "confidence_intervals": {key: [0.1, 0.3] for key in metrics if key.startswith("METEOR")},
    }
    path.write_text(json.dumps(report), encoding="utf-8")
    return path


def test_an_old_reports_exact_stem_meteor_is_read_under_its_own_key(tmp_path: Path) -> None:
    # Before METEOR meant only the WordNet reading, a machine without WordNet wrote its
    # exact+stem score under METEOR, with METEOR_variant beside it.
    old = _captioning_metrics(
        saved_report(tmp_path, "Old", 4, items=False),
        {"ROUGE-L": 0.2, "METEOR": 0.21, "METEOR_variant": "exact+stem"},
    )
    new = _captioning_metrics(
        saved_report(tmp_path, "New", 3, items=False),
        {"ROUGE-L": 0.2, "METEOR-exact+stem": 0.19, "METEOR_variant": "exact+stem"},
    )
    board = build_leaderboard(load([old, new]), [old, new])
    assert board["setting_differences"] == []  # the same quantity on both sides
    values = {m["model"]: m["tasks"]["captioning"]["metrics"] for m in board["models"]}
    assert values["Old"] == {"ROUGE-L": 0.2, "METEOR-exact+stem": 0.21}
    assert values["New"] == {"ROUGE-L": 0.2, "METEOR-exact+stem": 0.19}
    assert board["models"][0]["tasks"]["captioning"]["ci"] == {"METEOR-exact+stem": [0.1, 0.3]}
    csv_header = leaderboard_csv(board).splitlines()[0]
    assert "captioning METEOR-exact+stem (%)" in csv_header
    assert "captioning METEOR (%)" not in csv_header
    assert "| METEOR-exact+stem" in render_leaderboard_markdown(board)


def test_meteor_of_two_variants_is_marked_on_both_keys(tmp_path: Path) -> None:
    wordnet = _captioning_metrics(
        saved_report(tmp_path, "A", 4, items=False),
        {"ROUGE-L": 0.2, "METEOR": 0.25, "METEOR_variant": "wordnet"},
    )
    exact_stem = _captioning_metrics(
        saved_report(tmp_path, "B", 3, items=False),
        {"ROUGE-L": 0.2, "METEOR-exact+stem": 0.19, "METEOR_variant": "exact+stem"},
    )
    board = build_leaderboard(load([wordnet, exact_stem]), [wordnet, exact_stem])
    [difference] = board["setting_differences"]
    assert difference["setting"] == "METEOR_variant"
    assert difference["metrics"] == ["METEOR", "METEOR-exact+stem"]
    markdown = render_leaderboard_markdown(board)
    assert "METEOR (%, settings differ)" in markdown
    assert "METEOR-exact+stem (%, settings differ)" in markdown
    assert ranks(board, "captioning") == {"A": 1, "B": 1}  # ROUGE-L is not affected


def test_meteor_computed_by_two_nltk_versions_is_marked(tmp_path: Path) -> None:
    paths = [
        _captioning_metrics(
            saved_report(tmp_path, name, hits, items=False),
            {"ROUGE-L": 0.2, "METEOR": 0.25, "METEOR_variant": "wordnet", "METEOR_nltk": nltk},
        )
        for name, hits, nltk in (("A", 4, "3.9.1"), ("B", 3, "3.10.4"))
    ]
    board = build_leaderboard(load(paths), paths)
    [difference] = board["setting_differences"]
    assert (difference["setting"], difference["metrics"]) == ("METEOR_nltk", ["METEOR"])
    assert "METEOR (%, settings differ)" in render_leaderboard_markdown(board)


def test_equal_settings_change_nothing(tmp_path: Path) -> None:
    paths = [
        _with_settings(
            saved_report(tmp_path, n, h, items=False), BERTScore_hash="m_L6_no-idf_version=0.3.13"
        )
        for n, h in (("A", 4), ("B", 3))
    ]
    board = build_leaderboard(load(paths), paths)
    assert board["setting_differences"] == []
    assert "settings differ" not in render_leaderboard_markdown(board)


def test_bertscore_hashes_compare_without_the_install_folder(tmp_path: Path) -> None:
    paths = [
        _with_settings(saved_report(tmp_path, n, h, items=False), BERTScore_hash=hash_)
        for n, h, hash_ in (
            ("A", 4, "/venv1/site-packages/minilm/model_L6_no-idf"),
            ("B", 3, "/home/x/venv/site-packages/minilm/model_L6_no-idf"),
        )
    ]
    assert build_leaderboard(load(paths), paths)["setting_differences"] == []


def test_differing_bootstrap_settings_are_noted(tmp_path: Path) -> None:
    paths = [saved_report(tmp_path, name, hits, items=False) for name, hits in (("A", 4), ("B", 3))]
    reports = load(paths)
    reports[1]["bootstrap"]["n_resamples"] = 2000
    board = build_leaderboard(reports, paths)
    assert ranks(board) == {"A": 1, "B": 2}
    [note] = [note for note in board["notes"] if "bootstrap settings differ" in note]
    assert str(paths[0]) in note and str(paths[1]) in note and "2000" in note


def test_cli_refuses_a_report_given_twice(tmp_path: Path, capsys) -> None:
    path = saved_report(tmp_path, "A", 4, items=False)
    same = tmp_path / "." / "A.json"
    assert main(["leaderboard", str(path), str(same)]) == 2
    error = capsys.readouterr().err.strip()
    assert "\n" not in error and error.startswith("nova leaderboard: error:")
    assert str(same) in error and "twice" in error


def test_reports_of_the_same_model_name_are_told_apart_in_the_tables(tmp_path: Path) -> None:
    (tmp_path / "again").mkdir()
    paths = [
        saved_report(tmp_path, "A", 4, items=False),
        saved_report(tmp_path / "again", "A", 3, items=False),
    ]
    board = build_leaderboard(load(paths), paths)
    markdown = render_leaderboard_markdown(board)
    for path in paths:
        assert f"| {markdown_text(f'A ({path})')} |" in markdown
        assert f"A ({path})" in leaderboard_csv(board)
        assert f"<td>A ({path})</td>" in render_leaderboard_html(board)


def test_the_warning_on_missing_item_tables_names_the_reports(tmp_path: Path) -> None:
    paths = [
        saved_report(tmp_path, "A", 40),
        saved_report(tmp_path, "B", 39, items=False),
        saved_report(tmp_path, "C", 30, items=False),
    ]
    board = build_leaderboard(load(paths), paths, n_resamples=50)
    [warning] = [line for line in board["warnings"] if "per-item tables" in line]
    assert str(paths[1]) in warning and str(paths[2]) in warning and str(paths[0]) not in warning
    assert markdown_text(warning) in render_leaderboard_markdown(board)
    assert not [note for note in board["notes"] if "per-item tables" in note]  # said once


def test_the_overview_of_one_model_promises_no_ranks(tmp_path: Path) -> None:
    path = saved_report(tmp_path, "A", 4, items=False)
    markdown = render_leaderboard_markdown(build_leaderboard(load([path]), [path]))
    overview = markdown.split("## Overview")[1].split("## localization")[0]
    assert " rank |" not in overview  # no empty rank columns
    assert "ranking metric and rank" not in overview and "one model" in overview


def test_answered_only_scoring_differs_from_full_scoring_in_every_task(tmp_path: Path) -> None:
    paths = [saved_report(tmp_path, name, hits, items=False) for name, hits in (("A", 4), ("B", 3))]
    reports = load(paths)
    reports[0]["answered_only"] = True  # B predates the field: it scored every item
    board = build_leaderboard(reports, paths)
    assert {d["task"] for d in board["setting_differences"]} == {"localization", "diagnosis"}
    assert ranks(board) == {"A": None, "B": None}
    assert f"{paths[1]} (False)" in board["notes"][-1]


def test_the_published_figures_of_the_boards_keys_follow_its_tables(tmp_path: Path) -> None:
    from novabench.published import published_results

    paths = _two_task_reports(tmp_path)
    board = build_leaderboard(load(paths), paths, n_resamples=50)
    markdown = render_leaderboard_markdown(board)
    section = markdown.split("## Published zero-shot results", 1)[1]
    # The board holds mAP@30 and BLEU-4 among its keys: their published figures are there,
    # a key it does not hold (mAP@50) is not; the paper did not publish its BLEU settings.
    for result in published_results("localization", "mAP@30"):
        assert f"| {result.task} | {result.metric} | {result.model} |" in section
    bleu = "BLEU-4 (settings not published: corpus or sentence BLEU, tokenizer and smoothing)"
    for result in published_results("captioning", "BLEU-4"):
        assert f"| {result.task} | {bleu} | {result.model} |" in section
    assert "| mAP@50 |" not in section
    assert "not re-scored" in markdown.split("## Published", 1)[1].splitlines()[0]


def test_a_written_board_names_reports_without_their_local_folders(tmp_path: Path) -> None:
    paths = _two_task_reports(tmp_path)
    # A second report of model A, without tables: the board names both A's by their paths
    # and notes the one without tables by its path.
    again = json.loads(Path(paths[0]).read_text(encoding="utf-8"))
    again.pop("items")
    again["tasks"]["localization"]["metrics"]["hit@50"] = 0.0  # another run, not a copy
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "A-again.json").write_text(json.dumps(again), encoding="utf-8")
    absolute = [str(Path(p).resolve()) for p in [*paths, tmp_path / "runs" / "A-again.json"]]
    out = tmp_path / "boards" / "board.md"
    out.parent.mkdir()
    csv_out = out.with_suffix(".csv")
    assert main(["leaderboard", *absolute, "--markdown", str(out), "--csv", str(csv_out)]) == 0
    markdown = out.read_text(encoding="utf-8")
    assert "A-again.json" in markdown  # named, relative to the board or by name
    for written in (out, csv_out):
        assert str(tmp_path) not in written.read_text(encoding="utf-8")
    full = tmp_path / "full.md"
    assert main(["leaderboard", *absolute, "--markdown", str(full), "--full-paths"]) == 0
    assert "runs/A-again.json" in full.read_text(encoding="utf-8").replace("\\", "")


def test_the_terminal_gets_plain_text_without_markdown_escapes(tmp_path: Path, capsys) -> None:
    # A model name with Markdown characters and the published figures (20.16, "36.4 [...]")
    # are what a user reads in the terminal: exactly as written, no backslash before any.
    paths = [saved_report(tmp_path, "qwen_2.5 [7b]", 20), saved_report(tmp_path, "B", 10)]
    board_path = tmp_path / "board.html"
    code = main(["leaderboard", *map(str, paths), "--html", str(board_path), "--bootstrap", "50"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "\\" not in printed
    assert "| --- |" not in printed and "|---" not in printed
    assert "20.16" in printed  # Gemini 2.0 Flash's published mAP@30 (NOVA_REFERENCE.md)
    assert "qwen_2.5 [7b]" in printed
    # The Markdown file, where escapes belong, keeps them.
    markdown_path = tmp_path / "board.md"
    assert main(["leaderboard", *map(str, paths), "--markdown", str(markdown_path)]) == 0
    assert "20\\.16" in markdown_path.read_text()


def test_reports_of_the_synthetic_sample_say_so_before_any_table(tmp_path: Path) -> None:
    from novabench.report.leaderboard import render_leaderboard_text

    paths = [saved_report(tmp_path, "A", 20), saved_report(tmp_path, "B", 10)]
    real = build_leaderboard(load(paths), paths, n_resamples=50)
    assert not any("NOT THE REAL DATA" in line for line in real["warnings"])
    for path in paths:  # as nova evaluate records a release that `nova sample` wrote
        report = json.loads(path.read_text())
        report["data"]["provenance"] = {"origin": "nova sample", "cases": 40, "seed": 0}
        path.write_text(json.dumps(report), encoding="utf-8")
    board = build_leaderboard(load(paths), paths, n_resamples=50)
    notices = [line for line in board["warnings"] if "NOT THE REAL DATA" in line]
    assert len(notices) == 1 and board["warnings"][0] == notices[0]  # once, and first
    text = render_leaderboard_text(board)
    markdown = render_leaderboard_markdown(board)
    page = render_leaderboard_html(board)
    for rendered, first_table in ((text, "Overview"), (markdown, "| model"), (page, "<table")):
        assert -1 < rendered.find("NOT THE REAL DATA") < rendered.find(first_table)


def test_reports_of_ingested_data_say_so_before_any_table(tmp_path: Path) -> None:
    from novabench.report.leaderboard import render_leaderboard_text

    paths = [saved_report(tmp_path, "A", 20), saved_report(tmp_path, "B", 10)]
    for path in paths:  # as nova evaluate records a release that `nova ingest` built
        report = json.loads(path.read_text())
        report["data"]["provenance"] = {"origin": "nova ingest"}
        path.write_text(json.dumps(report), encoding="utf-8")
    board = build_leaderboard(load(paths), paths, n_resamples=50)
    notices = [line for line in board["warnings"] if "NOT THE NOVA RELEASE" in line]
    assert len(notices) == 1 and board["warnings"][0] == notices[0]
    assert "nova ingest" in notices[0] and "not comparable" in notices[0]
    text = render_leaderboard_text(board)
    assert -1 < text.find("NOT THE NOVA RELEASE") < text.find("Overview")
