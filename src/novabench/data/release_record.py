"""NovaRelease: the records of a read and validated release, and what they count.

Readers (:func:`novabench.data.release.read_release`) build it; the dataset rows, the card
and the export layout take it. It holds no reading code, so those modules depend on it and
not on the readers (which use them): ``novabench.data.release`` re-exports it.

Example:
    >>> from pathlib import Path
    >>> NovaRelease(root=Path("."), layout="v1", images=[]).n_cases
    0
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from novabench.errors import NovaInputError
from novabench.records import CaseRecord, ImageRecord, is_placeholder_diagnosis

__all__ = ["Layout", "NovaRelease"]

Layout = Literal["v1", "legacy", "export"]


def _record_json_encoder() -> Callable[[dict[str, Any]], str]:
    """``json.JSONEncoder(sort_keys=True, ensure_ascii=False).encode`` of a record's fields,
    with json's C encoder made once instead of once per call (the same text), and without
    its watch for circular references: records are trees (a record made to hold itself
    raises RecursionError here instead of ValueError; ``fingerprint`` names it).
    """
    encoder = json.JSONEncoder(sort_keys=True, ensure_ascii=False)
    make_encoder = getattr(json.encoder, "c_make_encoder", None)
    if make_encoder is None:  # no C accelerator in this Python
        return encoder.encode
    # The arguments JSONEncoder.iterencode gives it, with no markers of circular references.
    iterencode = make_encoder(
        None,
        encoder.default,
        json.encoder.encode_basestring,
        None,
        encoder.key_separator,
        encoder.item_separator,
        True,
        encoder.skipkeys,
        encoder.allow_nan,
    )
    return lambda fields: "".join(iterencode(fields, 0))


@dataclass
class NovaRelease:
    """A validated release: records plus what was noticed while reading it."""

    root: Path
    layout: Layout
    images: list[ImageRecord]
    extra_meta_keys: tuple[str, ...] = ()
    warnings: list[str] = field(default_factory=list)
    provenance: dict[str, Any] | None = None  # set when novabench made it (sample, ingest)
    # SHA-256 of each image's bytes as read_release checked them, so fingerprint() reads no
    # file again: id(record) -> (record, its image_path, its image_bytes, digest). A record
    # replaced or edited since (another object, path or bytes) is hashed afresh.
    _png_digests: dict[int, tuple[ImageRecord, Path | None, bytes | None, bytes]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def cases(self) -> list[CaseRecord]:
        """Cases ordered by case id, each with its images ordered by scan id and filename."""
        grouped: dict[str, list[ImageRecord]] = {}
        for image in self.images:
            grouped.setdefault(image.case_id, []).append(image)
        cases = []
        for case_id in sorted(grouped):
            images = sorted(grouped[case_id], key=lambda image: (image.scan_id, image.filename))
            first = images[0]
            cases.append(
                CaseRecord(
                    case_id=case_id,
                    title=first.title,
                    publication_date=first.publication_date,
                    clinical_history=first.clinical_history,
                    final_diagnosis=first.final_diagnosis,
                    extra=dict(first.extra),
                    images=images,
                )
            )
        return cases

    @property
    def n_images(self) -> int:
        """Number of images."""
        return len(self.images)

    @property
    def n_cases(self) -> int:
        """Number of distinct cases."""
        return len({image.case_id for image in self.images})

    @property
    def n_gold_boxes(self) -> int:
        """Number of gold boxes over all images."""
        return sum(len(image.boxes) for image in self.images)

    @property
    def n_images_without_gold(self) -> int:
        """Images with no gold box (null ``bboxes`` or rater boxes only)."""
        return sum(1 for image in self.images if not image.boxes)

    @property
    def n_placeholder_diagnoses(self) -> int:
        """Cases whose final diagnosis is a placeholder (see ``is_placeholder_diagnosis``)."""
        return sum(1 for case in self.cases() if is_placeholder_diagnosis(case.final_diagnosis))

    @property
    def images_per_case(self) -> dict[int, int]:
        """Histogram ``{images in a case: number of such cases}``, sorted by key."""
        counts = Counter(Counter(image.case_id for image in self.images).values())
        return dict(sorted(counts.items()))

    @property
    def raters(self) -> tuple[str, ...]:
        """Names of the individual raters seen in the boxes, sorted."""
        return tuple(
            sorted({entry["rater"] for image in self.images for entry in image.rater_boxes})
        )

    def fingerprint(self) -> str:
        """A digest of the release content (records and image bytes), not of its location.

        Two copies of the same release share it; any change of text, box or pixel changes
        it. The builder keys its cache on it, so an edited release is never served stale.
        The bytes hashed are those ``read_release`` checked (hashed as they were read); a
        record built or edited since is read again.

        Example:
            >>> NovaRelease(root=Path("."), layout="v1", images=[]).fingerprint()[:8]
            '4f53cda1'
        """
        # Each record's fields as JSON (keys sorted), then the SHA-256 of its PNG bytes
        # (never decoded); the release's extra meta keys last. Fields are read one by one,
        # not deep-copied by dataclasses.asdict, and the pieces hashed in one call: the
        # bytes hashed, and so the digest, are the same.
        as_json = _record_json_encoder()
        excluded = ("image_path", "image_bytes")
        names = {record_field.name for record_field in dataclasses.fields(ImageRecord)}
        kept_names = [name for name in sorted(names) if name not in excluded]
        pieces: list[bytes] = []
        digests = self._png_digests
        from novabench.progress import progress_bar

        for image in progress_bar(self.images, desc="fingerprinting release", unit="image"):
            attributes = vars(image)
            if attributes.keys() == names:  # exactly the fields: copied at once
                fields = attributes.copy()
                del fields["image_path"], fields["image_bytes"]
            else:  # other attributes set on the record are not part of it
                fields = {name: getattr(image, name) for name in kept_names}
            try:
                pieces.append(as_json(fields).encode("utf-8"))
            except (RecursionError, TypeError) as error:
                raise self._unencodable_field(image, fields, as_json, error) from None
            cached = digests.get(id(image))
            if (
                cached is not None
                and cached[0] is image
                and (cached[1] is image.image_path or cached[1] == image.image_path)
                and cached[2] is image.image_bytes
            ):
                pieces.append(cached[3])
            else:
                pieces.append(self._png_digest(image))
        pieces.append(json.dumps(list(self.extra_meta_keys)).encode("utf-8"))
        return hashlib.sha256(b"".join(pieces)).hexdigest()[:16]

    def _unencodable_field(
        self,
        image: ImageRecord,
        fields: dict[str, Any],
        as_json: Callable[[dict[str, Any]], str],
        error: RecursionError | TypeError,
    ) -> NovaInputError:
        """The error naming the record and the field whose value JSON cannot hold."""
        candidates = [(name, {name: value}) for name, value in sorted(fields.items())]
        extra = fields.get("extra")
        if isinstance(extra, dict):  # name the meta key, not the whole ``extra``
            candidates = [
                (f"extra[{key}]", {key: value}) for key, value in extra.items()
            ] + candidates
        field = None
        for name, part in candidates:
            try:
                as_json(part)
            except (RecursionError, TypeError):
                field = name
                break
        if isinstance(error, RecursionError):
            message = (
                "contains itself (or nests deeper than Python can encode), so the release "
                "cannot be fingerprinted: a record holds text, numbers, lists and dicts"
            )
        else:
            message = (
                f"cannot be fingerprinted: {error}; a record holds text, numbers, lists and dicts"
            )
        return NovaInputError(message, source=str(self.root), record=image.filename, field=field)

    def _png_digest(self, image: ImageRecord) -> bytes:
        """SHA-256 of the image's PNG bytes: the one taken while reading, if still its own."""
        cached = self._png_digests.get(id(image))
        if (
            cached is not None
            and cached[0] is image
            and cached[1] == image.image_path
            and cached[2] is image.image_bytes
        ):
            return cached[3]
        return hashlib.sha256(image.read_bytes()).digest()

    def summary(self) -> dict[str, Any]:
        """Counts that describe the release, JSON-ready (``nova info`` prints them).

        Example:
            >>> release = NovaRelease(root=Path("."), layout="v1", images=[])
            >>> release.summary()["n_images"]
            0
        """
        return {
            "root": str(self.root),
            "layout": self.layout,
            "n_images": self.n_images,
            "n_cases": self.n_cases,
            "n_gold_boxes": self.n_gold_boxes,
            "n_images_without_gold": self.n_images_without_gold,
            "n_placeholder_diagnoses": self.n_placeholder_diagnoses,
            "raters": list(self.raters),
            "images_per_case": {str(k): v for k, v in self.images_per_case.items()},
            "extra_meta_keys": list(self.extra_meta_keys),
            "warnings": list(self.warnings),
            # Who made the data when novabench did (None: no record, as the NOVA release).
            "provenance": dict(self.provenance) if self.provenance else None,
        }
