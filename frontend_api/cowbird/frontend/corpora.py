"""Configured corpora: their manifests, partitions with global offsets, and node URLs.

A global position is the partition's token offset plus the position inside the partition;
:meth:`CorpusEntry.locate` maps it back.

Several corpora are searched at once as one (``corpus=web,sample``): :meth:`CorpusCatalogue.get`
makes a union whose partitions are the members' partitions, one after the other (each member's
offsets shifted by the sizes before it), so that every search, page, sort, count and export runs
over it as over one corpus, exactly; each hit is then named by its ``member`` corpus and its
position there. A union has the attributes every member has; what a query names that a member
lacks is refused, naming the member (``members_lacking``).
"""

from __future__ import annotations

import bisect
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from cowbird.core.errors import BadParameter, OutOfRange, StoreError, UnknownCorpus
from cowbird.core.lru import Lru
from cowbird.core.manifest import Manifest, ManifestPartition
from cowbird.core.search import CheckedQuery, PartitionRef
from cowbird.frontend.schemas import CorpusSummary, PartitionSummary
from cowbird.frontend.settings import AccessLevel, CorpusConfig, FrontendSettings
from cowbird.frontend.viewer import ANONYMOUS, Viewer
from cowbird.query.sketch_grammar import SketchGrammar, SketchGrammarError, load_grammar
from cowbird.serving.config import ConfigError


@dataclass(frozen=True)
class Partition(PartitionRef):
    """A partition of a corpus and the nodes that serve it, in the order they are tried."""

    nodes: tuple[str, ...]


SEARCHED_KEPT = 1024
"""Sizes of filtered subcorpora kept (the same filters are searched again and again)."""
COMMON_KEPT = 64
"""Corpora (and rules) whose common words are kept (``sort=gdex``)."""
CHECKED_KEPT = 4096
"""Checked queries kept (``querying.build_query``): a request's query, a sketch's relation queries."""


@dataclass
class Kept:
    """What the front end keeps of the nodes' answers about its corpora, one for all the corpora of a
    catalogue (of one app: ``CorpusCatalogue.kept``; each entry it makes holds it, ``CorpusEntry.kept``),
    each store an ``Lru`` keyed by the corpus's name and version with what was asked: the tokens of
    filtered subcorpora (``subcorpora.searched_tokens``) and the common words of ``sort=gdex``
    (``gdex.common_words``), and the queries checked for a corpus (``querying.build_query``: the
    request's query with its case switch and filters, each a ``CheckedQuery`` — AST and CQP text —,
    so a query asked again, a word sketch's relation queries above all, is parsed and serialised
    no more)."""

    checked: Lru[tuple[str, str, str, str, bool, tuple[str, ...]], CheckedQuery] = field(
        default_factory=lambda: Lru(CHECKED_KEPT))
    searched: Lru[tuple[str, str, tuple[str, ...], tuple[str, ...]], int] = field(
        default_factory=lambda: Lru(SEARCHED_KEPT))
    common_words: Lru[tuple[str, str, str, int], tuple[str, ...]] = field(default_factory=lambda: Lru(COMMON_KEPT))


