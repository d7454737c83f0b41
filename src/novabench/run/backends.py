"""Backends: whatever turns a prompt (and an image) into an answer text.

A backend is any object with

- ``name: str``, a short label written on each answer line;
- ``describe() -> dict``, everything needed to reproduce the run (model id and revision,
  generation settings, library versions), stored in the run manifest; never secrets;
- ``generate(requests) -> list[Answer]``, one :class:`Answer` per :class:`Request`, in order.

A backend that answers one request at a time from many threads (an HTTP server) also has
``answer(request) -> Answer`` (thread-safe) and ``max_concurrency: int``: the runner then
keeps that many requests in flight at all times instead of calling ``generate`` in batches,
and builds each request in the worker thread that sends it. Such a backend may also set
``accepts_png = True``: its image requests then carry the release's own PNG bytes
(``Request.image_png``, see :func:`png_for_model`) instead of a decoded image.

Three kinds ship with the toolkit: :class:`TransformersBackend` (a local model through
``transformers.pipeline("image-text-to-text")``), :class:`OpenAIEndpointBackend` (any
OpenAI-compatible chat-completions server: vLLM, TGI, llama.cpp, hosted APIs) and the
floor baselines of ``novabench.run.baselines``, which are backends too.

A backend reports a failed item with ``Answer(error=...)``; raising aborts the run (after
everything answered so far has been written), which is right for bugs and wrong for a
flaky network.
"""

from __future__ import annotations

import base64
import io
import math
import os
import platform
import struct
import time
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from novabench._version import __version__
from novabench.client import ChatClient, ChatClientError, DataURL, endpoint_problem
from novabench.errors import NovaInputError, Option, for_caller
from novabench.run.defaults import DEFAULT_MAX_CONCURRENCY

__all__ = [
    "ENDPOINT_SERVER_ERRORS_BEFORE_STOP",
    "Answer",
    "Backend",
    "OpenAIEndpointBackend",
    "Request",
    "TransformersBackend",
    "effective_input_size",
    "image_to_data_url",
    "model_display_name",
    "png_for_model",
    "png_size",
    "qwen2_5_vl_input_size",
]

# The settings a model that does not load is named by (``TransformersBackend``'s arguments,
# ``nova run``'s options).
_MODEL = Option("model", "--model")
_TRUST_REMOTE_CODE = Option("trust_remote_code", "--trust-remote-code", "True")


@dataclass(frozen=True)
class Request:
    """One question to a model.

    Attributes:
        item_id: the filename (image tasks) or case id (diagnosis) the answer belongs to.
        task: ``"localization"``, ``"captioning"`` or ``"diagnosis"``.
        prompt: the full prompt text.
        image: the image (``PIL.Image.Image``, RGB) for image tasks, None for diagnosis.
        context: the task's inputs as data, for backends that do not read prompts (baselines):
            ``{"filename", "case_id", "width", "height"}`` for image tasks,
            ``{"case_id", "clinical_history", "findings"}`` for diagnosis. Never ground truth.
        image_png: the image as PNG bytes ready to send, for backends with ``accepts_png``
            (instead of ``image``); see :func:`png_for_model`.
        image_encoding: how ``image_png`` was made: ``"original"`` (the release's own file)
            or ``"reencoded:<reason>"``.

    Example:
        >>> Request("case0001", "diagnosis", "Clinical history: ...").has_image
        False
    """

    item_id: str
    task: str
    prompt: str
    image: Any = None
    context: Mapping[str, Any] = field(default_factory=dict)
    image_png: bytes | None = None
    image_encoding: str | None = None

    @property
    def has_image(self) -> bool:
        """True when the request carries an image (decoded or as PNG bytes)."""
        return self.image is not None or self.image_png is not None

    @property
    def image_size(self) -> tuple[int, int] | None:
        """``(width, height)`` of the image, or None for text-only requests."""
        if self.image is not None:
            return tuple(self.image.size)
        return None if self.image_png is None else png_size(self.image_png)


_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# PNG colour types a server reads as the same pixels we would send: grayscale and RGB.
# Alpha (4, 6) and palettes (3) are converted differently by different servers (vLLM puts
# RGBA on white), so they are sent as the RGB image novabench itself would show.
_PLAIN_COLOUR_TYPES = {0: "grayscale", 2: "RGB"}
_COLOUR_TYPE_NAMES = {3: "palette", 4: "grayscale+alpha", 6: "RGBA"}


