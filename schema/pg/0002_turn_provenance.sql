-- Pigeon's PostgreSQL schema, version 2: SQLite's version 5 (each
-- sender's share of a session's turn, which machine named a session's
-- transcript; schema/0005 says why).
ALTER TABLE session ADD COLUMN turn_mail bigint NOT NULL DEFAULT 0;
ALTER TABLE session ADD COLUMN machine text;
CREATE INDEX delivery_session ON delivery(session, delivered_ms);
