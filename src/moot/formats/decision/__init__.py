"""The decision format: pinned debaters argue named positions; a judge writes a decision."""

from moot.formats.decision.flow import FORMAT

__all__ = ["FORMAT"]
