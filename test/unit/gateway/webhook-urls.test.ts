import { expect } from 'chai';
import fc from 'fast-check';
import { isLocalStyleHost, isNonPublicAddress } from '../../../src/gateway/domain/addresses.js';
import { MAX_URL_LENGTH, webhookUrlProblem } from '../../../src/gateway/domain/webhooks.js';

/**
 * gateway-api.md, Webhook management rule 1 ("HTTPS on a publicly resolvable host. Embedded
 * credentials, localhost-style hosts and private IP addresses -> HTTP 422"), the endpoint record
 * ("HTTPS, max 2048 chars") and Limits; sandbox.md sections 2 and 8 (`allow_private_webhook_urls`).
 */

/** An https URL on a public name, padded to exactly `length` characters. */
function urlOfLength(length: number): string {
  const head = 'https://example.com/';
  return head + 'a'.repeat(length - head.length);
}

const STRICT_REJECTED: [string, string][] = [
  ['plain http', 'http://example.com/hook'],
  ['a user name', 'https://user@example.com/hook'],
  ['a user and password', 'https://user:pass@example.com/hook'],
  ['a password only', 'https://:pass@example.com/hook'],
  ['localhost', 'https://localhost/hook'],
  ['LOCALHOST in capitals, with a port', 'https://LOCALHOST:8443/hook'],
  ['localhost with a trailing dot', 'https://localhost./hook'],
  ['a subdomain of localhost', 'https://sub.localhost/hook'],
  ['a .local name', 'https://printer.local/hook'],
  ['a .internal name', 'https://db.internal/hook'],
  ['a single-label host', 'https://intranet/hook'],
  ['127.0.0.1', 'https://127.0.0.1/hook'],
  ['127.1.2.3', 'https://127.1.2.3/hook'],
  ['10.x', 'https://10.1.2.3/hook'],
  ['172.16.x', 'https://172.16.0.1/hook'],
  ['172.31.x', 'https://172.31.255.254/hook'],
  ['192.168.x', 'https://192.168.1.10/hook'],
  ['169.254.x (link-local, cloud metadata)', 'https://169.254.169.254/latest'],
  ['100.64.x (carrier-grade NAT)', 'https://100.64.0.1/hook'],
  ['100.127.x (carrier-grade NAT)', 'https://100.127.255.1/hook'],
  ['0.0.0.0', 'https://0.0.0.0/hook'],
  ['[::1]', 'https://[::1]/hook'],
  ['[::]', 'https://[::]/hook'],
  ['[fc00::1]', 'https://[fc00::1]/hook'],
  ['[fd12::1]', 'https://[fd12::1]/hook'],
  ['[fe80::1]', 'https://[fe80::1]/hook'],
  ['[::ffff:127.0.0.1]', 'https://[::ffff:127.0.0.1]/hook'],
  ['[::ffff:10.0.0.1]', 'https://[::ffff:10.0.0.1]/hook'],
  ['a loopback address written in hex (URL-normalised to 127.0.0.1)', 'https://0x7f000001/hook'],
  ['2049 characters', urlOfLength(MAX_URL_LENGTH + 1)],
  ['an empty string', ''],
  ['plain words', 'not a url'],
  ['no scheme', 'example.com/hook'],
  ['a scheme and nothing else', 'https://'],
  ['a relative path', '/webhooks'],
  ['ftp', 'ftp://example.com/hook'],
];

const STRICT_ACCEPTED: [string, string][] = [
  ['a public name', 'https://example.com/hook'],
  ['a public name with port and query', 'https://hooks.shop.example.com:8443/in?x=1'],
  ['a public IPv4 address', 'https://93.184.216.34/x'],
  ['a public IPv6 address', 'https://[2606:4700::1111]/x'],
  ['172.32.0.1 (just outside 172.16.0.0/12)', 'https://172.32.0.1/x'],
  ['172.15.255.255 (just below 172.16.0.0/12)', 'https://172.15.255.255/x'],
  ['100.63.255.255 (just below 100.64.0.0/10)', 'https://100.63.255.255/x'],
  ['100.128.0.1 (just above 100.64.0.0/10)', 'https://100.128.0.1/x'],
  ['exactly 2048 characters', urlOfLength(MAX_URL_LENGTH)],
  // Only 192.0.0.0/24 and 192.0.2.0/24 of 192.0.0.0/16 are special-purpose; 192.0.43.0/24 is routable.
  ['192.0.43.10 (a routable address in 192.0.0.0/16)', 'https://192.0.43.10/x'],
];

