"""The version of moot: a leaf that every module stamping a record may import."""

__version__ = "0.1.0"
