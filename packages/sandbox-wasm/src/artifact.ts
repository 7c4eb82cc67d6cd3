/** The bytes of a component artifact and their hash. */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';

/** sha256 of `bytes`, lower-case hex. */
export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** Read an artifact and hash it. */
export async function readArtifact(path: string): Promise<{ bytes: Uint8Array; sha256: string }> {
  const bytes = new Uint8Array(await readFile(path));
  return { bytes, sha256: sha256Hex(bytes) };
}
