"""Every ``nova ... --help`` is plain text: no reStructuredText from the docstrings it reuses."""

from __future__ import annotations

import argparse
import re

import pytest

from novabench.cli import build_parser, main

# Inline literals and Sphinx roles (:func:`x`, :class:`x`, :mod:`x`...): markup for the API
# documentation that a terminal shows as noise.
MARKUP = re.compile(r"``|:(?:func|class|meth|mod|data|attr|exc|obj|py:\w+):`")


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
