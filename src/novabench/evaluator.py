"""One call from a model to a NOVA report: :func:`evaluate_model` and :class:`NovaReport`.

What ``nova run`` and ``nova evaluate`` do on the command line, in one Python call, in the
spirit of ``evaluate.evaluator(task).compute(model_or_pipeline=..., data=...)``::

    from novabench import evaluate_model

    report = evaluate_model(pipe, "/path/to/Nova", run_file="runs/my-model.jsonl")
    report                      # the headline in a notebook (intervals, coverage, warnings)
    report.headline             # a DataFrame: task, metric, value and interval in percent
    report.images, report.cases # the per-item tables (DataFrames)
    report.save("runs/my-model")  # report.json, report.md, report.html and the tables

The model may be:

- a ``transformers`` pipeline (``pipeline("image-text-to-text", ...)``), a Hub model id or a
  local model folder (run through :class:`~novabench.run.backends.TransformersBackend`);
- an :class:`Endpoint` (an OpenAI-compatible server: vLLM, TGI, hosted APIs);
- a plain function ``answer(image, prompt) -> str`` (``image`` is a ``PIL.Image`` for the
  image tasks and ``None`` for diagnosis), wrapped by :class:`CallableBackend`;
- any :class:`~novabench.run.backends.Backend` (a baseline, your own class).

The answers go to ``run_file`` exactly as ``nova run --out`` writes them (raw text, with a
manifest), so a second call with the same file resumes instead of asking again, and the
file can be scored or compared later on the command line. Scoring is
:func:`novabench.report.score_predictions` on that file: the numbers are the ones
``nova evaluate`` prints for it.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from novabench.errors import NovaInputError, Option
from novabench.run.backends import Answer, Request

if TYPE_CHECKING:
    import pandas as pd

    from novabench.report.items import ItemTables
    from novabench.run.runner import ResumedRun, RunSummary

__all__ = [
    "FUNCTION_FAILURES_BEFORE_STOP",
    "CallableBackend",
    "Endpoint",
    "NovaReport",
    "as_backend",
    "code_digest",
    "evaluate_model",
    "function_cannot_run",
]


@dataclass(frozen=True)
class Endpoint:
    """An OpenAI-compatible chat server to evaluate (vLLM, TGI, llama.cpp, a hosted API).

    The same settings as ``nova run --endpoint URL --model-name MODEL``; the API key is read
    from the environment variable ``api_key_env`` when the run starts and is never stored.

    Attributes:
        url: the API root, e.g. ``http://localhost:8000/v1``.
        model: the model the server serves (the ``model`` field of each request).
        name: the name reports show (default: ``model``).
        api_key_env: the environment variable holding a bearer token, if one is needed.
        max_concurrency: requests in flight at most.
        timeout: seconds per HTTP attempt.
        max_retries: further attempts after a retryable failure.
        max_tokens: answer length limit.
        temperature: sampling temperature (0 for reproducible answers).
        input_size_rule: ``"original"`` or ``"qwen2.5-vl"`` (a server that resizes images
            with Qwen2.5-VL's rule answers in pixels of the resized image).

    Example:
        >>> Endpoint("http://127.0.0.1:8000/v1", "qwen2.5-vl-72b").backend().describe()["model"]
        'qwen2.5-vl-72b'
    """

    url: str
    model: str
    name: str | None = None
    api_key_env: str | None = None
    max_concurrency: int = 16
    timeout: float = 60.0
    max_retries: int = 3
    max_tokens: int = 256
    temperature: float = 0.0
    input_size_rule: str = "original"

    def backend(self, *, key_option: str = "api_key_env") -> Any:
        """The :class:`~novabench.run.backends.OpenAIEndpointBackend` for these settings.

        ``key_option`` names the setting an API-key error points at (``nova run`` passes
        ``--api-key-env``).

        Example:
            >>> Endpoint("http://127.0.0.1:8000/v1", "m", name="mine").backend().display_name
            'mine'
        """
        from novabench.client import api_key_from_environment
        from novabench.run.backends import OpenAIEndpointBackend

        # The name of a variable, never the key: a key given here is refused unprinted.
        api_key = (
            api_key_from_environment(self.api_key_env, field=key_option)
            if self.api_key_env
            else None
        )
        return OpenAIEndpointBackend(
            self.url,
            self.model,
            api_key=api_key,
            max_concurrency=self.max_concurrency,
            timeout=self.timeout,
            max_retries=self.max_retries,
            max_tokens=self.max_tokens,
            temperature=self.temperature,
            input_size_rule=self.input_size_rule,
            display_name=self.name,
        )


class CallableBackend:
    """A plain function as a model: ``answer(image, prompt) -> str``.

    ``image`` is the image as a ``PIL.Image`` (RGB) for localisation and captioning and
    ``None`` for diagnosis (a text task); ``prompt`` is the task prompt. Return the model's
    answer text. An exception raised by the function is recorded as that item's failure
    (``error`` in the run file, counted in the report), never a crash of the run; but a
    failure every call would get (:func:`function_cannot_run`: a misspelt name, a missing
    module or module attribute, a signature that does not take ``(image, prompt)``) is
    marked as such, so the runner stops as it does for an endpoint that answers nothing
    (the run's early stop). Any other exception stops the run too when the first
    :data:`FUNCTION_FAILURES_BEFORE_STOP` items asked (not counting items that failed in
    an earlier call, asked again) all fail with nothing answered: a function broken for
    every input (``model.generate`` on a model left as None) is not run over every item.

    The manifest records the function's module and name and a digest of its code
    (:func:`code_digest`), so a run file is not resumed by changed code unnoticed.

    Args:
        answer: the function.
        name: the model name reports show (default: the function's name).
        tasks: the tasks the function answers (default: all three).
        input_size_rule: the image size the run records as the model's input, which box
            answers in absolute pixels are read in: ``"original"`` (the image the function
            is given) or ``"qwen2.5-vl"`` (the size Qwen2(.5)-VL's processor resizes it to,
            for a function that calls such a model and returns its answer unchanged).
            None (not chosen): a preset's rule (``evaluate_model(..., preset="qwen2.5-vl")``),
            else ``"original"``; a rule given here wins over the preset's.

    Example:
        >>> backend = CallableBackend(lambda image, prompt: "no target", name="empty")
        >>> backend.generate([Request("case0001_001.png", "localization", "Find lesions.")])[0].text
        'no target'
        >>> backend.describe()["model"]
        'empty'
    """

    def __init__(
        self,
        answer: Callable[[Any, str], Any],
        *,
        name: str | None = None,
        tasks: Sequence[str] | None = None,
        input_size_rule: str | None = None,
    ) -> None:
        from novabench.run.backends import INPUT_SIZE_RULES

        if not callable(answer):
            raise NovaInputError(f"expected a function, got {type(answer).__name__}", field="model")
        if input_size_rule is not None and input_size_rule not in INPUT_SIZE_RULES:
            raise NovaInputError(
                f"unknown input size rule {input_size_rule!r}; known: "
                f"{', '.join(INPUT_SIZE_RULES)}",
                field="input_size_rule",
            )
        self.answer = answer
        self.input_size_rule = input_size_rule or "original"
        self.input_size_rule_chosen = input_size_rule is not None  # a preset leaves it so
        self.name = name or getattr(answer, "__name__", None) or type(answer).__name__
        anonymous = self.name == "<lambda>"
        if anonymous:
            self.name = "function"
        self.display_name = self.name
        if tasks is not None:
            from novabench.run.runner import parse_tasks

            self.tasks = tuple(parse_tasks(tasks))
        self.batch_size = 1
        self.failures_before_stop = FUNCTION_FAILURES_BEFORE_STOP  # the runner's early stop
        # "the function function failed..." read as a typo: a lambda is called what it is
        self.failure_subject = "the lambda function" if anonymous else f"the function {self.name}"

    def describe(self) -> dict[str, Any]:
        """What the run manifest records: the function's module and name, and its code digest.

        ``code_sha256`` and ``code_seen`` are :func:`code_digest`'s (None for a built-in,
        whose code cannot be seen); a resume compares them.

        Example:
            >>> described = CallableBackend(len, name="length").describe()
            >>> described["type"], described["code_sha256"]
            ('python-callable', None)
        """
        function = getattr(self.answer, "__qualname__", type(self.answer).__name__)
        digest = code_digest(self.answer)
        described = {
            "type": "python-callable",
            "model": self.name,
            "function": f"{getattr(self.answer, '__module__', '?')}.{function}",
            "code_sha256": None if digest is None else digest[0],
            "code_seen": None if digest is None else digest[1],
        }
        if self.input_size_rule != "original":  # recorded when it is not the plain default
            described["input_size_rule"] = self.input_size_rule
        return described

    def generate(self, requests: Sequence[Request]) -> list[Answer]:
        """Call the function once per request; a raised exception is that item's error.

        Example:
            >>> def broken(image, prompt):
            ...     raise RuntimeError("out of memory")
            >>> CallableBackend(broken).generate([Request("case0001", "diagnosis", "?")])[0].error
            'RuntimeError: out of memory'
        """
        answers = []
        for request in requests:
            image = request.image
            if image is None and request.image_png is not None:
                import io

                from PIL import Image

                image = Image.open(io.BytesIO(request.image_png)).convert("RGB")
            begin = time.perf_counter()
            try:
                text = self.answer(image, request.prompt)
            except Exception as error:  # the function's failure is this item's, not the run's
                failure = f"{type(error).__name__}: {error}"
                # ...unless every call would fail alike: then the runner's early stop applies
                problem = None
                if function_cannot_run(error):
                    problem = f"{self.failure_subject} cannot run: {' '.join(failure.split())}"
                answers.append(Answer(error=failure, endpoint_problem=problem))
                continue
            latency = time.perf_counter() - begin
            size = None if image is None else tuple(image.size)
            if size is not None and self.input_size_rule == "qwen2.5-vl":
                from novabench.run.backends import qwen2_5_vl_input_size

                size = qwen2_5_vl_input_size(*size)
            if text is not None and not isinstance(text, str):
                answers.append(
                    Answer(error=f"the function returned {type(text).__name__}, not str")
                )
                continue
            answers.append(Answer(text=text, latency_s=latency, input_size=size))
        return answers


#: A function whose first this-many new items all fail (any exception), with nothing
#: answered, stops the run (:class:`CallableBackend`). More than one, so that a few inputs
#: the function cannot take do not stop a run that would answer the rest.
FUNCTION_FAILURES_BEFORE_STOP = 5


def function_cannot_run(error: BaseException) -> bool:
    """Whether a function's exception is one every call would raise, whatever it is asked.

    The failures of the code rather than of an input: a name that is not defined (a typo;
    not ``UnboundLocalError``, which may depend on the path taken), a module that cannot be
    imported, a syntax error, an attribute missing from a module, and a ``TypeError`` raised
    by the call itself (the function does not take ``(image, prompt)``). Any other
    exception (out of memory, a bad image, a ``ValueError`` in the model) may be one
    item's and is only recorded as that item's failure.

    Example:
        >>> function_cannot_run(NameError("name 'proccessor' is not defined"))
        True
        >>> function_cannot_run(RuntimeError("CUDA out of memory"))
        False
    """
    import types

    if isinstance(error, NameError):
        return not isinstance(error, UnboundLocalError)
    if isinstance(error, (ImportError, SyntaxError)):
        return True
    if isinstance(error, AttributeError):
        return isinstance(getattr(error, "obj", None), types.ModuleType)
    if isinstance(error, TypeError) and error.__traceback__ is not None:
        # Raised where the function is called, before its body ran: its signature.
        return error.__traceback__.tb_next is None
    return False


def code_digest(function: Callable[..., Any]) -> tuple[str, str] | None:
    """A SHA-256 of what can be seen of a function's code, and what was seen.

    The function's source (``inspect.getsource``: the ``def`` with its decorators and
    comments) when Python can find it, else its code objects (bytecode, constants and
    names, nested functions included); a lambda is always read from its bytecode (its
    "source" is the whole line around it, call arguments included). ``functools.partial``
    (not its bound arguments) and bound methods are read through to their function, a
    callable object through its class.

    An edit of the function's own code changes the digest; nothing else does: not the
    model's weights or files, not the values of globals and closure variables (a flag
    read from ``sys.argv``), not the functions and libraries it calls. Read from source it
    also changes with formatting and comments; read from bytecode, possibly with the
    Python version.

    Returns:
        ``(hex digest, "source" or "bytecode")``, or None when no code can be seen (a
        built-in).

    Example:
        >>> def answer(image, prompt):
        ...     return "no target"
        >>> digest, seen = code_digest(answer)
        >>> len(digest), seen
        (64, 'source')
        >>> code_digest(len) is None
        True
        >>> code_digest(lambda image, prompt: "no target")[1]
        'bytecode'
    """
    import functools
    import hashlib
    import inspect

    target: Any = function
    while isinstance(target, functools.partial):
        target = target.func
    if inspect.ismethod(target):
        target = target.__func__
    if not (inspect.isroutine(target) or inspect.isclass(target)):
        target = type(target)  # a callable object: its class holds its code
    if getattr(target, "__name__", None) != "<lambda>":
        try:
            source = inspect.getsource(target)
        # No file (python -c, exec), a built-in, or a file inspect cannot tokenize: the
        # bytecode below then, never a failed run.
        except Exception:
            pass
        else:
            return hashlib.sha256(source.encode("utf-8")).hexdigest(), "source"
    if inspect.isclass(target):
        target = getattr(target, "__call__", None)
    try:
        target = inspect.unwrap(target) if target is not None else None
    except ValueError:  # a __wrapped__ cycle: the outer function is what can be read
        pass
    code = getattr(target, "__code__", None)
    if code is None:
        return None
    digest = hashlib.sha256()
    _hash_code(code, digest)
    return digest.hexdigest(), "bytecode"


def _hash_code(code: Any, digest: Any) -> None:
    """Feed a code object's bytecode, names and constants (nested code too) to ``digest``;
    not its file name or line numbers, which move without the code changing."""
    digest.update(code.co_code)
    digest.update(repr((code.co_names, code.co_varnames, code.co_argcount)).encode("utf-8"))
    for constant in code.co_consts:
        _hash_constant(constant, digest)


def _hash_constant(constant: Any, digest: Any) -> None:
    if hasattr(constant, "co_code"):
        _hash_code(constant, digest)
    elif isinstance(constant, tuple):
        digest.update(b"(")
        for item in constant:
            _hash_constant(item, digest)
        digest.update(b")")
    elif isinstance(constant, frozenset):  # its order follows string hashing: sorted
        digest.update(repr(sorted(repr(item) for item in constant)).encode("utf-8"))
    else:
        digest.update(f"{type(constant).__name__}:{constant!r};".encode())


#: What a model given to :func:`evaluate_model` is, as :func:`_model_kind` says it.
ModelKind = Literal["endpoint", "url", "model id or folder", "pipeline", "backend", "function"]


def _model_kind(model: Any) -> ModelKind | None:
    """What ``model`` is to :func:`as_backend` (None: nothing it can evaluate).

    The one place that decides it: :func:`as_backend` builds the backend of this kind and a
    preset (``_apply_preset``) wraps only a ``"function"``. The order matters: a string is
    a URL or a model before anything else, a pipeline (callable, with ``model`` and
    ``task``) and a backend are never taken for a plain function.

    Example:
        >>> _model_kind("Qwen/Qwen2.5-VL-7B-Instruct"), _model_kind("http://localhost:8000/v1")
        ('model id or folder', 'url')
        >>> _model_kind(lambda image, prompt: "no target"), _model_kind(3)
        ('function', None)
    """
    from novabench.run.backends import Backend

    if isinstance(model, Endpoint):
        return "endpoint"
    if isinstance(model, (str, os.PathLike)):
        return (
            "url" if os.fspath(model).startswith(("http://", "https://")) else "model id or folder"
        )
    if _is_transformers_pipeline(model):
        return "pipeline"
    if isinstance(model, Backend):
        return "backend"
    if callable(model):
        return "function"
    return None


def _is_transformers_pipeline(model: Any) -> bool:
    """Whether ``model`` is a transformers pipeline, asked of transformers itself.

    Its class, not its attributes: a user's own wrapper ``answer(image, prompt)`` often keeps
    a ``model`` and a ``task`` too, and was driven as a pipeline (a bare AttributeError). A
    pipeline exists only once transformers is imported, so nothing is imported here.

    Example:
        >>> class MyModel:
        ...     model, task = object(), "localization"
        ...     def __call__(self, image, prompt): return "no target"
        >>> _is_transformers_pipeline(MyModel())
        False
    """
    base = sys.modules.get("transformers.pipelines.base")
    pipeline_class = getattr(base, "Pipeline", None)
    return isinstance(pipeline_class, type) and isinstance(model, pipeline_class)


def _check_data(data: Any) -> None:
    """Refuse ``data`` that is neither a release folder nor a release already read.

    Raises:
        NovaInputError: anything else, e.g. the rows of ``load_nova`` / ``load_dataset``,
            which hold no release's files to ask a model about and fingerprint.

    Example:
        >>> _check_data([{"image": None}])
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: field 'data': a list is no release: pass the release folder (or the nova export folder) it was loaded from, or novabench.read_release(folder)
        >>> _check_data(object())  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: field 'data': an object is no release: ...
    """
    from novabench.data.release_record import NovaRelease

    if isinstance(data, (str, os.PathLike, NovaRelease)):
        return
    rows = " (rows of load_nova or load_dataset)" if hasattr(data, "features") else ""
    kind = type(data).__name__
    article = "an" if kind[:1].lower() in "aeiou" else "a"
    raise NovaInputError(
        f"{article} {kind}{rows} is no release: pass the release folder (or "
        "the nova export folder) it was loaded from, or novabench.read_release(folder)",
        field="data",
    )


def as_backend(model: Any, *, name: str | None = None) -> Any:
    """Turn what :func:`evaluate_model` accepts into a backend the runner drives.

    Args:
        model: a pipeline, a Hub model id or local model folder, an :class:`Endpoint`, a
            function ``answer(image, prompt) -> str``, or a backend.
        name: the model name reports show (default: the model's own name: the Hub id, the
            local folder's name, the served model, the function's name).

    Returns:
        A backend (``name``, ``describe()``, ``generate(requests)``).

    Raises:
        NovaInputError: a URL given as a string (use :class:`Endpoint`), or something that
            is none of the above.

    Example:
        >>> as_backend(lambda image, prompt: "no target", name="empty").describe()["model"]
        'empty'
        >>> as_backend("http://localhost:8000/v1")
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: field 'model': a URL is a server, not a model: pass Endpoint('http://localhost:8000/v1', '<served model name>')
    """
    from novabench.run.backends import TransformersBackend

    kind = _model_kind(model)
    if kind == "endpoint":
        if name is not None:
            model = Endpoint(**{**model.__dict__, "name": name})
        return model.backend()
    if kind == "url":
        raise NovaInputError(
            f"a URL is a server, not a model: pass Endpoint({os.fspath(model)!r}, "
            "'<served model name>')",
            field="model",
        )
    if kind == "model id or folder":
        return TransformersBackend(os.fspath(model), display_name=name)
    if kind == "pipeline":
        return TransformersBackend(model, display_name=name)
    if kind == "backend":
        if name is not None:
            model.display_name = name
            if isinstance(model, CallableBackend):
                model.name = name  # named as the function given with this name would be
        return model
    if kind == "function":
        return CallableBackend(model, name=name)
    raise NovaInputError(
        f"cannot evaluate a {type(model).__name__}: pass a transformers pipeline, a model id or "
        "folder, an Endpoint, a function answer(image, prompt) -> str, or a backend",
        field="model",
    )


#: ``NovaReport.save``'s folder, where ``nova evaluate --items`` names the tables' own.
_SAVE_FOLDER = Option("folder", "--items")


@dataclass
class NovaReport:
    """A scored run: the report, the per-item tables and where the answers are.

    Attributes:
        report: the report as ``nova evaluate`` writes it to JSON (values in fractions).
        tables: the per-item tables (:class:`~novabench.report.items.ItemTables`).
        release: the release the run answered.
        run_file: the raw answers (a ``nova run`` file: resumable, scorable later).
        run_summary: what the run did in this call (answered, errors, skipped as done).
    """

    report: dict[str, Any]
    tables: ItemTables
    release: Any
    run_file: Path
    run_summary: RunSummary | None = None
    _markdown: str | None = field(default=None, repr=False)

    @property
    def model(self) -> str:
        """The model's name, as the report shows it."""
        from novabench.report.render import model_name

        return model_name(self.report)

    @property
    def headline(self) -> pd.DataFrame:
        """The headline metrics: one row per task and metric, values and intervals in percent.

        Columns: ``task``, ``metric``, ``value``, ``ci_low``, ``ci_high`` (percent; NaN where
        a value is undefined or no interval was computed) and ``vs_paper``: how far the value
        compares with the paper's figure of that name
        (:func:`novabench.report.render.comparison_with_paper`: ``yes``, ``with care: ...``,
        ``no: another quantity``, ``not a paper key``; ``no: not the NOVA release`` on data
        novabench made, ``no: answered items only`` with ``limit=`` or ``answered_only``).
        """
        import pandas as pd

        from novabench.report.render import TASK_ORDER, comparison_with_paper, headline_keys

        rows = []
        for task in TASK_ORDER:
            section = self.report["tasks"].get(task)
            if section is None:
                continue
            intervals = section.get("confidence_intervals") or {}
            for key in headline_keys(task, section["metrics"]):
                if key not in section["metrics"]:
                    continue
                low, high = intervals.get(key) or (None, None)
                rows.append(
                    {
                        "task": task,
                        "metric": key,
                        "value": _percent(section["metrics"][key]),
                        "ci_low": _percent(low),
                        "ci_high": _percent(high),
                        "vs_paper": comparison_with_paper(self.report, task, key),
                    }
                )
        columns = ["task", "metric", "value", "ci_low", "ci_high", "vs_paper"]
        return pd.DataFrame(rows, columns=columns)

    @property
    def images(self) -> pd.DataFrame:
        """One row per scored image (boxes, best IoU, hits, caption scores, keywords)."""
        return self.tables.images

    @property
    def cases(self) -> pd.DataFrame:
        """One row per scored case (the five diagnoses, the matched slot and rule)."""
        return self.tables.cases

    def to_text(self) -> str:
        """The terminal table ``nova evaluate`` prints: values in percent, coverage, notes."""
        from novabench.report.render import render_table

        return render_table(self.report)

    def to_markdown(self) -> str:
        """The report as Markdown, as ``nova evaluate --markdown`` writes it."""
        from novabench.report.render import render_markdown

        if self._markdown is None:
            self._markdown = render_markdown(self.report)
        return self._markdown

    def to_html(self) -> str:
        """The self-contained HTML page of ``nova evaluate --html`` (plots, gallery)."""
        from novabench.report.html import render_html

        return render_html(self.report, release=self.release, items=self.tables)

    def save(
        self, folder: str | os.PathLike[str], *, full_paths: bool = False, overwrite: bool = False
    ) -> dict[str, Path]:
        """Write ``report.json``, ``report.md``, ``report.html`` and ``items/`` into ``folder``.

        The files are those of ``nova evaluate --out report.json --markdown report.md --html
        report.html --items items``: the report names local files relative to ``folder`` (or
        by name) unless ``full_paths``, and pins its tables (their run id and SHA-256), which
        are written first; the files are written all or none (a failure on any leaves every
        file already in ``folder`` as it was). Reports already in ``folder`` are replaced only with ``overwrite`` (as ``nova evaluate --force``); a
        file there that novabench did not write never is.

        Raises:
            NovaInputError: a report is already in ``folder`` and ``overwrite`` is False;
                ``folder`` is a file, or is, holds or sits inside the release or the run
                file (the checks of ``nova evaluate``'s outputs).
            NovaOutputError: ``folder`` cannot be made (named, with the cause).

        Returns:
            The paths written, by kind (``report``, ``markdown``, ``html``, and the tables').
        """
        from novabench._files import check_output_paths
        from novabench.run.lock import claiming_outputs

        target = Path(folder)
        inputs = {"the release": self.release.root, "the run file": self.run_file}
        check_output_paths({"folder": target}, inputs, folders=("folder",))
        if target.exists() and not target.is_dir():
            raise NovaInputError(
                "is a file; give a folder to write report.json, report.md, report.html and "
                "items/ into",
                source=str(target),
                field="folder",
            )
        # Claimed as nova evaluate claims them: a second writer of any is refused, not raced.
        names = ("report.json", "report.md", "report.html", "items")
        with claiming_outputs({name: target / name for name in names}, "report.save"):
            return self._save_claimed(target, full_paths=full_paths, overwrite=overwrite)

    def _save_claimed(self, target: Path, *, full_paths: bool, overwrite: bool) -> dict[str, Path]:
        """:meth:`save` once its outputs are claimed: check, render, write all or none."""
        from novabench._files import as_output_error, writing_all_or_none
        from novabench.report.html import render_html
        from novabench.report.items import check_items_folder, write_item_tables
        from novabench.report.render import (
            check_replaceable_reports,
            render_markdown,
            shareable_paths,
            with_notices,
            write_report,
        )

        report_path, items = target / "report.json", target / "items"
        check_replaceable_reports(
            {name: target / name for name in ("report.json", "report.md", "report.html")},
            overwrite=overwrite,
        )
        created = not target.exists()
        try:
            target.mkdir(parents=True, exist_ok=True)
        except OSError as error:  # a parent that is a file, no permission, a full disk...
            failure = as_output_error(error, target)
            if failure is None:
                raise
            raise failure from None
        # another report's tables are not replaced; tables naming no report need overwrite
        check_items_folder(items, report_path, overwrite=overwrite, option=_SAVE_FOLDER)
        report = dict(self.report) if full_paths else shareable_paths(self.report, report_path)
        report = with_notices(report)  # the JSON's notices, as nova evaluate writes them
        markdown = render_markdown(report)
        page = render_html(report, items=self.tables, release=self.release, report_path=report_path)
        try:
            with writing_all_or_none() as staged:  # tables first, the report pinning them next
                report["items"] = write_item_tables(
                    self.tables, items, report_path, outputs=staged, option=_SAVE_FOLDER
                )
                paths = {"report": write_report(report, report_path, outputs=staged)}
                paths["markdown"] = staged.write_text(target / "report.md", markdown)
                paths["html"] = staged.write_text(target / "report.html", page)
        except BaseException:
            if created:  # a folder made for this call holds nothing now: not left behind
                with contextlib.suppress(OSError):
                    target.rmdir()
            raise
        paths.update({f"items_{name}": items / f"{name}.parquet" for name in ("images", "cases")})
        return paths

    def __str__(self) -> str:
        return self.to_text()

    def __repr__(self) -> str:
        return (
            f"NovaReport(model={self.model!r}, run_file={str(self.run_file)!r})\n{self.to_text()}"
        )

    def _repr_markdown_(self) -> str:
        """What a notebook shows for the report: its Markdown."""
        return self.to_markdown()


