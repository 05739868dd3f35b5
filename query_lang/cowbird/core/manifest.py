"""The corpus manifest: what a partitioned corpus is made of, written by the encoder, read by the front end.

One pydantic model is the contract for both sides. The ``format`` member names the version; a
reader refuses a version it does not know, and a missing or malformed member is a one-line
``ManifestError`` naming the file, never a ``KeyError``. Version 1 (``annotated_s_attributes``
instead of ``meta``) is still read.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from cowbird.core.errors import ManifestError

MANIFEST_FORMAT: Literal["cowbird-manifest/2"] = "cowbird-manifest/2"
_FORMAT_1 = "cowbird-manifest/1"


def read_json(path: Path, error: Callable[[str], Exception], what: str = "") -> Any:
    """The JSON value a file holds; a file that cannot be read or is not JSON raises ``error`` with one
    line naming it (``what``: what the file is, "manifest ")."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise error(f"cannot read {what}{path}: {exc.strerror}") from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(f"{what}{path} is not JSON ({exc})") from exc


class ManifestPartition(BaseModel):
    """One partition: a complete CWB corpus holding the tokens ``offset`` .. ``offset + size - 1``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, description="CWB corpus id of the partition (its registry file name).")
    size: int = Field(ge=0, description="Tokens in the partition.")
    offset: int = Field(ge=0, description="Global position of its first token.")
    data: Path = Field(description="The partition's data directory.")


class Manifest(BaseModel):
    """A corpus cut into partitions, with the attributes every partition has."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    format: Literal["cowbird-manifest/2"] = MANIFEST_FORMAT
    corpus: str = Field(min_length=1, description="Corpus id (lowercase, as in the registry).")
    size: int = Field(ge=0, description="Tokens in all partitions.")
    charset: str = Field(description="Character set of the corpus data (cwb-encode's name).")
    p_attributes: list[str] = Field(min_length=1, description="Positional attributes, word first.")
    s_attributes: list[str] = Field(description="Structural attributes (regions).")
    meta: list[str] = Field(description="The s-attributes whose regions carry values (metadata).")
    registry: Path = Field(description="The registry directory of the partitions.")
    partitions: list[ManifestPartition] = Field(min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _version(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        version = data.get("format")
        if version == _FORMAT_1:  # the same content, with the old name of 'meta'
            data = dict(data)
            data["meta"] = data.pop("annotated_s_attributes", [])
            data["format"] = MANIFEST_FORMAT
            return data
        if version not in (None, MANIFEST_FORMAT):
            raise ValueError(
                f"unknown manifest format {version!r} (this cowbird reads {MANIFEST_FORMAT} and {_FORMAT_1}); "
                "re-encode the corpus or upgrade cowbird"
            )
        return data

    @model_validator(mode="after")
    def _consistent(self) -> Manifest:
        expected = 0
        for partition in self.partitions:
            if partition.offset != expected:
                raise ValueError(
                    f"partition {partition.id} starts at {partition.offset}, but the partitions before it end "
                    f"at {expected}"
                )
            expected += partition.size
        if expected != self.size:
            raise ValueError(f"the partitions hold {expected} tokens, but 'size' says {self.size}")
        unknown = sorted(set(self.meta) - set(self.s_attributes))
        if unknown:
            raise ValueError(f"'meta' names {', '.join(unknown)}, which are not s-attributes")
        return self

    @classmethod
    def load(cls, path: Path) -> Manifest:
        """Read and check a manifest; every problem is a one-line ``ManifestError`` naming the file."""
        data = read_json(path, ManifestError, "manifest ")
        if not isinstance(data, dict) or "format" not in data:
            raise ManifestError(f"manifest {path} has no 'format' member: it is not a cowbird manifest")
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first.get("loc", ()))
            message = str(first["msg"]).removeprefix("Value error, ")
            if first["type"] == "missing":
                message = "missing"
            raise ManifestError(f"manifest {path}: {where + ': ' if where else ''}{message}") from exc

    def write(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.model_dump_json(indent=2) + "\n", encoding="utf-8")
