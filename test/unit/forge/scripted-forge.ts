// A forge client under test against a scripted HTTP stub: one stub at a time, closed after each test, retry waits recorded.
import { afterEach } from 'vitest';
import { startScriptedHttpStub, type ScriptedHttpStub, type StubHandler } from './scripted-http-stub.ts';

/** What a forge needs to be built against the stub, beside its own options. */
export interface StubbedForgeOptions {
  maxRetries: number;
  sleep: (ms: number) => Promise<void>;
}

export interface ScriptedForges<F> {
  /** Starts a stub answering with `handler` and a forge against it whose sleeps are recorded, not slept. */
  forgeWith(handler: StubHandler, maxRetries?: number): Promise<{ forge: F; slept: number[] }>;
  /** The requests the current stub got. */
  requests(): ScriptedHttpStub['requests'];
  /** The current stub's URL ('' when there is none). */
  stubUrl(): string;
  /** Closes the current stub before the test ends (to start another). */
  closeStub(): Promise<void>;
}

/**
 * Forges made by `make` (given the stub's URL) against scripted stubs; registers an `afterEach` that closes the
 * test's stub, so call it at the top of a test file.
 */
export function scriptedForges<F>(
  make: (stubUrl: string, options: StubbedForgeOptions) => F,
): ScriptedForges<F> {
  let stub: ScriptedHttpStub | undefined;
  const closeStub = async (): Promise<void> => {
    await stub?.close();
    stub = undefined;
  };
  afterEach(closeStub);
  return {
    async forgeWith(handler, maxRetries = 2) {
      stub = await startScriptedHttpStub(handler);
      const slept: number[] = [];
      const forge = make(stub.url, {
        maxRetries,
        sleep: (ms) => {
          slept.push(ms);
          return Promise.resolve();
        },
      });
      return { forge, slept };
    },
    requests() {
      if (stub === undefined) throw new Error('no stub');
      return stub.requests;
    },
    stubUrl: () => stub?.url ?? '',
    closeStub,
  };
}
