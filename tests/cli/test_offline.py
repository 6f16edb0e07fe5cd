"""Offline means offline: moot commands open no socket to anything but loopback.

Each command runs in a fresh interpreter under a Python audit hook that records every
`socket.connect` (and name lookup) and fails the run on any non-loopback address. The
environment keeps HF_HUB_OFFLINE unset, so nothing relies on the hub library's own switch.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REAL_HOME

HOOK = r"""
import ipaddress, json, os, sys
seen = []
def allowed(host):
    if isinstance(host, str) and host in ("localhost",):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
def hook(event, args):
    if event == "socket.connect":
        addr = args[1]
        host = addr[0] if isinstance(addr, tuple) else str(addr)
        if isinstance(addr, tuple) and not allowed(host):
            seen.append(str(addr))
    elif event == "socket.getaddrinfo":
        if not allowed(args[0]):
            seen.append("lookup:" + str(args[0]))
sys.addaudithook(hook)
import atexit
atexit.register(lambda: open(os.environ["NET_LOG"], "w").write(json.dumps(seen)))
sys.argv = ["moot"] + json.loads(os.environ["MOOT_ARGS"])
from moot.cli import main
main()
"""


def run_audited(
    args: list[str], tmp_path: Path, *, timeout: float = 900
) -> tuple[subprocess.CompletedProcess[str], list]:
    """moot ARGS under the audit hook; the connections it saw."""
    log = tmp_path / "net.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env.update(MOOT_HOME=str(REAL_HOME), NET_LOG=str(log), MOOT_ARGS=json.dumps(args))
    proc = subprocess.run([sys.executable, "-c", HOOK], capture_output=True, text=True,
                          env=env, timeout=timeout)  # fmt: skip
    return proc, json.loads(log.read_text()) if log.exists() else ["no log written"]


@pytest.mark.parametrize(
    "args",
    [["--help"], ["models", "list"],
     pytest.param(["models", "info", "smollm2-135m"], marks=pytest.mark.real),
     pytest.param(["models", "verify", "smollm2-135m"], marks=pytest.mark.real)],
)  # fmt: skip
def test_model_commands_open_no_connection(args: list[str], tmp_path: Path) -> None:
    proc, seen = run_audited(args, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert seen == []


FORMATS = {
    "decision": ["Postgres vs SQLite for a small app", "--format", "decision", "--yes",
                 "--preset", "quick"],
    "challenge": ["Should we rewrite the billing service in Rust?", "--format", "challenge",
                  "--rounds", "1"],
    "adversarial": ["Is nuclear power safer per TWh than wind?", "--format", "adversarial",
                    "--model", "smollm2-135m", "--model", "smollm2-135m", "--rounds", "1"],
}  # fmt: skip


# An Oxford debate is audited where one is played already: the uninterrupted run of
# tests/engine/test_resume.py's SIGKILL test goes through `run_audited`.
@pytest.mark.real
@pytest.mark.parametrize("name", list(FORMATS))
def test_every_other_format_opens_no_connection(name: str, tmp_path: Path) -> None:
    args = ["run", *FORMATS[name], "--max-tokens", "16", "--seed", "2", "--quiet",
            "--out", str(tmp_path / "out")]  # fmt: skip
    proc, seen = run_audited(args, tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert seen == []
    assert (tmp_path / "out" / "transcript.json").exists()
