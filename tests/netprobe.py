"""What a stranger on the network sees of a local server: run inside the server's network
namespace (tests/test_network_exposure.py starts it there with a second, non-loopback address).

    python tests/netprobe.py HOME FOREIGN_ADDRESS

Prints one JSON object: every TCP port the server process listens on with its bind address,
whether a connection to it from FOREIGN_ADDRESS is accepted, and for the internal data port and
gRPC what an unauthenticated request from there gets. It writes one object first (with the API
key, on loopback) so that the read and delete attempts have a real target.
"""

from __future__ import annotations

import base64
import json
import socket
import sys
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import psutil

COLLECTION = "ExposureProbe"


def http(
    url: str, method: str = "GET", headers: dict[str, str] | None = None, body: Any = None
) -> tuple[int, Any]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    if data is not None:
        request.add_header("Content-Type", "application/json")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=10) as response:
            payload = response.read()
            code = int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code), None
    try:
        return code, json.loads(payload) if payload else None
    except ValueError:
        return code, None


def accepts(address: str, port: int) -> bool:
    try:
        with socket.create_connection((address, port), timeout=5):
            return True
    except OSError:
        return False


def grpc_refused_without_key(address: str, port: int) -> bool:
    import grpc
    from weaviate.proto.v1 import search_get_pb2, weaviate_pb2_grpc

    with grpc.insecure_channel(f"{address}:{port}") as channel:
        stub = weaviate_pb2_grpc.WeaviateStub(channel)
        try:
            stub.Search(search_get_pb2.SearchRequest(collection=COLLECTION, limit=1), timeout=10)
        except grpc.RpcError as error:
            details = str(error.details())
            return error.code() == grpc.StatusCode.UNAUTHENTICATED or "invalid api key" in details
    return False


def main(home: Path, foreign: str) -> dict[str, Any]:
    state = json.loads((home / "server.json").read_text())
    pid = state["pid"]
    key = (home / "api-key").read_text().strip()
    password = (home / "cluster-auth").read_text().strip()
    rest = f"http://127.0.0.1:{state['http_port']}"
    bearer = {"Authorization": f"Bearer {key}"}

    http(f"{rest}/v1/schema", "POST", bearer, {"class": COLLECTION, "vectorizer": "none"})
    object_id = str(uuid.uuid4())
    created, _ = http(
        f"{rest}/v1/objects",
        "POST",
        bearer,
        {"class": COLLECTION, "id": object_id, "properties": {"text": "a private sentence"}},
    )
    _, shards = http(f"{rest}/v1/schema/{COLLECTION}/shards", headers=bearer)
    shard = shards[0]["name"]

    listeners = sorted(
        {
            (c.laddr.ip, c.laddr.port)
            for c in psutil.Process(pid).net_connections(kind="inet")
            if c.status == psutil.CONN_LISTEN
        }
    )
    internal = f"http://{foreign}:{state['data_port']}/indices/{COLLECTION}/shards/{shard}"
    # The internal API wants what to return spelled out, as Weaviate's own nodes send it.
    wanted = "additional=" + base64.b64encode(b"{}").decode()
    selected = b'[{"name": "text", "isPrimitive": true}]'
    wanted += "&selectProperties=" + base64.b64encode(selected).decode()
    object_path = f"{internal}/objects/{object_id}"
    pair = base64.b64encode(f"stitcher-node:{password}".encode()).decode()
    basic = {"Authorization": f"Basic {pair}"}
    return {
        "pid": pid,
        "ports": {name: state[f"{name}_port"] for name in ("http", "grpc", "data", "gossip")},
        "object_created": created,
        "listeners": [
            {"address": address, "port": port, "accepts_foreign": accepts(foreign, port)}
            for address, port in listeners
        ],
        "data_get_anonymous": http(f"{object_path}?{wanted}")[0],
        "data_delete_anonymous": http(object_path, "DELETE")[0],
        "data_get_wrong_password": http(
            f"{object_path}?{wanted}",
            headers={"Authorization": "Basic " + base64.b64encode(b"stitcher-node:x").decode()},
        )[0],
        "data_get_with_password": http(f"{object_path}?{wanted}", headers=basic)[0],
        "object_still_there": http(f"{rest}/v1/objects/{COLLECTION}/{object_id}", headers=bearer)[
            0
        ],
        "grpc_refused_without_key": grpc_refused_without_key(foreign, state["grpc_port"]),
    }


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1]), sys.argv[2])))
