"""Calls to the Hugging Face Hub: the online/offline rule and one-line errors.

Every novabench call to the Hub (``nova export --push``, ``load_nova`` of a Hub id, the
BERTScore model download) goes through here, so that an unreachable Hub, offline mode, a
missing token and a refused request (401, 403, 404) each end in one
:class:`~novabench.errors.NovaInputError` line naming the repository and what to do,
whatever the installed ``huggingface_hub`` raises (its HTTP errors subclass the HTTP
library it is built on: ``requests``, ``httpx`` or ``httpx2`` depending on the version).

The rule: novabench goes online when it needs something that is not local, unless the
user asked for offline mode (``HF_HUB_OFFLINE=1``, read by ``huggingface_hub``).
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager

from novabench.errors import NovaInputError

__all__ = [
    "describe_hub_error",
    "hub_errors",
    "hub_offline",
    "looks_like_path",
    "require_token",
]

_LOGIN = "log in with `hf auth login` (or set HF_TOKEN)"


def hub_offline() -> bool:
    """Whether the user asked for offline mode (``HF_HUB_OFFLINE``, as huggingface_hub reads it).

    Example:
        >>> isinstance(hub_offline(), bool)
        True
    """
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE)


def looks_like_path(text: str, *, bare_name_is_id: bool = False) -> bool:
    """Whether ``text`` reads as a local path rather than a Hub repository id.

    A path: starts with ``.``, ``~`` or ``/``; holds a Windows separator or more than the
    one ``/`` of ``owner/name``; has characters no Hub id has; or its first part is an
    existing local folder (``data/nova`` beside a ``data`` folder). A bare ``name``
    without owner is a path unless ``bare_name_is_id`` (models such as ``roberta-large``).

    Example:
        >>> looks_like_path("c-i-ber/Nova"), looks_like_path("./nova"), looks_like_path("a/b/c")
        (False, True, True)
        >>> looks_like_path("roberta-large"), looks_like_path("roberta-large", bare_name_is_id=True)
        (True, False)
    """
    if text.startswith((".", "~", "/")) or text.count("/") > 1:
        return True
    if any(
        separator and separator != "/" and separator in text for separator in (os.sep, os.altsep)
    ):
        return True
    if not re.fullmatch(r"(?:[A-Za-z0-9][\w.-]*/)?[\w.-]+", text):
        return True
    if "/" not in text:
        return not bare_name_is_id
    return os.path.isdir(text.split("/")[0])


def require_token(repo_id: str, *, field: str | None = None) -> None:
    """Refuse, before any upload, when no Hugging Face token is configured.

    Args:
        repo_id: the repository about to be written, named in the message.
        field: the option that asked for the upload (e.g. ``"push_to"``).

    Raises:
        NovaInputError: no token in ``HF_TOKEN`` nor in the local login.

    Example:
        >>> import os
        >>> os.environ.get("HF_TOKEN") or require_token("me/nova")  # doctest: +SKIP
    """
    from huggingface_hub import get_token

    if not get_token():
        raise NovaInputError(
            f"cannot push: not logged in to the Hugging Face Hub; {_LOGIN} with a token that "
            "can write to this repository, and run again",
            source=repo_id,
            field=field,
        )


def _transport_errors() -> tuple[type[BaseException], ...]:
    """The base error classes of the HTTP libraries huggingface_hub may be built on."""
    from huggingface_hub.errors import HfHubHTTPError

    classes: list[type[BaseException]] = [
        base
        for base in HfHubHTTPError.__mro__[1:]
        if base not in (OSError, Exception, BaseException, object)
    ]
    for module, name in (
        ("httpx2", "HTTPError"),
        ("httpx", "HTTPError"),
        ("requests", "RequestException"),
    ):
        try:
            classes.append(getattr(importlib.import_module(module), name))
        except (ImportError, AttributeError):
            continue
    return tuple(classes)


def _one_line(text: object, limit: int = 200) -> str:
    line = re.sub(r"\s+", " ", str(text)).strip()
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _status(error: BaseException) -> int | None:
    response = getattr(error, "response", None)
    status = getattr(response, "status_code", None)
    return status if isinstance(status, int) else None


def describe_hub_error(
    error: BaseException, repo_id: str, *, repo_type: str = "dataset"
) -> str | None:
    """What went wrong with a Hub call and what to do, in one line; None if not a Hub error.

    Args:
        error: what huggingface_hub (or its HTTP library) raised.
        repo_id: the repository the call was about.
        repo_type: ``"dataset"``, ``"model"`` or ``"space"``.

    Returns:
        The message, or None when ``error`` is no Hub, network or login error.

    Example:
        >>> from huggingface_hub.errors import LocalTokenNotFoundError
        >>> describe_hub_error(LocalTokenNotFoundError("no token"), "me/nova")
        'not logged in to the Hugging Face Hub; log in with `hf auth login` (or set HF_TOKEN)'
        >>> describe_hub_error(KeyError("x"), "me/nova") is None
        True
        >>> try:
        ...     try:
        ...         raise ConnectionError("refused")
        ...     except ConnectionError as cause:
        ...         raise FileNotFoundError("no snapshot") from cause
        ... except FileNotFoundError as wrapped:
        ...     describe_hub_error(wrapped, "me/nova")[:35]
        'the Hugging Face Hub is unreachable'
    """
    from huggingface_hub.errors import (
        GatedRepoError,
        HfHubHTTPError,
        HFValidationError,
        LocalTokenNotFoundError,
        OfflineModeIsEnabled,
        RepositoryNotFoundError,
    )

    page = f"https://huggingface.co/{'' if repo_type == 'model' else repo_type + 's/'}{repo_id}"
    if isinstance(error, OfflineModeIsEnabled):
        return "the Hugging Face Hub is in offline mode (HF_HUB_OFFLINE=1); unset it to go online"
    if isinstance(error, LocalTokenNotFoundError):
        return f"not logged in to the Hugging Face Hub; {_LOGIN}"
    if isinstance(error, HFValidationError):
        return f"not a valid Hub repository id ({_one_line(error)}); use the form owner/name"
    if isinstance(error, GatedRepoError):
        return f"the {repo_type} is gated: accept its conditions at {page}, then {_LOGIN}"
    status = _status(error)
    if isinstance(error, RepositoryNotFoundError) or status == 404:
        # The Hub answers 401 for a private repository seen without a token, too.
        return (
            f"no such {repo_type} repository on the Hub, or it is private and your token cannot "
            f"see it ({status or 404}); check the id, or {_LOGIN} with an account that has access"
        )
    if status == 401:
        return f"the Hub refused the credentials (401); {_LOGIN} with a valid token"
    if status == 403:
        return (
            f"the Hub refused access (403): the token cannot write to {repo_id}; use a token "
            f"with write access (hf auth login) or a repository you own"
        )
    if isinstance(error, HfHubHTTPError):
        return f"the Hub answered {status or 'an error'} ({_one_line(error)}); try again later"
    if isinstance(error, (*_transport_errors(), ConnectionError, TimeoutError)):
        return (
            f"the Hugging Face Hub is unreachable ({type(error).__name__}: {_one_line(error)}); "
            "check the network connection (and HF_ENDPOINT), or set HF_HUB_OFFLINE=1 to work offline"
        )
    if isinstance(error, (OSError, ValueError)):  # e.g. a file that vanished, a refused argument
        # huggingface_hub wraps a network failure (snapshot_download: LocalEntryNotFoundError
        # "from" the ConnectError): the cause says more.
        cause = error.__cause__ or error.__context__
        if cause is not None and cause is not error:
            deeper = describe_hub_error(cause, repo_id, repo_type=repo_type)
            if deeper is not None and not deeper.startswith(type(cause).__name__ + ":"):
                return deeper
        return f"{type(error).__name__}: {_one_line(error)}"
    return None


@contextmanager
def hub_errors(
    repo_id: str,
    *,
    action: str,
    then: str = "",
    repo_type: str = "dataset",
    field: str | None = None,
) -> Iterator[None]:
    """Run Hub calls; turn a Hub, network or login failure into one NovaInputError line.

    Args:
        repo_id: the repository the calls are about (the error's source).
        action: what was being done, e.g. ``"push failed"``.
        then: what the user can do next beyond fixing the cause (appended).
        repo_type: ``"dataset"``, ``"model"`` or ``"space"``.
        field: the option that named the repository.

    Raises:
        NovaInputError: ``"<repo>: <action>: <cause and fix>[; <then>]"``.

    Example:
        >>> from huggingface_hub.errors import LocalTokenNotFoundError
        >>> try:
        ...     with hub_errors("me/nova", action="push failed"):
        ...         raise LocalTokenNotFoundError("no token")
        ... except NovaInputError as error:
        ...     print(error)
        me/nova: push failed: not logged in to the Hugging Face Hub; log in with `hf auth login` (or set HF_TOKEN)
    """
    try:
        yield
    except NovaInputError:
        raise
    except Exception as error:
        cause = describe_hub_error(error, repo_id, repo_type=repo_type)
        if cause is None:
            raise
        message = f"{action}: {cause}" + (f"; {then}" if then else "")
        raise NovaInputError(message, source=repo_id, field=field) from error
