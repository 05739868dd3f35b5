"""Configured corpora: their manifests, partitions with global offsets, and node URLs.

A global position is the partition's token offset plus the position inside the partition;
:meth:`CorpusEntry.locate` maps it back.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from cowbird.core.errors import OutOfRange, StoreError, UnknownCorpus
from cowbird.core.manifest import Manifest
from cowbird.frontend.schemas import CorpusSummary, PartitionSummary
from cowbird.frontend.settings import AccessLevel, CorpusConfig, FrontendSettings
from cowbird.frontend.viewer import ANONYMOUS, Viewer
from cowbird.query.sketch_grammar import SketchGrammar, SketchGrammarError, load_grammar
from cowbird.serving.config import ConfigError


@dataclass(frozen=True)
class Partition:
    """A partition of a corpus and the nodes that serve it, in the order they are tried."""

    id: str
    size: int
    offset: int
    nodes: tuple[str, ...]


@dataclass
class CorpusEntry:
    """A corpus the front end serves: its configuration, its manifest and where its partitions live."""

    config: CorpusConfig
    manifest: Manifest
    partitions: list[Partition]
    grammar: SketchGrammar | None = None  # word sketches' relations (sketch_grammar), checked at start
    _offsets: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._offsets = [p.offset for p in self.partitions]

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
            partitions=[PartitionSummary(id=p.id, size=p.size, offset=p.offset) for p in self.partitions],
        )


def load_corpus(config: CorpusConfig) -> CorpusEntry:
    """Read the manifest and check that every partition has a node (and no unknown partitions)."""
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
    return CorpusEntry(config, manifest, partitions, grammar)


def unknown_corpus(name: str) -> str:
    """The same words for a corpus that does not exist and one the viewer may not use (the search page's too)."""
    return f"there is no corpus {name!r} open to you: it does not exist, or it needs a login or a group's right"


class CorpusCatalogue:
    """All configured corpora by name."""

    def __init__(self, settings: FrontendSettings) -> None:
        self.corpora = {c.name: load_corpus(c) for c in settings.corpora}

    def get(self, name: str, user: Viewer = ANONYMOUS) -> CorpusEntry:
        corpus = self.corpora.get(name)
        if corpus is None or not corpus.visible_to(user):  # a protected corpus is invisible, not forbidden
            known = ", ".join(sorted(c.name for c in self.visible(user))) or "none"
            raise UnknownCorpus(f"{unknown_corpus(name)} (available: {known})")
        return corpus

    def visible(self, user: Viewer = ANONYMOUS) -> list[CorpusEntry]:
        return [c for c in self.corpora.values() if c.visible_to(user)]
