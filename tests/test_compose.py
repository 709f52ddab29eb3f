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
LONG_RUNNING = {"postgres", "mlflow", "prefect-server", "worker", "worker-gpu", "model-sync",
                "console", "vllm-control", "vllm-treatment", "vllm-teacher"}
GPU_ONLY = {"worker-gpu", "model-sync", "vllm-control", "vllm-treatment", "vllm-teacher"}
ARMS = {"control": "vllm-control", "treatment": "vllm-treatment"}


def profile_services(profile: str) -> dict[str, dict]:
    """The services `COMPOSE_PROFILES=profile docker compose up` starts."""
    return {name: s for name, s in SERVICES.items()
            if "profiles" not in s or profile in s["profiles"]}


def gpu_ids(service: dict) -> list[str]:
    devices = service["deploy"]["resources"]["reservations"]["devices"]
    assert [d["driver"] for d in devices] == ["nvidia"] and devices[0]["capabilities"] == ["gpu"]
    return devices[0]["device_ids"]


def env_example() -> dict[str, str]:
    pairs = {}
    for line in (ROOT / ".env.example").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            key, _, value = line.partition("=")
            pairs[key.strip()] = value
    return pairs


def test_services_are_the_production_stack():
    assert set(SERVICES) == LONG_RUNNING | {"migrate"}
    assert {n for n, s in SERVICES.items() if s.get("profiles") == ["gpu"]} == GPU_ONLY
    assert SERVICES["worker"]["profiles"] == ["cpu"]
    assert all("profiles" not in s for n, s in SERVICES.items() if n not in GPU_ONLY | {"worker"})
    assert env_example()["COMPOSE_PROFILES"] == "cpu"  # `docker compose up`: the CPU stack
    for profile in ("cpu", "gpu"):  # exactly one worker (deployments and gateway) each
        assert [n for n in profile_services(profile) if n.startswith("worker")] == [
            "worker" if profile == "cpu" else "worker-gpu"]


class MissingVariable(Exception):
    """What `docker compose` reports for a `${VAR:?message}` whose variable is unset."""


def interpolate(text: str, env: dict[str, str]) -> str:
    """Compose's substitution of `${VAR}`, `${VAR:-default}`, `${VAR-default}`,
    `${VAR:?message}`, `${VAR?message}` and `$$` (the forms this file may use)."""
    def one(match: re.Match) -> str:
        if match.group(0) == "$$":
            return "$"
        name, op, arg = match.group("name"), match.group("op") or "", match.group("arg") or ""
        value = env.get(name)
        unset = value is None or (op.startswith(":") and value == "")
        if op.endswith("?") and unset:
            raise MissingVariable(f"required variable {name} is missing a value: {arg}")
        if op.endswith("-") and unset:
            return arg
        return value or ""
    return re.sub(r"\$\$|\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<op>:?[-?])(?P<arg>[^}]*))?\}",
                  one, text)


def interpolated(value, env: dict[str, str]):
    """The parsed file with every string substituted (compose interpolates values, not
    comments)."""
    if isinstance(value, dict):
        return {k: interpolated(v, env) for k, v in value.items()}
    if isinstance(value, list):
        return [interpolated(v, env) for v in value]
    return interpolate(value, env) if isinstance(value, str) else value


def started(env: dict[str, str]) -> set[str]:
    """The services `docker compose up` starts with `env` as its shell and .env variables."""
    config = interpolated(COMPOSE, env)
    profiles = {p for p in env.get("COMPOSE_PROFILES", "").split(",") if p}
    return {name for name, s in config["services"].items()
            if "profiles" not in s or profiles & set(s["profiles"])}


def test_without_compose_profiles_compose_refuses_to_start_at_all():
    """The worker is under a profile: with COMPOSE_PROFILES unset (no .env, or an old one)
    compose would start the stack without any worker and say nothing, so the variable is
    required in a part every service reads, and the refusal says what to set."""
    env = env_example()
    del env["COMPOSE_PROFILES"]
    for unset in (env, {**env, "COMPOSE_PROFILES": ""}):
        with pytest.raises(MissingVariable, match="COMPOSE_PROFILES.*cpu.*gpu.*\\.env"):
            started(unset)
    guard = [name for name, service in SERVICES.items()
             if "COMPOSE_PROFILES" in (service.get("environment") or {})]
    assert "migrate" in guard and "profiles" not in SERVICES["migrate"]  # read in every stack
    assert started({**env, "COMPOSE_PROFILES": "cpu"}) >= {"worker", "migrate", "console"}
    gpu = started({**env, "COMPOSE_PROFILES": "gpu"})
    assert "worker-gpu" in gpu and "worker" not in gpu
    assert interpolate("${A:-x} ${B:?no} $${C}", {"B": "b"}) == "x b ${C}"


def test_gpu_services_each_reserve_their_own_gpu():
    ids = {name: gpu_ids(SERVICES[name]) for name in
           ("worker-gpu", "vllm-control", "vllm-treatment", "vllm-teacher")}
    variables = [v[0] for v in ids.values()]
    assert all(len(v) == 1 and re.fullmatch(r"\$\{[A-Z_]+_GPU\}", v[0]) for v in ids.values())
    assert len(set(variables)) == 4
    example = env_example()
    assert len({example[v[2:-1]] for v in variables}) == 4  # four distinct devices
    assert "deploy" not in SERVICES["worker"]  # the CPU stack asks for no GPU


