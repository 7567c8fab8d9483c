-- Pigeon's PostgreSQL schema, version 5: SQLite's version 8 (priority
-- and groups; schema/0008 says why, decision 0158).
ALTER TABLE message ADD COLUMN priority integer NOT NULL DEFAULT 0;
ALTER TABLE message ADD COLUMN grp text;
CREATE TABLE grp (
	scope_id bigint NOT NULL REFERENCES scope(id),
	name text NOT NULL,
	agent_id bigint NOT NULL REFERENCES agent(id),
	PRIMARY KEY (scope_id, name, agent_id)
);
