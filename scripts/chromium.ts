/**
 * Debian's Chromium driven by playwright-core, as the browser suites use it: headless, a fresh
 * profile per launch, no sandbox (CI containers), no background traffic.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BrowserContext } from "playwright-core";

/** The browser binary: RBP_CHROMIUM, else Debian's (scripts/install-browser.sh installs it). */
export const CHROMIUM = process.env.RBP_CHROMIUM ?? "/usr/bin/chromium";

const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export interface Browser {
  context: BrowserContext;
  /** Closes the browser and removes its profile. */
  close(): Promise<void>;
}

export async function openBrowser(profilePrefix = "rbp-chromium-"): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), profilePrefix));
  const { chromium } = await import("playwright-core");
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 900 },
  });
  return {
    context,
    async close() {
      await context.close().catch(() => {});
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
