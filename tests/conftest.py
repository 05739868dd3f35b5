"""Shared fixtures: the sample corpus encoded once per session, and the shared reference data."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend_node.store import EncodeOptions, Encoder, parse_s_declaration

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


def write_synthetic_vrt(path: Path) -> None:
    """60 texts (genre news/blog) of 100 sentences of 10 tokens: words w0..w99, tags P0..P4.

    Position p holds tag P{p % 5} (so P1 is at 1, 6, 11, ...): 60,000 tokens whose hits are easy
    to count, for streams, paging and deliberately slow queries.
    """
    lines = []
    for t in range(60):
        lines.append(f'<text id="t{t}" genre="{"news" if t % 2 else "blog"}">')
        for s in range(100):
            lines.append("<s>")
            lines += [f"w{(t * 7 + s * 3 + k) % 100}\tP{k % 5}" for k in range(10)]
            lines.append("</s>")
        lines.append("</text>")
    path.write_text("\n".join(lines) + "\n")


def synthetic_options(base: Path, **extra: object) -> EncodeOptions:
    source = base / "big.vrt"
    write_synthetic_vrt(source)
    return EncodeOptions(
        source, base / "data", base / "registry" / "big", ["word", "pos"],
        [parse_s_declaration("text:0+id+genre"), parse_s_declaration("s:0")], charset="utf8", xml=True,
        skip_blank=True, strip_blanks=True, **extra,  # type: ignore[arg-type]
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
