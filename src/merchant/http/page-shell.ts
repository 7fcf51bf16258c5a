import { escapeHtml, HEAD_START } from '../../shared/html.js';

/*
 * The kit's own HTML pages for a shopper (the landings, a payment link's pages, the home page): one
 * shell, one style. No script anywhere; the style is constant text, and everything user-given in a
 * body is escaped by its page.
 */

const STYLE = `body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#1f2933;line-height:1.5}
.card{border:1px solid #d9dee3;border-top:6px solid #7b8794;border-radius:8px;padding:1.25rem 1.5rem}
.card>:last-child{margin-bottom:0}
.tone-good{border-top-color:#2f9e44}.tone-wait{border-top-color:#f59f00}.tone-bad{border-top-color:#e03131}.tone-info{border-top-color:#1c7ed6}
h1{font-size:1.5rem;line-height:1.25;margin:0 0 .75rem;text-wrap:balance}
.next{margin:0 0 1rem}
dl{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.25rem 1rem;margin:0;padding-top:1rem;border-top:1px solid #eef0f2}
dt{color:#616e7c}dd{margin:0;font-weight:600;overflow-wrap:break-word}
.hint{color:#616e7c;font-size:.9rem;margin:1rem 0 0}
.continue{margin:1rem 0 0;font-weight:600}
.back{margin:1.5rem 0 0}`;

/** A whole page; `refresh` is a meta refresh's content (no script anywhere). */
export function page(title: string, refresh: string | null, body: string): string {
  const meta = refresh ? `\n<meta http-equiv="refresh" content="${escapeHtml(refresh)}">` : '';
  return `<!doctype html><html lang="en"><head>${HEAD_START}<title>${escapeHtml(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">${meta}
<style>${STYLE}</style></head>
<body>${body}</body></html>`;
}
