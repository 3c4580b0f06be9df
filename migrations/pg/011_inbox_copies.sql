-- A copy of a message the journal holds (Telegram sends an update again after a kill) is recorded
-- closed at accept, naming the entry that holds the message: it is never handled, and it does not
-- count as that message's own entry when the journal is read at the next start (src/queue/inbox.ts).
ALTER TABLE inbox ADD COLUMN copy_of text;
