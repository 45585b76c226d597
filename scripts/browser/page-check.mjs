// Checks the public page in headless Chromium (Debian's /usr/bin/chromium,
// driven by playwright-core), audits it with axe-core, and takes the
// docs/page.md's screenshots.
//
//   node page-check.mjs <sample-url> <empty-url> <year-url> <careless-url> <screenshot-dir>
//
// The four servers hold the sample ledger, an empty ledger, a year of
// history for three strategies, and a careless writer's records (names,
// ids and words longer than any screen, near-trillion amounts). Fails (exit 1, one line per problem)
// unless: the page renders; the growth chart has one curve per strategy of
// the dashboard JSON; every period link (All included) leads to its
// period; each strategy with a return has its monthly grid and its
// underwater chart; the feed is announced; nothing is requested from
// another host; no console errors; no clipped axis label at 375 px; dark
// scheme differs from light; the content is there with JavaScript
// disabled; a formula link opens the folded formulas. And, at 320, 375
// and 1280 px in the light and dark schemes, with scripts off (the
// narrow-screen rules, docs/page.md, "On a phone"): nothing overflows sideways
// outside a scroll box, whose first column stays in view when scrolled;
// every number, date, table heading and badge renders on one line and no
// word breaks inside; the long parts (journal, ledger entries, formulas,
// verify) start folded at phone widths and open by a tap on their
// summary; the page opens on the chart; touch targets are at least
// 44 x 44 px. axe-core finds no serious or critical violation at 375 and
// 1280 px in either scheme, on each ledger. With FF_DEBUG_SHOTS=<dir>, each
// narrow-screen check also saves a full-page screenshot (light scheme,
// every fold open) there, to look at what the checks measured.
import { chromium } from 'playwright-core';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';

const axePath = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
const [base, emptyBase, yearBase, carelessBase, screenshotDir] = process.argv.slice(2);
if (!base || !emptyBase || !yearBase || !carelessBase || !screenshotDir) {
  console.error('usage: node page-check.mjs <sample-url> <empty-url> <year-url> <careless-url> <screenshot-dir>');
  process.exit(2);
}
const origin = new URL(base).origin;
const problems = [];
const check = (ok, message) => { if (!ok) problems.push(message); };

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
  args: ['--no-sandbox'],
});

async function open(options = {}, home = origin) {
  const context = await browser.newContext(options);
  const page = await context.newPage();
  const log = { errors: [], foreign: [] };
  page.on('console', (message) => { if (message.type() === 'error') log.errors.push(message.text()); });
  page.on('pageerror', (error) => log.errors.push(String(error)));
  page.on('request', (request) => {
    const url = request.url();
    if (!url.startsWith('data:') && new URL(url).origin !== home) log.foreign.push(url);
  });
  return { context, page, log };
}

// The parts that start folded at phone widths, each a <details> whose
// <summary> holds the section's heading.
const FOLDED = ['#journal', '#ledger', '#formulas', '#verify'];
// Elements that hold one number, date, table heading, label or badge:
// each renders on a single line. (Prose cells are marked td.text; a
// strategy's name heading its row, th.name, may wrap between words.)
const ATOMIC = 'th:not(.name), td:not(.text), time, .num, .badge, .periods a';
// Touch targets: the period switch, the export and proof links, the
// folds' summaries.
const TARGETS = '.periods a, a.export, a.proof, details.fold > summary';

