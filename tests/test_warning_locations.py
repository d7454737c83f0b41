"""Every warning novabench gives points at the user's own line (edge28), as a note does.

A warning attributed to a line inside novabench is shown once per process for its text
under Python's default filter (once per location), however many calls of the user's
gave it, and a ``-W error::UserWarning:mymodule`` filter cannot pick it out. Each test
calls the public entry point a user calls and checks the recorded warning's file and
line are this file's calling line.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

from novabench.metrics.localization import LocalizationWarning
from novabench.metrics.stats import BootstrapWarning
from tests.lazy_import import LazyModule
from tests.metrics.test_meteor_variants import without_wordnet  # noqa: F401
from tests.release_factory import write_legacy_release, write_v1_release

# Imported by the first test that reads it (tests/lazy_import.py), not at collection.
evaluate = LazyModule("evaluate")

HERE = Path(__file__)
MODULE = str(HERE.resolve().parent.parent / "metrics" / "nova_metric")
NO_GOLD = dict(predictions=[{"boxes": [[0.0, 0.0, 10.0, 10.0]]}], references=[{"boxes": []}])


def where(caught: list[warnings.WarningMessage]) -> set[tuple[Path, int]]:
    return {(Path(told.filename), told.lineno) for told in caught}


def categories(caught: list[warnings.WarningMessage]) -> set[str]:
    return {told.category.__name__ for told in caught}


# --- the metrics functions and compute_task (the Python API of the metrics) -----------------


def test_score_localization_warns_at_the_callers_line() -> None:
    from novabench.metrics.localization import score_localization

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = sys._getframe().f_lineno + 1
        score_localization(NO_GOLD["predictions"], NO_GOLD["references"])
    assert categories(caught) == {"LocalizationWarning"}
    assert where(caught) == {(HERE, line)}


def test_compute_task_warnings_point_at_the_callers_line() -> None:
    from novabench.metrics.tasks import compute_task

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = sys._getframe().f_lineno + 1
        compute_task("localization", NO_GOLD["predictions"], NO_GOLD["references"])
    assert [told.category for told in caught] == [LocalizationWarning]
    assert where(caught) == {(HERE, line)}

    # One gold box among 20 images: resamples without it leave hit@30 undefined
    # (BootstrapWarning); boxes within [0, 1] (input notes); images resampled one by one.
    gold = [{"boxes": [[5.0, 5.0, 9.0, 9.0]]}] + [{"boxes": []}] * 19
    boxes = [{"boxes": [[0.0, 0.0, 1.0, 1.0]]}] * 20
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = sys._getframe().f_lineno + 1
        compute_task("localization", boxes, gold, n_resamples=50)
    assert categories(caught) == {"UserWarning", "BootstrapWarning"}
    # Two input notes (boxes near the origin, the same boxes on every image), the
    # image-bootstrap note and the undefined resamples.
    assert len(caught) == 4
    assert where(caught) == {(HERE, line)}


def test_a_caption_metric_note_points_at_the_callers_line(without_wordnet) -> None:  # noqa: F811
    from novabench.metrics.tasks import compute_task

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = sys._getframe().f_lineno + 1
        compute_task(
            "captioning", ["Axial T2: cyst."], ["Axial T2: a cyst."], exclude=["BERTScore-F1"]
        )
    assert [str(told.message)[:20] for told in caught] == ["METEOR not computed:"]
    assert where(caught) == {(HERE, line)}


def test_bootstrap_confidence_intervals_warns_at_the_callers_line() -> None:
    from novabench.metrics.localization import prepare_localization
    from novabench.metrics.stats import bootstrap_confidence_intervals

    gold = [{"boxes": [[0.0, 0.0, 10.0, 10.0]]}] + [{"boxes": []}] * 19
    evaluation = prepare_localization([{"boxes": [[0.0, 0.0, 10.0, 10.0]]}] * 20, gold)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = sys._getframe().f_lineno + 1
        bootstrap_confidence_intervals(evaluation, n_resamples=50)
    assert [told.category for told in caught] == [BootstrapWarning]
    assert where(caught) == {(HERE, line)}


def test_two_calls_from_two_lines_are_two_warnings_under_the_default_filter() -> None:
    # Shown once per location: at a line of novabench, the second call's was swallowed.
    from novabench.metrics.tasks import compute_task

    with warnings.catch_warnings(record=True) as caught:
        warnings.resetwarnings()
        warnings.simplefilter("default")
        compute_task("localization", NO_GOLD["predictions"], NO_GOLD["references"])
        compute_task("localization", NO_GOLD["predictions"], NO_GOLD["references"])
    assert [told.category for told in caught] == [LocalizationWarning] * 2
    assert len(where(caught)) == 2


#: Named items: compute_task scores them in the references' order, inside a block that
#: collects the warnings to rename the examples they name and then passes them on.
NAMED = dict(
    predictions=[{"boxes": [[0.0, 0.0, 10.0, 10.0]], "filename": "b.png"}],
    references=[{"boxes": [], "filename": "b.png"}],
)


@pytest.mark.parametrize("items", [NO_GOLD, NAMED], ids=["in_order", "renamed"])
def test_a_filter_naming_the_users_module_catches_the_warning(items: dict[str, Any]) -> None:
    from novabench.metrics.tasks import compute_task

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warnings.filterwarnings("error", category=UserWarning, module=__name__)
        with pytest.raises(LocalizationWarning, match="no reference has a gold box"):
            compute_task("localization", items["predictions"], items["references"])


@pytest.mark.parametrize("items", [NO_GOLD, NAMED], ids=["in_order", "renamed"])
def test_a_filter_showing_the_users_module_alone_shows_the_warning(items: dict[str, Any]) -> None:
    # Passed on after renaming, a warning went through the filters a second time as if
    # from a module named by its file's path: "ignore" everywhere but here dropped it.
    from novabench.metrics.tasks import compute_task

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("ignore")
        warnings.filterwarnings("always", module=__name__)
        line = sys._getframe().f_lineno + 1
        compute_task("localization", items["predictions"], items["references"])
    assert [told.category for told in caught] == [LocalizationWarning]
    assert isinstance(caught[0].message, LocalizationWarning)
    assert where(caught) == {(HERE, line)}


# --- the evaluate face: the user's evaluate.load(...) and metric.compute(...) lines ----------


def test_the_evaluate_face_warns_at_the_users_load_and_compute_lines() -> None:
    import novabench

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = sys._getframe().f_lineno + 1
        evaluate.load(novabench.metric_path())
    assert [str(told.message)[:40] for told in caught] == [
        "nova_metric: no configuration named, so "
    ]
    assert where(caught) == {(HERE, line)}

    metric = evaluate.load(MODULE, "localization")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = sys._getframe().f_lineno + 1
        metric.compute(**NO_GOLD)
    assert [told.category for told in caught] == [LocalizationWarning]
    assert where(caught) == {(HERE, line)}

    boxes = [{"boxes": [[0.0, 0.0, 10.0, 10.0]]}] * 4
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = sys._getframe().f_lineno + 1
        metric.compute(predictions=boxes, references=boxes, n_resamples=20)
    assert [str(told.message)[:40] for told in caught] == [
        "localization: the intervals resample ima"
    ]
    assert where(caught) == {(HERE, line)}


# --- the datasets face and the release readers ------------------------------------------------


def _legacy_without_rater_boxes(folder: Path) -> Path:
    release = write_legacy_release(folder, n_cases=2, image_size=(64, 64))
    (release / "bboxes_raters.csv").unlink()
    return release


def test_load_nova_and_the_builder_warn_at_the_callers_line(tmp_path: Path) -> None:
    from novabench.data.hf import NovaBuilder, NovaReleaseWarning, load_nova

    release = _legacy_without_rater_boxes(tmp_path / "nova")
    cache = str(tmp_path / "cache")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = sys._getframe().f_lineno + 1
        load_nova(release, cache_dir=cache)
    told = [w for w in caught if w.category is NovaReleaseWarning]
    assert len(told) == 1 and where(told) == {(HERE, line)}

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = sys._getframe().f_lineno + 1
        NovaBuilder(data_dir=str(release), cache_dir=cache)
    told = [w for w in caught if w.category is NovaReleaseWarning]
    assert len(told) == 1 and where(told) == {(HERE, line)}


def test_an_image_over_pils_limit_is_told_at_the_callers_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from PIL import Image

    from novabench.data.hf import load_nova
    from novabench.data.release import read_release

    release = write_v1_release(tmp_path / "nova", n_cases=1, image_size=(64, 64))
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 64 * 64 - 1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = sys._getframe().f_lineno + 1
        read_release(release)
    bombs = [w for w in caught if w.category is Image.DecompressionBombWarning]
    assert len(bombs) == 1 and where(bombs) == {(HERE, line)}  # one image

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = sys._getframe().f_lineno + 1
        load_nova(release, cache_dir=str(tmp_path / "cache"))
    bombs = [w for w in caught if w.category is Image.DecompressionBombWarning]
    assert len(bombs) == 1 and where(bombs) == {(HERE, line)}


# --- the judge cache and merge -----------------------------------------------------------------


def test_the_judge_cache_warns_at_the_callers_line(tmp_path: Path) -> None:
    from novabench.metrics.judge import OpenAIChatJudge, verdict_cache_key
    from tests.fake_openai_server import FakeOpenAIServer

    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = sys._getframe().f_lineno + 1
        OpenAIChatJudge("http://127.0.0.1:9/v1", "judge-model", cache_dir=blocker / "cache")
    assert [str(told.message)[:18] for told in caught] == ["judge cache folder"]
    assert where(caught) == {(HERE, line)}

    with FakeOpenAIServer(answer=lambda body: '{"match": true}') as server:
        judge = OpenAIChatJudge(server.base_url, "judge-model", cache_dir=tmp_path, backoff=0.0)
        key = verdict_cache_key(judge.identity, judge.prompt_version, "Glioma", "Glioma")
        (tmp_path / key[:2]).mkdir()
        (tmp_path / key[:2] / f"{key}.json").write_text("not JSON", encoding="utf-8")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            line = sys._getframe().f_lineno + 1
            assert judge("Glioma", "Glioma") is True
    assert [str(told.message)[:17] for told in caught] == ["judge cache entry"]
    assert where(caught) == {(HERE, line)}


def test_a_judge_cache_warning_on_a_worker_thread_names_the_callers_line(tmp_path: Path) -> None:
    # The judges ask from a thread pool: a worker's frames end in concurrent.futures, so
    # the line is the one that called the judge, attached when the work was handed over.
    import shutil

    from novabench.metrics.judge import OpenAICaseJudge, OpenAIChatJudge
    from tests.fake_openai_server import FakeOpenAIServer

    def answer(body: dict[str, Any]) -> str:
        return '{"match": true, "matched_slot": 1}'

    def unwritable(folder: Path) -> None:  # opened fine, then its folder became a file
        shutil.rmtree(folder)
        folder.write_text("not a folder")

    with FakeOpenAIServer(answer=answer) as server:
        pair = OpenAIChatJudge(server.base_url, "m", cache_dir=tmp_path / "p", backoff=0.0)
        case = OpenAICaseJudge(server.base_url, "m", cache_dir=tmp_path / "c", backoff=0.0)
        unwritable(tmp_path / "p")
        unwritable(tmp_path / "c")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            line = sys._getframe().f_lineno + 1
            assert pair.match_many([("Glioma", "Abscess"), ("Glioma", "Glioma")]) == [True] * 2
        assert [str(told.message)[:18] for told in caught] == ["judge cache folder"]
        assert where(caught) == {(HERE, line)}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            line = sys._getframe().f_lineno + 1
            verdicts = case.judge_cases([("Glioma", ["Glioma"]), ("Abscess", ["Cyst"])])
        assert [verdict.matched_slot for verdict in verdicts] == [1, 1]
        assert [str(told.message)[:18] for told in caught] == ["judge cache folder"]
        assert where(caught) == {(HERE, line)}


def test_merge_tells_an_unverified_shard_at_the_callers_line(
    sample_release: Path, tmp_path: Path
) -> None:
    from novabench.run.manifest import UnverifiedFileWarning
    from novabench.run.predictions import merge_prediction_files
    from tests.run.test_unverified_bytes_carried import shards_one_without_digest

    first, second = shards_one_without_digest(sample_release, tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = sys._getframe().f_lineno + 1
        merge_prediction_files([first, second], tmp_path / "merged.jsonl")
    assert [told.category for told in caught] == [UnverifiedFileWarning]
    assert where(caught) == {(HERE, line)}


def test_no_module_of_the_package_warns_but_through_errors() -> None:
    # A fixed stacklevel is right for one way in only: every warning goes through
    # errors.warn_at_caller / note (and a collected one through errors.pass_on).
    import ast

    import novabench

    package = Path(novabench.__file__).parent
    direct = []
    for path in sorted(package.rglob("*.py")):
        if path.name == "errors.py" and path.parent == package:
            continue
        text = path.read_text(encoding="utf-8")
        if "warn" not in text:  # no call below can be written without it: not parsed
            continue
        tree = ast.parse(text)
        from_warnings = {
            alias.asname or alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module == "warnings"
            for alias in node.names
        }
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            function = node.func
            named = (
                isinstance(function, ast.Attribute)
                and isinstance(function.value, ast.Name)
                and function.value.id == "warnings"
                and function.attr in ("warn", "warn_explicit")
            ) or (
                isinstance(function, ast.Name)
                and function.id in from_warnings & {"warn", "warn_explicit"}
            )
            if named:
                direct.append(f"{path.relative_to(package)}:{node.lineno}")
    assert direct == []


def test_evaluate_model_warns_at_the_callers_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from PIL import Image

    from novabench import evaluate_model

    def diagnose(image: object, prompt: str) -> str:
        return '{"most_likely_diagnosis": "glioma"}'

    release = write_v1_release(tmp_path / "nova", n_cases=1, image_size=(64, 64))
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 64 * 64 - 1)
    settings = dict(tasks="diagnosis", n_resamples=0, progress=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = sys._getframe().f_lineno + 1
        evaluate_model(diagnose, release, run_file=tmp_path / "run.jsonl", **settings)
    bombs = [w for w in caught if w.category is Image.DecompressionBombWarning]
    assert len(bombs) == 1 and where(bombs) == {(HERE, line)}
