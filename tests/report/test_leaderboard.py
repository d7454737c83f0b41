"""nova leaderboard: one release, ranks with ties from paired bootstrap over per-item tables."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from novabench.cli import main
from novabench.errors import NovaInputError
from novabench.report.leaderboard import (
    build_leaderboard,
    leaderboard_csv,
    read_item_tables,
    render_leaderboard_html,
)
from tests.report.contract_tables import cases_table, images_table, report_dict, write_items

N_IMAGES = 40


def saved_report(tmp_path: Path, name: str, hits: int, *, items: bool = True, **options) -> Path:
    """A report whose localisation mAP@30 is hits/N_IMAGES, backed by matching item tables."""
    ious = [0.6] * hits + [0.1] * (N_IMAGES - hits)
    entry = None
    if items:
        entry = write_items(tmp_path / f"{name}-items", images_table(ious), cases_table([True]))
    report = report_dict(name, hit_30=hits / N_IMAGES, items=entry, **options)
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
    assert any("ties cannot be assessed" in note for note in board["notes"])


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
    assert header[:3] == ["model", "localization rank (mAP@30)", "localization mAP@30 (%)"]
    by_model = {row[0]: dict(zip(header, row)) for row in rows[1:]}
    assert by_model["A"]["localization hit@30 (%)"] == "50.0 [30.0, 70.0]"
    assert by_model["A"]["localization rank (mAP@30)"] == "1"
    assert by_model["human: rater 1 vs gold"]["localization hit@30 (%)"] == "90.0"
    assert by_model["human: rater 1 vs rater 2"]["localization hit@30 (%)"] == "80.0"
    assert by_model["human: rater 1 vs gold"]["localization rank (mAP@30)"] == ""


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
    assert "| B | 2 |" in capsys.readouterr().out


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
        report = report_dict(name, top1=1.0 if hit else 0.0, items=entry)
        paths.append(tmp_path / f"{name}.json")
        paths[-1].write_text(json.dumps(report), encoding="utf-8")
    board = build_leaderboard(load(paths), paths, n_resamples=50)
    (neighbours,) = board["ranking"]["diagnosis"]["neighbours"]
    assert neighbours["difference"] == 1.0  # 29 of 29 scored cases; 29/30 with the placeholder


def test_a_rank_metric_without_per_item_values_falls_back_to_point_estimates(
    tmp_path: Path,
) -> None:
    paths = []
    for name, hits in (("A", 20), ("B", 10)):
        images = images_table([0.6] * hits + [0.1] * (N_IMAGES - hits))
        images["ROUGE-L"] = None  # e.g. the metric was excluded
        entry = write_items(tmp_path / f"{name}-items", images, cases_table([True]))
        report = report_dict(name, hit_30=hits / N_IMAGES, items=entry)
        report["tasks"]["captioning"] = {
            "metrics": {"ROUGE-L": hits / 100},
            "confidence_intervals": {},
            "coverage": {"items": 4, "answered": 4, "missing": 0, "errors": 0, "parse_status": {}},
        }
        paths.append(tmp_path / f"{name}.json")
        paths[-1].write_text(json.dumps(report), encoding="utf-8")
    board = build_leaderboard(load(paths), paths, n_resamples=50)
    assert "ties cannot be assessed" in board["ranking"]["captioning"]["method"]
    assert "paired bootstrap" in board["ranking"]["localization"]["method"]
    assert ranks(board, "captioning") == {"A": 1, "B": 2}
