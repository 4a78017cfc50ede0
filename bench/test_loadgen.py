"""The load generator's own accounting (bench/loadgen.py): nearest-rank percentiles, the open
loop's schedule, and latency counted from when a request was due (no coordinated omission),
against a small HTTP server on 127.0.0.1 in a thread. No database, about 3 s:
`.venv/bin/pytest -n 0 bench/test_loadgen.py`."""

import http.server
import threading
import time
from collections.abc import Iterator
from typing import Any

import loadgen
import pytest
from loadgen import LATE_S, Phase, Schedule, Target, open_loop_figures, percentile, run_load


def test_percentile_is_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]  # 1..100
    assert percentile(values, 50) == 50.0
    assert percentile(values, 99) == 99.0
    assert percentile(values, 100) == 100.0
    assert percentile(values, 0) == 1.0
    assert percentile([7.0], 99) == 7.0
    assert percentile([], 50) is None
    # 10 values: the 99th percentile is the largest (rank ceil(9.9) = 10), the 50th the 5th.
    ten = [float(v) for v in range(10)]
    assert percentile(ten, 99) == 9.0
    assert percentile(ten, 50) == 4.0


def test_schedule_is_fixed_intervals() -> None:
    schedule = Schedule(rate=40.0)
    assert [schedule.due(i) for i in range(4)] == [0.0, 0.025, 0.05, 0.075]
    # Due in [warm-up 1 s, end 3.5 s): slots 40 .. 139.
    assert schedule.slots_between(1.0, 3.5) == 100
    assert Schedule(rate=3.0).slots_between(0.0, 1.0) == 3
    assert Schedule(rate=3.0).slots_between(0.5, 0.5) == 0


def test_open_loop_figures_count_only_the_measured_window() -> None:
    phase = Phase(warmup=1.0, duration=2.0)
    # (due, latency, status) and how long after due each was sent.
    samples: list[tuple[float, float, int | None]] = [
        (0.5, 0.010, 200),  # warm-up: not counted
        (1.0, 0.010, 200),
        (1.5, 0.200, 200),
        (2.0, 0.150, None),
        (3.0, 0.010, 200),  # due at the end: not counted
    ]
    delays = [0.5, 0.001, 0.004, 0.120, 0.9]
    figures = open_loop_figures(samples, delays, phase, rate=2.0)
    assert figures["slots_due"] == 4  # 1.0, 1.5, 2.0, 2.5
    assert figures["sent"] == 3
    assert figures["late"] == 1  # only 0.120 s is above LATE_S
    assert LATE_S == 0.005
    assert figures["send_delay_ms"] == {"p50": 4.0, "p99": 120.0, "max": 120.0}


class _Server(http.server.ThreadingHTTPServer):
    request_queue_size = 64  # the listen backlog: 5 drops connects, which retry 1 s later
    stall_at: float  # the first request after this moment (perf_counter) takes `stall` s
    stall: float
    stalled: bool


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as gunicorn
    timeout = 1.0  # an idle keep-alive connection is closed after this, as gunicorn's 5 s

    def do_GET(self) -> None:
        server: Any = self.server
        with _LOCK:
            stall = not server.stalled and time.perf_counter() >= server.stall_at
            server.stalled |= stall
        if stall:
            time.sleep(server.stall)
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, format: str, *args: Any) -> None:
        pass


_LOCK = threading.Lock()
STALL = 0.5  # one answer takes this long (s)
SLOW = 0.25  # a request slower than this (s) waited for the stall


def _slow(result: Any) -> list[tuple[float, float, int | None]]:
    return [s for s in result.measured() if s[1] > SLOW]


@pytest.fixture
def server() -> Iterator[_Server]:
    httpd = _Server(("127.0.0.1", 0), _Handler)
    httpd.stall_at, httpd.stall, httpd.stalled = float("inf"), 0.0, False
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


class _Worker:
    def __init__(self) -> None:
        self.answers = 0

    def next_request(self) -> tuple[str, str, bytes | None]:
        return "GET", "/", None

    def record(self, status: int | None, body: bytes) -> None:
        self.answers += status == 200


def _run(server: _Server, connections: int, rate: float | None, stall_after: float) -> Any:
    server.stall_at, server.stall = time.perf_counter() + stall_after, STALL
    target = Target("127.0.0.1", server.server_address[1], {}, timeout=5.0)
    workers = [_Worker() for _ in range(connections)]
    result = run_load(target, workers, 200, Phase(warmup=0.0, duration=1.0), rate=rate)
    return result, workers


def test_open_loop_counts_the_wait_behind_a_slow_answer(server: _Server) -> None:
    # One connection at 50/s; one answer takes 500 ms: the ~25 requests due meanwhile are sent
    # late, and each one's latency includes its wait.
    result, workers = _run(server, connections=1, rate=50.0, stall_after=0.3)
    summary = result.summary()
    assert summary["open_loop"]["slots_due"] == 50
    assert summary["requests"] == 50 == summary["ok"]
    assert sum(w.answers for w in workers) == 50
    assert len(_slow(result)) >= 10
    assert summary["open_loop"]["late"] >= 10
    assert summary["latency_ms"]["max"] >= STALL * 1000 - 10
    assert summary["latency_ms"]["p99"] >= STALL * 1000 * 0.8


def test_closed_loop_hides_that_wait(server: _Server) -> None:
    # The same stall in a closed loop is one slow sample: the requests it held up were never
    # sent, so no sample shows their wait (coordinated omission: why the open loop exists).
    result, _ = _run(server, connections=1, rate=None, stall_after=0.3)
    assert 1 <= len(_slow(result)) <= 2  # 2: a busy machine's own hiccup
    assert "open_loop" not in result.summary()


def test_open_loop_with_spare_connections_is_not_held_up(server: _Server) -> None:
    # With 8 connections the stall holds one of them; the others keep the schedule.
    result, _ = _run(server, connections=8, rate=50.0, stall_after=0.3)
    summary = result.summary()
    assert summary["requests"] == 50 == summary["ok"]
    assert 1 <= len(_slow(result)) <= 2
    assert summary["ok_per_second"] == 50.0


def test_open_loop_reopens_a_connection_idle_longer_than_the_server_keeps_it(
    server: _Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 2 connections at 1/s: each carries a request every 2 s, and the server closes a
    # connection idle for 1 s. Reopened before they are due, every request is answered.
    monkeypatch.setattr(loadgen, "IDLE_REOPEN_S", 0.8)
    target = Target("127.0.0.1", server.server_address[1], {}, timeout=5.0)
    result = run_load(target, [_Worker() for _ in range(2)], 200, Phase(0.0, 4.0), rate=1.0)
    summary = result.summary()
    assert summary["requests"] == 4 == summary["ok"], summary["failures"]
    assert summary["reconnects"] >= 2


def test_open_loop_rate_must_be_positive(server: _Server) -> None:
    with pytest.raises(ValueError, match="positive"):
        _run(server, connections=1, rate=0.0, stall_after=0.3)
