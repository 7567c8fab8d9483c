-- Pigeon's PostgreSQL schema, version 6: SQLite's version 9 (waking an
-- idle agent; schema/0009 says why). Assigned 0008 in the team plan:
-- renumber at merge.
ALTER TABLE session ADD COLUMN rung_ms bigint;
ALTER TABLE message ADD COLUMN woken_ms bigint, ADD COLUMN woken_via text;
ALTER TABLE journal DROP CONSTRAINT journal_kind_check;
ALTER TABLE journal ADD CONSTRAINT journal_kind_check CHECK (kind IN
	('created', 'sent', 'delivered', 'bound', 'renamed', 'removed',
	'handoff', 'lease', 'acked', 'reminded', 'woken'));
