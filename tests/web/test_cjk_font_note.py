"""Chinese text needs a CJK font on the machine: the page names the system's own and never
downloads one, and the docs say which package gives it on a bare Debian box."""

from __future__ import annotations

import re

from conftest import REPO

STYLE = REPO / "src" / "moot" / "web" / "static" / "style.css"


def test_the_docs_say_the_page_needs_a_cjk_font_it_never_downloads() -> None:
    page = (REPO / "docs" / "web.md").read_text(encoding="utf-8")
    note = page.split("**Chinese text needs a CJK font", 1)[1].split("\n\n", 2)
    said = " ".join(" ".join(note[:2]).split())
    assert "never downloads one" in said and "sudo apt-get install fonts-noto-cjk" in said
    started = (REPO / "docs" / "getting-started.md").read_text(encoding="utf-8")
    assert "fonts-noto-cjk" in started and "(web.md)" in started
    # What the note says of the page holds: the family fonts-noto-cjk installs is named,
    # and no font is fetched.
    css = STYLE.read_text(encoding="utf-8")
    assert '"Noto Sans CJK SC"' in css and "Noto Sans CJK SC" in said
    assert not re.search(r"@font-face|url\(", css)
