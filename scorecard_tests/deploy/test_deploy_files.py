"""Static checks of deploy/ (no Docker engine or Kubernetes runs here): the compose file against the
compose-spec JSON schema (vendored by check-jsonschema, installed from PyPI), the Helm values against
our model of the chart keys they set, the instance file against Dagster's own config schemas, the
image's pins against pyproject.toml, and every variable a file reads being set where it runs."""

from __future__ import annotations

import json
import re
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import jsonschema
import pytest
import yaml
from pydantic import BaseModel, ConfigDict

pytestmark = pytest.mark.deploy

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
PYPROJECT = DEPLOY.parent / "pyproject.toml"
CODE_VARS = {"SCORECARD_STORAGE_URL", "SCORECARD_OUTPUT_DIR", "SCORECARD_CONFIG"}


def _yaml(name: str) -> Any:
    return yaml.safe_load((DEPLOY / name).read_text())


def _env_refs(node: Any) -> set[str]:
    """Every ``{env: NAME}`` a Dagster config file reads."""
    if isinstance(node, dict):
        if set(node) == {"env"}:
            return {node["env"]}
        return set().union(*(_env_refs(v) for v in node.values())) if node else set()
    if isinstance(node, list):
        return set().union(*(_env_refs(v) for v in node)) if node else set()
    return set()


# ------------------------------------------------------------------------------------- compose


def _compose_schema() -> dict[str, Any]:
    vendor = resources.files("check_jsonschema.builtin_schemas.vendor")
    return json.loads((vendor / "compose-spec.json").read_text())


def test_the_compose_file_follows_the_compose_spec() -> None:
    jsonschema.validate(_yaml("compose.yaml"), _compose_schema())


def test_the_schema_check_rejects_a_broken_compose_file() -> None:
    broken = _yaml("compose.yaml")
    broken["services"]["webserver"]["restart_policy"] = "always"  # not a service key
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, _compose_schema())


def test_compose_has_every_service_a_deployment_needs() -> None:
    services = _yaml("compose.yaml")["services"]
    assert {"postgres", "minio", "scorecard-code", "webserver", "daemon"} <= set(services)
    code = services["scorecard-code"]
    assert code["build"]["dockerfile"] == "deploy/Dockerfile"
    for name in ("webserver", "daemon"):
        assert services[name]["image"] == code["image"], name


def test_every_variable_the_instance_and_the_code_read_is_set_in_compose() -> None:
    compose = _yaml("compose.yaml")
    needed = _env_refs(_yaml("dagster.yaml")) | CODE_VARS
    for name in ("scorecard-code", "webserver", "daemon"):
        env = compose["services"][name]["environment"]
        assert needed <= set(env), (name, sorted(needed - set(env)))


def test_dossier_homes_and_the_config_are_mounted_read_only() -> None:
    volumes = _yaml("compose.yaml")["services"]["scorecard-code"]["volumes"]
    assert volumes and all(v.endswith(":ro") for v in volumes)


# ------------------------------------------------------------------------------------ instance


