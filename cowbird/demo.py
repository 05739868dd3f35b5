"""``cowbird demo``: the whole platform on loopback — sample corpus in two partitions, two nodes, front end.

The sample corpus (``tests/data/sample.vrt``) is encoded into two partitions; node 1 serves the
first, node 2 the second and a replica of the first; the front end fans out to both. The first run
makes an administrator account and shows its password once. Ctrl-C or SIGTERM stops every
process; ports already in use are refused with their numbers.
"""

from __future__ import annotations

import json
import secrets
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import click
import httpx

from backend_node.store import EncodeOptions, Encoder, Manifest, parse_s_declaration
from backend_node.store.encoder import EncodeResult
from cowbird import demo_corpus
from frontend_api.accounts import Accounts, Database, sqlite_url
from frontend_api.settings import DEFAULT_DATABASE_FILE

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "tests" / "data" / "sample.vrt"
WEB_TOKENS = 2_000_000


class DemoStack:
    """Encodes the sample corpus and runs two nodes and the front end as child processes."""

    def __init__(
        self,
        base: Path,
        port: int = 8700,
        node_ports: tuple[int, int] = (8701, 8702),
        encoding: EncodeOptions | None = None,
        name: str = "sample",
        settings: dict[str, object] | None = None,
        log_level: str = "info",
        generated: bool = False,
        replica: bool = True,
    ) -> None:
        self.base = base.resolve()
        self.port = port
        self.node_ports = node_ports
        self.name = name
        self.encoding = encoding
        self.settings = settings or {}  # further front-end settings for cowbird.toml
        self.log_level = log_level  # of every process's request log
        self.generated = generated  # serve the generated web corpus too (cowbird demo)
        self.replica = replica  # node 2 serves a replica of the first partition (failover)
        self.processes: list[subprocess.Popen[bytes]] = []
        self.partitions: list[str] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def prepare(self) -> None:
        """Encode the corpus into partitions; node 1 serves the even ones, node 2 the odd ones and a
        replica of the first; write the node token and the front end's configuration. With
        ``generated``, the public corpus is the generated web corpus and the sample corpus is for
        logged-in users only."""
        registry = self.base / "registry"
        options = self.encoding or EncodeOptions(
            SAMPLE, self.base / "data" / self.name, registry / self.name, ["word", "pos", "lemma"],
            [parse_s_declaration("text:0+id+genre+year+url"), parse_s_declaration("s:0+id")],
            charset="utf8", xml=True, skip_blank=True, strip_blanks=True, partition_tokens=60,
        )
        corpora = [(self.name, f"cowbird {self.name} corpus", "login" if self.generated else "public",
                    Encoder(options).run())]
        if self.generated:
            corpora.insert(0, ("web", "Demo web corpus (generated English-like web text)", "public",
                               self._web_corpus(registry)))
        token = self.base / "node.token"
        if not token.exists():
            token.write_text(secrets.token_urlsafe(32) + "\n")
        self.partitions = [p.id for *_, result in corpora for p in result.partitions]
        n1, n2 = (f"http://127.0.0.1:{p}" for p in self.node_ports)
        self.served: tuple[list[str], list[str]] = (
            self.partitions[0::2], self.partitions[1::2] + (self.partitions[:1] if self.replica else []))
        urls: dict[str, list[str]] = {pid: [] for pid in self.partitions}
        for url, served in zip((n1, n2), self.served, strict=True):
            for pid in served:
                urls[pid].append(url)
        extra = "".join(f"{key} = {json.dumps(value)}\n" for key, value in self.settings.items())
        text = f'node_token_file = "node.token"\nport = {self.port}\nfanout = "parallel"\n{extra}\n'
        for name, title, access, result in corpora:
            nodes = "".join(f"{p.id} = {json.dumps(urls[p.id])}\n" for p in result.partitions)
            text += (f'[[corpora]]\nname = "{name}"\ntitle = "{title}"\nlanguage = "en"\naccess = "{access}"\n'
                     f'manifest = "{result.manifest}"\n\n[corpora.nodes]\n{nodes}\n')
        (self.base / "cowbird.toml").write_text(text)

    def _web_corpus(self, registry: Path) -> EncodeResult:
        """The generated corpus, made and encoded once: a second run finds it (by its stamp)."""
        vrt, stamp = self.base / "web.vrt", self.base / "web.stamp"
        wanted = json.dumps({"version": demo_corpus.VERSION, "tokens": WEB_TOKENS})
        manifest = self.base / "data" / "web" / "web.manifest.json"
        if stamp.exists() and stamp.read_text() == wanted and manifest.exists():
            loaded = Manifest.load(manifest)
            return EncodeResult(loaded.corpus, loaded.size, list(loaded.partitions), [], manifest)
        click.echo(f"generating the demo web corpus ({WEB_TOKENS:,} tokens) ...", err=True)
        written = demo_corpus.write_vrt(vrt, WEB_TOKENS)
        options = EncodeOptions(
            vrt, self.base / "data" / "web", registry / "web", ["word", "pos", "lemma"],
            [parse_s_declaration("text:0+id+url+host+tld+genre+year+lastmod"), parse_s_declaration("s:0+id")],
            # two partitions: half of the tokens each, with room for the last (short) sentence
            charset="utf8", xml=True, skip_blank=True, strip_blanks=True, partition_tokens=written // 2 + 200,
            manifest=manifest,
        )
        result = Encoder(options).run()
        stamp.write_text(wanted)
        return result

    def _start(self, args: list[str], health: str) -> None:
        process = subprocess.Popen([sys.executable, "-m", "cowbird", *args], cwd=self.base)
        self.processes.append(process)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if process.poll() is not None:
                self.stop()
                raise click.ClickException(f"cowbird {' '.join(args[:2])} exited with status {process.returncode}")
            try:
                if httpx.get(health, timeout=1).status_code < 500:
                    return
            except httpx.TransportError:
                time.sleep(0.2)
        self.stop()
        raise click.ClickException(f"cowbird {' '.join(args[:2])} did not answer {health} within 60 s")

    def start(self) -> None:
        registry = str(self.base / "registry")
        for port, served in zip(self.node_ports, self.served, strict=True):
            corpora = [arg for pid in served for arg in ("--corpus", pid)]
            self._start(["node", "serve", "--registry", registry, *corpora, "--port", str(port),
                         "--token-file", "node.token", "--log-level", self.log_level], f"http://127.0.0.1:{port}/health")
        self._start(["serve", "--config", "cowbird.toml", "--log-level", self.log_level], f"{self.url}/api/v1/corpora")

    def stop(self) -> None:
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
        self.processes = []