def test_each_arm_runs_vllm_on_its_own_pointer_and_the_gateway_asks_both():
    for arm, name in ARMS.items():
        service = SERVICES[name]
        assert service["entrypoint"] == ["python", "-m", "hat_core.serving.arm_server"]
        command = service["command"].split()
        assert command[:5] == ["--pointer", f"/serving/{arm}.json", "--ports", "8000,8001",
                               "--"]
        assert command[5:7] == ["vllm", "serve"] and "{model}" in command
        assert command[command.index("--served-model-name") + 1] == "{name}"
        assert command[command.index("--port") + 1] == "{port}"  # blue-green: either port
        health = " ".join(service["healthcheck"]["test"])
        assert "127.0.0.1:8000/health" in health and "127.0.0.1:8001/health" in health
        assert service["volumes"] == ["serving-models:/serving:ro"]
        assert service["build"]["dockerfile"] == "deploy/gpu/Dockerfile"
        assert "ports" not in service  # reached through the gateway only
    gateway = SERVICES["worker-gpu"]["command"].split()
    backends = [gateway[i + 1] for i, w in enumerate(gateway) if w == "--gateway-backend-url"]
    assert backends == [f"http://{name}:{port}" for name in ARMS.values()
                        for port in (8000, 8001)]
    sync = SERVICES["model-sync"]
    assert sync["command"] == "hat model-sync --root /var/lib/hat/serving-models"
    assert "serving-models:/var/lib/hat/serving-models" in sync["volumes"]
    assert "/var/lib/hat/serving-models/.alive" in sync["healthcheck"]["test"][-1]


def test_the_pointer_folders_resolve_inside_the_vllm_containers(tmp_path):
    """The sync writes pointers whose folder is relative to the volume's root, so the path
    the arm server passes vLLM is inside the volume wherever the container mounts it."""
    from hat_core.serving.arm_server import command_for
    from hat_core.serving.model_sync import ArmModel

    model = ArmModel("control", "hat-agent", "3", "hat-agent/3", "hat-agent/3/model")
    command = SERVICES["vllm-control"]["command"].split()[5:]
    line = command_for(command, model, Path("/serving"), 8001)
    assert line[2] == "/serving/hat-agent/3/model" and "hat-agent/3" in line
    assert line[line.index("--port") + 1] == "8001"


def test_the_teacher_is_not_an_arm_and_the_console_links_reach_a_browser():
    example = env_example()
    teacher = example["HAT_TEACHER_ENDPOINT"]
    assert teacher == "http://vllm-teacher:8000/v1"
    assert not any(name in teacher for name in ARMS.values())
    assert SERVICES["vllm-teacher"]["command"].split()[0] == "${TEACHER_MODEL}"
    ui = example["HAT_MLFLOW_UI_URL"]
    assert ui == f"http://localhost:{example['MLFLOW_PORT']}"  # the published port
    assert ui != COMPOSE["x-hat-env"]["HAT_MLFLOW_TRACKING_URI"] and "mlflow:" not in ui
    assert COMPOSE["x-hat-env"]["HAT_MLFLOW_UI_URL"] == "${HAT_MLFLOW_UI_URL}"


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


@pytest.mark.parametrize("profile", ["cpu", "gpu"])
def test_published_ports_are_variables_and_unique(profile):
    published = []
    for service in profile_services(profile).values():
        for mapping in service.get("ports", []):
            host, _, container = mapping.rpartition(":")
            assert re.fullmatch(r"\$\{[A-Z_]+\}", host), mapping
            published.append(host)
            assert container.isdigit()
    assert len(published) == len(set(published)) == 5
    assert "${GATEWAY_PORT}" in published


def test_named_volumes_are_declared():
    declared = set(COMPOSE["volumes"])
    used = set()
    for service in SERVICES.values():
        for mount in service.get("volumes", []):
            source = mount.split(":")[0]
            if not source.startswith((".", "/", "$")):
                used.add(source)
    assert used and used <= declared
    assert {"pgdata", "mlartifacts", "hat-home", "serving-models"} <= used


def test_every_variable_is_in_env_example_and_every_example_is_used():
    used = set(re.findall(r"\$\{([A-Z_][A-Z0-9_]*)", COMPOSE_TEXT))
    example = env_example()
    assert used - set(example) == set(), "variables missing from .env.example"
    compose_own = {"COMPOSE_PROFILES"}  # read by docker compose itself
    assert set(example) - used - compose_own == set(), "unused variables in .env.example"


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
    assert commands["worker"] == "hat serve --gateway-host 0.0.0.0"
    assert commands["worker-gpu"].startswith("hat serve --gateway-host 0.0.0.0 ")
    assert commands["console"].startswith("hat ui ")
    assert "postgresql+psycopg://" in commands["mlflow"]
    prefect_db = SERVICES["prefect-server"]["environment"]["PREFECT_API_DATABASE_CONNECTION_URL"]
    assert prefect_db.startswith("postgresql+asyncpg://")


def test_postgres_init_creates_the_three_databases():
    sql = (ROOT / "deploy" / "postgres" / "init.sql").read_text(encoding="utf-8")
    assert re.findall(r"CREATE DATABASE (\w+);", sql) == ["hat", "mlflow", "prefect"]
