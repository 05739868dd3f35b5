"""Errors of the store: each names the file (and line) that caused it, so the CLI can print one line.

They are ``CowbirdError``s: a store failure while a node serves a query is a server-side problem
(``500``, code ``corpus_data``) unless it is the client's, such as asking for an attribute the corpus
does not have (``cowbird.errors.UnknownAttribute``, which the store raises too).
"""

from __future__ import annotations

from cowbird.errors import CowbirdError


class StoreError(CowbirdError):
    """Root of every error raised by ``backend_node.store`` about its files."""

    code, title = "corpus_data", "The corpus data cannot be read"


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


class ManifestError(StoreError):
    """A corpus manifest is missing, unreadable, incomplete or of an unknown format version."""
