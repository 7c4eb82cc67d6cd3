/** The SQLite fan-out tables pass the fan-out-store conformance suite, on a real file. */
import { fanOutStoreSuite } from '@skein/conformance';
import { openTempStores } from './temp-stores.js';

fanOutStoreSuite({ name: 'sqlite', open: () => openTempStores() });
