import { describe, expect, it } from 'vitest';
import { refusal } from './package-check.js';

describe('package-check: what a published package may hold', () => {
  it('keeps the manifest, the README and the build', () => {
    for (const path of [
      'package.json',
      'README.md',
      'dist/index.js',
      'dist/index.d.ts',
      'dist/index.js.map',
    ]) {
      expect(refusal('testkit', path), path).toBeUndefined();
    }
    expect(refusal('store-sqlite', 'dist/migrations/0001_migrations.sql')).toBeUndefined();
  });

  it('refuses sources, tests and build leftovers', () => {
    expect(refusal('testkit', 'src/index.ts')).toBe('source or test file');
    expect(refusal('testkit', 'test/drive.test.ts')).toBe('source or test file');
    expect(refusal('testkit', 'dist/drive.test.js')).toBe('source or test file');
    expect(refusal('testkit', 'dist/drive.test.js.map')).toBe('source or test file');
    expect(refusal('testkit', 'tsconfig.json')).toBe('not needed by a user');
    expect(refusal('testkit', 'tsconfig.tsbuildinfo')).toBe('source or test file');
    expect(refusal('testkit', 'dist/nested/index.js')).toBe('not needed by a user');
  });

  it('keeps files outside dist only for the package that reads them at run time', () => {
    expect(refusal('sandbox-wasm', 'wit/evaluator.wit')).toBeUndefined();
    expect(refusal('testkit', 'wit/evaluator.wit')).toBe('not needed by a user');
  });
});
