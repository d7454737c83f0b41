"""The release fingerprint keeps its value: reports and run manifests record it.

The reference below is the original definition (records deep-copied with
``dataclasses.asdict``), written out here; the fast path must give the same digest.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json

import pytest

from novabench.data.release import read_release
from novabench.data.sample import write_sample_release


def reference_fingerprint(release) -> str:
    digest = hashlib.sha256()
    for image in release.images:
        fields = {
            key: value
            for key, value in dataclasses.asdict(image).items()
            if key not in ("image_path", "image_bytes")
        }
        digest.update(json.dumps(fields, sort_keys=True, ensure_ascii=False).encode("utf-8"))
        digest.update(hashlib.sha256(image.read_bytes()).digest())
    digest.update(json.dumps(list(release.extra_meta_keys)).encode("utf-8"))
    return digest.hexdigest()[:16]


@pytest.mark.parametrize("layout", ["v1", "legacy"])
def test_fingerprint_equals_the_original_definition(tmp_path, layout) -> None:
    folder = write_sample_release(
        tmp_path / "nova", n_cases=3, seed=2, layout=layout, progress=False
    )
    release = read_release(folder)
    assert release.fingerprint() == reference_fingerprint(release)


def test_fingerprint_sees_every_field_and_pixel(tmp_path) -> None:
    folder = write_sample_release(tmp_path / "nova", n_cases=2, seed=0, progress=False)
    release = read_release(folder)
    before = release.fingerprint()
    first = release.images[0]
    edited = dataclasses.replace(first, boxes=[*first.boxes, [1.0, 1.0, 2.0, 2.0]])
    assert (
        dataclasses.replace(release, images=[edited, *release.images[1:]]).fingerprint() != before
    )
    repainted = dataclasses.replace(first, image_bytes=first.read_bytes() + b"\0")
    assert (
        dataclasses.replace(release, images=[repainted, *release.images[1:]]).fingerprint()
        != before
    )
    assert release.fingerprint() == before


def test_fingerprint_hashes_the_bytes_that_were_checked(tmp_path) -> None:
    """Taken from the bytes read_release validated; a record pointed elsewhere is re-read."""
    folder = write_sample_release(tmp_path / "nova", n_cases=2, seed=0, progress=False)
    release = read_release(folder)
    before = release.fingerprint()
    assert before == reference_fingerprint(release)
    first = release.images[0]
    original = first.read_bytes()
    first.image_path.write_bytes(original + b"\0")  # changed on disk after reading
    assert release.fingerprint() == before
    assert read_release(folder).fingerprint() != before
    copy = tmp_path / "copy.png"
    copy.write_bytes(original + b"\0\0")
    first.image_path = copy  # the record itself edited: its digest is taken afresh
    assert release.fingerprint() == reference_fingerprint(release) != before
