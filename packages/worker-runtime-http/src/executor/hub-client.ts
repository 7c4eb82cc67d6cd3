/** The executor's signed requests to its hub (docs/executors.md#protocol). */
import { decode, encode } from '@skein/workflow-runtime/internal';
import type { z } from 'zod';
import { answerError } from '../answers.js';
import { RemoteProtocolError } from '../errors.js';
import { type Endpoint, type RawAnswer, send } from '../transport.js';
import { WireCodes, wireErrorSchema } from '../wire.js';
import {
  ExecutorPaths,
  type InspectionAnswer,
  type InspectRequest,
  pollAnswerSchema,
  type RunOffer,
  sessionAnswerSchema,
} from './executor-wire.js';
import type { Binding } from './retained-store.js';

/** The executor and the session it holds, as every request names them. */
export interface Sender {
  executorId: string;
  session: Binding;
}

/** A session the hub gave. */
export type SessionGrant = z.infer<typeof sessionAnswerSchema>;

/** The answer codes that say the sender's session cannot act any more. */
export const SESSION_ENDED = new Set<string>([
  WireCodes.SessionUnknown,
  WireCodes.SessionRevoked,
  WireCodes.SessionExpired,
  WireCodes.SessionReplaced,
  WireCodes.SessionClosed,
]);

/** The codes of refusals the hub would only repeat: they end delivery (E3). */
export const FINAL_REFUSALS = new Set<string>([
  WireCodes.NotYourRun,
  WireCodes.UnknownRun,
  WireCodes.InvalidRequest,
]);

/** What a report came to. */
export type ReportAnswer =
  | { kind: 'acknowledged'; duplicate: boolean }
  | { kind: 'session-ended'; code: string }
  | { kind: 'refused'; code: string; message: string }
  | { kind: 'failed'; diagnostic: string };

/** Requests of one executor to one hub. */
export class HubClient {
  constructor(
    private readonly endpoint: Endpoint,
    private readonly executorId: string,
  ) {}

  /** Negotiate a new session. */
  async openSession(packageVersion: string): Promise<SessionGrant> {
    const answer = await this.post(ExecutorPaths.sessions, { executorId: this.executorId, packageVersion });
    return this.parse(answer, sessionAnswerSchema);
  }

  /** Extend the session; the code that ends it, or null while it lives. */
  async heartbeat(sender: Sender): Promise<string | null> {
    const answer = await this.post(ExecutorPaths.heartbeat, sender);
    return answer.status === 200 ? null : this.endedOrThrow(answer);
  }

  /** End the session at the hub (best effort: a hub that cannot be reached lets it expire). */
  async closeSession(sender: Sender): Promise<void> {
    try {
      await this.post(ExecutorPaths.close, sender);
    } catch {
      // Unreachable or slow: the session expires at the hub after its TTL instead.
    }
  }

  /** Wait for work up to `waitMs`; the code that ends the session instead of work. */
  async poll(
    sender: Sender,
    waitMs: number,
    signal: AbortSignal,
  ): Promise<(RunOffer | InspectRequest)[] | string> {
    const endpoint = { ...this.endpoint, timeoutMs: this.endpoint.timeoutMs + waitMs };
    const answer = await send(endpoint, {
      method: 'POST',
      path: ExecutorPaths.poll.slice(1),
      body: encode({ ...sender, waitMs }),
      executionId: `executor ${this.executorId}`,
      signal,
    });
    if (answer.status !== 200) return this.endedOrThrow(answer);
    try {
      return pollAnswerSchema.parse(decode(answer.text)).items;
    } catch (error) {
      throw new RemoteProtocolError(`executor ${this.executorId}`, this.endpoint.base.origin, String(error), {
        cause: error,
      });
    }
  }

  /** Send one report (its body already encoded, so every attempt is identical). */
  async report(body: string): Promise<ReportAnswer> {
    let answer: RawAnswer;
    try {
      answer = await send(this.endpoint, {
        method: 'POST',
        path: ExecutorPaths.results.slice(1),
        body,
        executionId: `executor ${this.executorId}`,
      });
    } catch (error) {
      return { kind: 'failed', diagnostic: error instanceof Error ? error.message : String(error) };
    }
    if (answer.status === 200) {
      const duplicate = (JSON.parse(answer.text) as { duplicate?: boolean }).duplicate === true;
      return { kind: 'acknowledged', duplicate };
    }
    const parsed = wireErrorSchema.safeParse(safeJson(answer.text));
    if (!parsed.success)
      return { kind: 'failed', diagnostic: `status ${answer.status} without an error body` };
    const { code, error } = parsed.data;
    if (SESSION_ENDED.has(code)) return { kind: 'session-ended', code };
    if (FINAL_REFUSALS.has(code)) {
      const issues = parsed.data.issues?.map((i) => `${i.path}: ${i.message}`).join('; ');
      return { kind: 'refused', code, message: issues === undefined ? error : `${error}: ${issues}` };
    }
    return { kind: 'failed', diagnostic: `status ${answer.status} ${code}: ${error}` };
  }

  /** Send an inspection answer. */
  async answerInspection(sender: Sender, requestId: string, answer: InspectionAnswer): Promise<void> {
    const sent = await this.post(ExecutorPaths.inspections, { ...sender, requestId, answer });
    if (sent.status !== 200) this.endedOrThrow(sent);
  }

  private post(path: string, body: unknown): Promise<RawAnswer> {
    return send(this.endpoint, {
      method: 'POST',
      path: path.slice(1),
      body: encode(body),
      executionId: `executor ${this.executorId}`,
    });
  }

  private parse<T>(answer: RawAnswer, schema: z.ZodType<T>): T {
    if (answer.status !== 200)
      throw answerError(answer, `executor ${this.executorId}`, this.endpoint.base.origin);
    try {
      return schema.parse(JSON.parse(answer.text));
    } catch (error) {
      throw new RemoteProtocolError(`executor ${this.executorId}`, this.endpoint.base.origin, String(error), {
        cause: error,
      });
    }
  }

  private endedOrThrow(answer: RawAnswer): string {
    const parsed = wireErrorSchema.safeParse(safeJson(answer.text));
    if (parsed.success && SESSION_ENDED.has(parsed.data.code)) return parsed.data.code;
    throw answerError(answer, `executor ${this.executorId}`, this.endpoint.base.origin);
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // Not JSON: the caller reports it as an answer without an error body.
    return undefined;
  }
}
