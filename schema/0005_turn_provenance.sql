-- Pigeon schema, version 5: each sender's share of a session's turn,
-- and which machine named a session's transcript.
--
-- turn_mail: the session's current turn (begun at last_turn_ms) has had
-- mail, so the next prompt records its own turn even when it has none
-- to claim: what each sender put into a turn is summed from the
-- deliveries since its start (decision 0136).
ALTER TABLE session ADD COLUMN turn_mail INTEGER NOT NULL DEFAULT 0;

-- machine: the machine whose hook bound the session, and then named its
-- transcript_path (a path named from another machine takes that
-- machine's id). A transcript is read only on the machine named here;
-- NULL (bound before version 5, or no machine id) is never read
-- (decision 0129).
ALTER TABLE session ADD COLUMN machine TEXT;

-- The deliveries of one session's turn, summed per sender mid-turn.
CREATE INDEX delivery_session ON delivery(session, delivered_ms);
