/**
 * Per-destination shares (docs/queues.md, adr/0057): steps that call an external service
 * declare it (`ctx.step('call', fn, { destination: 'api.example.com' })`), and each running
 * step that declared one gets a share of two capacities, the runtime-wide one (across every
 * destination) and its destination's own:
 *
 *   share = min(capacity(destination) / running(destination), capacity / running(all))
 *
 * (a capacity left out is no limit on its side). Shares are cached per destination and each is
 * recomputed on its own when something it depends on changes: its capacity, the runtime-wide
 * one, or a step joining or leaving (its destination's, or any destination's when a
 * runtime-wide capacity is set). Reading one share clears only that share's pending
 * recomputation. A running step reads its share when it needs it (`StepInfo.share()`), so a
 * lowered capacity applies to steps already running. A destination no running step declared
 * has no share, and reading it throws `UnknownDestinationError`.
 */
import { z } from 'zod';
import { InvalidInputError, UnknownDestinationError } from './errors.js';

/** Options of the shares (`createRuntime({ destinations })`). */
export interface DestinationOptions {
  /** Capacity shared by every running step that declared a destination (default: no limit). */
  capacity?: number;
  /** Capacity per destination, shared by its running steps (default: none; then only `capacity` applies). */
  perDestination?: Readonly<Record<string, number>>;
}

const capacitySchema = z.number().positive().finite();
export const destinationNameSchema = z.string().min(1).max(255);
export const destinationOptionsSchema = z
  .object({
    capacity: capacitySchema.optional(),
    perDestination: z.record(destinationNameSchema, capacitySchema).optional(),
  })
  .strict();

/** A running step's place among its destination's: read its share, and leave once it ends. */
export interface ShareHolder {
  readonly destination: string;
  /** The share now (recomputed if its inputs changed since the last read). */
  share(): number;
  /** The step ended: its share goes to the others. Calling it again does nothing. */
  leave(): void;
}

interface Cached {
  value: number;
  stale: boolean;
}

/** The shares of one runtime; see the file comment. */
export class DestinationShares {
  private capacity: number | undefined;
  private readonly capacities = new Map<string, number>();
  private readonly running = new Map<string, number>();
  private total = 0;
  private readonly cache = new Map<string, Cached>();

  constructor(options: DestinationOptions = {}) {
    const parsed = parse(destinationOptionsSchema, options, 'destinations');
    this.capacity = parsed.capacity;
    for (const [name, capacity] of Object.entries(parsed.perDestination ?? {}))
      this.capacities.set(name, capacity);
  }

  /** Set (or, with undefined, remove) the runtime-wide capacity; every share is recomputed at its next read. */
  setCapacity(capacity: number | undefined): void {
    this.capacity =
      capacity === undefined ? undefined : parse(capacitySchema, capacity, 'destinations.capacity');
    this.invalidateAll();
  }

  /** Set (or remove) the capacity of `destination`; its share is recomputed at its next read. */
  setDestinationCapacity(destination: string, capacity: number | undefined): void {
    const name = parse(destinationNameSchema, destination, 'destination');
    if (capacity === undefined) this.capacities.delete(name);
    else this.capacities.set(name, parse(capacitySchema, capacity, `destinations.perDestination.${name}`));
    this.invalidate(name);
  }

  /** A step of `destination` starts running: it joins the competitors. */
  join(destination: string): ShareHolder {
    const name = parse(destinationNameSchema, destination, 'destination');
    this.running.set(name, (this.running.get(name) ?? 0) + 1);
    this.total += 1;
    this.changedCompetitors(name);
    let left = false;
    return {
      destination: name,
      share: () => this.share(name),
      leave: () => {
        if (left) return;
        left = true;
        this.total -= 1;
        const now = (this.running.get(name) ?? 1) - 1;
        if (now === 0) {
          this.running.delete(name);
          this.cache.delete(name);
        } else this.running.set(name, now);
        this.changedCompetitors(name);
      },
    };
  }

  /** The share of each running step of `destination`; throws `UnknownDestinationError` when none runs. */
  share(destination: string): number {
    const cached = this.cache.get(destination);
    if (cached !== undefined && !cached.stale) return cached.value;
    const count = this.running.get(destination);
    if (count === undefined) throw new UnknownDestinationError(destination, [...this.running.keys()]);
    const own = this.capacities.get(destination);
    const value = Math.min(
      own === undefined ? Number.POSITIVE_INFINITY : own / count,
      this.capacity === undefined ? Number.POSITIVE_INFINITY : this.capacity / this.total,
    );
    this.cache.set(destination, { value, stale: false });
    return value;
  }

  /** Running steps that declared `destination` (0 when none). */
  runningSteps(destination: string): number {
    return this.running.get(destination) ?? 0;
  }

  /** A step joined or left `destination`: its share changes, and with a runtime-wide capacity, every share. */
  private changedCompetitors(destination: string): void {
    if (this.capacity === undefined) this.invalidate(destination);
    else this.invalidateAll();
  }

  private invalidate(destination: string): void {
    const cached = this.cache.get(destination);
    if (cached !== undefined) cached.stale = true;
  }

  private invalidateAll(): void {
    for (const cached of this.cache.values()) cached.stale = true;
  }
}

function parse<T>(schema: z.ZodType<T>, value: unknown, path: string): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new InvalidInputError(
    'destination shares',
    result.error.issues.map((issue) => ({
      path: [path, ...issue.path.map(String)].join('.'),
      message: issue.message,
    })),
  );
}
