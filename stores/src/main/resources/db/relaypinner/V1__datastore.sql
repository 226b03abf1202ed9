-- The relay's key-value datastore (pins, sync history, followed databases, heads), shared by
-- every relay on this database. Keys compare byte-wise (COLLATE "C"), so prefix scans use the
-- primary key's index.
CREATE TABLE relay_datastore (
  key   TEXT COLLATE "C" PRIMARY KEY,
  value BYTEA NOT NULL
);
