/**
 * A cache of execution heads (fence, last seq, status, workflow) for the append path. A batch
 * holds SQLite's write lock; if no other connection committed since this one last looked
 * (`PRAGMA data_version` is unchanged), the heads this connection wrote are still the truth
 * and the batch need not read them again. Any foreign commit clears the cache.
 */
import { isTerminalStatus } from '@skein/workflow-runtime';
import type { ExecutionHead } from '@skein/workflow-runtime/spi';
import type Database from 'better-sqlite3';

/** Most heads kept; past this the cache starts over (it only saves reads). */
const MAX_ENTRIES = 50_000;

/** Heads this connection wrote, valid while no other connection commits. */
export class HeadCache {
  private readonly heads = new Map<string, ExecutionHead>();
  private version: number | undefined;
  private readonly dataVersion: Database.Statement<[], number>;

  constructor(db: Database.Database) {
    this.dataVersion = db.prepare<[], number>('PRAGMA data_version').pluck();
  }

  /** Call inside the batch's transaction, before any `get`: drops everything if another connection committed. */
  revalidate(): void {
    const version = this.dataVersion.get();
    if (version !== this.version) this.heads.clear();
    this.version = version;
  }

  /** The cached head of an execution, copied into `into`; false when not cached. */
  get(executionId: string, into: ExecutionHead): boolean {
    const head = this.heads.get(executionId);
    if (head === undefined) return false;
    into.fence = head.fence;
    into.lastSeq = head.lastSeq;
    into.status = head.status;
    into.workflow = head.workflow;
    return true;
  }

  /** Remember the head an append of this connection wrote (a terminal one is forgotten). */
  set(executionId: string, head: ExecutionHead): void {
    if (head.status !== undefined && isTerminalStatus(head.status)) {
      this.heads.delete(executionId);
      return;
    }
    const cached = this.heads.get(executionId);
    if (cached !== undefined) {
      cached.fence = head.fence;
      cached.lastSeq = head.lastSeq;
      cached.status = head.status;
      cached.workflow = head.workflow;
      return;
    }
    if (this.heads.size >= MAX_ENTRIES) this.heads.clear();
    this.heads.set(executionId, { ...head });
  }

  /** Heads kept now. */
  get size(): number {
    return this.heads.size;
  }

  /** Forget one execution (its row changed outside the append path, e.g. a new fence). */
  forget(executionId: string): void {
    this.heads.delete(executionId);
  }

  /** Forget everything (a batch rolled back). */
  clear(): void {
    this.heads.clear();
  }
}
