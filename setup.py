"""One build step pyproject.toml cannot say: the wheel carries the evaluate module folder.

``metrics/nova_metric/`` (the script, its card, its requirements, the Space face) is kept
once, at the top of the repository; the wheel gets a copy as
``novabench/resources/nova_metric/``, which ``novabench.metric_path()`` returns once
installed. An editable install reads the repository's folder instead.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

MODULE_FOLDER = Path(__file__).resolve().parent / "metrics" / "nova_metric"
# Kept in step with novabench.metric_module.METRIC_FILES (tests/test_packaging.py checks).
MODULE_FILES = ("nova_metric.py", "README.md", "requirements.txt", "app.py")


class BuildWithMetricModule(build_py):
    """build_py, then the module folder copied into the built package."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install finds metrics/nova_metric in the checkout
        target = Path(self.build_lib) / "novabench" / "resources" / "nova_metric"
        target.mkdir(parents=True, exist_ok=True)
        for name in MODULE_FILES:
            # A missing file fails the build: a wheel without its metric is no wheel.
            shutil.copyfile(MODULE_FOLDER / name, target / name)


setup(cmdclass={"build_py": BuildWithMetricModule})
