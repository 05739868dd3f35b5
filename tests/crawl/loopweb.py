"""A generated web on loopback addresses for crawl tests: hosts http://127.X.Y.Z:PORT/ (X >= 1).

Deterministic from a seed. Host kinds: good (target-language prose linking mostly to other good hosts),
other (English/French), boilerplate (menus, little text), spam (keyword salad, a link farm), slow (good
prose, 1-3 s a response), trap (calendars, repeated segments, session ids, endless pagination) and hubs
(link to everything). Every host has a robots.txt (Disallow paths, Crawl-delay, some 404, one disallowing
everything). One server process serves all hosts: it listens on 0.0.0.0 on a few ports and tells hosts
apart by the connection's local address and port; every request goes to a JSONL log.
Use only inside a network namespace with only loopback (tests/loopback.py).
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import json
import multiprocessing
import random
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import protego

KINDS = (("good", 0.20), ("other", 0.30), ("boilerplate", 0.10), ("spam", 0.15), ("slow", 0.05),
         ("trap", 0.05), ("hub", 0.15))
"""The kinds of host and their shares: as on the real web, most hosts are not good prose in the target
language (for German, most of the web is in other languages), and hubs link to every kind."""
TOLERANCE = 0.02
"""Seconds a gap between two requests may fall short of a delay (timing on a loaded machine)."""

_DE_N = ("Stadt", "Bahn", "Schule", "Zeitung", "Regierung", "Gemeinde", "Kirche", "Familie", "Arbeit", "Woche",
         "Geschichte", "Landschaft", "Wirtschaft", "Musik", "Forschung", "Universität", "Straße", "Brücke")
_DE_M = ("Bürgermeister", "Lehrer", "Verein", "Bahnhof", "Wald", "Fluss", "Markt", "Garten", "Bericht", "Winter")
_DE_A = ("neue", "alte", "große", "kleine", "schöne", "wichtige", "lange", "ruhige")
_DE_T = (
    "Die {a} {n} ist nicht weit von der {n2} entfernt, und ich finde das gut.",
    "In der {n} gibt es den {m}, der zu den {a}n Orten der Gegend gehört.",
    "Das ist die {n}, in der ich nicht oft war, aber die {n2} ist auch nicht weit.",
    "Der {m} hat in der letzten Woche gesagt, dass die {n} nicht zu teuer ist.",
    "Ich glaube, dass die {a} {n} in den kommenden Jahren wichtig für den {m} ist.",
    "Und die {n2} der Gemeinde ist in das {a} Gebäude an der {n} gezogen.",
    "Zu den Aufgaben der {n} gehört es, den {m} und die {n2} zu unterstützen.",
    "Es ist nicht leicht, in der {n} den richtigen {m} zu finden, und das weiß ich.",
)
_EN = ("The {a} town is close to the river, and I think that is one of the reasons for its growth.",
       "In the old days the market was the centre of the village, and it is still a place to meet.",
       "It is not easy to find a good school for the children, but the council has a plan for that.",
       "I have been to the museum twice, and each time there was something new to see in the halls.")
_FR = ("La ville est proche de la rivière et les habitants de la région aiment le marché du samedi.",
       "Le maire a dit que les écoles de la commune sont en bon état et que le budget est stable.",
       "Les enfants de la ville vont à la piscine en été et à la bibliothèque en hiver.")
_SPAM = ("Kredit", "billig", "online", "Casino", "Bonus", "gratis", "sofort", "Angebot", "Rabatt", "kaufen",
         "Gewinn", "schnell", "Handy", "Tarif", "Vergleich", "Top")


@dataclass(frozen=True)
class Host:
    index: int
    ip: str
    port: int
    kind: str
    pages: int
    robots: str | None  # None: robots.txt is 404
    crawl_delay: float | None

    @property
    def netloc(self) -> str:
        return f"{self.ip}:{self.port}"


def _rng(*parts: object) -> random.Random:
    return random.Random(hashlib.sha256(":".join(map(str, parts)).encode()).digest())


class LoopWeb:
    """The web (no server yet): ``serve()`` starts it."""

    def __init__(self, hosts: int = 300, seed: int = 1, lang: str = "de", pages_per_host: tuple[int, int] = (5, 60),
                 base_port: int = 18080, ports: int = 3, slow: tuple[float, float] = (1.0, 3.0),
                 crawl_delay: float = 0.3) -> None:
        if lang != "de":
            raise ValueError(f"LoopWeb: only lang='de' has a generator (got {lang!r})")
        self.params = dict(hosts=hosts, seed=seed, lang=lang, pages_per_host=pages_per_host, base_port=base_port,
                           ports=ports, slow=slow, crawl_delay=crawl_delay)
        self.seed, self.lang, self.slow = seed, lang, slow
        self.ports = tuple(base_port + i for i in range(ports))
        rng = random.Random(seed)
        kinds: list[str] = []
        for kind, share in KINDS:
            kinds += [kind] * round(share * hosts)
        kinds = (kinds + ["hub"] * hosts)[:hosts]
        rng.shuffle(kinds)
        self.hosts: list[Host] = []
        ip = ""
        everything_disallowed = False
        for i, kind in enumerate(kinds):
            if i == 0 or rng.random() > 0.2:  # 20 % share the previous host's IP on another port
                ip = f"127.{1 + i // 250}.{i % 250 + 1}.{seed % 200 + 1}"
                port = self.ports[0]
            else:
                port = self.ports[(self.ports.index(self.hosts[-1].port) + 1) % len(self.ports)]
                if port == self.ports[0]:
                    ip = f"127.{1 + i // 250}.{i % 250 + 1}.{seed % 200 + 1}"
            delay = crawl_delay if rng.random() < 0.1 else None
            r = rng.random()
            if r < 0.05:
                robots: str | None = None
            elif not everything_disallowed and kind in ("spam", "other") and r < 0.3:
                robots, everything_disallowed = "User-agent: *\nDisallow: /\n", True
            else:
                lines = ["User-agent: *", "Disallow: /private/"]
                if rng.random() < 0.3:
                    lines += ["", "User-agent: cowbird-crawler", "Disallow: /private/", "Disallow: /nocow/"]
                if delay is not None:
                    lines.insert(1, f"Crawl-delay: {delay}")
                robots = "\n".join(lines) + "\n"
            pages = rng.randint(*pages_per_host)
            self.hosts.append(Host(i, ip, port, kind, pages, robots, delay if robots else None))
        self.by_netloc = {h.netloc: h for h in self.hosts}
        self.of_kind: dict[str, list[Host]] = {}
        for h in self.hosts:
            self.of_kind.setdefault(h.kind, []).append(h)

    # -- pages ------------------------------------------------------------------------------------------
    def url(self, host: int | Host, path: str = "/") -> str:
        h = self.hosts[host] if isinstance(host, int) else host
        return f"http://{h.netloc}{path}"

    url_of = url

    def host_of(self, url: str) -> Host | None:
        return self.by_netloc.get(urlsplit(url).netloc)

    def kind_of(self, host: str | int) -> str:
        if isinstance(host, int):
            return self.hosts[host].kind
        h = self.by_netloc.get(host) or self.host_of(host)
        if h is None:
            raise KeyError(f"no host {host!r} in this LoopWeb")
        return h.kind

    def robots_of(self, host: str | int) -> Any:
        h = self.hosts[host] if isinstance(host, int) else (self.by_netloc.get(host) or self.host_of(host))
        if h is None:
            raise KeyError(f"no host {host!r} in this LoopWeb")
        return protego.Protego.parse(h.robots or "")

    def good(self, url: str) -> bool:
        """Whether the page at ``url`` is good target-language prose by construction."""
        h = self.host_of(url)
        if h is None:
            return False
        parts = urlsplit(url)
        path = parts.path
        if h.kind in ("good", "slow"):
            return path == "/" or self._page_no(h, path) is not None
        if h.kind == "hub":
            n = self._page_no(h, path)
            return n is not None and n % 2 == 0
        return False

    def _page_no(self, h: Host, path: str) -> int | None:
        for prefix in ("/p/", "/private/", "/nocow/"):
            if path.startswith(prefix) and path.endswith(".html"):
                try:
                    n = int(path[len(prefix):-5])
                except ValueError:
                    return None
                return n if 0 <= n < h.pages else None
        return None

    def _pick(self, rng: random.Random, kinds: tuple[str, ...]) -> str:
        pool = [h for k in kinds for h in self.of_kind.get(k, [])]
        h = rng.choice(pool)
        return self.url(h, f"/p/{rng.randrange(h.pages)}.html")

    def _prose(self, rng: random.Random, paragraphs: int) -> list[str]:
        out = []
        for _ in range(paragraphs):
            sents = []
            for _ in range(rng.randint(4, 7)):
                t = rng.choice(_DE_T)
                sents.append(t.format(a=rng.choice(_DE_A), n=rng.choice(_DE_N), n2=rng.choice(_DE_N),
                                      m=rng.choice(_DE_M)))
            out.append(" ".join(sents))
        return out

    def _links(self, h: Host, rng: random.Random) -> list[str]:
        own = [self.url(h, f"/p/{rng.randrange(h.pages)}.html") for _ in range(4)]
        if h.kind in ("good", "slow"):
            out = own + [self._pick(rng, ("good",)) for _ in range(3)] + [self._pick(rng, ("hub",))]
            out += [self._pick(rng, ("spam", "other", "boilerplate", "trap", "slow", "other")) for _ in range(4)]
        elif h.kind == "hub":
            out = own + [self._pick(rng, tuple(k for k, _ in KINDS)) for _ in range(12)]
        elif h.kind in ("spam", "other"):
            out = own + [self._pick(rng, ("spam", "other")) for _ in range(30)]
        else:  # boilerplate
            out = own + [self._pick(rng, tuple(k for k, _ in KINDS)) for _ in range(8)]
        extra = rng.random()
        if extra < 0.15:
            out.append(self.url(h, f"/private/{rng.randrange(h.pages)}.html"))
        elif extra < 0.25:
            out.append(self.url(h, f"/nocow/{rng.randrange(h.pages)}.html"))
        elif extra < 0.35:
            out.append(self.url(h, f"/doc/{rng.randrange(9)}.pdf"))
        elif extra < 0.45:
            out.append(self.url(h, f"/r/{rng.randrange(h.pages)}"))
        elif extra < 0.5:
            out.append(self.url(h, "/loop/a"))
        elif extra < 0.55:
            out.append(self.url(h, f"/flaky/{rng.randrange(h.pages)}.html"))
        elif extra < 0.6:
            out.append(self.url(h, "/missing.html"))
        return out

    def response(self, netloc: str, target: str) -> tuple[int, dict[str, str], bytes]:
        """The (status, headers, body) for a GET of ``target`` on ``netloc`` (without the flaky 503s)."""
        h = self.by_netloc.get(netloc)
        if h is None:
            return 404, {"Content-Type": "text/plain"}, b"no such host\n"
        parts = urlsplit(target)
        path, query = parts.path, parts.query
        rng = _rng(self.seed, netloc, path, query)
        if path == "/robots.txt":
            if h.robots is None:
                return 404, {"Content-Type": "text/plain"}, b"not found\n"
            return 200, {"Content-Type": "text/plain"}, h.robots.encode()
        if path.startswith("/doc/"):
            return 200, {"Content-Type": "application/pdf"}, b"%PDF-1.4\n%loopweb\n" + bytes(2000)
        if path.startswith("/img/"):
            return 200, {"Content-Type": "image/png"}, b"\x89PNG\r\n\x1a\n" + bytes(500)
        if path.startswith("/r/"):
            rest = path[3:]
            if rest.endswith("/b"):
                return 302, {"Location": f"/p/{rest[:-2]}.html"}, b""
            return 301, {"Location": f"/r/{rest}/b"}, b""
        if path in ("/loop/a", "/loop/b"):
            return 302, {"Location": "/loop/b" if path == "/loop/a" else "/loop/a"}, b""
        if path.startswith("/flaky/"):
            path = "/p/" + path[7:]
        title = f"Seite {path}"
        links: list[str]
        body: list[str]
        if h.kind == "trap" and path != "/" and self._page_no(h, path) is None:
            body, links = self._trap(path, query, rng)
        elif path != "/" and self._page_no(h, path) is None:
            return 404, {"Content-Type": "text/html; charset=utf-8"}, b"<html><body>Nicht gefunden</body></html>"
        else:
            links = self._links(h, rng)
            n = self._page_no(h, path)
            if h.kind in ("good", "slow") or (h.kind == "hub" and n is not None and n % 2 == 0):
                body = self._prose(rng, rng.randint(4, 7))
            elif h.kind == "other":
                src = _EN if h.index % 3 else _FR
                body = [" ".join(rng.choice(src) for _ in range(5)).replace("{a}", "small") for _ in range(5)]
            elif h.kind == "spam":
                body = [" ".join(rng.choice(_SPAM) for _ in range(60)) for _ in range(4)]
            elif h.kind == "trap":
                body = ["Termine und Listen"]
                links += [self.url(h, "/cal/2024/05/"), self.url(h, "/a/"), self.url(h, "/s?sid=1"),
                          self.url(h, "/list?page=1")]
            else:
                body = ["Willkommen!"]
        menu = min(h.pages, 30 if h.kind == "boilerplate" else 6)
        nav = "".join(f'<li><a href="/p/{i}.html">Menü {i}</a></li>' for i in range(menu))
        main = "".join(f"<p>{p}</p>" for p in body)
        link_html = "".join(f'<li><a href="{u}">Weiter {i}</a></li>' for i, u in enumerate(links))
        html = (f'<!DOCTYPE html><html lang="{self.lang}"><head><meta charset="utf-8"><title>{title}</title></head>'
                f"<body><nav><ul>{nav}</ul></nav><main><h1>{title}</h1>{main}</main>"
                f"<footer><ul>{link_html}</ul><p>Impressum · Datenschutz · Kontakt</p></footer></body></html>")
        headers = {"Content-Type": "text/html; charset=utf-8"}
        data = html.encode()
        if rng.random() < 0.1:  # a mis-declared charset: the header says ISO-8859-1, the body is UTF-8
            headers["Content-Type"] = "text/html; charset=ISO-8859-1"
        return 200, headers, data

    def _trap(self, path: str, query: str, rng: random.Random) -> tuple[list[str], list[str]]:
        if path.startswith("/cal/"):
            y, m = (int(x) for x in path.strip("/").split("/")[1:3])
            nm = (y + m // 12, m % 12 + 1)
            return [f"Kalender {y}-{m:02d}"], [f"/cal/{nm[0]}/{nm[1]:02d}/"]
        if path.startswith("/a/"):
            return ["Ordner"], ["a/"]
        if path == "/s":
            return ["Sitzung"], [f"/s?sid={rng.getrandbits(64):016x}"]
        if path == "/list":
            page = int(query.partition("=")[2] or 1)
            return [f"Liste Seite {page}"], [f"/list?page={page + 1}"]
        return ["Nichts"], []

    # -- serving -----------------------------------------------------------------------------------------
    @contextmanager
    def serve(self, directory: Path | None = None) -> Iterator[Served]:
        import tempfile

        with tempfile.TemporaryDirectory(prefix="loopweb-") as tmp:
            log = Path(directory or tmp) / "requests.jsonl"
            log.touch()
            ctx = multiprocessing.get_context("spawn")
            ready = ctx.Event()
            proc = ctx.Process(target=_serve_main, args=(self.params, str(log), ready), daemon=True)
            proc.start()
            if not ready.wait(30):
                proc.kill()
                raise RuntimeError(f"LoopWeb: the server did not start listening on ports {self.ports} in 30 s")
            try:
                yield Served(self, log)
            finally:
                proc.terminate()
                proc.join(10)
                if proc.is_alive():
                    proc.kill()


class Served:
    """A running LoopWeb: seeds, the request log and the checkers."""

    def __init__(self, web: LoopWeb, log: Path) -> None:
        self.web, self.log = web, log

    def __getattr__(self, name: str) -> Any:
        return getattr(self.web, name)

    def seeds(self, n: int) -> list[str]:
        """``n`` seeds as a search engine gives them: good hosts' and hubs' home pages, alternately."""
        good, hubs = self.web.of_kind["good"], self.web.of_kind["hub"]
        return [self.web.url(good[i // 2 * 2 % len(good)] if i % 2 == 0 else hubs[i // 2 % len(hubs)])
                for i in range(n)]

    def requests(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.log.read_text().splitlines() if line.strip()]

    def violations(self, requests: list[dict[str, Any]], delay: float, ip_delay: float | None = None,
                   agent: str = "cowbird-crawler") -> list[str]:
        """Requests that break robots.txt or a host's (max(delay, Crawl-delay)) or an IP's delay, each said
        in words; gaps may fall short by TOLERANCE (20 ms) for timing on a loaded machine."""
        ip_delay = delay if ip_delay is None else ip_delay
        out: list[str] = []
        robots_seen: set[str] = set()
        last_host: dict[str, float] = {}
        last_ip: dict[str, tuple[float, str]] = {}
        for r in sorted(requests, key=lambda r: r["time"]):
            host, path, t = r["host"], r["path"] + (f"?{r['query']}" if r.get("query") else ""), r["time"]
            h = self.web.by_netloc.get(host)
            if r["path"] == "/robots.txt":
                robots_seen.add(host)
            elif host not in robots_seen:
                out.append(f"{host}{path} at {t:.3f} was requested before {host}/robots.txt")
            elif h is not None and not self.web.robots_of(host).can_fetch(f"http://{host}{path}", agent):
                out.append(f"{host}{path} at {t:.3f} is disallowed by its robots.txt for {agent}")
            need = max(delay, (h.crawl_delay or 0.0) if h else 0.0)
            if host in last_host and t - last_host[host] < need - TOLERANCE:
                out.append(f"{host}{path} at {t:.3f}: {t - last_host[host]:.3f} s after the host's last request "
                           f"(delay {need:g} s)")
            last_host[host] = t
            ip = r["ip"]
            if ip in last_ip and last_ip[ip][1] != host and t - last_ip[ip][0] < ip_delay - TOLERANCE:
                out.append(f"{host}{path} at {t:.3f}: {t - last_ip[ip][0]:.3f} s after a request to {last_ip[ip][1]} "
                           f"on the same IP {ip} (ip delay {ip_delay:g} s)")
            last_ip[ip] = (t, host)
        return out


def _serve_main(params: dict[str, Any], log_path: str, ready: Any) -> None:
    web = LoopWeb(**params)
    asyncio.run(_serve(web, Path(log_path), ready))


async def _serve(web: LoopWeb, log_path: Path, ready: Any) -> None:
    log = log_path.open("a")
    flaky: set[str] = set()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        ip, port = writer.get_extra_info("sockname")[:2]
        netloc = f"{ip}:{port}"
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                t = time.time()
                lines = head.decode("latin-1").split("\r\n")
                method, target, _ = (lines[0].split(" ") + ["", ""])[:3]
                headers = {k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:] if x)}
                if int(headers.get("content-length", "0") or 0):
                    await reader.readexactly(int(headers["content-length"]))
                parts = urlsplit(target)
                status, out_headers, body = web.response(netloc, target)
                h = web.by_netloc.get(netloc)
                if parts.path.startswith("/flaky/") and netloc + target not in flaky:
                    flaky.add(netloc + target)
                    status, out_headers, body = 503, {"Retry-After": "0", "Content-Type": "text/plain"}, b"busy\n"
                if h is not None and h.kind == "slow" and parts.path != "/robots.txt":
                    await asyncio.sleep(_rng(web.seed, netloc, target).uniform(*web.slow))
                if "gzip" in headers.get("accept-encoding", "") and len(body) > 1000 and hash(target) % 3 == 0:
                    body = gzip.compress(body)
                    out_headers["Content-Encoding"] = "gzip"
                if method == "HEAD":
                    payload = b""
                else:
                    payload = body
                close = headers.get("connection", "").lower() == "close"
                head_out = f"HTTP/1.1 {status} {'OK' if status == 200 else 'X'}\r\n" + "".join(
                    f"{k}: {v}\r\n" for k, v in out_headers.items()) + (
                    f"Content-Length: {len(body)}\r\nConnection: {'close' if close else 'keep-alive'}\r\n\r\n")
                writer.write(head_out.encode("latin-1") + payload)
                await writer.drain()
                log.write(json.dumps({"time": round(t, 6), "host": netloc, "ip": ip, "port": port, "path": parts.path,
                                      "query": parts.query, "method": method,
                                      "user_agent": headers.get("user-agent", ""),
                                      "status": status, "bytes": len(body)}) + "\n")
                log.flush()
                if close:
                    break
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError, ValueError):
            pass
        finally:
            writer.close()

    servers = [await asyncio.start_server(handle, "0.0.0.0", port) for port in web.ports]
    ready.set()
    await asyncio.gather(*(s.serve_forever() for s in servers))
