"""What the weaviate client's failures are, by type: its exception classes, gRPC status codes
(`grpc.StatusCode`) and the httpx errors under its REST calls, told apart for stitcher.faults.

stitcher.faults knows nothing of the client; the store hands it `kind_of_client_error` with
every error of its own requests, so a client upgrade that moves an error to another class
changes what is retried only where this module names the classes (tests/test_fault_types.py
raises the client's real exceptions and real gRPC errors).
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from stitcher.errors import FaultKind
from stitcher.faults import Fault, classify, http_status_kind

# weaviate, grpc and httpx are imported inside the functions: importing them costs about a
# second, and an error of theirs only exists once a request of the client has been sent, when
# they are loaded already.
if TYPE_CHECKING:
    import grpc


def kind_of_client_error(error: BaseException) -> FaultKind | None:
    """The kind of one exception raised by the weaviate client (or by grpc or httpx under it);
    None when it is none of theirs or says nothing (stitcher.faults then looks at its cause and
    at Python's own ConnectionError and TimeoutError)."""
    import grpc
    import httpx
    from weaviate import exceptions as client

    if isinstance(error, client.UnexpectedStatusCodeError):  # InsufficientPermissionsError too
        return _kind_of_status(error.status_code)
    if isinstance(error, client.WeaviateTimeoutError):
        return "timeout"
    if isinstance(
        error,
        (
            client.WeaviateConnectionError,
            client.WeaviateClosedClientError,
            client.WeaviateGRPCUnavailableError,
            client.WeaviateStartUpError,
            # raised by the client only after retrying UNAVAILABLE
            client.WeaviateRetryError,
        ),
    ):
        return "connection"
    if isinstance(error, grpc.RpcError):
        # A call that failed is both an RpcError and a Call; an RpcError without a call (a
        # channel closed under it) has no code and says nothing by itself.
        if not isinstance(error, grpc.Call):
            return None
        return _grpc_kinds().get(error.code(), "refused")
    if isinstance(error, httpx.TimeoutException):
        return "timeout"
    if isinstance(error, httpx.TransportError):  # refused, reset, the server disconnected
        return "connection"
    return None


def classify_client_error(error: BaseException) -> Fault:
    """stitcher.faults.classify for an error of the client's requests."""
    return classify(error, kind_of_client_error)


def is_transient_client_error(error: BaseException) -> bool:
    """Whether retrying a request of the client that raised `error` may help."""
    return classify_client_error(error).transient


@cache
def _grpc_kinds() -> dict[grpc.StatusCode, FaultKind]:
    """gRPC status codes by what they mean here; any other is "refused"."""
    import grpc

    return {
        grpc.StatusCode.UNAVAILABLE: "connection",
        grpc.StatusCode.CANCELLED: "connection",
        grpc.StatusCode.DEADLINE_EXCEEDED: "timeout",
        grpc.StatusCode.RESOURCE_EXHAUSTED: "timeout",
        grpc.StatusCode.INTERNAL: "server",
        grpc.StatusCode.UNKNOWN: "server",
        grpc.StatusCode.ABORTED: "server",
        grpc.StatusCode.DATA_LOSS: "server",
    }


@cache
def _grpc_codes_by_number() -> dict[int, Any]:
    import grpc

    return {code.value[0]: code for code in grpc.StatusCode}


def _kind_of_status(status: int) -> FaultKind:
    """An UnexpectedStatusCodeError's status: HTTP, or (below 100, when the client made it from
    a gRPC call) the gRPC code's number."""
    if status < 100:
        return _grpc_kinds().get(_grpc_codes_by_number().get(status), "refused")
    return http_status_kind(status)
