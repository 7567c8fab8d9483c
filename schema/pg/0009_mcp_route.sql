-- Pigeon PostgreSQL schema, version 9 (SQLite 12): the audit's route 'mcp', a claim
-- made by the read or wait tool of pigeon mcp (docs/mcp.md).
ALTER TABLE delivery DROP CONSTRAINT delivery_route_check;
ALTER TABLE delivery ADD CONSTRAINT delivery_route_check
	CHECK (route IN ('session-start', 'prompt', 'after-tool',
	    'stop', 'handoff', 'cli', 'mcp'));
