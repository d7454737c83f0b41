"""The OpenAI-compatible endpoint backend against a scripted local server (127.0.0.1, free port)."""

from __future__ import annotations

import base64
import io
import json
import socket
import threading

import pytest
from PIL import Image

from novabench.cli import main
from novabench.data.release import read_release
from novabench.errors import NovaInputError
from novabench.run.backends import OpenAIEndpointBackend, Request
from novabench.run.predictions import read_manifest, read_predictions
from novabench.run.prompts import TaskPrompt
from novabench.run.runner import run_model
from tests.fake_openai_server import FakeOpenAIServer, Reply
from tests.release_factory import write_v1_release


@pytest.fixture(scope="module")
def release_dir(tmp_path_factory):
    return write_v1_release(tmp_path_factory.mktemp("release"), n_cases=3, image_size=(36, 30))


def backend_for(server, **kwargs):
    settings = {
        "max_concurrency": 2,
        "timeout": 120.0,  # generous: a loaded test machine must not look like a timeout
        "max_retries": 2,
        "backoff": 0.01,
        "max_tokens": 64,
    }
    settings.update(kwargs)
    return OpenAIEndpointBackend(server.base_url, "fake-vlm", **settings)


def image_request(prompt="Describe.", item="case0001_001.png", size=(36, 30)):
    return Request(item, "captioning", prompt, Image.new("RGB", size, (20, 40, 60)))


def test_a_normal_reply_with_and_without_an_image():
    with FakeOpenAIServer() as server:
        backend = backend_for(server, api_key="sk-test")
        answers = backend.generate(
            [image_request(), Request("case0001", "diagnosis", "History: headache.")]
        )
        assert [a.ok for a in answers] == [True, True]
        assert answers[0].text.endswith("(with image)") and answers[1].text.endswith("(text only)")
        assert answers[0].input_size == (36, 30) and answers[1].input_size is None
        assert all(a.latency_s >= 0 for a in answers)

        bodies = sorted(
            server.bodies, key=lambda body: isinstance(body["messages"][0]["content"], str)
        )
        image_body, text_body = bodies
        assert (
            image_body["model"] == "fake-vlm"
            and image_body["max_tokens"] == 64
            and image_body["temperature"] == 0.0
        )
        parts = image_body["messages"][0]["content"]
        url = next(p["image_url"]["url"] for p in parts if p["type"] == "image_url")
        assert url.startswith("data:image/png;base64,")
        decoded = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))
        assert (
            decoded.format == "PNG"
            and decoded.size == (36, 30)
            and decoded.getpixel((0, 0)) == (20, 40, 60)
        )
        assert text_body["messages"][0]["content"] == "History: headache."
        assert all(h.get("Authorization") == "Bearer sk-test" for h in server.headers)
    assert "sk-test" not in json.dumps(backend.describe())


@pytest.mark.parametrize("mode", ["500-once", "429-once"])
def test_a_transient_error_is_retried(mode):
    with FakeOpenAIServer() as server:
        [answer] = backend_for(server).generate([image_request(f"Describe. MODE:{mode}")])
        assert answer.ok and answer.text.startswith("answer to")
        assert server.n_requests == 2


def test_a_persistent_server_error_becomes_an_error_after_the_retries():
    with FakeOpenAIServer() as server:
        [answer] = backend_for(server, max_retries=2).generate([image_request("MODE:always-500")])
        assert not answer.ok and answer.text is None
        assert "HTTP 500" in answer.error and "3 attempts" in answer.error
        assert server.n_requests == 3


def test_a_timeout_is_retried_then_recorded():
    with FakeOpenAIServer(slow_seconds=1.5) as server:
        [answer] = backend_for(server, timeout=0.3, max_retries=1).generate(
            [image_request("MODE:slow")]
        )
        assert not answer.ok and "timed out" in answer.error and "2 attempts" in answer.error
        assert server.n_requests == 2


@pytest.mark.parametrize(
    ("mode", "words"), [("malformed", "no choices[0].message.content"), ("not-json", "not JSON")]
)
def test_a_malformed_reply_is_an_error_without_retrying(mode, words):
    with FakeOpenAIServer() as server:
        answers = backend_for(server).generate(
            [image_request(f"MODE:{mode}"), image_request("fine", item="b.png")]
        )
        assert (
            not answers[0].ok
            and "malformed reply" in answers[0].error
            and words in answers[0].error
        )
        assert answers[1].ok  # the other item is unaffected
        assert server.n_requests == 2


