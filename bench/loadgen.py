"""An HTTP load generator: N threads, one keep-alive connection each, closed or open loop.

Closed loop (`run_load`): each thread sends its next request as soon as the previous response
has been read, so the offered load adapts to the server and `concurrency` is the number of
requests in flight. Open loop (`run_load(..., rate=R)`): requests are due at fixed intervals
(R a second, as wrk2 sends), whatever the answers; the next idle thread takes the next due
slot, and a request's latency runs from the moment it was due, not from when it was sent, so
a slow answer that holds up the ones behind it is counted in them too (no coordinated
omission).

Threads share one Python process (and its GIL) with each other, and the whole generator
shares the machine with the server: see bench/README.md for what that means for the figures.

The generator knows nothing about gamify: a case hands every thread a `CaseWorker` that builds
requests and books the responses (see bench/cases.py).
"""

from __future__ import annotations

import http.client
import math
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Protocol


class CaseWorker(Protocol):
    """Per-thread request factory and bookkeeping of one benchmark case."""

    def next_request(self) -> tuple[str, str, bytes | None]:
        """(method, path, body) of the next request."""
        ...

    def record(self, status: int | None, body: bytes) -> None:
        """Book the outcome of the request last built; status None means no response."""
        ...


@dataclass(frozen=True)
class Target:
    host: str
    port: int
    headers: dict[str, str]
    timeout: float = 30.0


@dataclass
class _ThreadLog:
    # (start offset from t0 in s, latency in s, status or None) of every request.
    samples: list[tuple[float, float, int | None]] = field(default_factory=list)
    failures: Counter[str] = field(default_factory=Counter)
    error_bodies: list[str] = field(default_factory=list)
    reconnects: int = 0
    # Open loop: how long after it was due each request was sent, in the order of `samples`.
    delays: list[float] = field(default_factory=list)


@dataclass
class Phase:
    """The timeline of a run, as offsets in seconds from the common start."""

    warmup: float
    duration: float

    @property
    def end(self) -> float:
        return self.warmup + self.duration


MAX_ERROR_BODIES = 5


def _exchange(
    conns: list[http.client.HTTPConnection | None],
    target: Target,
    log: _ThreadLog,
    request: tuple[str, str, bytes | None],
    expected_status: int,
) -> tuple[int | None, bytes]:
    """Send one request on the thread's connection (`conns[0]`, reopened when it was closed)
    and read the whole answer; book failures in `log`. Status None: no answer."""
    method, path, body = request
    status: int | None = None
    data = b""
    conn = conns[0]
    try:
        if conn is None:
            conn = http.client.HTTPConnection(target.host, target.port, timeout=target.timeout)
            log.reconnects += 1
        conn.request(method, path, body=body, headers=target.headers)
        response = conn.getresponse()
        data = response.read()
        status = response.status
        if response.will_close:
            conn.close()
            conn = None
    except (OSError, http.client.HTTPException) as exc:
        log.failures[type(exc).__name__] += 1
        if conn is not None:
            conn.close()
        conn = None
    conns[0] = conn
    if status is not None and status != expected_status:
        log.failures[f"HTTP {status}"] += 1
        example = f"{status} {method} {path}: {data[:300]!r}"
        if len(log.error_bodies) < MAX_ERROR_BODIES and example not in log.error_bodies:
            log.error_bodies.append(example)
    return status, data


def _connect(target: Target) -> list[http.client.HTTPConnection | None]:
    try:
        conn = http.client.HTTPConnection(target.host, target.port, timeout=target.timeout)
        conn.connect()  # connect before the clock starts
    except OSError:
        return [None]  # retried by the first request
    return [conn]


def _close(conns: list[http.client.HTTPConnection | None]) -> None:
    if conns[0] is not None:
        conns[0].close()


def _worker(
    target: Target,
    case_worker: CaseWorker,
    expected_status: int,
    start: threading.Barrier,
    t0_box: list[float],
    phase: Phase,
    stop: threading.Event,
    log: _ThreadLog,
) -> None:
    conns = _connect(target)
    start.wait()
    t0 = t0_box[0]
    deadline = t0 + phase.end
    clock = time.perf_counter
    while not stop.is_set():
        began = clock()
        if began >= deadline:
            break
        request = case_worker.next_request()
        status, data = _exchange(conns, target, log, request, expected_status)
        log.samples.append((began - t0, clock() - began, status))
        case_worker.record(status, data)
    _close(conns)


# --- open loop: a fixed rate ---------------------------------------------------------------

