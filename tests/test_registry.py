"""The task registry: every declaration points at real code and files."""

from __future__ import annotations

import ast
import inspect
from importlib import resources
from pathlib import Path

import pytest

from novabench.errors import NovaInputError
from novabench.registry import CASE_TASKS, IMAGE_TASKS, TASK_NAMES, TASKS, canonical_task, get_task
from tests.source_trees import parsed_source


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


# --------------------------------------------------------------------------- one home per task

_PACKAGE = Path(__file__).resolve().parents[1] / "src" / "novabench"
_FACES = (Path(__file__).resolve().parents[1] / "metrics" / "nova_metric",)
# The registry declares the tasks; each task's own module (novabench/tasks/<task>.py) holds
# how it is scored. Nowhere else may code decide by a task's name or its answer field.
_ALLOWED_TO_COMPARE = ("registry.py", "tasks/")
_FIELD_ATTRIBUTES = frozenset({"answer_field", "raw_field"})


def _string_constants(node: ast.AST) -> set[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return set().union(*(_string_constants(element) for element in node.elts))
    return set()


def _names_a_field_attribute(node: ast.AST) -> bool:
    return any(
        (isinstance(n, ast.Attribute) and n.attr in _FIELD_ATTRIBUTES)
        or (isinstance(n, ast.Name) and n.id in _FIELD_ATTRIBUTES)
        for n in ast.walk(node)
    )


def task_name_comparisons(source: str | ast.Module, filename: str = "<source>") -> list[str]:
    """Each place ``source`` (text, or its parsed tree) decides by a task's name or by an
    answer-field literal.

    Flagged: ``==``/``!=``/``in``/``not in`` with a canonical task name among the literals;
    the same with an answer/raw field literal against ``answer_field``/``raw_field``; a
    ``match`` case on a task name.
    """
    names = set(TASK_NAMES)
    fields = {field for spec in TASKS.values() for field in (spec.raw_field, spec.answer_field)}
    found = []
    tree = source if isinstance(source, ast.Module) else ast.parse(source, filename)
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            if not all(isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)) for op in node.ops):
                continue
            operands = [node.left, *node.comparators]
            literals = set().union(*(_string_constants(operand) for operand in operands))
            by_field = literals & fields and any(map(_names_a_field_attribute, operands))
            if literals & names or by_field:
                found.append(f"{filename}:{node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.match_case) and isinstance(node.pattern, ast.MatchValue):
            if _string_constants(node.pattern.value) & names:
                found.append(f"{filename}:{node.pattern.lineno}: case {ast.unparse(node.pattern)}")
    return found


def test_the_task_name_check_sees_every_form_of_branch() -> None:
    source = (
        "if task == 'diagnosis': pass\n"
        "if 'localization' in report['tasks']: pass\n"
        "if task in ('captioning', ALL): pass\n"
        "if spec.answer_field != 'boxes': pass\n"
        "match task:\n    case 'captioning': pass\n"
        # Not branches on a task: a column set, a field of a row, an unrelated word.
        "if set(header) <= {'case_id', 'diagnosis'}: pass\n"
        "if 'boxes' in row: pass\n"
        "if name == 'caption_text': pass\n"
    )
    assert [line.split(":")[1] for line in task_name_comparisons(source)] == [
        "1",
        "2",
        "3",
        "4",
        "6",
    ]


def test_no_module_outside_the_registry_and_the_task_modules_compares_a_task_name() -> None:
    files = [*_PACKAGE.rglob("*.py"), *(p for face in _FACES for p in face.rglob("*.py"))]
    found = []
    for path in files:
        relative = path.relative_to(_PACKAGE).as_posix() if _PACKAGE in path.parents else None
        if relative is not None and relative.startswith(_ALLOWED_TO_COMPARE):
            continue
        found += task_name_comparisons(parsed_source(path), str(path))
    assert found == [], "decide through novabench.tasks.<task>, not by name:\n" + "\n".join(found)


# Where a task's name may stand as a string outside the registry and the task modules: each
# file holds the English word "diagnosis", not the task (nothing else may name a task).
_WORD_NOT_TASK: dict[str, str] = {
    # the phrases a diagnosis statement opens with ("final diagnosis: ...")
    "lexicon/normalization.py": "diagnosis",
    # a category map's column and key, as a user's file names them
    "lexicon/taxonomy.py": "diagnosis",
    # a word the matcher never reads as a disease
    "metrics/diagnosis_matcher.py": "diagnosis",
    # JSON keys a model writes its diagnosis under
    "run/parsers/diagnoses.py": "diagnosis",
}


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring constants in ``tree`` (module, class, function)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def task_name_literals(source: str | ast.Module, filename: str = "<source>") -> list[str]:
    """Each string constant of ``source`` (text, or its parsed tree) that is a canonical task
    name, in reading order, docstrings (and so their examples) left out."""
    tree = source if isinstance(source, ast.Module) else ast.parse(source, filename)
    docstrings = _docstrings(tree)
    names = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and node.value in TASK_NAMES
        and id(node) not in docstrings
    ]
    names.sort(key=lambda node: (node.lineno, node.col_offset))  # in reading order
    return [f"{filename}:{node.lineno}: {node.value!r}" for node in names]


