"""nova evaluate --html and nova compare --markdown/--html on real runs of the sample release."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from novabench.cli import main
from novabench.data.release import read_release
from novabench.run.predictions import RunManifest

FAST = ["--exclude", "BERTScore-F1", "--exclude", "METEOR"]


@pytest.fixture(scope="module")
def runs(
    sample_release: Path, sample_floor_run: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Path]:
    """The floor baseline's raw answers, and perfect answers recorded as model 'oracle|v1'."""
    folder = tmp_path_factory.mktemp("runs")
    floor = sample_floor_run  # the session's one floor run (tests/conftest.py), read only
    release = read_release(sample_release)
    lines = [
        {"filename": i.filename, "boxes": i.boxes, "caption": i.caption} for i in release.images
    ]
    lines += [
        {"case_id": c.case_id, "diagnoses": [c.final_diagnosis or "none"]} for c in release.cases()
    ]
    oracle = folder / "oracle.jsonl"
    oracle.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    RunManifest(model="oracle|v1").write(oracle)
    return {"floor": floor, "oracle": oracle}


def test_evaluate_without_out_prints_the_same_table_and_writes_nothing(
    sample_release: Path, runs: dict[str, Path], tmp_path: Path, capsys, monkeypatch
) -> None:
    # input14: --out was required when only the terminal table was wanted.
    monkeypatch.chdir(tmp_path)
    base = ["evaluate", "--data", str(sample_release), "--predictions", str(runs["floor"])]
    base += ["--bootstrap", "20", *FAST]
    assert main(base) == 0
    table_only = capsys.readouterr()
    assert list(tmp_path.iterdir()) == []
    assert table_only.err.strip().splitlines()[-1] == (
        "nova evaluate: note: no --out, so no report was written"
    )
    assert main([*base, "--out", str(tmp_path / "r.json")]) == 0
    with_out = capsys.readouterr().out
    assert with_out == f"{table_only.out}\nreport written to {tmp_path / 'r.json'}\n"


def test_evaluate_writes_an_html_page_naming_the_model(
    sample_release: Path, runs: dict[str, Path], tmp_path: Path, capsys
) -> None:
    out, page, markdown = tmp_path / "r.json", tmp_path / "r.html", tmp_path / "r.md"
    code = main(
        [
            "evaluate",
            "--data",
            str(sample_release),
            "--predictions",
            str(runs["floor"]),
            "--out",
            str(out),
            "--html",
            str(page),
            "--markdown",
            str(markdown),
            "--bootstrap",
            "20",
            *FAST,
        ]
    )
    assert code == 0
    text = page.read_text()
    assert "<title>NOVA report: baseline:floor</title>" in text
    assert "<h1>NOVA evaluation report: baseline:floor</h1>" in text
    # The per-item sections are drawn from tables built in memory: no --items needed.
    assert "--items DIR" not in text
    assert "hit rate against the IoU threshold" in text
    # The default gallery size: at most 4 per section; the floor baseline both hits and
    # misses on the sample, so every section has pictures.
    sections = text.split('<h3 class="gallery-section">')[1:]
    assert [s.split("</h3>")[0] for s in sections] == [
        "Highest IoU",
        "Lowest IoU above 0",
        "Missed: IoU 0",
        "Random sample",
    ]
    assert all(1 <= s.count('class="overlay"') <= 4 for s in sections)
    assert "items" not in json.loads(out.read_text())  # nothing written, nothing pointed at
    links = re.findall(r'(?:src|href)="([^"]*)"', text)
    assert links and all(link.startswith(("data:", "#")) for link in links)  # self-contained
    assert markdown.read_text().splitlines()[0] == "# NOVA evaluation report: baseline:floor"
    assert f", {page}" in capsys.readouterr().out


@pytest.mark.parametrize("gallery_size", [0, 2])
def test_evaluate_html_with_items_has_the_per_item_sections_and_chosen_gallery(
    sample_release: Path, runs: dict[str, Path], tmp_path: Path, gallery_size: int
) -> None:
    out, page = tmp_path / "r.json", tmp_path / "r.html"
    args = ["evaluate", "--data", str(sample_release), "--predictions", str(runs["floor"])]
    args += ["--out", str(out), "--html", str(page), "--items", str(tmp_path / "items")]
    code = main([*args, "--gallery-size", str(gallery_size), "--bootstrap", "20", *FAST])
    assert code == 0
    text = page.read_text()
    assert "--items DIR" not in text  # the tables were there, so every section is drawn
    assert "hit rate against the IoU threshold" in text and "Human reference" in text
    overlays = text.count('class="overlay"')
    # four sections of the chosen size (the sample has enough hits and misses)
    assert overlays == 4 * gallery_size
    assert ('id="gallery"' in text) == (gallery_size > 0)
    report = json.loads(out.read_text())
    assert (out.parent / report["items"]["images"]).is_file()


