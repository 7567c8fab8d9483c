-- Pigeon schema, version 8: priority and groups (decision 0158).
--
-- priority: 1 urgent, 0 normal, -1 low; claimed highest first. grp: the
-- group a send named (--to @NAME), NULL for a name or 'all'.
ALTER TABLE message ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;
ALTER TABLE message ADD COLUMN grp TEXT;

-- The groups an agent is in, ',a,b,' (NULL: none): a group is the
-- active agents that list it. A column, not a table of its own: every
-- open parses the schema's text, and a table costs a hook run about ten
-- times what a column does (decision 0158).
ALTER TABLE agent ADD COLUMN grps TEXT;
