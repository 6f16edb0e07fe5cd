"""Adversarial review: models answer, revise against each other, audited by a judge."""

from moot.formats.adversarial.flow import FORMAT

__all__ = ["FORMAT"]
