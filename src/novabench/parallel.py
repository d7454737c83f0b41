"""Independent pieces of scoring spread over helper processes, with the results of one process.

A report's slowest parts are many independent bootstraps: the localisation breakdown cells
and the human reference. :class:`WorkerPool` runs such pieces in helper processes while this
process does its own share, then takes back whatever no helper has started (from the end of
the queue, while the helpers take from the front), so both cores stay busy to the end.

Rules that keep a pooled report equal to a one-process report, number for number:

- a piece is a module-level function and picklable arguments; it computes the same thing
  wherever it runs (each bootstrap has its own seed, so order does not matter);
- a piece that fails in a helper (an exception, a helper that died, an argument that cannot
  be pickled) is run again here, so its error, if any, is raised here as it would be without
  helpers;
- a piece that fails while this process works through the queue keeps its error until its
  result is taken, so results taken in submission order raise the first failure in that
  order, as computing each piece at submission would;
- warnings a piece gives in a helper are given again here when its result is taken, through
  this process's warning filters and the giving module's registry (a warning already shown
  once from the same place is not shown again, as in one process).

Helpers are plain ``python -c`` processes (not ``multiprocessing``): nothing of the caller's
``__main__`` is imported again, so this works from scripts without a main guard, notebooks
and the console script alike. They get this process's ``sys.path`` and environment and talk
pickle over their standard input and output. A helper takes pieces only once it has started
(until then this process may take them all: a small report never waits for a helper), then
holds two at a time, so it never waits for this process's feeding thread; closing the pool
kills the helpers, since every result wanted has been collected by then.
"""

from __future__ import annotations

import collections
import math
import os
import pickle
import subprocess
import sys
import threading
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO, Any, Generic, TypeVar

__all__ = ["Pending", "WorkerPool", "cgroup_cpu_quota", "default_jobs", "usable_cpus"]

T = TypeVar("T")

#: ``--jobs auto`` uses at most this many processes: beyond it, the helpers' start-up costs
#: more than the pieces of a NOVA-size report save.
MAX_AUTO_JOBS = 4

_QUEUED, _SENT, _RUNNING_HERE, _DONE, _FAILED = "queued", "sent", "here", "done", "failed"

#: Pieces a helper holds at once: the one it runs and the next, waiting in its input.
_PIECES_AHEAD = 2

# The helper's first lines: the channel to the parent is the original standard output, and
# anything printed goes to standard error instead, so a stray print cannot corrupt it.
# Ctrl-C in a terminal reaches the whole process group; the parent answers it. Nothing is
# imported from the working folder before the parent's sys.path is in place.
_HELPER_START = """
import sys
if not getattr(sys.flags, "safe_path", False):
    del sys.path[0]  # the working folder, which `-c` puts first: its signal.py is not ours
import os, pickle, signal
signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's: it stops the helpers
replies = os.fdopen(os.dup(1), "wb")
os.dup2(2, 1)
requests = sys.stdin.buffer
sys.path[:] = pickle.load(requests)
from novabench.parallel import _serve
_serve(requests, replies)
"""


def usable_cpus() -> int:
    """The CPUs this process may use: its affinity (else all), capped by a cgroup CPU quota.

    A container limited to, say, 1.5 CPUs (``docker --cpus``, a Kubernetes limit) sees every
    core of its host but gets 1.5 CPU-seconds per second; the cap rounds that up to 2.

    Example:
        >>> usable_cpus() >= 1
        True
    """
    if hasattr(os, "sched_getaffinity"):
        cpus = len(os.sched_getaffinity(0))
    else:
        cpus = os.cpu_count() or 1
    quota = cgroup_cpu_quota()
    if quota is not None:
        cpus = min(cpus, math.ceil(quota))
    return max(1, cpus)


