import { readdirSync, readFileSync } from 'node:fs';
import { expect } from 'chai';
import { envSchema } from '../../../src/config.js';
import { tableRows } from '../../support/markdown.js';

/**
 * Issue 42: docs/configuration.md against the configuration schema, both ways. The schema
 * (`envSchema`, src/config.ts) is every variable the kit reads; the page documents a setting with a
 * table row whose first cell is its name in code (`| \`PORT\` | \`3000\` | ... |`).
 */
const PAGE = readFileSync(new URL('../../../docs/configuration.md', import.meta.url), 'utf8');
const READ = Object.keys(envSchema.shape);

/** The settings a page documents: each row naming one, with its default cell. */
function documented(page: string): { name: string; byDefault: string }[] {
  return tableRows(page).flatMap((cells) => {
    const name = /^`([A-Z][A-Z0-9_]*)`$/.exec(cells[0] ?? '')?.[1];
    return name ? [{ name, byDefault: cells[1] ?? '' }] : [];
  });
}

/** What the page and the code disagree on: names one has and the other lacks. */
function disagreements(page: string, read: readonly string[]) {
  const names = documented(page).map((row) => row.name);
  return {
    undocumented: read.filter((name) => !names.includes(name)),
    notRead: names.filter((name) => !read.includes(name)),
    twice: names.filter((name, i) => names.indexOf(name) !== i),
  };
}

/**
 * The rows of `page` whose default, written as a value (`` `60/1m` ``), is not what the schema takes
 * when the setting is unset; at least `atLeast` such rows must be there to check.
 */
function wrongDefaults(page: string, where: string, atLeast = 0): string[] {
  const shape = envSchema.shape as Record<string, (typeof envSchema.shape)[keyof typeof envSchema.shape]>;
  const checked = documented(page).filter((row) => /^`[^`]*`$/.test(row.byDefault) && row.name in shape);
  expect(checked.length, `${where}: defaults written as values`).to.be.at.least(atLeast);
  return checked.flatMap(({ name, byDefault }) => {
    const written = shape[name]!.safeParse(byDefault.slice(1, -1));
    const actual = shape[name]!.safeParse(undefined);
    if (!written.success) return [`${where}: ${name}: the default ${byDefault} is refused`];
    return JSON.stringify(written.data) === JSON.stringify(actual.data)
      ? []
      : [`${where}: ${name}: ${byDefault}, where the default is ${JSON.stringify(actual.data)}`];
  });
}

describe('docs: the configuration guide against the configuration schema (issue 42)', () => {
  it('reads a documented setting from a table row whose first cell is its name', () => {
    const page = [
      '| setting | default | what it does | refused when |',
      '|---|---|---|---|',
      '| `PORT` | `3000` | the port | not a port |',
      '| sweeper | `*/20 * * * * *` |',
      '',
      '`NOT_IN_A_TABLE` is prose.',
    ].join('\n');
    expect(documented(page)).to.deep.equal([{ name: 'PORT', byDefault: '`3000`' }]);
  });

  it('fails on a setting either side lacks (the check itself)', () => {
    const page = '| `PORT` | `3000` |\n| `NO_SUCH_SETTING` | `1` |\n| `PORT` | `3000` |\n';
    expect(disagreements(page, ['PORT', 'HOST'])).to.deep.equal({
      undocumented: ['HOST'],
      notRead: ['NO_SUCH_SETTING'],
      twice: ['PORT'],
    });
  });

  it('documents every setting the kit reads, and only those, each once', () => {
    expect(READ.length, 'the schema lists the settings').to.be.greaterThan(40);
    expect(disagreements(PAGE, READ)).to.deep.equal({ undocumented: [], notRead: [], twice: [] });
  });

  it('gives the default the schema has, wherever it writes the default as a value', () => {
    expect(wrongDefaults(PAGE, 'docs/configuration.md', 30)).to.deep.equal([]);
  });

  it("gives the schema's defaults in the other guides' tables of settings too", () => {
    const guides = readdirSync(new URL('../../../docs/', import.meta.url)).filter(
      (name) => name.endsWith('.md') && name !== 'configuration.md',
    );
    const wrong = guides.flatMap((name) =>
      wrongDefaults(readFileSync(new URL(`../../../docs/${name}`, import.meta.url), 'utf8'), `docs/${name}`),
    );
    expect(wrong).to.deep.equal([]);
  });
});
