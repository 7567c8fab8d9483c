-- Pigeon schema, version 13: full-text search of message bodies
-- (decision 0170).
--
-- An external-content FTS5 index over message.body: no copy of the
-- text, no trigger. The store adds each message's row in the
-- transaction that inserts the message (store/search.c); messages are
-- never updated or deleted. columnsize=0 drops the table of sizes
-- (results are newest first, never ranked). Every hook run parses the
-- schema's text (decision 0154): no comment inside the CREATE.
CREATE VIRTUAL TABLE message_fts USING fts5(body, content=message, content_rowid=id, columnsize=0);
-- The messages of a database made before.
INSERT INTO message_fts(message_fts) VALUES ('rebuild');
