"""The task registry: every declaration points at real code and files."""

from __future__ import annotations

import inspect
from importlib import resources

import pytest

from novabench.errors import NovaInputError
from novabench.registry import CASE_TASKS, IMAGE_TASKS, TASK_NAMES, TASKS, canonical_task, get_task


@pytest.mark.parametrize("name", TASK_NAMES)
def test_parser_and_scorer_resolve_to_functions_of_the_declared_shape(name: str) -> None:
    spec = TASKS[name]
    parser = spec.load_parser()
    scorer = spec.load_scorer()
    assert parser.__name__ == spec.parser.split(":")[1]
    assert list(inspect.signature(scorer).parameters)[:2] == ["predictions", "references"]


@pytest.mark.parametrize("name", TASK_NAMES)
def test_metric_options_are_the_scorers_keyword_options(name: str) -> None:
    spec = TASKS[name]
    parameters = inspect.signature(spec.load_scorer()).parameters.values()
    keyword_only = {p.name for p in parameters if p.kind is inspect.Parameter.KEYWORD_ONLY}
    assert set(spec.metric_options) == keyword_only


@pytest.mark.parametrize("name", TASK_NAMES)
def test_reference_field_is_a_column_of_the_dataset_rows_of_its_unit(name: str) -> None:
    from novabench.data.schema import case_features, image_features

    spec = TASKS[name]
    features = image_features([]) if spec.unit == "image" else case_features([])
    assert spec.reference_field in features


@pytest.mark.parametrize("name", TASK_NAMES)
def test_prompt_resource_is_shipped(name: str) -> None:
    prompt = (
        resources.files("novabench").joinpath("resources").joinpath(TASKS[name].prompt_resource)
    )
    assert prompt.read_text(encoding="utf-8").strip()


@pytest.mark.parametrize("name", TASK_NAMES)
def test_failure_statuses_are_declared_statuses(name: str) -> None:
    spec = TASKS[name]
    assert spec.failure_statuses <= set(spec.parse_statuses)
    assert "ok" in spec.parse_statuses and "ok" not in spec.failure_statuses


def test_units_partition_the_tasks() -> None:
    assert set(IMAGE_TASKS) | set(CASE_TASKS) == set(TASK_NAMES)
    assert not set(IMAGE_TASKS) & set(CASE_TASKS)
    assert {TASKS[t].key_field for t in IMAGE_TASKS} == {"filename"}
    assert {TASKS[t].key_field for t in CASE_TASKS} == {"case_id"}


def test_fields_are_unique_across_tasks_of_one_unit() -> None:
    # One predictions line carries every task of its unit: a field may belong to one task only.
    for unit_tasks in (IMAGE_TASKS, CASE_TASKS):
        fields = [f for t in unit_tasks for f in TASKS[t].fields]
        assert len(fields) == len(set(fields))


@pytest.mark.parametrize(
    "typed, expected",
    [
        ("Localisation", "localization"),
        ("detection", "localization"),
        ("caption", "captioning"),
        ("diagnostic reasoning", "diagnosis"),
        ("DIAGNOSIS", "diagnosis"),
    ],
)
def test_canonical_task_folds_spellings(typed: str, expected: str) -> None:
    assert canonical_task(typed) == expected
    assert get_task(typed) is TASKS[expected]


def test_unknown_task_names_the_known_ones() -> None:
    with pytest.raises(NovaInputError, match="localization, captioning, diagnosis"):
        get_task("segmentation")


@pytest.mark.parametrize("name", TASK_NAMES)
def test_paper_keys_and_their_stand_ins_are_headline_keys(name: str) -> None:
    spec = TASKS[name]
    assert spec.paper_keys and set(spec.paper_keys) <= set(spec.headline_keys)
    for paper_key, other in spec.paper_key_stand_ins:
        assert paper_key in spec.paper_keys and other in spec.headline_keys
        assert other not in spec.paper_keys  # another quantity, never a paper key itself
