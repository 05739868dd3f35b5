"""Relation labels in sketch grammars (``*LABEL``, issue 65): what users read beside each relation's
id, ``%w`` where the headword goes; every relation of every shipped grammar has one, no two share
one, and ``cowbird sketches check`` warns of a relation without one."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from cowbird.commands.cli import main
from cowbird.query.sketch_grammar import SHIPPED, load_grammar, parse_grammar

LABELLED = """\
*STRUCTLIMIT s
*DEFAULTATTR pos
*DUAL
=object/object_of
*LABEL objects of "%w"
*LABEL verbs with "%w" as object
    1:"VB.*" 2:"NN.*"
=pp_in
*LABEL "%w" in …
    1:"NN.*" [word="in"] 2:"NN.*"
=bare
    1:"JJ.*" 2:"NN.*"
"""


def test_labels_are_read_with_the_headword_written_in() -> None:
    grammar = parse_grammar(LABELLED, "mine", "mine.wsdef")
    shown = {view.name: (view.label, view.shown("buy")) for view in grammar.views}
    assert shown == {
        "object": ('objects of "%w"', 'objects of "buy"'),
        "object_of": ('verbs with "%w" as object', 'verbs with "buy" as object'),
        "pp_in": ('"%w" in …', '"buy" in …'),
        "bare": (None, "bare"),  # no label: its id
    }
    assert grammar.relations[0].queries == ('@[pos="VB.*"] @1 [pos="NN.*"] within s',)  # queries as before
    assert [(str(w)) for w in grammar.unlabelled] == [
        "mine.wsdef:11: relation bare: has no *LABEL: the page and the API show its id 'bare' as its name (write "
        "*LABEL text under =name, %w for the headword)"
    ]


@pytest.mark.parametrize("name", SHIPPED)
def test_every_relation_of_every_shipped_grammar_has_its_own_label(name: str) -> None:
    grammar = load_grammar(name)
    labels = [view.label for view in grammar.views]
    assert None not in labels and grammar.unlabelled == ()
    assert len(set(labels)) == len(labels)
    assert all("%w" in str(label) for label in labels)  # each names the headword


def test_the_shipped_labels_read_as_sketch_engine_names_them() -> None:
    penn = {view.name: view.shown("house") for view in load_grammar("penn").views}
    assert penn["object_of"] == 'verbs with "house" as object'
    assert penn["modifier"] == 'modifiers of "house"'
    assert penn["pp_in"] == '"house" in …'
    assert penn["and/or"] == '"house" and/or …'


def test_check_lists_the_labels_and_warns_of_a_relation_without_one(tmp_path: Path) -> None:
    grammar = tmp_path / "mine.wsdef"
    grammar.write_text(LABELLED, encoding="utf-8")
    checked = CliRunner().invoke(main, ["sketches", "check", str(grammar)])
    assert checked.exit_code == 0, checked.output
    assert checked.stdout.splitlines()[:3] == [
        "object/object_of",
        '  label: objects of "%w" / verbs with "%w" as object',
        '  7: @[pos="VB.*"] @1 [pos="NN.*"] within s',
    ]
    assert checked.stderr.splitlines() == [
        f"warning: {grammar}:11: relation bare: has no *LABEL: the page and the API show its id 'bare' as its name "
        "(write *LABEL text under =name, %w for the headword)"
    ]
    assert checked.stdout.splitlines()[-1] == f"{grammar}: 3 relations, 1 warnings"
    grammar.write_text(LABELLED.replace("*LABEL objects of", '*LABEL "%w" in …\n#'), encoding="utf-8")
    repeated = CliRunner().invoke(main, ["sketches", "check", str(grammar)])
    assert repeated.exit_code != 0
    assert f"{grammar}:10:1: *LABEL '\"%w\" in …' is not unique: line 5 gives it already" in repeated.output
