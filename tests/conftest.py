"""Project-wide pytest fixtures: the synthetic sample release, built once per session.

``sample_release`` and ``sample_release_legacy`` hold the same content (8 cases, seed 0)
in the official v1 layout and in the legacy CSV layout. Treat them as read-only: copy
the folder first if a test must modify files.
"""

from __future__ import annotations

from pathlib import Path

import pytest

SAMPLE_CASES = 8
SAMPLE_SEED = 0


@pytest.fixture(scope="session")
def sample_release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A v1-layout sample release (``data/nova-v1.parquet`` + ``images/``), 8 cases, seed 0."""
    from novabench.data.sample import write_sample_release

    root = tmp_path_factory.mktemp("sample") / "nova-v1"
    return write_sample_release(
        root, n_cases=SAMPLE_CASES, seed=SAMPLE_SEED, layout="v1", progress=False
    )


@pytest.fixture(scope="session")
def sample_release_legacy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same sample in the legacy layout (CSV files + ``test/``)."""
    from novabench.data.sample import write_sample_release

    root = tmp_path_factory.mktemp("sample") / "nova-legacy"
    return write_sample_release(
        root, n_cases=SAMPLE_CASES, seed=SAMPLE_SEED, layout="legacy", progress=False
    )