def _percent(value: Any) -> float:
    if value is None:
        return float("nan")
    return 100.0 * float(value)


def evaluate_model(
    model: Any,
    data: Any,
    *,
    tasks: str | Sequence[str] = "all",
    name: str | None = None,
    run_file: str | os.PathLike[str] | None = None,
    prompts: Mapping[str, Any] | None = None,
    limit: int | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
    caption_options: Mapping[str, Any] | None = None,
    exclude: Sequence[str] | None = None,
    bertscore_model: str | os.PathLike[str] | None = None,
    bertscore_num_layers: int | None = None,
    progress: bool = True,
    preset: str | None = None,
    resume_changed_code: bool = False,
    **scoring: Any,
) -> NovaReport:
    """Run a model over NOVA and score its answers: ``nova run`` + ``nova evaluate`` in one call.

    Args:
        model: a ``transformers`` pipeline, a Hub model id or local model folder, an
            :class:`Endpoint`, a function ``answer(image, prompt) -> str``, or a backend
            (see :func:`as_backend`).
        data: a release folder (official layout or a ``nova export`` folder) or a release
            already read (:func:`novabench.read_release`).
        tasks: ``"all"``, one task or several.
        name: the model name the report shows (default: the model's own name).
        run_file: where the raw answers are kept (a ``nova run`` file). Given again, the run
            resumes: answered items are not asked again, and one
            :class:`~novabench.errors.FileNoteWarning` (and a note per task in the report)
            says how many answers came from the file and how many were asked now. A function whose code changed since the file's answers
            (its :func:`code_digest`) is refused. None: a file in a new temporary folder
            (its path is :attr:`NovaReport.run_file`).
        prompts: ``{task: prompt file or TaskPrompt}`` (e.g. the paper's wording); the
            toolkit's default prompt for the other tasks.
        limit: ask at most this many items per task, for a quick trial; the report then
            scores only the answered items and says so in its first line.
        n_resamples: bootstrap resamples for the 95% intervals (0: none).
        seed: bootstrap seed (an integer >= 0; checked before the model is asked).
        caption_options: options of the caption metrics (``meteor``, ``keyword_averaging``...,
            as ``score_captioning`` takes them); the three below may be given here too.
        exclude: metrics left out, e.g. ``["BERTScore-F1"]`` (the report notes each).
        bertscore_model: ``"minilm"`` (the bundled all-MiniLM-L6-v2, offline, another
            scale), a local model folder or a Hub id; None: roberta-large, downloaded once
            unless cached. Offline without it in the cache, pass one of these or
            ``exclude=["BERTScore-F1"]``: the call refuses before asking the model anything.
        bertscore_num_layers: the BERTScore layer (None: the model's default).
        progress: progress bars on a terminal or in a notebook.
        preset: a preset name (``novabench.run.presets.PRESETS``, as ``nova run --preset``):
            its prompts, box convention and, for an :class:`Endpoint`, its input-size rule
            and generation settings. ``prompts``, a ``box_convention`` and Endpoint fields
            changed from their defaults win over the preset's parts; the run's manifest
            records the preset and what was overridden.
        resume_changed_code: resume ``run_file`` even though the function's code changed
            since its answers were asked: the file then holds answers of two versions,
            which the warning, the report's first lines and the manifest say.
        **scoring: any other :class:`novabench.report.ScoringOptions` setting (judges,
            ``box_convention``, ``breakdowns``...).

    Returns:
        A :class:`NovaReport`.

    Raises:
        NovaInputError: a bad argument, a metric that cannot be computed here (BERTScore's
            model not at hand offline: checked before the model is asked anything), or a
            run file written by another model, prompt or release, or by the function's
            code before it changed (choose a new file).
        TypeError: a keyword that is no scoring option (checked before the model is asked).
        EndpointUnusableError: the server cannot answer at all (unreachable, 401/403/404),
            or the function fails in a way every call would (:func:`function_cannot_run`,
            e.g. a ``NameError``), before anything was answered: the run stopped at once
            and the message gives the error's type and text. Likewise when the first
            :data:`FUNCTION_FAILURES_BEFORE_STOP` new items all fail, whatever the error.

    Example:
        >>> import tempfile, pathlib
        >>> from novabench.data.sample import write_sample_release
        >>> root = pathlib.Path(tempfile.mkdtemp())
        >>> release = write_sample_release(root / "nova", n_cases=2, seed=0, progress=False)
        >>> def nothing_found(image, prompt):
        ...     return "no target" if image is not None else '{"most_likely_diagnosis": "glioma"}'
        >>> report = evaluate_model(nothing_found, release, tasks=["localization", "diagnosis"],
        ...                         run_file=root / "run.jsonl", n_resamples=0, progress=False)
        >>> report.model
        'nothing_found'
        >>> print(report.headline.head(1).to_string(index=False))
                task metric  value  ci_low  ci_high                 vs_paper
        localization mAP@30    0.0     NaN      NaN no: not the NOVA release
        >>> len(report.images) == len(report.release.images)
        True
    """
    from novabench.data.release import read_release
    from novabench.progress import progress_enabled
    from novabench.report.items import item_tables
    from novabench.report.scoring import score_predictions
    from novabench.run.runner import parse_tasks, run_model

    chosen = parse_tasks(tasks)
    captioning = _caption_settings(
        caption_options,
        exclude=exclude,
        bertscore_model=bertscore_model,
        bertscore_num_layers=bertscore_num_layers,
    )
    options = dict(scoring)
    options.setdefault("answered_only", limit is not None)
    # Every setting is checked before the model is asked anything: a refusal after an
    # hour of answers would waste them (the answers stay in run_file, but the call fails).
    _check_scoring(chosen, n_resamples, seed, captioning, options)
    if run_file is not None:
        from novabench.run.runner import check_run_output_links

        check_run_output_links(run_file, "run_file")
    box_convention = "auto"
    preset_record = None
    if preset is not None:
        model, prompts, box_convention, preset_record = _apply_preset(
            preset, model, chosen, prompts, scoring.get("box_convention")
        )
    _check_data(data)  # before a model is loaded
    backend = as_backend(model, name=name)
    with progress_enabled(progress):
        release = read_release(data) if isinstance(data, (str, os.PathLike)) else data
        if run_file is None:
            run_file = Path(tempfile.mkdtemp(prefix="novabench-run-")) / "answers.jsonl"
        run_path = Path(run_file)
        try:
            summary = run_model(
                release,
                tasks=chosen,
                backend=backend,
                out_path=run_path,
                prompts=prompts,
                limit=limit,
                progress=progress,
                box_convention=box_convention,
                preset=preset_record,
                resume_changed_code=resume_changed_code,
                on_resume=_say_resuming,
            )
        except NovaInputError as error:
            if error.field == "backend" and "different configuration" in error.message:
                raise _another_model(error) from None
            if error.field == "backend.code_sha256":
                raise _changed_code(error, run_path) from None
            raise
        finally:
            close = getattr(backend, "close", None)
            if callable(close):
                close()
        scored = score_predictions(
            release,  # the release the run was made on, not read a second time
            run_path,
            tasks=chosen,
            n_resamples=n_resamples,
            seed=seed,
            caption_options=captioning,
            **options,
        )
        if summary.resumed:
            _say_resumed(scored.report, summary, limit)
        tables = item_tables(scored)
    return NovaReport(scored.report, tables, scored.release, run_path, summary)


