"""``python -m cowbird`` runs the ``cowbird`` command."""

from cowbird.commands.cli import main

main()
