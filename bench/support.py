"""What the in-process benchmarks (notifications, webhooks) share: a free local port, a
scratch PostgreSQL database, and a counting fake service in a subprocess."""

import socket
import subprocess
import sys


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def psql(sql: str) -> None:
    subprocess.run(
        ["psql", "-h", "127.0.0.1", "-U", "postgres", "-d", "postgres", "-qc", sql],
        check=True,
        capture_output=True,
    )


def database_recreate(name: str) -> None:
    psql(f"DROP DATABASE IF EXISTS {name}")
    psql(f"CREATE DATABASE {name}")


class CountingService:
    """A fake service (`script`, Python source taking its port as argv[1]) in a subprocess
    that prints how many requests it received whenever a line arrives on its stdin."""

    def __init__(self, script: str) -> None:
        self.port = free_port()
        self._process = subprocess.Popen(
            [sys.executable, "-c", script, str(self.port)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def count(self) -> int:
        if self._process.stdin is None or self._process.stdout is None:
            raise RuntimeError("the service was started without pipes")
        self._process.stdin.write("count\n")
        self._process.stdin.flush()
        return int(self._process.stdout.readline())

    def stop(self) -> None:
        self._process.terminate()
