"""The built package works outside this checkout, as a user meets it (slow: builds and installs).

Builds the sdist and the wheel (the wheel from the sdist, so the sdist must be complete),
checks them with twine, installs the wheel -- not editable, no index -- into a fresh virtual
environment, and from a folder outside the repository runs ``nova --help``, ``nova sample``,
``novabench.load_nova`` on the sample, ``evaluate.load`` of the metric module the wheel
carries (``novabench.metric_path()``), of the folder ``nova metric copy`` writes, and of the
module copied alone into a folder exactly as it sits on the Hub. Offline throughout.

The fresh environment sees the pinned third-party packages of the running one (there is no
index to install them from) through a folder of links that leaves out novabench itself,
its editable hook and every ``.pth`` file, so only the installed wheel can be imported.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import subprocess
import sys
import sysconfig
import textwrap
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

import novabench

REPO = Path(__file__).resolve().parents[1]
METRIC_FILES = ("nova_metric.py", "README.md", "requirements.txt")
pytestmark = pytest.mark.slow


def _run(command: list[str], *, cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=900, check=False
    )
    assert done.returncode == 0, f"{command} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _is_ours(name: str) -> bool:
    lowered = name.lower()
    return (
        lowered.startswith(("novabench", "__editable__", "nova_dataset"))
        or lowered.endswith(".pth")
        or lowered == "__pycache__"
    )


def _third_party_links(folder: Path) -> Path:
    """A folder of links to the running environment's packages, without novabench."""
    folder.mkdir()
    sources = {Path(sysconfig.get_paths()[key]) for key in ("purelib", "platlib")}
    for source in sorted(sources):
        for entry in sorted(source.iterdir()):
            link = folder / entry.name
            if not _is_ours(entry.name) and not link.exists():
                link.symlink_to(entry)
    return folder


@contextlib.contextmanager
def _one_build_at_a_time() -> Iterator[None]:
    """Hold a lock while building in the checkout.

    An sdist is assembled in the checkout itself (``novabench-<version>/``, removed at the
    end). Under ``pytest -n 2`` each worker that runs a test of this module builds its own
    ``dist``, and two builds at once remove each other's tree (seen in CI as "No such file
    or directory: 'novabench-0.1.0/tests/...'").
    """
    lock_folder = REPO / "build"
    lock_folder.mkdir(exist_ok=True)
    with open(lock_folder / ".packaging-test.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    with _one_build_at_a_time():
        _run(
            [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(REPO)],
            cwd=REPO,
        )
    _run([sys.executable, "-m", "twine", "check", "--strict", *map(str, out.iterdir())], cwd=out)
    return out


@pytest.fixture(scope="module")
def venv(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("venv")
    env_dir = root / "env"
    _run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], cwd=root)
    python = env_dir / "bin" / "python"
    site = Path(
        _run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            cwd=root,
        ).strip()
    )
    links = _third_party_links(root / "third_party")
    (site / "zz_pinned_third_party.pth").write_text(f"{links}\n", encoding="utf-8")
    (wheel,) = dist.glob("novabench-*.whl")
    # Without PYTHONPATH: a src/ on it holds the build's novabench.egg-info, which pip takes
    # for an installed novabench and then installs nothing.
    pip_env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    _run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
         "--no-index", "--no-cache-dir", "--quiet", str(wheel)],
        cwd=root,
        env=pip_env,
    )  # fmt: skip
    return env_dir


def _user_env(env_dir: Path, home: Path) -> dict[str, str]:
    """What a user's shell has: the venv first on PATH, offline, no PYTHONPATH, own caches."""
    return {
        "PATH": f"{env_dir / 'bin'}{os.pathsep}/usr/bin{os.pathsep}/bin",
        "HOME": str(home),
        "HF_HOME": str(home / "hf"),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "LANG": "C.UTF-8",
        "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
    }


def test_the_wheel_ships_resources_and_types(dist: Path) -> None:
    (wheel,) = dist.glob("novabench-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in (
        "novabench/py.typed",
        "novabench/resources/diagnosis_lexicon.txt",
        "novabench/resources/neuro_lexicon.json",
        "novabench/resources/prompts/localization.txt",
        "novabench/resources/prompts/captioning.txt",
        "novabench/resources/prompts/diagnosis.txt",
        "novabench/resources/dataset_card/README.template.md",
        "novabench/resources/prompts/keyword_judge.txt",
        "novabench/resources/prompts/diagnosis_pair_judge.txt",
        "novabench/resources/prompts/diagnosis_case_judge.txt",
        "novabench/resources/pathology_categories.txt",
        "novabench/resources/sample_pathologies.json",
        f"novabench-{novabench.__version__}.dist-info/licenses/LICENSE",
    ):
        assert needed in names, needed
    # The evaluate module folder, byte for byte the repository's (its single source).
    with zipfile.ZipFile(wheel) as archive:
        for name in (*METRIC_FILES, "app.py"):
            shipped = archive.read(f"novabench/resources/nova_metric/{name}")
            assert shipped == (REPO / "metrics" / "nova_metric" / name).read_bytes(), name
    assert wheel.name == f"novabench-{novabench.__version__}-py3-none-any.whl"
    (sdist,) = dist.glob("novabench-*.tar.gz")
    assert sdist.name == f"novabench-{novabench.__version__}.tar.gz"


