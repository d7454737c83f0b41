"""The datasets builder and load_nova: configurations, round trips, streaming, exports, Hub ids."""

from __future__ import annotations

import shutil

import datasets
import numpy as np
import pytest

from novabench.data.hf import NovaBuilder, load_nova
from novabench.data.release import read_release
from novabench.data.schema import case_features, image_features
from novabench.errors import NovaInputError
from tests.release_factory import default_rows, write_legacy_release, write_v1_release

SMALL = (64, 64)
WRITERS = {"v1": write_v1_release, "legacy": write_legacy_release}


def _as_float64(boxes):
    return [[float(value) for value in box] for box in boxes]


META_KEYS = (
    "clinical_history",
    "final_diagnosis",
    "title",
    "publication_date",
    "differential_diagnosis",
)


def _xywh(box):
    return [box["x"], box["y"], box["width"], box["height"]]


def _expected_image_rows(factory_rows, image_size):
    """Image rows as the dataset must give them back, derived from the rows the factory wrote
    (not through read_release / iter_image_rows, which the builder itself uses): sorted by
    filename, gold and rater boxes split by source, boxes as the release holds them."""
    expected = []
    for row in sorted(factory_rows, key=lambda row: row["filename"]):
        boxes = row["bboxes"] or []
        raters = sorted({box["source"] for box in boxes} - {"gold"})
        meta = row["meta"]
        expected.append(
            {
                "filename": row["filename"],
                "case_id": row["case_id"],
                "scan_id": row["scan_id"],
                "width": image_size[0],
                "height": image_size[1],
                "caption": row["caption_text"],
                **{key: meta[key] for key in META_KEYS},
                "boxes": _as_float64([_xywh(box) for box in boxes if box["source"] == "gold"]),
                "rater_boxes": [
                    {
                        "rater": name,
                        "boxes": _as_float64([_xywh(b) for b in boxes if b["source"] == name]),
                    }
                    for name in raters
                ],
            }
        )
    return expected


def _without_image(row):
    return {k: v for k, v in row.items() if k != "image"}


@pytest.fixture(scope="module")
def v1_release(tmp_path_factory):
    return write_v1_release(tmp_path_factory.mktemp("v1"), image_size=SMALL, shuffle_seed=7)


@pytest.mark.parametrize("layout", sorted(WRITERS))
def test_images_config_round_trips_the_release(tmp_path, layout):
    folder = WRITERS[layout](tmp_path / "release", image_size=SMALL)
    release = read_release(folder)
    builder = NovaBuilder(
        config_name="images", data_dir=str(folder), cache_dir=str(tmp_path / "cache")
    )
    builder.download_and_prepare()
    test = builder.as_dataset(split="test")
    assert test.features == image_features(["differential_diagnosis"])
    expected = _expected_image_rows(default_rows(image_size=SMALL), SMALL)
    assert [_without_image(row) for row in test] == expected
    for row, record in zip(test, release.images):
        assert row["image"].size == (record.width, record.height)
        assert np.array_equal(
            np.asarray(row["image"]),
            np.asarray(
                datasets.Image().decode_example(
                    {"path": None, "bytes": record.image_path.read_bytes()}
                )
            ),
        )


def test_cases_config_lists_ordered_images(tmp_path, v1_release):
    test = load_nova(v1_release, "cases", cache_dir=str(tmp_path))
    assert test.features == case_features(["differential_diagnosis"])
    assert test["case_id"] == ["case0001", "case0002", "case0003"]
    assert test[2]["filenames"] == ["case0003_001.png", "case0003_002.png", "case0003_003.png"]
    # Expected per case from the factory's rows (the release the fixture wrote), in scan order.
    images = _expected_image_rows(default_rows(image_size=SMALL), SMALL)
    for row in test:
        mine = [image for image in images if image["case_id"] == row["case_id"]]
        assert row["filenames"] == [image["filename"] for image in mine]
        assert row["captions"] == [image["caption"] for image in mine]  # text exact
        assert row["boxes"] == [image["boxes"] for image in mine]
        assert row["final_diagnosis"] == mine[0]["final_diagnosis"]
    assert test[1]["boxes"][1] == []  # case0002_002.png has null bboxes


def test_builder_requires_a_release_and_a_known_config(tmp_path, v1_release):
    with pytest.raises(NovaInputError, match="data_dir"):
        NovaBuilder(config_name="images", cache_dir=str(tmp_path))
    with pytest.raises(NovaInputError, match="unknown configuration"):
        NovaBuilder(config_name="volumes", data_dir=str(v1_release), cache_dir=str(tmp_path))
    with pytest.raises(NovaInputError, match="unknown configuration"):
        load_nova(v1_release, "volumes")


def test_default_config_is_images(tmp_path, v1_release):
    builder = NovaBuilder(data_dir=str(v1_release), cache_dir=str(tmp_path))
    assert builder.config.name == "images"
    assert builder.info.license == "cc-by-nc-sa-4.0"
    assert "2505.14064" in builder.info.citation


