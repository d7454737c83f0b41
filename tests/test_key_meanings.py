"""Every printed key says what it is, which way is better and where its definition comes
from, from one source (``registry.TaskSpec.meaning`` / ``direction``), and every ``n/a``
says why (user30: the report named ``mAP@30``, ``FP30``... with no definition, and ``FP30
n/a`` with no reason).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from novabench import registry
from novabench.report.html import render_html
from novabench.report.render import (
    key_legend_markdown,
    render_breakdowns,
    render_human_reference,
    render_markdown,
    render_table,
)

CARD = Path(__file__).resolve().parents[1] / "metrics" / "nova_metric" / "README.md"
SOURCES = {
    registry.FROM_COAUTHORS_CODE,
    registry.FROM_COAUTHORS_PROCEDURE,
    registry.FROM_INFERRED,
    registry.FROM_COCO,
    registry.FROM_OURS,
    registry.FROM_OURS_PAPER_NAME,
    registry.FROM_OURS_SETTINGS,
    registry.FROM_NLTK,
    registry.FROM_ROUGE_SCORE,
}


@pytest.mark.parametrize("task", registry.TASK_NAMES)
def test_every_headline_key_has_one_line_a_direction_and_a_source(task: str) -> None:
    spec = registry.TASKS[task]
    assert [key for key, _ in spec.key_meanings] == list(spec.headline_keys)
    for key in spec.headline_keys:
        meaning = spec.meaning(key)
        assert meaning is not None, key
        assert meaning.definition and "\n" not in meaning.definition
        assert meaning.source in SOURCES, (key, meaning.source)
        assert meaning.undefined
    # Only the error rates are better lower (written out here, not read from the registry).
    lower = {key for key in spec.headline_keys if spec.direction(key) == "lower is better"}
    assert lower == ({"FP30", "FNR"} if task == "localization" else set())


def test_the_paper_keys_sources_agree_with_their_comparison_with_the_paper() -> None:
    loc = registry.TASKS["localization"]
    for key in ("mAP@30", "mAP@50"):  # the co-authors' code: "yes"
        assert loc.meaning(key).source == registry.FROM_COAUTHORS_CODE  # type: ignore[union-attr]
    assert loc.meaning("mAP@50:95").source == registry.FROM_INFERRED  # type: ignore[union-attr]
    for key in ("ACC50", "TP30", "FP30", "FNR"):
        assert loc.meaning(key).source == registry.FROM_OURS_PAPER_NAME  # type: ignore[union-attr]


def _card_legend() -> str:
    text = CARD.read_text(encoding="utf-8")
    start = text.index("<!-- key legend: generated")
    start = text.index("\n", start) + 1
    return text[start : text.index("<!-- end of key legend -->")]


def test_the_metric_cards_key_legend_is_the_registrys() -> None:
    assert _card_legend() == key_legend_markdown(), (
        "the metric card's key legend differs from novabench.registry: paste "
        "novabench.report.render.key_legend_markdown() between its markers"
    )


def _card_provenance() -> dict[str, list[str]]:
    """key -> the provenance cells of the card's Localisation and Protocol note tables."""
    text = CARD.read_text(encoding="utf-8")
    cells: dict[str, list[str]] = {}
    for heading in ("### Localisation", "## Protocol note"):
        section = text.split(heading, 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]
        for line in section.splitlines():
            if not line.startswith("| `"):
                continue
            columns = [c.strip() for c in line.strip("|").split(" | ")]
            for key in re.findall(r"`([^`]+)`", columns[0]):
                cells.setdefault(key, []).append(columns[2])
    return cells


def test_the_cards_provenance_columns_agree_with_the_registry() -> None:
    cells = _card_provenance()
    checked = 0
    for task in registry.TASK_NAMES:
        spec = registry.TASKS[task]
        for key in spec.headline_keys:
            source = spec.meaning(key).source  # type: ignore[union-attr]
            stem = source.split(" (")[0]
            for cell in cells.get(key, []):
                parts = [part.strip() for part in cell.split(" / ")]
                assert any(part.startswith(stem) for part in parts), (key, source, cell)
                checked += 1
    assert checked >= 20  # both tables were read


