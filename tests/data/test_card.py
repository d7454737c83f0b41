"""The dataset card: generated YAML reads back as the schema; the body states the release's numbers."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import datasets
import pytest
import yaml
from huggingface_hub import DatasetCard

from novabench.data import card as card_module
from novabench.data.card import (
    ConfigSize,
    ReleaseSummary,
    check_dataset_card,
    render_dataset_card,
    summarize_release,
)
from novabench.data.release import read_release
from novabench.data.schema import case_features, image_features
from novabench.errors import NovaInputError
from tests.release_factory import default_rows, write_v1_release

EXTRA_KEYS = ("differential_diagnosis", "link (Eurorad)")


@pytest.fixture(scope="module")
def rows() -> list[dict[str, Any]]:
    rows = default_rows(n_cases=5, image_size=(64, 64))
    for row in rows:
        row["meta"]["link (Eurorad)"] = f"https://example.org/{row['case_id']}"
    return rows


@pytest.fixture(scope="module")
def release(rows: list[dict[str, Any]], tmp_path_factory: pytest.TempPathFactory) -> Any:
    return read_release(
        write_v1_release(tmp_path_factory.mktemp("card") / "nova", rows, image_size=(64, 64))
    )


@pytest.fixture(scope="module")
def features() -> dict[str, datasets.Features]:
    return {"images": image_features(EXTRA_KEYS), "cases": case_features(EXTRA_KEYS)}


@pytest.fixture(scope="module")
def sizes() -> dict[str, ConfigSize]:
    return {"images": ConfigSize(9, 12_345, 10_000), "cases": ConfigSize(5, 678, 900)}


@pytest.fixture(scope="module")
def card_text(
    release: Any, features: dict[str, datasets.Features], sizes: dict[str, ConfigSize]
) -> str:
    return render_dataset_card(
        summarize_release(release), features, sizes_by_config=sizes, hub_id="me/nova"
    )


def _header(text: str) -> dict[str, Any]:
    match = re.match(r"^---\n(.*?)\n---\n", text, re.DOTALL)
    assert match, "card must start with a YAML block"
    return yaml.safe_load(match.group(1))


def test_header_lists_both_configs_with_images_default(card_text: str) -> None:
    configs = {c["config_name"]: c for c in _header(card_text)["configs"]}
    assert configs == {
        "images": {
            "config_name": "images",
            "data_files": [{"split": "test", "path": "data/images/test-*"}],
            "default": True,
        },
        "cases": {
            "config_name": "cases",
            "data_files": [{"split": "test", "path": "data/cases/test-*"}],
        },
    }


def test_header_dataset_info_equals_schema_and_sizes(
    card_text: str, features: dict[str, datasets.Features], sizes: dict[str, ConfigSize]
) -> None:
    infos = {info["config_name"]: info for info in _header(card_text)["dataset_info"]}
    assert sorted(infos) == ["cases", "images"]
    for name in ("images", "cases"):
        assert datasets.Features._from_yaml_list(infos[name]["features"]) == features[name]
        assert infos[name]["splits"] == [
            {
                "name": "test",
                "num_bytes": sizes[name].num_bytes,
                "num_examples": sizes[name].num_examples,
            }
        ]
        assert infos[name]["download_size"] == sizes[name].download_size
        assert infos[name]["dataset_size"] == sizes[name].num_bytes
    names = [f["name"] for f in infos["images"]["features"]]
    assert names[-2:] == ["differential_diagnosis", "link_Eurorad"]


def test_header_hub_metadata(card_text: str) -> None:
    header = _header(card_text)
    assert header["license"] == "cc-by-nc-sa-4.0"
    assert header["pretty_name"] == "NOVA"
    assert header["language"] == ["en"]
    assert header["size_categories"] == ["n<1K"]
    assert {"object-detection", "image-to-text"} <= set(header["task_categories"])
    assert set(header["tags"]) >= {
        "medical",
        "mri",
        "brain",
        "neuroradiology",
        "anomaly-detection",
        "benchmark",
        "evaluation-only",
    }


def test_huggingface_hub_and_datasets_read_the_card_back(
    card_text: str, features: dict[str, datasets.Features]
) -> None:
    from datasets.info import DatasetInfosDict
    from datasets.utils.metadata import MetadataConfigs

    data = DatasetCard(card_text).data
    assert data.to_dict() == _header(card_text)
    assert MetadataConfigs.from_dataset_card_data(data).get_default_config_name() == "images"
    infos = DatasetInfosDict.from_dataset_card_data(data)
    assert infos["images"].features == features["images"]
    assert infos["cases"].splits["test"].num_examples == 5
    assert check_dataset_card(card_text, features)["license"] == "cc-by-nc-sa-4.0"


def test_body_states_the_release_numbers(card_text: str, rows: list[dict[str, Any]]) -> None:
    # expected numbers counted here from the raw rows, independently of summarize_release
    n_images = len(rows)
    n_cases = len({row["case_id"] for row in rows})
    gold = sum(1 for row in rows for box in row["bboxes"] or [] if box["source"] == "gold")
    raters = sum(1 for row in rows for box in row["bboxes"] or [] if box["source"] != "gold")
    without = sum(1 for row in rows if not row["bboxes"])
    placeholders = len(
        {
            row["case_id"]
            for row in rows
            if row["meta"]["final_diagnosis"] == "Final diagnosis not found."
        }
    )
    assert (n_images, n_cases, placeholders) == (9, 5, 1)
    assert f"| images (2-D MRI slices, PNG) | {n_images} |" in card_text
    assert f"| cases (one patient, one teaching case) | {n_cases} |" in card_text
    assert f"| gold (consensus) boxes | {gold} |" in card_text
    assert f"| individual rater boxes | {raters} (rater1, rater2) |" in card_text
    assert f"| images without any gold box | {without} |" in card_text
    assert f"| cases whose final diagnosis is a placeholder | {placeholders} |" in card_text
    assert f"({placeholders} of {n_cases} cases in this" in card_text
    assert "Images per case (number of images: number of cases): 1: 2, 2: 2, 3: 1." in card_text
    assert "| image sizes (width x height, count) | 64x64: 9 |" in card_text


def test_body_sections_and_facts(card_text: str) -> None:
    for section in (
        "## Dataset Summary",
        "## Supported Tasks",
        "### Evaluation only: never train on this data",
        "### Data Instances",
        "### Data Fields",
        "### Bounding boxes",
        "### Data Splits",
        "## How to use",
        "## Dataset Creation",
        "## Considerations for Using the Data",
        "## Licensing Information",
        "## Citation Information",
    ):
        assert section in card_text
    assert "[x, y, width, height]" in card_text and "top-left corner" in card_text
    assert "CC BY 4.0" in card_text and "CC BY-NC-SA 4.0" in card_text
    assert "Eurorad" in card_text and "2015" in card_text
    assert 'load_dataset("me/nova", "images", split="test", streaming=True)' in card_text
    assert "load_nova" in card_text
    assert "2505.14064" in card_text and "@inproceedings" in card_text
    assert "${" not in card_text  # every placeholder filled


def test_fields_tables_list_every_column(
    card_text: str, features: dict[str, datasets.Features]
) -> None:
    fields = card_text.split("### Data Fields", 1)[1].split("### Bounding boxes", 1)[0]
    images_part, cases_part = fields.split("\n`cases`:\n", 1)
    assert re.findall(r"^\| `([^`]+)` \|", images_part, re.MULTILINE) == list(features["images"])
    assert re.findall(r"^\| `([^`]+)` \|", cases_part, re.MULTILINE) == list(features["cases"])
    assert "| `boxes` | `list of list of float64` |" in images_part
    assert "`meta` key `link (Eurorad)`" in images_part


def test_instances_are_valid_json_and_hide_image_bytes(
    release: Any, features: dict[str, datasets.Features]
) -> None:
    import json

    from novabench.data.release import iter_case_rows, iter_image_rows

    image_row = next(iter_image_rows(release, embed_images=True))
    case_row = next(iter_case_rows(release))
    text = render_dataset_card(
        summarize_release(release), features, image_instance=image_row, case_instance=case_row
    )
    blocks = re.findall(r"```json\n(.*?)\n```", text, re.DOTALL)
    assert len(blocks) == 2
    shown_image, shown_case = (json.loads(block) for block in blocks)
    assert shown_image["image"] == "<PIL.PngImagePlugin.PngImageFile image mode=L size=64x64>"
    assert shown_image["filename"] == image_row["filename"]
    assert shown_image["boxes"] == [[round(v, 2) for v in box] for box in image_row["boxes"]]
    assert shown_case["filenames"] == case_row["filenames"]


def test_sizes_default_to_the_summary_counts(features: dict[str, datasets.Features]) -> None:
    text = render_dataset_card(ReleaseSummary(n_images=2000, n_cases=600), features)
    header = _header(text)
    assert header["size_categories"] == ["1K<n<10K"]
    counts = {
        info["config_name"]: info["splits"][0]["num_examples"] for info in header["dataset_info"]
    }
    assert counts == {"images": 2000, "cases": 600}


def test_unknown_placeholder_in_template_is_an_error(
    tmp_path: Path, features: dict[str, datasets.Features]
) -> None:
    template = tmp_path / "README.template.md"
    template.write_text("# ${pretty_name}\n${no_such_value}\n", encoding="utf-8")
    with pytest.raises(NovaInputError, match="no_such_value") as error:
        render_dataset_card(ReleaseSummary(n_images=1, n_cases=1), features, template_path=template)
    assert error.value.source == str(template)
    with pytest.raises(NovaInputError, match="cannot read"):
        render_dataset_card(
            ReleaseSummary(n_images=1, n_cases=1), features, template_path=tmp_path / "missing.md"
        )


def test_missing_configuration_is_an_error() -> None:
    with pytest.raises(NovaInputError, match="cases"):
        render_dataset_card(ReleaseSummary(n_images=1, n_cases=1), {"images": image_features()})


def _edit_header(text: str, edit: Any) -> str:
    header = _header(text)
    edit(header)
    body = text.split("\n---\n", 1)[1]
    return "---\n" + yaml.safe_dump(header, sort_keys=False) + "---\n" + body


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda h: h.update(license="cc-by-4.0"), "license"),
        (lambda h: h.pop("tags"), "tags"),
        (lambda h: h.update(tags=["medical"]), "tags"),
        (
            lambda h: h.update(configs=[c for c in h["configs"] if c["config_name"] != "cases"]),
            "configs",
        ),
        (lambda h: [c.update(default=True) for c in h["configs"]], "configs"),
        (lambda h: h.update(dataset_info=h["dataset_info"][:1]), "dataset_info"),
        (lambda h: h["dataset_info"][1]["features"].pop(), "dataset_info.features"),
        (lambda h: h["dataset_info"][0].pop("splits"), "dataset_info.splits"),
    ],
)
def test_check_catches_a_wrong_header(
    card_text: str, features: dict[str, datasets.Features], edit: Any, field: str
) -> None:
    with pytest.raises(NovaInputError) as error:
        check_dataset_card(_edit_header(card_text, edit), features)
    assert error.value.field == field


def test_check_rejects_text_without_header() -> None:
    with pytest.raises(NovaInputError, match="no YAML"):
        check_dataset_card("# NOVA\n")
    with pytest.raises(NovaInputError, match="does not parse"):
        check_dataset_card("---\nlicense: [unclosed\n---\nbody")


def test_template_ships_with_the_project() -> None:
    path = card_module.default_template_path()
    assert path.is_file()
    placeholders = set(re.findall(r"\$\{(\w+)\}", path.read_text(encoding="utf-8")))
    assert {"n_images", "n_cases", "n_placeholder_diagnoses", "bibtex", "hub_id"} <= placeholders


def test_summary_counts_match_release_properties(release: Any, rows: list[dict[str, Any]]) -> None:
    summary = summarize_release(release)
    assert summary.n_rater_boxes == sum(
        1 for row in rows for box in row["bboxes"] or [] if box["source"] != "gold"
    )
    assert summary.raters == ("rater1", "rater2")
    assert summary.extra_meta_keys == EXTRA_KEYS
    assert summary.source_layout == "v1"


# The whole NOVA-size sample is written and exported (about 20 CPU seconds): make test-slow.
@pytest.mark.slow
def test_the_committed_example_card_is_what_nova_export_writes_today(tmp_path: Path) -> None:
    """dataset_card/example/README.md claims to be the card exactly as `nova export` writes
    it for `nova sample --cases 281 --seed 0`; user18 found it a section behind. Only the
    Parquet byte counts may differ: the shards' metadata holds the toolkit's version."""
    from novabench.cli import main

    repo = Path(__file__).resolve().parents[2]
    release, export = tmp_path / "rel", tmp_path / "nova-export"
    assert main(["sample", str(release), "--cases", "281", "--seed", "0", "-q"]) == 0
    assert main(["export", str(release), str(export), "--pretty-name", "NOVA sample", "-q"]) == 0

    def without_byte_counts(text: str) -> str:
        return re.sub(r"(?m)^(\s*download_size:) \d+$", r"\1 N", text)

    committed = (repo / "dataset_card" / "example" / "README.md").read_text(encoding="utf-8")
    written = (export / "README.md").read_text(encoding="utf-8")
    assert without_byte_counts(committed) == without_byte_counts(written)
