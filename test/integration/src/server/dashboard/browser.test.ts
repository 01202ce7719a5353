/**
 * The dashboard in a real browser: Debian's headless Chromium driven by playwright-core, against the
 * real server, Redis and GitHub stand-in. Signs in, sees the runs and the queue (Bull Board), opens a
 * run whose first submit failed the gate, finds the failing step highlighted and the diff shown, opens
 * a hostile model's run (markup stays text, nothing runs), a signed link opens its run signed out, and
 * a maintainer signs in with GitHub (the stand-in's OAuth flow) and sees only their repository's runs.
 * With DASHBOARD_SHOTS set to a directory, PNG screenshots of each page are saved there.
 */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { trajectoryUrl } from "../../../../../src/shared/trajectory-links.js";
import { redisAvailable } from "../../../../support/redis.js";
import { CHROMIUM, requireChromium } from "../../../../support/services.js";
import {
  DASHBOARD_SECRET,
  type DashboardApp,
  RUNS,
  SECRET_RUN,
  startDashboardApp,
  WEBHOOK_SECRET,
} from "./dashboard-app.js";

const ready = (await redisAvailable()) && (await requireChromium());
const SHOTS = process.env.DASHBOARD_SHOTS;

describe.runIf(ready)("dashboard in headless Chromium", () => {
  let app: DashboardApp;
  let browser: Browser;
  let page: Page;
  const shot = async (name: string, fullPage = true) => {
    if (!SHOTS) return;
    await mkdir(SHOTS, { recursive: true });
    await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage });
  };

  beforeAll(async () => {
    app = await startDashboardApp({}, { githubSignIn: true });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it("signs in and shows the runs list and the queue", async () => {
    await page.goto(`${app.url}/dashboard/`);
    await shot("1-sign-in");
    await page.fill('input[name="secret"]', DASHBOARD_SECRET);
    await page.click('button[type="submit"]');
    await page.waitForSelector("#runs");
    // The operator sees every run: octo/calc's two and octo/secret's.
    expect(await page.locator("#runs tbody tr").count()).toBe(3);
    expect(await page.locator("#runs").textContent()).toContain("octo/calc#3");
    await shot("2-runs");
    await page.click("text=The queue (Bull Board)");
    // Bull Board's own UI (a script-built page) lists the queue with the labelled issue's job waiting.
    await page.waitForSelector("text=agent-fix", { timeout: 30_000 });
    await page.goto(`${app.url}/dashboard/queue/queue/agent-fix?status=waiting`);
    await page.waitForSelector("text=fix-", { timeout: 30_000 });
    await shot("3-queue");
  });

  it("a run's page: the failing step highlighted and reached by its link, diffs shown as diffs", async () => {
    await page.goto(`${app.url}/dashboard/`);
    await page.click(`a[href="/dashboard/runs/${RUNS.gate}"]`);
    await page.click("a.jump");
    expect(new URL(page.url()).hash).toBe("#step-3");
    const failing = page.locator("section.step.failing");
    expect(await failing.count()).toBe(1);
    expect(await failing.getAttribute("id")).toBe("step-3");
    expect(
      await failing.evaluate((el) => el.ownerDocument.defaultView?.getComputedStyle(el).borderTopColor),
    ).toBe("rgb(207, 34, 46)");
    expect(await failing.textContent()).toContain("AssertionError: None != 0");
    const added = page.locator("#submission + pre.diff .add");
    expect(await added.allInnerTexts()).toEqual(["+    if not values:", "+        return 0"]);
    expect(await page.locator("#step-4 .del").textContent()).toBe("-4:        return None");
    // What the reader sees after following the link: the failing step at the top of the window.
    await shot("4-run-failing-step", false);
    await shot("5-run-full");
  });

  it("a hostile model's markup shows as text and runs nothing", async () => {
    const dialogs: string[] = [];
    page.on("dialog", (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    await page.goto(`${app.url}/dashboard/runs/${RUNS.hostile}`);
    expect(await page.evaluate("window.__pwned")).toBeUndefined();
    expect(await page.locator("script, img, a[href^='javascript:' i]").count()).toBe(0);
    const text = await page.locator("main").textContent();
    expect(text).toContain(`<script>window.__pwned = 'thought'</script>`);
    expect(text).toContain(`<a href="javascript:window.__pwned='link'">this link</a>`);
    expect(text).toContain(`</pre><script>window.__pwned='diff'</script>`);
    expect(dialogs).toEqual([]);
    await shot("6-hostile-run");
  });

  it("the pull request's signed link opens the run page without a sign-in", async () => {
    const signedOut = await browser.newPage();
    const link = trajectoryUrl(app.url, WEBHOOK_SECRET, `${RUNS.gate}.traj`);
    await signedOut.goto(link);
    expect(await signedOut.locator("section.step.failing").getAttribute("id")).toBe("step-3");
    await signedOut.goto(`${app.url}/dashboard/runs/${RUNS.gate}`);
    expect(await signedOut.locator('input[name="secret"]').count()).toBe(1);
    await signedOut.close();
  });

  it("sign in with GitHub: alice sees octo/calc's runs only, and octo/secret's run page is not found", async () => {
    const context = await browser.newContext();
    // alice is signed in to GitHub (the stand-in) in this browser.
    const [name = "", value = ""] = app.github.oauth.signInBrowser("alice").split("=");
    await context.addCookies([{ name, value, url: app.github.url }]);
    const alice = await context.newPage();
    await alice.goto(`${app.url}/dashboard/`);
    await alice.click("text=Sign in with GitHub");
    await alice.waitForSelector("#runs");
    expect(new URL(alice.url()).pathname).toBe("/dashboard/");
    expect(await alice.locator("#runs tbody tr").count()).toBe(2);
    expect(await alice.locator(".viewer").textContent()).toBe("alice");
    expect(await alice.locator('a[href="/dashboard/queue"]').count()).toBe(0);
    await alice.click(`a[href="/dashboard/runs/${RUNS.gate}"]`);
    expect(await alice.locator("section.step.failing").count()).toBe(1);
    const guessed = await alice.goto(`${app.url}/dashboard/runs/${SECRET_RUN}`);
    expect(guessed?.status()).toBe(404);
    expect(await alice.locator("h1").textContent()).toBe("Run not found");
    await shot("7-github-viewer");
    await context.close();
  });
});
