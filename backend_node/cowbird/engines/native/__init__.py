"""The native CQP engine: compile the CQP AST, plan candidate starts, simulate them over the store."""

from cowbird.engines.native.engine import NativeEngine

__all__ = ["NativeEngine"]
