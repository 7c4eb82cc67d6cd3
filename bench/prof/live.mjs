/**
 * What c200.mjs's executions in flight hold: allocations sampled, and 1.5 s in a full GC and
 * the profile of what is still alive, written to /tmp/live.json. A scavenge copies what is
 * alive, so this, not what is allocated, is what the collector's share follows (adr/0097).
 * Usage: node --expose-gc bench/prof/live.mjs [the arguments of c200.mjs]
 */

import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';

const s = new Session();
s.connect();
await s.post('HeapProfiler.enable');
await s.post('HeapProfiler.startSampling', { samplingInterval: 256 });
setTimeout(async () => {
  globalThis.gc();
  const { profile } = await s.post('HeapProfiler.stopSampling');
  writeFileSync('/tmp/live.json', JSON.stringify(profile));
}, 1500);
await import('./c200.mjs');