def test_installed_wheel_works_outside_the_repository(venv: Path, tmp_path: Path) -> None:
    user = tmp_path / "user"  # a folder outside the repository, as a user's
    user.mkdir()
    env = _user_env(venv, user)

    assert "usage: nova" in _run(["nova", "--help"], cwd=user, env=env)
    assert "nova_metric" in _run(["nova", "metric", "copy", "notebook"], cwd=user, env=env)
    _run(
        ["nova", "sample", str(user / "nova-sample"), "--cases", "2", "--quiet"], cwd=user, env=env
    )

    hub_folder = user / "hub" / "nova_metric"  # the metric's Hub repository, files only
    hub_folder.mkdir(parents=True)
    for name in METRIC_FILES:
        (hub_folder / name).write_bytes((REPO / "metrics" / "nova_metric" / name).read_bytes())

    script = user / "use_it.py"
    script.write_text(
        textwrap.dedent(
            """
            import importlib.metadata, json, sys
            from pathlib import Path

            import evaluate
            import novabench
            from novabench import load_nova

            images = load_nova("nova-sample")
            cases = load_nova("nova-sample", config="cases")
            first = images[0]
            hub = str(Path("hub/nova_metric").resolve())
            packaged = novabench.metric_path()
            localization = evaluate.load(packaged, "localization").compute(
                predictions=[{"boxes": row["boxes"], "scores": [1.0] * len(row["boxes"])}
                             for row in images],
                references=images,
            )
            captioning = evaluate.load(hub, "captioning").compute(
                predictions=images["caption"], references=images, exclude=["BERTScore-F1"]
            )
            diagnosis = evaluate.load(hub, "diagnosis").compute(
                predictions=[[row["final_diagnosis"]] for row in cases], references=cases
            )
            copied = evaluate.load("notebook/nova_metric", "diagnosis").compute(
                predictions=[[row["final_diagnosis"]] for row in cases], references=cases
            )
            try:
                import nova_dataset  # the repository's face must not be what we use
            except ImportError:
                nova_dataset = None
            print(json.dumps({
                "novabench_file": novabench.__file__,
                "version": novabench.__version__,
                "metadata_version": importlib.metadata.version("novabench"),
                "nova_dataset_importable": nova_dataset is not None,
                "rows": images.num_rows,
                "first": first["filename"],
                "with_gold": sum(1 for boxes in images["boxes"] if boxes),
                "mAP@50": localization["mAP@50"],
                "hit@50": localization["hit@50"],
                "ROUGE-L": captioning["ROUGE-L"],
                "top1": diagnosis["top1-lexicon"],  # the default matcher's proxy key
                "top1_copied": copied["top1-lexicon"],
                "metric_path": packaged,
            }))
            """
        ),
        encoding="utf-8",
    )
    result = json.loads(_run(["python", str(script)], cwd=user, env=env).strip().splitlines()[-1])

    installed = Path(result["novabench_file"]).resolve()
    assert venv.resolve() in installed.parents and REPO not in installed.parents
    assert result["version"] == result["metadata_version"] == novabench.__version__
    assert result["nova_dataset_importable"] is False
    assert result["rows"] == 7 and result["first"] == "case0001_001.png"
    # The gold boxes as predictions, the reference captions and diagnoses as answers:
    # every image with gold is a hit; the protocol's mAP counts the image without gold
    # (the sample has one) as a miss, so it is the share of images with gold.
    assert result["hit@50"] == 1.0
    assert result["mAP@50"] == result["with_gold"] / result["rows"] < 1.0
    assert result["ROUGE-L"] == 1.0
    assert result["top1"] == result["top1_copied"] == 1.0
    # The module came from the installed wheel, not from this checkout.
    packaged = Path(result["metric_path"]).resolve()
    assert venv.resolve() in packaged.parents and REPO not in packaged.parents
    assert packaged.parts[-3:] == ("novabench", "resources", "nova_metric")
