import { expect } from 'chai';
import fc from 'fast-check';
import { escapeHtml, jsonForScript } from '../../../src/shared/html.js';

/** JSON inside `<script type="application/json">` (the demo shop's settings): data, never markup. */
describe('shared: jsonForScript', () => {
  const HOSTILE = '</script><script>alert(1)</script>';

  it('leaves no "<", ">" or "&": a value cannot end the script element, open a comment or another element', () => {
    const text = jsonForScript({ token: HOSTILE, note: '<!-- & -->', nested: [{ id: '</SCRIPT >' }] });
    expect(text).to.not.match(/[<>&]/);
    expect(text).to.contain('\\u003c/script\\u003e\\u003cscript\\u003ealert(1)\\u003c/script\\u003e');
    expect(text).to.contain('\\u003c!-- \\u0026 --\\u003e');
  });

  it('escapes the line and paragraph separators, which older JavaScript parsers read as line ends', () => {
    expect(jsonForScript('a\u2028b\u2029c')).to.equal('"a\\u2028b\\u2029c"');
  });

  it('gives every value back through JSON.parse, as the page reads it', () => {
    expect(JSON.parse(jsonForScript({ token: HOSTILE }))).to.deep.equal({ token: HOSTILE });
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = jsonForScript(value);
        expect(text).to.not.match(/[<>&\u2028\u2029]/);
        expect(JSON.parse(text)).to.deep.equal(JSON.parse(JSON.stringify(value)));
      }),
    );
  });

  it("is not escapeHtml: a script element's text is raw, so entities would reach JSON.parse as they are", () => {
    expect(() => JSON.parse(escapeHtml(JSON.stringify('<b>')))).to.throw(SyntaxError);
    expect(JSON.parse(jsonForScript('<b>'))).to.equal('<b>');
  });
});
