"""``cowbird demo``: the whole platform on loopback — sample corpus in two partitions, two nodes, front end.

The sample corpus (``backend_node/cowbird/data/sample.vrt``) is encoded into two partitions; node 1 serves the
first, node 2 the second and a replica of the first; the front end (two worker processes on one
port, sharing their counts through the account database) fans out to both. The first run
makes an administrator account and shows its password once. Ctrl-C or SIGTERM stops every
process; ports already in use are refused with their numbers.
"""

from __future__ import annotations

import importlib.util
import json
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import click
import httpx

from cowbird.commands import demo_web
from cowbird.core.errors import CowbirdError
from cowbird.data import SAMPLE_VRT, demo_corpus
from cowbird.frontend.accounts import Accounts, Database, sqlite_url
from cowbird.frontend.settings import DEFAULT_DATABASE_FILE
from cowbird.node.sketch_cli import build_tables
from cowbird.query.sketch_grammar import load_grammar
from cowbird.store import CwbCorpus, EncodeOptions, Encoder, Manifest, parse_s_declaration
from cowbird.store.encoder import EncodeResult
from cowbird.store.neighbours import NEIGHBOURS_FILE, write_neighbours

WEB_TOKENS = 2_000_000
FRONT_END_WORKERS = 2
"""Front-end processes the demo runs on its port (``cowbird serve --workers``): as a deployment
does, they share fair use, throttles and sessions through the account database."""
WEB_COMMON_WORDS = 100
"""The generated web corpus's common words for ``sort=gdex`` (``[corpora.gdex] common_words``): it
has about 270 word forms, fewer than the default 2,000 common words, so none would be rare, the
rare-word rule would give every line 1, and nearly half of a word's lines would share the best score
(in corpus order). Its 100 most frequent forms leave the rest rare, as in real text."""
CALF_MODULES = ("rapidfuzz", "lxml", "w3lib", "warcio", "charset_normalizer")
"""What Calf imports beyond the base install (``cowbird[calf]``): without them the demo leaves ``[calf]`` off."""
DESCRIPTIONS = {  # what the attributes hold, as the configuration tells users ([corpora.attributes])
    "web": {"pos": "part of speech, Penn Treebank tags (DT determiner, JJ adjective, NN/NNS noun, VB/VBD/VBP/VBZ "
                   "verb, IN preposition, RB adverb ...)", "lemma": "base form, lower case"},
    "sample": {"pos": "part of speech, TreeTagger's English tags (Penn Treebank's, with SENT sentence end, NP proper "
                      "noun, PP personal pronoun)", "lemma": "base form"},
}
BUILT_DESCRIPTIONS = {  # a corpus made by `cowbird build` (docs/building-corpora.md, "What a built corpus holds")
    "en": {"pos": "part of speech, Penn Treebank tags (cowbird build: HanTa's tags mapped to Penn)",
           "lemma": "base form (HanTa)"},
    "de": {"pos": "part of speech, STTS tags (cowbird build: HanTa)", "lemma": "base form (HanTa)"},
}
BUILT_GRAMMARS = {"en": "penn", "de": "stts"}
"""The shipped sketch grammar for a built corpus's tagset, by its language (``cowbird build`` tags English
with Penn tags, German with STTS); a built corpus in another language is served without word sketches."""


@dataclass(frozen=True)
class BuiltCorpus:
    """A corpus made by ``cowbird build`` (``--corpus OUT/NAME.manifest.json``), served by a node of its own
    from the build's registry, public, beside the demo's corpora."""

    manifest: Path
    name: str
    language: str
    registry: Path
    partitions: tuple[str, ...]
    port: int

    @classmethod
    def load(cls, manifest: Path, port: int) -> BuiltCorpus:
        """Read a built corpus's manifest (and its build's ``build.json`` beside it, for the language)."""
        manifest = manifest.resolve()
        try:
            loaded = Manifest.load(manifest)
        except CowbirdError as exc:
            raise click.ClickException(f"--corpus {manifest}: {exc.detail}") from exc
        registry = loaded.registry if loaded.registry.is_absolute() else manifest.parent / loaded.registry
        return cls(manifest, loaded.corpus, built_language(manifest.parent / "build.json"), registry,
                   tuple(p.id for p in loaded.partitions), port)


