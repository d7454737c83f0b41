"""Every ``nova ... --help`` is plain text: no reStructuredText from the docstrings it reuses."""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from pathlib import Path

import pytest

from novabench.cli import build_parser, main

# Inline literals and Sphinx roles (:func:`x`, :class:`x`, :mod:`x`...): markup for the API
# documentation that a terminal shows as noise.
# Also Markdown-style `code` and a paragraph's "::" that opens a literal block.
MARKUP = re.compile(r"`|:(?:func|class|meth|mod|data|attr|exc|obj|py:\w+):`|\S::$", re.MULTILINE)


def command_paths(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> list[tuple[str, ...]]:
    """Every (sub-)command reachable from ``parser``, as the words that name it."""
    paths = [path]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                paths += command_paths(sub, (*path, name))
    return paths


PATHS = command_paths(build_parser())


def test_every_command_is_walked() -> None:
    names = {path[0] for path in PATHS if path}
    assert {"run", "parse", "evaluate", "space"} <= names
    assert ("space", "build") in PATHS


@pytest.mark.parametrize("path", PATHS, ids=lambda path: " ".join(path) or "nova")
def test_help_has_no_rst_markup(path: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*path, "--help"]) == 0
    shown = capsys.readouterr().out
    assert shown.startswith("usage: nova")
    assert not MARKUP.findall(shown), MARKUP.findall(shown)


