// Debian's chromium driven by playwright-core for the dashboard tests, and axe-core run inside its pages.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** A headless chromium with a fresh profile (never a browser download: the system's binary). */
export async function launchChromium(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'rollgate-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: execFileSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' }).trim(),
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
    viewport: { width: 1280, height: 800 },
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** One axe violation, as a failing assertion prints it. */
export interface AxeFinding {
  id: string;
  impact: string;
  help: string;
  targets: string[];
}

/**
 * Runs axe-core (WCAG 2 A/AA rules) on the page as it is and returns its serious and critical
 * violations. The page's CSP allows no inline script, so axe is not added as a script tag: it is
 * evaluated through the DevTools protocol, which the CSP does not govern, and the page itself keeps
 * its real policy.
 */
export async function seriousViolations(page: Page): Promise<AxeFinding[]> {
  if (!(await page.evaluate('typeof window.axe !== "undefined"'))) await page.evaluate(AXE_SOURCE);
  const found = (await page.evaluate(`
    window.axe
      .run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } })
      .then((r) => r.violations.map((v) => ({
        id: v.id,
        impact: v.impact ?? 'unknown',
        help: v.help,
        targets: v.nodes.map((n) => n.target.join(' ')),
      })))
  `)) as AxeFinding[];
  return found.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}
