"""The memory-mapped reader, ``cowbird info`` and the ``cowbird encode`` command line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from cowbird.commands.cli import main
from cowbird.core.errors import UnknownAttribute
from cowbird.store import CorpusFormatError, CwbCorpus, RegistryError
from cowbird.store.registry import format_registry, parse_s_declaration
from tests.support import SAMPLE_VRT


def test_positional_attribute_lookups(sample_registry: Path) -> None:
    corpus = CwbCorpus.open(sample_registry, "sample")
    word = corpus.p_attribute("word")
    assert corpus.size == 93
    assert [word.cpos2str(i) for i in range(3)] == ["The", "old", "house"]
    house = word.str2id("house")
    assert house is not None and word.id2str(house) == "house"
    assert word.str2id("castle") is None
    assert word.frequency(house) == 3  # "House" and "houses" are other types
    assert word.positions(house).tolist() == [2, 19, 81]
    assert word.cpos2str(88) == "<3"  # written &lt;3 in the VRT
    order = [word.strings[i] for i in word.sorted_ids.tolist()]
    assert order.index("House") < order.index("The") < order.index("a")  # strcmp: uppercase first


def test_structural_attribute_regions(sample_registry: Path) -> None:
    corpus = CwbCorpus.open(sample_registry, "sample")
    genre = corpus.s_attribute("text_genre")
    assert [genre.region(i).value for i in range(len(genre))] == ["news", "forum", "blog", "news"]
    numbers = corpus.s_attribute("s").region_numbers(np.array([0, 7, 8, 92]))
    assert numbers.tolist() == [0, 0, 1, 10]
    region = corpus.s_attribute("s_id").region_at(8)
    assert region is not None and (region.start, region.end, region.value) == (8, 14, "s2")


def test_unknown_attribute_and_corpus_errors_are_clear(sample_registry: Path) -> None:
    corpus = CwbCorpus.open(sample_registry, "sample")
    with pytest.raises(UnknownAttribute, match="has no p-attribute 'tag'"):
        corpus.p_attribute("tag")
    with pytest.raises(RegistryError, match="no corpus 'nope' in registry"):
        CwbCorpus.open(sample_registry, "nope")


def test_an_incomplete_compressed_stream_is_refused_with_a_hint(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "word.huf").write_bytes(b"\0" * 8)
    registry = tmp_path / "registry"
    registry.mkdir()
    (registry / "zip").write_text(format_registry("zip", str(data), "utf8", ["word"], []))
    with pytest.raises(CorpusFormatError, match=r"missing data file .*word.corpus \(and no complete compressed "
                       r"stream word.huf, .hcd, .huf.syn\)"):
        CwbCorpus.open(registry, "zip")


def test_registry_blocks_for_embedding_and_flat_elements() -> None:
    text = format_registry("x", "/d", "utf8", ["word"], [parse_s_declaration("s:2+id"), parse_s_declaration("p")])
    assert "# <s id=\"..\"> ... </s>\n# (2 levels of embedding: <s>, <s1>, <s2>).\nSTRUCTURE s\n" in text
    assert "STRUCTURE s_id2                # [annotations]\n\n# <p> ... </p>\nSTRUCTURE p\n" in text
    assert format_registry("x", "./d", "utf8", [], []).count('HOME "./d"') == 1


def test_info_prints_what_cwb_describe_corpus_prints(sample_registry: Path) -> None:
    result = CliRunner().invoke(main, ["info", "-r", str(sample_registry), "sample"])
    assert result.exit_code == 0, result.output
    assert "size (tokens):  93\n" in result.output
    assert "p-ATT word                     93 tokens,       65 types\n" in result.output
    assert "s-ATT text_genre                4 regions (with annotations)\n" in result.output
    assert "s-ATT s                        11 regions\n" in result.output


def test_encode_command_with_combined_flags(tmp_path: Path) -> None:
    args = ["encode", "-f", str(SAMPLE_VRT), "-d", str(tmp_path / "d"), "-R", str(tmp_path / "r" / "demo"),
            "-c", "utf8", "-xsB", "-P", "pos", "-P", "lemma", "-S", "text:0+id+genre+year+url", "-V", "s:0+id"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "encoded 93 tokens" in result.output
    registry = (tmp_path / "r" / "demo").read_text()
    assert registry.index("STRUCTURE text_url") < registry.index("STRUCTURE s                    # [annotations]")
    corpus = CwbCorpus.open(tmp_path / "r", "demo")
    assert corpus.s_attribute("s").region(0).value == 'id="s1"'


@pytest.mark.e2e
def test_encode_errors_are_one_line_without_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "bad.vrt"
    bad.write_text("<s>\na\tb\n</s>\n")
    args = ["encode", "-f", str(bad), "-d", str(tmp_path / "d"), "-R", str(tmp_path / "r" / "bad"), "-c", "utf8",
            "-xsB", "-S", "s"]
    process = subprocess.run([sys.executable, "-m", "cowbird", *args], capture_output=True, text=True)
    assert process.returncode == 1
    assert process.stderr.strip() == f"Error: {bad}:2: token line has 2 columns, expected 1 " \
        "(one per positional attribute, separated by tabs)"
    assert "Traceback" not in process.stderr


@pytest.mark.parametrize("command", [[], ["encode"], ["info"], ["translate"], ["check"]])
def test_help_on_every_level(command: list[str]) -> None:
    result = CliRunner().invoke(main, [*command, "--help"])
    assert result.exit_code == 0
    assert "Usage:" in result.output


def test_missing_input_and_unwritable_output_are_one_line_errors(tmp_path: Path) -> None:
    missing = CliRunner().invoke(main, ["encode", "-f", str(tmp_path / "nope.vrt"), "-d", str(tmp_path / "d"),
                                        "-R", str(tmp_path / "r" / "x")])
    assert missing.exit_code == 1
    assert missing.stderr.strip() == f"Error: {tmp_path / 'nope.vrt'}: cannot open input: No such file or directory"
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    unwritable = CliRunner().invoke(main, ["encode", "-f", str(SAMPLE_VRT), "-d", str(blocked / "d"), "-R",
                                           str(tmp_path / "r" / "x"), "-c", "utf8", "-xsB", "-S", "s"])
    assert unwritable.exit_code == 1 and unwritable.stderr.startswith("Error: ")
    assert "Traceback" not in unwritable.output


def test_home_is_absolute_unless_relative_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    base = ["encode", "-f", str(SAMPLE_VRT), "-c", "utf8", "-xsB", "-P", "pos", "-P", "lemma",
            "-S", "text:0+id+genre+year+url", "-S", "s:0+id"]  # fmt: skip
    assert CliRunner().invoke(main, [*base, "-d", "data/a", "-R", "registry/a"]).exit_code == 0
    assert f"HOME {tmp_path / 'data' / 'a'}\n" in (tmp_path / "registry" / "a").read_text()
    assert CliRunner().invoke(main, [*base, "-d", "data/b", "-R", "registry/b", "--relative-home"]).exit_code == 0
    assert "HOME data/b" in (tmp_path / "registry" / "b").read_text()


def test_info_and_query_over_a_manifest(tmp_path: Path) -> None:
    """After --partition-tokens, `cowbird info` and `cowbird query` take the manifest and answer for
    the whole corpus with global positions — the same as the corpus encoded in one piece."""
    base = ["encode", "-f", str(SAMPLE_VRT), "-c", "utf8", "-xsB", "-P", "pos", "-P", "lemma",
            "-S", "text:0+id+genre+year+url", "-S", "s:0+id"]  # fmt: skip
    runner = CliRunner()
    whole_encoding = runner.invoke(main, [*base, "-d", str(tmp_path / "whole"), "-R", str(tmp_path / "r" / "whole")])
    assert whole_encoding.exit_code == 0
    manifest = tmp_path / "parts.manifest.json"
    parted = runner.invoke(main, [*base, "-d", str(tmp_path / "parts"), "-R", str(tmp_path / "r" / "parts"),
                                  "--partition-tokens", "40", "--manifest", str(manifest)])
    assert parted.exit_code == 0, parted.output
    registry = str(tmp_path / "r")
    info = runner.invoke(main, ["info", "-r", registry, "--manifest", str(manifest)])
    assert info.exit_code == 0 and info.output.startswith("corpus parts: 93 tokens in 3 partitions")
    assert "parts_p02\t22\t" in info.output
    for query in ('"the"', '[pos="NN"] [pos="VBZ"]', '"house" cut 2'):
        whole = runner.invoke(main, ["query", "-r", registry, "-C", "whole", query]).output
        merged = runner.invoke(main, ["query", "-r", registry, "--manifest", str(manifest), query]).output
        assert merged == whole and merged, query
        counted = runner.invoke(main, ["query", "-r", registry, "--manifest", str(manifest), "--count", query])
        assert counted.output == f"{len(whole.splitlines())}\n"
    lines = runner.invoke(main, ["query", "-r", registry, "--manifest", str(manifest), "--kwic", "2", '"coffee"'])
    assert lines.output.splitlines()[1].strip().startswith("60: serves good <coffee>")
    both = runner.invoke(main, ["query", "-r", registry, "-C", "whole", "--manifest", str(manifest), '"x"'])
    assert both.exit_code == 2 and "either -C CORPUS or --manifest FILE" in both.output