def test_the_shared_client_rules_apply_to_the_backend():
    # 408 is retried like 5xx (the one retryable-status rule); a null content is an error
    # naming the finish reason, not an empty answer that would parse as a model failure.
    null_content = '{"choices": [{"message": {"content": null}, "finish_reason": "length"}]}'
    script = [Reply(status=408), Reply(content="second try"), Reply(body=null_content)]
    with FakeOpenAIServer(script=script) as server:
        backend = backend_for(server, max_concurrency=1)
        retried, null = backend.generate([image_request("a"), image_request("b")])
    assert retried.ok and retried.text == "second try"
    assert not null.ok and "content is null, finish_reason 'length'" in null.error
    assert server.n_requests == 3


def test_a_refused_connection_is_retried_then_recorded():
    with socket.socket() as probe:  # a port nobody listens on once closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    backend = OpenAIEndpointBackend(
        f"http://127.0.0.1:{port}/v1", "m", max_retries=1, backoff=0.01, timeout=2
    )
    [answer] = backend.generate([image_request()])
    assert not answer.ok and "connection failed" in answer.error and "2 attempts" in answer.error


def test_requests_really_overlap_up_to_the_bound_and_never_beyond():
    # The server holds each request until three are in flight together (or fails them after
    # a bounded wait), so every answer being fine proves three ran concurrently.
    with FakeOpenAIServer(barrier_parties=3) as server:
        requests = [image_request(f"MODE:barrier {i}", item=f"{i}.png") for i in range(6)]
        answers = backend_for(server, max_concurrency=3).generate(requests)
        assert all(a.ok for a in answers)
        assert server.max_in_flight == 3
    with FakeOpenAIServer(hold_seconds=0.05) as server:
        answers = backend_for(server, max_concurrency=2).generate(
            [image_request(f"{i}") for i in range(7)]
        )
        assert all(a.ok for a in answers) and server.max_in_flight <= 2
        # Answers keep the request order whatever order the server finished in.
        assert [a.text for a in answers] == [
            backend_for(server).generate([image_request(f"{i}")])[0].text for i in range(7)
        ]


def test_bad_settings_are_refused():
    with pytest.raises(NovaInputError, match="http") as info:
        OpenAIEndpointBackend("localhost:8000", "m")
    assert info.value.field == "base_url"
    with pytest.raises(NovaInputError, match="max_concurrency >= 1"):
        OpenAIEndpointBackend("http://localhost:8000/v1", "m", max_concurrency=0)
    description = OpenAIEndpointBackend("http://user:secret@localhost:8000/v1/", "m").describe()
    assert description["endpoint"] == "http://localhost:8000/v1/chat/completions"
    assert "secret" not in json.dumps(description)


def test_a_run_through_the_endpoint_records_failures_and_continues(release_dir, tmp_path):
    release = read_release(release_dir)
    out = tmp_path / "raw.jsonl"
    broken_captions = {"captioning": TaskPrompt.from_text("captioning", "Describe. MODE:malformed")}
    with FakeOpenAIServer() as server:
        summary = run_model(
            release,
            tasks="all",
            backend=backend_for(server),
            out_path=out,
            prompts=broken_captions,
            progress=False,
        )
    n_images = len(release.images)
    assert summary.counts["localization"]["answered"] == n_images
    assert summary.counts["captioning"] == {
        "items": n_images,
        "done_before": 0,
        "answered": 0,
        "errors": n_images,
        "too_long": 0,
        "hit_token_limit": 0,
        "finish_unknown": 0,  # failures are not answers whose end is unknown
    }
    assert summary.counts["diagnosis"]["answered"] == len(release.cases())
    predictions = read_predictions(out, release)
    assert len(predictions.errors("captioning")) == n_images
    assert all("malformed" in message for message in predictions.errors("captioning").values())
    manifest = read_manifest(out)
    assert manifest["status"] == "complete-with-errors"
    assert (
        manifest["backend"]["type"] == "openai-endpoint"
        and manifest["backend"]["model"] == "fake-vlm"
    )
    assert manifest["runtime"]["max_concurrency"] == 2


