import { readdirSync, readFileSync } from 'node:fs';
import { expect } from 'chai';
import { links } from '../../support/markdown.js';

/**
 * Issue 42: the README is what a merchant engineer reads in their first two minutes. It stays short,
 * opens with the two commands, says where the demo shop is, and maps every guide under docs/.
 */
const README = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');

describe('docs: the README, a first two minutes (issue 42)', () => {
  it('is at most 300 lines: the rest lives in the guides', () => {
    expect(README.split('\n').length).to.be.at.most(300);
  });

  it('opens with the two commands: npm ci && npm start runs the kit, npm test passes the tests', () => {
    const first = /```sh\n([\s\S]*?)```/.exec(README)?.[1] ?? '';
    expect(README.indexOf('```sh'), 'the first block comes right under the title').to.be.below(40);
    expect(first).to.match(/^npm ci && npm start\b/m);
    expect(first).to.match(/^npm test\b/m);
  });

  it("names the demo shop's address", () => {
    expect(README).to.contain('http://127.0.0.1:3000/');
  });

  it('links every guide under docs/', () => {
    const linked = new Set(links(README).map((l) => l.target.split('#')[0]));
    const guides = readdirSync(new URL('../../../docs/', import.meta.url)).filter((n) => n.endsWith('.md'));
    expect(guides.filter((name) => !linked.has(`docs/${name}`))).to.deep.equal([]);
  });
});
