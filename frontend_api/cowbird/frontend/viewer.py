"""Who is asking: anonymous, or an approved user (by API token or, later, a browser session)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Viewer:
    """What the access rules need to know about the person behind a request."""

    name: str | None = None  # None: anonymous
    groups: frozenset[str] = field(default_factory=frozenset)
    api_bulk: bool = False  # may export more than the browser limit
    admin: bool = False
    browser: bool = False  # logged in by a browser session (its searches are remembered)

    @property
    def api(self) -> bool:
        """API mode: exports over the browser limit."""
        return self.api_bulk


ANONYMOUS = Viewer()
