"""The deployment files cannot run here (no Docker, no Kubernetes), so they are checked: they
parse, every cowbird command in them is accepted by the CLI as it is today, every configuration
validates against the settings models, and the container files are multi-stage, non-root and
have health checks."""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

import click
import pytest
import yaml

from cowbird.cli import main
from cowbird.frontend import FrontendSettings
from cowbird.node import NodeSettings

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"


def accepted(args: list[str]) -> None:
    """Parse ``cowbird ARGS`` as the CLI would, without running it; fail with click's message."""
    assert args[0] == "cowbird", args
    command: click.Command = main
    name, rest = "cowbird", args[1:]
    while isinstance(command, click.Group):
        name, rest = rest[0], rest[1:]
        sub = command.get_command(click.Context(command), name)
        assert sub is not None, f"unknown command {name!r} in {args}"
        command = sub
    command.make_context(name, rest)


def commands_in_yaml(node: object) -> list[list[str]]:
    found: list[list[str]] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "command" and isinstance(value, list) and value and value[0] == "cowbird":
                found.append([str(v) for v in value])
            else:
                found += commands_in_yaml(value)
    elif isinstance(node, list):
        for item in node:
            found += commands_in_yaml(item)
    return found


def test_compose_and_kubernetes_files_parse_and_their_commands_run() -> None:
    compose = yaml.safe_load((DEPLOY / "compose.yml").read_text())
    assert set(compose["services"]) == {"proxy", "frontend", "node1", "node2"}
    assert compose["secrets"]["node_token"]["file"] == "./secrets/node_token"
    for name in ("frontend", "node1", "node2"):
        dockerfile = compose["services"][name]["build"]["dockerfile"]
        assert (DEPLOY.parent / dockerfile).is_file()
    documents = list(yaml.safe_load_all((DEPLOY / "k8s" / "cowbird.yaml").read_text()))
    kinds = sorted(d["kind"] for d in documents)
    assert kinds == ["ConfigMap", "Deployment", "Ingress", "Secret", "Service", "Service", "StatefulSet"]
    commands = commands_in_yaml(compose) + commands_in_yaml(documents)
    assert len(commands) == 4
    for command in commands:
        accepted(command)
    config = next(d for d in documents if d["kind"] == "ConfigMap")["data"]["cowbird.toml"]
    FrontendSettings.model_validate(tomllib.loads(config))


@pytest.mark.parametrize("name", ["node.Dockerfile", "frontend.Dockerfile"])
def test_container_files(name: str) -> None:
    text = (DEPLOY / "docker" / name).read_text()
    assert len(re.findall(r"^FROM ", text, re.M)) == 2 and " AS build" in text  # multi-stage
    assert re.search(r"^USER cowbird$", text, re.M) and "--uid 10001" in text  # non-root
    assert "HEALTHCHECK" in text
    command = re.search(r"^CMD (\[.*?\])$", text.replace("\\\n", ""), re.M | re.S)
    assert command is not None
    args = yaml.safe_load(command.group(1))
    accepted(args)
    port = args[args.index("--port") + 1]
    assert f"EXPOSE {port}" in text and f"127.0.0.1:{port}/" in text


def test_systemd_units_and_example_configurations() -> None:
    for unit in (DEPLOY / "systemd").glob("*.service"):
        text = unit.read_text()
        assert "[Service]" in text and "User=cowbird" in text and "NoNewPrivileges=true" in text
        start = re.search(r"^ExecStart=(.*)$", text, re.M)
        assert start is not None
        args = shlex.split(start.group(1))
        accepted(["cowbird", *args[1:]])
    FrontendSettings.model_validate(tomllib.loads((DEPLOY / "cowbird.example.toml").read_text()))
    NodeSettings.model_validate(tomllib.loads((DEPLOY / "systemd" / "node-1.toml").read_text()))
    assert "{$COWBIRD_DOMAIN}" in (DEPLOY / "Caddyfile").read_text()


def test_a_wrong_option_would_be_caught() -> None:
    with pytest.raises(click.UsageError):
        accepted(["cowbird", "node", "serve", "--registry", "/data", "--no-such-option"])
