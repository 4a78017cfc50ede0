"""A real Redis Cluster for the rank-store tests (tests/leaderboards/test_ranks_cluster.py): six
`redis-server` processes on loopback ports (3 masters, 3 replicas), started once per test
session and stopped after it, or the cluster named by TEST_REDIS_CLUSTER_URL (CI's topology
script starts its own)."""

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

# Each xdist worker (gw0, gw1, ...) starts its own cluster, from ports of its own.
_WORKER = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0)
BASE_PORT = int(os.environ.get("TEST_REDIS_CLUSTER_BASE_PORT", "7100")) + 30 * _WORKER
NODES = 6
REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
REDIS_CLI = shutil.which("redis-cli") or "/usr/bin/redis-cli"
# Short, so that a killed master's replica is promoted within a couple of seconds.
NODE_TIMEOUT_MS = 1000


@dataclass
class Node:
    port: int
    process: subprocess.Popen[bytes] | None = None
    command: list[str] = field(default_factory=list)

    def start(self) -> None:
        self.process = subprocess.Popen(
            self.command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )

    def kill(self) -> None:
        assert self.process is not None
        self.process.kill()
        self.process.wait(5)

    def cli(self, *args: str, timeout: float = 10) -> str:
        return subprocess.run(
            [REDIS_CLI, "-h", "127.0.0.1", "-p", str(self.port), *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        ).stdout


@dataclass
class Cluster:
    """The cluster under test: its URL (LEADERBOARD_RANKS_REDIS_URL) and, when this session
    started it, its processes (a test may kill one)."""

    url: str
    nodes: list[Node] = field(default_factory=list)

    @property
    def own(self) -> bool:
        return bool(self.nodes)

    def node(self, port: int) -> Node:
        return next(n for n in self.nodes if n.port == port)

    def alive(self) -> list[Node]:
        return cluster_alive(self.nodes)

    def roles(self) -> dict[int, tuple[str, str]]:
        """port -> (role 'master'/'slave', the node id of its master or '-'), as a live node
        sees it."""
        for node in self.alive():
            lines = node.cli("cluster", "nodes").splitlines()
            if lines:
                found = {}
                for line in lines:
                    parts = line.split()
                    port = int(parts[1].split("@")[0].rsplit(":", 1)[1])
                    flags = parts[2]
                    role = "master" if "master" in flags else "slave"
                    if "fail" in flags.replace("fail?", ""):
                        role = "failed"
                    found[port] = (role, parts[3])
                return found
        return {}

    def url_ports(self) -> list[int]:
        """The ports of the startup nodes the URL names (a cluster on loopback)."""
        nodes = self.url.split("://", 1)[1].split("@")[-1].split("/")[0]
        return [int(node.rsplit(":", 1)[1]) for node in nodes.split(",")]

    def restart(self, node: Node) -> None:
        """Start a killed node again: it rejoins, as a replica of the master that replaced it;
        returns once every node sees three masters and three replicas."""
        node.start()
        self.wait_whole()

    def wait_whole(self, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while sorted(r for r, _ in self.roles().values()) != ["master"] * 3 + ["slave"] * 3:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the Redis Cluster is not whole: {self.roles()}")
            time.sleep(0.1)
        self.wait_ok()

    def wait_ok(self, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            alive = self.alive() or [Node(port) for port in self.url_ports()]
            if all("cluster_state:ok" in n.cli("cluster", "info") for n in alive):
                return
            time.sleep(0.1)
        raise RuntimeError("the Redis Cluster did not reach cluster_state:ok")


def _free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _ports() -> list[int]:
    """Six ports from BASE_PORT up whose cluster bus ports (+10000) are free too."""
    for base in range(BASE_PORT, BASE_PORT + 30, NODES):
        ports = list(range(base, base + NODES))
        if all(_free(p) and _free(p + 10000) for p in ports):
            return ports
    raise RuntimeError("no free ports for a test Redis Cluster")


def cluster_alive(nodes: list[Node]) -> list[Node]:
    return [n for n in nodes if n.process is not None and n.process.poll() is None]


def available() -> bool:
    return bool(os.environ.get("TEST_REDIS_CLUSTER_URL")) or (
        shutil.which("redis-server") is not None and shutil.which("redis-cli") is not None
    )


def started() -> Iterator[Cluster]:
    """The session's cluster (a generator for a session fixture)."""
    url = os.environ.get("TEST_REDIS_CLUSTER_URL")
    if url:
        yield Cluster(url)
        return
    workdir = tempfile.mkdtemp(prefix="gamify-redis-cluster-")
    nodes = [Node(port) for port in _ports()]
    try:
        for node in nodes:
            directory = os.path.join(workdir, str(node.port))
            os.makedirs(directory)
            node.command = [
                REDIS_SERVER,
                "--port", str(node.port),
                "--bind", "127.0.0.1",
                "--cluster-enabled", "yes",
                "--cluster-config-file", os.path.join(directory, "nodes.conf"),
                "--cluster-node-timeout", str(NODE_TIMEOUT_MS),
                # A replica whose master died is promoted however long it was cut off.
                "--cluster-replica-validity-factor", "0",
                "--dir", directory,
                "--save", "",
                "--appendonly", "no",
                "--logfile", os.path.join(directory, "redis.log"),
            ]  # fmt: skip
            node.start()
        deadline = time.monotonic() + 10
        while not all("PONG" in n.cli("ping") for n in nodes):
            if time.monotonic() > deadline or len(cluster_alive(nodes)) < len(nodes):
                raise RuntimeError("the Redis Cluster's nodes did not start")
            time.sleep(0.05)
        created = subprocess.run(
            [
                REDIS_CLI, "--cluster", "create",
                *[f"127.0.0.1:{n.port}" for n in nodes],
                "--cluster-replicas", "1", "--cluster-yes",
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )  # fmt: skip
        if created.returncode != 0:
            raise RuntimeError(f"redis-cli --cluster create failed: {created.stdout}")
        cluster = Cluster(
            "redis+cluster://" + ",".join(f"127.0.0.1:{n.port}" for n in nodes[:3]), nodes
        )
        # Every node must know every other's role before the tests start (a replica not yet
        # attached would not be promoted).
        cluster.wait_whole()
        yield cluster
    finally:
        for node in nodes:
            if node.process is not None and node.process.poll() is None:
                node.process.terminate()
        for node in nodes:
            if node.process is not None:
                try:
                    node.process.wait(5)
                except subprocess.TimeoutExpired:
                    node.process.kill()
                    node.process.wait(5)
        shutil.rmtree(workdir, ignore_errors=True)
