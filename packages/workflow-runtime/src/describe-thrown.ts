/** Text for a thrown value in a message: `Name: message` for an error. Never throws. */
export function describeThrown(value: unknown): string {
  try {
    return value instanceof Error ? `${value.name}: ${value.message}` : String(value);
  } catch (error) {
    // A revoked proxy, a throwing toString or getter: say so rather than fail the message.
    return `a value that cannot be printed (${error instanceof Error ? error.message : 'unknown'})`;
  }
}
