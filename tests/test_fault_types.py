"""Faults told apart by type and status code, on the exception classes the libraries really raise:
weaviate-client's (built with the arguments the client gives them), real gRPC errors from real
channels, httpx's, Python's — and, where cheap, provoked from the real server.

The client's classes are named by the store's classifier (stitcher.store.weaviate.faults), which
the store hands to stitcher.faults with every error of its requests; stitcher.faults itself
knows Python's exceptions only."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import grpc
import httpx
import pytest
from weaviate.exceptions import (
    InsufficientPermissionsError,
    UnexpectedStatusCodeError,
    WeaviateBatchError,
    WeaviateClosedClientError,
    WeaviateConnectionError,
    WeaviateDeleteManyError,
    WeaviateQueryError,
    WeaviateRetryError,
    WeaviateTimeoutError,
)

from stitcher import faults
from stitcher.store.weaviate.faults import classify_client_error as classify
from stitcher.store.weaviate.faults import is_transient_client_error as is_transient
from stitcher.store.weaviate.faults import kind_of_client_error
from stitcher.store.weaviate.leases import WeaviateLeases

URL = "http://127.0.0.1:8080/v1/objects"


def response(status: int, body: dict[str, Any] | None = None) -> httpx.Response:
    return httpx.Response(status, json=body or {}, request=httpx.Request("POST", URL))


def status_error(status: int, message: str = "") -> UnexpectedStatusCodeError:
    return UnexpectedStatusCodeError(
        "Object was not added", response(status, {"error": [{"message": message}]})
    )


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (500, "server"),
        (502, "server"),
        (503, "connection"),
        (504, "timeout"),
        (408, "timeout"),
        (429, "timeout"),
        (400, "refused"),
        (401, "refused"),
        (404, "refused"),
        (422, "refused"),
    ],
)
def test_http_status_codes(status: int, kind: str) -> None:
    assert classify(status_error(status)).kind == kind


def test_the_servers_words_decide_read_only_and_schema_whatever_the_status() -> None:
    assert classify(status_error(500, "store is read-only")).kind == "read_only"
    assert classify(status_error(422, "no such prop with name 'start'")).kind == "schema"
    # A "timeout" in the text of a refusal no longer makes it one (the old regex did).
    assert classify(status_error(422, "property 'timeout_ms' must be positive")).kind == "refused"
    assert classify(status_error(400, "field timeout is invalid")).kind == "refused"


def test_permissions_are_refused() -> None:
    assert classify(InsufficientPermissionsError(response(403))).kind == "refused"


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (WeaviateConnectionError("Connection to Weaviate failed. Details: "), "connection"),
        (WeaviateClosedClientError(), "connection"),
        (WeaviateTimeoutError("The request to Weaviate timed out."), "timeout"),
        (WeaviateRetryError("UNAVAILABLE", 4), "connection"),
        (httpx.ConnectError("[Errno 111] Connection refused"), "connection"),
        (httpx.RemoteProtocolError("Server disconnected"), "connection"),
        (httpx.ReadTimeout("timed out"), "timeout"),
        (ConnectionRefusedError(111, "Connection refused"), "connection"),
        (ConnectionResetError(104, "Connection reset by peer"), "connection"),
        (TimeoutError("timed out"), "timeout"),
        # Unknown: not retried, whatever its text says.
        (RuntimeError("connection timeout"), "refused"),
        (WeaviateQueryError("vector lengths don't match", "GRPC search"), "refused"),
    ],
)
def test_exception_types(error: BaseException, kind: str) -> None:
    assert classify(error).kind == kind


def test_stitcher_faults_alone_knows_no_client() -> None:
    """Without the store's classifier a client error says nothing by its type: only Python's
    own exceptions (and the server's words for a full disk or a changed schema) are known."""
    lost = WeaviateConnectionError("Connection to Weaviate failed.")
    assert faults.classify(lost).kind == "refused"
    assert faults.classify(lost, kind_of_client_error).kind == "connection"
    assert faults.classify(ConnectionResetError()).kind == "connection"
    assert kind_of_client_error(ConnectionResetError()) is None  # not the client's own
    assert kind_of_client_error(RuntimeError("UNAVAILABLE")) is None


def test_the_lease_board_classifies_the_clients_errors_for_the_locks() -> None:
    board = WeaviateLeases(client=None)  # type: ignore[arg-type]  # classifying sends nothing
    assert board.fault_kind(WeaviateTimeoutError("The request to Weaviate timed out.")) == "timeout"
    assert board.fault_kind(status_error(503)) == "connection"
    assert board.fault_kind(status_error(422, "id already exists")) == "refused"
    assert faults.is_transient(WeaviateClosedClientError(), board.fault_kind)
    assert faults.reason(WeaviateClosedClientError(), board.fault_kind) == (
        "the server cannot be reached"
    )


def test_importing_the_classifiers_loads_no_client() -> None:
    """The store's classifier imports the client only when it is handed an error."""
    code = (
        "import sys, stitcher.faults, stitcher.store.weaviate.faults, "
        "stitcher.store.weaviate.leases; "
        "print(sorted({'weaviate', 'grpc', 'httpx'} & set(sys.modules)))"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert completed.stdout.strip() == "[]"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _grpc_error(target: str, timeout: float) -> grpc.RpcError:
    """The error a real call on a real channel raises."""
    with grpc.insecure_channel(target) as channel:
        search = channel.unary_unary("/weaviate.v1.Weaviate/Search")
        with pytest.raises(grpc.RpcError) as raised:
            search(b"", timeout=timeout)
    return raised.value


@pytest.fixture
def silent_listener() -> Iterator[str]:
    """A port that accepts connections and never answers (a hung server)."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        yield f"127.0.0.1:{listener.getsockname()[1]}"


def test_real_grpc_errors_by_status_code(silent_listener: str) -> None:
    refused = _grpc_error(f"127.0.0.1:{_free_port()}", timeout=5)
    assert refused.code() == grpc.StatusCode.UNAVAILABLE
    assert classify(refused).kind == "connection" and is_transient(refused)
    hung = _grpc_error(silent_listener, timeout=0.3)
    assert hung.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert classify(hung).kind == "timeout"


def test_the_clients_wrappers_are_classified_by_the_grpc_error_they_were_raised_from() -> None:
    """The client raises WeaviateBatchError(details) inside `except RpcError`: the gRPC error is
    only the context, and its code decides."""
    refused = _grpc_error(f"127.0.0.1:{_free_port()}", timeout=5)
    for wrapper in (WeaviateBatchError, WeaviateDeleteManyError):
        try:
            try:
                raise refused
            except grpc.RpcError as error:
                raise wrapper(str(error.details()))  # noqa: B904 (as the client does)
        except wrapper as wrapped:
            assert classify(wrapped).kind == "connection", wrapper


def test_status_codes_of_grpc_responses_are_grpc_codes(silent_listener: str) -> None:
    """UnexpectedStatusCodeError built from a gRPC call carries the gRPC code's number."""
    refused = _grpc_error(f"127.0.0.1:{_free_port()}", timeout=5)
    error = UnexpectedStatusCodeError("Batch objects", refused)  # type: ignore[arg-type]
    assert error.status_code == grpc.StatusCode.UNAVAILABLE.value[0]
    assert classify(error).kind == "connection"
    hung = _grpc_error(silent_listener, timeout=0.3)
    error = UnexpectedStatusCodeError("Batch objects", hung)  # type: ignore[arg-type]
    assert error.status_code == grpc.StatusCode.DEADLINE_EXCEEDED.value[0]
    assert classify(error).kind == "timeout"


def test_a_wrong_key_on_the_real_server_is_refused(weaviate_server: Any) -> None:
    import weaviate
    from weaviate.classes.init import Auth

    with pytest.raises(Exception) as raised:
        client = weaviate.connect_to_custom(
            http_host="127.0.0.1",
            http_port=weaviate_server.http_port,
            http_secure=False,
            grpc_host="127.0.0.1",
            grpc_port=weaviate_server.grpc_port,
            grpc_secure=False,
            auth_credentials=Auth.api_key("not-the-key"),
            skip_init_checks=True,
        )
        try:
            client.collections.list_all()
        finally:
            client.close()
    fault = classify(raised.value)
    assert fault.kind == "refused" and not fault.transient, repr(raised.value)
