-- Pigeon schema, version 11: waking an idle agent (decisions 0175-0177).
--
-- When the doorbell last rang a session (the first message queued after
-- its last delivery): a ring is outstanding while it is newer than the
-- session's last delivery and younger than PGN_WAKE_HEARD_MS, and no
-- second frame is written meanwhile. Columns, not a table: every open
-- parses the schema (decision 0154).
ALTER TABLE session ADD COLUMN rung_ms INTEGER;
-- The message whose send rang: when, and by which mechanism
-- ("claude-socket"), for pigeon status and watch.
ALTER TABLE message ADD COLUMN woken_ms INTEGER;
ALTER TABLE message ADD COLUMN woken_via TEXT;

-- The journal's kinds grow by 'woken' (a ring, or a ring that no
-- delivery followed in time); SQLite cannot change a CHECK in place:
-- the table is rebuilt, rows kept.
CREATE TABLE journal_new (
	id		INTEGER PRIMARY KEY,
	agent_id	INTEGER NOT NULL REFERENCES agent(id),
	at_ms		INTEGER NOT NULL,
	kind		TEXT NOT NULL CHECK (kind IN ('created', 'sent',
			    'delivered', 'bound', 'renamed', 'removed',
			    'handoff', 'lease', 'acked', 'reminded', 'group',
			    'woken')),
	message_id	INTEGER REFERENCES message(id),
	peer		TEXT NOT NULL DEFAULT '',
	detail		TEXT NOT NULL DEFAULT ''
);
INSERT INTO journal_new SELECT id, agent_id, at_ms, kind, message_id, peer,
	detail FROM journal;
DROP TABLE journal;
ALTER TABLE journal_new RENAME TO journal;
CREATE INDEX journal_agent ON journal(agent_id, id);
