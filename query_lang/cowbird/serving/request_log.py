"""One log line per request, on the node and on the front end, as text or JSON.

``RequestLog`` (ASGI middleware) writes method, path (its query string without secrets: the value
of a ``token=`` parameter never reaches the log, nor that of any parameter whose name looks like a
secret's, in any case or spelling — ``Token``, ``access_token``, ``api_key``, ``password``, ...),
status, duration, who asked (``user`` or ``anonymous``),
the corpus or partition, and the number of hits when the route recorded them in
``request.state`` (``log_corpus``, ``log_hits``, ``log_user``). ``configure`` sets the level and
the format (``--log-level``, ``--log-format``) for both services; the front end's fan-out logs one
structured line per node call (node, partition, ms, status) on ``cowbird.fanout``.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import time
from typing import Any, Literal
from urllib.parse import parse_qsl, urlencode

import click
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from cowbird.serving.asgi import HttpMiddleware, hands_over
from cowbird.serving.metrics import Metrics

REQUESTS = logging.getLogger("cowbird.requests")
LOG_LEVEL = click.option("--log-level", type=click.Choice(["debug", "info", "warning", "error"]), default="info",
                         show_default=True, help="Request log and messages at this level and above.")
LOG_FORMAT = click.option("--log-format", type=click.Choice(["text", "json"]), default="text", show_default=True,
                          help="One line of text or one JSON object per log entry.")

SECRET_PARAMETERS = frozenset({"token", "password", "csrf"})
# A parameter name is squashed (lower case, letters and digits only: "Access-Token" -> "accesstoken");
# it is a secret's when it holds one of these stems, or is one of the short names, or ends in "key".
_SECRET_STEMS = re.compile(r"token|secret|passw|pwd|passphrase|csrf|xsrf|session|cookie|auth|credential|"
                           r"signature|bearer|jwt|apikey|privatekey|otp")
_SECRET_NAMES = frozenset({"key", "pass", "sig", "sid", "pin", "code", "hmac"})
_PUBLIC_PARAMETERS = frozenset({"tokens"})  # a node's context size: a count, not a secret
LogFormat = Literal["text", "json"]


class _Formatter(logging.Formatter):
    def __init__(self, style: LogFormat) -> None:
        super().__init__()
        self.style = style

    def format(self, record: logging.LogRecord) -> str:
        fields: dict[str, Any] = getattr(record, "fields", {})
        if self.style == "json":
            entry = {"time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S"), "level": record.levelname.lower(),
                     "logger": record.name, "message": record.getMessage(), **fields}
            if record.exc_info:
                entry["exception"] = self.formatException(record.exc_info)
            return json.dumps(entry, ensure_ascii=False)
        text = f"{self.formatTime(record, '%Y-%m-%d %H:%M:%S')} {record.levelname.lower()} {record.name}: " \
               f"{record.getMessage()}"
        if fields:
            text += " " + " ".join(f"{k}={v}" for k, v in fields.items() if k not in ("method", "path", "status"))
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        return text


def configure(level: str = "info", style: LogFormat = "text") -> None:
    """Log cowbird's lines to stderr at ``level`` in ``style``."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_Formatter(style))
    root = logging.getLogger("cowbird")
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    root.propagate = False


def safe_path(scope: Scope) -> str:
    """The path with its query string, secret parameters' values left out."""
    path: str = scope.get("path", "")
    query = scope.get("query_string", b"").decode("latin-1")
    if not query:
        return path
    pairs = [(k, "…" if is_secret(k) else v) for k, v in parse_qsl(query, keep_blank_values=True)]
    return f"{path}?{urlencode(pairs)}"


def is_secret(name: str) -> bool:
    """Whether a query parameter of this name may carry a secret (its value is not logged): the
    known ones, and any misspelling or other tool's name for one (``Token``, ``access_token``,
    ``apiKey``, ``client_secret``, ``passwd``, ``key``)."""
    squashed = re.sub(r"[^0-9a-z]", "", name.casefold())
    if name in SECRET_PARAMETERS:
        return True
    if squashed in _PUBLIC_PARAMETERS:
        return False
    return (bool(_SECRET_STEMS.search(squashed)) or squashed in _SECRET_NAMES or squashed.endswith("key")
            or not squashed)


class RequestLog(HttpMiddleware):
    def __init__(self, app: ASGIApp, service: str, metrics: Metrics | None = None) -> None:
        super().__init__(app)
        self.service = service
        self.metrics = metrics

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = time.perf_counter()
        status = 500
        handed = False

        async def record(message: Message) -> None:
            nonlocal status, handed
            if message["type"] == "http.response.start":
                status = int(message["status"])
                handed = hands_over(message)
            await send(message)

        if self.metrics is not None:
            self.metrics.running.labels(self.service).inc()
        try:
            await self.app(scope, receive, record)
        finally:
            if self.metrics is not None:
                self.metrics.running.labels(self.service).dec()
            if not handed:  # a hand-over is not an answer: the background process answers it, and logs it
                if self.metrics is not None:
                    route = self.metrics.route(scope)
                    self.metrics.requests.labels(self.service, route, str(status)).inc()
                    self.metrics.latency.labels(self.service, route).observe(time.perf_counter() - started)
                if REQUESTS.isEnabledFor(logging.INFO):
                    state = scope.get("state", {})
                    fields = {"service": self.service, "method": scope.get("method", ""), "path": safe_path(scope),
                              "status": status, "ms": round((time.perf_counter() - started) * 1000, 1),
                              "user": state.get("log_user") or "anonymous"}
                    for key in ("corpus", "partition", "hits"):
                        if state.get(f"log_{key}") is not None:
                            fields[key] = state[f"log_{key}"]
                    REQUESTS.info("%s %s %s", fields["method"], fields["path"], status, extra={"fields": fields})
