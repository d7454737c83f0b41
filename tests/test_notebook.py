"""notebooks/quickstart.ipynb: committed without outputs, and it runs from top to bottom."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "quickstart.ipynb"


def test_notebook_is_committed_without_outputs() -> None:
    nbformat = pytest.importorskip("nbformat")
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(notebook)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code and all(cell.outputs == [] and cell.execution_count is None for cell in code)


# Slow: starts a Jupyter kernel, builds a sample, runs and scores the floor (~40 s).
@pytest.mark.slow
def test_notebook_runs_offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    source = str(Path(__file__).resolve().parents[1] / "src")
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(filter(None, [source, os.environ.get("PYTHONPATH")]))
    )
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(
        notebook,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute()
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    outputs = [output for cell in code for output in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    text = "".join(o.get("text", "") for o in outputs)
    assert "localization  mAP@30" in text

    def outputs_of(call: str) -> list[Any]:
        (cell,) = [cell for cell in code if call in cell.source]
        return list(cell.outputs)

    def pictures(cell_outputs: list[Any]) -> int:
        return sum("image/png" in o.get("data", {}) for o in cell_outputs)

    def html(cell_outputs: list[Any]) -> str:
        return "".join(o.get("data", {}).get("text/html", "") for o in cell_outputs)

    # The per-item tables: the worst images by best IoU, with pandas.
    worst = html(outputs_of("result.images"))
    assert "best_iou" in worst and "case0" in worst and "top5" in worst
    # The hit-rate curve and the parse-status mix, and the human reference in numbers.
    hit_rate = outputs_of("hit_rate_curve(")
    assert pictures(hit_rate) == 2 and "rater 1 vs gold" in html(hit_rate)
    # One breakdown by pathology category per task, and the gallery.
    assert pictures(outputs_of("breakdown_figure(")) == 3
    assert pictures(outputs_of("gallery_figure(")) == 1
    # The lead's placeholder is gone.
    assert not [cell for cell in notebook.cells if "LEAD" in cell.source]
