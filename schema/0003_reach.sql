-- Pigeon schema, version 3: reaching an agent while it works.
--
-- How many times in a row a session's stop hook made its agent go on
-- with mail, without a prompt from a person in between (the governor of
-- reach.maxAutoContinues; a prompt resets it).
ALTER TABLE session ADD COLUMN auto_continues INTEGER NOT NULL DEFAULT 0;

-- The audit's routes grow: after a tool call, at a stop, and a baton
-- handed to a new session. SQLite cannot change a CHECK in place, so
-- the table is rebuilt with the same columns and rows; nothing refers
-- to it, and the hash chain covers the values, not the table.
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
		    'stop', 'handoff', 'cli')),
	bytes		INTEGER NOT NULL,
	hash		BLOB NOT NULL
);
INSERT INTO delivery_new SELECT id, message_id, scope, sender, recipient,
	body, created_ms, reply_to, delivered_ms, session, host, route, bytes,
	hash FROM delivery;
DROP TABLE delivery;
ALTER TABLE delivery_new RENAME TO delivery;
