"""The FastAPI front end: accounts, query checking, fan-out to nodes, merging, export, /ref links."""
