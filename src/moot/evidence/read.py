"""A document's text as paragraphs, each with its page or section: Markdown, plain text,
HTML, PDF (pdfminer.six) and DOCX (python-docx). Nothing here opens a connection; the PDF
and DOCX libraries are imported when a file of theirs is read."""

from __future__ import annotations

import io
import logging
import re
from html.parser import HTMLParser

from moot.errors import Phrase

# Paragraphs as readers give them: (page or section, its heading, text).
Paragraph = tuple[str, str, str]

# The kinds read, by a file's suffix (lower-case).
KINDS = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".text": "text",
    ".html": "html",
    ".htm": "html",
    ".pdf": "pdf",
    ".docx": "docx",
}
# A DOCX is a zip: one that would unpack to more than this is refused before it is
# unpacked (a zip bomb of a few megabytes can hold gigabytes of XML).
DOCX_UNPACKED_LIMIT = 512 * 1024 * 1024
# A PDF of more pages is refused after counting them, before its layout is read (about
# 30 ms of CPU a page: a minute at this limit).
PDF_PAGE_LIMIT = 2000
# Bumped whenever a reader's output changes, so cached paragraphs are read again.
READER_VERSION = 1


class Unreadable(Exception):
    """A file that cannot be read as its kind; `reason` says why, in words of its own."""

    def __init__(self, reason: Phrase) -> None:
        super().__init__(str(reason))
        self.reason = reason


def paragraphs(data: bytes, *, kind: str, name: str) -> list[Paragraph]:
    """The paragraphs of DATA, a file of KIND called NAME."""
    if kind == "pdf":
        return _pdf(data, name)
    if kind == "docx":
        return _docx(data, name)
    text = _text(data, name)
    if kind == "markdown":
        return _markdown(text)
    if kind == "html":
        return _html(text)
    return [("", "", block) for block in _blocks(text)]


def _text(data: bytes, name: str) -> str:
    if b"\x00" in data[:8192]:
        raise Unreadable(Phrase("evidence.skipped.binary", file=name))
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise Unreadable(Phrase("evidence.skipped.binary", file=name)) from None


def _blocks(text: str) -> list[str]:
    return [b for b in re.split(r"\n\s*\n", text.replace("\r\n", "\n")) if b.strip()]


_HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")


def _markdown(text: str) -> list[Paragraph]:
    """Blank-line paragraphs; each ATX heading (`#`…`######`) opens section §n."""
    out: list[Paragraph] = []
    where, heading = "", ""
    block: list[str] = []
    section, fenced = 0, False

    def flush() -> None:
        if any(line.strip() for line in block):
            out.append((where, heading, "\n".join(block)))
        block.clear()

    for line in text.replace("\r\n", "\n").split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
        m = None if fenced else _HEADING.match(line)
        if m:
            flush()
            section += 1
            where, heading = f"§{section}", m.group(2)
        elif not line.strip() and not fenced:
            flush()
        else:
            block.append(line)
    flush()
    return out


class _HtmlText(HTMLParser):
    """An HTML page's text: a paragraph per block element, a section per heading."""

    BLOCKS = frozenset(
        "p div li td th tr pre blockquote section article header footer dd dt br hr "
        "table ul ol dl figcaption caption main aside nav form".split()
    )
    HEADINGS = frozenset("h1 h2 h3 h4 h5 h6".split())
    SKIPPED = frozenset("script style noscript template head svg math".split())

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[Paragraph] = []
        self.where, self.heading = "", ""
        self.section = 0
        self.skipping = 0
        self.in_heading = False
        self.buffer: list[str] = []

    def _flush(self) -> None:
        text = "".join(self.buffer).strip()
        self.buffer.clear()
        if not text:
            return
        if self.in_heading:
            self.section += 1
            self.where, self.heading = f"§{self.section}", " ".join(text.split())
        else:
            self.out.append((self.where, self.heading, text))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.SKIPPED:
            self.skipping += 1
        elif tag in self.HEADINGS:
            self._flush()
            self.in_heading = True
        elif tag in self.BLOCKS:
            self._flush()

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIPPED:
            self.skipping = max(0, self.skipping - 1)
        elif tag in self.HEADINGS:
            self._flush()
            self.in_heading = False
        elif tag in self.BLOCKS:
            self._flush()

    def handle_data(self, data: str) -> None:
        if not self.skipping:
            self.buffer.append(data)


