"""Project-wide pytest fixtures and settings: the synthetic sample release, built once per
run (one xdist worker builds it, the others read it), and the depth of the Hypothesis
property searches.

``sample_release`` and ``sample_release_legacy`` hold the same content (8 cases, seed 0)
in the official v1 layout and in the legacy CSV layout. Treat them as read-only: copy
the folder first if a test must modify files.
"""

from __future__ import annotations

import gc
import itertools
import os
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

SAMPLE_CASES = 8
SAMPLE_SEED = 0

#: Whether whoever runs the tests chose OpenMP's thread count: then it is left as they set it.
THREADS_CHOSEN_BY_USER = "OMP_NUM_THREADS" in os.environ


def one_thread_per_xdist_worker() -> None:
    """Under xdist, torch's and OpenBLAS's thread pools get one thread each (OMP_NUM_THREADS=1,
    read when they load, after this module): with one worker per core, a second thread only
    spun against the other worker (tests/metrics/test_bertscore.py alone: 27.8 -> 19.3 CPU s).
    Subprocesses the tests start inherit it."""
    if os.environ.get("PYTEST_XDIST_WORKER") and not THREADS_CHOSEN_BY_USER:
        os.environ["OMP_NUM_THREADS"] = "1"


one_thread_per_xdist_worker()

# Every property test runs in the fast suite on a few examples (20: the sixteen searches cost
# 2-3 CPU s at 50), so each invariant is checked after every change; `make test-slow` reruns
# them all (`-m hypothesis`) at the depth they were written for. Choose with
# `--hypothesis-profile`; the fast one is the default.
settings.register_profile("fast", max_examples=20)
settings.register_profile("thorough", max_examples=300)


#: Tests of answer shapes the parsers read wrong on purpose (rules withdrawn after review):
#: each is a strict expected failure, so reading one right fails until it leaves the list.
KNOWN_LIMITATIONS = Path(__file__).parent / "run" / "known_limitations.txt"