def built_language(options: Path) -> str:
    """The (first) language a corpus was built for, from its build's ``build.json`` ("en" without one)."""
    try:
        saved = json.loads(options.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "en"
    found: object = saved.get("options", saved) if isinstance(saved, dict) else None
    value = found.get("language", found.get("languages")) if isinstance(found, dict) else None
    if isinstance(value, list | tuple) and value and isinstance(value[0], str):
        return value[0]
    if isinstance(value, str) and value:
        return value.split(",")[0].strip()
    return "en"


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
        web_tokens: int = WEB_TOKENS,
        workers: int = FRONT_END_WORKERS,
        serve_options: list[str] | None = None,
        archive_port: int | None = None,
        built: Sequence[Path] = (),
        built_ports: Sequence[int] = (),
        workshop_port: int | None = None,
        workshop_allow: Sequence[str] = (),
        workshop_delay: float = 1.0,
    ) -> None:
        self.base = base.resolve()
        self.port = port
        self.node_ports = node_ports
        self.name = name
        self.encoding = encoding
        self.settings = settings or {}  # further front-end settings for cowbird.toml
        # the workshop (docs/workshop.md): its node on this port serving base/workshop/registry, its crawls
        # allowed these address ranges (none: public addresses only) and this delay per host
        self.workshop_port = workshop_port
        self.workshop_allow = list(workshop_allow)
        self.workshop_delay = workshop_delay
        self.log_level = log_level  # of every process's request log
        self.generated = generated  # serve the generated web corpus too (cowbird demo)
        self.replica = replica  # node 2 serves a replica of the first partition (failover)
        self.web_tokens = web_tokens  # size of the generated corpus
        self.workers = workers  # front-end processes on the port
        self.serve_options = serve_options or []  # further options of cowbird serve (--no-background)
        # with the generated corpus: its stand-in web archive on this port, and [calf] asking it (demo_web.py)
        self.archive_port = archive_port if generated and archive_port is not None and calf_installed() else None
        self.archive_process: subprocess.Popen[bytes] | None = None
        self.processes: list[subprocess.Popen[bytes]] = []
        self.partitions: list[str] = []
        if len(built_ports) != len(built):
            raise ValueError(f"DemoStack: {len(built)} built corpora need as many node ports, not {len(built_ports)}")
        # corpora made by `cowbird build`: each served by a node of its own (after the two demo nodes)
        self.built = [BuiltCorpus.load(manifest, port) for manifest, port in zip(built, built_ports, strict=True)]
        taken = {"web", name} if generated else {name}
        for corpus in self.built:
            if corpus.name in taken:
                raise click.ClickException(f"--corpus {corpus.manifest}: the corpus name {corpus.name!r} is taken "
                                           f"(the demo's corpora and those given before: {', '.join(sorted(taken))}); "
                                           "build it with another --name")
            taken.add(corpus.name)

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
            SAMPLE_VRT, self.base / "data" / self.name, registry / self.name, ["word", "pos", "lemma"],
            [parse_s_declaration("text:0+id+genre+year+url"), parse_s_declaration("s:0+id")],
            charset="utf8", xml=True, skip_blank=True, strip_blanks=True, partition_tokens=60,
        )
        corpora = [(self.name, f"cowbird {self.name} corpus", "login" if self.generated else "public",
                    Encoder(options).run())]
        if self.generated:
            corpora.insert(0, ("web", "Demo web corpus (generated English-like web text)", "public",
                               self._web_corpus(registry)))
        self._built_tables()
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
        text = f'port = {self.port}\n{extra}\n[nodes]\ntoken_file = "node.token"\nfanout = "parallel"\n\n'
        for name, title, access, result in corpora:
            nodes = "".join(f"{p.id} = {json.dumps(urls[p.id])}\n" for p in result.partitions)
            text += (f'[[corpora]]\nname = "{name}"\ntitle = "{title}"\nlanguage = "en"\naccess = "{access}"\n'
                     f'manifest = "{result.manifest}"\nsketch_grammar = "penn"\n\n[corpora.nodes]\n{nodes}\n'
                     + _attributes(DESCRIPTIONS.get(name, {}))
                     + (f"[corpora.gdex]\ncommon_words = {WEB_COMMON_WORDS}\n\n" if name == "web" else ""))
        for built in self.built:
            node = json.dumps([f"http://127.0.0.1:{built.port}"])
            nodes = "".join(f"{pid} = {node}\n" for pid in built.partitions)
            grammar = BUILT_GRAMMARS.get(built.language)
            text += (f'[[corpora]]\nname = "{built.name}"\ntitle = "{built.name} (built by cowbird build from web '
                     f'pages)"\nlanguage = "{built.language}"\naccess = "public"\n'
                     f"manifest = {json.dumps(str(built.manifest))}\n"
                     + (f'sketch_grammar = "{grammar}"\n' if grammar else "")
                     + f"\n[corpora.nodes]\n{nodes}\n" + _attributes(BUILT_DESCRIPTIONS.get(built.language, {})))
        if self.workshop_port is not None:
            (self.base / "workshop" / "registry").mkdir(parents=True, exist_ok=True)
            text += (f'[workshop]\nenabled = true\ndirectory = {json.dumps(str(self.base / "workshop" / "jobs"))}\n'
                     f'registry = {json.dumps(str(self.base / "workshop" / "registry"))}\n'
                     f'nodes = ["http://127.0.0.1:{self.workshop_port}"]\n'
                     f"crawl_allow = {json.dumps(self.workshop_allow)}\ncrawl_delay = {self.workshop_delay}\n\n")
        if self.archive_port is not None:
            demo_web.build(self.base, self.web_tokens, say=lambda: click.echo(
                "writing the demo web corpus's pages into its stand-in web archive ...", err=True))
            text += demo_web.calf_settings(self.archive_port)
        (self.base / "cowbird.toml").write_text(text)

    def _built_tables(self) -> None:
        """The word sketch tables of each built corpus whose tagset has a shipped grammar, built once into
        its partitions (as the generated corpus's are; a second run keeps them)."""
        for built in self.built:
            grammar_name = BUILT_GRAMMARS.get(built.language)
            if grammar_name is None:
                continue
            grammar = load_grammar(grammar_name)
            for pid in built.partitions:
                made, _ = build_tables(built.registry, pid, grammar, "native", False, lambda _: None)
                if made:
                    click.echo(f"built the word sketch tables of {pid} ({grammar_name} grammar)", err=True)

    def _web_corpus(self, registry: Path) -> EncodeResult:
        """The generated corpus, made and encoded once: a second run finds it (by its stamp)."""
        vrt, stamp = self.base / "web.vrt", self.base / "web.stamp"
        wanted = json.dumps({"version": demo_corpus.VERSION, "tokens": self.web_tokens})
        manifest = self.base / "data" / "web" / "web.manifest.json"
        if stamp.exists() and stamp.read_text() == wanted and manifest.exists():
            loaded = Manifest.load(manifest)
            if not all((p.data / NEIGHBOURS_FILE).exists() for p in loaded.partitions):  # encoded before they were
                write_neighbours([CwbCorpus.open(registry, p.id) for p in loaded.partitions])
            grammar = load_grammar("penn")
            for partition in loaded.partitions:  # tables of an older format (or none) are built again
                build_tables(registry, partition.id, grammar, "native", False, lambda _: None)
            return EncodeResult(loaded.corpus, loaded.size, list(loaded.partitions), [], manifest)
        click.echo(f"generating the demo web corpus ({self.web_tokens:,} tokens) ...", err=True)
        written = demo_corpus.write_vrt(vrt, self.web_tokens)
        options = EncodeOptions(
            vrt, self.base / "data" / "web", registry / "web", ["word", "pos", "lemma"],
            [parse_s_declaration("text:0+id+url+host+tld+genre+year+lastmod"), parse_s_declaration("s:0+id")],
            # two partitions: half of the tokens each, with room for the last (short) sentence
            charset="utf8", xml=True, skip_blank=True, strip_blanks=True, partition_tokens=written // 2 + 200,
            manifest=manifest,
        )
        result = Encoder(options).run()
        click.echo("building its word sketch tables (penn grammar) ...", err=True)
        grammar = load_grammar("penn")
        for partition in result.partitions:
            build_tables(registry, partition.id, grammar, "native", True, lambda _: None)
        stamp.write_text(wanted)
        return result

    def _await(self, process: subprocess.Popen[bytes], args: list[str], health: str) -> None:
        """Wait until the started ``process`` answers ``health``; stop everything when it exits or
        does not answer within 60 s."""
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
        """Start both nodes and the front end at once (their start-up is mostly imports, which then
        share the cores), and return when each answers."""
        registry = str(self.base / "registry")
        started: list[tuple[list[str], str]] = []
        for port, served in zip(self.node_ports, self.served, strict=True):
            corpora = [arg for pid in served for arg in ("--corpus", pid)]
            started.append((["node", "serve", "--registry", registry, *corpora, "--port", str(port),
                             "--token-file", "node.token", "--log-level", self.log_level],
                            f"http://127.0.0.1:{port}/health"))
        for built in self.built:  # a node of its own, on the build's registry
            corpora = [arg for pid in built.partitions for arg in ("--corpus", pid)]
            started.append((["node", "serve", "--registry", str(built.registry), *corpora, "--port", str(built.port),
                             "--token-file", "node.token", "--log-level", self.log_level],
                            f"http://127.0.0.1:{built.port}/health"))
        if self.workshop_port is not None:  # the workshop's node: the corpora published there (may be none)
            started.append((["node", "serve", "--registry", str(self.base / "workshop" / "registry"), "--port",
                             str(self.workshop_port), "--token-file", "node.token", "--log-level", self.log_level],
                            f"http://127.0.0.1:{self.workshop_port}/health"))
        started.append((["serve", "--config", "cowbird.toml", "--workers", str(self.workers), *self.serve_options,
                         "--log-level", self.log_level], f"{self.url}/api/v1/corpora"))
        # -P: base is the working directory, and a folder named cowbird there must not shadow the package
        launched = [subprocess.Popen([sys.executable, "-P", "-m", "cowbird", *args], cwd=self.base)
                    for args, _ in started]
        self.processes.extend(launched)
        if self.archive_port is not None:
            self.archive_process = subprocess.Popen([sys.executable, "-P", "-m", "cowbird.commands.demo_web", "--dir",
                                                     str(self.base), "--port", str(self.archive_port)], cwd=self.base)
        for process, (args, health) in zip(launched, started, strict=True):
            self._await(process, args, health)
        if self.archive_process is not None:
            self._await(self.archive_process, ["stand-in", "web archive"], f"http://127.0.0.1:{self.archive_port}/cdx")

    def stop(self) -> None:
        every = [*self.processes, *([self.archive_process] if self.archive_process is not None else [])]
        for process in every:
            process.terminate()
        for process in every:
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
        self.processes, self.archive_process = [], None


