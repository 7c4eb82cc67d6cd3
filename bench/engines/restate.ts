/**
 * Restate as a benchmark peer: the `restate-server` binary from the npm package
 * `@restatedev/restate-server` (nothing is downloaded at run time), started in the engine's
 * temp directory on free loopback ports, and the bench's service (engines/restate-service.ts,
 * a Restate SDK endpoint in a process of its own) registered through the server's admin API.
 * A run is one request to the ingress, `POST /bench-steps-<n>/<id>/run`, which starts the
 * workflow with that id and answers with its result once it has ended: the same start and
 * wait for the result as the Skein and DBOS runs, with the id given.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, realpathSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { arch, platform } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type EngineSpec, expectResult } from './engine.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** The path of the `restate-server` binary the npm package installed for this platform. */
export function restateServerBinary(): string {
  const require = createRequire(import.meta.url);
  const wrapper = realpathSync(require.resolve('@restatedev/restate-server/package.json'));
  const target = `@restatedev/restate-server-${platform()}-${arch()}`;
  try {
    return createRequire(wrapper).resolve(`${target}/bin/restate-server`);
  } catch {
    throw new Error(
      `bench: ${target} is not installed (an optional dependency of @restatedev/restate-server ` +
        `${createRequire(wrapper)('./package.json').version}); Restate ships no binary for this platform`,
    );
  }
}

/** Why Restate cannot run here, or undefined when its binary is installed. */
export function restateUnavailable(): string | undefined {
  try {
    const binary = restateServerBinary();
    return existsSync(binary) ? undefined : `${binary} is missing`;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** A free TCP port on loopback (the OS picks it; it is released before the server binds it). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address !== null
          ? resolve(address.port)
          : reject(new Error('no port')),
      );
    });
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolve once `child` prints a JSON line on stdout; reject if it exits first. */
function firstLine<T>(child: ChildProcess, what: string): Promise<T> {
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line !== undefined) resolve(JSON.parse(line) as T);
    });
    child.once('exit', (code) => reject(new Error(`bench: ${what} exited with ${code} before it was ready`)));
  });
}

/** One HTTP request on `agent`; resolves with the status and the body; with `timeoutMs`, rejects past it. */
function request(
  agent: http.Agent,
  port: number,
  method: string,
  path: string,
  body?: string,
  timeoutMs?: number,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, method, path, agent, headers: { 'content-type': 'application/json' } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (timeoutMs !== undefined) {
      req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    }
    req.end(body);
  });
}

/** Retry `fn` every 100 ms until it returns true, for at most `seconds`. */
async function until(seconds: number, what: string, fn: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    if (await fn().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`bench: restate: ${what} within ${seconds} s`);
    await sleep(100);
  }
}

/** Stop `child` with SIGTERM, then SIGKILL if it is still there after `graceMs`. */
async function stop(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Restate: the server with its default settings (its log and state on RocksDB, WAL fsync on). */
export const restate: EngineSpec = {
  name: 'restate',
  kind: 'restate',
  store: 'restate',
  tags: ['restate'],
  async open({ dir }) {
    const children: ChildProcess[] = [];
    const close = async () => {
      for (const child of children.reverse()) await stop(child, 10_000);
    };
    try {
      const service = spawn(
        process.execPath,
        ['--import', 'tsx', join(root, 'bench/engines/restate-service.ts'), '0'],
        {
          cwd: root,
          env: process.env,
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      );
      children.push(service);
      const { port: servicePort } = await firstLine<{ port: number }>(service, 'the Restate service');

      const [admin, ingress, fabric] = [await freePort(), await freePort(), await freePort()];
      const base = join(dir, 'restate');
      mkdirSync(base, { recursive: true });
      const server = spawn(restateServerBinary(), ['--base-dir', base, '--no-logo', '--listen-mode', 'tcp'], {
        cwd: dirname(base),
        env: {
          ...process.env,
          RESTATE_ADMIN__BIND_ADDRESS: `127.0.0.1:${admin}`,
          RESTATE_INGRESS__BIND_ADDRESS: `127.0.0.1:${ingress}`,
          RESTATE_BIND_ADDRESS: `127.0.0.1:${fabric}`,
          RESTATE_ADVERTISED_ADDRESS: `http://127.0.0.1:${fabric}`,
          RESTATE_DISABLE_TELEMETRY: 'true',
          RESTATE_LOG_FILTER: 'error',
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      children.push(server);
      // Its log is kept (the last 8 KiB) and shown only if it fails to start: at start it logs
      // one failed outbound connection of its GitHub client, which this loopback-only bench
      // neither needs nor allows.
      let log = '';
      server.stderr!.on('data', (chunk: Buffer) => {
        log = (log + chunk.toString()).slice(-8192);
      });
      let onExit: (code: number | null, signal: NodeJS.Signals | null) => void = () => undefined;
      const exited = new Promise<never>((_, reject) => {
        onExit = (code, signal) =>
          reject(new Error(`bench: restate-server exited (${code ?? signal}) while starting`));
        server.once('exit', onExit);
      });
      exited.catch(() => undefined);
      const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
      const ready = async () => {
        await until(60, 'the admin API did not answer', async () => {
          return (await request(agent, admin, 'GET', '/health', undefined, 5000)).status === 200;
        });
        const registered = await request(
          agent,
          admin,
          'POST',
          '/deployments',
          JSON.stringify({ uri: `http://127.0.0.1:${servicePort}` }),
          30_000,
        );
        if (registered.status >= 300) {
          throw new Error(
            `bench: restate: registering the service answered ${registered.status}: ${registered.body}`,
          );
        }
        // The ingress learns of new services shortly after the admin API has them. A service
        // that fails every invocation (Restate retries it) leaves the request unanswered.
        let attempt = 0;
        await until(30, 'the ingress did not run bench-steps-0', async () => {
          const got = await request(
            agent,
            ingress,
            'POST',
            `/bench-steps-0/ready-${attempt++}/run`,
            '1',
            5000,
          );
          return got.status === 200 && got.body === '1';
        });
      };
      await Promise.race([ready(), exited]).catch((error: unknown) => {
        console.error(`bench: restate-server's log:\n${log}`);
        throw error;
      });
      server.off('exit', onExit);

      let prepared = 0;
      return {
        async prepare(shape) {
          const prefix = `/bench-steps-${shape}/${shape}-${prepared++}-`;
          return async (i) => {
            const got = await request(agent, ingress, 'POST', `${prefix}${i}/run`, String(i));
            if (got.status !== 200)
              throw new Error(`bench: restate run ${i} answered ${got.status}: ${got.body}`);
            expectResult('restate', i, JSON.parse(got.body), i + shape);
          };
        },
        async close() {
          agent.destroy();
          await close();
        },
      };
    } catch (error) {
      await close();
      throw error;
    }
  },
};