/// What breaks the narrow-screen rules on the page as it is now shown
/// (run in the page; needs no page script).
function layoutFaults({ atomic, targets, words }) {
  const faults = [];
  const width = document.documentElement.clientWidth;
  if (document.documentElement.scrollWidth > width) {
    faults.push(`the page scrolls sideways: ${document.documentElement.scrollWidth} > ${width}`);
  }
  const name = (el) => el.tagName.toLowerCase() + (el.id ? `#${el.id}` : '') + (el.className && typeof el.className === 'string' ? `.${el.className.split(' ').join('.')}` : '');
  const visible = (el) => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
  // Sideways: whatever pokes out of the viewport sits in a scroll box
  // that itself fits.
  for (const el of document.body.querySelectorAll('*')) {
    if (!visible(el)) continue;
    const r = el.getBoundingClientRect();
    if (r.left >= -0.5 && r.right <= width + 0.5) continue;
    const box = el.closest('.scroll');
    if (!box || box === el) { faults.push(`${name(el)} overflows the page (${Math.round(r.left)}..${Math.round(r.right)} of ${width})`); continue; }
  }
  for (const box of document.querySelectorAll('.scroll')) {
    const r = box.getBoundingClientRect();
    if (visible(box) && (r.left < -0.5 || r.right > width + 0.5)) faults.push(`a scroll box overflows the page (${Math.round(r.left)}..${Math.round(r.right)})`);
  }
  const textNodes = (root) => {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    const nodes = [];
    while (walker.nextNode()) if (walker.currentNode.data.trim()) nodes.push(walker.currentNode);
    return nodes;
  };
  const rects = (node, start = 0, end = node.data.length) => {
    const range = document.createRange();
    range.setStart(node, start);
    range.setEnd(node, end);
    return [...range.getClientRects()].filter((r) => r.width > 0);
  };
  // One line for each atomic element: each text node in one piece, all
  // pieces on the same line.
  for (const el of document.querySelectorAll(atomic)) {
    if (!visible(el) || el.closest('svg')) continue;
    const pieces = textNodes(el).flatMap((node) => { const r = rects(node); return r.length > 1 ? [null] : r; });
    if (pieces.includes(null) || pieces.some((r) => r.top >= pieces[0].bottom || r.bottom <= pieces[0].top)) {
      faults.push(`${name(el)} "${el.textContent.trim().slice(0, 40)}" breaks across lines`);
    }
  }
  // No word breaks inside (a hyphenated compound may break at its hyphen;
  // hashes, keys and commands are long identifiers that wrap anywhere).
  for (const node of words ? textNodes(document.body) : []) {
    const parent = node.parentElement;
    if (!parent || parent.closest('pre, code.hash, svg, style, title') || !visible(parent)) continue;
    for (const word of node.data.matchAll(/[^\s\-]+/g)) {
      if (rects(node, word.index, word.index + word[0].length).length > 1) {
        faults.push(`the word "${word[0]}" in ${name(parent)} breaks across lines`);
      }
    }
  }
  for (const el of document.querySelectorAll(targets)) {
    if (!visible(el)) continue;
    const r = el.getBoundingClientRect();
    if (r.width < 44 || r.height < 44) faults.push(`touch target ${name(el)} "${el.textContent.trim().slice(0, 30)}" is ${Math.round(r.width)} x ${Math.round(r.height)} px`);
  }
  return faults.slice(0, 12);
}

/// Whether each scroll box keeps its first column in view when scrolled
/// to its far end (run in the page).
function stickyFaults() {
  const faults = [];
  for (const box of document.querySelectorAll('.scroll')) {
    if (box.scrollWidth <= box.clientWidth) continue;
    const first = box.querySelector('tr > :first-child');
    if (!first) continue;
    box.scrollLeft = box.scrollWidth;
    const inner = box.getBoundingClientRect();
    const cell = first.getBoundingClientRect();
    if (cell.left < inner.left - 0.5) faults.push(`${box.querySelector('table')?.className} scrolls its first column out of view (cell at ${Math.round(cell.left)}, ${Math.round(cell.width)} wide; box at ${Math.round(inner.left)}, ${box.clientWidth} of ${box.scrollWidth})`);
    box.scrollLeft = 0;
  }
  return faults;
}

/// The narrow-screen rules on `url` at each width and scheme, with
/// scripts off; `label` names the ledger in the messages. Without `words`,
/// words may break (a careless writer's are longer than the screen).
async function narrowScreenChecks(url, label, { words = true } = {}) {
  for (const width of [320, 375, 1280]) {
    for (const colorScheme of ['light', 'dark']) {
      const phone = width < 600;
      const { context, page, log } = await open({
        viewport: { width, height: 812 }, colorScheme, isMobile: phone, hasTouch: true,
        deviceScaleFactor: phone ? 2 : 1, javaScriptEnabled: false,
      }, new URL(url).origin);
      const where = `${label} ${url.replace(/^.*\//, '/')} at ${width} px, ${colorScheme}`;
      await page.goto(url);
      const folds = await page.locator('details.fold').evaluateAll((all) => all.map((d) => ({ id: d.closest('section')?.id, open: d.open })));
      const foldedIds = folds.map((f) => `#${f.id}`);
      check(FOLDED.every((id) => foldedIds.includes(id)), `${where}: folded parts ${foldedIds.join(' ')}, expected ${FOLDED.join(' ')}`);
      if (phone) {
        check(folds.every((f) => !f.open), `${where}: parts start open: ${folds.filter((f) => f.open).map((f) => f.id).join(' ')}`);
        const chartTop = await page.locator('#chart-title').evaluate((el) => el.getBoundingClientRect().top);
        check(chartTop < 812, `${where}: the chart starts below the first screen (${chartTop} px)`);
      }
      // Open every fold with a tap (no script runs: they are off).
      for (const id of FOLDED) {
        const details = page.locator(`${id} details.fold`);
        if (!(await details.count())) continue;
        if (!(await details.evaluate((d) => d.open))) {
          await details.locator('> summary').tap();
          check(await details.evaluate((d) => d.open), `${where}: a tap does not open ${id}`);
        }
        const shown = await details.evaluate((d) => [...d.children].filter((c) => c.tagName !== 'SUMMARY').every((c) => c.getBoundingClientRect().height > 0));
        check(shown, `${where}: ${id} opened shows nothing`);
      }
      if (process.env.FF_DEBUG_SHOTS && colorScheme === 'light') await page.screenshot({ path: join(process.env.FF_DEBUG_SHOTS, `${label}-${width}-${url.replace(/^.*=/, '')}.png`), fullPage: true });
      for (const fault of await page.evaluate(layoutFaults, { atomic: ATOMIC, targets: TARGETS, words })) check(false, `${where}: ${fault}`);
      for (const fault of await page.evaluate(stickyFaults)) check(false, `${where}: ${fault}`);
      check(log.errors.length === 0, `${where}: console errors: ${log.errors.join(' | ')}`);
      check(log.foreign.length === 0, `${where}: requests to other hosts: ${log.foreign.join(' ')}`);
      await context.close();
    }
  }
}

