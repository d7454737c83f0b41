"""What reading a release warned about travels with its export (user13).

`nova export` printed none of the release's warnings, and the export hid them: a case whose
images disagree on its metadata is exported with one set of values (the conflict is gone
from the rows), so `nova info` on the export said `warnings 0`. The export now prints them,
records them (shard metadata, the card's "Known issues", COCO ``info``) and reading the
export gives them again.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from novabench.cli import main
from novabench.data.export import coco_document, export_release
from novabench.data.release import read_release
from novabench.data.sample import write_sample_release

PARQUET = "data/nova-v1.parquet"
SHARD = "data/images/test-00000-of-00001.parquet"
RECORDED = "recorded by nova export from the release it was made from: "
RECORDED_WARNINGS_KEY = b"novabench.release_warnings"  # the shards' metadata key


def _edited_sample(folder: Path, edit: Any) -> Path:
    """The synthetic sample in the official v1 layout, its parquet rows edited by ``edit``."""
    root = write_sample_release(folder / "nova", n_cases=2, seed=0, progress=False)
    parquet = root / PARQUET
    schema = pq.read_schema(parquet)
    rows = pq.read_table(parquet).to_pylist()
    edit(rows)
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), parquet)
    return root


def _conflicting_meta(rows: list[dict[str, Any]]) -> None:
    """case0002_002.png tells another history and diagnosis than its case's first image."""
    row = next(row for row in rows if row["filename"] == "case0002_002.png")
    row["meta"]["clinical_history"] = "A 40-year-old woman with seizures."
    row["meta"]["final_diagnosis"] = "Cavernous malformation"


def _gold_box_twice(rows: list[dict[str, Any]]) -> None:
    """case0002_001.png's first gold box appended again."""
    row = next(row for row in rows if row["filename"] == "case0002_001.png")
    row["bboxes"].append(dict(next(box for box in row["bboxes"] if box["source"] == "gold")))


