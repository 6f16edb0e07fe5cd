"""The documentation: the README is a short doorway whose links lead somewhere, and the site
built from docs/ passes `mkdocs build --strict` and loads nothing from outside, so it works
offline, opened from its folder."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import Cli

ROOT = Path(__file__).parents[1]

# What a page loads by itself, as opposed to a link a reader may follow: scripts, images,
# frames, media (src, srcset, poster), stylesheets, icons, fonts and preloads (<link href>).
_LOADS = re.compile(
    r"""<(?:script|img|iframe|source|video|audio|embed|track|input)\b[^>]*?"""
    r"""\s(?:src|srcset|poster)\s*=\s*["']?\s*((?:https?:)?//[^"'\s>]+)"""
    r"""|<link\b[^>]*?\shref\s*=\s*["']?\s*((?:https?:)?//[^"'\s>]+)"""
    r"""|<object\b[^>]*?\sdata\s*=\s*["']?\s*((?:https?:)?//[^"'\s>]+)""",
    re.IGNORECASE,
)
_CSS_LOADS = re.compile(r"""(?:@import\s+|url\(\s*)["']?\s*((?:https?:)?//[^"')\s]+)""", re.I)


def external_loads(site: Path) -> list[str]:
    """Every place a page or stylesheet of SITE would fetch something from another host."""
    found = []
    for page in sorted(site.rglob("*.html")):
        for match in _LOADS.finditer(page.read_text(encoding="utf-8")):
            found.append(f"{page.relative_to(site)}: {next(filter(None, match.groups()))}")
    for sheet in sorted(site.rglob("*.css")):
        for match in _CSS_LOADS.finditer(sheet.read_text(encoding="utf-8")):
            found.append(f"{sheet.relative_to(site)}: {match.group(1)}")
    return found


def test_the_scan_finds_what_a_page_would_load_and_passes_links(tmp_path: Path) -> None:
    (tmp_path / "a.html").write_text(
        '<a href="https://example.org/read">a link to follow</a>\n'
        '<script src="https://cdn.example/x.js"></script>\n'
        "<link rel=stylesheet href=//fonts.example/css>\n"
        '<img alt="" src="images/local.png">\n',
        encoding="utf-8",
    )
    (tmp_path / "s.css").write_text(
        'body{background:url("data:image/svg+xml;utf8,<svg/>")}'
        "@font-face{src:url(https://fonts.example/f.woff2)}",
        encoding="utf-8",
    )
    assert external_loads(tmp_path) == [
        "a.html: https://cdn.example/x.js",
        "a.html: //fonts.example/css",
        "s.css: https://fonts.example/f.woff2",
    ]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return out


def test_the_site_builds_strictly_and_loads_nothing_from_outside(site: Path) -> None:
    pages = {p.relative_to(site).as_posix() for p in site.rglob("*.html")}
    for page in ("index.html", "getting-started.html", "python.html", "performance.html",
                 "security.html", "architecture.html", "contributing.html",
                 "formats/index.html", "formats/oxford.html"):  # fmt: skip
        assert page in pages
    assert external_loads(site) == []
    assert (site / "search" / "search_index.js").is_file()  # search works from file://
    api = (site / "python.html").read_text(encoding="utf-8")
    for name in ("moot.debate", "moot.Debate", "moot.tournament", "moot.judge",
                 "moot.errors.MootError", "moot.errors.UsageError"):  # fmt: skip
        assert f'id="{name}"' in api, name  # rendered from the docstrings
    assert "<blockquote>" not in api  # a docstring's >>> example is a console block


def test_the_readme_is_a_doorway_whose_links_lead_somewhere() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 150
    assert "make demo" in readme and "make test" in readme
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", readme)
    local = [t for t in targets if not re.match(r"[a-z]+:", t)]
    assert len(local) >= 8  # the docs pages it leads to
    for target in local:
        assert (ROOT / target).exists(), target


def test_the_site_opened_as_files_searches_and_reaches_nothing_else(site: Path) -> None:
    from web_serve import launch

    with launch() as browser:
        page = browser.page()
        problems: list[str] = []
        page.on("pageerror", lambda error: problems.append(str(error)))
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.goto((site / "index.html").as_uri())
        page.keyboard.press("s")  # the search box's shortcut
        page.locator("input.md-search__input").press_sequentially("tournament", delay=20)
        page.wait_for_selector(".md-search-result__item")  # the index, searched by a worker
        assert "Tournaments" in page.locator(".md-search-result").inner_text()
        page.goto((site / "python.html").as_uri())
        page.wait_for_selector("[id='moot.Debate']")
        assert problems == []
        assert browser.requests and all(url.startswith("file://") for url in browser.requests)


def readme_runs() -> list[list[str]]:
    """Each `moot run` command of the README, as its arguments (continuations joined)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8").replace("\\\n", " ")
    commands = []
    for line in readme.splitlines():
        command = line.strip().split("  #", 1)[0]
        if command.startswith("moot run "):
            commands.append(shlex.split(command)[2:])
    return commands


@pytest.mark.real  # the models it names are resolved: the installed tiny models
def test_each_run_the_readme_shows_is_accepted_as_written(cli: Cli, tmp_path: Path) -> None:
    """Run as a dry run: the options, the format and the models named (headers only, from
    the installed models) checked as a real run checks them, scripted models speaking."""
    runs = readme_runs()
    assert len(runs) >= 9 and ["--format", "adversarial"] == runs[7][1:3]
    for n, args in enumerate(runs):
        if any(arg.endswith("=human") for arg in args):
            continue  # a person's seat waits for a person: the guide's practice script runs it
        if "--out" in args:  # written here, not into the working directory
            args[args.index("--out") + 1] = str(tmp_path / f"out{n}")
        else:
            args.append("--no-save")
        done = cli("run", *args, "--dry-run", "--quiet")
        assert done.returncode == 0, (args, done.stderr)
