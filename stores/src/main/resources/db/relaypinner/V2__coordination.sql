-- Coordination of relays sharing this database (issue 24).
-- Leases with a time to live: one row per leased name (a followed database's address, or the
-- GC leadership). The holder renews it well before expires_at; a relay that dies stops renewing
-- and any other relay takes the row over once expires_at has passed.
CREATE TABLE relay_leases (
  name       TEXT COLLATE "C" PRIMARY KEY,
  holder     TEXT NOT NULL,
  expires_at TIMESTAMPTZ NOT NULL
);

-- Media pins being worked on: a relay pinning a CID holds its row locked (SELECT ... FOR UPDATE
-- SKIP LOCKED) in an open transaction until the pin ends; the others skip it. A dying relay's
-- transaction ends with its session, so its rows are free again at once.
CREATE TABLE relay_media_work (
  cid       TEXT COLLATE "C" PRIMARY KEY,
  queued_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
