"""The shared file writers of `novabench._files`: one temp-and-rename for every writer."""

from __future__ import annotations

import ast
import os
import stat
from pathlib import Path

import pytest

from novabench import _files
from novabench._files import write_text_atomic, writing_atomically
from novabench.errors import NovaInputError, NovaOutputError
from tests.source_trees import parsed_source

SOURCE = Path(_files.__file__).parent


def test_a_path_writer_block_that_fails_leaves_the_previous_file_and_no_temporary(
    tmp_path: Path,
) -> None:
    out = tmp_path / "images.csv"
    out.write_text("filename\ncase0001_001.png\n", encoding="utf-8")
    with pytest.raises(RuntimeError, match="writer broke"), writing_atomically(out) as temporary:
        temporary.write_text("filename\ncase0002_", encoding="utf-8")
        raise RuntimeError("writer broke")
    assert out.read_text(encoding="utf-8") == "filename\ncase0001_001.png\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["images.csv"]


def test_a_path_writer_gets_the_umask_mode_not_the_private_one(tmp_path: Path) -> None:
    out = tmp_path / "cases.parquet"
    umask = os.umask(0o027)
    try:
        with writing_atomically(out) as temporary:
            temporary.write_bytes(b"PAR1")
    finally:
        os.umask(umask)
    assert stat.S_IMODE(out.stat().st_mode) == 0o640  # 0o666 & ~0o027


def test_a_durable_path_write_is_synced_before_the_rename(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[bool] = []
    out = tmp_path / "run.jsonl"

    def record(descriptor: int) -> None:
        synced.append(out.exists())  # False: the sync comes before the file appears

    monkeypatch.setattr(os, "fsync", record)
    with writing_atomically(out) as temporary:
        temporary.write_text("{}\n", encoding="utf-8")
    assert synced == []
    with writing_atomically(out, durable=True) as temporary:
        temporary.write_text("{}\n", encoding="utf-8")
    assert synced == [True]  # the first write put run.jsonl there; this one replaced it
    write_text_atomic(tmp_path / "new.json", "{}", durable=True)
    assert len(synced) == 2


def test_a_full_disk_inside_a_path_writer_names_the_output_not_the_temporary(
    tmp_path: Path,
) -> None:
    out = tmp_path / "tables" / "images.parquet"
    with pytest.raises(NovaOutputError) as caught, writing_atomically(out) as temporary:
        # pyarrow's own wording: the errno only in the text, the temporary's name in it
        raise OSError(f"Error writing bytes to file {temporary}. Detail: [errno 28] No space")
    assert str(caught.value) == f"cannot write {out}: no space left on the device"
    assert list(out.parent.iterdir()) == []


def test_an_error_number_given_only_in_the_text_is_kept_as_the_errors_number(
    tmp_path: Path,
) -> None:
    """pyarrow may raise OSError with errno None and "[errno 28]" in its text."""
    import errno

    out = tmp_path / "items" / "images.parquet"
    bare = OSError("Error writing bytes to file. Detail: [errno 28] No space left on device")
    failure = _files.as_output_error(bare, out)
    assert failure is not None and failure.errno == errno.ENOSPC
    assert str(failure) == f"cannot write {out}: no space left on the device"


def _calls(tree: ast.AST, *functions: tuple[str, str]) -> bool:
    """Whether ``tree`` calls any of ``functions`` (module, name) as ``module.name(...)``
    (one walk of the tree for all of them)."""
    return any(
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and (node.func.value.id, node.func.attr) in functions
        for node in ast.walk(tree)
    )


def test_only_the_shared_writer_makes_a_temporary_file_and_renames_it() -> None:
    copies = sorted(
        str(path.relative_to(SOURCE))
        for path in SOURCE.rglob("*.py")
        if path.name != "_files.py"
        and _calls(parsed_source(path), ("tempfile", "mkstemp"), ("os", "replace"))
    )
    assert copies == []


def test_a_missing_file_is_an_output_error_only_when_it_is_on_the_output_s_path(
    tmp_path: Path,
) -> None:
    import errno

    out = tmp_path / "reports" / "r.json"
    temporary = FileNotFoundError(errno.ENOENT, "No such file", str(out.parent / ".r.json.k.tmp"))
    named = _files.as_output_error(temporary, out)
    assert (
        str(named)
        == f"cannot write {out}: its folder takes no new file (no such file or directory)"
    )
    folder_on_the_way = FileExistsError(errno.EEXIST, "File exists", str(tmp_path / "reports"))
    (tmp_path / "reports").write_text("a file of the user's", encoding="utf-8")
    assert str(_files.as_output_error(folder_on_the_way, out)) == (
        f"cannot write {out}: {tmp_path / 'reports'} is a file, not a folder"
    )
    # The same errno about an input (an image the writer reads) is not the output's: it passes.
    an_input = FileNotFoundError(errno.ENOENT, "No such file", str(tmp_path / "images" / "a.png"))
    assert _files.as_output_error(an_input, out) is None
    with pytest.raises(FileNotFoundError):
        with _files.writing_to(out):
            raise an_input


@pytest.mark.parametrize(
    ("name", "folder", "allowed"),
    [
        ("r" * 233, False, True),  # + ".", ".", 7-digit pid, "-", 8 random, ".tmp" = 255
        ("r" * 234, False, False),
        ("e" * 226, True, True),  # + ".", ".superseded-", 7-digit pid, "-", 8 random = 255
        ("e" * 227, True, False),
    ],
)
def test_an_output_name_leaves_room_for_its_temporary_name(
    tmp_path: Path, name: str, folder: bool, allowed: bool
) -> None:
    if os.pathconf(tmp_path, "PC_NAME_MAX") != 255:
        pytest.skip("the limits below are those of a file system taking 255-byte names")
    if allowed:
        _files.check_writable_place(tmp_path / name, folder=folder)
    else:
        with pytest.raises(NovaOutputError, match=f"{len(name)} bytes, at most"):
            _files.check_writable_place(tmp_path / name, folder=folder)


@pytest.mark.parametrize(
    ("outputs", "message"),
    [
        (
            {"--out": "ev/r.json", "--items": "ev/r.json"},
            "ev/r.json, field '--items': is also the --out output",
        ),
        (
            {"--out": "ev/items/r.json", "--items": "ev/items"},
            "ev/items/r.json, field '--out': sits inside the --items folder, which is written "
            "whole; choose a path outside it",
        ),
        (
            {"--out": "ev", "--items": "ev/items"},
            "ev, field '--out': holds the --items folder; choose a path that does not",
        ),
    ],
)
def test_an_output_and_a_folder_output_that_overlap_are_refused_before_any_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, outputs: dict[str, str], message: str
) -> None:
    """The item tables' folder is written whole and moved into place: a report at its path,
    inside it or around it would crash the command after scoring or be lost (user12)."""
    from novabench._files import check_output_paths

    monkeypatch.chdir(tmp_path)
    with pytest.raises(NovaInputError) as refused:
        check_output_paths(outputs, folders=("--items",))
    assert str(refused.value) == message
    check_output_paths(  # the folder's own files are not "inside" it
        {"--out": "r.json", "--items": "items", "--items (images.csv)": "items/images.csv"},
        folders=("--items",),
    )
