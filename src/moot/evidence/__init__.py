"""A debate's own documents as evidence: read (Markdown, text, HTML, PDF, DOCX) into
passages with stable ids, indexed locally (BM25), searched within a token budget, and
every citation a speech makes checked against them. Nothing here opens a connection."""

from moot.evidence.citations import Check, Citation, CitationResult, parse
from moot.evidence.library import PASSAGE_TOKENS, Library, open_library, shown
from moot.evidence.passages import Passage, TokenCounter, approx_tokens
from moot.evidence.read import KINDS
from moot.evidence.sources import MAX_BYTES, MAX_FILES, Skipped

__all__ = [
    "KINDS",
    "MAX_BYTES",
    "MAX_FILES",
    "PASSAGE_TOKENS",
    "Check",
    "Citation",
    "CitationResult",
    "Library",
    "Passage",
    "Skipped",
    "TokenCounter",
    "approx_tokens",
    "open_library",
    "parse",
    "shown",
]