def _report(metrics: dict[str, float], task: str = "localization") -> dict:
    return {
        "toolkit": {"version": "0"},
        "data": {"path": "d", "n_images": 2, "n_cases": 1},
        "predictions": {"paths": ["p.jsonl"]},
        "bootstrap": {"confidence": 0.95, "n_resamples": 0, "seed": 0},
        "tasks": {
            task: {
                "metrics": metrics,
                "confidence_intervals": {},
                "notes": [],
                "coverage": {
                    "items": 2,
                    "answered": 2,
                    "missing": 0,
                    "errors": 0,
                    "parse_status": {"no_target": 2},
                },
            }
        },
    }


# Nothing predicted on 2 images with gold: FP30 is 0/0.
NOTHING_PREDICTED = {"mAP@30": 0.0, "TP30": 0.0, "FP30": math.nan, "FNR": 1.0}
FP30_WHY = "n/a: localization FP30 is undefined when no box was predicted (0 / 0)"


def test_the_terminal_says_direction_where_keys_are_defined_and_why_a_value_is_na() -> None:
    lines = render_table(_report(NOTHING_PREDICTED)).splitlines()
    assert any(line.split()[:3] == ["localization", "FP30", "n/a"] for line in lines)
    assert (
        "lower is better: localization FP30, FNR (error rates); every other key: higher is better"
        in lines
    )
    assert FP30_WHY in lines
    assert any("nova evaluate --explain" in line for line in lines)
    # Compact: no definition unless asked.
    assert not any(line.startswith("FP30: ") for line in lines)


def test_explain_prints_one_line_per_shown_key() -> None:
    lines = render_table(_report(NOTHING_PREDICTED), explain=True).splitlines()
    explained = [line for line in lines if line.split(":")[0] in NOTHING_PREDICTED]
    assert [line.split(":")[0] for line in explained] == ["mAP@30", "TP30", "FP30", "FNR"]
    assert explained[2] == (
        "FP30: predicted boxes left unmatched at IoU 0.30, over predicted boxes (box-level "
        "false-discovery rate); lower is better; definition: ours (the paper's definition is "
        "not public)"
    )
    assert explained[0].endswith("higher is better; definition: co-authors' code (WALDO)")


def test_markdown_and_html_carry_the_key_meanings_and_the_na_reason() -> None:
    report = _report(NOTHING_PREDICTED)
    markdown = render_markdown(report)
    assert "## What the keys mean" in markdown
    assert (
        "| localization | `FNR` | images with gold given no box at all, over images with gold "
        "| lower | ours (the paper's definition is not public) |"
    ) in markdown
    assert f"- {FP30_WHY}" in markdown
    page = render_html(report)
    assert "What the keys mean (4)" in page
    assert "undefined: no box was predicted (0 / 0)" in page


def test_na_cells_of_the_human_reference_and_breakdowns_say_why() -> None:
    report = _report(NOTHING_PREDICTED)
    report["human_reference"] = {
        "localization": {
            "available": True,
            "raters": {"rater_1": "r1", "rater_2": "r2"},
            "n_images": 2,
            "rater_1_vs_gold": {"mAP@30": 1.0, "TP30": 1.0, "FP30": 0.0, "FNR": 0.0},
            "rater_2_vs_gold": {"available": False, "reason": "the release has one rater"},
            "rater_1_vs_rater_2": {"available": False, "reason": "the release has one rater"},
        }
    }
    lines = render_human_reference(report)
    assert "| FP30 | n/a | 0.0 | n/a | n/a |" in lines
    assert (
        "- n/a: localization FP30 (model) is undefined when no box was predicted (0 / 0)" in lines
    )
    assert "- n/a: rater 2 vs gold: the release has one rater" in lines
    report["breakdowns"] = {
        "localization": {
            "n_gold_boxes": [
                {"group": "0", "n": 12, "mAP@30": 0.0, "hit@30": math.nan},
                {"group": "1", "n": 12, "mAP@30": 0.5, "hit@30": 0.5},
            ]
        }
    }
    report["breakdown_settings"] = {"min_group_size": 10}
    breakdown = render_breakdowns(report)
    assert "| 0 | 12 | 0.0 | n/a |" in breakdown
    assert (
        "- n/a: localization hit@30 (group 0) is undefined when no image has a gold box"
        in breakdown
    )


