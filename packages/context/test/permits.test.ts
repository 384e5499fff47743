import { describe, expect, it } from 'vitest';
import { Permits, PermitTimeoutError } from '../src/concurrency/permits.ts';

describe('Permits', () => {
  it('hands out its permits, then serves waiters in the order they asked', async () => {
    const permits = new Permits(2);
    const a = await permits.take(1000);
    const b = await permits.take(1000);
    expect(permits.free).toBe(0);
    const order: string[] = [];
    const noted = (name: string) => (release: () => void) => {
      order.push(name);
      return release;
    };
    const c = permits.take(1000).then(noted('c'));
    const d = permits.take(1000).then(noted('d'));
    b();
    b(); // a second call gives nothing back twice
    (await c)();
    a();
    (await d)();
    expect(order).toEqual(['c', 'd']);
    expect(permits.free).toBe(2);
  });

  it('a wait past its timeout is refused and leaves the queue; the permit goes to the next waiter', async () => {
    const permits = new Permits(1);
    const held = await permits.take(1000);
    const late = permits.take(50);
    const next = permits.take(2000);
    await expect(late).rejects.toBeInstanceOf(PermitTimeoutError);
    held();
    (await next)();
    expect(permits.free).toBe(1);
  });

  it('a newcomer does not overtake a waiter', async () => {
    const permits = new Permits(1);
    const held = await permits.take(1000);
    const waiting = permits.take(1000);
    held();
    // The permit was handed to the waiter, not put back: a newcomer must queue.
    expect(permits.free).toBe(0);
    const newcomer = permits.take(1000);
    (await waiting)();
    (await newcomer)();
    expect(permits.free).toBe(1);
  });
});