def _say_resuming(resumed: ResumedRun) -> None:
    """Tell (a FileNoteWarning), before the model is asked, what a resumed run takes from
    its file: a library does not print.

    Answers taken from the file were asked by an earlier call, possibly by code or weights
    that have changed since in ways the manifest cannot see: the reader is told how many,
    at the start, since a long run without progress bars says nothing else until its end.
    """
    from novabench.errors import note

    line = resumed.resuming_line()
    if resumed.code_changed:
        line += (
            "; the function's code changed since the file's answers were asked "
            "(resume_changed_code=True): the answers may mix two versions"
        )
    note(line)


def _say_resumed(report: dict[str, Any], summary: RunSummary, limit: int | None) -> None:
    """Record in each task's notes what of a resumed run the file gave (a warning said it first).

    Each task's coverage records them (``answers_from_run_file``) and, with ``limit``, the
    limit (``limit``): a limited call scores every answered item of the file, which may be
    far more than ``limit``, and the report's first line says how many came from the file.
    """
    for task, counts in summary.counts.items():
        section = report["tasks"].get(task)
        if section is None:
            continue
        from_file = summary.answers_in_file.get(task, 0)
        section["coverage"]["answers_from_run_file"] = from_file
        if limit is not None:
            section["coverage"]["limit"] = limit
        section.setdefault("notes", []).insert(
            0,
            f"resumed {summary.out_path}: {_answers(from_file)} from the file "
            f"(asked by an earlier call), {counts['answered'] + counts['errors']} asked now",
        )


