"""How VRT input is read: cwb-encode's rules for fields, entities, tags and regions, and clean errors."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from cowbird.store import CwbCorpus, VrtError
from tests.store.helpers import encode_text, regions, tokens


def test_entities_blanks_and_empty_fields(tmp_path: Path) -> None:
    vrt = "<s>\n&lt;b&gt;\tX\n  a  \tDT \nfish&amp;chips\t\nAT&#38;T\t&#x41;\n&amp;lt;\tSYM\n</s>\n"
    _, registry = encode_text(tmp_path, vrt)
    corpus = CwbCorpus.open(registry, "test")
    assert tokens(corpus) == ["<b>", "a", "fish&chips", "AT&T", "&lt;"]
    assert tokens(corpus, "pos") == ["X", "DT", "__UNDEF__", "A", "SYM"]


def test_over_long_value_is_cut_like_cwb_encode(tmp_path: Path) -> None:
    long_word = "é" * 3000  # 6000 bytes
    warnings: list[str] = []
    _, registry = encode_text(tmp_path, f"<s>\n{long_word}\tNN\n</s>\n", warnings=warnings)
    value = tokens(CwbCorpus.open(registry, "test"))[0]
    assert value == "é" * 2047 + "$"
    assert len(value.encode()) == 4095
    assert any("truncated" in w for w in warnings)


def test_wrong_number_of_columns_names_file_and_line(tmp_path: Path) -> None:
    with pytest.raises(VrtError) as error:
        encode_text(tmp_path, "<s>\na\tDT\nb\n</s>\n")
    assert error.value.line == 3
    assert "has 1 column, expected 2" in str(error.value)
    assert str(error.value).startswith(str(tmp_path / "input.vrt") + ":3:")


def test_invalid_utf8_names_the_line_and_writes_nothing(tmp_path: Path) -> None:
    with pytest.raises(VrtError) as error:
        encode_text(tmp_path, b"<s>\na\tDT\n\xff\tNN\n</s>\n")
    assert error.value.line == 3
    assert "invalid utf8" in str(error.value)
    assert not (tmp_path / "registry" / "test").exists()
    assert not any(p.name.startswith(".data.partial") for p in tmp_path.iterdir())


def test_failed_encoding_keeps_an_existing_corpus(tmp_path: Path) -> None:
    encode_text(tmp_path, "<s>\nold\tNN\n</s>\n")
    with pytest.raises(VrtError):
        encode_text(tmp_path, "<s>\nnew\tNN\nbad\n</s>\n")
    assert tokens(CwbCorpus.open(tmp_path / "registry", "test")) == ["old"]


def test_unclosed_region_is_closed_at_the_last_token_with_a_warning(tmp_path: Path) -> None:
    warnings: list[str] = []
    _, registry = encode_text(tmp_path, '<s id="1">\na\tX\nb\tX\n', warnings=warnings)
    assert regions(CwbCorpus.open(registry, "test"), "s_id") == [(0, 1, "1")]
    assert any("missing </s> tag inserted at end of input" in w for w in warnings)


def test_stray_end_tag_is_ignored_with_file_and_line(tmp_path: Path) -> None:
    warnings: list[str] = []
    _, registry = encode_text(tmp_path, "<s>\na\tX\n</s>\n</s>\n", warnings=warnings)
    assert regions(CwbCorpus.open(registry, "test"), "s") == [(0, 0, None)]
    assert any(w.endswith(":4: closing tag </s> without matching opening tag ignored") for w in warnings)


def test_undeclared_tag_is_inserted_literally_as_a_token(tmp_path: Path) -> None:
    warnings: list[str] = []
    _, registry = encode_text(tmp_path, "<s>\na\tX\n<b>\nc\tY\n</s>\n", warnings=warnings)
    corpus = CwbCorpus.open(registry, "test")
    assert tokens(corpus) == ["a", "<b>", "c"]
    assert tokens(corpus, "pos") == ["X", "__UNDEF__", "Y"]
    assert any("<b> not declared, inserted literally" in w and ":3:" in w for w in warnings)


def test_line_that_looks_like_a_token_stays_a_token(tmp_path: Path) -> None:
    _, registry = encode_text(tmp_path, "<s>\n<\tSYM\n</s>\n")
    assert tokens(CwbCorpus.open(registry, "test")) == ["<"]


def test_empty_regions_are_dropped_and_values_follow_written_regions(tmp_path: Path) -> None:
    vrt = '<s id="a">\n</s>\n<s id="b">\nx\tX\n</s>\n<s id="c">\ny\tY\n</s>\n'
    _, registry = encode_text(tmp_path, vrt)
    corpus = CwbCorpus.open(registry, "test")
    assert regions(corpus, "s_id") == [(0, 0, "b"), (1, 1, "c")]
    assert (tmp_path / "data" / "s_id.avs").read_bytes() == b"b\0c\0"


def test_flat_element_closes_the_open_region(tmp_path: Path) -> None:
    _, registry = encode_text(tmp_path, "<p>\na\tX\n<p>\nb\tX\nc\tX\n</p>\n", s_attributes=["p"])
    assert regions(CwbCorpus.open(registry, "test"), "p") == [(0, 0, None), (1, 2, None)]


def test_depth_zero_drops_nested_regions_with_their_end_tags(tmp_path: Path) -> None:
    vrt = "<s>\na\tX\n<s>\nb\tX\n</s>\nc\tX\n</s>\n"
    _, registry = encode_text(tmp_path, vrt, s_attributes=["s:0"])
    assert regions(CwbCorpus.open(registry, "test"), "s") == [(0, 2, None)]


def test_one_level_of_embedding_goes_to_s1(tmp_path: Path) -> None:
    vrt = '<s id="out">\na\tX\n<s id="in">\nb\tX\n</s>\nc\tX\n</s>\n'
    _, registry = encode_text(tmp_path, vrt, s_attributes=["s:1+id"])
    corpus = CwbCorpus.open(registry, "test")
    assert regions(corpus, "s_id") == [(0, 2, "out")]
    assert regions(corpus, "s_id1") == [(1, 1, "in")]
    assert corpus.s_attribute_names == ["s", "s1", "s_id", "s_id1"]


@pytest.mark.parametrize(("vrt", "declaration", "expected"), [
    pytest.param("<text id=\"a&amp;b\" genre='x'>\nw\tX\n</text>\n<text>\nv\tX\n</text>\n", "text:0+id+genre",
                 {"text_id": [(0, 0, "a&b"), (1, 1, "")], "text_genre": [(0, 0, "x"), (1, 1, "")]},
                 id="keys-missing-are-empty-and-entities-decoded"),
    pytest.param("<u who=\"A\"  n='1'>\nw\tX\n</u>\n<u>\nv\tX\n</u>\n", "-V u:0+who",
                 {"u": [(0, 0, "who=\"A\"  n='1'"), (1, 1, "")], "u_who": [(0, 0, "A"), (1, 1, "")]},
                 id="v-keeps-the-whole-attribute-string"),
])
def test_annotation_values(
    tmp_path: Path, vrt: str, declaration: str, expected: dict[str, list[tuple[int, int, str]]]
) -> None:
    _, registry = encode_text(tmp_path, vrt, s_attributes=[declaration])
    corpus = CwbCorpus.open(registry, "test")
    assert {name: regions(corpus, name) for name in expected} == expected


def test_v_is_written_to_the_registry(tmp_path: Path) -> None:
    _, registry = encode_text(tmp_path, "<u who=\"A\">\nw\tX\n</u>\n", s_attributes=["-V u:0+who"])
    assert "STRUCTURE u                    # [annotations]\n" in (registry / "test").read_text()


def test_annotations_of_a_plain_element_are_not_stored(tmp_path: Path) -> None:
    warnings: list[str] = []
    _, registry = encode_text(tmp_path, '<u who="A">\nw\tX\n</u>\n', s_attributes=["u"], warnings=warnings)
    assert regions(CwbCorpus.open(registry, "test"), "u") == [(0, 0, None)]
    assert any("annotations of s-attribute <u> not stored" in w for w in warnings)


def test_gzip_input_and_crlf_line_ends(tmp_path: Path) -> None:
    data = gzip.compress(b"<s id=\"1\">\r\nthe\tDT\r\ncat\tNN\r\n</s>\r\n")
    source = tmp_path / "in.vrt.gz"
    source.write_bytes(data)
    from cowbird.store import EncodeOptions, Encoder, parse_s_declaration

    Encoder(
        EncodeOptions(source, tmp_path / "d", tmp_path / "r" / "gz", ["word", "pos"], [parse_s_declaration("s:0+id")],
                      charset="utf8", xml=True, skip_blank=True, strip_blanks=True)
    ).run()
    corpus = CwbCorpus.open(tmp_path / "r", "gz")
    assert tokens(corpus) == ["the", "cat"]
    assert regions(corpus, "s_id") == [(0, 1, "1")]


def test_region_values_of_any_length_read_back_whole(tmp_path: Path) -> None:
    urls = ["http://a.example/" + "x" * n for n in (0, 239, 240, 1000, 3000)]  # around the 256-byte read window
    vrt = "".join(f'<text url="{url}">\nw\tNN\n</text>\n' for url in urls)
    _, registry = encode_text(tmp_path, vrt, s_attributes=["text:0+url"])
    assert [value for _, _, value in regions(CwbCorpus.open(registry, "test"), "text_url")] == urls