def _attributes(descriptions: dict[str, str]) -> str:
    lines = "".join(f"{key} = {json.dumps(text)}\n" for key, text in descriptions.items())
    return f"[corpora.attributes]\n{lines}\n" if lines else ""


def calf_installed() -> bool:
    """Whether Calf's dependencies are here (``cowbird[calf]``, which ``make demo`` installs)."""
    return all(importlib.util.find_spec(name) is not None for name in CALF_MODULES)


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
            if accounts.users.find(session, "admin") is not None:
                return None
            _, password = accounts.users.add(session, "admin", "admin@demo.localhost", "cowbird demo", admin=True)
            return password
    finally:
        database.close()


class Stopped(Exception):
    """SIGTERM: the demo was asked to stop (not an error: `make demo` exits 0 and says so)."""


def _stop_on_sigterm(signum: int, frame: object) -> None:
    raise Stopped  # unwinds to the `finally` that stops every process


def _node_names(stack: DemoStack) -> dict[int, str]:
    """Process index -> what it is, for the messages about processes that end."""
    ports = [*stack.node_ports, *(built.port for built in stack.built),
             *([stack.workshop_port] if stack.workshop_port is not None else [])]
    return {k: f"node {k + 1} (port {port}: {', '.join(served)})"
            for k, (port, served) in enumerate(zip(ports, _served(stack), strict=True))}


