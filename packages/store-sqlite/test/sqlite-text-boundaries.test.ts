/** The SQLite stores, under a runtime, refuse every string key that is not well-formed Unicode. */
import { textBoundarySuite } from '@skein/conformance';
import { openTempStores } from './temp-stores.js';

textBoundarySuite({ name: 'sqlite', open: () => openTempStores() });
