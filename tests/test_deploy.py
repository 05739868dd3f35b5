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
    """Compose: two replicas of two workers each, behind nginx's round robin over the replicas, on
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
    assert "server frontend:8700 resolve" in (DEPLOY / "nginx" / "cowbird.conf.template").read_text()

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
    assert "server_name ${COWBIRD_DOMAIN};" in (DEPLOY / "nginx" / "cowbird.conf.template").read_text()


def test_the_proxy_bounds_each_address_and_the_nodes_take_the_front_ends_only() -> None:
    """nginx limits connections and requests per client address (429 with Retry-After), cuts off slow
    requests and forwards the client's address alone (no list a client began); the front ends believe
    it from the proxy's fixed address; the nodes are on a network of their own with the front ends,
    and accept connections from it (and their own health check) only."""
    proxy = (DEPLOY / "nginx" / "cowbird.conf.template").read_text()
    for line in ("limit_conn_zone $binary_remote_addr zone=per_client:10m;", "limit_conn per_client 64;",
                 "limit_conn_status 429;", "limit_req_status 429;", "error_page 429 @too_many;",
                 "add_header Retry-After 2 always;", "client_header_timeout 10s;", "client_body_timeout 30s;",
                 "proxy_set_header X-Forwarded-For $remote_addr;"):
        assert line in proxy, line
    compose = yaml.safe_load((DEPLOY / "compose.yml").read_text())
    services = compose["services"]
    assert services["proxy"]["image"].startswith("nginx:")
    assert "./nginx/cowbird.conf.template:/etc/nginx/templates/cowbird.conf.template:ro" in services["proxy"]["volumes"]
    address = services["proxy"]["networks"]["default"]["ipv4_address"]
    front = services["frontend"]
    assert json.loads(front["environment"]["COWBIRD_TRUSTED_PROXIES"]) == [address]
    assert FrontendSettings(max_connections_per_client=front["environment"]["COWBIRD_MAX_CONNECTIONS_PER_CLIENT"]
                            ).max_connections_per_client == 64
    subnet = compose["networks"]["nodes"]["ipam"]["config"][0]["subnet"]
    assert set(front["networks"]) == {"default", "nodes"}
    for name in ("node1", "node2"):
        node = services[name]
        assert node["networks"] == ["nodes"]
        allowed = json.loads(node["environment"]["COWBIRD_NODE_ALLOWED_CLIENTS"])
        assert allowed == [subnet, "127.0.0.1"]  # the Dockerfile's HEALTHCHECK asks from 127.0.0.1
        NodeSettings(registry=Path("/data/registry"), allowed_clients=allowed)


def test_a_wrong_option_would_be_caught() -> None:
    with pytest.raises(click.UsageError):
        accepted(["cowbird", "node", "serve", "--registry", "/data", "--no-such-option"])


def test_node_processes_run_under_a_memory_limit_above_their_own() -> None:
    """Every deploy file puts the node processes under a memory limit (issue 63: a node grew to 10.7 GB
    until the kernel killed it), above the limit the node sets itself (``memory_limit``, by default the
    budget, the result cache and 1 GiB), so that the node's own — a query stopped — is the one reached."""
    from cowbird.node.memory import memory_limit

    defaults = NodeSettings.model_validate({"registry": "/data"})
    own = memory_limit(defaults.memory_budget, defaults.cache_max_hits * 24, defaults.memory_limit)
    assert own is not None
    gib = 2**30
    unit = (DEPLOY / "systemd" / "cowbird-node@.service").read_text()
    unit_max = re.search(r"^MemoryMax=(\d+)G$", unit, re.M)
    assert unit_max is not None and int(unit_max.group(1)) * gib > own
    compose = yaml.safe_load((DEPLOY / "compose.yml").read_text())
    nodes = [service for name, service in compose["services"].items() if name.startswith("node")]
    assert nodes and all(int(service["mem_limit"].rstrip("g")) * gib > own for service in nodes)
    documents = list(yaml.safe_load_all((DEPLOY / "k8s" / "cowbird.yaml").read_text()))
    node_set = next(d for d in documents
                    if d and d["kind"] == "StatefulSet" and d["metadata"]["name"] == "cowbird-node")
    (container,) = node_set["spec"]["template"]["spec"]["containers"]
    assert int(container["resources"]["limits"]["memory"].rstrip("Gi")) * gib > own
