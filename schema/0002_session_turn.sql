-- Pigeon schema, version 2: the last turn each session injected, so a
-- second hook for the same turn (a duplicate registration, or Cursor
-- replaying Claude's hooks) prints nothing.
ALTER TABLE session ADD COLUMN last_turn TEXT;
ALTER TABLE session ADD COLUMN last_turn_ms INTEGER;