def _served(stack: DemoStack) -> list[list[str]]:
    """The partitions of each node process, in the order they were started (the built corpora's last)."""
    workshop: list[list[str]] = [["the workshop's corpora"]] if stack.workshop_port is not None else []
    return [*stack.served, *(list(built.partitions) for built in stack.built), *workshop]


def _greeting(stack: DemoStack, password: str | None) -> str:
    """What the demo prints once everything answers: where to go, what to try, where things are."""
    url, base = stack.url, stack.base
    config = base / "cowbird.toml"
    cowbird = Path(sys.executable).with_name("cowbird")
    command = str(cowbird) if cowbird.exists() else "cowbird"
    def shown(path: Path) -> str:
        try:
            return str(path.relative_to(Path.cwd()))
        except ValueError:
            return str(path)

    command, shown_config = shown(Path(command)) if "/" in command else command, shown(config)
    login = (f"admin / {password}   (shown only now: note it)" if password is not None
             else "admin (its password was shown on the first run)")
    return "\n".join([
        "",
        f"cowbird is running at {url}  (Ctrl-C stops it)",
        "",
        f"  open {url}/ in a browser: the public corpus 'web' ({stack.web_tokens:,} generated tokens of",
        "  English-like web text, in two partitions); the corpus 'sample' is for logged-in users",
        f"  administrator: {login}; log in at {url}/login",
        f"  a new password for any account: {command} users reset-password admin --config {shown_config}",
        f"  configuration: {shown_config} (corpora, nodes, limits); accounts: {shown(base / DEFAULT_DATABASE_FILE)}",
        "",
        f"  the README's examples: COWBIRD={url}",
        "  try:",
        f"  curl '{url}/api/v1/query?corpus=web&q=the+0-1+house&show=lemma&meta=text_url'",
        f"  curl -fsS -OJ '{url}/api/v1/export?corpus=web&q=%5Ehouse&context=s&meta=text_url'",
        f"  {url}/ref/web/2"
        + ("   (Find this sentence on the web: in the demo's stand-in web archive, port "
           f"{stack.archive_port})" if stack.archive_port is not None else "   (pip install 'cowbird[calf]' to find "
           "its sentence on the web)"),
        "",
        f"  the front end: {stack.workers} worker processes on port {stack.port}, sharing fair use, throttles "
        "and sessions through the account database",
        f"  node 1 serves {', '.join(stack.served[0])} on port {stack.node_ports[0]}; node 2 serves "
        f"{', '.join(stack.served[1])} on port {stack.node_ports[1]}"
        + (" (a replica of the first partition)" if stack.replica else ""),
        *(f"  built corpus '{built.name}' (public): {', '.join(built.partitions)} served by node {3 + k} on port "
          f"{built.port}; {url}/?corpus={built.name}" for k, built in enumerate(stack.built)),
        *([f"  the workshop: {url}/workshop (log in as admin): crawl the web from seed URLs, build and publish "
           f"corpora; its node on port {stack.workshop_port}"] if stack.workshop_port is not None else []),
        f"  to see a partition fail: kill the process listening on port {stack.node_ports[0]} or "
        f"{stack.node_ports[1]}; the demo goes on",
        "",
    ])


