import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { anchors, githubSlug, headings, links } from '../../support/markdown.js';

/**
 * Issue 42: the README and the guides under docs/ link to each other by relative paths and #anchors;
 * every one of them must land on a file that exists and, for an anchor, on a heading it has.
 */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const PAGES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];
/** Not guides: the code's map and the records of decisions, read whole. */
const NOT_GUIDES = ['docs/architecture.md', 'docs/merchant-decisions.md', 'docs/sandbox-decisions.md'];

const read = (page: string) => readFileSync(join(ROOT, page), 'utf8');

/**
 * What is wrong with each relative link of `page` (its `text`): a file that does not exist, or a
 * heading its target lacks.
 */
function brokenLinks(page: string, text = read(page)): string[] {
  const broken: string[] = [];
  for (const { target, line } of links(text)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: ...: not a file here
    const [path = '', anchor] = target.split('#', 2) as [string, string | undefined];
    const file = join(dirname(join(ROOT, page)), decodeURIComponent(path));
    const where = `${page}:${line} ${target}`;
    if (relative(ROOT, file).startsWith('..')) broken.push(`${where}: outside the repository`);
    else if (!existsSync(file)) broken.push(`${where}: no such file`);
    else if (anchor !== undefined) {
      const into = path === '' ? text : file.endsWith('.md') ? readFileSync(file, 'utf8') : null;
      if (into === null) broken.push(`${where}: an anchor into a file that is not markdown`);
      else if (!anchors(into).has(decodeURIComponent(anchor)))
        broken.push(`${where}: no such heading in ${path === '' ? page : relative(ROOT, file)}`);
    }
  }
  return broken;
}

describe('docs: links between the README and the guides (issue 42)', () => {
  it("makes anchors as GitHub does: punctuation out, code and underscores' words kept", () => {
    expect(githubSlug("The order's client secret")).to.equal('the-orders-client-secret');
    expect(githubSlug('Limits: checkout under abuse')).to.equal('limits-checkout-under-abuse');
    expect(githubSlug('The client address, and `TRUST_PROXY`')).to.equal(
      'the-client-address-and-trust_proxy',
    );
    expect(githubSlug('When webhooks do not come: background work')).to.equal(
      'when-webhooks-do-not-come-background-work',
    );
    expect([...anchors('# A\n\n## Notes\n\n```\n## not a heading\n```\n\n## Notes\n')]).to.deep.equal([
      'a',
      'notes',
      'notes-1',
    ]);
  });

  it('finds the links that lead nowhere, and only those (the check itself)', () => {
    const text = [
      '[a](docs/api.md#no-such-heading), [b](docs/no-such-guide.md), [c](#gone), [d](../../elsewhere.md)',
      '[e](docs/api.md#the-routes), [f](#here), ![g](docs/images/demo-shop.png), [h](https://example.com/x)',
      '`[not a link](nowhere.md)`, [a link wrapped',
      'over two lines](#also-gone)',
      '```',
      '[not a link either](nowhere.md)',
      '```',
      '## Here',
    ].join('\n');
    expect(brokenLinks('README.md', text)).to.deep.equal([
      'README.md:1 docs/api.md#no-such-heading: no such heading in docs/api.md',
      'README.md:1 docs/no-such-guide.md: no such file',
      'README.md:1 #gone: no such heading in README.md',
      'README.md:1 ../../elsewhere.md: outside the repository',
      'README.md:3 #also-gone: no such heading in README.md',
    ]);
  });

  for (const page of PAGES) {
    it(`${page}: every relative link reaches a file, and every #anchor a heading`, () => {
      expect(brokenLinks(page)).to.deep.equal([]);
    });
  }

  it('each guide opens with its contents: a link to each of its sections, before the first', () => {
    for (const page of PAGES.filter((p) => p.startsWith('docs/') && !NOT_GUIDES.includes(p))) {
      const text = read(page);
      const firstSection = text.search(/^## /m);
      expect(firstSection, `${page}: its sections`).to.be.greaterThan(0);
      const contents = new Set(links(text.slice(0, firstSection)).map((l) => l.target));
      // Sections and their sections (## and ###); deeper headings may stay out of the contents.
      const outline = text.slice(firstSection).replace(/^#{4,} .*$/gm, '');
      const sections = headings(outline).map((h) => `#${githubSlug(h)}`);
      expect(
        sections.filter((s) => !contents.has(s)),
        `${page}: sections its contents leave out`,
      ).to.deep.equal([]);
    }
  });
});
