/** Restarts of failed dispatches behind a circuit breaker (docs/architecture.md#dispatch). */
import {
  type ExecutionDispatcher,
  type ExecutionPackage,
  type ExecutionResult,
  ExecutionSupersededError,
  isSupersededRefusal,
} from '@skein/worker-runtime';
import { z } from 'zod';
import { CircuitBreaker, type CircuitOptions } from './circuit-breaker.js';
import { parseOptions, parsePackage } from './package-schema.js';

/** Options of {@link SupervisingDispatcher}. */
export interface SupervisingDispatcherOptions {
  /** The dispatcher whose failures are restarted. */
  target: ExecutionDispatcher;
  /** Restarts after the first failed dispatch (default: 0). */
  maxRestarts?: number;
  /** The circuit breaker, or its options (default: `new CircuitBreaker()`: 5 failures, 30 s cool-down). */
  circuit?: CircuitBreaker | CircuitOptions;
}

const optionsSchema = z.object({
  target: z.custom<ExecutionDispatcher>(
    (value) => typeof value === 'object' && value !== null && 'dispatch' in value,
    'must be an ExecutionDispatcher',
  ),
  maxRestarts: z.number().int().nonnegative().optional(),
  circuit: z
    .union([z.instanceof(CircuitBreaker), z.custom<CircuitOptions>((v) => typeof v === 'object')])
    .optional(),
});

/**
 * Restarts a failed dispatch up to `maxRestarts` times. Every failed dispatch counts against
 * the circuit; while it is open, dispatches are refused with `CircuitOpenError`. A superseded
 * refusal neither restarts nor counts: it surfaces as `ExecutionSupersededError`.
 * @example
 * const supervised = new SupervisingDispatcher({ target: dispatcher, maxRestarts: 2 });
 */
export class SupervisingDispatcher implements ExecutionDispatcher {
  /** The circuit breaker in front of the target. */
  readonly circuit: CircuitBreaker;
  private readonly target: ExecutionDispatcher;
  private readonly maxRestarts: number;

  constructor(options: SupervisingDispatcherOptions) {
    const parsed = parseOptions(optionsSchema, options, 'SupervisingDispatcher options');
    this.target = parsed.target;
    this.maxRestarts = parsed.maxRestarts ?? 0;
    this.circuit =
      parsed.circuit instanceof CircuitBreaker ? parsed.circuit : new CircuitBreaker(parsed.circuit);
  }

  /** Dispatch through the target, restarting failures; see the class comment. */
  async dispatch(pkg: ExecutionPackage): Promise<ExecutionResult> {
    const parsed = parsePackage(pkg, 'dispatch package');
    let last: unknown;
    for (let run = 0; run <= this.maxRestarts; run++) {
      this.circuit.admit(parsed.executionId);
      try {
        const result = await this.target.dispatch(parsed);
        this.circuit.success();
        return result;
      } catch (error) {
        if (isSupersededRefusal(error, parsed.executionId)) {
          this.circuit.neutral();
          throw error instanceof ExecutionSupersededError
            ? error
            : new ExecutionSupersededError(parsed.executionId, { cause: error });
        }
        this.circuit.failure();
        last = error;
      }
    }
    throw last;
  }
}
