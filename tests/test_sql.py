"""The SQL side of the SQL join: read-only, first column, clear errors."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from stitcher.errors import UsageError
from stitcher.sql import SqlError, run_readonly

CITIES = Path(__file__).resolve().parent.parent / "samples" / "cities.sqlite"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    copy = tmp_path / "cities.sqlite"
    shutil.copy(CITIES, copy)
    return copy


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_most_populous_city(db: Path) -> None:
    result = run_readonly(db, "SELECT city FROM city_stats ORDER BY population DESC LIMIT 1")
    assert result.columns == ["city"] and result.first_column() == ["Chengdu"]


@pytest.mark.parametrize(
    "statement",
    [
        "DROP TABLE city_stats",
        "DELETE FROM city_stats",
        "UPDATE city_stats SET population = 0",
        "INSERT INTO city_stats (city) VALUES ('X')",
        "CREATE TABLE t (x)",
        "PRAGMA query_only = OFF; DROP TABLE city_stats",
        "ATTACH DATABASE 'other.db' AS o",
    ],
)
def test_writes_fail_and_leave_the_file_unchanged(
    db: Path, statement: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(db.parent)
    before = digest(db)
    with pytest.raises(SqlError):
        run_readonly(db, statement)
    assert digest(db) == before
    assert sorted(p.name for p in db.parent.iterdir()) == ["cities.sqlite"]  # no new file
    assert run_readonly(db, "SELECT count(*) FROM city_stats").rows[0][0] == 6


def test_missing_file_and_empty_sql_are_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        run_readonly(tmp_path / "nope.sqlite", "SELECT 1")
    with pytest.raises(UsageError):
        run_readonly(CITIES, "  ")


def test_bad_sql_names_the_problem(db: Path) -> None:
    with pytest.raises(SqlError, match="no such table"):
        run_readonly(db, "SELECT x FROM nowhere")


def test_first_column_is_distinct_and_skips_nulls(db: Path) -> None:
    result = run_readonly(db, "SELECT country FROM city_stats UNION ALL SELECT NULL")
    values = result.first_column()
    assert len(values) == len(set(values)) and "None" not in values