describe('webhook URL rules (pure)', () => {
  it('the length helper builds URLs of the length it is asked for', () => {
    expect(urlOfLength(2048)).to.have.length(2048);
    expect(urlOfLength(2049)).to.have.length(2049);
  });

  describe('strict mode (allow_private_webhook_urls false) rejects', () => {
    for (const [label, url] of STRICT_REJECTED) {
      it(label, () => {
        const problem = webhookUrlProblem(url, false);
        expect(problem, url).to.be.a('string');
        expect(problem!.length, url).to.be.greaterThan(0);
      });
    }
  });

  describe('strict mode accepts', () => {
    for (const [label, url] of STRICT_ACCEPTED) {
      it(label, () => {
        expect(webhookUrlProblem(url, false), url).to.equal(null);
      });
    }
  });

  describe('allowPrivate mode (local tests)', () => {
    it('accepts http to a loopback address with a port', () => {
      expect(webhookUrlProblem('http://127.0.0.1:1234/x', true)).to.equal(null);
      expect(webhookUrlProblem('http://localhost:1234/x', true)).to.equal(null);
      expect(webhookUrlProblem('https://10.0.0.5/x', true)).to.equal(null);
    });

    it('the same loopback URL is rejected in strict mode', () => {
      expect(webhookUrlProblem('http://127.0.0.1:1234/x', false)).to.be.a('string');
    });

    it('still rejects credentials', () => {
      expect(webhookUrlProblem('http://user@127.0.0.1:1234/x', true)).to.be.a('string');
      expect(webhookUrlProblem('http://user:pass@127.0.0.1:1234/x', true)).to.be.a('string');
      expect(webhookUrlProblem('https://user:pass@example.com/x', true)).to.be.a('string');
    });

    it('still rejects other schemes, non-URLs and overlong URLs', () => {
      expect(webhookUrlProblem('ftp://127.0.0.1/x', true)).to.be.a('string');
      expect(webhookUrlProblem('ftp://example.com/x', true)).to.be.a('string');
      expect(webhookUrlProblem('file:///etc/passwd', true)).to.be.a('string');
      expect(webhookUrlProblem('not a url', true)).to.be.a('string');
      expect(webhookUrlProblem(`http://127.0.0.1:1234/${'a'.repeat(MAX_URL_LENGTH)}`, true)).to.be.a(
        'string',
      );
    });
  });

  describe('isNonPublicAddress', () => {
    const nonPublic = [
      '127.0.0.1',
      '10.0.0.5',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.0.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      '::',
      '[::1]',
      'fc00::1',
      'fd12::1',
      'fe80::1',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
      '::ffff:7f00:1',
      '0:0:0:0:0:ffff:c0a8:101',
    ];
    const publicOnes = ['93.184.216.34', '8.8.8.8', '172.32.0.1', '2606:4700::1111', '::ffff:93.184.216.34'];
    for (const address of nonPublic) {
      it(`${address} is non-public`, () => {
        expect(isNonPublicAddress(address)).to.equal(true);
      });
    }
    for (const address of publicOnes) {
      it(`${address} is public`, () => {
        expect(isNonPublicAddress(address)).to.equal(false);
      });
    }
  });

  describe('isLocalStyleHost', () => {
    for (const host of [
      'localhost',
      'LOCALHOST',
      'localhost.',
      'sub.localhost',
      'printer.local',
      'db.internal',
      'intranet',
    ]) {
      it(`${host} is local-style`, () => {
        expect(isLocalStyleHost(host)).to.equal(true);
      });
    }
    for (const host of ['example.com', 'hooks.shop.example.com', 'localhost.example.com']) {
      it(`${host} is not local-style`, () => {
        expect(isLocalStyleHost(host)).to.equal(false);
      });
    }
  });

  describe('property: private IPv4 ranges and their IPv4-mapped IPv6 forms are non-public', () => {
    const octet = fc.integer({ min: 0, max: 255 });
    /** An address of 10.0.0.0/8, 192.168.0.0/16 or 127.0.0.0/8, as four octets. */
    const privateV4 = fc.oneof(
      fc.tuple(fc.constant(10), octet, octet, octet),
      fc.tuple(fc.constant(192), fc.constant(168), octet, octet),
      fc.tuple(fc.constant(127), octet, octet, octet),
    );
    const hex = (hi: number, lo: number) => ((hi << 8) | lo).toString(16);
    /** Every way the same address is written: dotted, mapped dotted, mapped hex, fully expanded, upper case. */
    const forms = ([a, b, c, d]: [number, number, number, number]) => [
      `${a}.${b}.${c}.${d}`,
      `::ffff:${a}.${b}.${c}.${d}`,
      `::FFFF:${a}.${b}.${c}.${d}`,
      `::ffff:${hex(a, b)}:${hex(c, d)}`,
      `0:0:0:0:0:ffff:${hex(a, b)}:${hex(c, d)}`,
      `0000:0000:0000:0000:0000:FFFF:${hex(a, b).padStart(4, '0')}:${hex(c, d).padStart(4, '0')}`,
    ];

    it('isNonPublicAddress holds for every form', () => {
      fc.assert(
        fc.property(privateV4, (octets) => {
          for (const form of forms(octets)) {
            if (!isNonPublicAddress(form)) throw new Error(`${form} was treated as public`);
          }
        }),
        { numRuns: 500 },
      );
    });

    it('webhookUrlProblem rejects every form as a URL host in strict mode', () => {
      fc.assert(
        fc.property(privateV4, (octets) => {
          const [dotted, ...v6] = forms(octets);
          for (const host of [dotted!, ...v6.map((f) => `[${f}]`)]) {
            const url = `https://${host}/hook`;
            if (webhookUrlProblem(url, false) === null) throw new Error(`${url} was accepted`);
          }
        }),
        { numRuns: 300 },
      );
    });

    it('control: public IPv4 addresses outside every reserved range are public in every form', () => {
      // 11.0.0.0/8 up to 99.0.0.0/8 hold no reserved range.
      const publicV4 = fc.tuple(fc.integer({ min: 11, max: 99 }), octet, octet, octet);
      fc.assert(
        fc.property(publicV4, (octets) => {
          for (const form of forms(octets)) {
            if (isNonPublicAddress(form)) throw new Error(`${form} was treated as non-public`);
          }
        }),
        { numRuns: 200 },
      );
    });
  });
});