def cgroup_cpu_quota(
    root: Path = Path("/sys/fs/cgroup"), membership: Path = Path("/proc/self/cgroup")
) -> float | None:
    """CPU-seconds per second this process's cgroup may use, or None without a quota.

    Reads ``cpu.max`` (cgroup v2) or ``cpu.cfs_quota_us`` / ``cpu.cfs_period_us`` (v1) of
    the cgroup named in ``membership``, else of ``root`` itself (a container's own view).
    Anything missing or unreadable means no quota.

    Example:
        >>> quota = cgroup_cpu_quota()
        >>> quota is None or quota > 0
        True
    """
    try:
        lines = membership.read_text().splitlines()
    except OSError:
        lines = []
    candidates: list[Path] = []
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        controllers, relative = parts[1], parts[2].lstrip("/")
        if controllers == "":  # cgroup v2: one unified hierarchy
            candidates += [root / relative / "cpu.max", root / "cpu.max"]
        elif "cpu" in controllers.split(","):
            for folder in (controllers, "cpu"):
                candidates += [root / folder / relative / "cpu.cfs_quota_us"]
                candidates += [root / folder / "cpu.cfs_quota_us"]
    candidates += [root / "cpu.max", root / "cpu" / "cpu.cfs_quota_us"]
    for candidate in candidates:
        try:
            if candidate.name == "cpu.max":
                quota, period = candidate.read_text().split()[:2]
                if quota == "max":
                    return None
            else:
                quota = candidate.read_text().strip()
                period = (candidate.parent / "cpu.cfs_period_us").read_text().strip()
                if int(quota) < 0:
                    return None
            return int(quota) / int(period) if int(quota) > 0 and int(period) > 0 else None
        except (OSError, ValueError):
            continue
    return None


def default_jobs() -> int:
    """The processes ``--jobs auto`` uses: the usable CPUs, at most :data:`MAX_AUTO_JOBS`.

    Example:
        >>> 1 <= default_jobs() <= MAX_AUTO_JOBS
        True
    """
    return min(usable_cpus(), MAX_AUTO_JOBS)


