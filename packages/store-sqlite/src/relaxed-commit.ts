/**
 * Commits that need no fsync (adr/0072). The outbox's claims and settlements (claim, mark
 * published, reschedule, retire, renew) commit with `synchronous = NORMAL` even on a file
 * opened with `durability: 'full'`: in WAL mode such a commit is in the WAL (and survives a
 * crash of the process) but is flushed to disk with the next fsync'd commit or checkpoint, not
 * before `commit` returns. Losing one in a power failure only undoes it: the delivery is
 * pending again, and relayed or handled again once its claim window passes, which
 * at-least-once delivery (O3) already allows. O1 (a message commits with its state change) is
 * untouched: messages are written by appends and `write`, which keep the file's durability,
 * and WAL order means nothing committed after them can survive them. The fsync these commits
 * skip blocked the event loop the broker's confirms need, twice per relayed batch.
 */
import type Database from 'better-sqlite3';

/** Wrap `fn` so the commits it makes skip the fsync; `fn` itself when the file never fsyncs them. */
export function relaxedCommits(
  db: Database.Database,
): <A extends unknown[], R>(fn: (...args: A) => R) => (...args: A) => R {
  const level = Number(db.pragma('synchronous', { simple: true }));
  const NORMAL = 1;
  if (!(level > NORMAL)) return (fn) => fn;
  // Prepared once: `db.pragma` prepares its statement on every call, twice per claim or settlement.
  const relax = db.prepare(`PRAGMA synchronous = ${NORMAL}`);
  const restore = db.prepare(`PRAGMA synchronous = ${level}`);
  return (fn) =>
    (...args) => {
      relax.run();
      try {
        return fn(...args);
      } finally {
        restore.run();
      }
    };
}
