"""moot: structured debates between local language models, fully offline."""

__version__ = "0.1.0"