class Pending(Generic[T]):
    """A piece of work submitted to a pool; :meth:`result` gives its value.

    Example:
        >>> pending = Pending.done(3)
        >>> pending.result()
        3
    """

    __slots__ = (
        "_pool",
        "_function",
        "_args",
        "_kwargs",
        "_state",
        "_value",
        "_error",
        "_warnings",
    )

    def __init__(
        self,
        pool: WorkerPool | None,
        function: Callable[..., T],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> None:
        self._pool = pool
        self._function = function
        self._args = args
        self._kwargs = kwargs
        self._state = _QUEUED
        self._value: Any = None
        self._error: BaseException | None = None
        self._warnings: list[tuple[str, type[Warning], str, int]] = []

    @classmethod
    def done(cls, value: T) -> Pending[T]:
        """A piece whose value is already known (work done in this process at once)."""
        pending: Pending[T] = cls(None, _identity, (value,), {})
        pending._state = _DONE
        pending._value = value
        return pending

    def result(self) -> T:
        """The value: waits for a helper that has it, or computes it here.

        Raises:
            Exception: the piece's own error, when computing it here failed.
        """
        if self._error is not None:
            raise self._error
        if self._pool is None:
            value: T = self._value
            return value
        return self._pool._result(self)

    def _run_here(self) -> None:
        self._value = self._function(*self._args, **self._kwargs)
        self._state = _DONE
        self._warnings = []


def _identity(value: T) -> T:
    return value


class _Helper:
    """One helper process and the thread that feeds it pieces (two at a time)."""

    def __init__(self, pool: WorkerPool) -> None:
        if not sys.executable:  # an embedded interpreter: no Python to start
            raise OSError("sys.executable is empty")
        self.process = subprocess.Popen(
            [sys.executable, "-c", _HELPER_START],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self._requests: IO[bytes] = self.process.stdin
        self._replies: IO[bytes] = self.process.stdout
        self._pool = pool
        try:
            self._send(list(sys.path))
            self._send(("preload", pool.preload))
        except OSError:  # it died at once (not a Python?): leave no process behind
            self.stop()
            raise
        self.thread = threading.Thread(target=self._feed, name="novabench-helper", daemon=True)
        self.thread.start()

    def _send(self, message: Any) -> None:
        self._requests.write(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))
        self._requests.flush()

    def _feed(self) -> None:
        in_flight: collections.deque[Pending[Any]] = collections.deque()
        try:
            self._feed_until_stopped(in_flight)
        except Exception:  # noqa: BLE001 - whatever went wrong, the pieces are not lost
            self.kill()  # a helper left alive would compute what nobody will read
        finally:
            # Every way out gives back what the helper held (computed here when asked for):
            # no piece is left waiting for a reply that will not come.
            self._give_back(in_flight)

    def _feed_until_stopped(self, in_flight: collections.deque[Pending[Any]]) -> None:
        pool = self._pool
        # Nothing is taken from the queue until the helper has started and imported its
        # modules: until then this process can still take every piece itself.
        if pickle.load(self._replies)[0] != "ready":
            return  # a preloaded module failed to import: this process does all
        while True:
            # Keep a second piece waiting in the helper: it starts on it the moment it is
            # done with the first, however long this thread waits for the interpreter lock
            # while this process computes.
            while len(in_flight) < _PIECES_AHEAD:
                pending = pool._next_for_helper(wait=not in_flight)
                if pending is None:
                    break
                try:
                    # Pickled whole before writing: a failure cannot leave half a message.
                    message = pickle.dumps(
                        ("run", pending._function, pending._args, pending._kwargs),
                        protocol=pickle.HIGHEST_PROTOCOL,
                    )
                except Exception:  # noqa: BLE001 - not picklable: this process runs it
                    pool._finish(pending, _FAILED)
                    continue
                in_flight.append(pending)
                # A failed write (the helper is gone) ends the feeding: see _feed.
                self._requests.write(message)
                self._requests.flush()
            if not in_flight:
                return  # the pool is closing
            # A failed read (the helper is gone, or a reply that does not unpickle here)
            # ends the feeding too: the channel cannot be trusted after it.
            status, value, given = pickle.load(self._replies)
            pending = in_flight.popleft()
            if status == "ok":
                pending._value = value
                pending._warnings = given
                pool._finish(pending, _DONE, from_helper=True)
            else:
                pool._finish(pending, _FAILED)

    def _give_back(self, in_flight: collections.deque[Pending[Any]]) -> None:
        """The helper stopped: the pieces it held are computed here when asked for."""
        while in_flight:
            self._pool._finish(in_flight.popleft(), _FAILED)
        self._pool._helper_stopped()

    def kill(self) -> None:
        """Kill the helper without waiting (a piece it was running is abandoned)."""
        try:
            self.process.kill()
        except OSError:  # already reaped
            pass

    def stop(self) -> None:
        """Kill the helper and reap it."""
        self.kill()
        self.process.wait()
        for pipe in (self._requests, self._replies):
            try:
                pipe.close()
            except OSError:  # a write the kill cut short
                pass


class WorkerPool:
    """Pieces of work shared between this process and ``helpers`` helper processes.

    Use it as a context manager. :meth:`submit` queues a piece; :meth:`run_queued` makes this
    process work through the queue from its end; :meth:`Pending.result` returns a piece's
    value (computed here when no helper has taken it). With ``helpers=0`` every piece is
    computed here, at :meth:`submit`: the one-process behaviour.

    Args:
        helpers: helper processes to start (they start at once, in the background).
        preload: modules the helpers import while they wait for their first piece.

    Example:
        >>> import math
        >>> with WorkerPool(helpers=1) as pool:
        ...     pieces = [pool.submit(math.factorial, n) for n in range(8)]
        ...     pool.run_queued()
        ...     [piece.result() for piece in pieces]
        [1, 1, 2, 6, 24, 120, 720, 5040]
    """

    def __init__(self, helpers: int, preload: Iterable[str] = ()) -> None:
        self.preload = tuple(preload)
        self._queue: collections.deque[Pending[Any]] = collections.deque()
        self._changed = threading.Condition()
        self._closing = False
        self._helpers: list[_Helper] = []
        self._running_helpers = 0
        self._registries: dict[str, dict[Any, Any]] = {}
        #: Pieces whose value came back from a helper (a diagnostic, and for tests).
        self.helper_pieces = 0
        try:
            for _ in range(max(0, helpers)):
                try:
                    helper = _Helper(self)
                except OSError:  # no interpreter to start (an embedded Python): work here
                    break
                self._helpers.append(helper)
                with self._changed:
                    self._running_helpers += 1
        except BaseException:  # Ctrl-C while starting: leave no helper behind
            self.close()
            raise

    @property
    def helpers(self) -> int:
        """Helper processes still taking pieces."""
        return self._running_helpers

    def submit(self, function: Callable[..., T], /, *args: Any, **kwargs: Any) -> Pending[T]:
        """Queue ``function(*args, **kwargs)``; without helpers, compute it now."""
        pending: Pending[T] = Pending(self, function, args, kwargs)
        if not self._running_helpers:
            pending._state = _RUNNING_HERE
            pending._run_here()
            return pending
        with self._changed:
            self._queue.append(pending)
            self._changed.notify_all()
        return pending

    def run_queued(self) -> None:
        """Compute here, from the end of the queue, every piece no helper has taken yet.

        A piece that fails keeps its error for :meth:`Pending.result` and the rest go on.
        """
        while True:
            with self._changed:
                if not self._queue:
                    return
                pending = self._queue.pop()
                pending._state = _RUNNING_HERE
            try:
                pending._run_here()
            except Exception as error:  # noqa: BLE001 - raised by result(), in its turn
                pending._error = error
                self._finish(pending, _DONE)

    def _result(self, pending: Pending[T]) -> T:
        with self._changed:
            if pending._state == _QUEUED:
                self._queue.remove(pending)
                pending._state = _RUNNING_HERE
                here = True
            else:
                while pending._state == _SENT:
                    self._changed.wait()
                here = pending._state == _FAILED
                if here:
                    pending._state = _RUNNING_HERE
        if here:
            try:
                pending._run_here()
            except BaseException:
                self._finish(pending, _FAILED)  # asked again, it is computed again
                raise
        for message, category, filename, lineno in pending._warnings:
            # The giving module's own registry: a warning is shown as often as the filters
            # would show it had the piece run here (once per place, under "default").
            module = _loaded_module(filename)
            registry = (
                self._registries.setdefault(filename, {})
                if module is None
                else vars(module).setdefault("__warningregistry__", {})
            )
            warnings.warn_explicit(
                message,
                category,
                filename,
                lineno,
                module=None if module is None else module.__name__,
                registry=registry,
            )
        pending._warnings = []
        value: T = pending._value
        return value

    def _next_for_helper(self, *, wait: bool) -> Pending[Any] | None:
        """The next piece for a helper (None: closing, or none queued and ``wait`` False)."""
        with self._changed:
            while wait and not self._queue and not self._closing:
                self._changed.wait()
            if self._closing or not self._queue:
                return None
            pending = self._queue.popleft()
            pending._state = _SENT
            return pending

    def _finish(self, pending: Pending[Any], state: str, *, from_helper: bool = False) -> None:
        with self._changed:
            pending._state = state
            self.helper_pieces += from_helper
            self._changed.notify_all()

    def _helper_stopped(self) -> None:
        with self._changed:
            self._running_helpers = max(0, self._running_helpers - 1)
            self._changed.notify_all()

    def close(self) -> None:
        """Stop the helpers at once.

        Results are collected before closing, so a helper still at work then is doing
        something nobody waits for (after an error here): it is not waited for. A piece it
        had not finished is computed here if its result is asked for after all.
        """
        with self._changed:
            self._closing = True
            self._changed.notify_all()
        helpers, self._helpers = self._helpers, []
        try:
            for helper in helpers:  # all killed before any is waited for
                helper.kill()
        finally:
            for helper in helpers:
                helper.stop()
            for helper in helpers:
                helper.thread.join(timeout=5)
            with self._changed:
                self._running_helpers = 0

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _loaded_module(filename: str) -> Any:
    """The loaded module defined in ``filename``, or None (warning filters match its name)."""
    for module in list(sys.modules.values()):
        if getattr(module, "__file__", None) == filename:
            return module
    return None


def _serve(requests: IO[bytes], replies: IO[bytes]) -> None:
    """The helper's loop: run each piece it is sent, reply with its value or failure.

    A thread reads the requests as they come, so the parent's writes never wait for a
    piece to finish (it sends the next piece while this one runs).
    """
    import importlib
    import queue

    inbox: queue.SimpleQueue[Any] = queue.SimpleQueue()

    def read() -> None:
        while True:
            try:
                inbox.put(pickle.load(requests))
            except Exception:  # noqa: BLE001 - end of input (or the parent is gone): stop
                inbox.put(None)
                return

    threading.Thread(target=read, name="novabench-requests", daemon=True).start()
    while True:
        message = inbox.get()
        if message is None:
            return
        if message[0] == "preload":
            try:
                for module in message[1]:
                    importlib.import_module(module)
            except Exception as error:  # noqa: BLE001 - the parent does all the work
                _reply(replies, pickle.dumps(("failed", repr(error), [])))
                return
            if not _reply(replies, pickle.dumps(("ready", None, None))):
                return
            continue
        _, function, args, kwargs = message
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                reply: tuple[str, Any, Any] = ("ok", function(*args, **kwargs), None)
            except Exception as error:  # noqa: BLE001 - reported; the parent runs it again
                reply = ("failed", repr(error), [])
        given = [(str(w.message), w.category, w.filename, w.lineno) for w in caught]
        if reply[0] == "ok":
            reply = ("ok", reply[1], given)
        try:
            data = pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as error:  # noqa: BLE001 - an unpicklable value: the parent reruns
            data = pickle.dumps(("failed", repr(error), []), protocol=pickle.HIGHEST_PROTOCOL)
        if not _reply(replies, data):
            return


def _reply(replies: IO[bytes], data: bytes) -> bool:
    """Send ``data`` to the parent; False when the parent has gone (the helper then ends)."""
    try:
        replies.write(data)
        replies.flush()
    except OSError:
        return False
    return True