@dataclass
class CorpusEntry:
    """A corpus the front end serves: its configuration, its manifest and where its partitions live;
    ``kept``: what is kept of the nodes' answers about it (its catalogue's, shared by its corpora)."""

    config: CorpusConfig
    manifest: Manifest
    partitions: list[Partition]
    grammar: SketchGrammar | None = None  # word sketches' relations (sketch_grammar), checked at start
    members: tuple[CorpusEntry, ...] = ()  # a union of corpora searched at once: its corpora, in order
    _offsets: list[int] = field(default_factory=list)
    kept: Kept = field(default_factory=Kept, compare=False, repr=False)

    def __post_init__(self) -> None:
        self._offsets = [p.offset for p in self.partitions]

    @property
    def parts(self) -> tuple[CorpusEntry, ...]:
        """The corpora searched: a union's members, or the corpus itself."""
        return self.members or (self,)

    def member_at(self, position: int) -> tuple[CorpusEntry, int]:
        """The corpus a global position lies in and the position there (a union's member, or itself)."""
        start = 0
        for member in self.members:
            if position < start + member.size:
                return member, position - start
            start += member.size
        return self, position

    def members_lacking(self, attribute: str, kind: str = "any") -> list[CorpusEntry]:
        """The corpora searched that lack an attribute (``kind``: p, s, meta or any)."""
        def has(corpus: CorpusEntry) -> bool:
            names = {"p": corpus.p_attributes, "s": corpus.s_attributes, "meta": corpus.meta,
                     "any": corpus.p_attributes + corpus.s_attributes}[kind]
            return attribute in names
        return [c for c in self.parts if not has(c)]

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def size(self) -> int:
        return self.manifest.size

    @property
    def p_attributes(self) -> list[str]:
        return self.manifest.p_attributes

    @property
    def s_attributes(self) -> list[str]:
        return self.manifest.s_attributes

    @property
    def meta(self) -> list[str]:
        """The s-attributes whose regions carry values."""
        return self.manifest.meta

    def locate(self, position: int) -> tuple[Partition, int]:
        """The partition holding a global position, and the local position in it."""
        if not 0 <= position < self.size:
            raise OutOfRange(f"position {position} is outside corpus {self.name} (0 to {self.size - 1})")
        index = bisect.bisect_right(self._offsets, position) - 1
        partition = self.partitions[index]
        return partition, position - partition.offset

    def visible_to(self, viewer: Viewer) -> bool:
        """Whether a (possibly anonymous) user may see and use the corpus: ``public`` for everyone,
        ``login`` for approved users, ``group:NAME`` for its members (and admins)."""
        access = self.config.access
        if access.level is AccessLevel.PUBLIC:
            return True
        if viewer.name is None:
            return False
        if access.level is AccessLevel.LOGIN:
            return True
        return viewer.admin or access.group in viewer.groups

    def summary(self) -> CorpusSummary:
        config = self.config
        return CorpusSummary(
            name=self.name, title=config.title, description=config.description, language=config.language,
            access=str(config.access), size=self.size, p_attributes=self.p_attributes,
            s_attributes=self.s_attributes, meta=self.meta, attributes=dict(config.attributes),
            sketches=[view.name for view in self.grammar.views] if self.grammar is not None else [],
            sketch_labels={view.name: view.label for view in self.grammar.views if view.label is not None}
            if self.grammar is not None else {},
            partitions=[PartitionSummary(id=p.id, size=p.size, offset=p.offset) for p in self.partitions],
        )


def load_corpus(config: CorpusConfig, kept: Kept | None = None) -> CorpusEntry:
    """Read the manifest and check that every partition has a node (and no unknown partitions); the
    entry keeps the nodes' answers in ``kept`` (its catalogue's), else in its own."""
    try:
        manifest = Manifest.load(config.manifest)
    except StoreError as exc:
        raise ConfigError(f"corpus {config.name}: {exc.detail}") from exc
    strange = sorted(set(config.attributes) - set(manifest.p_attributes) - set(manifest.s_attributes))
    if strange:
        raise ConfigError(f"corpus {config.name}: [corpora.attributes] describes {', '.join(strange)}, which the "
                          f"corpus does not have (it has: {', '.join(manifest.p_attributes + manifest.s_attributes)})")
    known = [p.id for p in manifest.partitions]
    unknown = sorted(set(config.nodes) - set(known))
    if unknown:
        raise ConfigError(
            f"corpus {config.name}: nodes are configured for unknown partition(s) {', '.join(unknown)} "
            f"(the manifest has: {', '.join(known)})"
        )
    partitions = []
    for entry in manifest.partitions:
        nodes = config.nodes.get(entry.id)
        if not nodes:
            raise ConfigError(f"corpus {config.name}: partition {entry.id} has no node URL in the configuration")
        partitions.append(Partition(entry.id, entry.size, entry.offset, tuple(nodes)))
    grammar = None
    if config.sketch_grammar is not None:
        try:
            grammar = load_grammar(config.sketch_grammar)
            grammar.check(manifest.p_attributes, manifest.s_attributes, config.name)
        except SketchGrammarError as exc:
            raise ConfigError(f"corpus {config.name}: sketch_grammar: {exc.pretty()}") from exc
        for warning in grammar.warnings:  # read all the same: the admin is told (docs/word-sketches.md)
            logging.getLogger("cowbird.frontend").warning("corpus %s: sketch_grammar: %s", config.name, warning)
    return CorpusEntry(config, manifest, partitions, grammar, kept=kept or Kept())


def unknown_corpus(name: str) -> str:
    """The same words for a corpus that does not exist and one the viewer may not use (the search page's too)."""
    return f"there is no corpus {name!r} open to you: it does not exist, or it needs a login or a group's right"


MAX_CORPORA = 8
"""Corpora one search runs on at most (``corpus=a,b,…``)."""
UNIONS_KEPT = 256
"""Unions of corpora kept made (each is a list of partitions): a caller naming ever new combinations
makes new ones, never more memory."""