def known_limitations() -> frozenset[str]:
    """The node ids listed in :data:`KNOWN_LIMITATIONS` (comments and blank lines left out)."""
    lines = KNOWN_LIMITATIONS.read_text(encoding="utf-8").splitlines()
    return frozenset(line for line in lines if line.strip() and not line.startswith("#"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    listed = known_limitations()
    for item in items:
        if item.nodeid in listed:
            item.add_marker(
                pytest.mark.xfail(
                    strict=True,
                    reason="known limitation: see tests/run/known_limitations.txt",
                )
            )


def pytest_configure(config: pytest.Config) -> None:
    if not config.getoption("--hypothesis-profile", default=None):
        settings.load_profile("fast")
    gc.callbacks.append(freeze_what_a_full_collection_left)


def freeze_what_a_full_collection_left(phase: str, info: dict[str, int]) -> None:
    """After each full garbage collection, freeze the objects it found alive.

    A test process holds millions of long-lived objects (numpy, pyarrow, torch, transformers,
    gradio, thousands of collected tests), and each full collection walked all of them again:
    13 of them per worker took 3-4 CPU s of each run. Frozen objects are not walked; those
    that die later are still freed by reference counting (only cycles among them stay).
    """
    if phase == "stop" and info["generation"] == 2:
        gc.freeze()


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """Freeze the garbage collector's objects once the run is over, in every process.

    At exit the interpreter collects every object once more: a worker holding torch,
    transformers, gradio and a few thousand tests' leftovers took seconds to end, and the
    run waited for it. Frozen objects are left out of that collection (they are still freed;
    cycles among them die with the process).
    """
    gc.freeze()


@pytest.hookimpl(optionalhook=True)  # runs without xdist (-p no:xdist) know no such hook
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`-n N` sends each test file whole to one worker, and each group of ``WORKER_GROUPS``
    (the files using evaluate, gradio, torch or nltk; those parsing the package) all to one.

    Each worker imports evaluate or gradio (seconds each) on the first test that needs them:
    with those tests together, one worker pays. A file's module fixtures (releases, exports,
    scoring runs) and per-process caches are then built once per run, not once per worker
    that happens to get one of its tests; the files, about 400, still spread the load evenly.
    (``--dist loadgroup`` would do this from marks, but xdist 3.8 tags node ids in a way
    pytest 9 ignores, so its groups are silently not formed.)
    """
    if config.getvalue("dist") != "load":
        return None  # any other --dist the user chose is theirs
    from xdist.scheduler import LoadScopeScheduling

    from tests.lazy_import import WORKER_GROUPS

    group_of = {path: group for group, paths in WORKER_GROUPS.items() for path in paths}

    class FilesWholeHeavyLibrariesTogether(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return group_of.get(path, path)

    return FilesWholeHeavyLibrariesTogether(config, log)


_evaluate_cache_parent: list[Path] = []  # made by this process's first call, then reused
_evaluate_cache_numbers = itertools.count()


def new_evaluate_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new empty folder, numbered in one parent made once per process.

    ``tmp_path_factory.mktemp`` lists its parent folder on every call to find the next number:
    one call per test that runs after evaluate is imported (thousands on that worker) grew
    quadratically (3,000 calls: 3.4 CPU s). Here the number is counted, not searched.
    """
    if not _evaluate_cache_parent:
        _evaluate_cache_parent.append(tmp_path_factory.mktemp("evaluate-caches"))
    folder = _evaluate_cache_parent[0] / str(next(_evaluate_cache_numbers))
    folder.mkdir()
    return folder


@pytest.fixture(autouse=True)
def evaluate_cache_per_test(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Once evaluate is imported, each test's evaluate modules keep their Arrow cache apart.

    A module instance locks ``<cache>/<name>/<config>/default_experiment-1-0.arrow.lock`` and
    keeps the lock until it is garbage collected; an instance whose ``compute`` raised inside
    ``pytest.raises`` lives on in a reference cycle. The next test's instance then waited a
    full second (evaluate's lock timeout) before taking another file name: about a dozen
    seconds per run, and more when other checkouts on the machine share ``~/.cache``.
    """
    config = sys.modules.get("evaluate.config")
    if config is None:  # never import evaluate here: most tests do not need it
        yield
        return
    default = config.HF_METRICS_CACHE
    config.HF_METRICS_CACHE = new_evaluate_cache(tmp_path_factory)
    try:
        yield
    finally:
        config.HF_METRICS_CACHE = default


def built_once_per_run(
    tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], Path]
) -> Path:
    """What ``build(folder)`` returns, built by one xdist worker for the whole run.

    Session fixtures are per process: under ``-n 2`` both workers built the sample, its legacy
    copy and the floor run (about 3 CPU s each time). The first worker to ask builds into the
    run's own temporary folder (the parent of the workers' ones) under a file lock; the other
    waits for it and reads the result. Without xdist the session builds it as before.
    """
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        return build(tmp_path_factory.mktemp(name))
    from filelock import FileLock

    folder = tmp_path_factory.getbasetemp().parent / f"shared-{name}"
    done = folder.with_name(folder.name + ".built")  # holds the path build returned
    with FileLock(str(folder) + ".lock"):
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)  # a worker that failed half-way
            folder.mkdir()
            done.write_text(str(build(folder)), encoding="utf-8")
        return Path(done.read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def sample_release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A v1-layout sample release (``data/nova-v1.parquet`` + ``images/``), 8 cases, seed 0."""
    from novabench.data.sample import write_sample_release

    def build(folder: Path) -> Path:
        return write_sample_release(
            folder / "nova-v1", n_cases=SAMPLE_CASES, seed=SAMPLE_SEED, layout="v1", progress=False
        )

    return built_once_per_run(tmp_path_factory, "sample", build)


@pytest.fixture(scope="session")
def sample_floor_run(sample_release: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The floor baselines' answers to all three tasks on ``sample_release`` (read-only)."""
    from novabench.cli import main

    def build(folder: Path) -> Path:
        out = folder / "floor.jsonl"
        args = ["run", "--data", str(sample_release), "--task", "all", "--baseline", "floor"]
        assert main([*args, "--out", str(out), "--no-progress"]) == 0
        return out

    return built_once_per_run(tmp_path_factory, "floor", build)


@pytest.fixture(scope="session")
def sample_release_legacy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same sample in the legacy layout (CSV files + ``test/``)."""
    from novabench.data.sample import write_sample_release

    def build(folder: Path) -> Path:
        return write_sample_release(
            folder / "nova-legacy",
            n_cases=SAMPLE_CASES,
            seed=SAMPLE_SEED,
            layout="legacy",
            progress=False,
        )

    return built_once_per_run(tmp_path_factory, "sample-legacy", build)


@pytest.fixture
def lock_holder() -> Iterator[Callable[..., Any]]:
    """Start a separate process that holds the writer lock of a path, as another writer would,
    until the test ends (or the test sends it a line): ``lock_holder(path, "nova run")``.
    """
    import subprocess

    import novabench

    env = {
        **os.environ,
        "PYTHONPATH": str(Path(novabench.__file__).resolve().parents[1]),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
    }
    started: list[subprocess.Popen[bytes]] = []

    def hold(path: Path, command: str = "nova run") -> subprocess.Popen[bytes]:
        code = (
            "import sys\n"
            "from novabench.run.lock import writer_lock\n"
            f"with writer_lock({str(path)!r}, {command!r}):\n"
            "    print('held', flush=True)\n"
            "    sys.stdin.readline()\n"
        )
        process = subprocess.Popen(
            [sys.executable, "-c", code],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        started.append(process)
        assert process.stdout is not None and process.stdout.readline() == b"held\n"
        return process

    yield hold
    for process in started:
        if process.poll() is None:
            process.communicate(b"\n", timeout=60)


@pytest.fixture
def file_notes() -> Iterator[Callable[[], list[str]]]:
    """The :class:`~novabench.errors.FileNoteWarning` messages the library told since the
    last call, each one (a library prints nothing: its notes are warnings).
    """
    import warnings

    from novabench.errors import FileNoteWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", FileNoteWarning)

        def take() -> list[str]:
            told = [str(w.message) for w in caught if issubclass(w.category, FileNoteWarning)]
            caught.clear()
            return told

        yield take
