/**
 * Errors of the RabbitMQ transport: a stable `code` from {@link AmqpErrorCodes}, `name` set,
 * structured fields, the original kept as `cause`.
 */
import { SkeinError } from '@skein/workflow-runtime';

/** Stable codes of the errors of this package, by class (without the `Error` suffix). */
export const AmqpErrorCodes = {
  BrokerCircuitOpen: 'BROKER_CIRCUIT_OPEN',
  BrokerUnavailable: 'BROKER_UNAVAILABLE',
  AmqpTransportClosed: 'AMQP_TRANSPORT_CLOSED',
} as const;

/** One of {@link AmqpErrorCodes}. */
export type AmqpErrorCode = (typeof AmqpErrorCodes)[keyof typeof AmqpErrorCodes];

/** The broker circuit is open after consecutive failures: the call was not tried. */
export class BrokerCircuitOpenError extends SkeinError {
  constructor(
    readonly operation: string,
    /** When the circuit lets a trial call through (ms since the epoch). */
    readonly retryAt: number,
    readonly failures: number,
  ) {
    super(
      AmqpErrorCodes.BrokerCircuitOpen,
      `${operation}: the broker circuit is open after ${failures} consecutive failures; ` +
        `a trial is let through at ${new Date(retryAt).toISOString()}`,
    );
  }
}

/** The broker did not answer in time (connect, consumer creation). */
export class BrokerUnavailableError extends SkeinError {
  constructor(
    readonly operation: string,
    readonly timeoutMs: number,
    options?: { cause?: unknown },
  ) {
    super(
      AmqpErrorCodes.BrokerUnavailable,
      `${operation}: the broker did not answer within ${timeoutMs} ms`,
      options,
    );
  }
}

/** The transport was used after `close()`. */
export class AmqpTransportClosedError extends SkeinError {
  constructor(readonly operation: string) {
    super(AmqpErrorCodes.AmqpTransportClosed, `AmqpTransport is closed: ${operation} refused`);
  }
}
