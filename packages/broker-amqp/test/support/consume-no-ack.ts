/** Child process: consumes a topic and never finishes a handler, so nothing is acked. */
import { connectTransport } from './amqp.js';

const [prefix, topic, prefetch] = process.argv.slice(2) as [string, string, string];
const transport = await connectTransport(prefix, {
  topics: [topic],
  connectionName: `skeintest:${prefix}:consumer`,
});
await transport.consume(
  topic,
  (message) => {
    console.log(`got ${message.id}`);
    return new Promise(() => undefined);
  },
  { prefetch: Number(prefetch) },
);
console.log('ready');
await new Promise(() => undefined);
