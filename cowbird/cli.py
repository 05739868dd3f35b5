"""The `cowbird` command line: one group, one subcommand per task.

Domain errors become one-line messages and a non-zero exit; `--help` works on every level.
"""

from __future__ import annotations

import click

from cowbird import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="cowbird")
def main() -> None:
    """cowbird: encode, inspect and query CWB-format corpora, and serve them over HTTP."""


def _register() -> None:
    # Subcommands live next to the code they drive; importing them here keeps `cowbird` one tree.
    from backend_node.cli import node_group
    from backend_node.engines.cli import query_command
    from backend_node.store.cli import compress_command, encode_command, info_command
    from cowbird.demo import demo_command
    from frontend_api.accounts.cli import db_group, users_group
    from frontend_api.cli import serve_command
    from query_lang.cli import check_command, translate_command

    commands = (encode_command, compress_command, info_command, query_command, translate_command, check_command,
                node_group, serve_command, demo_command, db_group, users_group)
    for command in commands:
        main.add_command(command)


_register()
