"""A little web on loopback for Calf's tests: real HTTP (http.server in a thread), each path
answering what the test put there — a page, a status, a redirect, a slow or huge answer."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Answer:
    body: bytes = b""
    status: int = 200
    content_type: str = "text/html; charset=utf-8"
    headers: tuple[tuple[str, str], ...] = ()
    delay: float = 0.0


class LocalWeb:
    def __init__(self) -> None:
        self.pages: dict[str, Answer] = {}
        self.requests: list[str] = []
        web = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                web.requests.append(self.path)
                answer = web.pages.get(self.path.split("?")[0]) or web.pages.get(self.path)
                if answer is None:
                    answer = Answer(b"<html><body>Not found</body></html>", 404)
                if answer.delay:
                    time.sleep(answer.delay)
                self.send_response(answer.status)
                self.send_header("Content-Type", answer.content_type)
                self.send_header("Content-Length", str(len(answer.body)))
                for name, value in answer.headers:
                    self.send_header(name, value)
                self.end_headers()
                try:
                    self.wfile.write(answer.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def page(self, path: str, html: str, **extra: Any) -> str:
        self.pages[path] = Answer(html.encode(extra.pop("encoding", "utf-8")), **extra)
        return f"{self.url}{path}"

    def __enter__(self) -> LocalWeb:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
