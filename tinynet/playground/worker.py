"""The playground's trainer: one process beside the server that trains the page's studies, one
at a time, in the order they came, with the library's :func:`~tinynet.xor.run_study`.

Training runs in its own process so that the server answers at once whatever a study does:
the generic kernels hold Python's lock while a chunk runs, and a compile holds it for
seconds. The process keeps its compiled kernels between studies, so a layout pays its
compile once per server (and once per machine, through numba's cache).

A seed of a study watched (:mod:`~tinynet.playground.watch`) is a job like a study, trained
by the same process. Every job has an id, counting up. Each Train (or watch) cancels every
earlier job (:meth:`Trainer.submit`) and Stop cancels one (:meth:`Trainer.stop`): the trainer
checks between chunks of training, about once a second, and once more before it reports a
job done; a cancelled job's results are never reported, so two studies' results cannot mix.
A kernel that is compiling is not waited for: a compiling job is cancelled at once, and the
compile finishes in the background, for the next job, which waits for it. A study that
trains longer than :data:`MAX_SECONDS` is stopped and fails with a message.
"""

from __future__ import annotations

import json
import multiprocessing
import signal
import threading
import time
from dataclasses import dataclass, field

from ..compiled.sources import compiling_told_to
from ..xor import run_study
from ..xor.imports import import_user_modules
from ..xor.report import finite_or_none
from .form import MAX_PAGE_BYTES, Form
from .payload import study_payload
from .watch import Watch, watch_payload

__all__ = ["Cancelled", "TooLong", "TooLarge", "Job", "Trainer", "ACTIVE", "KEPT_RESULTS",
           "MAX_SECONDS", "train_studies"]

ACTIVE = ("queued", "running", "compiling")
"""The states of a study that has not finished and is not being cancelled."""

KEPT_RESULTS = 4
"""How many finished studies' results the server keeps for the page (and its downloads)."""


MAX_SECONDS = 300
"""The longest a study may train: it is stopped, between chunks, after this many seconds."""


class Cancelled(Exception):
    """Raised between chunks of a study that was cancelled."""


class TooLong(Exception):
    """Raised between chunks of a study that has run past :data:`MAX_SECONDS`."""


class TooLarge(Exception):
    """Raised after a study whose page data is larger than :data:`~.form.MAX_PAGE_BYTES`
    (the form refuses a study estimated larger; this checks the estimate)."""


@dataclass
class Job:
    """A study the page asked for (``kind`` "study"), or a seed of one watched ("watch"): how
    many ``arms`` and ``epochs`` it has, the trainer process it went to (its
    ``generation``), its ``state`` (queued, running, compiling, cancelling, done, cancelled,
    failed, expired), which arm is training and how many epochs it has done, what is
    compiling and since when, what was left compiling in the background when it was stopped
    (``background``), the error's message, and when done the page's data as JSON.

    Not the form: that holds the drawn data set, which goes to the trainer process and no
    further; a job keeps only what its status and its results need."""

    id: int
    arms: int
    epochs: int
    generation: int
    state: str = "queued"
    arm: int = 0
    epochs_done: int = 0
    compiling: str | None = None
    compiling_since: float | None = None
    usually: str | None = None  # how long it should take (tinynet.compiled.notices.estimate)
    error: str | None = None
    seconds: float | None = None
    started: float = field(default_factory=time.monotonic)
    result: bytes | None = field(default=None, repr=False)
    kind: str = "study"
    background: str | None = None

    def status(self) -> dict:
        """The job as the page polls it (no result: that has its own address)."""
        compiling = None
        if self.compiling is not None and self.state == "compiling":
            compiling = {"what": self.compiling, "usually": self.usually,
                         "seconds": time.monotonic() - self.compiling_since}
        return {"id": self.id, "state": self.state, "arm": self.arm,
                "arms": self.arms, "epochs_done": self.epochs_done, "epochs": self.epochs,
                "compiling": compiling, "error": self.error, "seconds": self.seconds,
                "kind": self.kind, "background": self.background}