# A request sent more than this after it was due is "late": every connection was busy (or the
# generator itself could not keep up), and its latency includes the wait.
LATE_S = 0.005
# A connection idle longer than this is opened again before its next request is due: the
# server closes idle keep-alive connections (gunicorn's --keep-alive 5 s in the benchmark), and
# at a low rate an idle thread may wait that long for its slot.
IDLE_REOPEN_S = 4.0
REOPEN_AHEAD_S = 0.05
# Slots still unsent this long after the end of the phase are given up (booked as failures),
# so that a server far slower than the rate does not keep the run going.
BACKLOG_LIMIT_S = 5.0


@dataclass(frozen=True)
class Schedule:
    """Slot i is due `i / rate` seconds after the start, whatever happened to the others."""

    rate: float

    def due(self, index: int) -> float:
        return index / self.rate

    def slots_between(self, start: float, end: float) -> int:
        """How many slots are due in [start, end)."""
        return max(0, math.ceil(end * self.rate) - math.ceil(start * self.rate))


class _Slots:
    """The next slot to send, shared by the threads: whichever thread is idle takes it."""

    def __init__(self) -> None:
        self._next = 0
        self._lock = threading.Lock()

    def take(self) -> int:
        with self._lock:
            index, self._next = self._next, self._next + 1
        return index


def _open_worker(
    target: Target,
    case_worker: CaseWorker,
    expected_status: int,
    schedule: Schedule,
    slots: _Slots,
    start: threading.Barrier,
    t0_box: list[float],
    phase: Phase,
    stop: threading.Event,
    log: _ThreadLog,
) -> None:
    conns = _connect(target)
    start.wait()
    t0 = t0_box[0]
    clock = time.perf_counter
    used = t0  # when the connection last carried a request
    while not stop.is_set():
        due = schedule.due(slots.take())
        if due >= phase.end:
            break
        if clock() - t0 > phase.end + BACKLOG_LIMIT_S:
            # Far behind: give the slot up, as a failure whose latency is at least this.
            log.failures["unsent (generator behind)"] += 1
            log.samples.append((due, clock() - t0 - due, None))
            log.delays.append(clock() - t0 - due)
            continue
        request = case_worker.next_request()  # built before it is due
        if t0 + due - used > IDLE_REOPEN_S:
            # Just before it is due, so that the new connection is fresh, and not in the latency.
            _sleep_until(t0 + due - REOPEN_AHEAD_S)
            _close(conns)
            conns = _connect(target)
            log.reconnects += 1
        _sleep_until(t0 + due)
        sent = clock()
        status, data = _exchange(conns, target, log, request, expected_status)
        used = clock()
        # Latency from when the request was due, not from when it could be sent.
        log.samples.append((due, clock() - t0 - due, status))
        log.delays.append(sent - t0 - due)
        case_worker.record(status, data)
    _close(conns)


def open_loop_figures(
    samples: list[tuple[float, float, int | None]],
    delays: list[float],
    phase: Phase,
    rate: float,
) -> dict[str, Any]:
    """The open loop's own figures over the measured window: the rate offered and how many
    requests were sent late, and by how much (the rest is `LoadResult.summary`'s)."""
    window = [
        delay
        for (due, _, _), delay in zip(samples, delays, strict=True)
        if phase.warmup <= due < phase.end
    ]
    ordered = sorted(d * 1000.0 for d in window)
    return {
        "rate_offered": rate,
        "slots_due": Schedule(rate).slots_between(phase.warmup, phase.end),
        "sent": len(window),
        "late": sum(1 for d in window if d > LATE_S),
        "late_threshold_ms": LATE_S * 1000.0,
        "send_delay_ms": {
            "p50": _round(percentile(ordered, 50)),
            "p99": _round(percentile(ordered, 99)),
            "max": _round(ordered[-1] if ordered else None),
        },
    }


