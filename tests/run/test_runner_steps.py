"""run_model's three steps on their own: plan_run, resume_run, execute_run."""

from __future__ import annotations

import hashlib
import json

import pytest

from novabench.data.release import read_release
from novabench.errors import NovaInputError
from novabench.run.backends import Answer
from novabench.run.predictions import RunManifest
from novabench.run.runner import execute_run, plan_run, resume_run, run_model
from tests.release_factory import write_v1_release


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    # 4 cases, 1+2+3+1 = 7 images
    return read_release(write_v1_release(tmp_path_factory.mktemp("release"), n_cases=4))


class CaptionWriter:
    """A batched backend that captions every image and can fail on chosen files."""

    name = "caption-writer"

    def __init__(self, fail=(), drop_one=False):
        self.fail = set(fail)
        self.drop_one = drop_one
        self.asked: list[str] = []

    def describe(self):
        return {"type": "test", "model": self.name, "generation": {"max_new_tokens": 32}}

    def generate(self, requests):
        self.asked += [request.item_id for request in requests]
        answers = [
            Answer(error="HTTP 500 upstream overloaded")
            if request.item_id in self.fail
            else Answer(text=f"Axial FLAIR of {request.item_id}: right frontal hyperintensity.")
            for request in requests
        ]
        return answers[:-1] if self.drop_one else answers


class PooledReader:
    """Stands in for the endpoint backend: single answers from many threads, PNGs accepted."""

    name = "pooled"
    max_concurrency = 3
    accepts_png = True

    def answer(self, request):
        return Answer(text="no target")


def _shard_of(name: str, count: int) -> int:
    # The rule written out: the first 8 bytes of the item id's SHA-256, big-endian, modulo n.
    return int(hashlib.sha256(name.encode("utf-8")).hexdigest()[:16], 16) % count


def test_plan_lists_this_shards_items_in_release_order_and_cut_at_the_limit(release):
    plan = plan_run(
        release, tasks=["captioning", "diagnosis"], backend=CaptionWriter(), shard="1/2", limit=2
    )
    images = [r.filename for r in release.images if _shard_of(r.filename, 2) == 1][:2]
    cases = [c.case_id for c in release.cases() if _shard_of(c.case_id, 2) == 1][:2]
    assert len(images) == 2 and cases
    assert [item.filename for item in plan.items["captioning"]] == images
    assert [item.case_id for item in plan.items["diagnosis"]] == cases
    assert plan.tasks == ("captioning", "diagnosis") and plan.shard == (1, 2)
    assert plan.prompts["captioning"].task == "captioning" and plan.batch_size == 1
    assert (plan.pooled, plan.send_png) == (False, False)
    pooled = plan_run(release, tasks="localization", backend=PooledReader())
    assert (pooled.pooled, pooled.send_png) == (True, True)
    assert len(pooled.items["localization"]) == 7


def test_plan_refuses_bad_arguments_before_any_file_exists(release, tmp_path):
    with pytest.raises(NovaInputError, match="box convention"):
        plan_run(release, tasks="localization", backend=CaptionWriter(), box_convention="yxyx")
    with pytest.raises(NovaInputError, match="limit must not be negative"):
        plan_run(release, tasks="captioning", backend=CaptionWriter(), limit=-1)
    assert list(tmp_path.iterdir()) == []


def test_resume_leaves_out_what_the_file_answers_and_retries_failures(release, tmp_path):
    out = tmp_path / "raw.jsonl"
    failed = release.images[3].filename
    run_model(
        release,
        tasks="captioning",
        backend=CaptionWriter(fail={failed}),
        out_path=out,
        limit=5,
        progress=False,
    )
    written, manifest_text = out.read_bytes(), RunManifest.path_for(out).read_text()

    plan = plan_run(release, tasks="captioning", backend=CaptionWriter())
    resumed = resume_run(plan, release, CaptionWriter(), out)
    # 5 asked before, 4 answered: the failure and the 2 never asked are pending.
    expected = [failed] + [r.filename for r in release.images[5:]]
    assert [item.filename for item in resumed.pending["captioning"]] == expected
    assert resumed.counts["captioning"] == {
        "items": 7,
        "done_before": 4,
        "answered": 0,
        "errors": 0,
        "too_long": 0,
        "hit_token_limit": 0,
        "finish_unknown": 0,
    }
    assert resumed.manifest.created_at == json.loads(manifest_text)["created_at"]
    # Resuming reads and checks; it writes nothing.
    assert out.read_bytes() == written
    assert RunManifest.path_for(out).read_text() == manifest_text


def test_resume_refuses_a_file_asked_by_another_model_and_leaves_it_alone(release, tmp_path):
    out = tmp_path / "raw.jsonl"
    run_model(release, tasks="captioning", backend=CaptionWriter(), out_path=out, progress=False)
    written = out.read_bytes()
    other = CaptionWriter()
    other.name = "another-model"
    plan = plan_run(release, tasks="captioning", backend=other)
    with pytest.raises(NovaInputError, match="different configuration") as error:
        resume_run(plan, release, other, out)
    assert error.value.field == "backend"
    assert out.read_bytes() == written


def test_execute_asks_only_the_pending_items_and_records_the_final_status(release, tmp_path):
    out = tmp_path / "raw.jsonl"
    backend = CaptionWriter()
    plan = plan_run(release, tasks="captioning", backend=backend, limit=3)
    resumed = resume_run(plan, release, backend, out)
    resumed.pending["captioning"] = resumed.pending["captioning"][1:]  # as if one were done
    summary = execute_run(plan, resumed, backend, progress=False)
    asked = [r.filename for r in release.images[1:3]]
    assert backend.asked == asked
    assert [json.loads(line)["filename"] for line in out.read_text().splitlines()] == asked
    assert summary.counts["captioning"]["answered"] == 2
    # 3 planned, 0 done before, 2 answered: not every item has an answer.
    assert RunManifest.read(out).status == "complete-with-errors"


def test_execute_marks_the_run_interrupted_when_the_backend_loses_answers(release, tmp_path):
    out = tmp_path / "raw.jsonl"
    backend = CaptionWriter(drop_one=True)
    plan = plan_run(release, tasks="captioning", backend=backend, batch_size=2)
    resumed = resume_run(plan, release, backend, out)
    with pytest.raises(RuntimeError, match="returned 1 answers for 2 requests"):
        execute_run(plan, resumed, backend, progress=False)
    assert RunManifest.read(out).status == "interrupted"
    assert out.read_text() == ""
