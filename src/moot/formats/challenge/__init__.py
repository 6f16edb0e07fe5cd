"""Challenge: a proposer and a challenger argue with evidence; a judge must pick a side."""

from moot.formats.challenge.flow import FORMAT

__all__ = ["FORMAT"]