def test_nova_run_with_an_endpoint_exit_codes(release_dir, tmp_path, capsys, monkeypatch):
    common = ["run", "--data", str(release_dir), "--no-progress"]
    with FakeOpenAIServer() as server:
        endpoint = [
            "--endpoint",
            server.base_url,
            "--model-name",
            "fake-vlm",
            "--max-concurrency",
            "2",
        ]
        out = tmp_path / "raw.jsonl"
        assert main([*common, *endpoint, "--task", "diagnosis", "--out", str(out)]) == 0
        assert len(read_predictions(out, read_release(release_dir)).records["diagnosis"]) == 3

        prompt = tmp_path / "caption.txt"
        prompt.write_text("Describe. MODE:always-500")
        failing = [
            "--task",
            "captioning",
            "--out",
            str(tmp_path / "c.jsonl"),
            "--max-retries",
            "0",
            "--prompt-file",
            f"captioning={prompt}",
            "--limit",
            "2",
        ]
        assert (
            main([*common, *endpoint, *failing]) == 1
        )  # some items failed; the file keeps the errors
        assert "rerun" in capsys.readouterr().err
        assert len(read_predictions(tmp_path / "c.jsonl").errors("captioning")) == 2

        monkeypatch.delenv("NOVA_TEST_KEY", raising=False)
        keyed = [
            "--task",
            "diagnosis",
            "--out",
            str(tmp_path / "k.jsonl"),
            "--api-key-env",
            "NOVA_TEST_KEY",
        ]
        assert main([*common, *endpoint, *keyed]) == 2
        monkeypatch.setenv("NOVA_TEST_KEY", "sk-from-env")
        assert main([*common, *endpoint, *keyed]) == 0
        assert server.headers[-1]["Authorization"] == "Bearer sk-from-env"


def test_qwen_input_size_rule_matches_hand_arithmetic():
    from novabench.run.backends import qwen2_5_vl_input_size

    # 480 / 28 = 17.14 -> 17 * 28 = 476 on both sides.
    assert qwen2_5_vl_input_size(480, 480) == (476, 476)
    # 1024 / 28 = 36.57 -> 37 * 28 = 1036 (the "up to 1036 for a 1024 input" seen in real answers);
    # 768 / 28 = 27.43 -> 27 * 28 = 756.
    assert qwen2_5_vl_input_size(1024, 768) == (1036, 756)
    # 20 x 20 rounds to 28 x 28 = 784 px < 3136: grown by sqrt(3136 / 400) = 2.8 -> ceil(56 / 28) * 28 = 56.
    assert qwen2_5_vl_input_size(20, 20) == (56, 56)
    # Over max_pixels=1000*28*28: shrink = sqrt(4000*4000 / 784000) = 4.517; floor(4000 / 4.517 / 28) * 28 = 868.
    assert qwen2_5_vl_input_size(4000, 4000, max_pixels=1000 * 28 * 28) == (868, 868)


def test_endpoint_records_the_qwen_input_size_when_asked(tmp_path):
    with FakeOpenAIServer() as server:
        backend = backend_for(server, input_size_rule="qwen2.5-vl")
        answer = backend.generate([image_request("find the lesion", size=(480, 480))])[0]
        assert answer.ok and answer.input_size == (476, 476)
        original = backend_for(server).generate(
            [image_request("find the lesion", size=(480, 480))]
        )[0]
        assert original.input_size == (480, 480)
        assert backend.describe()["input_size_rule"] == "qwen2.5-vl"
    with pytest.raises(NovaInputError, match="input size rule"):
        OpenAIEndpointBackend("http://127.0.0.1:9/v1", "m", input_size_rule="qwen3")


# --------------------------------------------------------------------------- the runner's pool


def sent_images(server):
    """The PNG bytes of every image the server received, in arrival order."""
    images = []
    for body in server.bodies:
        content = body["messages"][0]["content"]
        if isinstance(content, list):
            url = next(p["image_url"]["url"] for p in content if p["type"] == "image_url")
            assert url.startswith("data:image/png;base64,")
            images.append(base64.b64decode(url.split(",", 1)[1]))
    return images


