"""``cowbird translate`` and ``cowbird check``, in-process and as a real subprocess."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from cowbird.commands.cli import main
from cowbird.query.cli import check_command, translate_command
from tests.support import unavailable


def test_translate_prints_cqp() -> None:
    result = CliRunner().invoke(translate_command, ["--ignore-case", "ohne 0-2 ^Beanstandung"])
    assert result.exit_code == 0
    assert result.stdout == '[word="ohne"%c] []{0,2} [lemma="Beanstandung"%c]\n'


def test_translate_error_has_a_caret_on_stderr() -> None:
    result = CliRunner().invoke(translate_command, ["ohne 3"])
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        "query_syntax: distance at the end of the query: 3 counts tokens between two terms; "
        'write "3" to search for the number (offset 5)',
        "  ohne 3",
        "       ^",
    ]


def test_check_prints_the_canonical_form() -> None:
    result = CliRunner().invoke(check_command, ['"house" [pos = "NN" %c]  within s'])
    assert result.exit_code == 0
    assert result.stdout == '[word="house"] [pos="NN"%c] within s\n'


def test_check_refuses_commands() -> None:
    result = CliRunner().invoke(check_command, ['[word="a"]; cat Last > "/tmp/x"'])
    assert result.exit_code == 1
    assert result.stderr.startswith("unsupported: ';' is not allowed")
    assert result.stderr.splitlines()[-1] == "  " + " " * 10 + "^"


def test_subcommands_are_registered_with_help() -> None:
    runner = CliRunner()
    assert runner.invoke(main, ["translate", "Haus"]).stdout == '[word="Haus"]\n'
    assert runner.invoke(main, ["check", '"Haus"']).stdout == '[word="Haus"]\n'
    help_text = runner.invoke(main, ["translate", "--help"]).stdout
    assert "Translate a simple QUERY to CQP" in help_text and "--ignore-case" in help_text
    assert "canonical form" in runner.invoke(main, ["check", "--help"]).stdout


@pytest.mark.e2e
def test_real_subprocess() -> None:
    executable = Path(sys.executable).parent / "cowbird"
    if not executable.exists():
        unavailable(f"console script not installed at {executable} (make test installs it)")
    ok = subprocess.run(
        [str(executable), "translate", "^geh* 3 nach"], capture_output=True, text=True, timeout=60
    )
    assert (ok.returncode, ok.stdout) == (0, '[lemma="geh.*"] []{3} [word="nach"]\n')
    bad = subprocess.run(
        [str(executable), "check", "set ExternalSort on"], capture_output=True, text=True, timeout=60
    )
    assert bad.returncode == 1 and bad.stdout == ""
    assert bad.stderr.startswith("unsupported: the CQP command 'set' is not supported")
