/** The PostgreSQL stores, under a runtime, refuse every string key that is not well-formed Unicode. */
import { textBoundarySuite } from '@skein/conformance';
import { openTestStores, whenPostgres } from './support/pg.js';

whenPostgres(() => textBoundarySuite({ name: 'postgres', open: () => openTestStores() }));
