import { expect } from 'chai';

/** A Content-Security-Policy header as its directives, each with its sources: parsed, not matched as text. */
export function cspOf(headers: Headers): Record<string, string[]> {
  const header = headers.get('content-security-policy');
  expect(header, 'Content-Security-Policy').to.be.a('string');
  const directives: Record<string, string[]> = {};
  for (const part of header!.split(';')) {
    const [name, ...sources] = part.trim().split(/\s+/);
    if (!name) continue;
    expect(directives, `directive ${name} twice`).to.not.have.property(name.toLowerCase());
    directives[name.toLowerCase()] = sources;
  }
  return directives;
}
