-- Pigeon schema, version 4: handoff batons, and where each session's
-- transcript is.
--
-- The transcript file a session's hook payloads name (transcript_path),
-- or for Cursor the agent-transcripts path derived from its workspace
-- and conversation id; NULL while none is known.
ALTER TABLE session ADD COLUMN transcript_path TEXT;

-- A note one session leaves for the next new conversation of the scope
-- (target_id NULL: of any agent), or of one agent (target_id). Notes for
-- the same target left within an hour of the last one are merged into
-- one baton (notes counts them); a baton not taken by its expiry stays
-- listed, never delivered. Taking it is a delivery: a message row (the
-- copy the audit chains, route 'handoff') is made in the same
-- transaction, and message_id names it.
CREATE TABLE baton (
	id		INTEGER PRIMARY KEY,
	scope_id	INTEGER NOT NULL REFERENCES scope(id),
	sender_id	INTEGER NOT NULL REFERENCES agent(id),
	sender		TEXT NOT NULL,	-- the name it was left under
	senders		TEXT NOT NULL,	-- every note's sender, 'a,b'
	session		TEXT,		-- the sender's session, if known
	target_id	INTEGER REFERENCES agent(id),
	body		TEXT NOT NULL,
	notes		INTEGER NOT NULL DEFAULT 1,
	created_ms	INTEGER NOT NULL,
	updated_ms	INTEGER NOT NULL,	-- the last note merged in
	expires_ms	INTEGER NOT NULL,
	consumed_ms	INTEGER,		-- NULL until taken
	consumed_session TEXT,
	consumed_agent_id INTEGER REFERENCES agent(id),
	message_id	INTEGER REFERENCES message(id),
	dropped_ms	INTEGER			-- pigeon handoff drop
);
-- Only open batons are indexed: a session start looks them up at the
-- same cost whatever the history.
CREATE INDEX baton_open ON baton(scope_id, id)
	WHERE consumed_ms IS NULL AND dropped_ms IS NULL;