def _answers(count: int) -> str:
    return f"{count} answer{'' if count == 1 else 's'}"


_CAPTION_KEYWORDS = ("exclude", "bertscore_model", "bertscore_num_layers")


def _caption_settings(caption_options: Mapping[str, Any] | None, **keywords: Any) -> dict[str, Any]:
    """``caption_options`` with ``exclude=`` / ``bertscore_model=`` / ``bertscore_num_layers=``
    merged in; the same setting given both ways with two values is refused."""
    settings = dict(caption_options or {})
    for key in _CAPTION_KEYWORDS:
        value = keywords[key]
        if value is None:
            continue
        if key == "exclude":
            value = [value] if isinstance(value, str) else list(value)
        if key in settings and settings[key] != value:
            raise NovaInputError(
                f"given twice with two values ({key}={value!r}, "
                f"caption_options[{key!r}]={settings[key]!r}); give it once",
                field=key,
            )
        settings[key] = value
    return settings


def _check_scoring(
    tasks: Sequence[str],
    n_resamples: int,
    seed: int,
    caption_options: dict[str, Any],
    options: dict[str, Any],
) -> None:
    """Refuse, before any model call, settings that scoring would refuse after them."""
    from novabench.metrics.bertscore import resolve_bertscore_model
    from novabench.report.scoring import ScoringOptions
    from novabench.tasks import behaviour, load_hook

    settings = ScoringOptions.build(
        tasks=tasks, n_resamples=n_resamples, seed=seed, caption_options=caption_options, **options
    )
    try:
        for task in tasks:
            spec = behaviour(task)
            if spec.settle_metric_options is None:
                continue
            metric_options, _ = spec.metric_options(settings)
            settled, _ = load_hook(spec.settle_metric_options)(metric_options)
            if "BERTScore-F1" not in settled.get("exclude", ("BERTScore-F1",)):
                # Offline it is checked above; online it is fetched now, not after the run.
                resolve_bertscore_model(
                    settled.get("bertscore_model"), settled.get("bertscore_num_layers")
                )
    except NovaInputError as error:
        if error.source != "bertscore_model":
            raise
        # The library's advice names score_captioning; here the same keywords are ours.
        message = error.message.replace("score_captioning(..., ", "evaluate_model(..., ")
        raise NovaInputError(message, source=error.source, field=error.field) from None


