"""Many simulator episodes through one local model at once, in lockstep rounds.

    outputs = backend.chat_batch([ChatRequest(messages, tools, max_tokens=160), ...])
    results = play_in_lockstep(jobs, backend, workers=8)    # jobs: callables taking a backend
    outputs = answer_each(backend, requests)                 # single turns (IFEval, BFCL)

A small model on a CPU spends most of a greedy answer on per-token overhead, not arithmetic:
on one core a decoding step of `toy-long` costs 2.3 ms for one sequence and 4.4 ms for eight
rows. Answering several episodes' turns in one `generate` call therefore plays a suite faster
(1.7x on T1 at 8 with a trained model: docs/evaluation.md, "Batched cases");
`TransformersBackend(..., batch_size=8)` asks for it and
`hat_core.evaluation.cases.play_cases` does it.

**Lockstep, so that results do not depend on timing.** Each job (one case: an episode and its
verdict) runs in a worker thread, and its `chat` calls go to a `Lockstep`. A round starts only
when every worker that still has work is waiting for an answer; its requests go to
`chat_batch` in job order. What a round holds is therefore fixed by the jobs alone (which
cases are in progress, and each one's next turn), never by thread scheduling, so two runs on
one machine give the same answers. A batch is not bit-identical to answering each request
alone (left padding and other matrix shapes change floating-point rounding), so a greedy
answer can differ where two tokens were nearly tied; `batch_size=1` keeps the one-at-a-time
path exactly.

A worker between two jobs counts as busy: it takes its next job before the round can start,
so a case that starts while others run joins the very next round. A job that raises stops the
others at their next turn (`LockstepAborted`) and is raised again to the caller; so does an
interrupt of the caller while it waits (Ctrl+C).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from hat_core.inference.protocol import AssistantOutput

T = TypeVar("T")


@dataclass(frozen=True)
class ChatRequest:
    """One `chat` call's inputs (see `InferenceBackend.chat`)."""

    messages: list[dict]
    tools: list[dict] | None = None
    max_tokens: int = 512
    allowed_tools: list[dict] | None = None


class BatchBackend(Protocol):
    """A backend that answers several chat requests in one call, in order."""

    name: str
    constrain_tools: bool

    def chat_batch(self, requests: Sequence[ChatRequest]) -> list[AssistantOutput]: ...


class LockstepAborted(RuntimeError):
    """Another job of the same lockstep run failed; this one stops too."""


def batch_size_of(backend: object) -> int:
    """How many requests `backend` answers at once (1 when it has no `chat_batch`)."""
    if not callable(getattr(backend, "chat_batch", None)):
        return 1
    return max(int(getattr(backend, "batch_size", 1) or 1), 1)


def answer_each(backend, requests: Sequence[ChatRequest], *,
                on_answer: Callable[[int], None] | None = None) -> list[AssistantOutput]:
    """Every request's answer, in order: `batch_size_of(backend)` at a time through
    `chat_batch`, else one `chat` at a time (any `InferenceBackend`). Independent single turns
    need no lockstep. `on_answer(done)` after each batch (each answer when unbatched)."""
    size, out = batch_size_of(backend), []
    for start in range(0, len(requests), size):
        chunk = requests[start:start + size]
        if size > 1:
            out += backend.chat_batch(chunk)
        else:
            r = chunk[0]
            extra = {"allowed_tools": r.allowed_tools} if r.allowed_tools else {}
            out.append(backend.chat(r.messages, r.tools, max_tokens=r.max_tokens, **extra))
        if on_answer is not None:
            on_answer(len(out))
    return out


class Lockstep:
    """The `chat` of `workers` threads, answered in rounds by `backend.chat_batch`.

    Workers call `chat` (with their job's position set by `working_on`) and `retire` when they
    find no more work. The thread whose arrival completes a round runs the batch itself."""

    def __init__(self, backend: BatchBackend, workers: int):
        self.backend, self.name = backend, getattr(backend, "name", "batch")
        self.constrain_tools = getattr(backend, "constrain_tools", False)
        self._cond = threading.Condition()
        self._busy = workers  # workers with a job in hand or about to take one
        self._waiting: dict[int, ChatRequest] = {}  # job position -> its pending request
        self._answers: dict[int, AssistantOutput] = {}
        self._error: BaseException | None = None
        self._local = threading.local()

    def working_on(self, position: int) -> None:
        """The calling worker's job is the `position`-th (the order of a round's batch)."""
        self._local.position = position

    def chat(self, messages: list[dict], tools: list[dict] | None = None, *,
             max_tokens: int = 512, temperature: float = 0.0,
             allowed_tools: list[dict] | None = None) -> AssistantOutput:
        """Greedy like the backend (`temperature` is ignored); waits for its round."""
        position = self._local.position
        with self._cond:
            self._check()
            self._waiting[position] = ChatRequest(messages, tools, max_tokens, allowed_tools)
            self._maybe_run_round()
            while position not in self._answers:
                self._check()
                self._cond.wait()
            return self._answers.pop(position)

    def retire(self) -> None:
        """The calling worker has no more jobs: rounds no longer wait for it."""
        with self._cond:
            self._busy -= 1
            if self._error is None:
                self._maybe_run_round()

    def fail(self, error: BaseException) -> None:
        """A job raised: wake every waiting worker with `LockstepAborted`."""
        with self._cond:
            if self._error is None:
                self._error = error
            self._cond.notify_all()

    def _check(self) -> None:
        if self._error is not None:
            raise LockstepAborted("another case of this batch failed") from self._error

    def _maybe_run_round(self) -> None:
        # Called with the condition held. A round runs when every busy worker waits.
        if not self._waiting or len(self._waiting) < self._busy:
            return
        order = sorted(self._waiting)
        batch = [self._waiting.pop(p) for p in order]
        try:
            outputs = self.backend.chat_batch(batch)
        except BaseException as exc:
            self._error = exc
            self._cond.notify_all()
            raise
        if len(outputs) != len(batch):
            raise RuntimeError(f"chat_batch answered {len(outputs)} of {len(batch)} requests")
        self._answers.update(zip(order, outputs, strict=True))
        self._cond.notify_all()


def play_in_lockstep(jobs: Sequence[Callable[[Lockstep], T]], backend: BatchBackend, *,
                     workers: int, on_done: Callable[[int, T], None] | None = None) -> list[T]:
    """Run every job (a callable given the `Lockstep` to use as its backend) on `workers`
    threads, their chat turns answered together; the results in job order. `on_done(i,
    result)` is called after each job, one call at a time."""
    workers = max(1, min(workers, len(jobs)))
    if not jobs:
        return []
    lock = Lockstep(backend, workers)
    results: list = [None] * len(jobs)
    taken = iter(range(len(jobs)))
    take_lock, done_lock = threading.Lock(), threading.Lock()
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            while True:
                with take_lock:
                    i = next(taken, None)
                if i is None:
                    return
                lock.working_on(i)
                results[i] = jobs[i](lock)
                if on_done is not None:
                    with done_lock:
                        on_done(i, results[i])
        except BaseException as exc:  # noqa: BLE001 - handed to the caller below
            errors.append(exc)
            lock.fail(exc)
        finally:
            lock.retire()

    threads = [threading.Thread(target=worker, name=f"lockstep-{n}", daemon=True)
               for n in range(workers)]
    for t in threads:
        t.start()
    try:
        for t in threads:
            t.join()
    except BaseException as exc:  # Ctrl+C while waiting: the workers stop at their next turn
        lock.fail(exc)
        raise
    if errors:
        first = next((e for e in errors if not isinstance(e, LockstepAborted)), errors[0])
        raise first
    return results