def test_split_none_gives_the_dataset_dict(tmp_path, v1_release):
    everything = load_nova(v1_release, split=None, cache_dir=str(tmp_path))
    assert isinstance(everything, datasets.DatasetDict)
    assert list(everything) == ["test"] and everything["test"].num_rows == 6


@pytest.mark.parametrize("config", ["images", "cases"])
def test_streaming_yields_the_same_rows(tmp_path, v1_release, config):
    stored = load_nova(v1_release, config, cache_dir=str(tmp_path))
    streamed = load_nova(v1_release, config, streaming=True, cache_dir=str(tmp_path / "s"))
    assert isinstance(streamed, datasets.IterableDataset)
    streamed_rows = list(streamed)
    assert [_without_image(r) for r in streamed_rows] == [_without_image(r) for r in stored]
    if config == "images":
        assert [r["image"].size for r in streamed_rows] == [r["image"].size for r in stored]


def test_prepared_dataset_survives_removing_the_release(tmp_path):
    folder = write_v1_release(tmp_path / "release", image_size=SMALL)
    test = load_nova(folder, cache_dir=str(tmp_path / "cache"))
    shutil.rmtree(folder)
    assert test[0]["image"].size == SMALL  # PNG bytes were embedded, not linked


def test_an_edited_release_is_rebuilt_not_served_from_cache(tmp_path):
    folder, cache = tmp_path / "release", str(tmp_path / "cache")
    write_v1_release(folder, image_size=SMALL)
    assert load_nova(folder, cache_dir=cache)[0]["caption"].startswith("Axial")
    rows = default_rows(image_size=SMALL)
    rows[0]["caption_text"] = "Edited caption."
    shutil.rmtree(folder)
    write_v1_release(folder, rows, image_size=SMALL)
    assert load_nova(folder, cache_dir=cache)[0]["caption"] == "Edited caption."


def test_full_size_images_round_trip(tmp_path):
    folder = write_v1_release(tmp_path / "release", n_cases=1, image_size=(480, 480))
    test = load_nova(folder, cache_dir=str(tmp_path / "cache"))
    assert (test[0]["width"], test[0]["height"]) == (480, 480)
    assert test[0]["image"].size == (480, 480)


def _write_export(folder, dataset_by_config):
    """A folder in the Hub-native shape (what `nova export` writes): shards + configs YAML."""
    yaml_lines = ["---", "configs:"]
    for config, dataset in dataset_by_config.items():
        dataset.to_parquet(str(folder / "data" / config / "test-00000-of-00001.parquet"))
        yaml_lines += [
            f"- config_name: {config}",
            "  data_files:",
            "  - split: test",
            f"    path: data/{config}/test-*.parquet",
        ]
    (folder / "README.md").write_text(
        "\n".join(yaml_lines + ["---", "# NOVA", ""]), encoding="utf-8"
    )


def test_load_nova_reads_an_export_folder(tmp_path, v1_release):
    images = load_nova(v1_release, cache_dir=str(tmp_path / "cache"))
    export = tmp_path / "export"
    _write_export(export, {"images": images})
    for streaming in (False, True):
        loaded = load_nova(
            export, "images", streaming=streaming, cache_dir=str(tmp_path / "cache2")
        )
        rows = list(loaded)
        assert [_without_image(r) for r in rows] == [_without_image(r) for r in images]
        assert rows[0]["image"].size == SMALL
    with pytest.raises(NovaInputError, match="'cases' is not in this export"):
        load_nova(export, "cases")


def test_hub_id_offline_explains_how_to_use_a_local_copy(monkeypatch):
    import huggingface_hub.constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(NovaInputError) as caught:
        load_nova("nobody-here/NotNova")
    message = str(caught.value)
    assert caught.value.source == "nobody-here/NotNova"
    assert "HF_HUB_OFFLINE" in message and "load_nova('/path/to/Nova')" in message


def test_a_missing_path_that_is_no_hub_id_is_named(tmp_path):
    with pytest.raises(NovaInputError, match="no such folder"):
        load_nova(str(tmp_path / "no" / "such" / "release"))


@pytest.mark.parametrize(
    "typo", ["./nova", "../nova", "~/nova-missing", "data/nova", "a/b/c", "nova"]
)
def test_a_typo_in_a_relative_path_says_no_such_folder_and_never_goes_online(
    typo, tmp_path, monkeypatch
):
    import huggingface_hub

    def no_download(*args, **kwargs):
        raise AssertionError("a path must never be sent to the Hub")

    (tmp_path / "data").mkdir()  # so "data/nova" is a path whose first part exists
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(huggingface_hub, "snapshot_download", no_download)
    with pytest.raises(NovaInputError, match="no such folder") as caught:
        load_nova(typo)
    assert caught.value.source == typo


def test_a_hub_id_online_is_downloaded(tmp_path, monkeypatch, v1_release):
    import huggingface_hub

    import novabench.data.hf as hf_module

    asked = []

    def snapshot(repo_id, repo_type):
        asked.append((repo_id, repo_type))
        return str(v1_release)

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(hf_module, "hub_offline", lambda: False)
    monkeypatch.setattr(huggingface_hub, "snapshot_download", snapshot)
    assert load_nova("someone/nova", cache_dir=str(tmp_path / "c")).num_rows > 0
    assert asked == [("someone/nova", "dataset")]


