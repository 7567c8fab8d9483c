-- Pigeon schema, version 8: priority and groups (decision 0158).
--
-- priority: 1 urgent, 0 normal, -1 low; claimed highest first. grp: the
-- group a send named (--to @NAME), NULL for a name or 'all'.
ALTER TABLE message ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;
ALTER TABLE message ADD COLUMN grp TEXT;

-- A group is its members: one row each, by agent row (a rename keeps
-- it); once its last member is removed the group is gone. One line: its
-- text is parsed at every open.
CREATE TABLE grp(scope_id INTEGER NOT NULL REFERENCES scope(id),name TEXT NOT NULL,agent_id INTEGER NOT NULL REFERENCES agent(id),PRIMARY KEY(scope_id,name,agent_id))WITHOUT ROWID;
