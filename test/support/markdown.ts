/**
 * Markdown as the documentation tests read it (issue 42): the headings and the anchors GitHub makes of
 * them, the links, and the rows of tables, all outside fenced code blocks.
 */

/** The lines of `text` outside fenced code blocks; those inside become empty (line numbers stay). */
export function proseLines(text: string): string[] {
  let fence: string | null = null;
  return text.split('\n').map((line) => {
    const marker = /^\s*(```|~~~)/.exec(line)?.[1];
    if (marker && (fence === null || fence === marker)) {
      fence = fence === null ? marker : null;
      return '';
    }
    return fence === null ? line : '';
  });
}

/** The text of each heading (`## Text`), in order. */
export function headings(text: string): string[] {
  return proseLines(text).flatMap((line) => {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    return m ? [m[1]!] : [];
  });
}

/**
 * The anchor GitHub gives a heading (github-slugger): the rendered text, lower case, without
 * punctuation but `-` and `_`, spaces as `-`.
 */
export function githubSlug(heading: string): string {
  const rendered = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`/g, '')
    .replace(/\*\*?([^*]+)\*\*?/g, '$1');
  return rendered
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor of a page: its headings' slugs, a repeated one with `-1`, `-2`, ... as GitHub does. */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const all = new Set<string>();
  for (const heading of headings(text)) {
    const slug = githubSlug(heading);
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    all.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return all;
}

export interface Link {
  target: string;
  line: number;
}

/**
 * The targets of inline links and images (`[text](target)`), outside code blocks and code spans; a
 * link's text may run over lines, as wrapped prose has it.
 */
export function links(text: string): Link[] {
  const prose = proseLines(text)
    .join('\n')
    .replace(/`[^`]*`/g, (span) => span.replace(/[^\n]/g, '_'));
  return [...prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => ({
    target: m[1]!,
    line: prose.slice(0, m.index).split('\n').length,
  }));
}

/** The cells of each table row outside code blocks (separator rows left out), trimmed. */
export function tableRows(text: string): string[][] {
  return proseLines(text)
    .filter((line) => line.startsWith('|') && !/^\|[\s|:-]+\|\s*$/.test(line))
    .map((line) =>
      line
        .replace(/^\|/, '')
        .replace(/\|\s*$/, '')
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim()),
    );
}
