"""``python -m cowbird`` runs the ``cowbird`` command."""

from cowbird.cli import main

main()
