-- Fan-out item rows are written three times: seeded, claimed (the attempt) and given their
-- result (adr/0090). With free room on each page PostgreSQL keeps the two updates on the same
-- page as heap-only tuples (no new primary-key entry, no new page). Applies to pages written
-- from now on; existing rows keep their pages.
ALTER TABLE skein_fan_out_items SET (fillfactor = 20);
