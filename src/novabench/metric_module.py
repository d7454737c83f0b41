"""Where the NOVA ``evaluate`` module is, whichever way novabench is installed.

The module folder is kept once, at ``metrics/nova_metric/`` in the repository. The wheel
carries a copy of it as ``novabench/resources/nova_metric/`` (``setup.py`` copies it when
the wheel is built); a checkout or an editable install uses the repository's folder.
:func:`metric_path` gives the folder for ``evaluate.load``; :func:`copy_metric` (``nova
metric copy``) writes it where a user wants it; :func:`configuration_task` is the rule
for the configuration ``evaluate.load`` names.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from novabench import registry
from novabench.errors import NovaError, NovaInputError, Option, warn_at_caller

__all__ = [
    "METRIC_FILES",
    "METRIC_FOLDER",
    "configuration_task",
    "copy_metric",
    "metric_path",
]

#: The folder's name: ``evaluate.load(folder)`` runs ``folder/<folder name>.py``.
METRIC_FOLDER = "nova_metric"
#: What the module folder holds: the script, its card, its requirements and the Space face.
METRIC_FILES: tuple[str, ...] = ("nova_metric.py", "README.md", "requirements.txt", "app.py")

_PACKAGED = Path(__file__).resolve().parent / "resources" / METRIC_FOLDER


def _checkout_folder() -> Path | None:
    for parent in Path(__file__).resolve().parents:
        project = parent / "pyproject.toml"
        if project.is_file() and re.search(
            r'(?m)^name\s*=\s*"novabench"', project.read_text(encoding="utf-8")
        ):
            return parent / "metrics" / METRIC_FOLDER
    return None


def metric_path() -> str:
    """The folder of the NOVA ``evaluate`` module, for ``evaluate.load(metric_path(), task)``.

    The installed wheel's copy when there is one, else the checkout's ``metrics/nova_metric``
    (editable install). A string, because ``evaluate.load`` takes no ``Path``.

    Raises:
        NovaError: neither is there (an installation without the module folder).

    Example:
        >>> folder = Path(metric_path())
        >>> folder.name, (folder / "nova_metric.py").is_file()
        ('nova_metric', True)
    """
    for folder in (_PACKAGED, _checkout_folder()):
        if folder is not None and (folder / "nova_metric.py").is_file():
            return str(folder)
    raise NovaError(
        "this novabench installation has no nova_metric module folder; install the wheel "
        "`make dist` builds (dist/novabench-*.whl)"
    )


#: Replacing the copied module's files: ``copy_metric``'s argument, ``nova metric``'s option.
_FORCE = Option("force", "--force", "True")


def copy_metric(dest: str | os.PathLike[str], *, force: bool = False) -> Path:
    """Copy the module folder into ``dest/nova_metric`` (script, card, requirements, Space face).

    Args:
        dest: the folder to copy into (made when missing); ``evaluate.load`` then takes
            ``dest/nova_metric``.
        force: replace the module's files in an existing ``dest/nova_metric``; other files
            there stay.

    Returns:
        The new module folder.

    Raises:
        NovaInputError: ``dest`` is a file, or ``dest/nova_metric`` exists and ``force`` is
            not set.

    Example:
        >>> import tempfile
        >>> copied = copy_metric(tempfile.mkdtemp())
        >>> copied.name, sorted(path.name for path in copied.iterdir())
        ('nova_metric', ['README.md', 'app.py', 'nova_metric.py', 'requirements.txt'])
    """
    source = Path(metric_path())
    parent = Path(dest).expanduser()
    if parent.exists() and not parent.is_dir():
        raise NovaInputError("is a file, not a folder to copy the metric into", source=str(dest))
    target = parent / METRIC_FOLDER
    if target.exists() and not force:
        raise NovaInputError(
            ("already exists; pass ", _FORCE, " to replace the metric's files in it"),
            source=str(target),
        )
    if target.exists() and not target.is_dir():
        raise NovaInputError("is a file, not a metric folder", source=str(target))
    target.mkdir(parents=True, exist_ok=True)
    for name in METRIC_FILES:
        if (source / name).is_file():
            shutil.copyfile(source / name, target / name)
    return target


def configuration_task(config_name: str | None) -> str:
    """The NOVA task of an ``evaluate`` configuration name; no name means ``all``, said aloud.

    ``evaluate.load(path)`` without a configuration passes ``"default"``: the module then
    scores ``all`` (one row per image, the three tasks), and a warning says so and names the
    other configurations, so a user who meant one task is not handed another's inputs.

    A task's other spellings (``registry.canonical_task``: "localisation", "caption"...)
    name its configuration, as ``evaluate_model(tasks=...)`` takes them.

    Raises:
        NovaInputError: a name that is no task.

    Example:
        >>> configuration_task("localization"), configuration_task("localisation")
        ('localization', 'localization')
        >>> import warnings
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     configuration_task("default")
        'all'
        >>> print(caught[0].message)  # doctest: +NORMALIZE_WHITESPACE
        nova_metric: no configuration named, so 'all' is used (one row per image: boxes, caption,
        diagnoses); for one task load 'localization', 'captioning' or 'diagnosis', e.g.
        evaluate.load(novabench.metric_path(), 'localization')
    """
    tasks = registry.TASK_NAMES
    if config_name in (None, "", "default"):
        others = ", ".join(f"'{name}'" for name in tasks[:-1]) + f" or '{tasks[-1]}'"
        warn_at_caller(
            f"nova_metric: no configuration named, so '{registry.ALL_TASKS}' is used (one row "
            f"per image: boxes, caption, diagnoses); for one task load {others}, e.g. "
            f"evaluate.load(novabench.metric_path(), '{tasks[0]}')",
            UserWarning,
        )
        return registry.ALL_TASKS
    if config_name == registry.ALL_TASKS:
        return registry.ALL_TASKS
    try:  # the spellings evaluate_model(tasks=) takes ("localisation"): the registry's
        return registry.canonical_task(str(config_name))
    except NovaInputError:
        raise NovaInputError(
            f"unknown configuration {config_name!r}; choose one of "
            f"{', '.join([*tasks, registry.ALL_TASKS])}",
            field="config_name",
        ) from None
