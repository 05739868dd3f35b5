"""Shared fixtures: the sample corpus encoded once per session, and the shared reference data."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend_node.store.encoder import EncodeOptions, Encoder
from backend_node.store.registry import parse_s_declaration

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_VRT = ROOT / "tests" / "data" / "sample.vrt"
REFERENCE = (ROOT / ".." / "shared" / "reference").resolve()

SAMPLE_P = ["word", "pos", "lemma"]
SAMPLE_S = ["text:0+id+genre+year+url", "s:0+id"]


def sample_options(data_dir: Path, registry_file: Path, **extra: object) -> EncodeOptions:
    """The encoding the README uses for the sample corpus."""
    return EncodeOptions(
        input=SAMPLE_VRT,
        data_dir=data_dir,
        registry_file=registry_file,
        p_attributes=list(SAMPLE_P),
        s_attributes=[parse_s_declaration(d) for d in SAMPLE_S],
        charset="utf8",
        xml=True,
        skip_blank=True,
        strip_blanks=True,
        **extra,  # type: ignore[arg-type]
    )


@pytest.fixture(scope="session")
def sample_registry(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Registry directory holding the sample corpus as ``sample`` (one partition)."""
    base = tmp_path_factory.mktemp("sample")
    Encoder(sample_options(base / "data" / "sample", base / "registry" / "sample")).run()
    return base / "registry"


@pytest.fixture(scope="session")
def reference() -> Path:
    """``../shared/reference``; tests that need it skip, saying why, when it is absent."""
    if not (REFERENCE / "ewt.vrt").is_file():
        pytest.skip(f"reference data not found at {REFERENCE} (the shared/ folder beside the project)")
    return REFERENCE
