"""The `cowbird` command line: one group, one subcommand per task.

Each subcommand lives next to the code it drives and is imported only when it runs, so that
`cowbird --help` and the commands of an installed part work without the others: a front-end
install (`cowbird[frontend]`) has `serve`, `db` and `users` but no numba for `encode`, which then
says which extra to install. Domain errors become one-line messages and a non-zero exit; `--help`
works on every level.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

import click

from cowbird.core.version import __version__


@dataclass(frozen=True)
class Subcommand:
    """Where a subcommand lives, what it is for (shown by `cowbird --help` without importing it)
    and the extra its code needs."""

    module: str
    attribute: str
    summary: str
    extra: str | None


SUBCOMMANDS: dict[str, Subcommand] = {
    "encode": Subcommand("cowbird.store.cli", "encode_command",
                         "Encode a VRT file into CWB format, as cwb-encode followed by cwb-makeall.", "node"),
    "compress": Subcommand("cowbird.store.cli", "compress_command",
                           "Compress a corpus's p-attributes as cwb-huffcode and cwb-compress-rdx do.", "node"),
    "info": Subcommand("cowbird.store.cli", "info_command",
                       "Describe a corpus: size, attributes with type counts, regions.", "node"),
    "partitions": Subcommand("cowbird.store.cli", "partitions_group",
                             "Partitions: write the tokens each carries of its neighbours.", "node"),
    "query": Subcommand("cowbird.node.query_cli", "query_command",
                        "Run a CQP query on a corpus and print its hits as CQP's dump does.", "node"),
    "translate": Subcommand("cowbird.query.cli", "translate_command",
                            "Translate a simple QUERY to CQP and print the CQP.", None),
    "check": Subcommand("cowbird.query.cli", "check_command", "Check a CQP QUERY and print its canonical form.", None),
    "sketches": Subcommand("cowbird.node.sketch_cli", "sketches_group",
                           "Word sketch tables: build them for a corpus's partitions.", "node"),
    "node": Subcommand("cowbird.node.cli", "node_group",
                       "Backend nodes: serve CWB-format partitions to the front end.", "node"),
    "serve": Subcommand("cowbird.frontend.cli", "serve_command",
                        "Serve the public HTTP API and the search page over the configured corpora.", "frontend"),
    "demo": Subcommand("cowbird.commands.demo", "demo_command",
                       "Run the platform on loopback: two nodes and the front end over demo corpora.", "all"),
    "build": Subcommand("cowbird.build.cli", "build_command",
                        "Build a corpus from web pages (WARC/ARC files, HTML folders): clean, deduplicate, tag, "
                        "encode.", "build"),
    "crawl": Subcommand("cowbird.crawl.cli", "crawl_command",
                        "Crawl the web from seed URLs to WARC files: polite, focused on good documents, resumable.",
                        "crawl"),
    "db": Subcommand("cowbird.frontend.accounts.cli", "db_group", "The account database.", "frontend"),
    "users": Subcommand("cowbird.frontend.accounts.cli", "users_group",
                        "Accounts: list, review, add, grant rights, import old API tokens.", "frontend"),
}


class LazyGroup(click.Group):
    """A group whose subcommands are imported when they run (or show their own help)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(SUBCOMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = SUBCOMMANDS.get(cmd_name)
        if entry is None:
            return None
        try:
            module = importlib.import_module(entry.module)
        except ModuleNotFoundError as error:
            if error.name is None or error.name.split(".")[0] == "cowbird":
                raise
            raise click.ClickException(
                f"`cowbird {cmd_name}` needs the {entry.extra!r} part of cowbird, which is not installed here "
                f"(missing module {error.name!r}): pip install 'cowbird[{entry.extra}]'"
            ) from error
        command = getattr(module, entry.attribute)
        assert isinstance(command, click.Command)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, SUBCOMMANDS[name].summary) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="cowbird")
def main() -> None:
    """cowbird: encode, inspect and query CWB-format corpora, and serve them over HTTP."""
