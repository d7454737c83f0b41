"""The release fingerprint keeps its value: reports and run manifests record it.

The reference below is the original definition (records deep-copied with
``dataclasses.asdict``), written out here; the fast path must give the same digest.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
from pathlib import Path

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


@pytest.fixture(scope="module")
def two_cases(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-case sample (seed 0) written once for this file's tests, which only read it (a
    test that changes a file works on a copy): four builds cost 1 CPU s."""
    return write_sample_release(
        tmp_path_factory.mktemp("fingerprint") / "nova", n_cases=2, seed=0, progress=False
    )


# The run's shared sample in both layouts (8 cases, built once per run), not a 3-case sample
# written again per layout here: the same check on more records, 0.5 CPU s less.
@pytest.mark.parametrize("layout", ["sample_release", "sample_release_legacy"])
def test_fingerprint_equals_the_original_definition(
    request: pytest.FixtureRequest, layout: str
) -> None:
    release = read_release(request.getfixturevalue(layout))
    assert len(release.images) > 8  # several images per case
    assert release.fingerprint() == reference_fingerprint(release)


def test_fingerprint_sees_every_field_and_pixel(two_cases) -> None:
    release = read_release(two_cases)
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


def test_fingerprint_hashes_the_bytes_that_were_checked(two_cases, tmp_path) -> None:
    """Taken from the bytes read_release validated; a record pointed elsewhere is re-read."""
    folder = Path(shutil.copytree(two_cases, tmp_path / "nova"))  # a PNG is rewritten below
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


# The value cc36a45 (the tree before reading was made faster) gives for the tests' sample
# release (`sample_release`: 8 cases, seed 0), computed by running that tree's own code on
# the sample the current tree writes (its PNGs carry novabench's mark since prov21, so the
# bytes and the value changed then; before, c974e48935a2e358 over PNGs 6390e833420d81e2):
# `write_sample_release(DIR, n_cases=8, seed=0, layout='v1')`, then
# `git archive cc36a45 src | tar -x -C OLD; PYTHONPATH=OLD/src python -c "...
# read_release(DIR).fingerprint()"`.
# The legacy layout of the same sample gave the same value. The sample's PNG bytes come
# from PIL's encoder, so the value holds where PIL writes those same bytes: the SHA-256 of
# the images' digests, recorded beside it, tells.
FINGERPRINT_AT_CC36A45 = "6a5ce007251e5ff3"
PNG_DIGESTS_AT_CC36A45 = "7df4cd0a5330f90c"


@pytest.mark.parametrize("fixture", ["sample_release", "sample_release_legacy"])
def test_the_sample_release_keeps_the_fingerprint_the_old_code_gave(request, fixture) -> None:
    release = read_release(request.getfixturevalue(fixture))
    png_digests = hashlib.sha256(
        b"".join(hashlib.sha256(image.read_bytes()).digest() for image in release.images)
    ).hexdigest()[:16]
    if png_digests != PNG_DIGESTS_AT_CC36A45:
        pytest.skip(f"this PIL encodes the sample's PNGs otherwise ({png_digests})")
    assert release.fingerprint() == FINGERPRINT_AT_CC36A45


def test_records_with_other_attributes_or_values_keep_the_original_definition(
    tmp_path,
) -> None:
    """The fast path copies a record's attributes when they are exactly its fields; an
    attribute set on a record beside them is left out, as before, and odd values (no
    ASCII, None, control characters, floats that print with an exponent) are encoded as
    json encodes them."""
    folder = write_sample_release(tmp_path / "nova", n_cases=2, seed=1, progress=False)
    release = read_release(folder)
    first, second = release.images[0], release.images[1]
    first.note = "not a field"  # type: ignore[attr-defined]
    first.caption = "Läsion \x00 “quoted” \\ \u2028 end"
    first.title = None
    second.boxes = [[1e-7, 2.5e16, 3.0, 4.0]]
    second.extra = {"zeta": "z", "alpha": None}  # keys out of order: sorted in the JSON
    assert release.fingerprint() == reference_fingerprint(release)


def test_a_record_that_contains_itself_is_an_input_error_naming_it(two_cases) -> None:
    from novabench.errors import NovaInputError

    folder = two_cases
    release = read_release(folder)
    second = release.images[1]
    # A script adding a rater's boxes appended the rater list to itself by mistake.
    second.rater_boxes = [{"rater": "rater3", "boxes": [[10.0, 12.0, 30.0, 28.0]]}]
    second.rater_boxes[0]["boxes"].append(second.rater_boxes)
    with pytest.raises(NovaInputError) as caught:
        release.fingerprint()
    assert caught.value.source == str(folder)
    assert caught.value.record == second.filename
    assert caught.value.field == "rater_boxes"
    assert "contains itself" in caught.value.message


def test_a_value_json_cannot_hold_is_an_input_error_naming_the_meta_key(two_cases) -> None:
    from novabench.errors import NovaInputError

    release = read_release(two_cases)
    first = release.images[0]
    first.extra = {**first.extra, "differential_diagnosis": {"glioma", "abscess"}}
    with pytest.raises(NovaInputError) as caught:
        release.fingerprint()
    assert (caught.value.record, caught.value.field) == (
        first.filename,
        "extra[differential_diagnosis]",
    )
    assert "Object of type set is not JSON serializable" in caught.value.message