def test_the_instance_file_validates_against_dagsters_schemas(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from dagster._config import process_config
    from dagster._core.instance.config import dagster_instance_config
    from dagster_aws.s3.compute_log_manager import S3ComputeLogManager
    from dagster_postgres import DagsterPostgresStorage

    config = _yaml("dagster.yaml")
    for var in _env_refs(config):
        monkeypatch.setenv(var, "5432" if var.endswith("_PORT") else "x")
    (tmp_path / "dagster.yaml").write_text((DEPLOY / "dagster.yaml").read_text())
    validated, _ = dagster_instance_config(str(tmp_path))
    storage = process_config(DagsterPostgresStorage.config_type(), validated["storage"]["postgres"])
    assert storage.success and storage.value["postgres_db"]["port"] == 5432
    assert validated["run_coordinator"]["class"] == "QueuedRunCoordinator"
    assert validated["concurrency"]["pools"]["default_limit"] == 1
    assert validated["concurrency"]["runs"]["max_concurrent_runs"] > 1, "not a global limit of one run"
    logs = validated["compute_logs"]
    assert (logs["module"], logs["class"]) == ("dagster_aws.s3.compute_log_manager", "S3ComputeLogManager")
    assert process_config(S3ComputeLogManager.config_type(), logs["config"]).success


def test_the_development_instance_needs_no_variable() -> None:
    root = DEPLOY.parent / "dagster.yaml"
    config = yaml.safe_load(root.read_text())
    assert _env_refs(config) == set()
    assert all(
        str(v).startswith(".dagster/instance")
        for v in (
            config["storage"]["sqlite"]["base_dir"],
            config["local_artifact_storage"]["config"]["base_dir"],
            config["compute_logs"]["config"]["base_dir"],
        )
    )


# ----------------------------------------------------------------------------------------- helm
# Our model of the keys deploy/helm/values.yaml sets in the official `dagster` chart 1.13: names and
# shapes from the chart's values schema; unknown keys are refused at every level we model.


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SecretRef(_Strict):
    name: str


class EnvVar(_Strict):
    name: str
    value: str


class Image(_Strict):
    repository: str
    tag: str
    pullPolicy: Literal["Always", "IfNotPresent", "Never"]


class IncludeConfig(_Strict):
    enabled: bool


class UserDeployment(_Strict):
    name: str
    image: Image
    codeServerArgs: list[str]
    port: int
    env: list[EnvVar]
    envSecrets: list[SecretRef]
    volumes: list[dict[str, Any]]
    volumeMounts: list[dict[str, Any]]
    resources: dict[str, Any]
    includeConfigInLaunchedRuns: IncludeConfig


class UserDeployments(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    enabled: bool
    enableSubchart: bool
    deployments: list[UserDeployment]


class Postgresql(_Strict):
    class Service(_Strict):
        port: int

    enabled: bool
    postgresqlHost: str
    postgresqlUsername: str
    postgresqlDatabase: str
    service: Service


class RunCoordinator(_Strict):
    enabled: bool
    type: Literal["QueuedRunCoordinator", "CustomRunCoordinator"]


class Daemon(_Strict):
    enabled: bool
    runCoordinator: RunCoordinator
    envSecrets: list[SecretRef]


class Webserver(_Strict):
    replicaCount: int
    envSecrets: list[SecretRef]


class Pools(_Strict):
    defaultLimit: int
    granularity: Literal["op", "run"]


class Runs(_Strict):
    maxConcurrentRuns: int


class Concurrency(_Strict):
    enabled: bool
    pools: Pools
    runs: Runs


class K8sRunLauncherConfig(_Strict):
    envSecrets: list[SecretRef]


class RunLauncher(_Strict):
    class Config(_Strict):
        k8sRunLauncher: K8sRunLauncherConfig

    type: Literal["K8sRunLauncher", "CeleryK8sRunLauncher", "CustomRunLauncher"]
    config: Config


class S3Logs(_Strict):
    bucket: str
    prefix: str
    region: str
    skipEmptyFiles: bool
    uploadInterval: int


class ComputeLogManager(_Strict):
    class Config(_Strict):
        s3ComputeLogManager: S3Logs

    type: Literal["S3ComputeLogManager"]
    config: Config


class Global(_Strict):
    postgresqlSecretName: str


class HelmValues(_Strict):
    global_: Global
    postgresql: Postgresql
    generatePostgresqlPasswordSecret: bool
    dagsterWebserver: Webserver
    dagsterDaemon: Daemon
    concurrency: Concurrency
    runLauncher: RunLauncher
    computeLogManager: ComputeLogManager
    user_deployments: UserDeployments


def _helm_values() -> HelmValues:
    raw = _yaml("helm/values.yaml")
    raw["global_"] = raw.pop("global")
    raw["user_deployments"] = raw.pop("dagster-user-deployments")
    return HelmValues.model_validate(raw)


def test_the_helm_values_use_only_chart_keys_we_know() -> None:
    values = _helm_values()
    assert not values.postgresql.enabled, "Dagster's storage is an external PostgreSQL"
    assert values.concurrency.pools.defaultLimit == 1 and values.concurrency.runs.maxConcurrentRuns > 1


def test_the_model_refuses_a_misspelt_key() -> None:
    raw = _yaml("helm/values.yaml")
    raw["dagster-user-deployments"]["deployments"][0]["dagsterApiGrpcArg"] = ["-m", "x"]
    raw["global_"] = raw.pop("global")
    raw["user_deployments"] = raw.pop("dagster-user-deployments")
    with pytest.raises(ValueError, match="dagsterApiGrpcArg"):
        HelmValues.model_validate(raw)


def test_the_user_deployment_serves_our_code_location_with_remote_stores() -> None:
    (deployment,) = _helm_values().user_deployments.deployments
    assert deployment.codeServerArgs[:2] == ["-m", "scorecard_assets.definitions"]
    env = {e.name: e.value for e in deployment.env}
    assert set(env) >= CODE_VARS
    assert env["SCORECARD_STORAGE_URL"].startswith("s3://") and env["SCORECARD_OUTPUT_DIR"].startswith(
        "s3://"
    )
    assert all(m.get("readOnly") for m in deployment.volumeMounts)


# ---------------------------------------------------------------------------------------- image


def _pins(lines: list[str]) -> dict[str, str]:
    out = {}
    for line in lines:
        m = re.match(r"^([A-Za-z0-9_.\[\]-]+?)(?:\[[^\]]*\])?==([^\s;#]+)", line.strip())
        if m:
            out[m.group(1).lower().replace("_", "-")] = m.group(2)
    return out


def test_the_image_pins_agree_with_pyproject() -> None:
    project = tomllib.loads(PYPROJECT.read_text())["project"]
    wanted = _pins([*project["dependencies"], *project["optional-dependencies"]["deploy"]])
    locked = _pins((DEPLOY / "requirements.txt").read_text().splitlines())
    assert {k: locked.get(k) for k in wanted} == wanted, "run `make lock`"
    family = {k: v for k, v in locked.items() if k.startswith("dagster")}
    assert set(family.values()) <= {"1.13.27", "0.29.27"}, family


def test_the_dockerfile_installs_the_lock_and_starts_a_code_server() -> None:
    text = (DEPLOY / "Dockerfile").read_text()
    assert "pip install -r deploy/requirements.txt" in text
    assert "pip install --no-deps ." in text
    assert '"code-server", "start"' in text and '"scorecard_assets.definitions"' in text
    assert "deploy/dagster.yaml ${DAGSTER_HOME}/dagster.yaml" in text
