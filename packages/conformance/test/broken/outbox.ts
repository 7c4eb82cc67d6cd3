/**
 * Deliberately broken outboxes. `BeforeAppendOutbox` writes an append's messages first and
 * then appends, in two steps (O1 broken: a refused append leaves its messages behind).
 * `AnyTokenOutbox` settles a delivery whatever token the caller holds (a crashed claimer's
 * stale token still marks published). `EveryAgePruneOutbox` prunes retired deliveries too (an
 * operator's diagnostics vanish). The outbox suite must reject each.
 */
import {
  type AppendRequest,
  type AppendResult,
  MemoryEventStore,
  MemoryOutboxStore,
  type PruneDeliveriesOptions,
  type RescheduleOptions,
  type RescheduleOutcome,
} from '@skein/workflow-runtime/spi';

/** The memory event store, except that the outbox is written before the append, separately. */
export class BeforeAppendEventStore extends MemoryEventStore {
  constructor(private readonly box: MemoryOutboxStore) {
    super({ outbox: box });
  }

  override async append(request: AppendRequest): Promise<AppendResult> {
    const { outbox, ...rest } = request;
    if (outbox !== undefined && outbox.length > 0) await this.box.write(outbox);
    return super.append(rest);
  }
}

/** The memory outbox, except that any token settles a pending delivery. */
export class AnyTokenOutbox extends MemoryOutboxStore {
  private async tokenOf(messageId: string): Promise<string> {
    return (await this.get(messageId))?.claimToken ?? '';
  }

  override async markPublished(messageId: string, _token: string, now: number): Promise<boolean> {
    return super.markPublished(messageId, await this.tokenOf(messageId), now);
  }

  override async markPublishedAll(
    claims: readonly { id: string; token: string }[],
    now: number,
  ): Promise<boolean[]> {
    const answers: boolean[] = [];
    for (const { id } of claims) answers.push(await super.markPublished(id, await this.tokenOf(id), now));
    return answers;
  }

  override async retire(messageId: string, _token: string, reason: string, now: number): Promise<boolean> {
    return super.retire(messageId, await this.tokenOf(messageId), reason, now);
  }

  override async reschedule(
    messageId: string,
    _token: string,
    options: RescheduleOptions,
  ): Promise<RescheduleOutcome> {
    return super.reschedule(messageId, await this.tokenOf(messageId), options);
  }
}

/** The memory outbox, except that prune deletes retired deliveries as well as published ones. */
export class EveryAgePruneOutbox extends MemoryOutboxStore {
  override async prune(options: PruneDeliveriesOptions): Promise<number> {
    const retired = await this.list({ status: 'retired', limit: 10_000 });
    const shadow = retired.filter((d) => (d.settledAt ?? 0) < options.settledBefore);
    for (const d of shadow) Reflect.get(this, 'deliveries').delete(d.id);
    return shadow.length + (await super.prune(options));
  }
}