def test_the_docstring_descriptions_keep_their_words(capsys: pytest.CaptureFixture[str]) -> None:
    main(["parse", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert "adds parse_status;" in shown and "(nova run --box-convention)" in shown


def _parser_of(path: tuple[str, ...]) -> argparse.ArgumentParser:
    """The parser of ``nova *path``."""
    parser = build_parser()
    for word in path:
        parser = next(
            action.choices[word]
            for action in parser._actions
            if isinstance(action, argparse._SubParsersAction)
        )
    return parser


def option_help(path: tuple[str, ...], option: str) -> str:
    """The help text of ``option`` of ``nova *path``, as argparse holds it."""
    parser = _parser_of(path)
    return next(a.help for a in parser._actions if option in a.option_strings) or ""


@pytest.mark.parametrize("command", ["evaluate", "compare"])
@pytest.mark.parametrize("option", ["--bootstrap", "--seed", "--keyword-averaging", "--confidence"])
def test_scoring_options_state_their_defaults(command: str, option: str) -> None:
    default = next(a.default for a in _parser_of((command,))._actions if option in a.option_strings)
    assert f"default {default}" in option_help((command,), option)


def test_bertscore_layers_help_names_the_default_layer() -> None:
    assert "17" in option_help(("evaluate",), "--bertscore-layers")


def test_run_baseline_help_lists_every_baseline() -> None:
    from novabench.run.baselines import BASELINES

    shown = option_help(("run",), "--baseline")
    assert BASELINES and all(name in shown for name in BASELINES)


def test_evaluate_description_mentions_html_and_items(capsys: pytest.CaptureFixture[str]) -> None:
    main(["evaluate", "--help"])
    description = capsys.readouterr().out.split("options:")[0]
    assert "HTML" in description and "--items" in description


@pytest.mark.parametrize("path", PATHS, ids=lambda path: " ".join(path) or "nova")
def test_a_command_with_a_quiet_switch_takes_both_spellings(path: tuple[str, ...]) -> None:
    # One way to hide the bars everywhere: -q and --quiet together, or neither.
    strings = {string for action in _parser_of(path)._actions for string in action.option_strings}
    quiet = {"-q", "--quiet"} & strings
    assert quiet in (set(), {"-q", "--quiet"}), (path, quiet)
    if "--no-progress" in strings:
        assert quiet, path


def _runs_something(parser: argparse.ArgumentParser) -> bool:
    """Whether ``parser`` is a command that runs (not a group such as ``nova metric``)."""
    return not any(isinstance(a, argparse._SubParsersAction) for a in parser._actions)


COMMANDS_THAT_RUN = [path for path in PATHS if path and _runs_something(_parser_of(path))]


def test_the_walk_reaches_the_nested_commands() -> None:
    assert {("parse",), ("metric", "copy"), ("metric", "path"), ("space", "build")} <= set(
        COMMANDS_THAT_RUN
    )


@pytest.mark.parametrize("path", COMMANDS_THAT_RUN, ids=" ".join)
def test_every_command_takes_quiet_as_the_readme_says(path: tuple[str, ...]) -> None:
    # README: "-q/--quiet hides them, in every command"; a script passing it to each step
    # must not fail on one (nova parse and nova metric copy refused it).
    strings = {s for action in _parser_of(path)._actions for s in action.option_strings}
    assert {"-q", "--quiet"} <= strings, path


def test_quiet_hides_the_bars_of_nova_parse(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    import novabench.progress as progress
    from tests.release_factory import write_v1_release

    release = write_v1_release(tmp_path / "release", n_cases=1, image_size=(32, 32))
    raw = tmp_path / "raw.jsonl"
    raw.write_text(json.dumps({"filename": "case0001_001.png", "raw_boxes": "no target"}) + "\n")
    shown: list[bool] = []
    real = progress.progress_enabled

    def watched(enabled: bool):  # type: ignore[no-untyped-def]
        shown.append(enabled)
        return real(enabled)

    monkeypatch.setattr(progress, "progress_enabled", watched)
    out = str(tmp_path / "pred.jsonl")
    assert main(["parse", str(raw), "--data", str(release), "--out", out, "-q"]) == 0
    assert shown == [False]


def _list_options(path: tuple[str, ...]) -> list[argparse.Action]:
    """The options of ``nova *path`` that take several values at once (``--x A B``)."""
    return [
        action
        for action in _parser_of(path)._actions
        if action.option_strings and action.nargs in ("+", "*")
    ]


def test_the_walk_finds_the_list_options() -> None:
    found = {(path, a.option_strings[0]) for path in PATHS for a in _list_options(path)}
    assert {(("evaluate",), "--predictions"), (("compare",), "--a"), (("compare",), "--b")} <= found


@pytest.mark.parametrize("path", COMMANDS_THAT_RUN, ids=" ".join)
def test_a_list_option_given_twice_keeps_both_lists(path: tuple[str, ...]) -> None:
    # user13: `--predictions A --predictions B` scored B alone, with no word; a repeated
    # `--exclude` (append) accumulates, so every option taking lists must too.
    parser = _parser_of(path)
    for action in _list_options(path):
        namespace = argparse.Namespace(**{action.dest: None})
        action(parser, namespace, ["a.jsonl", "b.jsonl"], action.option_strings[0])
        action(parser, namespace, ["c.jsonl"], action.option_strings[0])
        assert getattr(namespace, action.dest) == ["a.jsonl", "b.jsonl", "c.jsonl"], (path, action)


def test_evaluate_and_compare_read_every_repeated_predictions_option() -> None:
    parser = build_parser()
    evaluate = parser.parse_args(
        ["evaluate", "--data", "D", "--out", "r.json", "--predictions", "A", "--predictions", "B"]
    )
    assert evaluate.predictions == ["A", "B"]
    compare = parser.parse_args(
        ["compare", "--data", "D", "--out", "c.json", "--a", "A1", "--a", "A2", "--b", "B1", "B2"]
    )
    assert (compare.a, compare.b) == (["A1", "A2"], ["B1", "B2"])


def test_a_command_line_naming_a_command_builds_that_command_only(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import novabench.cli as cli

    built: list[list[str]] = []
    real = cli.build_parser

    def recording(commands: Sequence[str] = cli.COMMANDS) -> argparse.ArgumentParser:
        built.append(list(commands))
        return real(commands)

    monkeypatch.setattr(cli, "build_parser", recording)
    assert main(["info", "--help"]) == 0
    assert main(["--help"]) == 0
    assert main(["evalute", "--data", "x"]) == 2  # a typo: the error lists every command
    assert built == [["info"], list(cli.COMMANDS), list(cli.COMMANDS)]
    error = capsys.readouterr().err
    assert "invalid choice: 'evalute'" in error
    assert all(f"'{name}'" in error for name in cli.COMMANDS), error


@pytest.mark.parametrize("path", [path for path in PATHS if path], ids=" ".join)
def test_a_command_built_alone_parses_and_helps_as_among_all(path: tuple[str, ...]) -> None:
    alone = build_parser([path[0]])
    for word in path:
        alone = next(
            action.choices[word]
            for action in alone._actions
            if isinstance(action, argparse._SubParsersAction)
        )
    among_all = _parser_of(path)
    assert alone.format_help() == among_all.format_help()
    assert _settings(alone) == _settings(among_all)


def _settings(parser: argparse.ArgumentParser) -> list[tuple[object, ...]]:
    """What each option of ``parser`` takes and gives (besides its help, compared as text)."""
    return [
        (action.dest, action.option_strings, action.nargs, action.default, action.required)
        + (action.type, action.choices, parser.get_default(action.dest))
        for action in parser._actions
        if not isinstance(action, argparse._SubParsersAction)
    ]
