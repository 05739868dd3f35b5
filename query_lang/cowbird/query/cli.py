"""``cowbird translate`` and ``cowbird check``: the query languages from the command line.

Both print their result on stdout; a bad query prints the error with a caret under the problem
on stderr and exits with status 1.
"""

from __future__ import annotations

import click

from cowbird.query.cqp import canonical
from cowbird.query.errors import QueryError
from cowbird.query.simple import translate


def _fail(error: QueryError) -> None:
    click.echo(error.pretty(), err=True)
    raise SystemExit(1)


@click.command("translate")
@click.option("--ignore-case", "-i", is_flag=True, help="Match every term case-insensitively (%c).")
@click.argument("query")
def translate_command(query: str, ignore_case: bool) -> None:
    """Translate a simple QUERY to CQP and print the CQP.

    Terms are word forms (Haus), lemmas (^gehen) or literal quoted text ("3.5"); * inside an
    unquoted term matches any characters; a number n or a range n-m between two terms allows
    exactly n, or n to m, arbitrary tokens in between. Example:

        cowbird translate --ignore-case 'ohne 0-2 ^Beanstandung'
    """
    try:
        click.echo(translate(query, ignore_case=ignore_case))
    except QueryError as error:
        _fail(error)


@click.command("check")
@click.argument("query")
def check_command(query: str) -> None:
    """Check a CQP QUERY and print its canonical form.

    Only a single query expression is accepted (no commands, macros or ';'). Example:

        cowbird check '[pos="JJ.*"]+ [pos="NNS?"] within s'
    """
    try:
        click.echo(canonical(query))
    except QueryError as error:
        _fail(error)
