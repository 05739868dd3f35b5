"""Everything about one backend node: the store (files), the engines (queries), the service (HTTP).

The public API, imported from here (loaded on first use, so that ``cowbird encode`` does not pull in
the web stack): ``create_app``, ``open_engines``, ``NodeSettings``, ``PartitionService``. The
subpackages ``cowbird.store`` and ``cowbird.engines`` export their own APIs, and
``cowbird.core.wire`` is the wire contract the front end imports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cowbird.core.lazy import lazy_exports

if TYPE_CHECKING:
    from cowbird.node.app import create_app, open_engines
    from cowbird.node.service import PartitionService
    from cowbird.node.settings import NodeSettings

_EXPORTS = {
    "create_app": "cowbird.node.app",
    "open_engines": "cowbird.node.app",
    "NodeSettings": "cowbird.node.settings",
    "PartitionService": "cowbird.node.service",
}

__all__ = ["NodeSettings", "PartitionService", "create_app", "open_engines"]

__getattr__ = lazy_exports(__name__, _EXPORTS)
