"""The deployment files cannot run here (no Docker, no Kubernetes), so they are checked: they
parse, every cowbird command in them is accepted by the CLI as it is today, every configuration
validates against the settings models, the container files are multi-stage, non-root and
have health checks, and the front end runs as two replicas or workers (or more) sharing one
PostgreSQL account database (``tests/frontend/test_shared_state.py`` shows that they may)."""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from pathlib import Path

import click
import pytest
import yaml

from cowbird.commands.cli import main
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


def workers(command: list[str]) -> int:
    """The front-end processes ``cowbird serve ...`` runs."""
    return int(command[command.index("--workers") + 1]) if "--workers" in command else 1


def test_compose_and_kubernetes_files_parse_and_their_commands_run() -> None:
    compose = yaml.safe_load((DEPLOY / "compose.yml").read_text())
    assert set(compose["services"]) == {"proxy", "frontend", "node1", "node2", "db"}
    assert compose["secrets"]["node_token"]["file"] == "./secrets/node_token"
    for name in ("frontend", "node1", "node2"):
        dockerfile = compose["services"][name]["build"]["dockerfile"]
        assert (DEPLOY.parent / dockerfile).is_file()
    documents = list(yaml.safe_load_all((DEPLOY / "k8s" / "cowbird.yaml").read_text()))
    kinds = sorted(d["kind"] for d in documents)
    assert kinds == ["ConfigMap", "Deployment", "Ingress", "Secret", "Secret", "Service", "Service", "Service",
                     "StatefulSet", "StatefulSet"]
    commands = commands_in_yaml(compose) + commands_in_yaml(documents)
    assert len(commands) == 5
    for command in commands:
        accepted(command)
    config = next(d for d in documents if d["kind"] == "ConfigMap")["data"]["cowbird.toml"]
    FrontendSettings.model_validate(tomllib.loads(config))


def test_the_front_end_runs_as_several_processes_on_one_postgresql_database() -> None:
    """Compose: two replicas of two workers each, behind Caddy's round robin over the replicas, on
    the db service; Kubernetes: two replicas on the PostgreSQL StatefulSet, with no volume of their
    own (a ReadWriteOnce volume could not be shared); systemd: two workers; the example
    configuration names PostgreSQL."""
    compose = yaml.safe_load((DEPLOY / "compose.yml").read_text())
    front = compose["services"]["frontend"]
    assert front["deploy"]["replicas"] >= 2 and workers(front["command"]) >= 2
    assert front["environment"]["COWBIRD_DATABASE_URL"].startswith("postgresql+psycopg://")
    assert "@db/" in front["environment"]["COWBIRD_DATABASE_URL"] and "PGPASSWORD" in front["environment"]
    assert front["depends_on"]["db"] == {"condition": "service_healthy"}
    assert compose["services"]["db"]["image"].startswith("postgres:")
    assert "/state" not in json.dumps(front)
    assert "dynamic a frontend 8700" in (DEPLOY / "Caddyfile").read_text()

    documents = list(yaml.safe_load_all((DEPLOY / "k8s" / "cowbird.yaml").read_text()))
    deployment = next(d for d in documents if d["kind"] == "Deployment")
    assert deployment["spec"]["replicas"] >= 2
    pod = deployment["spec"]["template"]["spec"]
    assert [e["name"] for e in pod["containers"][0]["env"]] == ["PGPASSWORD", "COWBIRD_TRUSTED_PROXIES"]
    claims = [v["persistentVolumeClaim"] for v in pod["volumes"] if "persistentVolumeClaim" in v]
    assert all(claim.get("readOnly") for claim in claims)
    config = tomllib.loads(next(d for d in documents if d["kind"] == "ConfigMap")["data"]["cowbird.toml"])
    host = config["accounts"]["database_url"].split("@")[1].split("/")[0]
    assert config["accounts"]["database_url"].startswith("postgresql+psycopg://") and "database_file" not in config
    services = {d["metadata"]["name"] for d in documents if d["kind"] == "Service"}
    database = next(d for d in documents if d["kind"] == "StatefulSet" and d["metadata"]["name"] == host)
    assert host in services and database["spec"]["template"]["spec"]["containers"][0]["image"].startswith("postgres:")

    unit = (DEPLOY / "systemd" / "cowbird-frontend.service").read_text()
    start = re.search(r"^ExecStart=(.*)$", unit, re.M)
    assert start is not None and workers(shlex.split(start.group(1))) >= 2
    example = tomllib.loads((DEPLOY / "cowbird.example.toml").read_text())
    assert example["accounts"]["database_url"].startswith("postgresql+psycopg://")


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
    # the build copies every source root the distribution maps a part to (pip builds it whole)
    mapped = tomllib.loads((DEPLOY.parent / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    roots = {folder.split("/cowbird")[0] for folder in mapped.values()}
    assert all(re.search(rf"^COPY {root} {root}$", text, re.M) for root in roots), roots


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
