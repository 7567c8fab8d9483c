-- Pigeon schema, version 10: the journal's kinds grow by 'group' (an
-- agent joined or left a group, decision 0191) and 'woken' (a doorbell
-- rang its session, or a ring went unheard, decision 0177; its columns
-- are version 11's). SQLite cannot change a CHECK in place: the table
-- is rebuilt, rows kept, as version 7 rebuilt it, once for both kinds.
CREATE TABLE journal_new (
	id		INTEGER PRIMARY KEY,
	agent_id	INTEGER NOT NULL REFERENCES agent(id),
	at_ms		INTEGER NOT NULL,
	kind		TEXT NOT NULL CHECK (kind IN ('created', 'sent',
			    'delivered', 'bound', 'renamed', 'removed',
			    'handoff', 'lease', 'acked', 'reminded', 'group', 'woken')),
	message_id	INTEGER REFERENCES message(id),
	peer		TEXT NOT NULL DEFAULT '',
	detail		TEXT NOT NULL DEFAULT ''
);
INSERT INTO journal_new SELECT id, agent_id, at_ms, kind, message_id, peer,
	detail FROM journal;
DROP TABLE journal;
ALTER TABLE journal_new RENAME TO journal;
CREATE INDEX journal_agent ON journal(agent_id, id);
