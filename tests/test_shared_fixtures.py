"""The session fixtures every xdist worker reads are built once per run (tests/conftest.py)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.conftest import THREADS_CHOSEN_BY_USER, built_once_per_run


class WorkerTempFactory:
    """A worker's ``tmp_path_factory``: its base folder sits in the run's folder, as xdist's."""

    def __init__(self, run_folder: Path, worker: str) -> None:
        self.base = run_folder / f"popen-{worker}"

    def getbasetemp(self) -> Path:
        return self.base

    def mktemp(self, name: str) -> Path:
        folder = self.base / name
        folder.mkdir(parents=True)
        return folder


def test_the_second_worker_reads_what_the_first_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[Path] = []

    def build(folder: Path) -> Path:
        built.append(folder)
        (folder / "release").write_text("eight cases", encoding="utf-8")
        return folder / "release"

    paths = []
    for worker in ("gw0", "gw1"):
        monkeypatch.setenv("PYTEST_XDIST_WORKER", worker)
        paths.append(built_once_per_run(WorkerTempFactory(tmp_path, worker), "sample", build))
    assert built == [tmp_path / "shared-sample"]
    assert paths == [tmp_path / "shared-sample" / "release"] * 2
    assert paths[1].read_text(encoding="utf-8") == "eight cases"


def test_a_build_that_failed_half_way_is_built_again_from_an_empty_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    factory = WorkerTempFactory(tmp_path, "gw0")

    def fails(folder: Path) -> Path:
        (folder / "half-written.png").write_bytes(b"\x89PNG")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        built_once_per_run(factory, "sample", fails)
    again = built_once_per_run(factory, "sample", lambda folder: folder)
    assert again == tmp_path / "shared-sample" and list(again.iterdir()) == []


def test_without_xdist_the_session_builds_in_its_own_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    folder = built_once_per_run(WorkerTempFactory(tmp_path, "main"), "sample", lambda f: f)
    assert folder == tmp_path / "popen-main" / "sample"


def test_an_xdist_worker_runs_torch_and_blas_on_one_thread() -> None:
    """Each worker has a core: the libraries' own thread pools only spun against the other."""
    if not os.environ.get("PYTEST_XDIST_WORKER") or THREADS_CHOSEN_BY_USER:
        pytest.skip("only under xdist, without a thread count the user chose")
    threadpoolctl = pytest.importorskip("threadpoolctl")
    import numpy  # noqa: F401  (its OpenBLAS must be loaded to be listed)

    pools = threadpoolctl.threadpool_info()
    assert {pool["internal_api"] for pool in pools} >= {"openblas"}
    assert {pool["num_threads"] for pool in pools} == {1}, pools
    if "torch" in sys.modules:  # loaded by an earlier test of this worker
        assert sys.modules["torch"].get_num_threads() == 1
