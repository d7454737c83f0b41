"""scrub_paths: a Space's message keeps no server path, and nothing else is changed."""

from __future__ import annotations

import pytest

from novabench.spaces.source import scrub_paths


@pytest.mark.parametrize(
    ("message", "shown"),
    [
        # Server paths lose everything but their last part.
        ("cannot read /srv/app/data/nova-v1.parquet", "cannot read nova-v1.parquet"),
        ("no file at ~/spaces/nova/x.png", "no file at x.png"),
        ("(/tmp/gradio/9f/pred.jsonl)", "(pred.jsonl)"),
        ("out=/data/runs/a.jsonl", "out=a.jsonl"),
        # What the user's own file wrote stays as written: it is no server path.
        ("image path '../../etc/passwd' escapes", "image path '../../etc/passwd' escapes"),
        ("image path 'images/./../x.png'", "image path 'images/./../x.png'"),
        ("see ./runs/a.jsonl", "see ./runs/a.jsonl"),
        # URLs are addresses, not paths of this server.
        ("see https://huggingface.co/datasets/x/y", "see https://huggingface.co/datasets/x/y"),
    ],
)
def test_server_paths_are_scrubbed_and_nothing_else(message: str, shown: str) -> None:
    assert scrub_paths(message) == shown
