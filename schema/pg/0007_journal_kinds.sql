-- Pigeon's PostgreSQL schema, version 7: SQLite's version 10 (the
-- journal's kinds grow by 'group', decision 0191, and 'woken', 0177).
ALTER TABLE journal DROP CONSTRAINT journal_kind_check;
ALTER TABLE journal ADD CONSTRAINT journal_kind_check CHECK (kind IN
	('created', 'sent', 'delivered', 'bound', 'renamed', 'removed',
	'handoff', 'lease', 'acked', 'reminded', 'group', 'woken'));
