/**
 * Per-destination shares (adr/0057): each running step that declared a destination gets
 * min(capacity(destination) / running(destination), capacity / running(all)); each share is
 * recomputed on its own; a lowered capacity reaches steps already running; a destination no
 * running step declared has no share.
 */
import { DestinationShares, InvalidInputError, UnknownDestinationError } from '@skein/workflow-runtime';
import { describe, expect, it } from 'vitest';

describe('destination shares', () => {
  it('each running step of a destination gets its share of the destination and of the runtime', () => {
    const shares = new DestinationShares({ capacity: 12, perDestination: { api: 4 } });
    const a = shares.join('api');
    expect(a.share()).toBe(4); // min(4 / 1, 12 / 1)
    const b = shares.join('api');
    expect([a.share(), b.share()]).toEqual([2, 2]); // a competitor joined: min(4 / 2, 12 / 2)
    const others = Array.from({ length: 4 }, () => shares.join('db'));
    // Six steps share the runtime's 12: 'db' has no capacity of its own.
    expect(others[0]!.share()).toBe(2);
    expect(a.share()).toBe(2);
    for (const other of others.slice(1)) other.leave();
    expect(others[0]!.share()).toBe(4); // 12 / 3
    b.leave();
    b.leave(); // twice is once
    expect(a.share()).toBe(4); // min(4 / 1, 12 / 2)
    expect(shares.runningSteps('api')).toBe(1);
  });

  it('reading one cached share never suppresses a pending recomputation of another', () => {
    const shares = new DestinationShares({ perDestination: { one: 10, two: 10 } });
    const one = shares.join('one');
    const two = shares.join('two');
    expect([one.share(), two.share()]).toEqual([10, 10]);
    // Both change; reading `one` first must not leave `two` on its old value.
    shares.setDestinationCapacity('two', 4);
    shares.join('one');
    expect(one.share()).toBe(5);
    expect(two.share()).toBe(4);
    // A change of `two` alone leaves `one` cached as it is.
    shares.join('two');
    expect(two.share()).toBe(2);
    expect(one.share()).toBe(5);
  });

  it('a lowered capacity applies to steps already running', () => {
    const shares = new DestinationShares({ capacity: 100, perDestination: { api: 10 } });
    const running = [shares.join('api'), shares.join('api')];
    expect(running[0]!.share()).toBe(5);
    shares.setDestinationCapacity('api', 2);
    expect(running.map((step) => step.share())).toEqual([1, 1]);
    shares.setCapacity(1);
    expect(running.map((step) => step.share())).toEqual([0.5, 0.5]);
    shares.setCapacity(undefined);
    shares.setDestinationCapacity('api', undefined);
    expect(running[1]!.share()).toBe(Number.POSITIVE_INFINITY);
  });

  it('a destination no running step declared gets no share and is not readable', () => {
    const shares = new DestinationShares({ capacity: 10, perDestination: { api: 5 } });
    expect(() => shares.share('api')).toThrow(UnknownDestinationError);
    const step = shares.join('api');
    expect(shares.share('api')).toBe(5);
    expect(() => shares.share('elsewhere')).toThrow(/destination "elsewhere" has no share.*running: api/);
    step.leave();
    expect(() => shares.share('api')).toThrow(UnknownDestinationError);
    expect(() => step.share()).toThrow(UnknownDestinationError);
  });

  it('L7: bad capacities and names are refused with the field named', () => {
    expect(() => new DestinationShares({ capacity: 0 })).toThrow(InvalidInputError);
    expect(() => new DestinationShares({ perDestination: { api: -1 } })).toThrow(
      /destinations\.perDestination\.api/,
    );
    const shares = new DestinationShares();
    expect(() => shares.join('')).toThrow(/destination/);
    expect(() => shares.setCapacity(Number.NaN)).toThrow(/destinations\.capacity/);
  });
});
