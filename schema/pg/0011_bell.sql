-- Pigeon's PostgreSQL schema, version 11: the doorbell across machines
-- (decision 0210). SQLite has no counterpart: one machine, the sender's,
-- rings there.
--
-- A send rings only a session of its own machine; for a session on
-- another machine, that machine's `pigeon wake --follow` LISTENs on
-- 'pigeon_bell' and hears the id of every queued message that may wake
-- (not low), in commit order, so each message is looked at once. The
-- NOTIFY is a hint only (not durable): a follower that lost some looks
-- at every queued message.
CREATE FUNCTION pigeon_bell() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_notify('pigeon_bell', NEW.id::text);
	RETURN NULL;
END $$;
CREATE TRIGGER message_bell AFTER INSERT ON message
	FOR EACH ROW WHEN (NEW.priority >= 0) EXECUTE FUNCTION pigeon_bell();
