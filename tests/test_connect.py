"""connect(): the local default, explicit URLs, and failures that name the URL but never the key."""

from __future__ import annotations

import secrets
import socket
import subprocess
import sys
import traceback
from collections.abc import Iterator
from pathlib import Path

import pytest

from stitcher.config import ConnectionSettings
from stitcher.errors import AuthenticationFailed, ConfigError, ConnectionFailed
from stitcher.server import ServerInfo
from stitcher.store.weaviate.connection import connect

REPO = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def rendered(error: BaseException) -> str:
    """Everything a traceback would print, chained exceptions included."""
    return "".join(traceback.format_exception(type(error), error, error.__traceback__))


@pytest.fixture
def silent_listener() -> Iterator[int]:
    """A port that accepts connections but never answers."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield int(listener.getsockname()[1])


def test_importing_does_not_load_the_weaviate_client() -> None:
    code = (
        "import sys, stitcher.store.weaviate.connection, stitcher.server;"
        " print('weaviate' in sys.modules)"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert completed.stdout.strip() == "False"


@pytest.mark.integration
def test_default_settings_use_the_local_server(weaviate_server: ServerInfo) -> None:
    # STITCHER_HOME points at the session's home, so the default finds that server.
    client = connect(ConnectionSettings())
    try:
        assert client.is_ready()
        assert client.get_meta()["version"] == weaviate_server.version
        client.collections.list_all()  # an authenticated gRPC-backed session works
    finally:
        client.close()


@pytest.mark.integration
def test_explicit_url_and_key(weaviate_server: ServerInfo) -> None:
    settings = ConnectionSettings(
        url=weaviate_server.url + "/",
        api_key=weaviate_server.api_key(),
        grpc_port=weaviate_server.grpc_port,
    )
    client = connect(settings)
    try:
        collection = client.collections.create("ConnectProbe")
        try:
            collection.data.insert({"text": "连接成功 connected"})
            texts = [o.properties["text"] for o in collection.query.fetch_objects().objects]
            assert texts == ["连接成功 connected"]
        finally:
            client.collections.delete("ConnectProbe")
    finally:
        client.close()


@pytest.mark.integration
def test_wrong_key_is_refused_without_showing_it(weaviate_server: ServerInfo) -> None:
    wrong_key = "wrong-" + secrets.token_hex(8)
    settings = ConnectionSettings(
        url=weaviate_server.url, api_key=wrong_key, grpc_port=weaviate_server.grpc_port
    )
    with pytest.raises(AuthenticationFailed) as raised:
        connect(settings)
    message = str(raised.value)
    assert "refused the API key" in message
    assert weaviate_server.url in message
    assert wrong_key not in rendered(raised.value)


@pytest.mark.integration
def test_missing_key_is_reported(weaviate_server: ServerInfo) -> None:
    settings = ConnectionSettings(url=weaviate_server.url, grpc_port=weaviate_server.grpc_port)
    with pytest.raises(AuthenticationFailed, match="requires an API key"):
        connect(settings)


@pytest.mark.integration
def test_unreachable_grpc_port_is_reported(weaviate_server: ServerInfo) -> None:
    key = weaviate_server.api_key()
    port = free_port()
    settings = ConnectionSettings(url=weaviate_server.url, api_key=key, grpc_port=port)
    with pytest.raises(ConnectionFailed) as raised:
        connect(settings)
    assert f"127.0.0.1:{port}" in str(raised.value)
    assert "gRPC" in str(raised.value)
    assert key not in rendered(raised.value)


def test_refused_connection_names_the_url() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    key = "secret-" + secrets.token_hex(8)  # built at run time: not in any source line
    with pytest.raises(ConnectionFailed) as raised:
        connect(ConnectionSettings(url=url, api_key=key))
    message = str(raised.value)
    assert url in message and "\n" not in message
    assert key not in rendered(raised.value)


def test_silent_server_fails_instead_of_hanging(silent_listener: int) -> None:
    url = f"http://127.0.0.1:{silent_listener}"
    with pytest.raises(ConnectionFailed, match="no answer within") as raised:
        connect(ConnectionSettings(url=url, api_key="k"))
    assert url in str(raised.value)


def test_unknown_host_names_the_url() -> None:
    url = "https://no-such-host.invalid:8443"
    with pytest.raises(ConnectionFailed) as raised:
        connect(ConnectionSettings(url=url))
    assert url in str(raised.value)


def test_cloud_without_key_says_so() -> None:
    with pytest.raises(AuthenticationFailed, match="needs an API key"):
        connect(ConnectionSettings(url="https://example.c0.europe-west3.gcp.weaviate.cloud"))


@pytest.mark.parametrize("url", ["localhost:8080", "ftp://example.org", "http://host:99999"])
def test_malformed_urls_are_config_errors(url: str) -> None:
    with pytest.raises(ConfigError, match="WEAVIATE_URL"):
        connect(ConnectionSettings(url=url))
