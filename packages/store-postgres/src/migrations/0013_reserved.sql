-- A reserved number: a no-op that keeps the numbering dense while the change that owns this
-- number is not merged yet (adr/0072). Delete this file when that change's migration lands.
SELECT 1;