@dataclass
class LoadResult:
    phase: Phase
    concurrency: int
    expected_status: int
    samples: list[tuple[float, float, int | None]]
    failures: Counter[str]
    error_bodies: list[str]
    reconnects: int
    interrupted: bool
    rate: float | None = None  # open loop: the fixed rate; None: closed loop
    delays: list[float] = field(default_factory=list)

    def measured(self) -> list[tuple[float, float, int | None]]:
        """Requests started inside the measured window (after warm-up, before the end)."""
        return [s for s in self.samples if self.phase.warmup <= s[0] < self.phase.end]

    def summary(self) -> dict[str, Any]:
        measured = self.measured()
        ok = [s for s in measured if s[2] == self.expected_status]
        errors = len(measured) - len(ok)
        all_errors = sum(1 for s in self.samples if s[2] != self.expected_status)
        latencies = sorted(s[1] * 1000.0 for s in measured)
        duration = self.phase.duration
        per_second = Counter(int(s[0] - self.phase.warmup) for s in ok)
        buckets = [per_second.get(i, 0) for i in range(int(duration))]
        statuses = Counter("none" if s[2] is None else str(s[2]) for s in measured)
        return {
            "requests": len(measured),
            "ok": len(ok),
            "errors": errors,
            "error_rate": errors / len(measured) if measured else 0.0,
            "requests_per_second": round(len(measured) / duration, 2),
            "ok_per_second": round(len(ok) / duration, 2),
            "ok_per_second_min_1s": min(buckets) if buckets else 0,
            "ok_per_second_max_1s": max(buckets) if buckets else 0,
            "per_second": buckets,
            "latency_ms": {
                "mean": _round(sum(latencies) / len(latencies) if latencies else None),
                "p50": _round(percentile(latencies, 50)),
                "p90": _round(percentile(latencies, 90)),
                "p95": _round(percentile(latencies, 95)),
                "p99": _round(percentile(latencies, 99)),
                "max": _round(latencies[-1] if latencies else None),
            },
            "statuses": dict(sorted(statuses.items())),
            "warmup_requests": sum(1 for s in self.samples if s[0] < self.phase.warmup),
            "all_requests": len(self.samples),
            "all_errors": all_errors,
            "all_error_rate": all_errors / len(self.samples) if self.samples else 0.0,
            "failures": dict(self.failures),
            "error_bodies": self.error_bodies,
            "reconnects": self.reconnects,
            "interrupted": self.interrupted,
            **self._open_loop(),
        }

    def _open_loop(self) -> dict[str, Any]:
        if self.rate is None:
            return {}
        return {"open_loop": open_loop_figures(self.samples, self.delays, self.phase, self.rate)}


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def percentile(sorted_values: list[float], p: float) -> float | None:
    """Nearest-rank percentile of an ascending list."""
    if not sorted_values:
        return None
    rank = max(1, math.ceil(p / 100.0 * len(sorted_values)))
    return sorted_values[rank - 1]


def run_load(
    target: Target,
    case_workers: list[CaseWorker],
    expected_status: int,
    phase: Phase,
    on_measure_start: Any = None,
    on_measure_end: Any = None,
    rate: float | None = None,
) -> LoadResult:
    """Drive the target with one thread per case worker for warm-up plus duration seconds:
    in a closed loop, or with `rate` in an open loop at that many requests per second (the
    threads are then the most requests that can be in flight: give enough of them).

    `on_measure_start` and `on_measure_end` are called from the calling thread at the
    boundaries of the measured window (e.g. to sample CPU counters). Ctrl-C stops the threads
    after their current request and returns what was measured so far.
    """
    if rate is not None and not rate > 0:
        raise ValueError(f"the open loop's rate must be positive, not {rate!r}")
    stop = threading.Event()
    start = threading.Barrier(len(case_workers) + 1)
    t0_box = [0.0]
    logs = [_ThreadLog() for _ in case_workers]
    schedule, slots = Schedule(rate or 1.0), _Slots()

    def arguments(cw: CaseWorker, log: _ThreadLog) -> tuple[Any, ...]:
        if rate is None:
            return (target, cw, expected_status, start, t0_box, phase, stop, log)
        return (target, cw, expected_status, schedule, slots, start, t0_box, phase, stop, log)

    threads = [
        threading.Thread(
            target=_worker if rate is None else _open_worker,
            args=arguments(cw, log),
            name=f"load-{index}",
            daemon=True,
        )
        for index, (cw, log) in enumerate(zip(case_workers, logs, strict=True))
    ]
    for thread in threads:
        thread.start()
    interrupted = False
    try:
        t0_box[0] = time.perf_counter()
        start.wait()
        t0 = t0_box[0]
        _sleep_until(t0 + phase.warmup)
        if on_measure_start is not None:
            on_measure_start()
        _sleep_until(t0 + phase.end)
        if on_measure_end is not None:
            on_measure_end()
        for thread in threads:
            thread.join()
    except KeyboardInterrupt:
        interrupted = True
        stop.set()
        for thread in threads:
            thread.join(timeout=target.timeout + 1)
    failures: Counter[str] = Counter()
    for log in logs:
        failures.update(log.failures)
    return LoadResult(
        phase=phase,
        concurrency=len(case_workers),
        expected_status=expected_status,
        samples=[s for log in logs for s in log.samples],
        failures=failures,
        error_bodies=list(dict.fromkeys(b for log in logs for b in log.error_bodies))[
            :MAX_ERROR_BODIES
        ],
        reconnects=sum(log.reconnects for log in logs),
        interrupted=interrupted,
        rate=rate,
        delays=[d for log in logs for d in log.delays],
    )


def _sleep_until(moment: float) -> None:
    while True:
        left = moment - time.perf_counter()
        if left <= 0:
            return
        time.sleep(min(left, 0.5))