def port_in_use(port: int) -> bool:
    """Whether something already listens on 127.0.0.1:``port``."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def admin_account(base: Path) -> str | None:
    """The demo's administrator: made on the first run, with a password shown once (returned);
    None when it exists already."""
    database = Database(sqlite_url(base / DEFAULT_DATABASE_FILE))
    try:
        database.upgrade()
        accounts = Accounts(database)
        with database.session() as session:
            if accounts.find(session, "admin") is not None:
                return None
            _, password = accounts.add(session, "admin", "admin@demo.localhost", "cowbird demo", admin=True)
            return password
    finally:
        database.close()


def _stop_on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)  # unwinds to the `finally` that stops every process


@click.command("demo")
@click.option("--dir", "directory", type=click.Path(path_type=Path), default=Path("demo-data"), show_default=True,
              help="Where the demo corpus, token and configuration go.")
@click.option("--port", type=click.IntRange(1, 65533), default=8700, show_default=True,
              help="Port of the front end; the nodes take the next two.")
def demo_command(directory: Path, port: int) -> None:
    """Run the platform on loopback: a generated 2-million-token web corpus (public) and the sample
    corpus (login only), in partitions on two nodes, and the front end. Ctrl-C or SIGTERM stops
    every process."""
    busy = [p for p in (port, port + 1, port + 2) if port_in_use(p)]
    if busy:
        raise click.ClickException(
            f"port {', '.join(map(str, busy))} is in use (another program, or a demo still running): stop it or "
            f"choose other ports with --port (make demo PORT={port + 100})"
        )
    directory.mkdir(parents=True, exist_ok=True)
    stack = DemoStack(directory, port, (port + 1, port + 2), generated=True)
    stack.prepare()
    password = admin_account(stack.base)
    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    try:
        stack.start()
        click.echo(f"\ncowbird is running at {stack.url}  (Ctrl-C stops it)\n")
        if password is not None:
            click.echo(f"  administrator: admin / {password}   (shown once; log in at {stack.url}/login)")
        else:
            click.echo(f"  administrator: admin (its password was shown on the first run; {stack.url}/login)")
        click.echo(f"  open {stack.url}/ in a browser: the public corpus 'web' (2 million generated tokens);")
        click.echo("  the 'sample' corpus is for logged-in users")
        click.echo(f"  curl '{stack.url}/api/v1/corpora'")
        click.echo(f"  curl '{stack.url}/api/v1/query?corpus=web&q=the+0-1+house&show=lemma&meta=text_url'")
        click.echo(f"  curl -OJ '{stack.url}/api/v1/export?corpus=web&q=%5Ehouse&format=tsv&context=s&meta=text_url'")
        click.echo(f"  {stack.url}/ref/web/2\n")
        while all(p.poll() is None for p in stack.processes):
            time.sleep(0.5)
        click.echo("a cowbird process ended; stopping the others", err=True)
    except KeyboardInterrupt:
        click.echo("\nstopping ...", err=True)
    finally:
        stack.stop()
