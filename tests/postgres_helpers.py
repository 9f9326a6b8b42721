"""PostgreSQL for the consumer tests: a fresh database on the run's throwaway server."""

from __future__ import annotations

import psycopg
from psycopg import sql


def new_database(dsn: str, name: str) -> str:
    """A new, empty database ``name`` on the server of ``dsn``; its DSN."""
    with psycopg.connect(dsn, autocommit=True) as connection:
        connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return dsn.rsplit("/", 1)[0] + "/" + name
