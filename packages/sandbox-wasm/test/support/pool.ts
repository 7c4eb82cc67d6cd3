/** Shared set-up of the sandbox tests: the test evaluator, loaded once per test file. */
import { loadComponent, type SandboxComponent, type SandboxError } from '@skein/sandbox-wasm';
import { expect } from 'vitest';
import { builtEvaluator } from './fixtures.js';

let evaluator: Promise<SandboxComponent> | undefined;

/** The test evaluator, built (or taken from the build cache) and loaded. */
export function testEvaluator(): Promise<SandboxComponent> {
  evaluator ??= builtEvaluator().then(({ path, sha256 }) => loadComponent({ path, sha256 }));
  return evaluator;
}

/** The JSON input the test evaluator reads. */
export function input(fields: Record<string, unknown>): string {
  return JSON.stringify(fields);
}

/** Await `promise`, expect it to reject, and return the error. */
export async function rejection(promise: Promise<unknown>): Promise<SandboxError> {
  const outcome = await promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  expect(outcome.ok, `expected a rejection, got ${JSON.stringify(outcome)}`).toBe(false);
  return (outcome as { error: SandboxError }).error;
}