def test_the_top_level_face_reexports():
    import nova_dataset

    assert nova_dataset.NovaBuilder is NovaBuilder
    assert nova_dataset.load_nova is load_nova
    assert nova_dataset.read_release is read_release
    assert sorted(nova_dataset.__all__) == ["NovaBuilder", "load_nova", "read_release"]


@pytest.mark.parametrize("config", ["images", "cases"])
def test_load_nova_on_a_nova_export_equals_the_release(tmp_path, v1_release, config):
    from novabench.data.export import export_release

    out = tmp_path / "nova"
    export_release(v1_release, out, progress=False)
    exported = load_nova(out, config, cache_dir=str(tmp_path / "a"))
    direct = load_nova(v1_release, config, cache_dir=str(tmp_path / "b"))
    assert exported.features == direct.features
    assert [_without_image(r) for r in exported] == [_without_image(r) for r in direct]


def test_builder_cites_the_one_citation_source(tmp_path) -> None:
    from novabench.citation import NOVA_BIBTEX, NOVA_LICENSE

    release = write_v1_release(tmp_path / "release", image_size=SMALL)
    builder = NovaBuilder(data_dir=str(release), cache_dir=str(tmp_path / "cache"))
    assert builder.info.citation == NOVA_BIBTEX
    assert builder.info.license == NOVA_LICENSE


def test_a_cache_folder_that_cannot_be_written_is_one_error_naming_it(tmp_path, monkeypatch):
    # load_nova let datasets' PermissionError through ("[Errno 13] Permission denied: ..."),
    # a traceback in a notebook and exit 1 in a script, where every other output says
    # "cannot write PATH: permission denied".
    import errno
    import os

    from novabench.errors import NovaOutputError

    release = write_v1_release(tmp_path / "rel", n_cases=1, image_size=(32, 32))
    forbidden = tmp_path / "shared-cache"  # a lab's folder this user may not write
    makedirs = os.makedirs

    def refuse_inside(name, *args, **kwargs):  # what the kernel says (tests may run as root)
        if str(name).startswith(str(forbidden)):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(name))
        return makedirs(name, *args, **kwargs)

    monkeypatch.setattr(os, "makedirs", refuse_inside)
    for config in ("images", "cases"):
        with pytest.raises(NovaOutputError) as caught:
            load_nova(release, config, cache_dir=str(forbidden / "nova"))
        assert str(caught.value) == f"cannot write {forbidden / 'nova'}: permission denied"
    assert not forbidden.exists()
    # A writable cache beside it still loads.
    assert load_nova(release, cache_dir=str(tmp_path / "cache")).num_rows == 1


def _legacy_without_rater_boxes(folder):
    """A legacy release whose reading gives one warning: bboxes_raters.csv is missing."""
    release = write_legacy_release(folder, n_cases=2, image_size=SMALL)
    (release / "bboxes_raters.csv").unlink()
    assert read_release(release).warnings == [
        "bboxes_raters.csv is missing: no rater boxes were read"
    ]
    return release


def test_the_builder_and_load_nova_tell_the_release_warnings_once(tmp_path):
    """fixb14: `nova info` prints what reading a release noticed; NovaBuilder and load_nova
    said nothing of it to a Python user."""
    from novabench.data.hf import NovaReleaseWarning

    release = _legacy_without_rater_boxes(tmp_path / "nova")
    expected = (
        f"reading the NOVA release {release} gave 1 warning: bboxes_raters.csv is missing: "
        "no rater boxes were read"
    )
    for load in (
        lambda: load_nova(release, cache_dir=str(tmp_path / "cache")),
        lambda: load_nova(release, "cases", streaming=True, cache_dir=str(tmp_path / "cache")),
        lambda: NovaBuilder(data_dir=str(release), cache_dir=str(tmp_path / "cache")),
    ):
        with pytest.warns(NovaReleaseWarning) as caught:
            load()
        told = [str(w.message) for w in caught if issubclass(w.category, NovaReleaseWarning)]
        assert told == [expected]


def test_load_nova_on_an_export_tells_the_warnings_it_recorded(tmp_path):
    from novabench.cli import main
    from novabench.data.hf import NovaReleaseWarning

    release = _legacy_without_rater_boxes(tmp_path / "nova")
    export = tmp_path / "export"
    assert main(["export", str(release), str(export), "--quiet"]) == 0
    with pytest.warns(NovaReleaseWarning) as caught:
        load_nova(export, cache_dir=str(tmp_path / "cache"))
    told = [str(w.message) for w in caught if issubclass(w.category, NovaReleaseWarning)]
    assert len(told) == 1
    assert told[0].startswith(f"reading the NOVA release {export} gave 1 warning: ")
    assert told[0].endswith("bboxes_raters.csv is missing: no rater boxes were read")


def test_a_release_without_warnings_is_loaded_without_one(tmp_path, v1_release):
    import warnings

    from novabench.data.hf import NovaReleaseWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        load_nova(v1_release, cache_dir=str(tmp_path / "cache"))
    assert not [w for w in caught if issubclass(w.category, NovaReleaseWarning)]
