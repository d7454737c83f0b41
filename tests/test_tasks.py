"""Each task's behaviour module (novabench/tasks/<task>.py): declared once, read everywhere."""

from __future__ import annotations

import inspect

import pandas as pd
import pytest

from novabench.registry import TASK_NAMES, TASKS
from novabench.tasks import behaviour, load_hook, tasks_where


@pytest.mark.parametrize("name", TASK_NAMES)
def test_the_registry_names_each_tasks_own_module(name: str) -> None:
    spec = behaviour(name)
    assert spec.task == name
    assert TASKS[name].behaviour == f"novabench.tasks.{name}:BEHAVIOUR"


@pytest.mark.parametrize("name", TASK_NAMES)
def test_every_named_hook_resolves_to_a_function(name: str) -> None:
    spec = behaviour(name)
    hooks = [spec.baseline_answer, spec.settle_metric_options, spec.answer_summary]
    for target in [*hooks, spec.human_reference]:
        if target is not None:
            assert callable(load_hook(target)), target
    answer = load_hook(spec.baseline_answer)
    assert list(inspect.signature(answer).parameters) == ["request", "settings"]


@pytest.mark.parametrize(
    "dimensions",
    [
        ("sequence", "pathology_category"),  # out of report order
        ("pathology_category", "modality"),  # no such per-item fact
        ("plane", "plane"),  # twice
    ],
)
def test_breakdown_dimensions_unknown_or_out_of_report_order_are_refused(
    dimensions: tuple[str, ...],
) -> None:
    from dataclasses import replace

    with pytest.raises(ValueError, match="'captioning': breakdown_dimensions .* in that order"):
        replace(behaviour("captioning"), breakdown_dimensions=dimensions)


def test_the_report_breaks_down_by_the_dimensions_the_tasks_choose_from() -> None:
    from novabench.report import breakdowns
    from novabench.tasks import BREAKDOWN_DIMENSIONS

    assert breakdowns.DIMENSIONS is BREAKDOWN_DIMENSIONS
    assert tuple(breakdowns._ORDER) == BREAKDOWN_DIMENSIONS  # every one has a group order


@pytest.mark.parametrize("name", TASK_NAMES)
def test_rank_metric_is_a_headline_key_and_settings_name_the_tasks_metrics(name: str) -> None:
    spec = behaviour(name)
    headline = TASKS[name].headline_keys
    assert spec.rank_metric in headline
    assert spec.rank_item_column[0] == ("images" if TASKS[name].unit == "image" else "cases")
    for setting, affected in spec.comparability_settings:
        # SequencePlaneF1 is the keyword judge's extra key, recorded beside the headline.
        assert affected == ("*",) or set(affected) <= {*headline, "SequencePlaneF1"}, setting
    assert ("answered_only", ("*",)) in spec.comparability_settings


def test_only_localisation_has_a_human_reference_a_curve_and_a_box_order() -> None:
    assert tasks_where(lambda spec: spec.human_reference) == ("localization",)
    assert tasks_where(lambda spec: spec.hit_rate_curve) == ("localization",)
    assert tasks_where(lambda spec: spec.prompt_sets_box_order) == ("localization",)
    assert tasks_where(lambda spec: spec.reference_required) == ("captioning",)


def test_rank_item_values_have_the_rank_metrics_mean() -> None:
    # Hand-made tables: 2 of 4 images reach IoU 0.30 (mAP@30 = 0.5); ROUGE-L mean over the
    # scored captions (c.png's unscored, --answered-only): (0.2 + 0.4 + 0.6) / 3 = 0.4; top1
    # over the 2 cases with a final diagnosis (the placeholder case left out): 1 of 2 = 0.5.
    images = pd.DataFrame(
        {
            "filename": ["a.png", "b.png", "c.png", "d.png"],
            "best_iou": [0.30, 0.2999, 0.9, 0.0],
            "ROUGE-L": [0.2, 0.4, None, 0.6],
        }
    )
    cases = pd.DataFrame(
        {
            "case_id": ["case0001", "case0002", "case0003"],
            "final_diagnosis": ["Glioma", "Final diagnosis not found.", "Abscess"],
            "top1": [True, True, False],
        }
    )
    tables = {"images": images, "cases": cases}
    means = {
        name: behaviour(name).rank_value(tables, behaviour(name).rank_metric) for name in TASK_NAMES
    }
    assert means == pytest.approx({"localization": 0.5, "captioning": 0.4, "diagnosis": 0.5})
    assert behaviour("diagnosis").rank_item_values(tables, "top1")[0] == ["case0001", "case0003"]


def test_judges_are_routed_by_each_tasks_module() -> None:
    from novabench.report.scoring import ScoringOptions

    def judge(a: str, b: str) -> bool:
        return a == b

    pair = ScoringOptions(matcher=judge)
    case = ScoringOptions(case_judge=object())
    keyword = ScoringOptions(keyword_judge=object())
    assert [pair.judge_kind(t) for t in TASK_NAMES] == [None, None, "pair"]
    assert [case.judge_kind(t) for t in TASK_NAMES] == [None, None, "case"]
    assert [keyword.judge_kind(t) for t in TASK_NAMES] == [None, "keyword", None]
    assert case.metric_options("diagnosis") == ({"case_judge": case.case_judge}, [])
    assert pair.metric_options("diagnosis") == ({"matcher": judge}, [])
    assert keyword.judge_of("captioning") is keyword.keyword_judge


def test_caption_options_are_settled_without_changing_the_callers() -> None:
    from novabench.metrics.captioning import settle_scoring_options

    given = {"exclude": ("METEOR", "BERTScore-F1"), "keyword_averaging": "micro"}
    settled, notes = settle_scoring_options(given)
    assert settled == {"exclude": ["BERTScore-F1", "METEOR"], "keyword_averaging": "micro"}
    assert notes == ["BERTScore-F1: not computed (--exclude)", "METEOR: not computed (--exclude)"]
    assert given["exclude"] == ("METEOR", "BERTScore-F1")


def test_a_bad_meteor_setting_is_refused_even_when_meteor_is_excluded() -> None:
    from novabench.metrics.captioning import settle_scoring_options

    with pytest.raises(ValueError, match="meteor"):
        settle_scoring_options({"exclude": ["METEOR", "BERTScore-F1"], "meteor": "fast"})
