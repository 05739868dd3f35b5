"""Everything about one backend node: the store (files), the engines (queries), the service (HTTP)."""
