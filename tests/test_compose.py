"""docker-compose.yml cannot run here (no Docker engine): parse it and check its contract.

Services, health checks, ports, volumes and variables are checked against `.env.example` and
against the settings object, so a renamed setting or a forgotten variable fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from hat_core.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
COMPOSE_TEXT = (ROOT / "docker-compose.yml").read_text(encoding="utf-8")
COMPOSE = yaml.safe_load(COMPOSE_TEXT)
SERVICES = COMPOSE["services"]
LONG_RUNNING = {"postgres", "mlflow", "prefect-server", "worker", "console", "vllm"}


def env_example() -> dict[str, str]:
    pairs = {}
    for line in (ROOT / ".env.example").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            key, _, value = line.partition("=")
            pairs[key.strip()] = value
    return pairs


def test_services_are_the_production_stack():
    assert set(SERVICES) == LONG_RUNNING | {"migrate"}
    assert SERVICES["vllm"]["profiles"] == ["gpu"]
    assert all("profiles" not in s for name, s in SERVICES.items() if name != "vllm")


@pytest.mark.parametrize("name", sorted(LONG_RUNNING))
def test_long_running_services_have_health_checks(name):
    check = SERVICES[name]["healthcheck"]
    assert check["test"][0] in {"CMD", "CMD-SHELL"} and check["retries"] >= 3


def test_dependencies_wait_for_health_or_completion():
    for name, service in SERVICES.items():
        for dep, cond in (service.get("depends_on") or {}).items():
            assert dep in SERVICES, f"{name} depends on unknown {dep}"
            expected = ("service_completed_successfully" if dep == "migrate"
                        else "service_healthy")
            assert cond["condition"] == expected, (name, dep)
            assert "healthcheck" in SERVICES[dep] or dep == "migrate"


def test_published_ports_are_variables_and_unique():
    published = []
    for service in SERVICES.values():
        for mapping in service.get("ports", []):
            host, _, container = mapping.rpartition(":")
            assert re.fullmatch(r"\$\{[A-Z_]+\}", host), mapping
            published.append(host)
            assert container.isdigit()
    assert len(published) == len(set(published)) == 5


def test_named_volumes_are_declared():
    declared = set(COMPOSE["volumes"])
    used = set()
    for service in SERVICES.values():
        for mount in service.get("volumes", []):
            source = mount.split(":")[0]
            if not source.startswith((".", "/", "$")):
                used.add(source)
    assert used and used <= declared
    assert {"pgdata", "mlartifacts", "hat-home"} <= used


def test_every_variable_is_in_env_example_and_every_example_is_used():
    used = set(re.findall(r"\$\{([A-Z_][A-Z0-9_]*)", COMPOSE_TEXT))
    example = env_example()
    assert used - set(example) == set(), "variables missing from .env.example"
    assert set(example) - used == set(), "unused variables in .env.example"


def test_hat_variables_match_the_settings_object():
    env = COMPOSE["x-hat-env"]
    fields = {f"HAT_{name.upper()}" for name in Settings.model_fields}
    hat_vars = {k for k in env if k.startswith("HAT_")}
    assert hat_vars == fields
    assert env["HAT_DATABASE_URL"].startswith("postgresql+psycopg://hat_app:")
    owner_url = SERVICES["migrate"]["environment"]["HAT_DATABASE_URL"]
    assert owner_url.startswith("postgresql+psycopg://${POSTGRES_USER}:")  # migrations: owner
    assert SERVICES["migrate"]["environment"]["HAT_HOME"] == env["HAT_HOME"]
    assert env["HAT_PREFECT_API_URL"] == env["PREFECT_API_URL"]


def test_app_services_use_the_hat_commands():
    commands = {name: s.get("command", "") for name, s in SERVICES.items()}
    assert commands["migrate"] == "hat db upgrade --grant hat_app"
    assert commands["worker"] == "hat serve"
    assert commands["console"].startswith("hat ui ")
    assert "postgresql+psycopg://" in commands["mlflow"]
    prefect_db = SERVICES["prefect-server"]["environment"]["PREFECT_API_DATABASE_CONNECTION_URL"]
    assert prefect_db.startswith("postgresql+asyncpg://")


def test_postgres_init_creates_the_three_databases():
    sql = (ROOT / "deploy" / "postgres" / "init.sql").read_text(encoding="utf-8")
    assert re.findall(r"CREATE DATABASE (\w+);", sql) == ["hat", "mlflow", "prefect"]
