"""HTTP resources of the node, one module each."""
