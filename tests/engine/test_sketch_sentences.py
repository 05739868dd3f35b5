"""Word sketch relations stay inside their sentence: no instance of a shipped grammar's relation
depends on the tokens of another sentence, so shuffling a corpus's sentences changes none of them.

Judged three ways: on a corpus of five sentences written here, counted by hand (a noun ending a
sentence before one that starts with a noun; *time and time*); on corpora generated here (600
English sentences for penn and ud, 600 German ones for stts, many ending and many starting with a
noun or a verb) with their sentences shuffled, counted by cowbird's build; and on EWT with its
sentences shuffled, counted by real CQP 3.4.16 (skips without the reference data). Also: ``cowbird
sketches check``, ``build`` and ``info`` show a grammar's queries that can look past its ``*STRUCTLIMIT``."""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from cowbird.commands.cli import main
from cowbird.engines.native import NativeEngine
from cowbird.node.sketch_cli import count_relation
from cowbird.query import parse_cqp
from cowbird.query.sketch_grammar import MATCHING_STRATEGY, SketchGrammar, load_grammar
from cowbird.store import EncodeOptions, Encoder, parse_s_declaration
from tests.realcqp import RealCqp
from tests.support import ewt_options, reference_cqp, require_reference

Pairs = dict[str, Counter[tuple[str, str]]]

FIVE_SENTENCES = """\
<text id="t1">
<s>
I\tPRP\tI
like\tVBP\tlike
ice\tNN\tice
cream\tNN\tcream
</s>
<s>
cream\tNN\tcream
cakes\tNNS\tcake
sell\tVBP\tsell
</s>
<s>
we\tPRP\twe
ate\tVBD\teat
cake\tNN\tcake
</s>
<s>
time\tNN\ttime
and\tCC\tand
time\tNN\ttime
again\tRB\tagain
</s>
<s>
house\tNN\thouse
and\tCC\tand
home\tNN\thome
</s>
</text>
"""
"""*ice cream* and *ate cake* end their sentences, and the sentence after each starts with a noun."""


def encode_five(base: Path) -> tuple[Path, str]:
    vrt = base / "five.vrt"
    vrt.write_text(FIVE_SENTENCES, encoding="utf-8")
    options = EncodeOptions(
        input=vrt, data_dir=base / "data", registry_file=base / "registry" / "five",
        p_attributes=["word", "pos", "lemma"], s_attributes=[parse_s_declaration("text:0+id"),
                                                             parse_s_declaration("s:0")],
        charset="utf8", xml=True, skip_blank=True, strip_blanks=True,
    )  # fmt: skip
    Encoder(options).run()
    return base / "registry", "five"


def built(engine: NativeEngine, grammar: SketchGrammar) -> Pairs:
    """Each relation's table as ``cowbird sketches build`` counts it, by (headword, collocate) lemma."""
    names = engine.store.p_attribute(grammar.attribute).string_array
    counted: Pairs = {}
    for relation in grammar.relations:
        table = count_relation(engine, [parse_cqp(q) for q in relation.queries], grammar.attribute, relation.symmetric)
        counted[relation.name] = Counter(
            {
                (str(names[h]), str(names[c])): int(n)
                for h, c, n in zip(table.heads.tolist(), table.colls.tolist(), table.counts.tolist(), strict=True)
            }
        )
    return counted


def test_a_noun_ending_a_sentence_counts_whatever_the_next_sentence_starts_with(tmp_path: Path) -> None:
    """Counted by hand: *ice cream* (noun_modifier) and *ate cake* (object) end their sentences and count,
    though the next sentence starts with a noun; *cream cakes sell* counts as before; *time and time* is
    one instance of *time* with *time*, *house and home* one each way."""
    registry, name = encode_five(tmp_path)
    counted = built(NativeEngine.open(registry, name), load_grammar("penn"))
    assert counted["noun_modifier"] == Counter({("cream", "ice"): 1, ("cake", "cream"): 1})
    assert counted["object"] == Counter({("eat", "cake"): 1})
    assert counted["and/or"] == Counter({("time", "time"): 1, ("house", "home"): 1, ("home", "house"): 1})
    assert counted["pp_of"] == Counter()


def shuffle_sentences(source: Path, target: Path, seed: int) -> int:
    """``source`` with its sentences (each ``<s …>`` to ``</s>``) in a random order, every other line in
    its place (so texts and paragraphs stay well formed); the number of sentences."""
    lines = source.read_text(encoding="utf-8").split("\n")
    blocks: list[list[str]] = []
    slots: list[int] = []  # where each sentence stood among the kept lines
    kept: list[str] = []
    sentence: list[str] | None = None
    for line in lines:
        if sentence is None and re.match(r"<s[ >]", line):
            sentence = [line]
        elif sentence is not None:
            sentence.append(line)
            if line.startswith("</s>"):
                slots.append(len(kept))
                kept.append("")
                blocks.append(sentence)
                sentence = None
        else:
            kept.append(line)
    assert sentence is None, "a sentence without its </s>"
    order = list(range(len(blocks)))
    random.Random(seed).shuffle(order)
    assert order != sorted(order)
    for slot, block in zip(slots, order, strict=True):
        kept[slot] = "\n".join(blocks[block])
    target.write_text("\n".join(kept), encoding="utf-8")
    return len(blocks)


