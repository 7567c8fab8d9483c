-- Pigeon's PostgreSQL schema, version 5: SQLite's version 8 (priority
-- and groups; schema/0008 says why, decision 0158).
ALTER TABLE message ADD COLUMN priority integer NOT NULL DEFAULT 0;
ALTER TABLE message ADD COLUMN grp text;
ALTER TABLE agent ADD COLUMN grps text;