/// axe-core's audit of `url` with every fold open, at phone and desktop
/// widths in both schemes: no serious or critical violation. (The audit
/// is a script, so this context lets it past the page's policy.)
async function accessibilityAudit(url, label) {
  for (const width of [375, 1280]) {
    for (const colorScheme of ['light', 'dark']) {
      const { context, page } = await open({ viewport: { width, height: 812 }, colorScheme, bypassCSP: true });
      await page.goto(url);
      for (const summary of await page.locator('details.fold > summary').all()) await summary.click();
      await page.addScriptTag({ path: axePath });
      const violations = await page.evaluate(async () => {
        const result = await window.axe.run(document, { resultTypes: ['violations'] });
        return result.violations
          .filter((v) => v.impact === 'serious' || v.impact === 'critical')
          .map((v) => `${v.impact} ${v.id}: ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`);
      });
      for (const violation of violations) check(false, `axe, ${label} ${url.replace(/^.*\//, '/')} at ${width} px, ${colorScheme}: ${violation}`);
      await context.close();
    }
  }
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
  await desktop.page.screenshot({ path: join(screenshotDir, 'page.png'), fullPage: true, clip: { x: 0, y: 0, width: 1280, height: 1400 } });
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
    // Each Sharpe with what it can support, or why it is withheld.
    const said = await card.locator('p.sharpe').count() ? await card.locator('p.sharpe').innerText() : '';
    if (strategy.metrics.sharpeStats) {
      check(said.includes('Probability the Sharpe is above 0') && said.includes('95\u00a0%:') && said.includes('Enough history for 95\u00a0% confidence'), `${strategy.strategyId}: the Sharpe's interval and probabilities (${said})`);
    } else if (strategy.metrics.withheld) {
      check(said.includes(`withheld: ${strategy.metrics.withheld}`), `${strategy.strategyId}: why the Sharpe is withheld (${said})`);
    }
    const compared = await card.locator('table.benchmark').count();
    const expectedTables = strategy.metrics.benchmark && !strategy.metrics.benchmark.withheld ? 1 : 0;
    check(compared === expectedTables, `${strategy.strategyId}: ${compared} benchmark tables for ${expectedTables}`);
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
  // What the two screenshots show, as HTML: its hash goes beside them, so
  // the browser test can tell when the page changed since they were taken.
  const shown = createHash('sha256');
  for (const path of ['/', '/?period=21']) shown.update(Buffer.from(await (await fetch(`${base}${path}`)).arrayBuffer()));
  writeFileSync(join(screenshotDir, 'page-screenshots.sha256'), `${shown.digest('hex')}  the HTML of / and /?period=21 over the sample ledger, as the screenshots show it\n`);
  const darkBackground = await phone.page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  check(darkBackground !== lightBackground, `the dark scheme has its own colours (${darkBackground})`);
  // The phone's screenshot shows the first strategy's metrics and what its
  // Sharpe can support, as a reader scrolls to them.
  await phone.page.locator('article.strategy p.sharpe').first().evaluate((sentence) => sentence.scrollIntoView({ block: 'end' }));
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

  // A metric's formula link opens the folded formulas at that formula.
  await desktop.page.goto(`${base}/`);
  await desktop.page.locator('table.overview thead a[href="#formula-twr"]').click();
  const formulas = desktop.page.locator('#formulas details.fold');
  check((await formulas.count()) === 1 && (await formulas.evaluate((d) => d.open)), 'a formula link opens the folded formulas');
  check(await desktop.page.locator('#formula-twr').isVisible(), 'the linked formula is shown');

  for (const [url, label] of [
    [`${base}/?period=all`, 'sample'], [`${base}/?period=21`, 'sample'],
    [`${yearBase}/?period=all`, 'year'], [`${yearBase}/?period=252`, 'year'],
    [`${emptyBase}/`, 'empty'],
  ]) await narrowScreenChecks(url, label);
  await narrowScreenChecks(`${carelessBase}/?period=all`, 'careless', { words: false });
  for (const [url, label] of [[`${base}/?period=all`, 'sample'], [`${yearBase}/?period=252`, 'year'], [`${emptyBase}/`, 'empty'], [`${carelessBase}/?period=all`, 'careless']]) {
    await accessibilityAudit(url, label);
  }
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
