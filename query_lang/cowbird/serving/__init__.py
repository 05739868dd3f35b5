"""The service plumbing the node and the front end share, kept out of ``cowbird.core`` so that the
core needs no web framework (FastAPI, Starlette, uvicorn, prometheus_client, pydantic-settings):

- ``problems``: errors as ``application/problem+json``, one set of handlers for both apps;
- ``bodies``: request bodies read whole, within a size and a time limit;
- ``request_log``: one log line per request, and the logging set-up;
- ``metrics``: ``/metrics`` in Prometheus' text format;
- ``config``: settings from a TOML file, the environment and overrides;
- ``server``: running an app with uvicorn, guarded against slow or endless headers;
- ``clock``: the clock node calls, health checks and waits in line are timed on (tests fake it);
- ``asgi``: the base of the pure ASGI middleware (HTTP only, the rest passed through);
- ``started``: what an app makes in its lifespan, asked for before it has started.

It sits between the services (``cowbird.frontend``, ``cowbird.node``, which never import each
other) and the layers below them; nothing under it imports it.
"""
