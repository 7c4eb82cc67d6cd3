-- Leases: who owns a key until when. Time always comes from the caller.
CREATE TABLE skein_leases (
  key TEXT NOT NULL PRIMARY KEY,
  owner TEXT NOT NULL,
  expires_at INTEGER NOT NULL
) WITHOUT ROWID;

CREATE INDEX skein_leases_expires ON skein_leases (expires_at, key);
