"""Alembic migrations of the SQL store: the only way its schema is created or changed.

Run them with `hat db upgrade` / `hat db downgrade REV` (or `db.migrate.upgrade(url)`).
"""
