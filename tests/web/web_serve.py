"""`moot serve` for the web tests: the server in a process of its own on 127.0.0.1, and
Debian's Chromium driven by Playwright, with nothing it may reach but that server.

Run as a script, it takes the docs' screenshot of a finished dry-run debate:

    .venv/bin/python tests/web/web_serve.py docs/serve.png
"""

from __future__ import annotations

import contextlib
import os
import queue
import re
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path(os.environ.get("MOOT_CHROMIUM", "/usr/bin/chromium"))
# Without these Chromium calls Google (updates, sync, field trials, QUIC probes).
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--metrics-recording-only",
    "--no-default-browser-check",
]
URL = re.compile(r"moot serve: (http://127\.0\.0\.1:(\d+)/\?token=(\S+))")


@dataclass
class Served:
    """A running `moot serve`: its URL with the token, and the home it keeps debates in."""

    proc: subprocess.Popen[str]
    url: str
    base: str
    port: int
    token: str
    home: Path
    stderr: list[str] = field(default_factory=list)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        return self.proc.returncode


def serve(home: Path, *args: str, timeout: float = 60, prelude: str = "") -> Served:
    """Start `moot serve --no-browser ARGS` with HOME as its moot home; its URL once bound.
    PRELUDE: Python run in the server's process before moot starts (a scripted model
    changed for a test)."""
    env = {**os.environ, "MOOT_HOME": str(home), "HOME": str(home)}
    start = ["-m", "moot"]
    if prelude:
        start = ["-c", f"{prelude}\nfrom moot.cli import main\nmain()"]
    proc = subprocess.Popen(
        [sys.executable, *start, "serve", "--no-browser", *args],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str | None] = queue.Queue()
    stderr: list[str] = []

    def pump(stream: Any, into: queue.Queue[str | None] | None) -> None:
        for line in stream:
            if into is not None:
                into.put(line)
            else:
                stderr.append(line)
        if into is not None:
            into.put(None)

    threading.Thread(target=pump, args=(proc.stdout, lines), daemon=True).start()
    threading.Thread(target=pump, args=(proc.stderr, None), daemon=True).start()
    while True:
        try:
            line = lines.get(timeout=timeout)
        except queue.Empty:
            proc.kill()
            pytest.fail(f"moot serve printed no URL within {timeout} s: {''.join(stderr)}")
        if line is None:
            proc.wait(timeout=10)
            pytest.fail(f"moot serve exited {proc.returncode}: {''.join(stderr)}")
        if m := URL.search(line):
            url, port, token = m.group(1), int(m.group(2)), m.group(3)
            return Served(proc, url, f"http://127.0.0.1:{port}", port, token, home, stderr)


# -- the browser ---------------------------------------------------------------------------


def playwright_module() -> Any:
    try:
        from playwright import sync_api
    except ImportError:
        pytest.fail("the browser tests need Playwright: pip install -e '.[dev]' (make install)")
    return sync_api


def chromium() -> Path:
    """Debian's Chromium; a machine without it fails the browser tests, naming the package."""
    if not (CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)):
        pytest.fail(
            f"the browser tests need Chromium at {CHROMIUM}: install Debian's `chromium` "
            "package (apt-get install chromium; `make test` does it when run as root)"
        )
    return CHROMIUM


@dataclass
class Browser:
    """One Chromium for a module's tests, every request any page makes recorded."""

    context: Any
    requests: list[str] = field(default_factory=list)

    def page(self) -> Any:
        page = self.context.new_page()
        page.set_default_timeout(30_000)
        return page

    def outside(self, base: str) -> list[str]:
        """The requests that went anywhere but the server at BASE."""
        return [url for url in self.requests if not (url == base or url.startswith(base + "/"))]


@contextlib.contextmanager
def launch() -> Iterator[Browser]:
    """Chromium with a fresh profile, headless, every request of every page recorded."""
    sync_api = playwright_module()
    executable = chromium()
    with tempfile.TemporaryDirectory(prefix="moot-chromium-") as profile:
        with sync_api.sync_playwright() as p:
            context = p.chromium.launch_persistent_context(
                profile,
                executable_path=str(executable),
                headless=True,
                args=CHROMIUM_ARGS,
                viewport={"width": 1280, "height": 900},
                accept_downloads=True,
                service_workers="block",
            )
            browser = Browser(context)
            context.on("request", lambda request: browser.requests.append(request.url))
            try:
                yield browser
            finally:
                context.close()


@contextlib.contextmanager
def browsing(served: Served) -> Iterator[Browser]:
    """`launch`, for the page SERVED serves: on leaving, it fails if any page reached
    beyond that server."""
    with launch() as browser:
        yield browser
        assert browser.outside(served.base) == [], "the page reached beyond the server"


@contextlib.contextmanager
def english_page(browser: Browser, served: Served) -> Iterator[Any]:
    """The page, new, in English (the language kept as chosen); on leaving, a script error
    it raised fails the test."""
    page = browser.page()
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.goto(served.url)
    page.evaluate("localStorage.setItem('moot-language', 'en')")
    page.goto(served.base + "/#/")
    page.reload()  # the address may differ by its hash alone: the page is read again
    page.wait_for_selector("html[lang=en] #debate-form")
    yield page
    page.close()
    assert problems == []


# -- the docs' screenshot -----------------------------------------------------------------

MOTION = "This House Believes That cities should ban cars from their centres"


def screenshot(path: Path) -> None:
    """A dry-run Oxford debate started from the form, shown once it finished."""
    with tempfile.TemporaryDirectory(prefix="moot-screenshot-") as home:
        served = serve(Path(home), "--dry-run")
        try:
            with launch() as browser:
                page = browser.page()
                page.goto(served.url)
                page.fill("textarea[name=motion]", MOTION)
                page.fill("input[name='params.max_rounds']", "3")
                page.click("button[type=submit]")
                page.wait_for_selector(".debate[data-state=finished] .document")
                page.set_viewport_size({"width": 1280, "height": 1000})
                page.evaluate("() => window.scrollTo(0, 0)")
                page.screenshot(path=str(path))
                outside = browser.outside(served.base)
                if outside:
                    raise SystemExit(f"the page reached outside the server: {outside}")
        finally:
            served.stop()


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/serve.png")
    screenshot(target)
    print(target)
