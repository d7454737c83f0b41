"""scripts/demo.py replaces only what an earlier demo wrote in its folder."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from novabench._files import OUTPUT_MARKER, mark_output_folder
from novabench.errors import NovaInputError
from tests.scripts import load_script


@pytest.fixture(scope="module")
def demo() -> ModuleType:
    return load_script("demo")


def _earlier_demo(folder: Path) -> None:
    """A demo folder as a finished run leaves it (names as scripts/demo.py writes them)."""
    folder.mkdir()
    mark_output_folder(folder, "demo")
    (folder / "nova-sample" / "images").mkdir(parents=True)
    (folder / "nova-sample" / "images" / "case0001_001.png").write_bytes(b"\x89PNG")
    (folder / "items").mkdir()
    (folder / "items" / "images.csv").write_text("filename\ncase0001_001.png\n")
    (folder / "floor.jsonl").write_text('{"filename": "case0001_001.png", "boxes": []}\n')
    (folder / "report.json").write_text('{"toolkit": {"name": "novabench"}, "tasks": {}}\n')
    # The list the demo keeps of what it wrote in its folders, as scripts/demo.py writes it.
    listed = ["items", "items/images.csv", "nova-sample", "nova-sample/images"]
    listed.append("nova-sample/images/case0001_001.png")
    (folder / ".novabench-demo-files.json").write_text(json.dumps({"paths": listed}))


def _all_files(folder: Path) -> dict[str, bytes]:
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def test_a_rerun_keeps_the_files_the_user_added(demo: ModuleType, tmp_path: Path) -> None:
    folder = tmp_path / "demo"
    _earlier_demo(folder)
    (folder / "MYNOTES.txt").write_text("floor mAP@30 looked low on vascular cases\n")
    (folder / "my-model.jsonl").write_text('{"filename": "case0001_001.png", "boxes": []}\n')

    kept = demo.clear_previous_demo(folder)

    assert sorted(path.name for path in kept) == ["MYNOTES.txt", "my-model.jsonl"]
    assert sorted(path.name for path in folder.iterdir()) == ["MYNOTES.txt", "my-model.jsonl"]
    assert (folder / "MYNOTES.txt").read_text() == "floor mAP@30 looked low on vascular cases\n"


def test_the_marker_is_among_the_demo_entries(demo: ModuleType) -> None:
    assert OUTPUT_MARKER in demo.DEMO_ENTRIES  # else a rerun would keep a stale marker


def test_a_folder_the_demo_did_not_write_is_refused_naming_the_real_command(
    demo: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    folder = tmp_path / "results"
    folder.mkdir()
    (folder / "paper.tex").write_text("\\section{Results}\n")
    monkeypatch.setattr(sys, "argv", ["demo.py", "--out", str(folder)])

    assert demo.main() == 2

    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and str(folder) in error
    assert "scripts/demo.py" in error and "--out" in error
    assert "nova demo" not in error and "--overwrite" not in error  # neither exists
    assert (folder / "paper.tex").read_text() == "\\section{Results}\n"
    with pytest.raises(NovaInputError, match="not written by the demo"):
        demo.clear_previous_demo(folder)


def test_a_file_the_user_put_inside_a_demo_folder_is_refused_and_nothing_removed(
    demo: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    folder = tmp_path / "demo"
    _earlier_demo(folder)
    (folder / "items" / "vascular-misses.csv").write_text("filename\ncase0001_001.png\n")
    (folder / "nova-sample" / "images" / "case0001_001-annotated.png").write_bytes(b"\x89PNG")
    before = _all_files(folder)
    monkeypatch.setattr(sys, "argv", ["demo.py", "--out", str(folder)])

    assert demo.main() == 2

    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1
    assert str(folder / "items" / "vascular-misses.csv") in error
    assert "nova-sample/images/case0001_001-annotated.png" in error  # the other one is named too
    assert _all_files(folder) == before  # refused before anything was removed


def test_a_demo_folder_without_the_list_of_its_files_is_refused(
    demo: ModuleType, tmp_path: Path
) -> None:
    folder = tmp_path / "demo"
    _earlier_demo(folder)
    (folder / ".novabench-demo-files.json").unlink()  # as a demo before the list left it
    before = _all_files(folder)

    with pytest.raises(NovaInputError, match="left no list of its files") as refused:
        demo.clear_previous_demo(folder)

    assert str(folder / "items") in str(refused.value) or str(folder / "nova-sample") in str(
        refused.value
    )
    assert _all_files(folder) == before


def test_what_a_step_wrote_is_listed_and_replaced_by_the_next_run(
    demo: ModuleType, tmp_path: Path
) -> None:
    folder = tmp_path / "demo"
    folder.mkdir()
    mark_output_folder(folder, "demo")
    (folder / "items").mkdir()
    (folder / "items" / "cases.csv").write_text("case_id\ncase0001\n")
    demo.record_demo_folder(folder, folder / "items")
    (folder / "nova-export" / "data").mkdir(parents=True)
    (folder / "nova-export" / "README.md").write_text("# NOVA sample\n")
    demo.record_demo_folder(folder, folder / "nova-export")  # the list grows step by step

    assert demo.clear_previous_demo(folder) == []
    assert list(folder.iterdir()) == []