def tokens(table: str) -> list[tuple[str, str, str, str]]:
    """The tokens of a table of one token a line: its word, tag, UD tag and lemma, in columns."""
    rows = []
    for line in table.strip().splitlines():
        word, tag, universal, lemma = line.split()
        rows.append((word, tag, universal, lemma))
    return rows


WORDS = tokens("""
    house   NN    NOUN   house
    houses  NNS   NOUN   house
    party   NN    NOUN   party
    cream   NN    NOUN   cream
    time    NN    NOUN   time
    home    NN    NOUN   home
    old     JJ    ADJ    old
    good    JJ    ADJ    good
    make    VB    VERB   make
    made    VBD   VERB   make
    makes   VBZ   VERB   make
    the     DT    DET    the
    of      IN    ADP    of
    in      IN    ADP    in
    with    IN    ADP    with
    to      IN    ADP    to
    and     CC    CCONJ  and
    or      CC    CCONJ  or
    again   RB    ADV    again
    will    MD    AUX    will
    's      POS   PART   's
    my      PRP$  PRON   my
""")
"""The generated English corpus's tokens: word, Penn tag, UD tag, lemma."""

GERMAN = tokens("""
    Haus       NN       NOUN   Haus
    Regierung  NN       NOUN   Regierung
    Antrag     NN       NOUN   Antrag
    Berlin     NE       PROPN  Berlin
    neue       ADJA     ADJ    neu
    gut        ADJD     ADJ    gut
    sagt       VVFIN    VERB   sagen
    gesagt     VVPP     VERB   sagen
    stellen    VVINF    VERB   stellen
    ist        VAFIN    AUX    sein
    der        ART      DET    die
    des        ART      DET    die
    von        APPR     ADP    von
    für        APPR     ADP    für
    mit        APPR     ADP    mit
    im         APPRART  ADP    in
    und        KON      CCONJ  und
    nicht      PTKNEG   PART   nicht
    oft        ADV      ADV    oft
""")
"""The generated German corpus's tokens: word, STTS tag (in ``pos``), UD tag, lemma."""


def write_generated(path: Path, words: list[tuple[str, str, str, str]], seed: int = 3) -> None:
    """Twenty texts of 30 sentences of 1 to 7 tokens drawn from ``words`` (nouns and verbs twice as
    likely): many sentences end in a noun or a verb and many start with one."""
    draw = random.Random(seed)
    weighted = words + [w for w in words if w[2] in ("NOUN", "PROPN", "VERB")]
    lines = []
    for text in range(20):
        lines.append(f'<text id="g{text}">')
        for _ in range(30):
            lines.append("<s>")
            lines += ["\t".join(draw.choice(weighted)) for _ in range(draw.randint(1, 7))]
            lines.append("</s>")
        lines.append("</text>")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.mark.parametrize(("grammar_name", "words"), [("penn", WORDS), ("ud", WORDS), ("stts", GERMAN)])
def test_shuffling_the_sentences_changes_no_instance_on_a_generated_corpus(
    tmp_path: Path, grammar_name: str, words: list[tuple[str, str, str, str]]
) -> None:
    """600 generated sentences and the same shuffled: every relation's counts by lemma pair, as the
    build counts them, are the same (against real CQP: EWT below, tests/engine/test_sketches.py)."""
    grammar = load_grammar(grammar_name)
    write_generated(tmp_path / "generated.vrt", words)
    assert shuffle_sentences(tmp_path / "generated.vrt", tmp_path / "shuffled.vrt", 64) == 600
    tables = []
    for name in ("generated", "shuffled"):
        options = EncodeOptions(
            input=tmp_path / f"{name}.vrt", data_dir=tmp_path / name / "data",
            registry_file=tmp_path / name / "registry" / name, p_attributes=["word", "pos", "upos", "lemma"],
            s_attributes=[parse_s_declaration("text:0+id"), parse_s_declaration("s:0")], charset="utf8", xml=True,
            skip_blank=True, strip_blanks=True,
        )  # fmt: skip
        Encoder(options).run()
        tables.append(built(NativeEngine.open(tmp_path / name / "registry", name), grammar))
    original, shuffled = tables
    looking = [r.name for r in grammar.relations if any(":]" in q for q in r.queries)]
    assert sum(sum(original[name].values()) for name in looking) > 100  # relations with a final lookahead
    for relation in grammar.relations:
        assert shuffled[relation.name] == original[relation.name], relation.name


