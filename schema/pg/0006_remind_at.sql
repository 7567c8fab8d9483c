-- Pigeon's PostgreSQL schema, version 6: SQLite's version 9 (the
-- agent's next reminder's due time; schema/0009 says why, decision 0160).
ALTER TABLE agent ADD COLUMN remind_ms bigint;
UPDATE agent SET remind_ms = (SELECT min(m.delivered_ms + m.ack_ms) FROM
	message m WHERE m.recipient_id = agent.id AND m.ack_ms IS NOT NULL AND
	m.acked_ms IS NULL AND m.reminded_ms IS NULL AND m.delivered_ms IS NOT
	NULL);
