-- Pigeon schema, version 9: when the agent's next reminder is due
-- (decision 0160). remind_ms: the earliest delivered_ms + ack_ms of the
-- agent's messages asked for an acknowledgement, not acknowledged and not
-- reminded (NULL: none). Never later than that (a delivery lowers it;
-- an acknowledgement leaves it, and the next prompt past it finds none
-- due and sets it again), so a prompt's first look reads one column
-- instead of asking the messages.
ALTER TABLE agent ADD COLUMN remind_ms INTEGER;
UPDATE agent SET remind_ms = (SELECT min(m.delivered_ms + m.ack_ms) FROM
	message m WHERE m.recipient_id = agent.id AND m.ack_ms IS NOT NULL AND
	m.acked_ms IS NULL AND m.reminded_ms IS NULL AND m.delivered_ms IS NOT
	NULL);
