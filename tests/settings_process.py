"""The settings module read in a process of its own, from an environment the test names: the
database, Redis, cell and Celery variables of the running suite are left out, so that what the
test passes is all the settings see."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LEFT_OUT = ("DATABASE_", "REDIS", "CELL", "CELERY")


def settings_run(script: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`script` (Python that imports gamify.settings) run with `env` and production defaults."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith(LEFT_OUT)}
    environment.update(DEBUG="false", SECRET_KEY="x" * 60, **env)
    return subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
