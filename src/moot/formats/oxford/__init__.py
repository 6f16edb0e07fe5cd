"""Oxford Union debate: speeches, points of information, a devil's advocate, a chair, a judge."""

from moot.formats.oxford.flow import FORMAT

__all__ = ["FORMAT"]
