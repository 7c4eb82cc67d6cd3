/** Step retry policies: exponential backoff with deterministic jitter. */
import { z } from 'zod';
import { durationMsSchema } from './durations.js';
import { parseWith } from './workflow.js';

/** How a step is retried. */
export interface RetryPolicy {
  /** Attempts in all, the first included (default: 1, no retry). */
  maxAttempts?: number;
  /** Delay before the second attempt in ms (default: 100). */
  initialMs?: number;
  /** Growth of the delay per attempt (default: 2). */
  factor?: number;
  /** Largest delay in ms (default: 60_000). */
  maxMs?: number;
  /** Fraction of the delay varied by jitter, 0–1 (default: 0.2). The jitter is deterministic per execution, step and attempt. */
  jitter?: number;
}

/** A policy with every default filled in. */
export type ResolvedRetryPolicy = Required<RetryPolicy>;

const policySchema = z.object({
  maxAttempts: z.number().int().min(1).optional(),
  initialMs: durationMsSchema.optional(),
  factor: z.number().min(1).refine(Number.isFinite, 'must be finite').optional(),
  maxMs: durationMsSchema.optional(),
  jitter: z.number().min(0).max(1).optional(),
});

/** `policy` checked (durations whole ms >= 0, adr/0032); throws `InvalidInputError` naming the field. */
export function checkedRetryPolicy(policy: RetryPolicy, where: string): RetryPolicy {
  return parseWith(policySchema, policy, where, 'retry') as RetryPolicy;
}

/** Fill in the defaults of a policy. */
export function resolveRetryPolicy(policy: RetryPolicy = {}): ResolvedRetryPolicy {
  return {
    maxAttempts: policy.maxAttempts ?? 1,
    initialMs: policy.initialMs ?? 100,
    factor: policy.factor ?? 2,
    maxMs: policy.maxMs ?? 60_000,
    jitter: policy.jitter ?? 0.2,
  };
}

/**
 * Delay in ms before attempt `failedAttempt + 1`. Deterministic: the same key and attempt
 * always give the same delay, so replays and tests see the same schedule.
 */
export function retryDelay(policy: ResolvedRetryPolicy, failedAttempt: number, key: string): number {
  const base = Math.min(policy.maxMs, policy.initialMs * policy.factor ** (failedAttempt - 1));
  const unit = hash01(`${key}#${failedAttempt}`) * 2 - 1;
  // Jitter varies the delay but never past `maxMs`, the largest delay the policy allows.
  return Math.min(policy.maxMs, Math.max(0, Math.round(base * (1 + policy.jitter * unit))));
}

/** FNV-1a of a string, scaled to [0, 1). */
function hash01(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) / 0x100000000;
}
