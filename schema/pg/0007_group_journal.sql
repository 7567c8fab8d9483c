-- Pigeon's PostgreSQL schema, version 7: SQLite's version 10 (group
-- changes are journalled, decision 0191).
ALTER TABLE journal DROP CONSTRAINT journal_kind_check;
ALTER TABLE journal ADD CONSTRAINT journal_kind_check CHECK (kind IN
	('created', 'sent', 'delivered', 'bound', 'renamed', 'removed',
	'handoff', 'lease', 'acked', 'reminded', 'group'));
