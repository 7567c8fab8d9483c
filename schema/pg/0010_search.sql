-- Pigeon's PostgreSQL schema, version 10: SQLite's version 13, full-text search of message
-- bodies (decision 0170). A GIN index the server keeps in step; the
-- 'simple' configuration matches words as written (no stemming, no
-- stop words), as SQLite's FTS5 does.
CREATE INDEX message_body_fts ON message USING gin (to_tsvector('simple', body));
