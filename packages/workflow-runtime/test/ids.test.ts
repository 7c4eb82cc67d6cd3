/** `newId`: ULIDs that are strictly increasing within a process, in one millisecond and when the clock goes back. */

import { newId } from '@skein/workflow-runtime/internal';
import { afterEach, describe, expect, it, vi } from 'vitest';

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const ULID = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

/** The milliseconds of a ULID's first 10 characters. */
function timeOf(id: string): number {
  let time = 0;
  for (const char of id.slice(0, 10)) time = time * 32 + ALPHABET.indexOf(char);
  return time;
}

/** The random part as a number of base32 digits, compared as a big integer. */
function randomOf(id: string): bigint {
  let value = 0n;
  for (const char of id.slice(10)) value = value * 32n + BigInt(ALPHABET.indexOf(char));
  return value;
}

describe('newId', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('gives 26 Crockford characters whose time part is the clock', () => {
    const before = Date.now();
    const id = newId();
    expect(id).toMatch(ULID);
    expect(timeOf(id)).toBeGreaterThanOrEqual(before);
    expect(timeOf(id)).toBeLessThanOrEqual(Date.now());
  });

  it('within one millisecond increments the random part by one, carrying across digits', () => {
    vi.spyOn(Date, 'now').mockReturnValue(Date.UTC(2030, 0, 1));
    const ids = Array.from({ length: 2000 }, () => newId());
    for (let i = 1; i < ids.length; i++) {
      expect(ids[i]! > ids[i - 1]!).toBe(true);
      expect(timeOf(ids[i]!)).toBe(Date.UTC(2030, 0, 1));
      expect(randomOf(ids[i]!) - randomOf(ids[i - 1]!)).toBe(1n);
    }
    // 2000 increments pass a last digit of Z (31) dozens of times: the carries were exercised.
    expect(new Set(ids.map((id) => id.slice(0, 24))).size).toBeGreaterThan(1);
  });

  it('stays increasing when the clock goes back, keeping the newest time', () => {
    const now = vi.spyOn(Date, 'now').mockReturnValue(Date.UTC(2031, 0, 1));
    const first = newId();
    now.mockReturnValue(Date.UTC(2031, 0, 1) - 5000);
    const second = newId();
    expect(second > first).toBe(true);
    expect(timeOf(second)).toBe(Date.UTC(2031, 0, 1));
    now.mockReturnValue(Date.UTC(2031, 0, 1) + 1);
    const third = newId();
    expect(timeOf(third)).toBe(Date.UTC(2031, 0, 1) + 1);
    expect(third > second).toBe(true);
  });

  it('draws a fresh random part in each new millisecond', () => {
    const now = vi.spyOn(Date, 'now');
    const parts = new Set<string>();
    for (let i = 0; i < 200; i++) {
      now.mockReturnValue(Date.UTC(2032, 0, 1) + i);
      parts.add(newId().slice(10));
    }
    expect(parts.size).toBe(200);
  });
});
