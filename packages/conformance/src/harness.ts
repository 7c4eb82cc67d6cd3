/** What every suite shares: how a store under test is opened and closed, and error capture. */
import type { Stores } from '@skein/workflow-runtime';

/** The stores a suite needs, plus `close`. A whole `Stores` always fits. */
export type StoresWith<K extends Exclude<keyof Stores, 'close'>> = Pick<Stores, K | 'close'>;

/** Options every suite takes. */
export interface SuiteOptions<K extends Exclude<keyof Stores, 'close'>> {
  /** Names the implementation in test titles. */
  name: string;
  /** Returns fresh, empty stores; each test closes what it opened. */
  open: () => StoresWith<K> | Promise<StoresWith<K>>;
}

/** Open fresh stores, run `body`, and close them whatever happens. */
export async function withStores<S extends { close(): void | Promise<void> }>(
  open: () => S | Promise<S>,
  body: (stores: S) => Promise<void>,
): Promise<void> {
  const stores = await open();
  try {
    await body(stores);
  } finally {
    await stores.close();
  }
}

/** The error `promise` rejects with; fails the test when it resolves. */
export async function rejectionOf(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof Error) return error;
    throw new Error(`expected an Error, the promise rejected with ${String(error)}`);
  }
  throw new Error('expected a rejection, the promise resolved');
}

/** Names of the errors each settled promise rejected with (`fulfilled` for the ones that did not). */
export function outcomeNames(results: readonly PromiseSettledResult<unknown>[]): string[] {
  return results.map((result) =>
    result.status === 'fulfilled' ? 'fulfilled' : ((result.reason as Error | undefined)?.name ?? 'unknown'),
  );
}
