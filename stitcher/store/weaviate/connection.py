"""Opening a weaviate client: the local server by default, or any server given by URL.

Every failure becomes a one-line StitcherError naming the URL. The API key never appears in a
message: exception text from the client is scrubbed and the original exception is not chained.
"""

from __future__ import annotations

import socket
import sys
import urllib.error
import urllib.request
import warnings
from types import ModuleType
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from stitcher import server
from stitcher.config import ConnectionSettings
from stitcher.errors import AuthenticationFailed, ConfigError, ConnectionFailed, setting

if TYPE_CHECKING:
    import weaviate

    from stitcher.server import Notice

DEFAULT_GRPC_PORT = 50051

#: Hosts served by Weaviate Cloud, which needs its own connection helper (gRPC host differs).
CLOUD_SUFFIXES = (".weaviate.cloud", ".weaviate.network")

#: Seconds for the first request. Short on purpose: a wrong URL should fail at once, not hang.
INIT_TIMEOUT = 3
QUERY_TIMEOUT = 60
INSERT_TIMEOUT = 120


def connect(
    settings: ConnectionSettings, *, notice: Notice | None = None
) -> weaviate.WeaviateClient:
    """Connect to the Weaviate that `settings` names, starting the local server when none is.

    Args:
        settings: `url=None` means the local server under config.stitcher_home() (started when
            needed, authenticated with its own key); otherwise `http(s)://host[:port]` with
            `api_key` and `grpc_port` (default 50051, same host; https makes both secure).
        notice: Receives one-line notices from starting the local server (stale state).

    Returns:
        A connected client; the caller closes it.

    Raises:
        ConfigError: The URL is malformed.
        ConnectionFailed: Nothing answered at the URL (REST or gRPC), or it is not Weaviate.
        AuthenticationFailed: The server refused the key, or a key is needed and none was given.
        ServerError: The local server could not be started.
    """
    if settings.url is None:
        info = server.ensure_running(notice=notice)
        return _connect_custom(
            url=info.url,
            host="127.0.0.1",
            http_port=info.http_port,
            secure=False,
            grpc_port=info.grpc_port,
            api_key=info.api_key(),
        )
    url = settings.url.rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(
            f"Weaviate URL {url!r} is not of the form http(s)://host[:port]: fix "
            f"{setting('url')} or WEAVIATE_URL"
        )
    try:
        port = parts.port
    except ValueError:
        raise ConfigError(
            f"Weaviate URL {url!r} has an invalid port: fix {setting('url')} or WEAVIATE_URL"
        ) from None
    host = parts.hostname
    secure = parts.scheme == "https"
    if host.endswith(CLOUD_SUFFIXES):
        return _connect_cloud(url, settings.api_key)
    return _connect_custom(
        url=url,
        host=host,
        http_port=port or (443 if secure else 80),
        secure=secure,
        grpc_port=settings.grpc_port or DEFAULT_GRPC_PORT,
        api_key=settings.api_key,
    )


def import_weaviate() -> ModuleType:
    """`import weaviate`, with pydantic building each of the client's models on first use.

    Importing the client defines ~250 pydantic models (collection config, batching, generative,
    backup, RBAC ...); building their validators up front is a fifth of its import time, and a
    search validates only a handful. pydantic's own `defer_build` postpones that work to a
    model's first use; it is set as the default only while the client's modules are imported,
    so no other library's models are affected. Without that pydantic internal (another
    pydantic version), this is a plain import.

    The client's `__init__` also calls `warnings.simplefilter("default")`, which would show
    every warning of the process from then on (a detached server's Popen object, still running
    at exit, printed a ResourceWarning after each command that started the local server): the
    warning filters are put back as they were.
    """
    if "weaviate" in sys.modules:
        return sys.modules["weaviate"]
    with warnings.catch_warnings():
        return _import_weaviate()


def _import_weaviate() -> ModuleType:
    try:
        from pydantic._internal import _config

        config_defaults: Any = _config.config_defaults
    except (ImportError, AttributeError):  # another pydantic: just slower
        config_defaults = None
    if not isinstance(config_defaults, dict) or "defer_build" not in config_defaults:
        import weaviate  # the client: about a second, so only once a connection is wanted

        return weaviate
    previous = config_defaults["defer_build"]
    config_defaults["defer_build"] = True
    try:
        import weaviate
    finally:
        config_defaults["defer_build"] = previous
    return weaviate


def _additional_config() -> object:
    import weaviate.retry
    from weaviate.classes.init import AdditionalConfig, Timeout

    # Every connection is made with this config: stitcher's retry policy is the one budget.
    leave_retrying_to_stitcher(weaviate.retry)

    return AdditionalConfig(
        timeout=Timeout(init=INIT_TIMEOUT, query=QUERY_TIMEOUT, insert=INSERT_TIMEOUT)
    )


def _connect_custom(
    *, url: str, host: str, http_port: int, secure: bool, grpc_port: int, api_key: str | None
) -> weaviate.WeaviateClient:
    _preflight(url)
    import_weaviate()  # first: it decides how the client's modules are loaded
    import weaviate
    from weaviate.classes.init import Auth

    try:
        client = weaviate.connect_to_custom(
            http_host=host,
            http_port=http_port,
            http_secure=secure,
            grpc_host=host,
            grpc_port=grpc_port,
            grpc_secure=secure,
            auth_credentials=Auth.api_key(api_key) if api_key else None,
            additional_config=_additional_config(),  # type: ignore[arg-type]
            # Otherwise the client GETs pypi.org on every connect.
            skip_init_checks=True,
        )
    except Exception as error:
        raise _translate(error, url, api_key) from None
    _check_grpc(client, url, host, grpc_port)
    return client


