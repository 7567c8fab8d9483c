-- Pigeon schema, version 10: group changes are journalled (decision 0191).
--
-- The journal's kinds grow by 'group' (an agent joined or left a group);
-- SQLite cannot change a CHECK in place: the table is rebuilt, rows
-- kept, as version 7 rebuilt it.
CREATE TABLE journal_new (
	id		INTEGER PRIMARY KEY,
	agent_id	INTEGER NOT NULL REFERENCES agent(id),
	at_ms		INTEGER NOT NULL,
	kind		TEXT NOT NULL CHECK (kind IN ('created', 'sent',
			    'delivered', 'bound', 'renamed', 'removed',
			    'handoff', 'lease', 'acked', 'reminded', 'group')),
	message_id	INTEGER REFERENCES message(id),
	peer		TEXT NOT NULL DEFAULT '',
	detail		TEXT NOT NULL DEFAULT ''
);
INSERT INTO journal_new SELECT id, agent_id, at_ms, kind, message_id, peer,
	detail FROM journal;
DROP TABLE journal;
ALTER TABLE journal_new RENAME TO journal;
CREATE INDEX journal_agent ON journal(agent_id, id);
