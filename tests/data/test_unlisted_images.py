"""A PNG in the image folder that no row lists is named (user13).

Such a file is never read nor scored; beside a "file not found" error it is most likely the
missing image renamed (`case0003_001.png` -> `case0003_01.png`), so the error names it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from novabench.cli import main
from novabench.data.release import read_release
from novabench.data.sample import write_sample_release
from novabench.errors import NovaInputError

IMAGE_DIR = {"v1": "images", "legacy": "test"}
WHERE = {"v1": "data/nova-v1.parquet, row ", "legacy": "captions.csv, line "}


@pytest.fixture(scope="module", params=["v1", "legacy"])
def sample(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    layout = request.param
    root = write_sample_release(
        tmp_path_factory.mktemp(layout) / "nova", n_cases=3, layout=layout, progress=False
    )
    return layout, root


def _copy(sample: tuple[str, Path], tmp_path: Path) -> tuple[str, Path, Path]:
    layout, root = sample
    copy = tmp_path / "nova"
    shutil.copytree(root, copy)
    return layout, copy, copy / IMAGE_DIR[layout]


def test_a_png_no_row_lists_is_named_in_one_warning(sample, tmp_path):
    layout, root, images = _copy(sample, tmp_path)
    shutil.copyfile(images / "case0001_001.png", images / "case0099_001.png")
    release = read_release(root)
    assert release.n_images == read_release(sample[1]).n_images  # not read as an image
    assert release.warnings == [
        f"{IMAGE_DIR[layout]}/case0099_001.png: a PNG file in the image folder that no row "
        "lists; not read, not scored (renamed or left over?)"
    ]


def test_several_are_counted_in_one_warning_and_hidden_files_and_other_files_are_not(
    sample, tmp_path
):
    layout, root, images = _copy(sample, tmp_path)
    for index in range(7):
        shutil.copyfile(images / "case0001_001.png", images / f"extra{index}.PNG")
    (images / "._case0001_001.png").write_bytes(b"\x00")  # a macOS resource fork
    (images / "notes.txt").write_text("not an image\n")
    assert read_release(root).warnings == [
        f"{IMAGE_DIR[layout]}/: 7 PNG files that no row lists (extra0.PNG, extra1.PNG, "
        "extra2.PNG, extra3.PNG, extra4.PNG, and 2 more); not read, not scored (renamed or "
        "left over?)"
    ]


def test_a_missing_image_error_names_the_unlisted_file_beside_it(sample, tmp_path, capsys):
    layout, root, images = _copy(sample, tmp_path)
    (images / "case0003_001.png").rename(images / "case0003_01.png")
    with pytest.raises(NovaInputError) as raised:
        read_release(root)
    message = str(raised.value)
    folder = IMAGE_DIR[layout]
    assert message.startswith(WHERE[layout]) and "(case0003_001.png)" in message
    assert message.endswith(
        f"image file not found: {folder}/case0003_001.png; did you mean "
        f"{folder}/case0003_01.png (in that folder, listed by no row)?"
    )
    assert main(["info", str(root)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"did you mean {folder}/case0003_01.png" in err


def test_no_guess_when_nothing_unlisted_resembles_it(sample, tmp_path):
    layout, root, images = _copy(sample, tmp_path)
    (images / "case0003_001.png").unlink()
    with pytest.raises(NovaInputError) as raised:
        read_release(root)
    assert str(raised.value).endswith(f"image file not found: {IMAGE_DIR[layout]}/case0003_001.png")
