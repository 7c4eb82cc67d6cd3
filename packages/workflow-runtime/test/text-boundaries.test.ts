/** The memory stores, under a runtime, refuse every string key that is not well-formed Unicode. */
import { textBoundarySuite } from '@skein/conformance';
import { openMemoryStores } from '@skein/workflow-runtime';

textBoundarySuite({ name: 'memory', open: () => openMemoryStores() });
