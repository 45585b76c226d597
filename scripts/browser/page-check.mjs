// Checks the public page in headless Chromium (Debian's /usr/bin/chromium,
// driven by playwright-core) and takes its screenshots.
//
//   node page-check.mjs <base-url> <screenshot-dir>
//
// Fails (exit 1, one line per problem) unless: the page renders; the growth
// chart has one curve per strategy of the dashboard JSON; every period link
// (All included) leads to its period; each strategy with a return has its
// monthly grid and its underwater chart; the feed is announced; nothing is
// requested from another host; no console errors; no horizontal scrolling
// and no clipped axis label at 375 px; dark scheme differs from light; the
// content is there with JavaScript disabled.
import { chromium } from 'playwright-core';
import { join } from 'node:path';

const [base, screenshotDir] = process.argv.slice(2);
if (!base || !screenshotDir) {
  console.error('usage: node page-check.mjs <base-url> <screenshot-dir>');
  process.exit(2);
}
const origin = new URL(base).origin;
const problems = [];
const check = (ok, message) => { if (!ok) problems.push(message); };

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
  args: ['--no-sandbox'],
});

async function open(options = {}) {
  const context = await browser.newContext(options);
  const page = await context.newPage();
  const log = { errors: [], foreign: [] };
  page.on('console', (message) => { if (message.type() === 'error') log.errors.push(message.text()); });
  page.on('pageerror', (error) => log.errors.push(String(error)));
  page.on('request', (request) => {
    const url = request.url();
    if (!url.startsWith('data:') && new URL(url).origin !== origin) log.foreign.push(url);
  });
  return { context, page, log };
}