def train_studies(connection, cancelled) -> None:
    """The trainer process: receive ``(id, request)`` (a :class:`~.form.Form` to study, or a
    :class:`~.watch.Watch` of one seed), train, and send back what happens:
    ``("running", id, None)``, ``("compiling", id, (what, usually))``, ``("progress", id, (arm,
    epochs))``, then ``("done", id, JSON bytes)``, ``("cancelled", id, None)`` or
    ``("failed", id, message)``. A study stops when ``cancelled.value >= id``, and after
    :data:`MAX_SECONDS`; it fails if its page data is over :data:`~.form.MAX_PAGE_BYTES`."""
    sending = threading.Lock()

    def send(*message) -> None:
        with sending:
            connection.send(message)

    while True:
        try:
            job_id, request = connection.recv()
        except (EOFError, OSError):  # the server has gone
            return
        if cancelled.value >= job_id:
            send("cancelled", job_id, None)
            continue
        started = time.monotonic()

        def on_chunk(arm: int, done: int) -> None:
            if cancelled.value >= job_id:
                raise Cancelled
            if time.monotonic() - started > MAX_SECONDS:
                raise TooLong(f"the study ran past the playground's limit of {MAX_SECONDS} s "
                              f"and was stopped at epoch {done:,} of arm {'AB'[arm]}; use "
                              "fewer seeds, epochs or samples")
            send("progress", job_id, (arm, done))

        send("running", job_id, None)
        try:
            with compiling_told_to(lambda what, usually: send("compiling", job_id,
                                                               (what, usually))):
                payload = _payload(request, on_chunk)
            text = json.dumps(finite_or_none(payload), separators=(",", ":"))
            if len(text) > MAX_PAGE_BYTES:  # the form's estimate checked, not trusted
                raise TooLarge(f"the page's data came out at {len(text):,} bytes, above the "
                               f"playground's limit of {MAX_PAGE_BYTES:,}; use fewer seeds "
                               "or narrower layers")
            if cancelled.value >= job_id:  # stopped after its last chunk
                raise Cancelled
            send("done", job_id, text.encode())
        except Cancelled:
            send("cancelled", job_id, None)
        except (TooLong, TooLarge) as error:
            send("failed", job_id, str(error))
        except Exception as error:  # shown on the page; the trainer goes on
            send("failed", job_id, f"{type(error).__name__}: {' '.join(str(error).split())}")


def _payload(request: Form | Watch, on_chunk) -> dict:
    """The page's data of ``request``: a study of a form, or one seed watched; ``on_chunk(arm,
    epochs_done)`` after each chunk of training."""
    if isinstance(request, Watch):
        return watch_payload(request, on_chunk)
    many = request.setup.task.classification  # evaluated on the test set
    study = run_study(request.arms, request.setup, progress=False,
                      record_every=request.record_every, on_chunk=on_chunk,
                      evaluate_every=request.record_every if many else None)
    return study_payload(study, request.fields, request.record_every)