def test_a_run_sends_the_release_pngs_byte_for_byte_and_records_it(release_dir, tmp_path):
    release = read_release(release_dir)
    out = tmp_path / "raw.jsonl"
    with FakeOpenAIServer() as server:
        run_model(
            release,
            tasks="localization",
            backend=backend_for(server, input_size_rule="qwen2.5-vl"),
            out_path=out,
            progress=False,
        )
        sent = sent_images(server)
    originals = {path.read_bytes() for path in (release_dir / "images").iterdir()}
    assert len(sent) == len(release.images) and set(sent) == originals
    assert read_manifest(out)["runtime"]["image_encoding"] == {"original": len(release.images)}
    # The input size comes from the PNG header (nothing decoded). Qwen's rule for 36 x 30:
    # 28 x 28 = 784 px < 3136, grown by sqrt(3136 / 1080) = 1.704: ceil(61.3 / 28) * 28 = 84,
    # ceil(51.1 / 28) * 28 = 56.
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert {tuple(line["input_size"]) for line in lines} == {(84, 56)}


def test_a_16_bit_png_is_windowed_and_the_manifest_says_it_was_reencoded(tmp_path):
    import numpy as np

    release_dir = write_v1_release(tmp_path / "release", n_cases=1, image_size=(36, 30))
    [image_file] = (release_dir / "images").iterdir()
    ramp = np.linspace(0, 4000, 36 * 30).reshape(30, 36).astype(np.uint16)
    Image.fromarray(ramp).save(image_file)  # 16-bit: PIL would clip most of it at 255
    out = tmp_path / "raw.jsonl"
    with FakeOpenAIServer() as server:
        run_model(
            read_release(release_dir),
            tasks="captioning",
            backend=backend_for(server),
            out_path=out,
            progress=False,
        )
        [sent] = sent_images(server)
    pixels = np.asarray(Image.open(io.BytesIO(sent)))
    assert pixels.shape == (30, 36, 3) and pixels.min() == 0 and pixels.max() == 255
    assert np.mean(pixels == 255) < 0.01  # windowed, not saturated
    encodings = read_manifest(out)["runtime"]["image_encoding"]
    assert encodings == {"reencoded:16-bit grayscale windowed to 8 bits": 1}


def test_png_for_model_sends_only_plain_pngs_as_they_are():
    from novabench.run.backends import png_for_model

    def png(image):
        buffer = io.BytesIO()
        image.save(buffer, format="PNG")
        return buffer.getvalue()

    for plain in (Image.new("L", (4, 3), 7), Image.new("RGB", (4, 3), (1, 2, 3))):
        assert png_for_model(png(plain)) == (png(plain), "original")
    rgba = Image.new("RGBA", (4, 3), (10, 20, 30, 0))
    sent, how = png_for_model(png(rgba))
    assert how == "reencoded:RGBA PNG as RGB" and Image.open(io.BytesIO(sent)).mode == "RGB"
    sent, how = png_for_model(png(Image.new("P", (4, 3))))
    assert how == "reencoded:palette PNG as RGB"
    with pytest.raises(NovaInputError, match="cannot read the image") as info:
        png_for_model(b"not an image at all", source="images/x.png", record="x.png")
    assert info.value.field == "image" and info.value.record == "x.png"


def test_while_one_request_hangs_the_others_keep_flowing(release_dir, tmp_path):
    # The first question is held until eight others have been answered: a pool lets them
    # through; batches that wait for their slowest member would not (the hold gives up
    # after a bounded wait, and the test then fails on `released_by_progress`).
    release = read_release(release_dir)
    held: dict[str, bool] = {}

    def latency(body):
        if "released_by_progress" in held:
            return 0.0
        held["released_by_progress"] = False
        for _ in range(600):  # 30 s at most
            if server.n_answered >= 8:
                held["released_by_progress"] = True
                break
            threading.Event().wait(0.05)
        return 0.0

    out = tmp_path / "raw.jsonl"
    with FakeOpenAIServer(latency=latency, keep_alive=True) as server:
        summary = run_model(
            release,
            tasks="all",
            backend=backend_for(server, max_concurrency=3),
            out_path=out,
            progress=False,
        )
        assert server.max_in_flight <= 3
    assert held["released_by_progress"]
    assert summary.complete and summary.n_answered == 2 * len(release.images) + 3


