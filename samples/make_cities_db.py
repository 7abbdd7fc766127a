"""Build samples/cities.sqlite, the structured half of the SQL-then-search demo.

The table `city_stats` holds one row per article in samples/cities/ (its `city` equals the
article's front-matter title). Figures are rounded census-style values for a demo, not a
reference: Chengdu is the whole municipality and Melbourne the metropolitan area.

Run `python samples/make_cities_db.py` to rewrite the file. The build is deterministic: the same
rows are inserted in the same order into a fresh file and then VACUUMed, so with the same SQLite
library the output is byte-identical (only the header's library-version field changes across
SQLite versions).
"""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path

DEFAULT_PATH = Path(__file__).resolve().parent / "cities.sqlite"

SCHEMA = (
    "CREATE TABLE city_stats ("
    "city TEXT PRIMARY KEY, "
    "country TEXT NOT NULL, "
    "population INTEGER NOT NULL, "
    "area_km2 REAL NOT NULL)"
)

# (city, country, population, area_km2), sorted by city so the insert order never varies.
CITY_STATS: tuple[tuple[str, str, int, float], ...] = (
    ("Chengdu", "China", 20_937_757, 14_335.0),
    ("Kyoto", "Japan", 1_463_723, 827.8),
    ("Lyon", "France", 522_250, 47.9),
    ("Melbourne", "Australia", 4_917_750, 9_993.0),
    ("Montreal", "Canada", 1_762_949, 431.5),
    ("Porto", "Portugal", 231_800, 41.4),
)


def build_cities_db(path: Path) -> Path:
    """Write a fresh cities database to `path`, replacing any existing file.

    Args:
        path: Where to write the SQLite file.

    Returns:
        The path written.
    """
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    if tmp.exists():
        tmp.unlink()
    conn = sqlite3.connect(tmp)
    try:
        # Fixed page size and rollback journal: no WAL side files, same layout every run.
        conn.execute("PRAGMA page_size = 4096")
        conn.execute("PRAGMA journal_mode = DELETE")
        conn.execute(SCHEMA)
        conn.executemany("INSERT INTO city_stats VALUES (?, ?, ?, ?)", sorted(CITY_STATS))
        conn.commit()
        conn.execute("VACUUM")
    finally:
        conn.close()
    os.replace(tmp, path)
    return path


def read_rows(path: Path) -> list[tuple[str, str, int, float]]:
    """All rows of `city_stats` in `path`, ordered by city."""
    conn = sqlite3.connect(f"file:{Path(path).as_posix()}?mode=ro", uri=True)
    try:
        return list(conn.execute("SELECT city, country, population, area_km2 FROM city_stats "
                                 "ORDER BY city"))
    finally:
        conn.close()


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_PATH
    build_cities_db(target)
    print(f"wrote {target} ({len(CITY_STATS)} cities)")