def _png_header(data: bytes) -> tuple[int, int, int, int] | None:
    """``(width, height, bit depth, colour type)`` from a PNG's IHDR, or None if not a PNG."""
    if len(data) < 26 or data[:8] != _PNG_SIGNATURE or data[12:16] != b"IHDR":
        return None
    width, height, depth, colour = struct.unpack(">IIBB", data[16:26])
    return width, height, depth, colour


def png_size(data: bytes) -> tuple[int, int] | None:
    """``(width, height)`` read from a PNG's header without decoding it, None if not a PNG.

    Example:
        >>> from PIL import Image
        >>> buffer = io.BytesIO(); Image.new("L", (36, 30)).save(buffer, format="PNG")
        >>> png_size(buffer.getvalue()), png_size(b"GIF89a")
        ((36, 30), None)
    """
    header = _png_header(data)
    return None if header is None else (header[0], header[1])


def png_for_model(
    data: bytes, *, source: str = "image", record: str | None = None
) -> tuple[bytes, str]:
    """The PNG to send a model for a release image: its own bytes when a server reads them
    as the same pixels, else a lossless re-encoding of what :func:`~novabench.data.pixels.to_rgb8`
    shows (16-bit windowed, alpha dropped, palette expanded).

    Only the header is read for an 8-bit (or lower) grayscale or RGB PNG: nothing is decoded.

    Args:
        data: the image file's bytes.
        source: the file or folder, for errors.
        record: the image's filename, for errors.

    Returns:
        ``(png bytes, encoding)`` where encoding is ``"original"`` or ``"reencoded:<reason>"``.

    Raises:
        NovaInputError: the bytes are not an image PIL can read, or one it cannot show.

    Example:
        >>> import numpy as np
        >>> from PIL import Image
        >>> def png(array):
        ...     buffer = io.BytesIO(); Image.fromarray(array).save(buffer, format="PNG")
        ...     return buffer.getvalue()
        >>> eight_bit = png(np.zeros((4, 4), dtype=np.uint8))
        >>> png_for_model(eight_bit) == (eight_bit, "original")
        True
        >>> sent, how = png_for_model(png(np.array([[0, 4000]], dtype=np.uint16)))
        >>> how, np.asarray(Image.open(io.BytesIO(sent)))[0, :, 0].tolist()
        ('reencoded:16-bit grayscale windowed to 8 bits', [0, 255])
    """
    header = _png_header(data)
    if header is not None and header[2] <= 8 and header[3] in _PLAIN_COLOUR_TYPES:
        return data, "original"
    if header is None:
        reason = "not a PNG file"
    elif header[2] > 8:
        kind = _COLOUR_TYPE_NAMES.get(header[3], "grayscale")
        reason = f"{header[2]}-bit {kind} windowed to 8 bits"
    else:
        reason = f"{_COLOUR_TYPE_NAMES.get(header[3], 'unusual')} PNG as RGB"
    from PIL import Image, UnidentifiedImageError

    from novabench.data.pixels import to_rgb8

    try:
        with Image.open(io.BytesIO(data)) as image:
            rgb = to_rgb8(image, source=source, record=record)
    except (UnidentifiedImageError, OSError) as error:
        raise NovaInputError(
            f"cannot read the image: {error}", source=source, record=record, field="image"
        ) from None
    buffer = io.BytesIO()
    rgb.save(buffer, format="PNG")
    return buffer.getvalue(), f"reencoded:{reason}"


