"""The native CQP engine: compile the CQP AST, plan, evaluate over the store, present hits."""

from backend_node.engines.native.engine import NativeEngine

__all__ = ["NativeEngine"]
