"""The native CQP engine: compile the CQP AST, plan, evaluate over the store, present hits."""