def union(name: str, members: list[CorpusEntry]) -> CorpusEntry:
    """The corpora searched as one: their partitions in order, offsets shifted, the attributes they share."""
    def shared(lists: list[list[str]]) -> list[str]:
        return [a for a in lists[0] if all(a in other for other in lists[1:])]

    partitions: list[Partition] = []
    entries: list[ManifestPartition] = []
    start = 0
    for member in members:
        for p in member.partitions:
            partitions.append(Partition(p.id, p.size, start + p.offset, p.nodes))
            entries.append(ManifestPartition.model_construct(id=p.id, size=p.size, offset=start + p.offset,
                                                             data=Path()))
        start += member.size
    ids = [p.id for p in partitions]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise BadParameter(f"corpus={name}: these corpora share partition ids ({', '.join(twice)}) and cannot be "
                           "searched together")
    manifest = Manifest.model_construct(
        corpus=name, size=start, charset=members[0].manifest.charset,
        p_attributes=shared([m.p_attributes for m in members]), s_attributes=shared([m.s_attributes for m in members]),
        meta=shared([m.meta for m in members]), registry=Path(), partitions=entries)
    config = CorpusConfig.model_construct(
        name=name, title=" + ".join(m.config.title or m.name for m in members),
        description="Several corpora searched at once: " + ", ".join(m.name for m in members), language="",
        version="; ".join(f"{m.name} {m.config.version}" for m in members if m.config.version),
        manifest=Path(), nodes={p.id: list(p.nodes) for p in partitions}, citation="", attributes={},
        sketch_grammar=None, gdex=members[0].config.gdex)  # sort=gdex refuses members whose rules differ
    return CorpusEntry(config, manifest, partitions, None, tuple(members), kept=members[0].kept)


PublishedSource = Callable[[int | None], tuple[int, list[CorpusConfig]] | None]
"""The published corpora (the workshop's, in the account database): given the version this process
has, None when it is still current, else (the version now, the corpora's configurations)."""
REFRESH_SECONDS = 1.0
"""How often at most a process asks whether the published corpora changed (one row read)."""


class CorpusCatalogue:
    """All configured corpora by name, and the published ones (``published``: read again when their
    version changes, asked at most once a second); ``a,b`` names a union of several (``union``)."""

    def __init__(self, settings: FrontendSettings, published: PublishedSource | None = None) -> None:
        self.kept = Kept()  # the nodes' answers about the corpora, for all of them (each entry holds it)
        self.configured = {c.name: load_corpus(c, self.kept) for c in settings.corpora}
        self._corpora = dict(self.configured)
        self._published = published
        self._version: int | None = None
        self._asked = -REFRESH_SECONDS
        self._unions: Lru[str, CorpusEntry] = Lru(UNIONS_KEPT)  # the last UNIONS_KEPT asked for

    @property
    def corpora(self) -> dict[str, CorpusEntry]:
        """Every corpus served now: the configured ones and the published ones."""
        if self._published is not None and time.monotonic() - self._asked >= REFRESH_SECONDS:
            self._asked = time.monotonic()
            changed = self._published(self._version)
            if changed is not None:
                version, configs = changed
                corpora = dict(self.configured)
                for config in configs:
                    if config.name in corpora:
                        continue  # a configured corpus keeps its name (publishing refuses it)
                    try:
                        corpora[config.name] = load_corpus(config, self.kept)
                    except ConfigError as exc:  # its files are gone: the others are still served
                        logging.getLogger("cowbird.frontend").warning("published corpus %s: %s", config.name, exc)
                self._corpora, self._version = corpora, version
                self._unions.clear()
        return self._corpora

    def get(self, name: str, user: Viewer = ANONYMOUS) -> CorpusEntry:
        if "," in name:
            return self._union(name, user)
        corpus = self.corpora.get(name)
        if corpus is None or not corpus.visible_to(user):  # a protected corpus is invisible, not forbidden
            known = ", ".join(sorted(c.name for c in self.visible(user))) or "none"
            raise UnknownCorpus(f"{unknown_corpus(name)} (available: {known})")
        return corpus

    def visible(self, user: Viewer = ANONYMOUS) -> list[CorpusEntry]:
        return [c for c in self.corpora.values() if c.visible_to(user)]

    def _union(self, name: str, user: Viewer) -> CorpusEntry:
        names = [n.strip() for n in name.split(",")]
        if any(not n for n in names) or len(set(names)) < len(names):
            raise BadParameter(f"corpus={name}: name each corpus once, separated by commas (corpus=web,sample)")
        if len(names) > MAX_CORPORA:
            raise BadParameter(f"corpus={name}: at most {MAX_CORPORA} corpora at once")
        members = [self.get(n, user) for n in names]  # each one the viewer may use (else: unknown corpus)
        key = ",".join(names)
        found = self._unions.get(key)
        if found is None:
            found = union(key, members)
            self._unions.put(key, found)
        return found
