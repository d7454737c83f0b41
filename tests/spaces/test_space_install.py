"""A built Space installs offline into a fresh environment and serves, novabench from its wheel.

No index is reachable here, so the fresh virtual environment sees the shared environment's
third-party packages through a ``.pth`` file (a folder of links that leaves out novabench),
``pip install --no-index -r requirements.txt`` must then find every requirement satisfied
(a pin the tested stack does not meet fails), and ``app.py`` must serve from a folder
outside the repository with novabench importable only from the wheel vendored beside it.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import sysconfig
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", autouse=True)
def _space_libraries() -> None:
    # Here, not at import: the fast suite collects this file only to deselect it.
    pytest.importorskip("gradio")
    pytest.importorskip("build", reason="the build package is needed to make the wheel")


STARTUP_DEADLINE_S = 240  # when to give up on a server that never answers (not a timing test)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def fresh_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv seeing the shared site-packages through links, without novabench in any form."""
    root = tmp_path_factory.mktemp("space-venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / "venv")], check=True)
    python = root / "venv" / "bin" / "python"
    shared = Path(sysconfig.get_paths()["purelib"])
    view = root / "shared-site-packages"
    view.mkdir()
    for entry in shared.iterdir():
        name = entry.name.lower()
        if "novabench" in name or name.endswith(".pth") or name == "__pycache__":
            continue  # the editable novabench (its finder, .pth and metadata) stays out
        (view / entry.name).symlink_to(entry)
    site_packages = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    (Path(site_packages) / "shared-view.pth").write_text(f"{view}\n")
    return python


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from novabench.spaces.build import build_wheel

    return build_wheel(tmp_path_factory.mktemp("wheel"))


def _clean_env(port: int, home: Path) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"PYTHONPATH", "NOVA_SOURCE", "VIRTUAL_ENV"}
    }
    env.update(
        GRADIO_SERVER_PORT=str(port),
        GRADIO_SERVER_NAME="127.0.0.1",
        GRADIO_ANALYTICS_ENABLED="False",
        HF_HUB_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        HF_MODULES_CACHE=str(home / "modules"),
        PIP_NO_INPUT="1",
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )
    return env


@pytest.mark.parametrize(
    ("kind", "title", "endpoint"),
    [("explorer", "NOVA explorer", "show_case"), ("metric", "NOVA metric", "score")],
)
def test_built_space_installs_offline_and_serves(
    kind: str, title: str, endpoint: str, fresh_python: Path, wheel: Path, tmp_path: Path
) -> None:
    from novabench.spaces.build import build_space

    space = build_space(kind, tmp_path / "space", wheel=wheel)
    port = _free_port()
    env = _clean_env(port, tmp_path)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    probe = subprocess.run(
        [str(fresh_python), "-c", "import novabench"], cwd=outside, env=env, capture_output=True
    )
    assert probe.returncode != 0, "the fresh environment must not see novabench"
    install = subprocess.run(
        [str(fresh_python), "-m", "pip", "install", "--no-index", "-r", str(space / "requirements.txt")],
        cwd=space, env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert install.returncode == 0, install.stdout[-2000:] + install.stderr[-2000:]
    log = (tmp_path / "server.log").open("w")
    server = subprocess.Popen(
        [str(fresh_python), str(space / "app.py")], cwd=outside, env=env, stdout=log,
        stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + STARTUP_DEADLINE_S
        config = None
        while time.monotonic() < deadline and server.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/config", timeout=5) as answer:
                    config = answer.read().decode("utf-8")
                break
            except OSError:
                time.sleep(1)
        output = (tmp_path / "server.log").read_text()
        assert config is not None, f"{kind} Space never served:\n{output[-3000:]}"
        assert title in config and f'"{endpoint}"' in config
        assert "nova-error" not in config  # the data opened (the synthetic sample)

        from gradio_client import Client

        client = Client(f"http://127.0.0.1:{port}/", verbose=False)
        try:
            _call_endpoint(client, kind)
        except Exception as error:
            output = (tmp_path / "server.log").read_text()
            raise AssertionError(f"{error}\nserver log:\n{output[-4000:]}") from error
    finally:
        server.terminate()
        server.wait(timeout=60)
        log.close()


def _call_endpoint(client, kind: str) -> None:
    if kind == "metric":
        from novabench.spaces.metric import REFERENCES_PASTED, example_texts

        predictions, references = example_texts("diagnosis")
        table, message = client.predict(
            "diagnosis", predictions, REFERENCES_PASTED, references, 20, 0, False,
            api_name="/score",
        )  # fmt: skip
        rows = table.get("value", table)["data"] if isinstance(table, dict) else table
        assert ["diagnosis", "top1-lexicon (%)", "100.0", "100.0 – 100.0"] in [
            list(r) for r in rows
        ]
        assert "20 resamples" in message
    else:
        image, gallery, details, _ = client.predict("case0002", ["gold"], api_name="/show_case")
        assert "case0002" in details and Path(image).suffix == ".png"
