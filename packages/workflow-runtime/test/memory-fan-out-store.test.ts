/** The in-memory fan-out tables pass the fan-out-store conformance suite. */
import { fanOutStoreSuite } from '@skein/conformance';
import { openMemoryStores } from '@skein/workflow-runtime';

fanOutStoreSuite({ name: 'memory', open: () => openMemoryStores() });