@dataclass(frozen=True)
class Answer:
    """A model's answer to one :class:`Request`.

    Attributes:
        text: the raw answer text (None when the call failed).
        latency_s: seconds spent on this item; for batched backends, the batch time shared
            evenly among its items.
        input_size: ``(width, height)`` of the image as the model saw it after its own
            resizing, when that matters for reading absolute-pixel boxes; otherwise the
            original size; None for text-only requests.
        error: why there is no answer, or None.
        endpoint_problem: with ``error``, when the failure is one every request to the
            backend would get (an unreachable server, HTTP 401/403/404; see
            :func:`novabench.client.endpoint_problem`): that cause in one phrase naming
            the endpoint. The runner stops early on it while nothing has been answered.
        server_error: with ``error``, the server answered an HTTP 5xx to every attempt
            (an endpoint's :meth:`OpenAIEndpointBackend.counts_towards_stop`).
        finish_reason: why the model stopped, as the server said (``"length"``: it reached
            the answer length limit, so the answer may be cut off), when it said.

    Example:
        >>> Answer(text="no target", latency_s=0.2).ok
        True
    """

    text: str | None = None
    latency_s: float | None = None
    input_size: tuple[int, int] | None = None
    error: str | None = None
    endpoint_problem: str | None = field(default=None, repr=False)
    server_error: bool = field(default=False, repr=False)
    finish_reason: str | None = field(default=None, repr=False)

    @property
    def ok(self) -> bool:
        """True when the model answered."""
        return self.error is None and self.text is not None


@runtime_checkable
class Backend(Protocol):
    """What the runner needs from a model; see the module docstring.

    A backend may also expose ``batch_size: int``, the number of requests it likes to get
    per ``generate`` call; the runner uses it unless told otherwise; and ``tasks``, the
    tasks it can answer at all: the runner refuses other tasks before asking anything,
    since a rerun could never fill them in.
    """

    name: str

    def describe(self) -> dict[str, Any]:
        """JSON-ready description of the backend for the run manifest."""
        ...

    def generate(self, requests: Sequence[Request]) -> list[Answer]:
        """One answer per request, in order."""
        ...


def _library_versions(*names: str) -> dict[str, str]:
    """Versions of the named installed libraries, plus Python and novabench."""
    from importlib import metadata

    versions = {"python": platform.python_version(), "novabench": __version__}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return versions


# --------------------------------------------------------------------------- transformers


def effective_input_size(image_processor: Any, image: Any) -> tuple[int, int] | None:
    """Size of ``image`` as a dynamic-resolution processor feeds it to the model, else None.

    Qwen2-VL style processors resize every image to a multiple of their patch size and
    report the patch grid as ``image_grid_thw``; such models answer boxes in absolute pixels
    of that resized image, so the parser needs its size. Fixed-size processors (LLaVA, ...)
    produce no grid: their models answer relative to the image, and None is returned.

    Args:
        image_processor: a transformers image processor.
        image: a PIL image.

    Returns:
        ``(width, height)`` in pixels seen by the model, or None.

    Example:
        >>> import numpy as np
        >>> class GridProcessor:  # stands in for a Qwen2-VL image processor
        ...     patch_size = 14
        ...     def __call__(self, images, return_tensors):
        ...         return {"image_grid_thw": np.array([[1, 36, 52]])}
        >>> effective_input_size(GridProcessor(), object())
        (728, 504)
    """
    outputs = image_processor(
        images=[image], return_tensors="pt"
    )  # fast processors only speak torch
    grid = outputs.get("image_grid_thw") if hasattr(outputs, "get") else None
    if grid is None:
        return None
    patch = getattr(image_processor, "patch_size", None)
    if not isinstance(patch, int):
        return None
    _, rows, columns = (int(v) for v in list(grid[0]))
    return columns * patch, rows * patch


def _chat(request: Request) -> list[dict[str, Any]]:
    """The request as a one-turn chat, image first (how most VLM chat templates expect it)."""
    content: list[dict[str, Any]] = []
    if request.image is not None:
        content.append({"type": "image", "image": request.image})
    content.append({"type": "text", "text": request.prompt})
    return [{"role": "user", "content": content}]


def model_display_name(model_id: str) -> str:
    """The name reports show for a model loaded from ``model_id``: a Hub id as it is, a local
    folder by its own name (its path says where it sits on this machine, not what it is).

    Example:
        >>> model_display_name("Qwen/Qwen2.5-VL-7B-Instruct")
        'Qwen/Qwen2.5-VL-7B-Instruct'
        >>> import tempfile, pathlib
        >>> model_display_name(str(pathlib.Path(tempfile.mkdtemp()) / "tiny-llava") + "/")
        'tiny-llava'
    """
    text = str(model_id)
    local = os.path.expanduser(text)
    if os.path.isdir(local) or text.startswith((".", os.sep, "~")):
        return os.path.basename(os.path.normpath(os.path.abspath(local))) or text
    return text


