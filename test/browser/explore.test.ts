/**
 * The explore figure (`p.explore()`, src/display/figures.ts exploreFigure) in Chromium: a PSR over
 * four thresholds drawn as a notebook output and inside a saved report, then its slider moved with
 * the mouse as a reader would. After each move the drawn traces must be those of the chosen
 * threshold: as many kept points drawn (SVG nodes of the first trace) as the PSR kept there, the
 * dropped ones in the second trace, the title naming the threshold, and the cut line moved. No
 * kernel runs: the steps carry every threshold's data.
 *
 * Skipped, with the reason printed, when /usr/bin/chromium is absent (scripts/install-browser.sh);
 * in CI a missing Chromium fails instead.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exploreFigure, figureBundle, resetPlotlySession, saveReport } from "../../src/display/index.js";
import { syntheticPsr } from "../display/fixtures.js";
import { CHROMIUM, openBrowser, type Browser } from "../../scripts/chromium.js";
import { IN_CI } from "../ci.js";

const available = existsSync(CHROMIUM);
if (!available && !IN_CI) console.warn(`[test/browser/explore] SKIPPED: no Chromium at ${CHROMIUM} (scripts/install-browser.sh).`);

const OUT = resolve("test-output", "explore");

/** What the page drew for the explore figure. */
interface Drawn {
  title: string;
  kept: number;
  dropped: number;
  cut: number | null;
  active: number;
}

/** Reads the drawn state of the page's explore figure (browser code as a string: no DOM types here). */
async function drawn(page: Page): Promise<Drawn> {
  return (await page.evaluate(`(() => {
    const el = Array.from(document.querySelectorAll(".rbp-figure")).find((f) => (f.getAttribute("data-rbp-figure") || "").startsWith("PSR at"));
    // Plotly names each trace's group after its uid (exploreFigure gives them: kept, dropped, ...); an empty trace has none.
    const points = (uid) => { const g = el.querySelector(".scatterlayer .trace" + uid); return g ? g.querySelectorAll(".point").length : 0; };
    const shape = (el.layout.shapes || [])[0];
    return {
      title: el.querySelector(".gtitle").textContent,
      kept: points("kept"),
      dropped: points("dropped"),
      cut: shape ? shape.x0 : null,
      active: el.layout.sliders[0].active,
    };
  })()`)) as Drawn;
}

/** Clicks the slider's rail at step `step` of 4 (0 the first, 3 the last), as a reader would, and waits until the figure redrew for that threshold. */
async function slide(page: Page, step: number, threshold: number): Promise<void> {
  const rail = await page.$(".rbp-figure .slider-rail-touch-rect");
  await rail!.scrollIntoViewIfNeeded();
  const box = (await rail!.boundingBox())!;
  await page.mouse.click(box.x + 4 + (step / 3) * (box.width - 8), box.y + box.height / 2);
  await page.waitForFunction(
    `(() => { const el = Array.from(document.querySelectorAll(".rbp-figure")).find((f) => (f.getAttribute("data-rbp-figure") || "").startsWith("PSR at")); return el.layout.sliders[0].active === ${step} && el.querySelector(".gtitle").textContent.startsWith("PSR at t=${threshold}:"); })()`,
    undefined,
    { timeout: 10_000 },
  );
}

describe.runIf(available || IN_CI)("the explore figure in Chromium", () => {
  let browser: Browser;
  const { result, context } = syntheticPsr(300);
  const n = result.n!;

  beforeAll(async () => {
    mkdirSync(OUT, { recursive: true });
    browser = await openBrowser("rbp-explore-");
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
  });

  async function open(path: string): Promise<{ page: Page; errors: string[] }> {
    const page = await browser.context.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    page.on("console", (m) => {
      if (m.type() === "error") errors.push(m.text());
    });
    await page.route("**/*", (route) => (route.request().url().startsWith("file:") ? route.continue() : route.abort()));
    await page.goto(pathToFileURL(path).href, { waitUntil: "load" });
    await page.waitForFunction(`Array.from(document.querySelectorAll(".rbp-figure")).every((f) => f.getAttribute("data-rbp-drawn") === "1")`, undefined, {
      timeout: 60_000,
    });
    return { page, errors };
  }

  async function moveAndCheck(page: Page): Promise<void> {
    const start = await drawn(page);
    // Opens at the largest adjusted fit; the synthetic PSR's is threshold 0.8 (the last step).
    expect(start.active).toBe(3);
    expect(start.kept).toBe(n[3]);
    expect(start.kept + start.dropped).toBe(300);
    await slide(page, 0, 0);
    const first = await drawn(page);
    expect(first).toMatchObject({ kept: 300, dropped: 0, cut: null, active: 0 });
    expect(first.title).toMatch(/^PSR at t=0: n = 300 kept of 300/);
    await slide(page, 2, 0.5);
    const third = await drawn(page);
    expect(third).toMatchObject({ kept: n[2], dropped: 300 - n[2], active: 2 });
    expect(third.title).toMatch(/^PSR at t=0\.5: n = 150 kept/);
    expect(third.cut).toBeCloseTo(result.r_star![2]!, 6);
    await slide(page, 3, 0.8);
    expect(await drawn(page)).toEqual(start);
  }

  it("moves in a notebook output: the slider changes the drawn points, the title and the cut", async () => {
    resetPlotlySession();
    const bundle = figureBundle(exploreFigure(result, context));
    const path = join(OUT, "explore-output.html");
    writeFileSync(path, `<!DOCTYPE html><html><head><meta charset="utf-8"><title>explore</title></head><body>${bundle["text/html"]}</body></html>`);
    const { page, errors } = await open(path);
    await moveAndCheck(page);
    await page.screenshot({ path: join(OUT, "explore-output.png"), fullPage: true });
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it("moves in a saved report, with no kernel", async () => {
    const path = await saveReport(
      { title: "explore in a report", result, context, options: { threshold: [0, 0.2, 0.5, 0.8] } },
      join(OUT, "explore-report.html"),
    );
    const { page, errors } = await open(path);
    await moveAndCheck(page);
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);
});
