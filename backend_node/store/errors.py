"""Errors of the store: each names the file (and line) that caused it, so the CLI can print one line."""

from __future__ import annotations


class StoreError(Exception):
    """Root of every error raised by ``backend_node.store``."""


class RegistryError(StoreError):
    """A registry file is missing, unreadable or malformed."""


class VrtError(StoreError):
    """The VRT input cannot be encoded; the message names file and line."""

    def __init__(self, path: str, line: int, message: str) -> None:
        super().__init__(f"{path}:{line}: {message}" if line > 0 else f"{path}: {message}")
        self.path = path
        self.line = line
        self.reason = message


class CorpusFormatError(StoreError):
    """Corpus data files are missing, truncated or in a format this reader does not handle."""
