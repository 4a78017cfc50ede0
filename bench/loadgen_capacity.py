"""How well the open loop keeps its schedule, and what it costs, on its own: the generator
(bench/loadgen.py) at fixed rates against a trivial HTTP server in another process (a
200 "ok" to every GET), so that its lateness and its CPU per request are the generator's.

`.venv/bin/python bench/loadgen_capacity.py [--rates 70 200 500] [--duration 5]
[--connections 32]` prints, per rate: answered/s, latency p50/p99/max from when due, requests
sent late and the send delay, and the generator's CPU (cores and ms per request).
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time

from loadgen import Phase, Target, run_load

SERVER = """
import http.server

class Ok(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args):
        pass

http.server.ThreadingHTTPServer.request_queue_size = 128
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Ok)
print(server.server_address[1], flush=True)
server.serve_forever()
"""


class _Get:
    def next_request(self) -> tuple[str, str, bytes | None]:
        return "GET", "/", None

    def record(self, status: int | None, body: bytes) -> None:
        pass


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rates", type=float, nargs="+", default=[70.0, 200.0, 500.0])
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--connections", type=int, default=32)
    args = parser.parse_args()
    server = subprocess.Popen([sys.executable, "-c", SERVER], stdout=subprocess.PIPE, text=True)
    try:
        port = int(server.stdout.readline()) if server.stdout else 0
        print("rate/s  answered/s  p50 ms  p99 ms  max ms  late  send delay p99/max ms  cpu")
        for rate in args.rates:
            before, started = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
            result = run_load(
                Target("127.0.0.1", port, {}),
                [_Get() for _ in range(args.connections)],
                200,
                Phase(warmup=0.0, duration=args.duration),
                rate=rate,
            )
            after, wall = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter() - started
            cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
            summary = result.summary()
            latency, fixed = summary["latency_ms"], summary["open_loop"]
            print(
                f"{rate:>6g}  {summary['ok_per_second']:>10.1f}  {latency['p50']:>6.2f}  "
                f"{latency['p99']:>6.2f}  {latency['max']:>6.2f}  {fixed['late']:>4}  "
                f"{fixed['send_delay_ms']['p99']:>9.2f} / {fixed['send_delay_ms']['max']:<8.2f}  "
                f"{cpu / wall:.2f} cores, {1000 * cpu / max(1, summary['ok']):.2f} ms/request"
            )
    finally:
        server.terminate()
        server.wait(timeout=5)
    return 0


if __name__ == "__main__":
    sys.exit(main())
