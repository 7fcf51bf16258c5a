const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/**
 * A page's `<head>` opening: the charset, and an empty icon, so a browser does not ask for
 * `/favicon.ico` (a 404, and an error in its console, on every page).
 */
export const HEAD_START = '<meta charset="utf-8"><link rel="icon" href="data:,">';

/** Escapes text for HTML content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/** Characters JSON leaves as they are that HTML or an older JavaScript parser would read otherwise. */
const JSON_ESCAPES: Record<string, string> = {
  '<': '\\u003c',
  '>': '\\u003e',
  '&': '\\u0026',
  '\u2028': '\\u2028',
  '\u2029': '\\u2029',
};

/**
 * `value` as JSON to put inside a `<script type="application/json">` element. escapeHtml's entities are
 * not decoded there (a script's text is raw), so `<`, `>` and `&` become JSON's own `\u` escapes: no
 * `</script>` or `<!--` can end or change the element, and `JSON.parse` of its text gives `value` back.
 */
export function jsonForScript(value: unknown): string {
  return (JSON.stringify(value) ?? 'null').replace(/[<>&\u2028\u2029]/g, (c) => JSON_ESCAPES[c]!);
}
