/**
 * The zod schemas `defineWorkflow` and `defineTask` refuse a malformed definition with: one
 * way of refusing, as every option of the runtime is (`InvalidInputError` naming each field).
 */
import { z } from 'zod';
import { illFormedReason, nameSchema, wellFormed } from './ids.js';
import { isReservedForUpdates, UPDATE_PREFIX } from './update-inbox.js';
import type { Schema } from './workflow.js';

/** A field that must hold a zod schema (anything with zod's `safeParse`). */
export const zodSchemaField = z.custom<Schema>(
  (value) => typeof (value as { safeParse?: unknown } | null | undefined)?.safeParse === 'function',
  'must be a zod schema',
);

/** A field that must hold a function. */
export const functionField = z.custom<(...args: never[]) => unknown>(
  (value) => typeof value === 'function',
  'must be a function',
);

/** A definition's version: a positive safe integer (default 1). */
export const versionField = z.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional();

/** A task's name: non-empty, well-formed, at most 255 characters. */
export const taskNameField = wellFormed(z.string().min(1).max(255));

/**
 * Declared signals or updates: each name well-formed and not in the updates' reserved prefix,
 * each value a zod schema. Checked by key on the object as given, so a key such as `__proto__`
 * is checked like any other and never reaches a prototype.
 */
export const messageMapField = z
  .custom<Readonly<Record<string, unknown>>>(
    (value) => value === undefined || (typeof value === 'object' && value !== null && !Array.isArray(value)),
    'must be an object of names to zod schemas',
  )
  .superRefine((declared, ctx) => {
    if (declared === undefined) return;
    for (const [name, schema] of Object.entries(declared)) {
      const bad =
        illFormedReason(name) ??
        (isReservedForUpdates(name) ? `must not start with "${UPDATE_PREFIX}"` : undefined);
      if (bad !== undefined) ctx.addIssue({ code: 'custom', path: [name], message: `name ${bad}` });
      else if (!zodSchemaField.safeParse(schema).success)
        ctx.addIssue({ code: 'custom', path: [name], message: 'must be a zod schema' });
    }
  })
  .optional();

/** What `defineWorkflow` checks of its spec before it builds the definition. */
export const workflowSpecSchema = z.object({
  name: nameSchema,
  version: versionField,
  input: zodSchemaField,
  output: zodSchemaField.optional(),
  signals: messageMapField,
  updates: messageMapField,
  errors: z.array(z.unknown(), { error: 'must be an array of error classes' }).optional(),
  run: functionField,
});

/** What `defineTask` checks of its spec: a task runs its own `run` or a sandboxed component, not both. */
export const taskSpecSchema = z
  .object({
    name: taskNameField,
    version: versionField,
    input: zodSchemaField,
    output: zodSchemaField.optional(),
    run: functionField.optional(),
    sandbox: z
      .object(
        {
          component: z.custom<object>((value) => value !== undefined && value !== null, 'is required'),
          pool: z.custom<object>(
            (value) => typeof (value as { invoke?: unknown } | null | undefined)?.invoke === 'function',
            'must have invoke(component, input, limits)',
          ),
        },
        { error: 'needs a component and a pool with invoke(component, input, limits)' },
      )
      .optional(),
  })
  .superRefine((spec, ctx) => {
    if (spec.sandbox === undefined && spec.run === undefined)
      ctx.addIssue({ code: 'custom', path: ['run'], message: 'must be a function (or give sandbox)' });
    if (spec.sandbox !== undefined && spec.run !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['sandbox'],
        message: 'cannot be given with run: a task runs one or the other',
      });
  });
