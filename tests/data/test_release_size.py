"""A release parquet is refused by its size before it can fill the memory.

The row count is read from the footer, before any row; the bytes are checked against the
footer's uncompressed sizes, then batch by batch as rows are decoded (values repeated
through a dictionary page expand far beyond what the footer says).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from novabench.data.layouts import rows
from novabench.data.release import read_release
from novabench.errors import NovaInputError
from tests.release_factory import write_legacy_release, write_v1_release

PARQUET = Path("data/nova-v1.parquet")


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_v1_release(tmp_path_factory.mktemp("size") / "rel", n_cases=2, image_size=(32, 32))


def _repeated(release: Path, folder: Path, n_rows: int, caption: str | None = None) -> Path:
    """The release with its rows repeated to ``n_rows`` (filenames left as they are)."""
    copy = shutil.copytree(release, folder / "rel")
    table = pq.read_table(copy / PARQUET)
    table = table.take(pa.array(np.arange(n_rows) % table.num_rows))
    if caption is not None:
        index = table.schema.get_field_index("caption_text")
        table = table.set_column(index, "caption_text", pa.array([caption] * n_rows))
    pq.write_table(table, copy / PARQUET)
    return copy


def test_the_row_limit_leaves_a_wide_margin_over_nova() -> None:
    assert rows.MAX_RELEASE_ROWS >= 100 * 906


def test_a_file_of_more_rows_than_the_limit_is_refused_from_its_footer(
    release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    big = _repeated(release, tmp_path, 50)
    monkeypatch.setattr(rows, "MAX_RELEASE_ROWS", 49)
    decoded: list[int] = []
    monkeypatch.setattr(pq.ParquetFile, "iter_batches", lambda *a, **k: decoded.append(1))
    with pytest.raises(NovaInputError, match=r"data/nova-v1.parquet: 50 rows is more than the 49"):
        read_release(big)
    assert decoded == []  # refused before a single batch was decoded


def test_a_file_whose_footer_sizes_exceed_the_byte_limit_is_refused(
    release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    footer = pq.ParquetFile(release / PARQUET).metadata
    size = sum(footer.row_group(g).total_byte_size for g in range(footer.num_row_groups))
    monkeypatch.setattr(rows, "MAX_PARQUET_BYTES", size - 1)
    with pytest.raises(NovaInputError, match="rows expand to more than"):
        read_release(release)
    monkeypatch.setattr(rows, "MAX_PARQUET_BYTES", 100 * size)
    assert len(read_release(release).images) == footer.num_rows  # a wide limit reads it


def test_values_expanding_beyond_the_footer_are_stopped_while_decoding(
    release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 3,000 rows sharing one 20,000-character caption: one dictionary entry on disk,
    # 60 MB once decoded. The footer promises little; the first batch already exceeds 1 MB.
    copy = _repeated(release, tmp_path, 3000, caption="Axial FLAIR. " * 1540)
    footer = pq.ParquetFile(copy / PARQUET).metadata
    assert sum(footer.row_group(g).total_byte_size for g in range(footer.num_row_groups)) < 1e6
    monkeypatch.setattr(rows, "MAX_RELEASE_ROWS", 10_000)
    monkeypatch.setattr(rows, "MAX_PARQUET_BYTES", 1_000_000)
    with pytest.raises(NovaInputError, match="more than 1,000,000 bytes in memory"):
        read_release(copy)


# The legacy CSV layout is held to the same limits: it had none, so a CSV of any size was
# read whole into memory.


def test_a_legacy_csv_larger_than_the_byte_limit_is_refused_before_it_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    legacy = write_legacy_release(tmp_path / "legacy", n_cases=2, image_size=(32, 32))
    size = (legacy / "captions.csv").stat().st_size
    monkeypatch.setattr(rows, "MAX_PARQUET_BYTES", size - 1)
    with pytest.raises(NovaInputError) as caught:
        read_release(legacy)
    assert str(caught.value) == (
        f"captions.csv: {size:,} bytes is more than the {size - 1:,} a NOVA release file may "
        "take (NOVA's metadata is about 200 kB): refused before reading it"
    )
    monkeypatch.setattr(rows, "MAX_PARQUET_BYTES", 100 * size)
    assert read_release(legacy).layout == "legacy"  # a wide limit reads it


def test_a_legacy_csv_of_more_rows_than_the_limit_is_refused_at_the_first_row_past_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    legacy = write_legacy_release(tmp_path / "legacy", n_cases=3, image_size=(32, 32))
    # Every caption of the factory spans two lines (a quoted line break): 6 rows on lines
    # 2-3, 4-5, ..., 12-13 after the header. The 6th row, the first past a limit of 5,
    # starts on line 12. case_metadata.csv (3 rows) stays under the limit.
    text = (legacy / "captions.csv").read_text()
    assert len(text.splitlines()) == 13 and text.count("case0003_003.png") == 1
    n_rows = 6
    monkeypatch.setattr(rows, "MAX_RELEASE_ROWS", n_rows - 1)
    with pytest.raises(NovaInputError) as caught:
        read_release(legacy)
    assert str(caught.value) == (
        "captions.csv, line 12: more than the 5 rows a NOVA release file may hold "
        "(NOVA has 906): refused"
    )
    # Exactly at the limit captions.csv is read; the raters' file (two raters a box) is not.
    monkeypatch.setattr(rows, "MAX_RELEASE_ROWS", n_rows)
    with pytest.raises(NovaInputError, match=r"^bboxes_raters.csv, line 8: more than the 6 rows"):
        read_release(legacy)
