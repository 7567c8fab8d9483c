-- Pigeon schema, version 1: scopes, agents, sessions, messages, the
-- delivered audit (hash-chained) and the per-agent journal.
-- Times are milliseconds since the epoch (UTC).

CREATE TABLE scope (
	id	INTEGER PRIMARY KEY,
	root	TEXT NOT NULL UNIQUE	-- '' is the global scope
);

CREATE TABLE agent (
	id		INTEGER PRIMARY KEY,
	scope_id	INTEGER NOT NULL REFERENCES scope(id),
	name		TEXT NOT NULL,
	created_ms	INTEGER NOT NULL,
	last_seen_ms	INTEGER,
	removed_ms	INTEGER		-- retired: name free again, rows kept
);
CREATE UNIQUE INDEX agent_name ON agent(scope_id, name)
	WHERE removed_ms IS NULL;

CREATE TABLE session (
	id		INTEGER PRIMARY KEY,
	key		TEXT NOT NULL UNIQUE,	-- '<host>:<id>'
	host		TEXT NOT NULL,
	agent_id	INTEGER NOT NULL REFERENCES agent(id),
	created_ms	INTEGER NOT NULL,
	last_seen_ms	INTEGER NOT NULL
);
CREATE INDEX session_agent ON session(agent_id);

CREATE TABLE message (
	id		INTEGER PRIMARY KEY,
	scope_id	INTEGER NOT NULL REFERENCES scope(id),
	sender		TEXT NOT NULL,
	recipient_id	INTEGER NOT NULL REFERENCES agent(id),
	body		TEXT NOT NULL,
	created_ms	INTEGER NOT NULL,
	reply_to	INTEGER REFERENCES message(id),
	delivered_ms	INTEGER		-- NULL while queued
);
-- Only queued rows are indexed, so a claim costs the same whatever the
-- size of the delivered history.
CREATE INDEX message_queued ON message(recipient_id, id)
	WHERE delivered_ms IS NULL;

-- One row per delivery, with a copy of the message. hash is
-- BLAKE2b-256(prev_hash || canonical row), see broker/src/chain.c.
CREATE TABLE delivery (
	id		INTEGER PRIMARY KEY,
	message_id	INTEGER NOT NULL UNIQUE REFERENCES message(id),
	scope		TEXT NOT NULL,
	sender		TEXT NOT NULL,
	recipient	TEXT NOT NULL,
	body		TEXT NOT NULL,
	created_ms	INTEGER NOT NULL,
	reply_to	INTEGER,
	delivered_ms	INTEGER NOT NULL,
	session		TEXT NOT NULL,
	host		TEXT NOT NULL,
	route		TEXT NOT NULL
		CHECK (route IN ('session-start', 'prompt', 'cli')),
	bytes		INTEGER NOT NULL,
	hash		BLOB NOT NULL
);

-- The chain's head: the count and last hash, so a deleted tail shows.
CREATE TABLE audit_head (
	id	INTEGER PRIMARY KEY CHECK (id = 1),
	n	INTEGER NOT NULL,
	hash	BLOB NOT NULL
);

CREATE TABLE journal (
	id		INTEGER PRIMARY KEY,
	agent_id	INTEGER NOT NULL REFERENCES agent(id),
	at_ms		INTEGER NOT NULL,
	kind		TEXT NOT NULL CHECK (kind IN ('created', 'sent',
			    'delivered', 'bound', 'renamed', 'removed',
			    'handoff')),
	message_id	INTEGER REFERENCES message(id),
	peer		TEXT NOT NULL DEFAULT '',
	detail		TEXT NOT NULL DEFAULT ''
);
CREATE INDEX journal_agent ON journal(agent_id, id);