def _watch(stack: DemoStack) -> None:
    """Wait while the front end runs. A node that ends is reported and the rest goes on (its
    partitions are served by a replica, or reported missing by every search); the front end
    ending ends the demo."""
    names = _node_names(stack)
    every = _served(stack)
    reported: set[int] = set()
    front = stack.processes[-1]
    while front.poll() is None:
        for k, process in enumerate(stack.processes[:-1]):
            if k not in reported and process.poll() is not None:
                reported.add(k)
                alive = [p for j, p in enumerate(every) if j != k and stack.processes[j].poll() is None]
                served = {pid for part in alive for pid in part}
                missing = [pid for pid in every[k] if pid not in served]
                replaced = [pid for pid in every[k] if pid in served]
                click.echo(f"\n{names[k]} ended (exit status {process.returncode}); the demo goes on:", err=True)
                if replaced:
                    click.echo(f"  {', '.join(replaced)}: answered by the replica on the other node", err=True)
                if missing:
                    click.echo(f"  {', '.join(missing)}: no node left; searches are marked incomplete and name it",
                               err=True)
        time.sleep(0.5)
    click.echo(f"the front end ended (exit status {front.returncode}); stopping the nodes", err=True)


@click.command("demo")
@click.option("--dir", "directory", type=click.Path(path_type=Path), default=Path("demo-data"), show_default=True,
              help="Where the demo corpus, token and configuration go.")
