-- Pigeon schema, version 11: waking an idle agent (decisions 0175-0177).
--
-- When the doorbell last rang a session (the first message queued after
-- its last delivery): a ring is outstanding while it is newer than the
-- session's last delivery and younger than PGN_WAKE_HEARD_MS, and no
-- second frame is written meanwhile. Columns, not a table: every open
-- parses the schema (decision 0154).
ALTER TABLE session ADD COLUMN rung_ms INTEGER;
-- The message whose send rang: when, and by which mechanism
-- ("claude-socket"), for pigeon status and watch.
ALTER TABLE message ADD COLUMN woken_ms INTEGER;
ALTER TABLE message ADD COLUMN woken_via TEXT;