# No image with a gold box, none with a box of rater 2: every key but the three hit rates
# over ALL images, and FP30 where boxes were drawn, is n/a in every column (user31's case).
NO_GOLD = {
    "mAP@30": 0.0,
    "hit@30": math.nan,
    "FNR": math.nan,
    "FP30": math.nan,
}
NO_GOLD_RATERS = {
    "rater_1_vs_gold": {"mAP@30": 0.0, "hit@30": math.nan, "FNR": math.nan, "FP30": 1.0},
    "rater_2_vs_gold": {"mAP@30": 0.0, "hit@30": math.nan, "FNR": math.nan, "FP30": math.nan},
    "rater_1_vs_rater_2": {"mAP@30": 0.0, "hit@30": math.nan, "FNR": math.nan, "FP30": 1.0},
}


def _no_gold_report() -> dict:
    report = _report(NO_GOLD)
    report["human_reference"] = {
        "localization": {
            "available": True,
            "raters": {"rater_1": "r1", "rater_2": "r2"},
            "n_images": 2,
            **NO_GOLD_RATERS,
        }
    }
    return report


def test_the_human_references_na_notes_are_one_line_per_key_each_column_its_reason() -> None:
    """user31: 36 "n/a:" lines for 9 keys x 4 columns, and rater 1 vs rater 2's said "no
    image has a gold box" where its reference is rater 2's boxes."""
    lines = render_human_reference(_no_gold_report())
    notes = [line for line in lines if line.startswith("- n/a:")]
    assert notes == [  # the table's key order
        "- n/a: localization FP30 is undefined when no box was predicted (0 / 0) (model); when "
        "rater 2 drew no box (0 / 0) (rater 2 vs gold)",
        "- n/a: localization FNR is undefined when no image has a gold box (model, rater 1 vs "
        "gold, rater 2 vs gold); when no image has a box of rater 2 (rater 1 vs rater 2)",
        "- n/a: localization hit@30 is undefined when no image has a gold box (model, rater 1 vs "
        "gold, rater 2 vs gold); when no image has a box of rater 2 (rater 1 vs rater 2)",
    ]


def test_the_html_human_reference_table_says_why_each_na_is_undefined() -> None:
    page = render_html(_no_gold_report())
    start = page.index('id="human-reference"')
    table = page[start : page.index("</table>", start)]
    rows = {row.split("</td>")[0]: row for row in table.split("<tr><td>")[1:]}
    rater_pair = rows["rater 1 vs rater 2"]
    assert "undefined: no image has a box of rater 2" in rater_pair
    assert "gold" not in rater_pair  # its reference is rater 2's boxes
    assert rows["rater 2 vs gold"].count("undefined: ") == 3  # hit@30, FNR, FP30
    assert "undefined: rater 2 drew no box (0 / 0)" in rows["rater 2 vs gold"]
    model_row = next(row for name, row in rows.items() if "rater" not in name)
    assert "undefined: no box was predicted (0 / 0)" in model_row
    assert model_row.count("undefined: no image has a gold box") == 2


def test_the_leaderboard_says_why_fp30_is_na_in_every_format() -> None:
    from novabench.report.leaderboard import (
        render_leaderboard_html,
        render_leaderboard_markdown,
        render_leaderboard_text,
    )

    board = {
        "release": "f",
        "models": [
            {
                "model": "blind",
                "path": "a.json",
                "tasks": {
                    "localization": {
                        "metrics": {"mAP@30": 0.0, "FP30": math.nan},
                        "ci": {},
                        "rank": None,
                    }
                },
            },
            {
                "model": "keen",
                "path": "b.json",
                "tasks": {
                    "localization": {
                        "metrics": {"mAP@30": 0.5, "FP30": 0.5},
                        "ci": {},
                        "rank": None,
                    }
                },
            },
        ],
        "ranking": {},
        "human_reference": [
            {"who": "rater 1 vs rater 2", "metrics": {"mAP@30": 0.5, "FP30": math.nan}}
        ],
        "notes": [],
    }
    why = (
        "n/a: localization FP30 is undefined when no box was predicted (0 / 0) (blind); when "
        "rater 1 drew no box (0 / 0) (human: rater 1 vs rater 2)"
    )
    assert why in render_leaderboard_text(board).splitlines()
    assert f"- {why}" in render_leaderboard_markdown(board).splitlines()
    assert f'<p class="note">{why}</p>' in render_leaderboard_html(board)
