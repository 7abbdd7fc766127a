"""Security on the way (issue 13 item 8).

- The local server and every node of the local cluster refuse anonymous REST (401) and gRPC
  (UNAUTHENTICATED), and a wrong key just the same.
- The API key appears nowhere it could leak: not in `ps` (it travels in the environment, never
  on the command line), not in the server logs, not in `--json` output, not in a traceback.
- `--where` and `--sql` values cannot change a query's structure: hypothesis fuzz (derandomized
  under the CI profile) over values full of quotes, operators, commas and SQL.
"""

from __future__ import annotations

import json
import os
import sqlite3
import string
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from stitcher import server
from stitcher.errors import FilterError
from stitcher.filters import Condition, Where
from stitcher.sql import SqlError, run_readonly
from stitcher.store.memory import contains_pattern
from stitcher.store.weaviate.filters import translate
from stitcher.where import parse_condition

WORKTREE = Path(__file__).resolve().parent.parent
STITCHER = Path(sys.executable).with_name("stitcher")


# --- anonymous access ----------------------------------------------------------------------------


def http_status(port: int, path: str, key: str | None) -> int:
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}")
    if key is not None:
        request.add_header("Authorization", f"Bearer {key}")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


def grpc_search(port: int, key: str | None) -> tuple[Any, str]:
    """Status code and details of a raw gRPC Search (no client library in between)."""
    import grpc
    from weaviate.proto.v1 import search_get_pb2, weaviate_pb2_grpc

    metadata = (("authorization", f"Bearer {key}"),) if key is not None else ()
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = weaviate_pb2_grpc.WeaviateStub(channel)
        try:
            stub.Search(
                search_get_pb2.SearchRequest(collection="NoSuchCollection", limit=1),
                metadata=metadata,
                timeout=10,
            )
        except grpc.RpcError as error:
            return error.code(), str(error.details())
    return grpc.StatusCode.OK, ""


def refused_for_the_key(answer: tuple[Any, str]) -> bool:
    """Weaviate 1.38 answers a missing or wrong key with status UNKNOWN and "extract auth:
    unauthorized: invalid api key" (not UNAUTHENTICATED); either form counts as refused."""
    import grpc

    code, details = answer
    return code == grpc.StatusCode.UNAUTHENTICATED or "invalid api key" in details


def endpoints(info: server.ServerInfo) -> list[tuple[int, int]]:
    """(REST, gRPC) port of every node of the deployment under info.home."""
    status = server.status(info.home)
    if status.nodes:
        return [(node.ports.http, node.ports.grpc) for node in status.nodes]
    return [(info.http_port, info.grpc_port)]


@pytest.fixture(params=["single", "cluster"])
def deployment(request: pytest.FixtureRequest) -> server.ServerInfo:
    name = "weaviate_server" if request.param == "single" else "weaviate_cluster"
    return request.getfixturevalue(name)  # type: ignore[no-any-return]


@pytest.mark.integration
@pytest.mark.parametrize("path", ["/v1/meta", "/v1/schema", "/v1/objects", "/v1/nodes"])
def test_rest_refuses_requests_without_the_key(deployment: server.ServerInfo, path: str) -> None:
    key = deployment.api_key()
    for http_port, _grpc in endpoints(deployment):
        assert http_status(http_port, path, None) == 401
        assert http_status(http_port, path, "not-the-key") == 401
        assert http_status(http_port, path, key) == 200  # the same request does work with it


@pytest.mark.integration
def test_grpc_refuses_requests_without_the_key(deployment: server.ServerInfo) -> None:
    import grpc

    key = deployment.api_key()
    for _http, grpc_port in endpoints(deployment):
        assert refused_for_the_key(grpc_search(grpc_port, None))
        assert refused_for_the_key(grpc_search(grpc_port, "not-the-key"))
        # With the key the same request gets past authentication (and fails on the missing
        # collection instead), so the refusals above were about the key.
        with_key = grpc_search(grpc_port, key)
        assert not refused_for_the_key(with_key)
        assert with_key[0] != grpc.StatusCode.OK and "NoSuchCollection" in with_key[1]


# --- where the key must not appear ---------------------------------------------------------------


