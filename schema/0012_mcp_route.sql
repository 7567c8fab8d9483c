-- Pigeon schema, version 12: the audit's route 'mcp', a claim made by
-- the read or wait tool of pigeon mcp (docs/mcp.md). SQLite cannot
-- change a CHECK in place, so the table is rebuilt with the same
-- columns, rows and index, as version 3 did; the hash chain covers the
-- values, not the table.
CREATE TABLE delivery_new (
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
		CHECK (route IN ('session-start', 'prompt', 'after-tool',
		    'stop', 'handoff', 'cli', 'mcp')),
	bytes		INTEGER NOT NULL,
	hash		BLOB NOT NULL
);
INSERT INTO delivery_new SELECT id, message_id, scope, sender, recipient,
	body, created_ms, reply_to, delivered_ms, session, host, route, bytes,
	hash FROM delivery;
DROP TABLE delivery;
ALTER TABLE delivery_new RENAME TO delivery;
CREATE INDEX delivery_session ON delivery(session, delivered_ms);