def test_a_run_survives_a_hostile_server_and_a_resume_fills_the_gap(release_dir, tmp_path):
    release = read_release(release_dir)
    names = [image.filename for image in release.images]
    script = [
        Reply(content="left \ud800 right"),  # a lone surrogate in the answer
        Reply(status=429, headers={"Retry-After": "0"}),
        Reply(content="after a rate limit"),
        Reply(status=500),
        Reply(content="after a server error"),
        Reply(close_after=12),  # the connection closed mid-reply
        Reply(content="after a closed connection"),
        Reply(content="dripped a byte at a time", drip=0.001),
        Reply(body="{garbage"),  # not JSON: not retried, recorded as an error
        Reply(content="last"),
    ]
    out = tmp_path / "raw.jsonl"
    with FakeOpenAIServer(script=script) as server:
        backend = backend_for(server, max_concurrency=1)
        first = run_model(
            release, tasks="captioning", backend=backend, out_path=out, progress=False
        )
        assert first.counts["captioning"]["errors"] == 1 and first.n_answered == 5
        second = run_model(
            release, tasks="captioning", backend=backend, out_path=out, progress=False
        )
        assert second.counts["captioning"]["done_before"] == 5 and second.complete
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    answers = {line["filename"]: line["raw_caption"] for line in lines if "error" not in line}
    assert sorted(answers) == sorted(names)  # each item answered once, none lost
    assert len([line for line in lines if "error" not in line]) == len(names)
    assert answers[names[0]] == "left \ufffd right"
    assert answers[names[1]] == "after a rate limit" and answers[names[2]] == "after a server error"
    [error_line] = [line for line in lines if "error" in line]
    assert answers[names[3]] == "after a closed connection"
    assert answers[names[4]] == "dripped a byte at a time"
    assert error_line["filename"] == names[5] and "not JSON" in error_line["error"]
    assert answers[names[5]] == "last"  # the resume asked it again
    assert read_predictions(out, release).records["captioning"][names[5]].error is None


def test_a_run_resumes_and_shards_merge_across_a_new_endpoint_address(release_dir, tmp_path):
    from novabench.run.predictions import merge_prediction_files

    release = read_release(release_dir)
    out = tmp_path / "raw.jsonl"
    with FakeOpenAIServer() as first_server, FakeOpenAIServer() as second_server:
        assert first_server.base_url != second_server.base_url
        run_model(
            release,
            tasks="diagnosis",
            backend=backend_for(first_server),
            out_path=out,
            limit=2,
            progress=False,
        )
        resumed = run_model(
            release,
            tasks="diagnosis",
            backend=backend_for(second_server),
            out_path=out,
            progress=False,
        )
        assert resumed.counts["diagnosis"]["done_before"] == 2 and resumed.complete
        manifest = read_manifest(out)
        assert manifest["backend"]["endpoint"].startswith(second_server.base_url)
        assert manifest["runtime"]["endpoints"] == [
            first_server.base_url + "/chat/completions",
            second_server.base_url + "/chat/completions",
        ]
        shards = []
        for index, server in enumerate((first_server, second_server)):
            shards.append(tmp_path / f"shard{index}.jsonl")
            run_model(
                release,
                tasks="diagnosis",
                backend=backend_for(server),
                out_path=shards[-1],
                shard=(index, 2),
                progress=False,
            )
        merged = merge_prediction_files(shards, tmp_path / "merged.jsonl", release=release)
        assert len(merged.records["diagnosis"]) == len(release.cases())
        # What answered still has to match: another model name is refused.
        other = OpenAIEndpointBackend(second_server.base_url, "another-vlm", max_retries=0)
        with pytest.raises(NovaInputError, match="different configuration"):
            run_model(release, tasks="diagnosis", backend=other, out_path=out, progress=False)


def test_a_file_from_before_image_transport_resumes_with_other_library_versions(
    release_dir, tmp_path
):
    # Manifests written before this change said "image_encoding" in the backend; versions
    # differ after any upgrade. Neither decides what answered, so the run resumes.
    release = read_release(release_dir)
    out = tmp_path / "raw.jsonl"
    with FakeOpenAIServer() as server:
        run_model(
            release,
            tasks="diagnosis",
            backend=backend_for(server),
            out_path=out,
            limit=1,
            progress=False,
        )
        manifest_path = out.with_name(out.name + ".manifest.json")
        manifest = json.loads(manifest_path.read_text())
        backend = manifest["backend"]
        del backend["image_transport"]
        backend["image_encoding"] = "png-base64-data-url"
        backend["versions"] = {"python": "3.10.0", "novabench": "0.0.9"}
        manifest["novabench_version"] = "0.0.9"
        manifest_path.write_text(json.dumps(manifest))
        resumed = run_model(
            release, tasks="diagnosis", backend=backend_for(server), out_path=out, progress=False
        )
    assert resumed.counts["diagnosis"]["done_before"] == 1 and resumed.complete


