"""A little web on loopback for Calf's tests: real HTTP (http.server in a thread), each path
answering what the test put there — a page, a status, a redirect, a slow, trickling or huge answer;
over TLS with ``certificate`` (a PEM with key and chain)."""

from __future__ import annotations

import ssl
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


@dataclass
class Answer:
    body: bytes = b""
    status: int = 200
    content_type: str = "text/html; charset=utf-8"
    headers: tuple[tuple[str, str], ...] = ()
    delay: float = 0.0
    trickle: float = 0.0  # seconds between the body's bytes, sent one at a time


def send(handler: BaseHTTPRequestHandler, answer: Answer) -> None:
    """One request's answer: after its delay, its status, headers and body (trickled, if it says so);
    a client that went away meanwhile is no error."""
    if answer.delay:
        time.sleep(answer.delay)
    handler.send_response(answer.status)
    handler.send_header("Content-Type", answer.content_type)
    handler.send_header("Content-Length", str(len(answer.body)))
    for name, value in answer.headers:
        handler.send_header(name, value)
    handler.end_headers()
    try:
        if answer.trickle:
            for k in range(len(answer.body)):
                handler.wfile.write(answer.body[k:k + 1])
                handler.wfile.flush()
                time.sleep(answer.trickle)
        else:
            handler.wfile.write(answer.body)
    except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
        pass


class LoopbackServer:
    """An HTTP server on a free loopback port, its requests answered by ``handler``: served in a thread
    while entered (``with``), shut down on leaving."""

    scheme = "http"

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.server.server_address[1]}"

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


class LocalWeb(LoopbackServer):
    def __init__(self, certificate: str | None = None) -> None:
        self.pages: dict[str, Answer] = {}
        self.requests: list[str] = []
        self.hosts: list[str] = []  # the Host header of each request
        web = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                web.requests.append(self.path)
                web.hosts.append(self.headers.get("Host", ""))
                answer = web.pages.get(self.path.split("?")[0]) or web.pages.get(self.path)
                send(self, answer or Answer(b"<html><body>Not found</body></html>", 404))

            def log_message(self, *args: Any) -> None:
                pass

        super().__init__(Handler)
        if certificate is not None:
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            context.load_cert_chain(certificate)
            self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
            self.scheme = "https"

    def page(self, path: str, html: str, **extra: Any) -> str:
        self.pages[path] = Answer(html.encode(extra.pop("encoding", "utf-8")), **extra)
        return f"{self.url}{path}"


SENTENCE = "Nobody has lived there since 1999 ."  # as the corpus has it: tokens and spaces
BEFORE = "We went to the house anyway, because the garden was lovely in spring."
AFTER = "The roof needs repairs and the windows are broken."


def html(body: str, title: str = "A page") -> str:
    nav = "<nav><a href='/'>Home</a> | <a href='/about'>About</a> | <a href='/contact'>Contact</a></nav>"
    return f"<html><head><title>{title}</title></head><body>{nav}<article>{body}</article>" \
           "<footer>© 2024 Example Ltd. All rights reserved.</footer></body></html>"


def article(sentence: str = "Nobody has lived there since 1999.") -> str:
    return html(f"<h1>The old house</h1><p>{BEFORE} {sentence} {AFTER}</p>"
                "<p>Another paragraph with enough words to count as the main text of this page.</p>")
