"""Configured corpora: their manifests, partitions with global offsets, and node URLs.

A global position is the partition's token offset plus the position inside the partition;
:meth:`Corpus.locate` maps it back.
"""

from __future__ import annotations

import bisect
import json
from dataclasses import dataclass, field

from frontend_api.errors import OutOfRange, UnknownCorpus
from frontend_api.settings import CorpusConfig, FrontendSettings


@dataclass(frozen=True)
class Partition:
    id: str
    size: int
    offset: int
    nodes: tuple[str, ...]


@dataclass
class Corpus:
    config: CorpusConfig
    partitions: list[Partition]
    p_attributes: list[str]
    s_attributes: list[str]
    annotated: list[str]
    _offsets: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._offsets = [p.offset for p in self.partitions]

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def size(self) -> int:
        return sum(p.size for p in self.partitions)

    def locate(self, position: int) -> tuple[Partition, int]:
        """The partition holding a global position, and the local position in it."""
        if not 0 <= position < self.size:
            raise OutOfRange(f"position {position} is outside corpus {self.name} (0 to {self.size - 1})")
        index = bisect.bisect_right(self._offsets, position) - 1
        partition = self.partitions[index]
        return partition, position - partition.offset

    def visible_to(self, user: str | None) -> bool:
        """Whether a (possibly anonymous) user may use the corpus.

        Access levels are recorded per corpus; until accounts exist every corpus counts as public.
        """
        return True


def load_corpus(config: CorpusConfig) -> Corpus:
    """Read the manifest and check that every partition has a node (and no unknown partitions)."""
    try:
        manifest = json.loads(config.manifest.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"corpus {config.name}: cannot read manifest {config.manifest}: {exc.strerror}") from exc
    except json.JSONDecodeError as exc:
        raise ValueError(f"corpus {config.name}: manifest {config.manifest} is not JSON ({exc})") from exc
    partitions = []
    known = {p["id"] for p in manifest["partitions"]}
    unknown = sorted(set(config.nodes) - known)
    if unknown:
        raise ValueError(
            f"corpus {config.name}: nodes are configured for unknown partition(s) {', '.join(unknown)} "
            f"(the manifest has: {', '.join(sorted(known))})"
        )
    for entry in manifest["partitions"]:
        nodes = config.nodes.get(entry["id"])
        if not nodes:
            raise ValueError(f"corpus {config.name}: partition {entry['id']} has no node URL in the configuration")
        partitions.append(Partition(entry["id"], int(entry["size"]), int(entry["offset"]),
                                    tuple(n.rstrip("/") for n in nodes)))
    return Corpus(config, partitions, list(manifest["p_attributes"]), list(manifest["s_attributes"]),
                  list(manifest.get("annotated_s_attributes", [])))


class CorpusRegistry:
    """All configured corpora by name."""

    def __init__(self, settings: FrontendSettings) -> None:
        self.corpora = {c.name: load_corpus(c) for c in settings.corpora}

    def get(self, name: str, user: str | None = None) -> Corpus:
        corpus = self.corpora.get(name)
        if corpus is None or not corpus.visible_to(user):
            known = ", ".join(sorted(self.corpora)) or "none"
            raise UnknownCorpus(f"no corpus {name!r} (available: {known})")
        return corpus

    def visible(self, user: str | None) -> list[Corpus]:
        return [c for c in self.corpora.values() if c.visible_to(user)]