@pytest.mark.integration
def test_the_key_is_in_the_environment_not_on_the_command_line(
    deployment: server.ServerInfo,
) -> None:
    key = deployment.api_key()
    status = server.status(deployment.home)
    pids = [node.pid for node in status.nodes] if status.nodes else [deployment.pid]
    listing = subprocess.run(
        ["ps", "-ww", "-eo", "pid,args"], capture_output=True, text=True, check=True
    ).stdout
    for pid in pids:
        assert pid is not None
        line = next(row for row in listing.splitlines() if row.split()[0] == str(pid))
        assert "weaviate" in line  # the right process
        assert key not in line
        assert key.encode() not in Path(f"/proc/{pid}/cmdline").read_bytes()
        # ...it is where it should be (so this test looked at the right place):
        assert (
            f"AUTHENTICATION_APIKEY_ALLOWED_KEYS={key}".encode()
            in Path(f"/proc/{pid}/environ").read_bytes()
        )


@pytest.mark.integration
def test_the_key_is_not_in_the_server_logs(deployment: server.ServerInfo) -> None:
    key = deployment.api_key()
    logs = list(deployment.home.rglob("weaviate.log*"))
    assert logs
    for log in logs:
        assert key not in log.read_text(errors="replace"), log


def run_cli(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(STITCHER), *args],
        capture_output=True,
        text=True,
        env={**os.environ, "STITCHER_HOME": str(home), "PYTHONPATH": str(WORKTREE), **env},
        timeout=300,
        check=False,
    )


@pytest.mark.integration
def test_the_key_is_not_in_json_output(deployment: server.ServerInfo) -> None:
    key = deployment.api_key()
    for args in (["server", "status", "--json"], ["stats", "--json", "-c", "NoSuchOne"]):
        done = run_cli(deployment.home, *args)
        assert done.stdout or done.stderr
        assert key not in done.stdout and key not in done.stderr, args
    status = json.loads(run_cli(deployment.home, "server", "status", "--json").stdout)
    assert status["api_key_file"].endswith("api-key")  # the path, never the key


@pytest.mark.integration
def test_the_key_is_not_in_a_traceback(deployment: server.ServerInfo) -> None:
    key = deployment.api_key()
    # A command that fails after the key was used: the gRPC port is wrong. With
    # STITCHER_TRACEBACK=1 the whole traceback is printed.
    failed = run_cli(
        deployment.home,
        "stats",
        "--url",
        deployment.url,
        "--grpc-port",
        "1",
        STITCHER_TRACEBACK="1",
        WEAVIATE_API_KEY=key,
    )
    assert failed.returncode != 0
    assert "Traceback" in failed.stderr
    assert key not in failed.stderr and key not in failed.stdout
    # And a refused key is not echoed either.
    wrong = "wrong-" + key[::-1]
    refused = run_cli(
        deployment.home,
        "stats",
        "--url",
        deployment.url,
        "--api-key",
        wrong,
        STITCHER_TRACEBACK="1",
    )
    assert refused.returncode != 0
    assert wrong not in refused.stderr and key not in refused.stderr


# --- --where values cannot change a filter's structure -------------------------------------------

FIELDS = ("title", "lang", "source", "page", "date", "tags", "doc_id")
OPERATORS = {"=": "eq", "!=": "ne", ">=": "ge", "<=": "le", ">": "gt", "<": "lt", "~": "contains"}
#: Characters that mean something to a filter, a query language or a shell.
NASTY = "\"'=!<>~,;()[]{}\\/*%&|$`#\n\t " + string.ascii_letters + "作者中文"
values = st.text(alphabet=st.sampled_from(NASTY) | st.characters(), min_size=1, max_size=40)


@given(field=st.sampled_from(FIELDS), symbol=st.sampled_from(list(OPERATORS)), value=values)
@example(field="title", symbol="=", value='x" OR title!="y')
@example(field="title", symbol="=", value="a,b')--")
@example(field="page", symbol=">=", value="1 || 1=1")
def test_a_quoted_where_value_is_one_literal(field: str, symbol: str, value: str) -> None:
    # Quoted, every value is taken as it is: one condition, the written field and operator.
    condition = parse_condition(f'{field}{symbol}"{value}"')
    assert condition == Condition(field, OPERATORS[symbol], value)  # type: ignore[arg-type]


@given(field=st.sampled_from(FIELDS), symbol=st.sampled_from(list(OPERATORS)), value=values)
def test_the_operator_is_the_first_one_written(field: str, symbol: str, value: str) -> None:
    # Unquoted, operators inside the value stay in the value: only the first one counts.
    if symbol in (">", "<") and value.lstrip().startswith("="):
        value = "x" + value  # `a>` + `=b` *is* `a>=b`: that is the written operator
    if not value.strip():
        with pytest.raises(FilterError):  # refused, never read as something else
            parse_condition(f"{field}{symbol}{value}")
        return
    condition = parse_condition(f"{field}{symbol}{value}")
    assert condition.field == field
    if symbol == "=" and condition.op == "any":
        assert all(part and part in value for part in condition.value)
    else:
        assert condition.op == OPERATORS[symbol]
        assert isinstance(condition.value, str) and condition.value in value