def cqp_counts(judge: RealCqp, grammar: SketchGrammar) -> Pairs:
    """Each relation's instances by lemma pair from real CQP's tabulate (a symmetric relation's pair of
    positions once, whichever way round, counted for both its words: once when they are the same)."""
    counted: Pairs = {}
    for relation in grammar.relations:
        pairs: dict[tuple[int, int], tuple[str, str]] = {}
        for query in relation.queries:
            out = judge.run(
                f"set MatchingStrategy {MATCHING_STRATEGY};\nA = {query};\n"
                f"tabulate A target, keyword, target {grammar.attribute}, keyword {grammar.attribute};"
            )
            for line in out.splitlines():
                head, coll, head_value, coll_value = line.split("\t")
                if relation.symmetric and int(coll) < int(head):
                    head, coll, head_value, coll_value = coll, head, coll_value, head_value
                pairs[(int(head), int(coll))] = (head_value, coll_value)
        found = Counter(pairs.values())
        if relation.symmetric:
            found += Counter({(c, h): n for (h, c), n in found.items() if h != c})
        counted[relation.name] = found
    return counted


@pytest.mark.slow  # 5.9 s here (make quick leaves it out)
def test_shuffling_ewts_sentences_changes_no_instance_in_real_cqp(tmp_path: Path) -> None:
    """EWT as the reference encodes it and EWT with its 16,622 sentences shuffled (encoded by cowbird),
    each relation of penn and ud run by real CQP: the same instances by lemma pair. (With penn's old
    ``[:pos!="NN.*":]`` at the end, a noun ending a sentence counted only when the next sentence did
    not start with a noun.)"""
    reference = require_reference()
    shuffled = tmp_path / "ewt-shuffled.vrt"
    assert shuffle_sentences(reference / "ewt.vrt", shuffled, 2026) == 16_622
    options = ewt_options(tmp_path / "data", tmp_path / "registry" / "ewtshuffled")
    Encoder(replace(options, input=shuffled)).run()
    original = RealCqp(reference_cqp(), reference / "cwb" / "registry", "EWT", 120)
    judge = RealCqp(reference_cqp(), tmp_path / "registry", "EWTSHUFFLED", 120)
    try:
        for name in ("penn", "ud"):
            grammar = load_grammar(name)
            before, after = cqp_counts(original, grammar), cqp_counts(judge, grammar)
            assert sum(before["noun_modifier"].values()) > 5000
            for relation in grammar.relations:
                assert after[relation.name] == before[relation.name], (name, relation.name)
    finally:
        original.close()
        judge.close()


OLD_STYLE = """\
*STRUCTLIMIT s
*DEFAULTATTR pos
*DUAL
=noun_modifier/noun_modifies
    2:"NN.*" 1:"NN.*" [:pos!="NN.*":]
*DUAL
=object/object_of
    1:"VB.*" 2:"NN.*" ( [:pos!="NN.*":] | </s> )
"""


def test_the_commands_warn_of_a_query_that_looks_past_the_sentence(tmp_path: Path) -> None:
    """``cowbird sketches check`` and ``build`` say on stderr which query can read the next sentence
    (file and line), and ``cowbird info`` shows the warning beside the table built from it."""
    grammar = tmp_path / "mine.wsdef"
    grammar.write_text(OLD_STYLE, encoding="utf-8")
    warning = (
        f'warning: {grammar}:5: relation noun_modifier: the lookahead [:pos!="NN.*":] can end the match, '
        "so it reads the token after the match: the first token of the next s when the match ends its s; "
        'write ( [:pos!="NN.*":] | </s> ) for the s\'s end to answer there'
    )
    runner = CliRunner()
    checked = runner.invoke(main, ["sketches", "check", str(grammar)])
    assert checked.exit_code == 0, checked.output
    unlabelled = [f"warning: {grammar}:{line}: relation {name}: has no *LABEL: the page and the API show its id "
                  f"{name!r} as its name (write *LABEL text under =name, %w for the headword)"
                  for line, name in ((4, "noun_modifier"), (4, "noun_modifies"), (7, "object"), (7, "object_of"))]
    assert checked.stderr.splitlines() == [warning, *unlabelled]
    assert checked.stdout.splitlines()[:2] == [
        "noun_modifier/noun_modifies",
        '  5: @1 [pos="NN.*"] @[pos="NN.*"] [:pos!="NN.*":] within s',
    ]
    assert checked.stdout.splitlines()[-1] == f"{grammar}: 2 relations, 5 warnings"
    shipped = runner.invoke(main, ["sketches", "check", "penn"])
    assert shipped.exit_code == 0 and shipped.stderr == "" and "14 relations, 0 warnings" in shipped.stdout

    registry, name = encode_five(tmp_path)
    done = runner.invoke(main, ["sketches", "build", "-r", str(registry), "--grammar", str(grammar), name])
    assert done.exit_code == 0, done.output
    assert done.stderr.splitlines() == [warning]
    assert "built 2 tables, kept 0" in done.stdout
    info = runner.invoke(main, ["info", "-r", str(registry), name])
    assert info.exit_code == 0, info.output
    lines = info.stdout.splitlines()
    [row] = [i for i, line in enumerate(lines) if "mine/noun_modifier" in line]
    assert lines[row + 1] == f"    {warning}"
    [other] = [i for i, line in enumerate(lines) if "mine/object" in line]
    assert other + 1 == len(lines) or "warning" not in lines[other + 1]
