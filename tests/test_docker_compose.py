"""docker-compose.yml runs the same Weaviate, configured like the local server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from stitcher import config, server

COMPOSE_FILE = Path(__file__).resolve().parent.parent / "docker-compose.yml"

#: Settings that change behaviour or exposure; ports, paths and node names differ by design.
SHARED_SETTINGS = (
    "DEFAULT_VECTORIZER_MODULE",
    "API_BASED_MODULES_DISABLED",
    "DISABLE_TELEMETRY",
    "GO_PROFILING_DISABLE",
    "ENABLE_TOKENIZER_GSE_CH",
    "AUTHENTICATION_ANONYMOUS_ACCESS_ENABLED",
    "AUTHENTICATION_APIKEY_ENABLED",
    "AUTHENTICATION_APIKEY_USERS",
    "CLUSTER_HOSTNAME",
    "CLUSTER_BASIC_AUTH_USERNAME",
    "RAFT_BOOTSTRAP_EXPECT",
    "RAFT_TIMEOUTS_MULTIPLIER",
)


@pytest.fixture(scope="module")
def weaviate_service() -> dict[str, Any]:
    compose = yaml.safe_load(COMPOSE_FILE.read_text())
    return dict(compose["services"]["weaviate"])


@pytest.fixture(scope="module")
def local_environment() -> dict[str, str]:
    ports = server.Ports(http=1, grpc=2, gossip=3, data=4, raft=5)
    return server.server_environment(Path("/home"), ports, "KEY", "PASSWORD")


def test_image_tag_is_the_pinned_version(weaviate_service: dict[str, Any]) -> None:
    image = weaviate_service["image"]
    assert image == f"cr.weaviate.io/semitechnologies/weaviate:{config.WEAVIATE_VERSION}"


def test_settings_match_the_local_server(
    weaviate_service: dict[str, Any], local_environment: dict[str, str]
) -> None:
    environment = {name: str(value) for name, value in weaviate_service["environment"].items()}
    for name in SHARED_SETTINGS:
        assert environment.get(name) == local_environment[name], name


def test_api_key_comes_from_the_environment(weaviate_service: dict[str, Any]) -> None:
    allowed = weaviate_service["environment"]["AUTHENTICATION_APIKEY_ALLOWED_KEYS"]
    assert allowed.startswith("${WEAVIATE_API_KEY:?")


def test_the_internal_port_needs_a_password_from_the_environment(
    weaviate_service: dict[str, Any],
) -> None:
    password = weaviate_service["environment"]["CLUSTER_BASIC_AUTH_PASSWORD"]
    assert password.startswith("${WEAVIATE_CLUSTER_PASSWORD:?")


def test_ports_are_published_on_loopback_only(weaviate_service: dict[str, Any]) -> None:
    ports = {str(mapping) for mapping in weaviate_service["ports"]}
    assert ports == {"127.0.0.1:8080:8080", "127.0.0.1:50051:50051"}
    assert str(weaviate_service["environment"]["GRPC_PORT"]) == "50051"
    command = weaviate_service["command"]
    assert command[command.index("--port") + 1] == "8080"


def test_data_lives_in_a_named_volume(weaviate_service: dict[str, Any]) -> None:
    compose = yaml.safe_load(COMPOSE_FILE.read_text())
    data_path = weaviate_service["environment"]["PERSISTENCE_DATA_PATH"]
    volume_names = set(compose["volumes"])
    mounts = [str(volume).split(":") for volume in weaviate_service["volumes"]]
    assert [source for source, target in mounts if target == data_path] == ["weaviate_data"]
    assert "weaviate_data" in volume_names


def test_healthcheck_asks_ready(weaviate_service: dict[str, Any]) -> None:
    test = weaviate_service["healthcheck"]["test"]
    assert "http://127.0.0.1:8080/v1/.well-known/ready" in test
