import { escapeHtml, HEAD_START } from '../../shared/html.js';

export { escapeHtml };

/** A minimal, self-contained page: the hosted pages load nothing from elsewhere. */
export function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head>${HEAD_START}<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;color:#1a1a1a}
.card{border:1px solid #ddd;border-radius:8px;padding:1.5rem}button{font-size:1rem;padding:.6rem 1.2rem;margin:.3rem .3rem 0 0;cursor:pointer}
.muted{color:#666;font-size:.9rem}</style></head>
<body><div class="card">${body}</div></body></html>`;
}
