-- Leases: who owns a key until when. Time always comes from the caller.
CREATE TABLE skein_leases (
  key text COLLATE "C" NOT NULL PRIMARY KEY,
  owner text NOT NULL,
  expires_at bigint NOT NULL
);

CREATE INDEX skein_leases_expires ON skein_leases (expires_at, key);
