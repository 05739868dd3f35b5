"""``cowbird query``: dump rows, counts, concordance lines, batches, positioned errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from cowbird.commands.cli import main


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_dump_rows_like_cqp(sample_registry: Path) -> None:
    code, out, _ = run("query", "-r", str(sample_registry), "-C", "sample", '"house"')
    assert code == 0
    assert out == "2\t2\n19\t19\n81\t81\n"


def test_count_and_strategy(sample_registry: Path) -> None:
    assert run("query", "-r", str(sample_registry), "-C", "sample", "--count", '[pos="DT"]')[1] == "12\n"
    out = run("query", "-r", str(sample_registry), "-C", "sample", "--strategy", "traditional",
              '[pos="RB"]+ [pos="JJ"]')[1]
    assert out == "28\t30\n29\t30\n"


def test_kwic_lines(sample_registry: Path) -> None:
    code, out, _ = run("query", "-r", str(sample_registry), "-C", "sample", "--kwic", "2", "--show", "lemma",
                       "--limit", "2", '"house"')
    assert code == 0
    assert out.splitlines() == [
        "3",
        "        2: The/the old/old <house/house> stands/stand on/on",
        "       19: to/to the/the <house/house> anyway/anyway !/!",
    ]


def test_batch_timing(sample_registry: Path, tmp_path: Path) -> None:
    batch = tmp_path / "q.tsv"
    batch.write_text('# id\tquery\nq1\t"house"\nq2\t[pos="JJ"] [pos="NNS?"]\n')
    code, out, _ = run("query", "-r", str(sample_registry), "-C", "sample", "--batch", str(batch), "--kwic", "10",
                       "--show", "lemma", "--timing")
    assert code == 0
    rows = [line.split("\t") for line in out.splitlines()]
    assert [(r[0], r[1]) for r in rows] == [("q1", "3"), ("q2", "4")]
    assert all(float(r[2]) >= 0 for r in rows)


@pytest.mark.e2e
def test_bad_query_prints_the_position_and_exits_1(sample_registry: Path) -> None:
    process = subprocess.run(
        [sys.executable, "-m", "cowbird", "query", "-r", str(sample_registry), "-C", "sample", '[word="the"'],
        capture_output=True, text=True,
    )
    assert process.returncode == 1
    assert process.stderr.startswith("query_syntax: unexpected end of the query")
    assert process.stderr.splitlines()[-1].strip() == "^"


def test_unknown_attribute_is_one_line(sample_registry: Path) -> None:
    code, _, err = run("query", "-r", str(sample_registry), "-C", "sample", '[tag="NN"]')
    assert code == 1
    assert err.strip() == "Error: the corpus has no p-attribute 'tag' (it has: word, pos, lemma)"


@pytest.mark.slow
def test_analyses_over_a_manifest_equal_one_corpus_and_real_cqp(tmp_path: Path) -> None:
    """--frequency, --distribution, --collocations and --sort over EWT in four partitions print what
    they print over EWT in one, and the frequencies are CQP's ``count``."""
    from cowbird.store import Encoder
    from tests.realcqp import real_cqp
    from tests.support import ewt_options

    one = Encoder(ewt_options(tmp_path / "one", tmp_path / "registry" / "ewt", partition_tokens=1_000_000)).run()
    four = Encoder(ewt_options(tmp_path / "four", tmp_path / "registry" / "ewt4", partition_tokens=65_000)).run()
    assert four.manifest is not None and len(four.partitions) == 4 and len(one.partitions) == 1
    registry = str(tmp_path / "registry")
    query = '[lemma="go"] within s'
    for analysis in (["--frequency", "word", "--on", "matchend[1]", "--fold", "c"], ["--distribution", "text_genre"],
                     ["--collocations", "lemma", "--window", "4", "--within", "s"], ["--sort", "right1.word"]):
        single = run("query", "-r", registry, "-C", one.partitions[0].id, *analysis, query)
        spread = run("query", "-r", registry, "--manifest", str(four.manifest), *analysis, query)
        assert single[0] == spread[0] == 0, (single, spread)
        assert single[1] == spread[1] and len(single[1].splitlines()) > 5, analysis
    judge = real_cqp()
    try:
        out = judge.run(f"A = {query};\ncount A by word %c on matchend[1];")
    finally:
        judge.close()
    expected = {line.split("\t")[2]: int(line.split("\t")[0]) for line in out.splitlines()}
    printed = run("query", "-r", registry, "--manifest", str(four.manifest), "--frequency", "word", "--on",
                  "matchend[1]", "--fold", "c", query)[1].splitlines()
    assert printed[0] == "frequency\tvalue"
    assert {line.split("\t")[1]: int(line.split("\t")[0]) for line in printed[1:]} == expected
