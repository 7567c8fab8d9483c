-- Pigeon's PostgreSQL schema, version 4: SQLite's version 7
-- (acknowledgements and threads; schema/0007 says why).
ALTER TABLE message ADD COLUMN thread bigint, ADD COLUMN ack_ms bigint,
	ADD COLUMN acked_ms bigint, ADD COLUMN ack_text text,
	ADD COLUMN reminded_ms bigint;
CREATE INDEX message_thread ON message(thread) WHERE thread IS NOT NULL;
CREATE INDEX message_unacked ON message(recipient_id) WHERE ack_ms IS NOT
	NULL AND acked_ms IS NULL AND reminded_ms IS NULL;
WITH RECURSIVE t(id, root) AS (SELECT id, id FROM message WHERE reply_to
	IS NULL UNION ALL SELECT m.id, t.root FROM message m JOIN t ON
	m.reply_to = t.id) UPDATE message SET thread = t.root FROM t
	WHERE t.id = message.id AND message.reply_to IS NOT NULL;
-- The journal's kinds: version 3's 'lease' (0155) and these two.
ALTER TABLE journal DROP CONSTRAINT journal_kind_check;
ALTER TABLE journal ADD CONSTRAINT journal_kind_check CHECK (kind IN
	('created', 'sent', 'delivered', 'bound', 'renamed', 'removed',
	'handoff', 'lease', 'acked', 'reminded'));
