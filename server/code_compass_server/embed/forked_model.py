"""A one-shot search's query model, loaded in a forked child while the parent opens the index.

Loading the model (the tokenizer, ONNX Runtime and a session: about 0.1 s of CPU) is the
longest step of a cold `code-compass search`, and a thread cannot overlap it with the index
check and the lexical search: the load holds the GIL for most of its time. A child forked at
the start loads it on the other core instead and then embeds the texts the parent sends it
(the query as the searcher renders it for each project: a Portuguese question's cognates are
only known once the index is open), one at a time, until the parent closes the pipe.

Only where that is safe and pays: Linux (fork without exec), a process with one thread (a
fork copies only the calling thread; locks held by the others would stay held), the model's
files present (the child never builds it). Anything else, or a child that fails, dies or
answers for another model, and the parent loads the model itself as before: the child can
only save time, never change a result.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import struct
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from code_compass_server.constants import EMBED_DIMS

if TYPE_CHECKING:
    import numpy as np

FORKED_MODEL_WAIT_S = 60.0  # the longest wait for the child's load or one of its vectors
_SIZE = struct.Struct("<I")  # every message is its length, then its bytes


class ForkedModelFailed(RuntimeError):
    """The child cannot answer (it failed, died, was late or is of another model)."""


class ForkedModel:
    """The parent's end: `embed_query` as an `Embedder` has it, answered by the child."""

    def __init__(self, pid: int, to_child: int, from_child: int, model_id: str) -> None:
        self.pid = pid
        self.model_id = model_id  # the id the parent peeked; the child must say the same
        self.dims = EMBED_DIMS
        self._to: int | None = to_child
        self._from: int | None = from_child
        self._ready = False
        self.failure = ""  # why the child could not answer, for the log and the tests

    @classmethod
    def start(cls, storage: Path) -> ForkedModel | None:
        """Fork the child, or None where that is not safe or cannot work."""
        if not sys.platform.startswith("linux") or _threads() > 1:
            return None
        try:
            from code_compass_server.embed.model_id import model_id_at
            from code_compass_server.embed.paths import default_model_dir

            model_dir = default_model_dir()
            model_id = model_id_at(model_dir, sha_stamp=storage / "model.sha256")
        except Exception:  # not built (or no manifest): the parent's own load says why
            return None
        # Both sides need numpy (the child's model, the parent's vector store): imported once,
        # here, so a machine without a free core pays only for the fork itself.
        import numpy  # noqa: F401

        if _threads() > 1:  # numpy's import may start native threads (OPENBLAS_NUM_THREADS)
            return None
        down_r, down_w = os.pipe()
        up_r, up_w = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            for fd in (down_r, down_w, up_r, up_w):
                os.close(fd)
            return None
        if pid == 0:
            os.close(down_w)
            os.close(up_r)
            _child(down_r, up_w, model_dir, storage)
        os.close(down_r)
        os.close(up_w)
        return cls(pid, down_w, up_r, model_id)

    def usable(self, timeout: float = FORKED_MODEL_WAIT_S) -> bool:
        """Whether the child loaded the model the parent expects (waits for its load)."""
        if not self._ready and self._from is not None:
            try:
                header = json.loads(self._receive(timeout))
                if "error" in header:
                    raise ForkedModelFailed(str(header["error"]))
                if header.get("modelId") != self.model_id:
                    raise ForkedModelFailed(f"the child loaded {header.get('modelId')}")
                self._ready = True
            except (ForkedModelFailed, ValueError) as exc:
                self._fail(str(exc))
        return self._ready

    def embed_query(self, text: str) -> np.ndarray:
        """float32 [dims] for one query, from the child; ForkedModelFailed if it cannot."""
        import numpy as np

        if not self.usable() or self._to is None:
            raise ForkedModelFailed(self.failure or "the child is closed")
        try:
            _send(self._to, text.encode("utf-8", "surrogatepass"))
            vec = np.frombuffer(self._receive(FORKED_MODEL_WAIT_S), dtype="<f4")
        except (OSError, ForkedModelFailed) as exc:
            raise self._fail(str(exc)) from exc
        if vec.shape != (self.dims,):
            raise self._fail(f"a vector of {vec.shape} from the child")
        return vec.astype(np.float32)

    def _fail(self, reason: str) -> ForkedModelFailed:
        """Remember why, end the child: the caller loads the model itself from now on."""
        self.failure = reason
        self.close()
        return ForkedModelFailed(reason)

    def _receive(self, timeout: float) -> bytes:
        if self._from is None:
            raise ForkedModelFailed("the child is closed")
        message = _read_message(self._from, timeout)
        if message is None:
            raise ForkedModelFailed("the child exited without an answer")
        return message

    def close(self) -> None:
        """End the child (it exits when its input closes; killed if it is still loading) and
        reap it: no process outlives the command."""
        for fd in (self._to, self._from):
            if fd is not None:
                os.close(fd)
        self._to = self._from = None
        if self.pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)  # a no-op for one that already exited
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self.pid, 0)
            self.pid = 0


def _threads() -> int:
    """Threads of this process, native ones included (a BLAS pool is not in `threading`)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count() + 1  # unknown: count as unsafe


def _child(requests: int, answers: int, model_dir: Path, storage: Path) -> NoReturn:
    """Load the model, say which, then embed each text received until the input closes; exit
    without the parent's clean-up (its files, buffers and atexit handlers are not ours)."""
    code = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C ends the child with its parent
        # Keep only the two pipes and stderr: the parent's locks, databases and output stay
        # its own (a reader of its stdout sees the end when the parent ends, not the child).
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 0)
        os.dup2(devnull, 1)
        os.close(devnull)
        low, high = sorted((requests, answers))
        os.closerange(3, low)
        os.closerange(low + 1, high)
        os.closerange(high + 1, os.sysconf("SC_OPEN_MAX"))
        try:
            from code_compass_server.embed.model import Embedder

            embedder = Embedder(
                model_dir,
                threads=1,
                sha_stamp=storage / "model.sha256",
                optimized_dir=storage / "model-optimized",
            )
        except Exception as exc:
            _send(answers, json.dumps({"error": str(exc)}).encode())
            os._exit(1)
        _send(answers, json.dumps({"modelId": embedder.model_id}).encode())
        while True:
            text = _read_message(requests)
            if text is None:  # the parent is done (or gone)
                break
            vec = embedder.embed_query(text.decode("utf-8", "surrogatepass"))
            _send(answers, vec.astype("<f4").tobytes())
    except BaseException:  # a closed pipe (the parent is gone), an interrupt: just leave
        code = 1
    finally:
        os._exit(code)


def _send(fd: int, payload: bytes) -> None:
    view = memoryview(_SIZE.pack(len(payload)) + payload)
    while view:
        view = view[os.write(fd, view) :]


def _read_message(fd: int, timeout: float | None = None) -> bytes | None:
    """One message (both ends read them so), or None at the end of the input; with a
    `timeout`, ForkedModelFailed when it has not fully come by then."""
    deadline = None if timeout is None else time.monotonic() + timeout
    head = _read_exactly(fd, _SIZE.size, deadline)
    if head is None:
        return None
    return _read_exactly(fd, _SIZE.unpack(head)[0], deadline)


def _read_exactly(fd: int, size: int, deadline: float | None) -> bytes | None:
    got = bytearray()
    while len(got) < size:
        if deadline is not None:
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                raise ForkedModelFailed("no answer from the child in time")
        chunk = os.read(fd, size - len(got))
        if not chunk:
            return None
        got += chunk
    return bytes(got)