def _another_model(error: NovaInputError) -> NovaInputError:
    """The run file's refusal of another model, in this call's terms."""
    message = error.message.replace(
        "the file was written by a different configuration",
        "run_file holds another model's answers",
    ).replace(
        "; write to a new output file",
        "; answers of two models are never mixed in one file (another function, even the same "
        "code moved to a module, may answer differently), and no option overrides this: pass "
        "a new run_file to start again, or the model the file was written with to resume it",
    )
    return NovaInputError(message, source=error.source, field=error.field)


def _changed_code(error: NovaInputError, run_file: Path) -> NovaInputError:
    """The runner's refusal of changed code, in this call's terms, naming ``run_file``."""
    message = error.message.replace(
        "; write to a new output file",
        "; its answers and this code's would be mixed: pass a new run_file to start again, "
        "or resume_changed_code=True to add this version's answers anyway (the report then "
        "says the answers may mix two versions)",
    )
    return NovaInputError(message, source=str(run_file), field="run_file")


def _apply_preset(
    name: str,
    model: Any,
    tasks: tuple[str, ...],
    prompts: Mapping[str, Any] | None,
    box_convention: str | None,
) -> tuple[Any, dict[str, Any], str, dict[str, Any] | None]:
    """``(model, prompts, box convention, manifest record)`` once the preset is applied.

    An :class:`Endpoint` field left at its default takes the preset's value; one changed
    from it was chosen by the caller and wins (recorded as overridden). A plain function
    (or a :class:`CallableBackend` whose ``input_size_rule`` was not chosen) takes the
    preset's input-size rule: its answers are read as the preset's model family gives them.
    """
    from dataclasses import fields, replace

    from novabench.run.presets import resolve_preset

    endpoint_fields = {"input_size_rule": "input_size_rule", "max_tokens": "max_new_tokens"}
    endpoint_fields["temperature"] = "temperature"
    given: dict[str, Any] = {}
    if isinstance(model, Endpoint):
        defaults = {f.name: f.default for f in fields(Endpoint)}
        given = {
            option: getattr(model, attribute)
            for attribute, option in endpoint_fields.items()
            if getattr(model, attribute) != defaults[attribute]
        }
    elif isinstance(model, CallableBackend) and model.input_size_rule_chosen:
        given = {"input_size_rule": model.input_size_rule}
    choice = resolve_preset(
        name, tasks=tasks, prompts=prompts, box_convention=box_convention, **given
    )
    if isinstance(model, Endpoint):
        model = replace(
            model,
            input_size_rule=choice.input_size_rule,
            max_tokens=choice.max_new_tokens,
            temperature=choice.temperature,
        )
    elif isinstance(model, CallableBackend):
        model.input_size_rule = choice.input_size_rule
    elif _model_kind(model) == "function" and choice.input_size_rule != "original":
        model = CallableBackend(model, input_size_rule=choice.input_size_rule)
    return model, choice.prompts, choice.box_convention, choice.record()
