-- Pigeon schema, version 6: path leases (docs/decisions/0155).
--
-- The journal's kinds grow by 'lease' (taken, renewed, released,
-- expired). SQLite cannot change a CHECK in place, so the table is
-- rebuilt with the same columns, rows and index; nothing refers to it.
CREATE TABLE journal_new (
	id		INTEGER PRIMARY KEY,
	agent_id	INTEGER NOT NULL REFERENCES agent(id),
	at_ms		INTEGER NOT NULL,
	kind		TEXT NOT NULL CHECK (kind IN ('created', 'sent',
			    'delivered', 'bound', 'renamed', 'removed',
			    'handoff', 'lease')),
	message_id	INTEGER REFERENCES message(id),
	peer		TEXT NOT NULL DEFAULT '',
	detail		TEXT NOT NULL DEFAULT ''
);
INSERT INTO journal_new SELECT id, agent_id, at_ms, kind, message_id, peer,
	detail FROM journal;
DROP TABLE journal;
ALTER TABLE journal_new RENAME TO journal;
CREATE INDEX journal_agent ON journal(agent_id, id);

-- A lease: agent_id's claim on the paths 'norm' covers in scope_id
-- (pattern as given, norm as base/glob.c normalizes it), exclusive
-- unless shared, until expires_ms. Released and swept leases are
-- deleted (the journal keeps them), so the table holds only live ones
-- and expired ones not yet swept: a scope's rows are few and read whole.
CREATE TABLE lease (
	id		INTEGER PRIMARY KEY,
	scope_id	INTEGER NOT NULL REFERENCES scope(id),
	agent_id	INTEGER NOT NULL REFERENCES agent(id),
	pattern		TEXT NOT NULL,
	norm		TEXT NOT NULL,
	shared		INTEGER NOT NULL,
	reason		TEXT NOT NULL,
	created_ms	INTEGER NOT NULL,
	expires_ms	INTEGER NOT NULL
);
CREATE UNIQUE INDEX lease_norm ON lease(scope_id, agent_id, norm);