def _trainer_process(connection, cancelled, modules: tuple[str, ...] = ()) -> None:
    """The trainer process's entry: the server's ``--import`` modules imported, as the
    server imported them (a new process knows only the built-in definitions, and a study
    names the user's), then :func:`train_studies`, deaf to Ctrl-C (the server stops this
    process itself)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    import_user_modules(modules)
    train_studies(connection, cancelled)


def _cancel(job: Job) -> None:
    """Mark ``job``, whose id the trainer process has been told is cancelled, as cancelled
    at once if it is compiling (the compile goes on in the background: ``background`` says
    what), else as cancelling until its current chunk ends."""
    if job.state == "compiling":
        job.state, job.background = "cancelled", job.compiling
        job.seconds = time.monotonic() - job.started
    else:
        job.state = "cancelling"


class Trainer:
    """The trainer process and the server's view of its jobs. Thread-safe. A trainer process
    that has died (killed for its memory, say) fails its studies with a message, and the next
    study starts a new one."""

    def __init__(self, modules: tuple[str, ...] = ()) -> None:
        """``modules``: the ``--import`` arguments, imported by every trainer process before
        it trains (:func:`tinynet.xor.imports.import_user_modules`)."""
        self._modules = tuple(modules)
        self._lock = threading.Lock()      # the jobs and the process
        self._sending = threading.Lock()   # the pipe to the process, held apart from _lock
        self._jobs: dict[int, Job] = {}
        self._next_id = 1
        self._generation = 0  # how many trainer processes have been started
        self._start()

    def _start(self) -> None:
        """Start a trainer process and the thread that reads what it sends."""
        self._generation += 1
        context = multiprocessing.get_context("spawn")  # a fork would copy the server's threads
        self._connection, child = context.Pipe()
        self._cancelled = context.Value("q", self._next_id - 1, lock=False)  # ids <= it stop
        self._process = context.Process(target=_trainer_process,
                                        args=(child, self._cancelled, self._modules),
                                        name="tinynet-playground-trainer", daemon=True)
        self._process.start()
        child.close()
        threading.Thread(target=self._read,
                         args=(self._connection, self._process, self._generation),
                         name="trainer-reader", daemon=True).start()

    def submit(self, request: Form | Watch) -> Job:
        """Queue ``request``, a study of a form or a seed of one watched, cancelling every
        earlier job. The request (and its data set) goes to the trainer process; the job keeps
        only its size."""
        form = request.form if isinstance(request, Watch) else request
        with self._lock:
            if not self._process.is_alive():
                self._start()
            job = Job(self._next_id, len(form.arms), form.setup.epochs, self._generation,
                      kind="watch" if isinstance(request, Watch) else "study")
            self._next_id += 1
            self._jobs[job.id] = job
            self._cancelled.value = job.id - 1
            for earlier in self._jobs.values():
                if earlier.id < job.id and earlier.state in ACTIVE:
                    _cancel(earlier)
            connection = self._connection
        with self._sending:  # outside _lock: a full pipe must not stop the reader
            try:
                connection.send((job.id, request))
            except OSError:  # the process died just now: its reader fails the job
                pass
        return job

    def stop(self, job_id: int) -> Job | None:
        """Cancel study ``job_id`` (and every earlier one) if it has not finished. One that is
        compiling a kernel is cancelled at once: the compile goes on in the trainer process
        (numba cannot stop it) and caches the kernel for the next study, which waits for it;
        the job says so (``background``). Any other stops after its current chunk."""
        with self._lock:
            job = self._jobs.get(job_id)
            if job is not None and job.state in ACTIVE:
                self._cancelled.value = max(self._cancelled.value, job_id)
                _cancel(job)
            return job

    def job(self, job_id: int) -> Job | None:
        """Study ``job_id``, or None if there is none."""
        with self._lock:
            return self._jobs.get(job_id)

    def close(self) -> None:
        """Stop the trainer process."""
        with self._lock:
            self._connection.close()
            self._process.terminate()
            self._process.join(5)

    def _read(self, connection, process, generation: int) -> None:
        """Apply what trainer process ``generation`` sends; when it has gone, fail its
        unfinished studies (not those already sent to a process started since)."""
        while True:
            try:
                kind, job_id, value = connection.recv()
            except (EOFError, OSError):  # the process has gone
                process.join(5)
                with self._lock:
                    for job in self._jobs.values():
                        if job.generation == generation and job.state in (*ACTIVE,
                                                                            "cancelling"):
                            job.state = "failed"
                            job.error = (f"the trainer process stopped (exit code "
                                         f"{process.exitcode}); Train starts a new one")
                return
            with self._lock:
                self._update(self._jobs[job_id], kind, value)

    def _update(self, job: Job, kind: str, value: object) -> None:
        """Apply one message of the trainer's (see :func:`train_studies`) to ``job``. A study
        being cancelled stays so until it ends, and if it ends done, it counts as cancelled."""
        if job.state == "cancelled":  # stopped while compiling: over for the page already
            return
        cancelling = job.state == "cancelling"
        if kind == "running":
            job.started = time.monotonic()
        elif kind == "compiling":
            (job.compiling, job.usually), job.compiling_since = value, time.monotonic()
        elif kind == "progress":
            job.arm, job.epochs_done = value
            kind = "running"
        else:  # the end: done, cancelled or failed
            job.seconds = time.monotonic() - job.started
            if kind == "done" and cancelling:
                kind = "cancelled"
            elif kind == "done":
                job.result = value
                self._expire()
            elif kind == "failed":
                job.error = value
            cancelling = False
        job.state = "cancelling" if cancelling else kind

    def _expire(self) -> None:
        """Keep the results of the last :data:`KEPT_RESULTS` finished studies, and as many
        watched seeds (a seed watched does not push out the study it came from)."""
        for kind in ("study", "watch"):
            done = [job for job in self._jobs.values()
                    if job.result is not None and job.kind == kind]
            for job in done[:-KEPT_RESULTS]:
                job.result, job.state = None, "expired"