def filter_shape(tree: Any) -> Any:
    """A Weaviate filter without its values: operators, targets and nesting only."""
    children = getattr(tree, "filters", None)
    if isinstance(children, list):
        return (type(tree).__name__, tuple(filter_shape(child) for child in children))
    return (type(tree).__name__, str(tree.operator), repr(tree.target))


def filter_values(tree: Any) -> list[Any]:
    """The values of a Weaviate filter, leaf by leaf in order."""
    children = getattr(tree, "filters", None)
    if isinstance(children, list):
        return [value for child in children for value in filter_values(child)]
    return [tree.value]


@given(value=values, other=values)
@example(value='") OR (title != "', other="*")
def test_the_weaviate_filter_has_the_same_shape_whatever_the_value(value: str, other: str) -> None:
    def translated(text: str) -> Any:
        where = Where(
            (
                Condition("title", "eq", text),
                Condition("path", "any", (text, "fixed")),
                Condition("title", "contains", text),
            ),
            (Condition("lang", "ne", text),),
        )
        return translate(where, {}, set(), "Chunks")

    first, second = translated(value), translated(other)
    assert filter_shape(first) == filter_shape(second)
    # ...and the value reaches the filter unchanged, as data (`like` has no escape for its
    # wildcards: a literal * becomes ?, which can only widen the match, never restructure it).
    assert filter_values(first) == [value, [value, "fixed"], contains_pattern(value), value]


# --- --sql: read-only, and its values become literals ------------------------------------------

DANGEROUS = (
    "DROP TABLE cities",
    "DELETE FROM cities",
    "UPDATE cities SET name = 'x'",
    "INSERT INTO cities VALUES ('x')",
    "ATTACH DATABASE '{evil}' AS evil",
    "CREATE TABLE t (a)",
    "PRAGMA query_only = OFF",
    "VACUUM",
)


@pytest.fixture(scope="module")
def sqlite_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sql") / "cities.sqlite"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE cities (name TEXT)")
        connection.executemany(
            "INSERT INTO cities VALUES (?)", [("Lyon",), ('Porto" OR 1=1 --',), ("成都",)]
        )
    return path


@given(statement=st.sampled_from(DANGEROUS), prefix=st.sampled_from(["", "SELECT 1; ", "  "]))
def test_sql_never_changes_the_database(
    sqlite_file: Path, tmp_path_factory: pytest.TempPathFactory, statement: str, prefix: str
) -> None:
    evil = tmp_path_factory.getbasetemp() / "evil.sqlite"
    before = sqlite_file.read_bytes()
    with pytest.raises(SqlError):
        run_readonly(sqlite_file, prefix + statement.format(evil=evil))
    assert sqlite_file.read_bytes() == before
    assert not evil.exists()


#: What a SQLite TEXT column can hold: UTF-8, so no lone surrogates (the driver refuses to encode
#: one before SQL runs, which is the test's setup failing, not stitcher; found by the dev profile).
sql_values = st.text(
    alphabet=st.sampled_from(NASTY) | st.characters(exclude_categories=("Cs",)),
    min_size=1,
    max_size=40,
)


@given(names=st.lists(sql_values, min_size=1, max_size=5, unique=True))
@example(names=['x" OR title!="y', "a,b')--", "路径\u00a0名"])
def test_sql_values_become_literal_filter_values(
    tmp_path_factory: pytest.TempPathFactory, names: list[str]
) -> None:
    path = tmp_path_factory.mktemp("sqlvalues") / "rows.sqlite"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE rows (name TEXT)")
        connection.executemany("INSERT INTO rows VALUES (?)", [(n,) for n in names])
    selected = run_readonly(path, "SELECT name FROM rows").first_column()
    assert selected == names  # every value as stored: quotes, commas, operators included
    condition = Condition("title", "any", tuple(selected))
    shape = filter_shape(translate(Where((condition,), ()), {}, set(), "Chunks"))
    plain = filter_shape(translate(Where((Condition("title", "any", ("a",)),), ()), {}, set(), "C"))
    assert shape == plain
