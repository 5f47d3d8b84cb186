// What the test files share beyond the servers of harness.ts: the session and context calls are
// made with, catching what is expected to throw or reject, and closing after each test what it
// opened.
import { afterEach } from 'vitest';

/** The session every `tools()` of the suite is called with. */
export const session = { runId: 'r1' };

/**
 * The context `execute` is called with. Only `signal` and `log` are read, so `runId` is enough;
 * `any` lets it stand where the engine's full `ToolContext` is typed.
 */
export const ctx = { runId: 'r1' } as any;

/** `ctx` with `signal`, `log` or anything else added. */
export const ctxWith = (extra: Record<string, unknown>) => ({ ...ctx, ...extra }) as any;

/** The error `fn` throws; a test expecting one fails if it returns. */
export function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a throw');
}

/** The error `promise` rejects with; a test expecting one fails if it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}

type Closable = { close(): unknown } | { stop(): unknown };

/**
 * Registers an `afterEach` that ends whatever the test handed to the returned function: sources
 * (`close()`), servers of harness.ts (`stop()`), or any ending given to `.defer`. Newest first,
 * so a source is closed before the server it talks to stops.
 */
export function closeAfterEach() {
  const endings: Array<() => unknown> = [];
  afterEach(async () => {
    for (const end of endings.splice(0).reverse()) await end();
  });
  const keep = <T extends Closable>(thing: T): T => {
    endings.push(() => ('close' in thing ? thing.close() : thing.stop()));
    return thing;
  };
  return Object.assign(keep, {
    defer(end: () => unknown): void {
      endings.push(end);
    },
  });
}

/** A small seeded generator (mulberry32): the same seed, the same cases. */
export function seeded(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)];
  return { next, chance: (p: number) => next() < p, int, pick };
}