def test_nova_run_keeps_sixteen_requests_in_flight_by_default():
    import argparse

    from novabench.cli.run import build_backend, register

    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    args = parser.parse_args(
        ["run", "--data", "d", "--task", "all", "--out", "o.jsonl"]
        + ["--endpoint", "http://127.0.0.1:9/v1", "--model-name", "m"]
    )
    backend = build_backend(args)
    assert backend.max_concurrency == 16 and backend.accepts_png
    assert backend.describe()["max_concurrency"] == 16


def test_a_resumed_runs_length_limit_line_counts_the_earlier_calls_answers_too(
    release_dir, tmp_path, capsys
):
    # user18: after a resume, "17 answer(s) stopped" while the file (and every report of
    # it) held 22: the line counted this call's answers only, and said so nowhere.
    cut = json.dumps(
        {
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "length",
                    "message": {"role": "assistant", "content": '{"most_likely_diagnosis": "Glio'},
                }
            ]
        }
    )
    raw = tmp_path / "raw.jsonl"
    command = ["run", "--data", str(release_dir), "--task", "diagnosis", "--model-name",
               "fake-vlm", "--out", str(raw), "--max-concurrency", "1",
               "--max-new-tokens", "8", "-q"]  # fmt: skip
    with FakeOpenAIServer(script=[Reply(body=cut)]) as server:
        assert main([*command, "--endpoint", server.base_url, "--limit", "1"]) == 0
    capsys.readouterr()
    with FakeOpenAIServer(script=[Reply(body=cut)]) as server:
        assert main([*command, "--endpoint", server.base_url]) == 0
    assert (
        "1 answer(s) of this call and 1 of earlier calls in the file (2 in all) stopped at "
        "the answer length limit"
    ) in capsys.readouterr().err
    lines = [json.loads(line) for line in raw.read_text().splitlines()]
    assert sum(line.get("finish_reason") == "length" for line in lines) == 2


def test_an_answer_stopped_at_the_length_limit_is_recorded_counted_and_reported(
    release_dir, tmp_path, capsys
):
    # user13: `finish_reason: "length"` (the answer reached max_tokens, so it may be cut off)
    # was dropped: nothing in the run file, its summary or the report said so.
    cut = json.dumps(
        {
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "length",
                    "message": {"role": "assistant", "content": '{"most_likely_diagnosis": "Glio'},
                }
            ]
        }
    )
    raw, parsed = tmp_path / "raw.jsonl", tmp_path / "parsed.jsonl"
    with FakeOpenAIServer(script=[Reply(body=cut)]) as server:
        command = ["run", "--data", str(release_dir), "--task", "diagnosis", "--endpoint",
                   server.base_url, "--model-name", "fake-vlm", "--out", str(raw),
                   "--max-concurrency", "1", "--max-new-tokens", "8", "-q"]  # fmt: skip
        assert main(command) == 0
    said = capsys.readouterr().err
    assert (
        "1 answer(s) stopped at the answer length limit (finish_reason length, recorded on "
        "their lines) and may be cut off; to give the model more room, run again with a higher "
        "--max-new-tokens into a new --out"
    ) in said
    lines = [json.loads(line) for line in raw.read_text().splitlines()]
    assert [line.get("finish_reason") for line in lines] == ["length"] + [None] * (len(lines) - 1)
    assert read_manifest(raw)["counts"]["diagnosis"]["hit_token_limit"] == 1

    # nova parse keeps it on the line; the report counts it and says what it means.
    assert main(["parse", str(raw), "--data", str(release_dir), "--out", str(parsed), "-q"]) == 0
    assert json.loads(parsed.read_text().splitlines()[0])["finish_reason"] == "length"
    report_path = tmp_path / "report.json"
    evaluate = ["evaluate", "--data", str(release_dir), "--out", str(report_path),
                "--bootstrap", "0", "--no-breakdowns"]  # fmt: skip
    for source in (raw, parsed):
        assert main([*evaluate, "--predictions", str(source), "--force"]) == 0
        diagnosis = json.loads(report_path.read_text())["tasks"]["diagnosis"]
        assert diagnosis["coverage"]["hit_token_limit"] == 1
        assert (
            "1 answer(s) stopped at the model's answer length limit (finish_reason length) and "
            "may be cut off; a run with a higher --max-new-tokens may score otherwise"
        ) in diagnosis["notes"]
