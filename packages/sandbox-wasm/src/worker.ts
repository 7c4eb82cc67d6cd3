/**
 * Entry of the sandbox's worker threads. A `prepare` thread prepares one component and exits; a
 * `sandbox` thread keeps loaded components and runs one invocation at a time, until the host
 * terminates it (at a timeout, or when its pool closes).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { type GlueInstantiate, invoke, type LoadedComponent, SpareMemories } from './invocation.js';
import type { PreparedModule } from './prepare.js';
import type { HostMessage, WorkerMessage, WorkerRole } from './protocol.js';
import { cheapJspiFallback, enableExtendedConst } from './wasm-features.js';

const port = parentPort;
if (port === null) throw new Error('the sandbox worker runs only as a worker thread');
const role = (workerData as { role: WorkerRole }).role;
const loaded = new Map<string, LoadedComponent>();

enableExtendedConst();
if (role === 'sandbox') cheapJspiFallback();

function send(message: WorkerMessage): void {
  port!.postMessage(message);
}

async function load(key: string, glue: string, modules: Record<string, PreparedModule>): Promise<void> {
  const url = `data:text/javascript;base64,${Buffer.from(glue, 'utf8').toString('base64')}`;
  const { instantiate } = (await import(url)) as { instantiate: GlueInstantiate };
  const byModule = new Map(Object.values(modules).map((prepared) => [prepared.module, prepared]));
  loaded.set(key, { instantiate, modules, byModule, memories: new SpareMemories() });
}

async function handle(message: HostMessage): Promise<void> {
  switch (message.type) {
    case 'prepare': {
      const { prepare } = await import('./prepare.js');
      send({ type: 'prepared', preparation: await prepare(message.bytes, message.contract) });
      return;
    }
    case 'load':
      await load(message.key, message.prepared.glue, message.prepared.modules);
      send({ type: 'loaded', key: message.key });
      return;
    case 'invoke': {
      const component = loaded.get(message.key);
      if (component === undefined) throw new Error(`component ${message.key} is not loaded in this thread`);
      send({ type: 'outcome', id: message.id, outcome: invoke(component, message.input, message.limits) });
      component.memories.scrub(); // after the answer, off the invocation's latency
      return;
    }
  }
}

port.on('message', (message: HostMessage) => {
  handle(message).catch((error: unknown) => {
    const id = message.type === 'invoke' ? message.id : undefined;
    send({ type: 'failed', id, message: error instanceof Error ? error.message : String(error) });
  });
});
send({ type: 'ready' });
