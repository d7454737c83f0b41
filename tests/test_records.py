"""novabench.records stays dependency-free, and what imports it stays light."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("datasets", "pyarrow", "numpy", "PIL")
SRC = Path(__file__).resolve().parents[1] / "src"


def _modules_after_import(module: str) -> set[str]:
    """Top-level packages in sys.modules after importing ``module`` in a fresh interpreter."""
    code = (
        f"import json, sys, {module}; "
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    path = os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])
    env = dict(os.environ, PYTHONPATH=path)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    return set(json.loads(out.stdout))


def test_records_imports_no_third_party_package() -> None:
    loaded = _modules_after_import("novabench.records")
    assert "novabench" in loaded  # the probe did import the package
    assert not loaded & set(HEAVY)


@pytest.mark.parametrize("heavy", ["datasets", "pyarrow"])
def test_diagnosis_metric_does_not_import_the_data_stack(heavy: str) -> None:
    loaded = _modules_after_import("novabench.metrics.diagnosis")
    assert "novabench" in loaded
    assert heavy not in loaded


def test_release_reexports_the_moved_names() -> None:
    from novabench import records
    from novabench.data import provenance, release, rows, validate

    assert release.ImageRecord is records.ImageRecord
    assert release.CaseRecord is records.CaseRecord
    assert release.is_placeholder_diagnosis is records.is_placeholder_diagnosis
    assert release.BOX_TOLERANCE == validate.BOX_TOLERANCE
    assert release.iter_image_rows is rows.iter_image_rows
    assert release.iter_case_rows is rows.iter_case_rows
    assert release.provenance_metadata is provenance.provenance_metadata
    for name in release.__all__:
        assert hasattr(release, name), name
