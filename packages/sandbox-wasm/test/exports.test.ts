import * as sandbox from '@skein/sandbox-wasm';
import { NonRetryableError } from '@skein/workflow-runtime';
import { describe, expect, it } from 'vitest';

describe('public surface', () => {
  it('exports every entry point', () => {
    expect(Object.keys(sandbox).sort()).toEqual(
      [
        'DEFAULT_LIMITS',
        'SandboxArtifactMismatchError',
        'SandboxBuildError',
        'SandboxComponent',
        'SandboxContractError',
        'SandboxError',
        'SandboxErrorClasses',
        'SandboxErrorCodes',
        'SandboxEvaluatorError',
        'SandboxFuelExhaustedError',
        'SandboxLogLimitError',
        'SandboxMemoryLimitError',
        'SandboxPool',
        'SandboxPoolClosedError',
        'SandboxTimeoutError',
        'SandboxTrapError',
        'buildComponent',
        'evaluatorContract',
        'loadComponent',
      ].sort(),
    );
  });

  it('a limit breach is a NonRetryableError that keeps its own code', () => {
    const error = new sandbox.SandboxFuelExhaustedError('a'.repeat(64), 10);
    expect(error).toBeInstanceOf(NonRetryableError);
    expect(error.code).toBe('SANDBOX_FUEL_EXHAUSTED');
    expect(error.toJSON()).toMatchObject({
      code: 'SANDBOX_FUEL_EXHAUSTED',
      name: 'SandboxFuelExhaustedError',
    });
    expect(new sandbox.SandboxPoolClosedError()).not.toBeInstanceOf(NonRetryableError);
  });

  it('the evaluator contract offers log and requires evaluate', () => {
    expect(sandbox.evaluatorContract.imports).toEqual(['import log: func(message: string);']);
    expect(sandbox.evaluatorContract.exports).toEqual([
      'export evaluate: func(input: string) -> result<string, string>;',
    ]);
    expect(sandbox.evaluatorContract.hash).toMatch(/^[0-9a-f]{64}$/);
  });
});
