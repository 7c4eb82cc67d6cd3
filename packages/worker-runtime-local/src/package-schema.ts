/** Validation of what callers hand the dispatchers and workers (L7: refused before anything is written). */
import type { ExecutionPackage } from '@skein/worker-runtime';
import { executionIdSchema, nameSchema, parseWith } from '@skein/workflow-runtime/internal';
import { z } from 'zod';

const packageSchema = z.object({
  executionId: executionIdSchema,
  workflow: nameSchema,
  input: z.unknown().optional(),
  version: z.number().int().positive().optional(),
  startOnly: z.boolean().optional(),
});

/** The package, checked; throws `InvalidInputError` naming each bad field. */
export function parsePackage(pkg: ExecutionPackage, where: string): ExecutionPackage {
  return parseWith(packageSchema, pkg, where, 'package');
}

/** Options checked against `schema`; throws `InvalidInputError` naming each bad field. */
export function parseOptions<T>(schema: z.ZodType<T>, options: unknown, where: string): T {
  return parseWith(schema, options, where, 'options');
}
