"""Everything about one backend node: the store (files), the engines (queries), the service (HTTP).

The public API, imported from here (loaded on first use, so that ``cowbird encode`` does not pull in
the web stack): ``create_app``, ``open_engines``, ``NodeSettings``, ``PartitionService``. The
subpackages ``backend_node.store`` and ``backend_node.engines`` export their own APIs, and
``backend_node.schemas`` is the wire contract the front end imports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cowbird.lazy import lazy_exports

if TYPE_CHECKING:
    from backend_node.app import create_app, open_engines
    from backend_node.service import PartitionService
    from backend_node.settings import NodeSettings

_EXPORTS = {
    "create_app": "backend_node.app",
    "open_engines": "backend_node.app",
    "NodeSettings": "backend_node.settings",
    "PartitionService": "backend_node.service",
}

__all__ = ["NodeSettings", "PartitionService", "create_app", "open_engines"]

__getattr__ = lazy_exports(__name__, _EXPORTS)
