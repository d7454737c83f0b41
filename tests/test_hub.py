"""Hub calls end in one line naming the repository and what to do (novabench.hub).

The exceptions are the real classes the installed huggingface_hub raises: HTTP errors are
made by its own ``hf_raise_for_status`` from a response of the HTTP library it is built on,
and connection errors are that library's own. No test touches the network.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest
from huggingface_hub import HfApi
from huggingface_hub.errors import (
    HfHubHTTPError,
    LocalTokenNotFoundError,
    OfflineModeIsEnabled,
    RepositoryNotFoundError,
)
from huggingface_hub.utils import hf_raise_for_status

import novabench.data.export as export_module
import novabench.data.hf as hf_module
from novabench.cli import main
from novabench.data.export import export_release
from novabench.errors import NovaInputError
from novabench.hub import describe_hub_error, hub_errors
from tests.release_factory import write_v1_release

# The HTTP library huggingface_hub is built on (httpx2, httpx or requests by version).
HTTP = importlib.import_module(
    next(
        base for base in HfHubHTTPError.__mro__[1:] if base.__module__ != "builtins"
    ).__module__.split(".")[0]
)
REPO = "me/nova"


def _hub_http_error(status: int, url: str, **headers: str) -> Exception:
    """What huggingface_hub raises for a response with this status (via hf_raise_for_status)."""
    response = HTTP.Response(status, headers=headers, request=HTTP.Request("POST", url))
    try:
        hf_raise_for_status(response)
    except Exception as error:  # the class is the point of the test
        return error
    raise AssertionError(f"hf_raise_for_status accepted {status}")


def _connect_error() -> Exception:
    request = HTTP.Request("POST", "https://huggingface.co/api/repos/create")
    return HTTP.ConnectError("[Errno -3] Temporary failure in name resolution", request=request)


FAILURES: dict[str, tuple[Any, type[BaseException], str]] = {
    # name: (error factory, class the installed huggingface_hub raises, words of the fix)
    "unreachable": (_connect_error, HTTP.HTTPError, "unreachable"),
    "offline-mode": (
        lambda: OfflineModeIsEnabled("offline"),
        OfflineModeIsEnabled,
        "HF_HUB_OFFLINE",
    ),
    "no-token": (
        lambda: LocalTokenNotFoundError("no token"),
        LocalTokenNotFoundError,
        "hf auth login",
    ),
    "401-bad-token": (
        lambda: _hub_http_error(
            401,
            "https://huggingface.co/api/repos/create",
            **{"X-Error-Message": "Invalid credentials in Authorization header"},
        ),
        HfHubHTTPError,
        "refused the credentials (401)",
    ),
    "401-private": (
        lambda: _hub_http_error(401, f"https://huggingface.co/api/datasets/{REPO}"),
        RepositoryNotFoundError,
        "(401)",
    ),
    "403": (
        lambda: _hub_http_error(403, "https://huggingface.co/api/repos/create"),
        HfHubHTTPError,
        "write access",
    ),
    "404": (
        lambda: _hub_http_error(
            404, f"https://huggingface.co/api/datasets/{REPO}", **{"X-Error-Code": "RepoNotFound"}
        ),
        RepositoryNotFoundError,
        "no such dataset repository",
    ),
}


@pytest.fixture(scope="module")
def release_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_v1_release(
        tmp_path_factory.mktemp("hub") / "release", n_cases=1, image_size=(32, 32)
    )


@pytest.fixture
def online_with_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(export_module, "_hub_offline", lambda: False)
    monkeypatch.setenv("HF_TOKEN", "hf_not_a_real_token")


@pytest.mark.parametrize("name", sorted(FAILURES))
def test_each_real_hub_failure_is_described_in_one_line(name: str) -> None:
    make, expected_class, words = FAILURES[name]
    error = make()
    assert isinstance(error, expected_class)
    message = describe_hub_error(error, REPO)
    assert message is not None and words in message
    assert "\n" not in message


@pytest.mark.parametrize("name", sorted(FAILURES))
@pytest.mark.parametrize("failing", ["create_repo", "upload_folder"])
def test_push_failure_is_one_line_exit_2_and_never_reported_done(
    name: str,
    failing: str,
    release_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    online_with_token: None,
) -> None:
    make, _, words = FAILURES[name]
    calls: list[str] = []

    def fails(self: Any, *args: Any, **kwargs: Any) -> None:
        calls.append(failing)
        raise make()

    def succeeds(self: Any, *args: Any, **kwargs: Any) -> str:
        calls.append("ok")
        return "https://huggingface.co/datasets/me/nova/commit/abc"

    for method in ("create_repo", "upload_folder"):
        monkeypatch.setattr(HfApi, method, fails if method == failing else succeeds)
    out = tmp_path / "export"
    assert main(["export", str(release_dir), str(out), "--push", REPO, "-q"]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith(f"nova export: error: {REPO}")
    assert words in lines[0] and "push failed" in lines[0]
    assert "no files were uploaded" in lines[0] and "hf upload" in lines[0]
    assert "commit" not in captured.out and "exported" not in captured.out
    assert calls[-1] == failing  # the failing call was reached, nothing after it
    assert (out / "README.md").is_file()  # the local export is kept whole


def test_missing_token_is_refused_before_any_work(
    release_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import huggingface_hub

    monkeypatch.setattr(export_module, "_hub_offline", lambda: False)
    monkeypatch.setattr(huggingface_hub, "get_token", lambda: None)

    def never(self: Any, *args: Any, **kwargs: Any) -> None:
        raise AssertionError("no Hub call without a token")

    monkeypatch.setattr(HfApi, "create_repo", never)
    out = tmp_path / "export"
    assert main(["export", str(release_dir), str(out), "--push", REPO, "-q"]) == 2
    message = capsys.readouterr().err.strip()
    assert len(message.splitlines()) == 1
    assert REPO in message and "not logged in" in message and "hf auth login" in message
    # user13: the README's "the local export stays complete" is not so here: said.
    assert "nothing was written (without the push the export is written locally" in message
    assert not out.exists()


def test_push_in_offline_mode_is_refused_before_anything_is_written(
    release_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(export_module, "_hub_offline", lambda: True)
    out = tmp_path / "export"
    assert main(["export", str(release_dir), str(out), "--push", REPO, "-q"]) == 2
    (message,) = capsys.readouterr().err.strip().splitlines()
    assert "offline mode (HF_HUB_OFFLINE=1)" in message
    assert "nothing was written (without the push the export is written locally" in message
    assert not out.exists()


def test_push_success_returns_the_commit(
    release_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, online_with_token: None
) -> None:
    monkeypatch.setattr(HfApi, "create_repo", lambda self, *a, **k: None)
    monkeypatch.setattr(HfApi, "upload_folder", lambda self, **k: "https://hub/commit/1")
    summary = export_release(release_dir, tmp_path / "export", push_to=REPO, progress=False)
    assert summary.repo_url == "https://hub/commit/1"


def test_an_unknown_error_is_not_disguised_as_a_hub_error() -> None:
    with pytest.raises(KeyError):
        with hub_errors(REPO, action="push failed"):
            raise KeyError("a bug")


@pytest.mark.parametrize("name", ["unreachable", "401-private", "404"])
def test_load_nova_of_a_hub_id_online_says_why_in_one_line(
    name: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import huggingface_hub

    make = FAILURES[name][0]

    def fails(*args: Any, **kwargs: Any) -> str:
        raise make()

    monkeypatch.chdir(tmp_path)  # no local folder named like the owner
    monkeypatch.setattr(hf_module, "hub_offline", lambda: False)
    monkeypatch.setattr(huggingface_hub, "snapshot_download", fails)
    with pytest.raises(NovaInputError) as caught:
        hf_module.load_nova(REPO)
    assert caught.value.source == REPO
    assert FAILURES[name][2] in str(caught.value) and "\n" not in str(caught.value)
    assert "load_nova('/path/to/Nova')" in str(caught.value)


def test_a_network_failure_wrapped_by_huggingface_hub_is_named_as_such() -> None:
    """snapshot_download raises LocalEntryNotFoundError from the connection error."""
    from huggingface_hub.errors import LocalEntryNotFoundError

    try:
        try:
            raise _connect_error()
        except HTTP.HTTPError as cause:
            raise LocalEntryNotFoundError("cannot find the snapshot folder") from cause
    except LocalEntryNotFoundError as wrapped:
        message = describe_hub_error(wrapped, REPO)
    assert message is not None and message.startswith("the Hugging Face Hub is unreachable")