try {
  const dashboard = await (await fetch(`${base}/api/freedom-fund?period=63`)).json();
  const strategies = dashboard.strategies.length;

  // Desktop, light.
  const desktop = await open({ viewport: { width: 1280, height: 900 }, colorScheme: 'light' });
  const response = await desktop.page.goto(`${base}/`);
  check(response.status() === 200, `GET / answered ${response.status()}`);
  // Chromium asks for br, gzip and deflate: the page arrives compressed
  // (Brotli) and renders from it.
  const served = await response.allHeaders();
  check(served['content-encoding'] === 'br', `the page is sent compressed (${served['content-encoding']})`);
  check((served['vary'] || '').includes('accept-encoding'), `the page varies by Accept-Encoding (${served['vary']})`);
  check(/-br"$/.test(served['etag'] || ''), `the compressed page's tag names its coding (${served['etag']})`);
  check((await desktop.page.locator('h1').innerText()) === 'Freedom Fund', 'the page has its heading');
  const curves = await desktop.page.locator('figure.chart.growth path.curve').count();
  check(curves === strategies, `the chart has ${curves} curves for ${strategies} strategies`);
  const box = await desktop.page.locator('figure.chart.growth svg').boundingBox();
  check(box && box.width > 600 && box.height > 250, `the chart is drawn at a readable size (${JSON.stringify(box)})`);
  await desktop.page.screenshot({ path: join(screenshotDir, 'page.png') });
  const lightBackground = await desktop.page.evaluate(() => getComputedStyle(document.body).backgroundColor);

  const feed = await desktop.page.locator('head link[rel="alternate"][type="application/atom+xml"]').getAttribute('href');
  check(feed === '/feed.atom', `the page announces its feed (${feed})`);
  for (const [label, days] of [['1M', 21], ['6M', 126], ['1Y', 252], ['All', 'all'], ['3M', 63]]) {
    await desktop.page.locator('nav.periods').getByRole('link', { name: label, exact: true }).click();
    await desktop.page.waitForURL(`${base}/?period=${days}`);
    const current = await desktop.page.locator('nav.periods a[aria-current="page"]').innerText();
    check(current === label, `after clicking ${label} the current period is ${current}`);
    check((await desktop.page.locator('figure.chart.growth path.curve').count()) === strategies, `${label}: one curve per strategy`);
  }
  // Since inception: a monthly grid and an underwater chart per strategy
  // that has a return, and the record's start.
  const all = await (await fetch(`${base}/api/freedom-fund?period=all`)).json();
  await desktop.page.goto(`${base}/?period=all`);
  for (const strategy of all.strategies) {
    const card = desktop.page.locator(`#strategy-${strategy.mode}-${strategy.strategyId}`);
    const grids = await card.locator('table.monthly').count();
    check(grids === (strategy.yearly.length > 0 ? 1 : 0), `${strategy.strategyId}: ${grids} monthly grids for ${strategy.yearly.length} years`);
    const cells = await card.locator('table.monthly td.up, table.monthly td.down, table.monthly td.flat').count();
    const expected = strategy.monthly.filter((m) => m.return !== null).length + strategy.yearly.filter((y) => y.return !== null).length;
    check(cells === expected, `${strategy.strategyId}: ${cells} return cells for ${expected} returns`);
    const underwater = await card.locator('figure.chart.drawdown path.curve').count();
    const drawn = strategy.underwater.filter((p) => p.drawdown !== null).length >= 2 ? 1 : 0;
    check(underwater === drawn, `${strategy.strategyId}: ${underwater} underwater charts, expected ${drawn}`);
  }
  check((await desktop.page.locator('#inception').getAttribute('datetime')) === all.inception.asOf, 'the record\'s start is shown');
  // The feed, parsed by Chromium's XML parser (DOMParser, in the page).
  const feedAnswer = await fetch(`${base}/feed.atom`);
  const feedCheck = await desktop.page.evaluate((text) => {
    const xml = new DOMParser().parseFromString(text, 'application/xml');
    return {
      error: xml.querySelector('parsererror')?.textContent ?? null,
      root: xml.documentElement.namespaceURI + ' ' + xml.documentElement.localName,
      entries: xml.getElementsByTagNameNS('http://www.w3.org/2005/Atom', 'entry').length,
    };
  }, await feedAnswer.text());
  feedCheck.type = feedAnswer.headers.get('content-type');
  const decisionCount = Math.min(50, (await (await fetch(`${base}/api/freedom-fund?view=ledger&type=decision&limit=50`)).json()).entries.length);
  check(feedCheck.error === null, `Chromium cannot parse the feed: ${feedCheck.error}`);
  check(feedCheck.type.startsWith('application/atom+xml'), `feed content type ${feedCheck.type}`);
  check(feedCheck.root === 'http://www.w3.org/2005/Atom feed', `feed root ${feedCheck.root}`);
  check(feedCheck.entries === decisionCount, `the feed has ${feedCheck.entries} entries for ${decisionCount} decisions`);
  check(desktop.log.errors.length === 0, `console errors: ${desktop.log.errors.join(' | ')}`);
  check(desktop.log.foreign.length === 0, `requests to other hosts: ${desktop.log.foreign.join(' ')}`);

  // Phone width, dark.
  const phone = await open({ viewport: { width: 375, height: 812 }, colorScheme: 'dark', isMobile: true, deviceScaleFactor: 2 });
  for (const period of ['all', '21']) {
    await phone.page.goto(`${base}/?period=${period}`);
    const widths = await phone.page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
    check(widths.scroll <= widths.client, `period ${period}: horizontal scrolling at 375 px: ${widths.scroll} > ${widths.client}`);
    // Every y-axis label lies wholly inside its chart (a clipped 1.020 reads .020).
    const clipped = await phone.page.evaluate(() => [...document.querySelectorAll('figure.chart svg')].flatMap((svg) => {
      const frame = svg.getBoundingClientRect();
      return [...svg.querySelectorAll('.axis text')]
        .filter((text) => { const box = text.getBoundingClientRect(); return box.left < frame.left - 0.5 || box.right > frame.right + 0.5; })
        .map((text) => text.textContent);
    }));
    check(clipped.length === 0, `period ${period}: axis labels clipped at 375 px: ${clipped.join(', ')}`);
  }
  const darkBackground = await phone.page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  check(darkBackground !== lightBackground, `the dark scheme has its own colours (${darkBackground})`);
  await phone.page.screenshot({ path: join(screenshotDir, 'page-phone-dark.png'), fullPage: false });
  check(phone.log.errors.length === 0, `phone console errors: ${phone.log.errors.join(' | ')}`);
  check(phone.log.foreign.length === 0, `phone requests to other hosts: ${phone.log.foreign.join(' ')}`);

  // Scripts off: everything is already in the HTML.
  const noScript = await open({ javaScriptEnabled: false, viewport: { width: 1024, height: 800 } });
  await noScript.page.goto(`${base}/`);
  check((await noScript.page.locator('figure.chart.growth path.curve').count()) === strategies, 'the chart is there with scripts off');
  check((await noScript.page.locator('#journal article').count()) === dashboard.decisions.length, 'the journal is there with scripts off');
  check((await noScript.page.locator('#root-hash').innerText()) === dashboard.head.rootHash, 'the root hash is there with scripts off');
  await noScript.page.goto(`${base}/?period=all`);
  const grids = all.strategies.filter((s) => s.yearly.length > 0).length;
  check((await noScript.page.locator('table.monthly').count()) === grids, 'the monthly grids are there with scripts off');
} catch (error) {
  problems.push(`failed: ${error.stack || error}`);
} finally {
  await browser.close();
}

if (problems.length) {
  for (const problem of problems) console.error(problem);
  process.exit(1);
}
console.log('page checks passed');
