#!/usr/bin/env node
/** The `skein` executable: runs the command line, Ctrl-C (or SIGTERM) ends a follow or the inspector. */
import { runCli } from './program.js';

const controller = new AbortController();
for (const name of ['SIGINT', 'SIGTERM'] as const) process.once(name, () => controller.abort());
process.exitCode = await runCli(process.argv.slice(2), { signal: controller.signal });