def _connect_cloud(url: str, api_key: str | None) -> weaviate.WeaviateClient:
    import_weaviate()  # first: it decides how the client's modules are loaded
    import weaviate
    from weaviate.classes.init import Auth

    if not api_key:
        raise AuthenticationFailed(
            f"Weaviate Cloud at {url} needs an API key: pass {setting('api_key')} or set "
            "WEAVIATE_API_KEY"
        )
    _preflight(url)
    try:
        client = weaviate.connect_to_weaviate_cloud(
            cluster_url=url,
            auth_credentials=Auth.api_key(api_key),
            additional_config=_additional_config(),  # type: ignore[arg-type]
            skip_init_checks=True,
        )
    except Exception as error:
        raise _translate(error, url, api_key) from None
    _check_grpc(client, url, None, None)
    return client


def _preflight(url: str) -> None:
    """Fail within INIT_TIMEOUT when nothing answers HTTP at `url`.

    The client's own first request (GET /v1/meta) runs under the *query* timeout, so a host that
    accepts connections but never answers would otherwise hang connect() for a minute.
    """
    request = urllib.request.Request(f"{url}/v1/.well-known/ready")
    # The client ignores proxy variables (trust_env=False); do the same so both see one server.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=INIT_TIMEOUT):
            pass
    except urllib.error.HTTPError:
        pass  # something answers; the client will say whether it is Weaviate
    except (OSError, ValueError) as error:
        reason = getattr(error, "reason", None) or error
        if isinstance(reason, (TimeoutError, socket.timeout)):
            reason = f"no answer within {INIT_TIMEOUT} s"
        raise ConnectionFailed(
            f"Could not reach Weaviate at {url} ({reason}): is the server running and the URL "
            "right?"
        ) from None


def _check_grpc(
    client: weaviate.WeaviateClient,
    url: str,
    host: str | None,
    grpc_port: int | None,
) -> None:
    """Fail now, not at the first query, when the gRPC side is unreachable.

    skip_init_checks (needed to avoid the pypi.org request) also skips the client's gRPC health
    check, so it is run here through the connection's own helper when this client version has it.
    """
    ping = getattr(getattr(client, "_connection", None), "_ping_grpc", None)
    if ping is None:
        return
    try:
        ping("sync")
    except Exception as error:
        client.close()
        where = f"{host}:{grpc_port}" if host is not None else "the cluster's gRPC endpoint"
        raise ConnectionFailed(
            f"Weaviate at {url} answers REST but its gRPC API at {where} does not "
            f"({type(error).__name__}): check {setting('grpc_port')} / WEAVIATE_GRPC_PORT"
        ) from None


def _translate(error: Exception, url: str, api_key: str | None) -> Exception:
    from weaviate.exceptions import AuthenticationFailedError, UnexpectedStatusCodeError

    detail = _scrub(_first_line(error), api_key)
    status = getattr(error, "status_code", None)
    if isinstance(error, AuthenticationFailedError) or (
        isinstance(error, UnexpectedStatusCodeError) and status in (401, 403)
    ):
        if not api_key:
            return AuthenticationFailed(
                f"Weaviate at {url} requires an API key: pass {setting('api_key')} or set "
                "WEAVIATE_API_KEY"
            )
        return AuthenticationFailed(
            f"Weaviate at {url} refused the API key (HTTP {status or 401}): check "
            f"{setting('api_key')} or "
            "WEAVIATE_API_KEY"
        )
    if isinstance(error, UnexpectedStatusCodeError):
        return ConnectionFailed(
            f"{url} answered HTTP {status} instead of Weaviate's metadata: is this the right "
            "URL of a Weaviate server?"
        )
    return ConnectionFailed(
        f"Could not reach Weaviate at {url} ({detail}): is the server running and the URL right?"
    )


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    first = text.splitlines()[0] if text else ""
    return first[:200] or type(error).__name__


def _scrub(text: str, api_key: str | None) -> str:
    return text.replace(api_key, "***") if api_key else text


def leave_retrying_to_stitcher(weaviate_retry: ModuleType) -> None:
    """Make the weaviate client send each gRPC request once (`weaviate.retry._Retry`).

    The client retries gRPC UNAVAILABLE by itself, sleeping 1, 2, 4, 8 (and 16, 32) seconds: a
    search, a lease read or a batch write to a server that is gone took 15-63 s before it
    failed, and every layer above retried that again (one ingest gave up after 161 s, its
    README saying 20). With one attempt here, stitcher's RetryPolicy is the one budget. The
    change is process-wide: a program that also makes its own weaviate clients gets single
    attempts there too. If a client version renames the class, nothing is changed
    (tests/test_lost_server.py measures the give-up time and fails).
    """
    retry = getattr(weaviate_retry, "_Retry", None)
    if retry is None or getattr(retry, "_stitcher_once", False):
        return

    def once(self: Any, count: int, error: str, f: Any, *args: Any, **kwargs: Any) -> Any:
        return f(*args, **kwargs)

    async def once_async(
        self: Any, count: int, error: str, f: Any, *args: Any, **kwargs: Any
    ) -> Any:
        return await f(*args, **kwargs)

    retry.with_exponential_backoff = once
    retry.awith_exponential_backoff = once_async
    retry._stitcher_once = True
