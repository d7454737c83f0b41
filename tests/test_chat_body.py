"""The chat body encoder: DataURL values spliced in equal json.dumps of their strings."""

from __future__ import annotations

import base64
import json
import random
from typing import Any

import pytest

from novabench.client import DataURL, encode_chat_body
from novabench.errors import NovaInputError

_TEXTS = ["", "plain", 'quote " and \\ backslash', "tab\tnew\nline", "é ü 中文 😀", "\x00nul"]


def _random_value(rng: random.Random, depth: int, urls: list[DataURL]) -> Any:
    kind = rng.randrange(7 if depth < 3 else 4)
    if kind == 0:
        return rng.choice(_TEXTS) + str(rng.random())
    if kind == 1:
        return rng.choice([None, True, False, rng.randint(-(10**6), 10**6), rng.random()])
    if kind in (2, 3):
        url = DataURL(rng.choice(["image/png", "image/jpeg"]), rng.randbytes(rng.randrange(64)))
        urls.append(url)
        return url
    if kind in (4, 5):
        return {f"k{i}{rng.choice(_TEXTS)}": _random_value(rng, depth + 1, urls) for i in range(3)}
    return [_random_value(rng, depth + 1, urls) for _ in range(rng.randrange(4))]


def _as_strings(value: Any) -> Any:
    if isinstance(value, DataURL):
        return str(value)
    if isinstance(value, dict):
        return {key: _as_strings(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_as_strings(item) for item in value]
    return value


@pytest.mark.parametrize("seed", range(200))
def test_spliced_body_equals_json_dumps_of_the_url_strings(seed: int) -> None:
    rng = random.Random(seed)
    urls: list[DataURL] = []
    body = {"model": "m", "messages": _random_value(rng, 0, urls), "stream": False}
    encoded = encode_chat_body(body)
    assert encoded == json.dumps(_as_strings(body)).encode("utf-8")
    assert json.loads(encoded) == json.loads(json.dumps(_as_strings(body)))


def test_a_data_url_is_the_base64_of_its_bytes() -> None:
    data = bytes(range(256)) * 3
    url = DataURL("image/png", data)
    body = encode_chat_body({"image_url": {"url": url}})
    sent = json.loads(body)["image_url"]["url"]
    prefix = "data:image/png;base64,"
    assert sent.startswith(prefix) and base64.b64decode(sent[len(prefix) :]) == data


def test_a_callers_string_holding_the_mark_is_sent_as_it_is() -> None:
    mark = "\x00novabench-data-url\x00"
    body = {"text": mark, "url": DataURL("image/png", b"PNG"), "more": [mark, mark]}
    assert encode_chat_body(body) == json.dumps(_as_strings(body)).encode("utf-8")


def test_what_json_cannot_encode_is_refused_as_json_does() -> None:
    with pytest.raises(TypeError, match="Object of type set is not JSON serializable"):
        encode_chat_body({"bad": {1, 2}, "url": DataURL("image/png", b"")})


@pytest.mark.parametrize(
    ("media_type", "data", "field"),
    [
        ('image/png"', b"", "media_type"),
        ("image", b"", "media_type"),
        (None, b"", "media_type"),
        ("image/png", "not bytes", "data"),
    ],
)
def test_a_malformed_data_url_is_refused_naming_the_field(
    media_type: Any, data: Any, field: str
) -> None:
    with pytest.raises(NovaInputError) as caught:
        DataURL(media_type, data)
    assert caught.value.field == field
