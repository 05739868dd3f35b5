"""The FastAPI front end: query checking, fan-out to nodes, merging, export, /ref links.

The public API, imported from here (loaded on first use): ``create_app``, ``FrontendSettings``,
``CorpusConfig``. ``frontend_api.schemas`` holds the response models of the public HTTP API.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cowbird.lazy import lazy_exports

if TYPE_CHECKING:
    from frontend_api.app import create_app
    from frontend_api.settings import CorpusConfig, FrontendSettings

_EXPORTS = {
    "create_app": "frontend_api.app",
    "FrontendSettings": "frontend_api.settings",
    "CorpusConfig": "frontend_api.settings",
}

__all__ = ["CorpusConfig", "FrontendSettings", "create_app"]

__getattr__ = lazy_exports(__name__, _EXPORTS)
