/**
 * The rule for execution ids that cross the wire (docs/remote.md): 1 to 255 characters
 * (the runtime's `MAX_EXECUTION_ID_LENGTH`), ASCII letters, digits and `. _ : -`, starting
 * with a letter or digit. So an id is always one safe path segment: no `/`, no `%`, never
 * `.` or `..`, nothing a proxy or a log would rewrite.
 */
import { MAX_EXECUTION_ID_LENGTH } from '@skein/workflow-runtime/internal';
import { z } from 'zod';

/** The pattern of an execution id on the wire. */
export const EXECUTION_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/;

/** Zod schema of an execution id on the wire. */
export const wireExecutionId = z
  .string()
  .min(1)
  .max(MAX_EXECUTION_ID_LENGTH)
  .regex(
    EXECUTION_ID_PATTERN,
    'must be ASCII letters, digits and ". _ : -", starting with a letter or digit',
  );
