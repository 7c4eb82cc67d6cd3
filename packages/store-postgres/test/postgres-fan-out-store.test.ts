/** The PostgreSQL fan-out tables pass the fan-out-store conformance suite against a real server, one schema per test. */
import { fanOutStoreSuite } from '@skein/conformance';
import { openTestStores, whenPostgres } from './support/pg.js';

whenPostgres(() => {
  fanOutStoreSuite({ name: 'postgres', open: () => openTestStores() });
});
