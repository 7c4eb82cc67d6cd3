/**
 * Issue 24.5: docs/errors.md lists every error code of every package with the HTTP status a
 * service maps it to, and a real `node:http` service answers Skein's errors with that status
 * and their JSON form (code, name, message, cause) as the body.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AmqpErrorCodes } from '@skein/broker-amqp';
import { CliErrorCodes } from '@skein/cli';
import { SandboxErrorCodes } from '@skein/sandbox-wasm';
import { PostgresErrorCodes } from '@skein/store-postgres';
import { SqliteErrorCodes } from '@skein/store-sqlite';
import { TestkitErrorCodes } from '@skein/testkit';
import { DispatchErrorCodes } from '@skein/worker-runtime';
import { HttpErrorCodes } from '@skein/worker-runtime-http';
import { LocalErrorCodes } from '@skein/worker-runtime-local';
import { createRuntime, ErrorCodes, openMemoryStores } from '@skein/workflow-runtime';
import { afterEach, describe, expect, test } from 'vitest';
import { order, serve, statusByCode } from './service.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const codeMaps = {
  'workflow-runtime': ErrorCodes,
  'worker-runtime': DispatchErrorCodes,
  'worker-runtime-local': LocalErrorCodes,
  'worker-runtime-http': HttpErrorCodes,
  'store-sqlite': SqliteErrorCodes,
  'store-postgres': PostgresErrorCodes,
  testkit: TestkitErrorCodes,
  cli: CliErrorCodes,
  'sandbox-wasm': SandboxErrorCodes,
  'broker-amqp': AmqpErrorCodes,
} as const;

/** The table of docs/errors.md: code → package and status. */
function documented(): Map<string, { pkg: string; status: number }> {
  const text = readFileSync(join(root, 'docs/errors.md'), 'utf8');
  const rows = [...text.matchAll(/^\| `([A-Z_]+)` \| `\w+` \| ([\w-]+) \| .+ \| (\d{3}) \|$/gm)];
  return new Map(
    rows.map(([, code, pkg, status]) => [code as string, { pkg: pkg as string, status: Number(status) }]),
  );
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}

describe('docs/errors.md is the whole truth about error codes', () => {
  test("every package's codes are in the table, under their package, with the status the service answers", () => {
    const table = documented();
    const all = Object.entries(codeMaps).flatMap(([pkg, map]) =>
      Object.values(map).map((code) => ({ pkg, code })),
    );
    for (const { pkg, code } of all) {
      expect(table.get(code), `${code} (${pkg}) is missing from docs/errors.md`).toEqual({
        pkg,
        status: statusByCode[code],
      });
    }
    // And nothing else: no row for a code that no longer exists, none in the service's map either.
    expect([...table.keys()].sort()).toEqual(all.map(({ code }) => code).sort());
    expect(Object.keys(statusByCode).sort()).toEqual(all.map(({ code }) => code).sort());
  });

  test("every error class takes its code from its package's map, never a literal", () => {
    const literal = /super\(\s*'[A-Z][A-Z_]+'|code: '[A-Z][A-Z_]+'/;
    const offenders = readdirSync(join(root, 'packages')).flatMap((pkg) =>
      sourceFiles(join(root, 'packages', pkg, 'src')).filter((file) =>
        literal.test(readFileSync(file, 'utf8')),
      ),
    );
    expect(offenders).toEqual([]);
  });
});

describe('a node:http service answers errors with their status and JSON form', () => {
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
  });

  async function service() {
    const runtime = createRuntime({ stores: openMemoryStores(), workflows: [order] });
    const { server, url } = await serve(runtime);
    closers.push(async () => {
      await new Promise((resolve) => server.close(resolve));
      await runtime.close();
    });
    const call = async (method: string, path: string, data?: unknown) => {
      const response = await fetch(`${url}${path}`, {
        method,
        ...(data === undefined ? {} : { body: JSON.stringify(data) }),
      });
      return {
        status: response.status,
        body: (await response.json()) as { error?: Record<string, unknown> },
      };
    };
    return { call };
  }

  test('200, 400 (invalid input), 404 (unknown execution), 409 (finished), 500 with the cause chain', async () => {
    const { call } = await service();
    expect(await call('POST', '/orders/a', { sku: 'a', qty: 2 })).toEqual({
      status: 200,
      body: { sku: 'a', charged: 10 },
    });
    const invalid = await call('POST', '/orders/b', { sku: '', qty: 0 });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error).toMatchObject({ code: 'INVALID_INPUT', name: 'InvalidInputError' });
    expect(invalid.body.error?.message).toMatch(/input\.sku: .*; input\.qty: /);
    expect(await call('GET', '/orders/nobody')).toMatchObject({
      status: 404,
      body: { error: { code: 'EXECUTION_NOT_FOUND', executionId: 'nobody' } },
    });
    expect(await call('POST', '/orders/a/note', 'late')).toMatchObject({
      status: 409,
      body: { error: { code: 'EXECUTION_FINISHED', executionId: 'a' } },
    });
    const declined = await call('POST', '/orders/c', { sku: 'a', qty: 50 });
    expect(declined).toEqual({
      status: 500,
      body: {
        error: {
          code: 'EXECUTION_FAILED',
          name: 'ExecutionFailedError',
          message:
            'execution "c" ended failed: execution "c": step "charge" failed after 1 attempt: card declined for 250',
          executionId: 'c',
          cause: {
            code: 'STEP_FAILED',
            name: 'StepFailedError',
            message: 'execution "c": step "charge" failed after 1 attempt: card declined for 250',
            executionId: 'c',
            cause: { code: 'PAYMENT_DECLINED', name: 'PaymentDeclined', message: 'card declined for 250' },
          },
        },
      },
    });
    // The recorded error read back from the log serialises the same way.
    expect((await call('GET', '/orders/c')).body).toMatchObject({
      status: 'failed',
      error: { name: 'StepFailedError', cause: { name: 'PaymentDeclined', code: 'PAYMENT_DECLINED' } },
    });
  });
});
