/**
 * What c200.mjs allocates, collected objects included (the inspector's sampling heap
 * profiler, one sample per KiB); writes the profile to $OUT (default /tmp/alloc.json).
 * Usage: node bench/prof/alloc.mjs [the arguments of c200.mjs]
 */

import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';

const s = new Session();
s.connect();
await s.post('HeapProfiler.enable');
await s.post('HeapProfiler.startSampling', {
  samplingInterval: 1024,
  includeObjectsCollectedByMajorGC: true,
  includeObjectsCollectedByMinorGC: true,
});
await import('./c200.mjs');
const { profile } = await s.post('HeapProfiler.stopSampling');
writeFileSync(process.env.OUT ?? '/tmp/alloc.json', JSON.stringify(profile));
