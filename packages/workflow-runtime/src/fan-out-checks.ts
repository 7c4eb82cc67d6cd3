/**
 * The checks every fan-out store makes before it writes (L7): a plan and its creation lease,
 * a chunk seed, a claim request and a batch of results, each refused with `InvalidInputError`
 * naming the fields.
 */
import { z } from 'zod';
import { InvalidInputError } from './errors.js';
import type {
  ChunkClaimRef,
  ChunkSeed,
  ClaimChunkRequest,
  CreationLeaseRequest,
  FanOutPlan,
  ItemResult,
  SeedCursor,
} from './fan-out-store.js';
import { MAX_CHUNK_SIZE, MAX_SEED_BATCH } from './fan-out-store.js';
import { illFormedReason } from './ids.js';

const text = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .refine((value) => illFormedReason(value) === undefined, {
      message: 'must be well-formed Unicode (no lone surrogate)',
    });

const planSchema = z.object({
  fanOutId: text(255),
  executionId: text(255),
  name: text(255),
  task: text(255),
  taskVersion: z.number().int().positive(),
  chunkSize: z.number().int().min(1).max(MAX_CHUNK_SIZE),
  shards: z
    .array(text(255))
    .min(1)
    .refine((shards) => new Set(shards).size === shards.length, { message: 'must be distinct' }),
  required: z.boolean(),
  maxAttempts: z.number().int().min(1),
});

const leaseSchema = z.object({
  owner: text(255),
  now: z.number().int().nonnegative(),
  ttlMs: z.number().int().positive(),
});

const seedSchema = z.object({
  fanOutId: text(255),
  shard: text(255),
  chunkId: z.number().int().nonnegative(),
  storeAlias: text(255),
  firstIndex: z.number().int().nonnegative(),
  inputs: z.array(z.string()).min(1).max(MAX_CHUNK_SIZE),
  writeEpoch: z.number().int().positive(),
  maxAttempts: z.number().int().min(1),
  now: z.number().int().nonnegative(),
});

const claimSchema = z.object({
  fanOutId: z.string(),
  shard: z.string(),
  chunkId: z.number().int().nonnegative(),
  writeEpoch: z.number().int().positive(),
  workerId: text(255),
  now: z.number().int().nonnegative(),
  leaseMs: z.number().int().positive(),
});

const resultSchema = z.discriminatedUnion('status', [
  z.object({
    index: z.number().int().nonnegative(),
    attemptId: z.string(),
    attempt: z.number().int().positive(),
    status: z.literal('succeeded'),
    output: z.string(),
  }),
  z.object({
    index: z.number().int().nonnegative(),
    attemptId: z.string(),
    attempt: z.number().int().positive(),
    status: z.literal('failed'),
    error: z.string(),
    retryAt: z.number().int().nonnegative().nullable(),
  }),
]);

/** A batch of results, built once: every store checks every batch it is given. */
const resultsSchema = z.array(resultSchema);

function parse<T>(schema: z.ZodType<T>, value: unknown, where: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new InvalidInputError(
    where,
    parsed.error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message })),
  );
}

/** Check a plan and its creation lease request; throws `InvalidInputError` naming the fields. */
export function checkFanOutPlan(plan: FanOutPlan, lease: CreationLeaseRequest): void {
  parse(planSchema, plan, 'fan-out plan');
  parse(leaseSchema, lease, `fan-out "${plan.fanOutId}" creation lease`);
}

/** Check a chunk seed; throws `InvalidInputError` naming the fields. */
export function checkChunkSeed(seed: ChunkSeed): void {
  parse(seedSchema, seed, `fan-out "${seed.fanOutId}" chunk ${seed.chunkId} seed`);
}

const cursorSchema = z.object({
  fanOutId: text(255),
  token: z.string().min(1),
  seededChunks: z.number().int().nonnegative(),
  seededItems: z.number().int().nonnegative(),
});

/** Check a batch of chunk seeds (1 to `MAX_SEED_BATCH`, each a valid seed) and its cursor; throws `InvalidInputError`. */
export function checkSeedBatch(seeds: readonly ChunkSeed[], cursor: SeedCursor | undefined): void {
  if (!Array.isArray(seeds) || seeds.length === 0 || seeds.length > MAX_SEED_BATCH)
    throw new InvalidInputError('fan-out chunk seeds', [
      {
        path: 'seeds',
        message: `must be an array of 1 to ${MAX_SEED_BATCH} seeds, got ${Array.isArray(seeds) ? seeds.length : typeof seeds}`,
      },
    ]);
  for (const seed of seeds) checkChunkSeed(seed);
  if (cursor !== undefined) parse(cursorSchema, cursor, `fan-out "${cursor?.fanOutId}" seed cursor`);
}

/** Check a claim request; throws `InvalidInputError` naming the fields. */
export function checkClaimChunk(request: ClaimChunkRequest): void {
  parse(claimSchema, request, `fan-out "${request.fanOutId}" chunk ${request.chunkId} claim`);
}

/** Check a batch of results: well-formed, each index once; throws `InvalidInputError`. */
export function checkItemResults(claim: ChunkClaimRef, results: readonly ItemResult[]): void {
  const where = `fan-out "${claim.fanOutId}" chunk ${claim.chunkId} results`;
  parse(resultsSchema, results, where);
  const seen = new Set<number>();
  results.forEach((result, i) => {
    if (seen.has(result.index))
      throw new InvalidInputError(where, [
        { path: `[${i}].index`, message: `item ${result.index} appears twice` },
      ]);
    seen.add(result.index);
  });
}
