/**
 * Headless Chromium from Debian's `chromium` package, driven by playwright-core. Without it
 * the browser tests skip loudly; under `CI=true` they fail (.ci/run installs the package).
 */
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';
import { it } from 'vitest';

/** Where Debian installs Chromium. */
export const CHROMIUM = '/usr/bin/chromium';

const present = existsSync(CHROMIUM);
if (!present) {
  if (process.env.CI === 'true') throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
  console.warn(
    `\n!!! ${CHROMIUM} is NOT installed (apt-get install -y chromium): the browser tests are SKIPPED !!!\n`,
  );
}

/** Register `register`'s tests when Chromium is installed, otherwise one skipped test that says why. */
export function whenChromium(register: () => void): void {
  if (present) register();
  else it.skip(`${CHROMIUM} is not installed`, () => {});
}

/** Launch headless Chromium with a fresh profile (its own `--user-data-dir`) and nothing that reaches the network. */
export function launchChromium(): Promise<BrowserContext> {
  const profile = mkdtempSync(join(tmpdir(), 'skein-chromium-'));
  return chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1360, height: 900 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
