// Colours and redraws only on a terminal, and never when NO_COLOR is set to anything.
import { describe, expect, it } from 'vitest';
import { terminalOutput } from '../../../src/cli/terminal-output.ts';

describe('terminalOutput', () => {
  it.each([
    [{}, true, true],
    [{ NO_COLOR: '1' }, true, false],
    [{ NO_COLOR: 'false' }, true, false],
    // no-color.org: an empty NO_COLOR does not count.
    [{ NO_COLOR: '' }, true, true],
    [{}, false, false],
  ])('env %j, TTY %s → terminal %s', (env, isTTY, terminal) => {
    expect(terminalOutput(env, isTTY).terminal).toBe(terminal);
  });
});