@click.option("--port", type=click.IntRange(1, 65532), default=8700, show_default=True,
              help="Port of the front end; the nodes take the next two, the stand-in web archive the one after.")
@click.option("--web-tokens", type=click.IntRange(1000, 1_000_000_000), default=WEB_TOKENS, show_default=True,
              help="Size of the generated web corpus (made again when it changes).")
@click.option("--corpus", "built", multiple=True, type=click.Path(path_type=Path, dir_okay=False, exists=True),
              help="A corpus made by `cowbird build` (its OUT/NAME.manifest.json; repeatable): served public beside "
                   "the demo's, each by a node of its own on the ports after the stand-in web archive's.")
@click.option("--workshop", is_flag=True,
              help="Offer the workshop (/workshop, for the administrator): crawl the web and build corpora in the "
                   "browser, served by a node of its own on the port after the others (docs/workshop.md).")
def demo_command(directory: Path, port: int, web_tokens: int, built: tuple[Path, ...], workshop: bool) -> None:
    """Run the platform on loopback: a generated 2-million-token web corpus (public) and the sample
    corpus (login only), in partitions on two nodes, and the front end; with --corpus, corpora made by
    `cowbird build` too. Ctrl-C or SIGTERM stops every process; a node that ends leaves the rest running,
    so that a partition failure can be seen."""
    built_ports = [port + 4 + k for k in range(len(built))]
    if built_ports and built_ports[-1] > 65535:
        raise click.ClickException(f"--port {port} leaves no ports for {len(built)} built corpora: choose a lower one")
    workshop_port = port + 4 + len(built) if workshop else None
    if workshop_port is not None and workshop_port > 65535:
        raise click.ClickException(f"--port {port} leaves no port for the workshop's node: choose a lower one")
    busy = [p for p in (port, port + 1, port + 2, port + 3, *built_ports, *([workshop_port] if workshop_port else []))
            if port_in_use(p)]
    if busy:
        raise click.ClickException(
            f"port {', '.join(map(str, busy))} is in use (another program, or a demo still running): stop it or "
            f"choose other ports with --port (make demo PORT={port + 100})"
        )
    directory.mkdir(parents=True, exist_ok=True)
    stack = DemoStack(directory, port, (port + 1, port + 2), generated=True, web_tokens=web_tokens,
                      archive_port=port + 3, built=built, built_ports=built_ports, workshop_port=workshop_port)
    stack.prepare()
    password = admin_account(stack.base)
    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    why = ""
    try:
        stack.start()
        click.echo(_greeting(stack, password))
        _watch(stack)
    except KeyboardInterrupt:
        why = "Ctrl-C"
    except Stopped:
        why = "SIGTERM"
    finally:
        if why:
            click.echo(f"\n{why}: stopping the demo ...", err=True)
        stack.stop()
    if why:  # asked to stop: a clean end, exit status 0 (make says nothing of an error)
        click.echo(f"cowbird demo stopped ({why}): the front end and both nodes have ended; `make demo` starts "
                   "it again, with the same corpus and accounts.")
