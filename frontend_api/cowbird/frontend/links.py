"""The base of the absolute links the front end writes (exports, citations, the API help page).

``public_url`` when it is configured (as it must be behind a reverse proxy); else the scheme and
host name the request used — a host the ``TrustedHosts`` middleware has let through — with the port
this server listens on, never the port a client put into its ``Host`` header (a link in a download
must not point wherever a client said).
"""

from __future__ import annotations

from fastapi import Request

from cowbird.frontend.state import frontend_state


def public_base(request: Request) -> str:
    configured: str = frontend_state(request).settings.public_url.rstrip("/")
    if configured:
        return configured
    scheme = request.url.scheme
    host = request.url.hostname or "localhost"
    if ":" in host:  # an IPv6 address
        host = f"[{host}]"
    server = request.scope.get("server")
    port = server[1] if server and server[1] else None
    default = {"http": 80, "https": 443}.get(scheme)
    return f"{scheme}://{host}" + (f":{port}" if port and port != default else "")


def ref_path(corpus: str, position: int, end: int | None = None) -> str:
    """The path of a hit's static link: ``/ref/<corpus>/<position>``, with ``?end=<matchend>`` for a
    match longer than one token."""
    return f"/ref/{corpus}/{position}" + (f"?end={end}" if end is not None and end != position else "")
