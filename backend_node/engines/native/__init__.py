"""The native CQP engine: compile the CQP AST, plan candidate starts, simulate them over the store."""

from backend_node.engines.native.engine import NativeEngine

__all__ = ["NativeEngine"]
