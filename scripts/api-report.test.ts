/**
 * Each package's public surface (names and declared types per entry point, from dist) matches
 * its checked-in report in api/: a surface that changes by accident fails here. After an
 * intended change: `pnpm build && pnpm api:update`, and commit the new report with it.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildReport, packageNames, reportPath } from './api-report.js';

describe('API report', () => {
  it.each(packageNames())('%s: the built surface is the one in api/', (pkg) => {
    expect(buildReport(pkg)).toBe(readFileSync(reportPath(pkg), 'utf8'));
  });
});
