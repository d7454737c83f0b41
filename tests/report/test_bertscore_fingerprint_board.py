"""The leaderboard compares BERTScore models by their files where reports record them:
two reports whose hashes name the same folder (``m1/enc``) but whose weights differ are
marked "settings differ"; the same weights under another folder of the same name are one
setting; a report without the fingerprint (older, or a Hub model) is compared by its hash
alone, as before."""

from __future__ import annotations

from novabench.report.leaderboard import build_leaderboard, render_leaderboard_text
from tests.report.contract_tables import report_dict

KEY = "BERTScore-F1[enc-L6]"
ORIGINAL = "f7be7ec3335d379d627671be21243692471e72ffc90a66a49649e30affaa4ec8"
PERTURBED = "f493efb4ffb089b40dffa2346dffeee3aedfca74c8f2077c363351cdcc28865b"


def _report(name: str, value: float, folder: str, fingerprint: str | None) -> dict:
    """A captioning report of a local folder model, as nova evaluate writes it today."""
    report = report_dict(name, hit_30=0.5)
    metrics = {
        "ROUGE-L": 0.2,
        KEY: value,
        "BERTScore_hash": f"{folder}_L6_no-idf_version=0.3.12(hug_trans=5.24.0)",
    }
    if fingerprint is not None:
        metrics["BERTScore_model_sha256"] = fingerprint
    report["tasks"]["captioning"] = {
        "metrics": metrics,
        "confidence_intervals": {KEY: [value - 0.05, value + 0.05]},
    }
    return report


def test_one_folder_name_with_other_weights_is_marked_settings_differ() -> None:
    reports = [
        _report("orig", 0.465, "user19-m1/enc", ORIGINAL),
        _report("pert", 0.524, "user19-m1/enc", PERTURBED),
    ]
    board = build_leaderboard(reports, ["orig.json", "pert.json"])
    [difference] = board["setting_differences"]
    assert difference["setting"] == "BERTScore_model_sha256"
    assert difference["metrics"] == [KEY]
    assert ORIGINAL in difference["sentence"] and PERTURBED in difference["sentence"]
    assert f"{KEY} (%, settings differ)" in render_leaderboard_text(board)


def test_the_same_weights_under_another_folder_of_that_name_are_one_setting() -> None:
    """Today's hash names /tmp/user19-m1/enc and /tmp/w/z/enc apart; their files are one."""
    reports = [
        _report("orig", 0.465, "user19-m1/enc", ORIGINAL),
        _report("copy", 0.471, "z/enc", ORIGINAL),
    ]
    board = build_leaderboard(reports, ["orig.json", "copy.json"])
    assert board["setting_differences"] == []
    assert "settings differ" not in render_leaderboard_text(board)


def test_a_report_without_the_fingerprint_is_compared_by_its_hash_as_before() -> None:
    same_folder = [
        _report("old", 0.465, "user19-m1/enc", None),
        _report("new", 0.524, "user19-m1/enc", PERTURBED),
    ]
    assert build_leaderboard(same_folder, ["old.json", "new.json"])["setting_differences"] == []
    other_folder = [
        _report("old", 0.465, "user19-m1/enc", None),
        _report("new", 0.471, "z/enc", ORIGINAL),
    ]
    board = build_leaderboard(other_folder, ["old.json", "new.json"])
    [difference] = board["setting_differences"]
    assert difference["setting"] == "BERTScore_hash" and difference["metrics"] == [KEY]
    assert difference["sentence"] == (
        f"captioning: {KEY} not comparable: BERTScore_hash differs between old.json "
        "(user19-m1/enc_L6_no-idf_version=0.3.12(hug_trans=5.24.0)) and new.json "
        "(z/enc_L6_no-idf_version=0.3.12(hug_trans=5.24.0))."
    )