def test_compare_writes_markdown_and_html_naming_both_models(
    sample_release: Path, runs: dict[str, Path], tmp_path: Path, capsys
) -> None:
    out, markdown, page = tmp_path / "c.json", tmp_path / "c.md", tmp_path / "c.html"
    code = main(
        [
            "compare",
            "--data",
            str(sample_release),
            "--a",
            str(runs["oracle"]),
            "--b",
            str(runs["floor"]),
            "--out",
            str(out),
            "--markdown",
            str(markdown),
            "--html",
            str(page),
            "--bootstrap",
            "20",
            *FAST,
        ]
    )
    assert code == 0
    comparison = json.loads(out.read_text())
    text = markdown.read_text()
    assert text.splitlines()[0] == "# NOVA comparison: oracle\\|v1 (A) vs baseline:floor (B)"
    top1 = comparison["tasks"]["diagnosis"]["top1-lexicon"]
    row = f"| diagnosis | top1-lexicon | {100 * top1['a']:.1f} | {100 * top1['b']:.1f} |"
    assert row in text
    html_text = page.read_text()
    assert "<title>NOVA comparison: oracle|v1 vs baseline:floor</title>" in html_text
    printed = capsys.readouterr().out
    assert printed.startswith("A: oracle|v1\nB: baseline:floor\n")
    n_images = len(read_release(sample_release).images)
    assert f"B (baseline:floor) localization: {n_images}/{n_images} answered" in printed


def test_compare_refuses_an_output_over_an_input(
    sample_release: Path, runs: dict[str, Path], capsys
) -> None:
    code = main(
        [
            "compare",
            "--data",
            str(sample_release),
            "--a",
            str(runs["oracle"]),
            "--b",
            str(runs["floor"]),
            "--out",
            "x.json",
            "--html",
            str(runs["floor"]),
        ]
    )
    assert code == 2 and "--html" in capsys.readouterr().err


def _compare(release: Path, a: Path, b: Path, folder: Path) -> tuple[dict, str, str]:
    """Run nova compare; the JSON, the Markdown and the HTML it wrote."""
    out, markdown, page = folder / "c.json", folder / "c.md", folder / "c.html"
    args = ["compare", "--data", str(release), "--a", str(a), "--b", str(b), "--out", str(out)]
    args += ["--markdown", str(markdown), "--html", str(page), "--bootstrap", "20", *FAST]
    assert main(args) == 0
    return json.loads(out.read_text()), markdown.read_text(), page.read_text()


IDENTICAL = "the two prediction sets give identical answers on every scored item"


def test_compare_of_identical_answers_says_so_everywhere(
    sample_release: Path, runs: dict[str, Path], tmp_path: Path, capsys
) -> None:
    # A second file with the same answers (another name, another manifest): same parse.
    copy = tmp_path / "again.jsonl"
    copy.write_text(runs["oracle"].read_text(), encoding="utf-8")
    RunManifest(model="oracle|v2").write(copy)
    comparison, markdown, page = _compare(sample_release, runs["oracle"], copy, tmp_path)
    printed = capsys.readouterr().out
    n_images = len(read_release(sample_release).images)
    assert comparison["answer_agreement"]["localization"] == {
        "items": n_images,
        "identical": n_images,
    }
    assert f"note: {IDENTICAL}" in printed
    assert printed.index(IDENTICAL) < printed.index("task ")  # before the table
    assert f"**note: {IDENTICAL}" in markdown
    assert f"<li>note: {IDENTICAL}" in page.split('id="warnings"', 1)[1]


def test_compare_predictions_counts_agreement_as_answer_agreement_does(
    sample_release: Path, runs: dict[str, Path]
) -> None:
    # The Python API gives the agreement the command writes, without reading the files twice.
    from novabench.report import compare_predictions
    from novabench.report.scoring import answer_agreement

    options = {"n_resamples": 10, "caption_options": {"exclude": ["BERTScore-F1", "METEOR"]}}
    for a, b in (("oracle", "oracle"), ("oracle", "floor")):
        comparison = compare_predictions(sample_release, runs[a], runs[b], **options)
        assert comparison["answer_agreement"] == answer_agreement(sample_release, runs[a], runs[b])
        assert set(comparison["answer_agreement"]) == set(comparison["tasks"])


def test_compare_of_different_answers_says_nothing_of_the_kind(
    sample_release: Path, runs: dict[str, Path], tmp_path: Path, capsys
) -> None:
    comparison, markdown, page = _compare(sample_release, runs["oracle"], runs["floor"], tmp_path)
    printed = capsys.readouterr().out
    agreement = comparison["answer_agreement"]
    assert agreement["captioning"]["identical"] < agreement["captioning"]["items"]
    assert all(IDENTICAL not in text for text in (printed, markdown, page))


def test_compare_names_only_the_tasks_answered_identically(
    sample_release: Path, runs: dict[str, Path], tmp_path: Path, capsys
) -> None:
    lines = [json.loads(line) for line in runs["oracle"].read_text().splitlines()]
    for line in lines:
        if "case_id" in line:
            line["diagnoses"] = ["something else entirely"]
    other = tmp_path / "other.jsonl"
    other.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    _, markdown, _ = _compare(sample_release, runs["oracle"], other, tmp_path)
    printed = capsys.readouterr().out
    for text in (printed, markdown):
        assert f"localization: {IDENTICAL}" in text and f"captioning: {IDENTICAL}" in text
        assert f"diagnosis: {IDENTICAL}" not in text