def test_the_task_name_literal_check_sees_names_outside_docstrings_only() -> None:
    source = (
        '"""Module: \'localization\' in a docstring is prose."""\n'
        "def f(report):\n"
        '    """>>> f({"tasks": {"captioning": {}}})"""\n'
        "    return report['tasks']['captioning']\n"
        "NAMES = {'diagnosis': 1, 'diagnoses': 2, 'localization task': 3}\n"
        "class C:\n"
        "    TASK = 'localization'\n"
    )
    assert [line.split(": ", 1)[1] for line in task_name_literals(source)] == [
        "'captioning'",
        "'diagnosis'",
        "'localization'",
    ]


def test_no_module_outside_the_registry_and_the_task_modules_names_a_task() -> None:
    """A task's behaviour lives in its module: code elsewhere loops over the registry (or
    names a task by its answer field, ``registry.task_answered_in``), never by its name."""
    files = [*_PACKAGE.rglob("*.py"), *(p for face in _FACES for p in face.rglob("*.py"))]
    found, words = [], set()
    for path in files:
        relative = path.relative_to(_PACKAGE).as_posix() if _PACKAGE in path.parents else None
        if relative is not None and relative.startswith(_ALLOWED_TO_COMPARE):
            continue
        for hit in task_name_literals(parsed_source(path), str(path)):
            if relative in _WORD_NOT_TASK and hit.endswith(f": {_WORD_NOT_TASK[relative]!r}"):
                words.add(relative)
            else:
                found.append(hit)
    assert found == [], "name the task through novabench.tasks.<task>:\n" + "\n".join(found)
    # An entry whose file no longer holds the word is dropped, so the list stays the truth.
    assert words == set(_WORD_NOT_TASK)


@pytest.mark.parametrize("name", TASK_NAMES)
def test_paper_keys_and_their_stand_ins_are_headline_keys(name: str) -> None:
    spec = TASKS[name]
    assert spec.paper_keys and set(spec.paper_keys) <= set(spec.headline_keys)
    for paper_key, other in spec.paper_key_stand_ins:
        # A key with a paper's name (a headline table key, or ModalityF1/BinaryF1, which the
        # paper defines beside its tables) and its stand-in, both headline keys.
        assert paper_key in spec.headline_keys and other in spec.headline_keys
        assert other not in spec.paper_keys  # another quantity, never a paper key itself
        assert spec.stands_in_for(other) == paper_key and other in spec.stand_ins(paper_key)
    # Every paper key of the tables that some procedure does not give has its stand-in.
    behaviour = spec.load_behaviour()
    for other, note in behaviour.stand_in_notes:
        assert spec.stands_in_for(other) is not None and "paper's" in note


def _card_protocol_rows() -> dict[str, str]:
    """key -> the metric card's "compare with the paper?" cell, from its Protocol note table."""
    import re
    from pathlib import Path

    card = Path(__file__).resolve().parents[1] / "metrics" / "nova_metric" / "README.md"
    section = card.read_text().split("## Protocol note", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, str] = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 4 or not cells[0].startswith("`"):
            continue
        for key in re.findall(r"`([^`]+)`", cells[0].split(" (")[0].split(" with ")[0]):
            rows[key] = cells[3]
    return rows


def _verdict(text: str) -> str:
    """ "yes", "with care" or "no": how a comparison text begins."""
    return next(word for word in ("with care", "yes", "no") if text.startswith(word))


def test_the_reports_comparison_column_agrees_with_the_metric_cards_protocol_note() -> None:
    """Each key the card's Protocol note judges is judged alike in every report's column
    (the card says why; the column says what), and each paper key is in the card."""
    rows = _card_protocol_rows()
    assert {"mAP@30", "top1-lexicon", "BLEU-4", "METEOR-exact+stem"} <= set(rows)
    for key, cell in rows.items():
        task = next(name for name, spec in TASKS.items() if key in spec.headline_keys)
        assert _verdict(TASKS[task].comparison_with_paper(key)) == _verdict(cell), key
    for spec in TASKS.values():
        for key, _ in spec.paper_comparison:
            assert key in spec.headline_keys and key in rows, key