@pytest.fixture(scope="module")
def conflicting(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _edited_sample(tmp_path_factory.mktemp("metaconf"), _conflicting_meta)


def test_the_warnings_of_the_release_come_back_from_its_export(conflicting, tmp_path):
    source_warnings = read_release(conflicting).warnings
    assert len(source_warnings) == 1
    assert "meta clinical_history, final_diagnosis differ" in source_warnings[0]
    summary = export_release(conflicting, tmp_path / "exp", progress=False)
    assert summary.warnings == tuple(source_warnings)
    # The exported rows agree within the case: only the record keeps the conflict.
    exported = read_release(tmp_path / "exp")
    assert exported.warnings == [f"{SHARD}: {RECORDED}{source_warnings[0]}"]
    metadata = pq.read_schema(tmp_path / "exp" / SHARD).metadata
    assert json.loads(metadata[RECORDED_WARNINGS_KEY]) == source_warnings
    card = (tmp_path / "exp" / "README.md").read_text(encoding="utf-8")
    issues = card.split("### Known issues", 1)[1].split("\n## ", 1)[0]
    assert "gave 1 warning." in issues
    assert "- data/nova-v1.parquet, row " in issues and "(case0002\\_002.png)" in issues
    # A re-export records the original words once, not nested in prefixes.
    export_release(tmp_path / "exp", tmp_path / "again", progress=False)
    assert read_release(tmp_path / "again").warnings == exported.warnings


def test_nova_export_prints_them_and_nova_info_on_the_export_lists_them(
    conflicting, tmp_path, capsys
):
    assert main(["export", str(conflicting), str(tmp_path / "exp"), "-q"]) == 0
    out, err = capsys.readouterr()
    source_warning = read_release(conflicting).warnings[0]
    assert err.splitlines() == [f"nova export: warning: {source_warning}"]
    assert out.rstrip().endswith("; the release was read with 1 warning, recorded in it")
    assert main(["info", str(tmp_path / "exp"), "-q"]) == 0
    out = capsys.readouterr().out
    assert "  warnings                  1\n" in out
    assert f"    - {SHARD}: {RECORDED}{source_warning}" in out


def test_a_gold_box_listed_twice_is_recorded_once_though_the_export_keeps_both_copies(tmp_path):
    root = _edited_sample(tmp_path, _gold_box_twice)
    [source_warning] = read_release(root).warnings
    export_release(root, tmp_path / "exp", progress=False)
    # The export's own rows hold both copies too: that is the recorded warning, not a second.
    assert read_release(tmp_path / "exp").warnings == [f"{SHARD}: {RECORDED}{source_warning}"]
    assert read_release(tmp_path / "exp").n_gold_boxes == read_release(root).n_gold_boxes


def _gold_boxes_repeated(rows: list[dict[str, Any]]) -> None:
    """Three images' first gold box appended again; case0001_001.png's a second time too."""
    for name in ("case0001_001.png", "case0002_001.png", "case0002_002.png"):
        row = next(row for row in rows if row["filename"] == name)
        gold = next(box for box in row["bboxes"] if box["source"] == "gold")
        row["bboxes"].append(dict(gold))
        if name == "case0001_001.png":
            row["bboxes"].append(dict(gold))


def test_exporting_an_export_again_and_again_keeps_each_warning_once(tmp_path):
    """user15: read -> export -> read gave 3 -> 6 -> 9 copies of a release's warnings."""
    root = _edited_sample(tmp_path, _gold_boxes_repeated)
    source_warnings = read_release(root).warnings
    # case0001_001.png's box three times is two warnings about one image: both stay.
    assert len(source_warnings) == 4
    expected = [f"{SHARD}: {RECORDED}{warning}" for warning in source_warnings]
    source = root
    for round_number in range(3):
        target = tmp_path / f"export{round_number}"
        summary = export_release(source, target, progress=False)
        assert len(summary.warnings) == 4
        release = read_release(target)
        assert release.warnings == expected
        card = (target / "README.md").read_text(encoding="utf-8")
        assert "gave 4 warnings." in card.split("### Known issues", 1)[1]
        assert coco_document(release)["info"]["release_warnings"] == source_warnings
        source = target


def test_a_release_read_without_warning_says_so(sample_release, tmp_path):
    export_release(sample_release, tmp_path / "exp", progress=False)
    assert read_release(tmp_path / "exp").warnings == []
    metadata = pq.read_schema(tmp_path / "exp" / SHARD).metadata
    assert json.loads(metadata[RECORDED_WARNINGS_KEY]) == []
    card = (tmp_path / "exp" / "README.md").read_text(encoding="utf-8")
    assert "(layout v1) without a warning." in card


def _rewrite_metadata(shard: Path, value: bytes | None) -> None:
    table = pq.read_table(shard)
    metadata = dict(table.schema.metadata or {})
    metadata.pop(RECORDED_WARNINGS_KEY, None)
    if value is not None:
        metadata[RECORDED_WARNINGS_KEY] = value
    pq.write_table(table.replace_schema_metadata(metadata), shard)


def test_an_unreadable_record_is_a_warning_and_an_older_export_reads_as_before(
    conflicting, tmp_path
):
    export_release(conflicting, tmp_path / "exp", progress=False)
    _rewrite_metadata(tmp_path / "exp" / SHARD, b'{"not": "a list"}')
    assert read_release(tmp_path / "exp").warnings == [
        f"{SHARD}: the warnings nova export recorded cannot be read (not a JSON list of text): "
        "those of the release it was made from are unknown"
    ]
    shutil.rmtree(tmp_path / "exp")
    export_release(conflicting, tmp_path / "exp", progress=False)
    _rewrite_metadata(tmp_path / "exp" / SHARD, None)  # written before the record existed
    assert read_release(tmp_path / "exp").warnings == []


def test_coco_info_carries_them(conflicting):
    release = read_release(conflicting)
    assert coco_document(release)["info"]["release_warnings"] == release.warnings


def test_a_report_on_the_export_opens_with_them(conflicting, tmp_path, capsys):
    export_release(conflicting, tmp_path / "exp", progress=False)
    release = read_release(tmp_path / "exp")
    predictions = tmp_path / "gold-as-answers.jsonl"
    predictions.write_text(
        "".join(
            json.dumps({"filename": image.filename, "boxes": image.boxes}) + "\n"
            for image in release.images
        ),
        encoding="utf-8",
    )
    report = tmp_path / "report.json"
    arguments = ["--predictions", str(predictions), "--out", str(report), "--bootstrap", "100"]
    assert main(["evaluate", "--data", str(tmp_path / "exp"), *arguments]) == 0
    first_lines = capsys.readouterr().out.splitlines()[:2]
    assert first_lines[1].startswith("warning: the release was read with 1 warning")
    assert first_lines[1].endswith(f"{SHARD}: {RECORDED}{read_release(conflicting).warnings[0]}")
    assert json.loads(report.read_text())["data"]["warnings"] == release.warnings
