"""The project's scripts (``scripts/*.py``) imported by tests, as modules.

The scripts are tools, not part of the package, so tests load them by path, once, under
their file's name (registered in ``sys.modules``: a dataclass in a script looks its module
up there).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def load_script(name: str) -> ModuleType:
    """``scripts/<name>.py`` as a module, loaded once per process.

    Example:
        >>> load_script("pin_answer_corpora").__name__
        'pin_answer_corpora'
    """
    loaded = sys.modules.get(name)
    if loaded is not None and getattr(loaded, "__file__", None) == str(SCRIPTS / f"{name}.py"):
        return loaded
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