class TransformersBackend:
    """A local vision-language model run through ``pipeline("image-text-to-text")``.

    Greedy decoding (``do_sample=False``) so a rerun gives the same answers. Requests with
    and without an image are sent in separate batches (the pipeline cannot pad them
    together). For batching, decoder-only tokenizers are switched to left padding and given
    a pad token (the end-of-sequence token) when they have none.

    Args:
        model: a Hub model id, a local folder, or a ready pipeline.
        device: ``None`` (the pipeline's default), ``"auto"`` (``device_map="auto"``, needs
            accelerate), or a device such as ``"cpu"``, ``"cuda:0"``, ``"mps"`` or an index.
        batch_size: requests per forward pass.
        max_new_tokens: answer length limit.
        torch_dtype: e.g. ``"bfloat16"``, ``"float16"``, ``"auto"``; None keeps the default.
        revision: Hub revision (branch, tag or commit) to load.
        generate_kwargs: further ``generate`` settings, recorded in the manifest.
        trust_remote_code: allow model code from the Hub (off by default).
        display_name: the model name reports show; default: the model's own name (a Hub
            id as given, a local folder by its name, never its path).

    Example:
        >>> backend = TransformersBackend("path/to/model")  # doctest: +SKIP
        >>> backend.generate([Request("case0001_001.png", "captioning", "Describe.", image)])  # doctest: +SKIP
        [Answer(text='Axial FLAIR ...', latency_s=0.8, input_size=(480, 480), error=None)]
    """

    def __init__(
        self,
        model: Any,
        *,
        device: str | int | None = None,
        batch_size: int = 4,
        max_new_tokens: int = 256,
        torch_dtype: str | None = None,
        revision: str | None = None,
        generate_kwargs: Mapping[str, Any] | None = None,
        trust_remote_code: bool = False,
        display_name: str | None = None,
    ) -> None:
        if batch_size < 1:
            raise NovaInputError(f"must be at least 1, got {batch_size}", field="batch_size")
        if max_new_tokens < 1:
            raise NovaInputError(
                f"must be at least 1, got {max_new_tokens}", field="max_new_tokens"
            )
        self.batch_size = batch_size
        self.max_new_tokens = max_new_tokens
        self.generate_kwargs = {"do_sample": False, **dict(generate_kwargs or {})}
        self._requested = {"device": device, "torch_dtype": torch_dtype, "revision": revision}
        self.pipeline = (
            model
            if hasattr(model, "model") and callable(model)
            else self._load(
                model,
                device=device,
                torch_dtype=torch_dtype,
                revision=revision,
                trust_remote_code=trust_remote_code,
            )
        )
        self.model_id = str(getattr(self.pipeline.model, "name_or_path", model))
        self.name = self.model_id
        self.display_name = display_name or model_display_name(self.model_id)
        self._grid_processor: bool | None = None  # learnt on the first image
        self._prepare_padding()

    @staticmethod
    def _load(
        model: str, *, device: Any, torch_dtype: Any, revision: Any, trust_remote_code: bool
    ) -> Any:
        from transformers import pipeline

        kwargs: dict[str, Any] = {
            "task": "image-text-to-text",
            "model": model,
            "trust_remote_code": trust_remote_code,
        }
        if device == "auto":
            kwargs["device_map"] = "auto"
        elif device is not None:
            kwargs["device"] = device
        if torch_dtype is not None:
            kwargs["dtype"] = torch_dtype
        if revision is not None:
            kwargs["revision"] = revision
        try:
            return pipeline(**kwargs)
        except (OSError, ValueError, KeyError, ImportError, RuntimeError) as error:
            if type(error).__name__ == "OutOfMemoryError" or "out of memory" in str(error).lower():
                raise  # not a wrong --model: the device is too small (try --dtype or --device)
            # transformers' own message is kept (chained); this one says what to do here.
            first_line = (str(error).strip().splitlines() or [type(error).__name__])[0]
            raise NovaInputError(
                (
                    f"cannot load {model!r} as an image-text-to-text pipeline "
                    f"({type(error).__name__}: {first_line}). Check that it is a local model "
                    "folder or a Hub id (a download needs the network and no HF_HUB_OFFLINE=1) "
                    "of a model transformers supports for image-text-to-text (",
                    _TRUST_REMOTE_CODE,
                    " for models that ship their own code)",
                ),
                source=str(model),
                field=_MODEL,
            ) from error

    def _prepare_padding(self) -> None:
        tokenizer = getattr(
            getattr(self.pipeline, "processor", None), "tokenizer", None
        ) or getattr(self.pipeline, "tokenizer", None)
        if tokenizer is None:
            return
        if not getattr(self.pipeline.model.config, "is_encoder_decoder", False):
            tokenizer.padding_side = (
                "left"  # right padding would put pads between prompt and answer
            )
        if tokenizer.pad_token is None and tokenizer.eos_token is not None:
            tokenizer.pad_token = tokenizer.eos_token

    def describe(self) -> dict[str, Any]:
        """Model id, revision, classes, device, dtype, generation settings, library versions.

        Example:
            >>> TransformersBackend(tiny_pipeline).describe()["type"]  # doctest: +SKIP
            'transformers'
        """
        model = self.pipeline.model
        config = model.config
        return {
            "type": "transformers",
            "model": self.model_id,
            "revision": self._requested["revision"] or getattr(config, "_commit_hash", None),
            "model_class": type(model).__name__,
            "processor_class": type(getattr(self.pipeline, "processor", None)).__name__,
            # transformers 5 picks a torchvision or a PIL image backend by what is installed;
            # their resizing can differ, so the run records which one it was.
            "image_processor_class": type(
                getattr(getattr(self.pipeline, "processor", None), "image_processor", None)
            ).__name__,
            "device": str(getattr(self.pipeline, "device", None)),
            "device_map": "auto" if self._requested["device"] == "auto" else None,
            "dtype": str(getattr(model, "dtype", None)),
            "batch_size": self.batch_size,
            "generation": {"max_new_tokens": self.max_new_tokens, **self.generate_kwargs},
            "versions": _library_versions("transformers", "torch", "torchvision", "tokenizers"),
        }

    def _input_size(self, image: Any) -> tuple[int, int]:
        processor = getattr(getattr(self.pipeline, "processor", None), "image_processor", None)
        if processor is not None and self._grid_processor is not False:
            size = effective_input_size(processor, image)
            self._grid_processor = size is not None
            if size is not None:
                return size
        return tuple(image.size)

    def generate(self, requests: Sequence[Request]) -> list[Answer]:
        """Answer ``requests`` in batches of ``batch_size``; image and text requests apart.

        Example:
            >>> backend.generate([Request("case0001", "diagnosis", "History: ...")])  # doctest: +SKIP
            [Answer(text='{"most_likely_diagnosis": ...}', latency_s=0.4, input_size=None, error=None)]
        """
        answers: list[Answer | None] = [None] * len(requests)
        for wants_image in (True, False):
            indices = [i for i, r in enumerate(requests) if (r.image is not None) == wants_image]
            for start in range(0, len(indices), self.batch_size):
                chunk = indices[start : start + self.batch_size]
                begin = time.perf_counter()
                with _finish_reasons(self.pipeline.model) as finishes:
                    outputs = self.pipeline(
                        [_chat(requests[i]) for i in chunk],
                        batch_size=len(chunk),
                        max_new_tokens=self.max_new_tokens,
                        return_full_text=False,
                        generate_kwargs=dict(self.generate_kwargs),
                    )
                latency = (time.perf_counter() - begin) / len(chunk)
                # One generate call per chunk gives one reason per request; else none is known.
                reasons = finishes if len(finishes) == len(chunk) else [None] * len(chunk)
                for i, output, reason in zip(chunk, outputs, reasons):
                    first = output[0] if isinstance(output, list) else output
                    text = first["generated_text"]
                    if not isinstance(text, str):  # a chat came back: take the assistant turn
                        text = str(text[-1]["content"])
                    image = requests[i].image
                    size = self._input_size(image) if image is not None else None
                    answers[i] = Answer(
                        text=text, latency_s=latency, input_size=size, finish_reason=reason
                    )
        return [answer if answer is not None else Answer(error="no output") for answer in answers]


