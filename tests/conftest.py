"""Shared fixtures: a private moot home per test, the real tiny models, and `moot` itself."""

from __future__ import annotations

import contextlib
import io
import os
import signal
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from subprocess import DEVNULL, PIPE, Popen

import pytest

REPO = Path(__file__).resolve().parents[1]  # the repository: its docs, benchmarks, fixtures

# The document set the evidence tests read (`documents`): a module of its own, as a second
# conftest.py would be the `conftest` that other test modules import their helpers from.
pytest_plugins = ["evidence_documents"]

# A run started in the background by a shell without job control (`make test &`) inherits
# SIGINT ignored, and so would every moot it starts: the tests that press Ctrl-C on a moot
# need it delivered as at a terminal, so the children start with the default again.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# The real models live in the user's moot home (installed by `make install`); remember it
# before any test points MOOT_HOME elsewhere.
REAL_HOME = Path(
    os.environ.get("MOOT_HOME")
    or Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "moot"
)


@pytest.fixture
def moot_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty, private moot data directory for one test."""
    home = tmp_path / "moot-home"
    monkeypatch.setenv("MOOT_HOME", str(home))
    return home


def real_model_path(model_id: str) -> Path:
    """Path of an installed tiny model; fails (never skips) when `make install` has not run."""
    folder = REAL_HOME / "models" / model_id
    files = sorted(folder.glob("*.gguf")) if folder.is_dir() else []
    if not files:
        pytest.fail(f"model {model_id} is not installed in {folder}: run `make install`")
    return files[0]


# -- running the command line ------------------------------------------------------------

Env = Mapping[str, str | None]


@dataclass(frozen=True)
class Result:
    """What one `moot` command did; named as subprocess.CompletedProcess names them."""

    returncode: int
    stdout: str
    stderr: str


class Cli:
    """Runs `moot ARGS`: in this process by calling `moot.cli.main`, or as a process of its own.

    The same arguments everywhere: `home` is the moot home for the command (MOOT_HOME, and
    HOME too, so nothing of the user's own is used); `env` adds variables, None removes one.
    """

    def __call__(self, *args: str, home: Path | None = None, env: Env | None = None) -> Result:
        """`moot ARGS` in this process: stdin is empty and not a terminal; main() exits, the
        exit status is caught."""
        out, err = io.StringIO(), io.StringIO()
        code: int | str | None = 0
        with pytest.MonkeyPatch.context() as mp:
            # Plain text, as through a pipe, whatever the terminal that started pytest forces.
            for forcing in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):
                mp.delenv(forcing, raising=False)
            for key, value in _env(home, env).items():
                if value is None:
                    mp.delenv(key, raising=False)
                else:
                    mp.setenv(key, value)
            from moot.cli import main  # first imported here: its consoles see this environment

            mp.setattr(sys, "argv", ["moot", *args])
            mp.setattr(sys, "stdin", io.StringIO(""))
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    main()
                except SystemExit as done:
                    code = done.code
        if isinstance(code, str):  # sys.exit("message"), as Python reports it
            err.write(code + "\n")
            code = 1
        return Result(code or 0, out.getvalue(), err.getvalue())

    def subprocess(
        self,
        *args: str,
        home: Path | None = None,
        env: Env | None = None,
        clean: bool = False,
        cwd: Path | None = None,
        timeout: float = 120,
    ) -> Result:
        """`python -m moot ARGS` as its own process, stdin from /dev/null. With `clean`, the
        process has PATH=/usr/bin:/bin and HOME, and no other variable of this environment."""
        proc = subprocess.run(
            [sys.executable, "-m", "moot", *args],
            env=_process_env(home, env, clean),
            stdin=DEVNULL,
            capture_output=True,
            text=True,
            cwd=cwd,
            timeout=timeout,
            check=False,
        )
        return Result(proc.returncode, proc.stdout, proc.stderr)

    def popen(
        self, *args: str, home: Path | None = None, env: Env | None = None, stdin: int | None = None
    ) -> Popen[str]:
        """`python -m moot ARGS` started and left running, for signals, kills and terminals;
        stdin from /dev/null unless given, stdout and stderr piped."""
        return Popen(
            [sys.executable, "-m", "moot", *args],
            env=_process_env(home, env, clean=False),
            stdin=DEVNULL if stdin is None else stdin,
            stdout=PIPE,
            stderr=PIPE,
            text=True,
        )

    def at_a_terminal(self, home: Path, typed: str, *args: str) -> tuple[int, str, str]:
        """`moot run ARGS` as its own process with a terminal for stdin, TYPED typed into it."""
        import pty

        main, tty = pty.openpty()
        try:
            proc = self.popen("run", *args, home=home, stdin=tty)
            os.write(main, typed.encode())
            out, err = proc.communicate(timeout=120)
        finally:
            os.close(tty)
            os.close(main)
        return proc.returncode, out, err


def _env(home: Path | None, env: Env | None) -> dict[str, str | None]:
    changes: dict[str, str | None] = {}
    if home is not None:
        changes |= {"MOOT_HOME": str(home), "HOME": str(home)}
    return changes | dict(env or {})


def _process_env(home: Path | None, env: Env | None, clean: bool) -> dict[str, str]:
    base = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/")} if clean else os.environ
    merged: dict[str, str | None] = {**base, **_env(home, env)}
    return {k: v for k, v in merged.items() if v is not None}


@pytest.fixture
def cli() -> Cli:
    """`cli("run", "motion", "--dry-run", home=...)` in this process; `cli.subprocess(...)`
    and `cli.popen(...)` where a test needs a real process."""
    return Cli()


@pytest.fixture
def dry_models(tmp_path: Path) -> tuple[str, str]:
    """Two small valid GGUF files, no weights: what a dry run that names models can resolve."""
    from gguf_samples import write_gguf

    template = "{% for m in messages %}{{ m.content }}{% endfor %}"
    return tuple(  # type: ignore[return-value]
        str(write_gguf(tmp_path / "models" / f"{n}.gguf", name=n, chat_template=template))
        for n in ("a", "b")
    )


@pytest.fixture
def any_model_name(monkeypatch: pytest.MonkeyPatch) -> None:
    """Model names that need no file, in this process: for tests of what a dry-run tournament
    does with its names, not of how a reference is checked (every name passes the check)."""
    from moot import models

    monkeypatch.setattr(models, "check", lambda ref: None)
