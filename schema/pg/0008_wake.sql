-- Pigeon's PostgreSQL schema, version 8: SQLite's version 11 (waking an
-- idle agent; schema/0011 says why).
ALTER TABLE session ADD COLUMN rung_ms bigint;
ALTER TABLE message ADD COLUMN woken_ms bigint, ADD COLUMN woken_via text;
