/** The queue bench's workflow and queue, shared by the bench and its node processes. */
import { defineQueue } from '@skein/workflow-runtime';
import { stepsWorkflow } from '../engines/skein.js';

/** Running at once through the queue, for Skein and DBOS alike. */
export const QUEUE_CONCURRENCY = 10;

/** The 3-step workflow of the other PostgreSQL rows. */
export const queueWorkflow = stepsWorkflow(3);

export const benchQueue = defineQueue({ name: 'bench', concurrency: QUEUE_CONCURRENCY });
