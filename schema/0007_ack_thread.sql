-- Pigeon schema, version 7: acknowledgements and threads (decision 0157).
--
-- thread: the first message of the conversation a reply belongs to
-- (NULL: the message starts its own, its id is its thread).
-- ack_ms: an acknowledgement is asked within this many ms of delivery
-- (NULL: none asked); acked_ms and ack_text: when and how it came;
-- reminded_ms: the one reminder shown past the time.
ALTER TABLE message ADD COLUMN thread INTEGER;
ALTER TABLE message ADD COLUMN ack_ms INTEGER;
ALTER TABLE message ADD COLUMN acked_ms INTEGER;
ALTER TABLE message ADD COLUMN ack_text TEXT;
ALTER TABLE message ADD COLUMN reminded_ms INTEGER;
CREATE INDEX message_thread ON message(thread) WHERE thread IS NOT NULL;
-- What may still need a reminder: asked, not acknowledged, not reminded.
CREATE INDEX message_unacked ON message(recipient_id) WHERE ack_ms IS NOT
	NULL AND acked_ms IS NULL AND reminded_ms IS NULL;
-- Replies sent before version 7 join their first message's thread.
WITH RECURSIVE t(id, root) AS (SELECT id, id FROM message WHERE reply_to
	IS NULL UNION ALL SELECT m.id, t.root FROM message m JOIN t ON
	m.reply_to = t.id) UPDATE message SET thread = (SELECT root FROM t
	WHERE t.id = message.id) WHERE reply_to IS NOT NULL;
-- The journal's kinds grow (an acknowledgement, a reminder); SQLite
-- cannot change a CHECK in place: the table is rebuilt, rows kept.
-- 'lease' is version 6's (decision 0155), kept by this rebuild.
CREATE TABLE journal_new (
	id		INTEGER PRIMARY KEY,
	agent_id	INTEGER NOT NULL REFERENCES agent(id),
	at_ms		INTEGER NOT NULL,
	kind		TEXT NOT NULL CHECK (kind IN ('created', 'sent',
			    'delivered', 'bound', 'renamed', 'removed',
			    'handoff', 'lease', 'acked', 'reminded')),
	message_id	INTEGER REFERENCES message(id),
	peer		TEXT NOT NULL DEFAULT '',
	detail		TEXT NOT NULL DEFAULT ''
);
INSERT INTO journal_new SELECT id, agent_id, at_ms, kind, message_id, peer,
	detail FROM journal;
DROP TABLE journal;
ALTER TABLE journal_new RENAME TO journal;
CREATE INDEX journal_agent ON journal(agent_id, id);
