/**
 * A store wrapper offers every optional SPI member the wrapped stores offer (a Supervisor's
 * `takeOverPending`, batched lease calls, the close hooks, the optional stores), so nothing
 * behind a wrapper falls back or fails for want of it. The lists below are exhaustive by type:
 * an optional member added to an SPI fails the typecheck here until it is listed. A wrapper that
 * cannot pass one through says so, with its reason. Real SQLite and PostgreSQL stores underneath
 * (only PostgreSQL has the batched lease calls).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStores } from '@skein/store-sqlite';
import { faultyStore } from '@skein/testkit';
import {
  type EventStore,
  type LeaseStore,
  type SnapshotStore,
  type Stores,
  type TimerStore,
  tenantScopedStores,
} from '@skein/workflow-runtime';
import type { SignalStore } from '@skein/workflow-runtime/spi';
import { afterEach, describe, expect, it } from 'vitest';
import { openTestStores, pgReachable } from '../../store-postgres/test/support/pg.js';

/** The keys of `T` that are optional. */
type OptionalKeys<T> = { [K in keyof T]-?: undefined extends T[K] ? K : never }[keyof T];

/** Every optional member of each SPI (`satisfies`: none missing, none extra). */
const optional = {
  stores: {
    queues: true,
    schedules: true,
    outbox: true,
    blockages: true,
    fanOuts: true,
    beforeClose: true,
  } satisfies Record<OptionalKeys<Stores>, true>,
  events: { takeOverPending: true } satisfies Record<OptionalKeys<EventStore>, true>,
  leases: { claimMany: true, releaseMany: true } satisfies Record<OptionalKeys<LeaseStore>, true>,
  snapshots: {} satisfies Record<OptionalKeys<SnapshotStore>, true>,
  timers: {} satisfies Record<OptionalKeys<TimerStore>, true>,
  signals: {} satisfies Record<OptionalKeys<SignalStore>, true>,
};

type StoreName = Exclude<keyof typeof optional, 'stores'>;

/** A wrapper under test, and the optional members it does not pass through, with why. */
interface Wrapper {
  name: string;
  wrap(stores: Stores): Stores;
  leavesOff: Partial<Record<OptionalKeys<Stores>, string>>;
}

const tenantReason = 'their rows are keyed by execution id and not scoped to a tenant yet';
const wrappers: Wrapper[] = [
  { name: 'faultyStore (testkit)', wrap: (stores) => faultyStore(stores), leavesOff: {} },
  {
    name: 'tenantScopedStores',
    wrap: (stores) => tenantScopedStores(stores, 'acme'),
    leavesOff: {
      queues: tenantReason,
      schedules: tenantReason,
      outbox: tenantReason,
      fanOuts: tenantReason,
    },
  },
];

const dirs: string[] = [];
const opened: Stores[] = [];
afterEach(async () => {
  for (const stores of opened.splice(0)) await stores.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const backings: [string, () => Promise<Stores>][] = [
  [
    'SQLite',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'skein-wrappers-'));
      dirs.push(dir);
      return openSqliteStores({ path: join(dir, 'skein.db'), durability: 'normal' });
    },
  ],
  ...(pgReachable ? [['PostgreSQL', () => openTestStores()] as [string, () => Promise<Stores>]] : []),
];

async function open(backing: () => Promise<Stores>): Promise<Stores> {
  const stores = await backing();
  opened.push(stores);
  return stores;
}

const cases = backings.flatMap(([store, backing]) =>
  wrappers.map((wrapper) => ({ ...wrapper, store, backing })),
);

describe.each(cases)(
  '$name over $store passes every optional SPI member through',
  ({ wrap, leavesOff, backing }) => {
    it('each optional store and method the stores have, the wrapper has', async () => {
      const inner = await open(backing);
      const wrapped = wrap(inner);
      const missing: string[] = [];
      for (const key of Object.keys(optional.stores) as OptionalKeys<Stores>[])
        if (inner[key] !== undefined && wrapped[key] === undefined && leavesOff[key] === undefined)
          missing.push(key);
      for (const store of Object.keys(optional).filter((k) => k !== 'stores') as StoreName[])
        for (const method of Object.keys(optional[store])) {
          const has = (s: Stores) =>
            typeof (s[store] as unknown as Record<string, unknown>)[method] === 'function';
          if (has(inner) && !has(wrapped)) missing.push(`${store}.${method}`);
        }
      expect(missing).toEqual([]);
    });

    it('the optional methods work through it: a pending execution taken over, leases claimed and released in batches', async () => {
      const inner = await open(backing);
      const wrapped = wrap(inner);
      await wrapped.events.append({
        executionId: 'job-1',
        workflow: 'job',
        expectedSeq: 0,
        fence: 0,
        events: [
          {
            envelopeId: '01HZZZZZZZZZZZZZZZZZZZZZZ1',
            type: 'EXECUTION_STARTED',
            payload: JSON.stringify({ workflow: 'job', version: 1, input: null }),
            recordedAt: Date.now(),
          },
        ],
      });
      const taken = await wrapped.events.takeOverPending?.(['job-1']);
      expect(
        taken?.map(({ executionId, events }) => [executionId, events.map((e) => e.executionId)]),
      ).toEqual([['job-1', ['job-1']]]);
      expect(taken?.[0]?.fence).toBe(await wrapped.events.currentFence('job-1'));
      if (inner.leases.claimMany === undefined) return; // the batched lease calls: PostgreSQL's only
      const now = Date.now();
      expect((await wrapped.leases.claimMany?.(['a', 'b'], 'me', 10_000, now))?.sort()).toEqual(['a', 'b']);
      expect(await wrapped.leases.get('a')).toMatchObject({ key: 'a', owner: 'me' });
      expect((await wrapped.leases.releaseMany?.(['a', 'b'], 'me'))?.sort()).toEqual(['a', 'b']);
      expect(await wrapped.leases.get('b')).toBeNull();
    });
  },
);
