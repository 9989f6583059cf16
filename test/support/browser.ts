import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { expect } from 'chai';
import { DASHBOARD_DIST } from '../../src/http/dashboard.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestApp, type TestApp } from './app.js';
import { atEnd } from './at-end.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const ARTIFACTS = join(ROOT, 'test-artifacts');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

// Debian's Chromium as root on a closed network: no sandbox, nothing reaching outside hosts.
const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

/** The dashboard as `npm ci` builds it; built here once when a checkout has not been (a fresh clone running tests only). */
export function ensureBuilt() {
  if (existsSync(join(DASHBOARD_DIST, 'index.html'))) return;
  execFileSync('npm', ['run', 'build:web'], { cwd: ROOT, stdio: 'inherit' });
}

/** Debian's Chromium, headless, with a fresh profile. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
}

/**
 * One Chromium for every dashboard file of a mocha process (a launch took 2-3 s of each file's start):
 * each harness has browser contexts of its own, which share nothing (cookies, storage), and closes
 * them. A browser that went away is launched again for the next file.
 */
let shared: Promise<Browser> | undefined;
function sharedBrowser(): Promise<Browser> {
  if (!shared) {
    if (atEnd.indexOf(closeSharedBrowser) < 0) atEnd.push(closeSharedBrowser);
    shared = launchChromium().then(
      (browser) => {
        browser.on('disconnected', () => (shared = undefined));
        return browser;
      },
      (err) => {
        shared = undefined;
        throw err;
      },
    );
  }
  return shared;
}

async function closeSharedBrowser(): Promise<void> {
  const browser = await shared?.catch(() => undefined);
  shared = undefined;
  await browser?.close();
}

export interface DashboardHarness {
  app: TestApp;
  browser: Browser;
  /** a page signed in as the default account's owner */
  page: Page;
  /** a fresh page, not signed in */
  newPage(): Promise<Page>;
  close(): Promise<void>;
}

/** One service and browser contexts of its own for a test file; `page` is signed in. */
export async function startDashboard(env: Record<string, string> = {}): Promise<DashboardHarness> {
  ensureBuilt();
  const [app, browser] = await Promise.all([startTestApp(env), sharedBrowser()]);
  const contexts: BrowserContext[] = [];
  const newPage = async () => {
    const context = await browser.newContext({ baseURL: app.baseUrl, viewport: { width: 1280, height: 900 } });
    contexts.push(context);
    const page = await context.newPage();
    // Any error a page script throws fails the test that caused it.
    page.on('pageerror', (err) => {
      throw err;
    });
    return page;
  };
  const page = await newPage();
  await signIn(page);
  return {
    app,
    browser,
    page,
    newPage,
    async close() {
      await Promise.all(contexts.map((c) => c.close().catch(() => {})));
      await app.close();
    },
  };
}

export async function signIn(page: Page, password = ADMIN_PASSWORD) {
  await page.goto('/login');
  await page.getByLabel('Email').fill(ADMIN_EMAIL);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  if (password === ADMIN_PASSWORD) await page.waitForURL((u) => !u.pathname.startsWith('/login'));
}

/** Saves what the page shows under test-artifacts/ (ignored by git) for a person to look at. */
export async function screenshot(page: Page, name: string) {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * axe-core run inside the page: no serious or critical violation. It is evaluated through the
 * DevTools protocol, which the page's Content-Security-Policy (no inline scripts) does not govern.
 */
export async function expectAccessible(page: Page) {
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(ctx: Document, opts: unknown): Promise<{ violations: { id: string; impact: string; help: string; nodes: { target: string[] }[] }[] }> } }).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target.join(' ')) }));
  });
  const grave = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(grave, JSON.stringify(grave, null, 2)).to.deep.equal([]);
}