@contextmanager
def _finish_reasons(model: Any) -> Iterator[list[str | None]]:
    """Why each row of the model's ``generate`` calls stopped, for the length of the block.

    The pipeline gives text only; the token ids ``generate`` returns tell it: a row with no
    end-of-sequence token among its new tokens and as many new tokens as ``max_new_tokens``
    allows stopped at the limit (``"length"``), a row with one stopped by itself
    (``"stop"``); None when that cannot be told (an encoder-decoder model, no end token
    known, a ``generate`` that does not return token ids).
    """
    reasons: list[str | None] = []
    generate = model.generate

    def observed(*args: Any, **kwargs: Any) -> Any:
        sequences = generate(*args, **kwargs)
        reasons.extend(_rows_finish(model, sequences, kwargs))
        return sequences

    own = "generate" in vars(model)  # set on the object itself, not its class's method
    model.generate = observed
    try:
        yield reasons
    finally:
        if own:
            model.generate = generate
        else:
            del model.generate  # the class's method shows through again


def _rows_finish(model: Any, sequences: Any, kwargs: Mapping[str, Any]) -> list[str | None]:
    """Per row of ``sequences`` (prompt + new tokens), ``"length"``, ``"stop"`` or None."""
    prompt = kwargs.get("input_ids")
    shape = getattr(sequences, "shape", None)
    if prompt is None or shape is None or len(shape) != 2:
        return [None] * (int(shape[0]) if shape else 0)
    config = getattr(model, "config", None)
    if getattr(config, "is_encoder_decoder", False):  # its output holds no prompt to cut
        return [None] * int(shape[0])
    limit = kwargs.get("max_new_tokens")
    new = sequences[:, prompt.shape[-1] :]
    eos = kwargs.get("eos_token_id")
    if eos is None:
        eos = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    end_ids = {int(e) for e in (eos if isinstance(eos, (list, tuple)) else [eos]) if e is not None}
    reasons: list[str | None] = []
    for row in new.tolist():
        if any(token in end_ids for token in row):
            reasons.append("stop")
        elif isinstance(limit, int) and len(row) < limit:
            reasons.append("stop")  # the batch ended before the limit: every row had stopped
        elif isinstance(limit, int) and end_ids:
            reasons.append("length")
        else:
            reasons.append(None)
    return reasons


