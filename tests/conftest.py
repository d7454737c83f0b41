"""Project-wide pytest fixtures and settings: the synthetic sample release, built once per
session, and the depth of the Hypothesis property searches.

``sample_release`` and ``sample_release_legacy`` hold the same content (8 cases, seed 0)
in the official v1 layout and in the legacy CSV layout. Treat them as read-only: copy
the folder first if a test must modify files.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

SAMPLE_CASES = 8
SAMPLE_SEED = 0

# Every property test runs in the fast suite on a few examples, so each invariant is checked
# after every change; `make test-slow` reruns them all (`-m hypothesis`) at the depth they
# were written for. Choose with `--hypothesis-profile`; the fast one is the default.
settings.register_profile("fast", max_examples=50)
settings.register_profile("thorough", max_examples=300)


def pytest_configure(config: pytest.Config) -> None:
    if not config.getoption("--hypothesis-profile", default=None):
        settings.load_profile("fast")


@pytest.hookimpl(optionalhook=True)  # runs without xdist (-p no:xdist) know no such hook
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`-n N` sends each test file whole to one worker, and ``HEAVY_LIBRARY_FILES`` all to one.

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

    from tests.lazy_import import HEAVY_LIBRARY_FILES

    class FilesWholeHeavyLibrariesTogether(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return "heavy libraries" if path in HEAVY_LIBRARY_FILES else path

    return FilesWholeHeavyLibrariesTogether(config, log)


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
    config.HF_METRICS_CACHE = tmp_path_factory.mktemp("evaluate-cache")
    try:
        yield
    finally:
        config.HF_METRICS_CACHE = default


@pytest.fixture(scope="session")
def sample_release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A v1-layout sample release (``data/nova-v1.parquet`` + ``images/``), 8 cases, seed 0."""
    from novabench.data.sample import write_sample_release

    root = tmp_path_factory.mktemp("sample") / "nova-v1"
    return write_sample_release(
        root, n_cases=SAMPLE_CASES, seed=SAMPLE_SEED, layout="v1", progress=False
    )


@pytest.fixture(scope="session")
def sample_floor_run(sample_release: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The floor baselines' answers to all three tasks on ``sample_release`` (read-only)."""
    from novabench.cli import main

    out = tmp_path_factory.mktemp("floor") / "floor.jsonl"
    args = ["run", "--data", str(sample_release), "--task", "all", "--baseline", "floor"]
    assert main([*args, "--out", str(out), "--no-progress"]) == 0
    return out


@pytest.fixture(scope="session")
def sample_release_legacy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same sample in the legacy layout (CSV files + ``test/``)."""
    from novabench.data.sample import write_sample_release

    root = tmp_path_factory.mktemp("sample") / "nova-legacy"
    return write_sample_release(
        root, n_cases=SAMPLE_CASES, seed=SAMPLE_SEED, layout="legacy", progress=False
    )
