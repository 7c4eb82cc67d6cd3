/**
 * `defineWorkflow` and `defineTask` refuse a malformed definition one way: an
 * `InvalidInputError` (code `INVALID_INPUT`) that names the definition and every bad field,
 * as every option of the runtime is refused.
 */
import { defineTask, defineWorkflow, ErrorCodes, InvalidInputError } from '@skein/workflow-runtime';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';

const base = { name: 'w', input: z.object({}), run: async () => 1 };

function refusal(define: () => unknown): InvalidInputError {
  try {
    define();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidInputError);
    return error as InvalidInputError;
  }
  throw new Error('the definition was accepted');
}

describe('defineWorkflow refuses a malformed definition with InvalidInputError', () => {
  test.each([
    ['an empty name', { ...base, name: '' }, 'defineWorkflow("")', 'name'],
    ['a name that is not a string', { ...base, name: 7 }, 'defineWorkflow(number)', 'name'],
    ['a lone surrogate in the name', { ...base, name: 'a\uD800' }, 'defineWorkflow(', 'name'],
    ['version 0', { ...base, version: 0 }, 'defineWorkflow("w")', 'version'],
    ['a fractional version', { ...base, version: 1.5 }, 'defineWorkflow("w")', 'version'],
    ['an input that is not a schema', { ...base, input: { parse: () => 1 } }, 'defineWorkflow("w")', 'input'],
    ['an output that is not a schema', { ...base, output: 'text' }, 'defineWorkflow("w")', 'output'],
    ['a run that is not a function', { ...base, run: 'go' }, 'defineWorkflow("w")', 'run'],
    ['a signal without a schema', { ...base, signals: { go: true } }, 'defineWorkflow("w")', 'signals.go'],
    ['signals that are not an object', { ...base, signals: ['go'] }, 'defineWorkflow("w")', 'signals'],
    [
      'an update name in the reserved prefix',
      { ...base, updates: { '$update:x': z.string() } },
      'defineWorkflow("w")',
      'updates.$update:x',
    ],
    [
      'a signal name with a lone surrogate',
      { ...base, signals: { '\uDC00': z.string() } },
      'defineWorkflow("w")',
      'signals.\uDC00',
    ],
    ['errors that are not an array', { ...base, errors: 'E' }, 'defineWorkflow("w")', 'errors'],
  ])('%s', (_what, spec, where, path) => {
    const error = refusal(() => defineWorkflow(spec as never));
    expect(error.code).toBe(ErrorCodes.InvalidInput);
    expect(error.where.startsWith(where)).toBe(true);
    expect(error.issues.map((issue) => issue.path)).toContain(path);
  });

  test('every bad field is named at once, and no definition comes back', () => {
    const error = refusal(() => defineWorkflow({ name: '', version: -1, input: 1, run: 2 } as never));
    expect(error.issues.map((issue) => issue.path)).toEqual(['name', 'version', 'input', 'run']);
    expect(error.message).toMatch(
      /^defineWorkflow\(""\) is invalid: name: .*; version: .*; input: must be a zod schema; run: must be a function$/,
    );
  });

  test('a spec that is not an object, and one whose field getter throws, are refused the same way', () => {
    expect(refusal(() => defineWorkflow(undefined as never)).where).toBe('defineWorkflow(undefined)');
    const hostile = Object.defineProperty({ ...base }, 'input', {
      get() {
        throw new Error('no');
      },
    });
    expect(refusal(() => defineWorkflow(hostile)).message).toContain('threw');
  });

  test('a signal named __proto__ is checked like any other name and never reaches a prototype', () => {
    const signals = JSON.parse('{"__proto__": 1}') as Record<string, never>;
    expect(refusal(() => defineWorkflow({ ...base, signals })).issues[0]?.path).toBe('signals.__proto__');
    const own = Object.defineProperty({}, '__proto__', { value: z.string(), enumerable: true });
    const ok = defineWorkflow({ ...base, signals: own });
    expect(Object.getPrototypeOf(ok.signals)).toBe(Object.prototype);
    expect(Object.keys(ok.signals)).toEqual(['__proto__']);
  });

  test('a well-formed definition is frozen with its defaults', () => {
    const workflow = defineWorkflow({ ...base, signals: { go: z.boolean() } });
    expect(workflow.version).toBe(1);
    expect(Object.isFrozen(workflow) && Object.isFrozen(workflow.signals)).toBe(true);
  });
});

describe('defineTask refuses the same way', () => {
  test('a task with both run and sandbox, and one with neither', () => {
    const task = { name: 't', input: z.string() };
    const both = refusal(() =>
      defineTask({
        ...task,
        run: async () => 1,
        sandbox: { component: {}, pool: { invoke: async () => '' } },
      } as never),
    );
    expect(both.issues.map((issue) => issue.path)).toEqual(['sandbox']);
    expect(refusal(() => defineTask(task as never)).issues.map((issue) => issue.path)).toEqual(['run']);
    expect(
      refusal(() => defineTask({ ...task, name: 'x'.repeat(256), run: async () => 1 })).issues[0]?.path,
    ).toBe('name');
  });
});
