"""The CWB-format corpus store: VRT reader, encoder and partitioner, manifest, memory-mapped reader.

It knows files, not queries: ``Encoder`` writes what cwb-encode and cwb-makeall write (optionally
cut into partitions, described by a ``Manifest``); ``CwbCorpus`` maps a corpus written by real CWB
or by cowbird and gives its attributes.
"""

from cowbird.core.errors import CorpusFormatError, ManifestError, RegistryError, StoreError, VrtError
from cowbird.core.manifest import MANIFEST_FORMAT, Manifest, ManifestPartition
from cowbird.store.encoder import DEFAULT_PARTITION_TOKENS, EncodeOptions, Encoder, EncodeResult
from cowbird.store.info import describe
from cowbird.store.reader import CwbCorpus, PositionalAttribute, Region, StructuralAttribute, read_ints
from cowbird.store.registry import (
    RegistryEntry,
    SAttributeDecl,
    find_registry_file,
    list_registry,
    parse_registry,
    parse_s_declaration,
)

__all__ = [
    "DEFAULT_PARTITION_TOKENS",
    "MANIFEST_FORMAT",
    "CorpusFormatError",
    "CwbCorpus",
    "EncodeOptions",
    "EncodeResult",
    "Encoder",
    "Manifest",
    "ManifestError",
    "ManifestPartition",
    "PositionalAttribute",
    "Region",
    "RegistryEntry",
    "RegistryError",
    "SAttributeDecl",
    "StoreError",
    "StructuralAttribute",
    "VrtError",
    "describe",
    "find_registry_file",
    "list_registry",
    "parse_registry",
    "parse_s_declaration",
    "read_ints",
]
