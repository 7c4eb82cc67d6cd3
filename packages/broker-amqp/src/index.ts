/**
 * @skein/broker-amqp: the RabbitMQ `Transport` of Skein's outbox, on `rabbitmq-client`:
 * durable topology, persistent messages, mandatory routing, publisher confirms, reconnection,
 * prefetch, quarantine. See docs/rabbitmq.md.
 */
export { AmqpTransport, type AmqpTransportOptions } from './amqp-transport.js';
export { BrokerCircuit, type BrokerCircuitOptions } from './circuit.js';
export {
  type AmqpErrorCode,
  AmqpErrorCodes,
  AmqpTransportClosedError,
  BrokerCircuitOpenError,
  BrokerUnavailableError,
} from './errors.js';
export { HEADERS, QUEUE_ARGUMENTS, retryCeilings, type Topology, topologyOf } from './topology.js';