# --------------------------------------------------------------------------- OpenAI-compatible endpoint


INPUT_SIZE_RULES: tuple[str, ...] = ("original", "qwen2.5-vl")


def qwen2_5_vl_input_size(
    width: int,
    height: int,
    *,
    factor: int = 28,
    min_pixels: int = 56 * 56,
    max_pixels: int = 28 * 28 * 16384,
) -> tuple[int, int]:
    """The ``(width, height)`` Qwen2(.5)-VL's processor resizes an image to (its ``smart_resize`` rule).

    Each side is rounded to a multiple of ``factor`` (patch 14 x merge 2), then the
    whole image is scaled down or up, keeping the aspect ratio, when its area leaves
    ``[min_pixels, max_pixels]`` (the processor's defaults). A server such as vLLM
    applies this itself, so an endpoint run must record it for ``bbox_2d`` pixel answers
    to be rescaled correctly.

    Example:
        >>> qwen2_5_vl_input_size(480, 480), qwen2_5_vl_input_size(1024, 768)
        ((476, 476), (1036, 756))
    """
    if width < 1 or height < 1:
        raise NovaInputError(f"image size must be positive, got {width}x{height}", field="image")
    new_height = max(factor, round(height / factor) * factor)
    new_width = max(factor, round(width / factor) * factor)
    if new_height * new_width > max_pixels:
        shrink = math.sqrt(height * width / max_pixels)
        new_height = max(factor, math.floor(height / shrink / factor) * factor)
        new_width = max(factor, math.floor(width / shrink / factor) * factor)
    elif new_height * new_width < min_pixels:
        grow = math.sqrt(min_pixels / (height * width))
        new_height = math.ceil(height * grow / factor) * factor
        new_width = math.ceil(width * grow / factor) * factor
    return new_width, new_height


def image_to_data_url(image: Any) -> str:
    """Encode a PIL image as a ``data:image/png;base64,...`` URL (lossless, as the release PNGs).

    Example:
        >>> from PIL import Image
        >>> image_to_data_url(Image.new("L", (2, 2)))[:22]
        'data:image/png;base64,'
    """
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


