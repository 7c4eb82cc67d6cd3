/**
 * Prompt wake-ups: PostgreSQL `LISTEN`/`NOTIFY` on one dedicated connection per process, so a
 * supervisor reacts as soon as another node schedules a timer, sends a signal or enqueues an
 * execution, instead of at its next poll.
 * A notification is a hint, never the truth: one sent while the listener was reconnecting is
 * lost, so polling stays the fallback.
 */
import pg from 'pg';
import { connectionConfig, type Database } from './database.js';
import { InvalidWakeupChannelError, StoreClosedError } from './errors.js';

/** The channel the timer store notifies when a new timer is scheduled; the payload is its `dueAt`. */
export const WAKEUP_TIMERS = 'timers';
/** The channel the signal store notifies when a new signal arrives; the payload is its execution id. */
export const WAKEUP_SIGNALS = 'signals';
/**
 * The channel the event store notifies when an execution is enqueued (seq 0 written, status
 * `pending`); the payload is its execution id. A start that runs the execution sends nothing.
 */
export const WAKEUP_PENDING = 'pending';

/** Receives the payload of one notification on a subscribed channel. */
export type WakeupHandler = (payload: string) => void;

/** Stops one subscription; the last one of a channel stops listening to it. */
export type Unsubscribe = () => Promise<void>;

const CHANNEL = /^[a-z][a-z0-9_]*$/;
const MAX_NAME_BYTES = 63;

/** The database-wide channel of `channel` in `schema`, so schemas sharing a database stay apart. */
export function channelName(schema: string, channel: string): string {
  if (typeof channel !== 'string' || !CHANNEL.test(channel)) {
    throw new InvalidWakeupChannelError(String(channel), `must match ${CHANNEL.source}`);
  }
  const name = `${schema}.${channel}`;
  if (name.length > MAX_NAME_BYTES) {
    throw new InvalidWakeupChannelError(channel, `"${name}" is longer than ${MAX_NAME_BYTES} characters`);
  }
  return name;
}

interface Channel {
  handlers: Set<WakeupHandler>;
  listening: Promise<void>;
}

/** `LISTEN`/`NOTIFY` channels of one store schema; see the module comment. */
export class PostgresWakeups {
  private readonly channels = new Map<string, Channel>();
  /** The LISTEN connection's commands, one after another. */
  private commands: Promise<unknown> = Promise.resolve();
  private client: Promise<pg.Client> | undefined;
  /** The connected LISTEN client, once `client` has resolved. */
  private current: pg.Client | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private closed = false;

  /**
   * @param db the stores' pool (NOTIFY goes through it; LISTEN gets its own connection).
   * @param reconnectMs wait before reconnecting a lost LISTEN connection (default: 1000).
   */
  constructor(
    private readonly db: Database,
    private readonly reconnectMs = 1000,
  ) {}

  /**
   * Call `handler` with the payload of every notification on `channel` until unsubscribed.
   * Resolves once the channel is listened to: a notification committed after that arrives.
   * @example
   * const stop = await stores.wakeups.subscribe(WAKEUP_TIMERS, () => supervisor.tick());
   */
  async subscribe(channel: string, handler: WakeupHandler): Promise<Unsubscribe> {
    if (this.closed) throw new StoreClosedError(this.db.schema, 'wakeups.subscribe');
    const name = channelName(this.db.schema, channel);
    let entry = this.channels.get(name);
    if (entry === undefined) {
      entry = { handlers: new Set(), listening: this.listen(name) };
      this.channels.set(name, entry);
    }
    const subscribed = entry;
    subscribed.handlers.add(handler);
    try {
      await subscribed.listening;
    } catch (error) {
      subscribed.handlers.delete(handler);
      if (this.channels.get(name) === subscribed && subscribed.handlers.size === 0)
        this.channels.delete(name);
      throw error;
    }
    return () => this.unsubscribe(name, subscribed, handler);
  }

  /** Send `payload` (default: empty) on `channel` to every listener in the database, at commit. */
  async notify(channel: string, payload = ''): Promise<void> {
    const name = channelName(this.db.schema, channel);
    await this.db.query('wakeups.notify', {
      name: 'skein_notify',
      text: 'SELECT pg_notify($1, $2)',
      values: [name, payload],
    });
  }

  /** Stop listening and close the LISTEN connection. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    this.channels.clear();
    const client = this.client;
    this.client = undefined;
    this.current = undefined;
    // A connection that never opened has nothing to close; its error went to its subscriber.
    const connected = await client?.then(
      (c) => c,
      () => undefined,
    );
    await connected?.end();
  }

  private async unsubscribe(name: string, entry: Channel, handler: WakeupHandler): Promise<void> {
    entry.handlers.delete(handler);
    if (entry.handlers.size > 0 || this.channels.get(name) !== entry) return;
    this.channels.delete(name);
    if (this.closed || this.client === undefined) return;
    await this.command(`UNLISTEN ${quoteChannel(name)}`);
  }

  private async listen(name: string): Promise<void> {
    await this.command(`LISTEN ${quoteChannel(name)}`);
  }

  /**
   * Run `sql` on the LISTEN connection after the commands before it: a `pg` client given a
   * query while another runs queues it, a use `pg` deprecates (a supervisor that stops
   * unsubscribes from every channel at once).
   */
  private command(sql: string): Promise<unknown> {
    const run = this.commands.then(async () => (await this.connection()).query(sql));
    this.commands = run.catch(() => undefined);
    return run;
  }

  /** The LISTEN connection, opened on first use. */
  private connection(): Promise<pg.Client> {
    this.client ??= this.connect().catch((error: unknown) => {
      this.client = undefined;
      throw error;
    });
    return this.client;
  }

  private async connect(): Promise<pg.Client> {
    const client = new pg.Client(connectionConfig(this.db.options));
    client.on('notification', (message) => this.dispatch(message.channel, message.payload ?? ''));
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client, new Error('the wake-up LISTEN connection ended')));
    await client.connect();
    this.current = client;
    return client;
  }

  private dispatch(name: string, payload: string): void {
    for (const handler of this.channels.get(name)?.handlers ?? []) {
      try {
        handler(payload);
      } catch (error) {
        this.db.options.onError(error);
      }
    }
  }

  /** The LISTEN connection broke (its 'error' and 'end' both land here; the first one counts). */
  private lost(client: pg.Client, error: unknown): void {
    if (this.closed || client !== this.current) return;
    this.current = undefined;
    this.client = undefined;
    this.retryLater(error);
  }

  /** Report `error`, then reconnect after `reconnectMs` and listen to every channel again. */
  private retryLater(error: unknown): void {
    this.db.options.onError(error);
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = setTimeout(() => void this.relisten(), this.reconnectMs);
  }

  private async relisten(): Promise<void> {
    if (this.closed) return;
    try {
      for (const name of this.channels.keys()) await this.listen(name);
    } catch (error) {
      const client = this.current;
      this.current = undefined;
      this.client = undefined;
      await client?.end().catch((endError: unknown) => this.db.options.onError(endError));
      if (!this.closed) this.retryLater(error);
    }
  }
}

/** Quote a channel name built by {@link channelName} (schema and channel both validated). */
function quoteChannel(name: string): string {
  if (!/^[a-z_][a-z0-9_]*\.[a-z][a-z0-9_]*$/.test(name)) throw new Error(`not a validated channel: ${name}`);
  return `"${name}"`;
}