def _html(text: str) -> list[Paragraph]:
    parser = _HtmlText()
    parser.feed(text)
    parser.close()
    parser._flush()
    return parser.out


def _pdf(data: bytes, name: str) -> list[Paragraph]:
    """Each page's text boxes (pdfminer's layout analysis groups a paragraph's lines into
    one box), page by page: `p.1`, `p.2`, …"""
    from pdfminer.high_level import extract_pages
    from pdfminer.layout import LTTextContainer
    from pdfminer.pdfdocument import PDFEncryptionError, PDFPasswordIncorrect
    from pdfminer.pdfpage import PDFPage

    # pdfminer logs what it forgives in a PDF (a missing CropBox); library code says
    # nothing on the terminal, and a damaged file is reported by the exception below.
    logging.getLogger("pdfminer").setLevel(logging.ERROR)
    out: list[Paragraph] = []
    try:
        pages = sum(1 for _ in PDFPage.get_pages(io.BytesIO(data)))
        if pages > PDF_PAGE_LIMIT:
            too_many = Phrase(
                "evidence.skipped.too_many_pages", file=name, pages=pages, limit=PDF_PAGE_LIMIT
            )
            raise Unreadable(too_many)
        for number, page in enumerate(extract_pages(io.BytesIO(data)), start=1):
            for element in page:
                if isinstance(element, LTTextContainer):
                    out.append((f"p.{number}", "", element.get_text()))
    except Unreadable:
        raise
    except (PDFPasswordIncorrect, PDFEncryptionError):
        raise Unreadable(Phrase("evidence.skipped.encrypted", file=name)) from None
    except Exception as exc:  # a damaged PDF fails in many ways, each said in one line
        raise Unreadable(
            Phrase("evidence.skipped.damaged", file=name, kind="PDF", why=_why(exc))
        ) from None
    return out


def _docx(data: bytes, name: str) -> list[Paragraph]:
    """Paragraphs and table rows in order; a paragraph styled as a heading (or the title)
    opens section §n."""
    import zipfile

    import docx
    from docx.table import Table

    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            unpacked = sum(entry.file_size for entry in archive.infolist())
        if unpacked > DOCX_UNPACKED_LIMIT:
            raise Unreadable(
                Phrase(
                    "evidence.skipped.too_big", file=name, size=unpacked, limit=DOCX_UNPACKED_LIMIT
                )  # fmt: skip
            )
        document = docx.Document(io.BytesIO(data))
        out: list[Paragraph] = []
        where, heading, section = "", "", 0
        for block in document.iter_inner_content():
            if isinstance(block, Table):
                for row in block.rows:
                    cells = [c.text.strip() for c in row.cells]
                    out.append((where, heading, " | ".join(_unique(cells))))
                continue
            style = (block.style.name if block.style is not None else "") or ""
            if style.startswith(("Heading", "Title")) and block.text.strip():
                section += 1
                where, heading = f"§{section}", " ".join(block.text.split())
            else:
                out.append((where, heading, block.text))
    except Unreadable:
        raise
    except Exception as exc:  # not a zip, no document part, broken XML: one line
        raise Unreadable(
            Phrase("evidence.skipped.damaged", file=name, kind="DOCX", why=_why(exc))
        ) from None
    return out


def _unique(cells: list[str]) -> list[str]:
    """A row's cells, a merged cell (python-docx repeats it) once."""
    out: list[str] = []
    for cell in cells:
        if cell and (not out or out[-1] != cell):
            out.append(cell)
    return out


def _why(exc: Exception) -> str:
    said = " ".join(str(exc).split())[:120]
    return f"{type(exc).__name__}: {said}" if said else type(exc).__name__