#: An endpoint whose first this-many new items all fail with a server error (HTTP 5xx on
#: every attempt), with nothing answered, stops the run. More than one, so that a few
#: requests the server chokes on do not stop a run that would answer the rest.
ENDPOINT_SERVER_ERRORS_BEFORE_STOP = 5


class OpenAIEndpointBackend:
    """Any OpenAI-compatible ``/chat/completions`` server (vLLM, TGI, llama.cpp, hosted APIs).

    Images go inline as base64 PNG data URLs: the release's own PNG bytes when a server
    reads them as the same pixels, else a lossless re-encoding (:func:`png_for_model`; the
    runner records which in the manifest). The HTTP side is a
    :class:`novabench.client.ChatClient`: up to ``max_concurrency`` requests in flight,
    ``timeout`` as a deadline for each attempt, and its retry rule (HTTP 408/409/425/429/5xx,
    dropped connections and deadlines are retried up to ``max_retries`` times, waiting
    ``backoff * 2**attempt`` seconds or the server's longer ``Retry-After``, at most a
    minute; other HTTP errors and malformed replies are not). A final failure becomes
    ``Answer(error=...)`` so one bad item never aborts a run; one that every request would
    get (unreachable server, HTTP 401/403/404) also sets ``Answer.endpoint_problem``, on
    which the runner stops early while nothing has been answered. A server error (HTTP 5xx
    on every attempt) may be one request's own, so one does not stop a run; but when the
    first :data:`ENDPOINT_SERVER_ERRORS_BEFORE_STOP` new items all end so with nothing
    answered, the runner stops too (``failures_before_stop``, :meth:`counts_towards_stop`).
    Each worker thread keeps its HTTP connection alive between requests.

    The runner calls :meth:`answer` from ``max_concurrency`` threads, so that many requests
    are in flight at all times (a continuous pool); :meth:`generate` is for direct use.

    Args:
        base_url: the API root, e.g. ``http://localhost:8000/v1`` (``/chat/completions`` is appended).
        model_name: the ``model`` field of each request.
        api_key: sent as a bearer token; never written to manifests.
        max_concurrency: requests in flight at most (default 16, which keeps a vLLM or TGI
            server's batch full; lower it for rate-limited hosted APIs).
        timeout: seconds per HTTP attempt, as a whole (a deadline, not a per-read timeout).
        max_retries: further attempts after the first.
        backoff: base delay in seconds between attempts.
        max_tokens: answer length limit.
        temperature: sampling temperature (0 for reproducible answers).
        extra_body: further fields for the request body (e.g. ``{"top_p": 1}``), recorded.
        input_size_rule: the image size to record as the model's input: ``"original"`` (the
            server does not resize, or the answers are not in its pixels) or ``"qwen2.5-vl"``
            (the server resizes with Qwen2(.5)-VL's rule; see :func:`qwen2_5_vl_input_size`).
        display_name: the model name reports show; default: ``model_name``.

    Example:
        >>> backend = OpenAIEndpointBackend("http://127.0.0.1:8000/v1", "qwen2.5-vl-72b")
        >>> backend.describe()["endpoint"]
        'http://127.0.0.1:8000/v1/chat/completions'
    """

    def __init__(
        self,
        base_url: str,
        model_name: str,
        *,
        api_key: str | None = None,
        max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
        timeout: float = 60.0,
        max_retries: int = 3,
        backoff: float = 1.0,
        max_tokens: int = 256,
        temperature: float = 0.0,
        extra_body: Mapping[str, Any] | None = None,
        input_size_rule: str = "original",
        display_name: str | None = None,
    ) -> None:
        if input_size_rule not in INPUT_SIZE_RULES:
            raise NovaInputError(
                f"unknown input size rule {input_size_rule!r}; choose one of {list(INPUT_SIZE_RULES)}",
                field="input_size_rule",
            )
        self.input_size_rule = input_size_rule
        if max_concurrency < 1 or max_retries < 0 or timeout <= 0 or backoff < 0 or max_tokens < 1:
            raise NovaInputError(
                "need max_concurrency >= 1, max_retries >= 0, timeout > 0, backoff >= 0, max_tokens >= 1",
                field="OpenAIEndpointBackend",
            )
        self._client = ChatClient(
            base_url,
            model_name,
            api_key=api_key,
            timeout=timeout,
            max_retries=max_retries,
            backoff=backoff,
            max_concurrency=max_concurrency,
        )
        self.url = self._client.url  # without credentials
        self.model_name = model_name
        self.name = model_name
        self.display_name = display_name or model_name
        self.max_concurrency = max_concurrency
        self.accepts_png = True  # the runner hands over the release's PNG bytes
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.extra_body = dict(extra_body or {})
        # The runner's early stop on a server that fails everything with HTTP 5xx.
        self.failures_before_stop = ENDPOINT_SERVER_ERRORS_BEFORE_STOP
        self.failure_subject = f"the endpoint {self.url}"

    @staticmethod
    def counts_towards_stop(answer: Answer) -> bool:
        """Whether a failed answer counts towards the early stop: a server error only.

        Other failures (429 after every retry, a late or malformed reply) may be one
        request's own; the endpoint-wide ones stop the run at once (``endpoint_problem``).

        Example:
            >>> OpenAIEndpointBackend.counts_towards_stop(Answer(error="HTTP 500", server_error=True))
            True
            >>> OpenAIEndpointBackend.counts_towards_stop(Answer(error="HTTP 429"))
            False
        """
        return answer.server_error

    def describe(self) -> dict[str, Any]:
        """Endpoint (without credentials), model name, generation and retry settings."""
        return {
            "type": "openai-endpoint",
            "endpoint": self.url,
            "model": self.model_name,
            "revision": None,
            "generation": {
                "max_tokens": self.max_tokens,
                "temperature": self.temperature,
                **self.extra_body,
            },
            "max_concurrency": self.max_concurrency,
            "timeout_s": self.timeout,
            "max_retries": self.max_retries,
            "image_transport": "png-base64-data-url",
            "input_size_rule": self.input_size_rule,
            "versions": _library_versions(),
        }

    def _messages(self, request: Request) -> list[dict[str, Any]]:
        url: DataURL | str
        if request.image_png is not None:
            url = DataURL("image/png", request.image_png)  # spliced into the body as it is
        elif request.image is not None:
            url = image_to_data_url(request.image)
        else:
            return [{"role": "user", "content": request.prompt}]
        content = [
            {"type": "image_url", "image_url": {"url": url}},
            {"type": "text", "text": request.prompt},
        ]
        return [{"role": "user", "content": content}]

    def answer(self, request: Request) -> Answer:
        """Ask one request (thread-safe; the client bounds the requests in flight).

        Example:
            >>> backend.answer(Request("case0001", "diagnosis", "History: ..."))  # doctest: +SKIP
            Answer(text='{"most_likely_diagnosis": ...}', latency_s=1.3, ...)
        """
        messages = self._messages(request)
        size = request.image_size
        if size is not None and self.input_size_rule == "qwen2.5-vl":
            size = qwen2_5_vl_input_size(*size)
        begin = time.perf_counter()
        try:
            reply = self._client.chat(
                messages,
                max_tokens=self.max_tokens,
                temperature=self.temperature,
                extra_body=self.extra_body,
            )
        except ChatClientError as error:  # retried already where retrying can help
            return Answer(
                error=str(error),
                input_size=size,
                endpoint_problem=endpoint_problem(error),
                server_error=error.kind == "http" and 500 <= (error.status or 0) <= 599,
            )
        return Answer(
            text=reply.text,
            latency_s=time.perf_counter() - begin,
            input_size=size,
            finish_reason=reply.finish_reason,
        )

    def close(self) -> None:
        """Close the kept-alive connections (the runner calls it when a run ends)."""
        self._client.close()

    def generate(self, requests: Sequence[Request]) -> list[Answer]:
        """Send ``requests`` with at most ``max_concurrency`` in flight; answers keep request order.

        Example:
            >>> backend.generate([Request("case0001", "diagnosis", "History: ...")])  # doctest: +SKIP
            [Answer(text='{"most_likely_diagnosis": ...}', latency_s=1.3, input_size=None, error=None)]
        """
        if not requests:
            return []
        try:
            if len(requests) == 1 or self.max_concurrency == 1:
                return [self.answer(request) for request in requests]
            with ThreadPoolExecutor(max_workers=min(self.max_concurrency, len(requests))) as pool:
                return list(pool.map(for_caller(self.answer), requests))  # warnings: user's line
        finally:
            self.close()  # the pool's threads are gone; so is any use of their connections
