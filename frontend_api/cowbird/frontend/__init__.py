"""The FastAPI front end: query checking, fan-out to nodes, merging, export, /ref links.

The public API, imported from here (loaded on first use): ``create_app``, ``FrontendSettings``,
``CorpusConfig``. ``cowbird.frontend.schemas`` holds the response models of the public HTTP API.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cowbird.core.lazy import lazy_exports

if TYPE_CHECKING:
    from cowbird.frontend.app import create_app
    from cowbird.frontend.settings import CorpusConfig, FrontendSettings

_EXPORTS = {
    "create_app": "cowbird.frontend.app",
    "FrontendSettings": "cowbird.frontend.settings",
    "CorpusConfig": "cowbird.frontend.settings",
}

__all__ = ["CorpusConfig", "FrontendSettings", "create_app"]

__getattr__ = lazy_exports(__name__, _EXPORTS)
