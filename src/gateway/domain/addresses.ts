import { isIP } from 'node:net';

/**
 * Private, loopback, link-local and otherwise non-public addresses, IPv4 and IPv6 (including
 * IPv4-mapped IPv6). gateway-api.md, Webhook management rule 1; sandbox.md section 8.
 */
export function isNonPublicAddress(address: string): boolean {
  const bare = bareHost(address);
  const family = isIP(bare);
  if (family === 4) return nonPublicV4(bare);
  if (family === 6) return nonPublicV6(bare);
  return false;
}

/** A URL's hostname without the brackets of an IPv6 literal. */
export function bareHost(hostname: string): string {
  return hostname.replace(/^\[|\]$/g, '');
}

/** Strict mode (sandbox.md section 8): a host must resolve, and only to public addresses. */
export function allPublic(addresses: readonly string[]): boolean {
  return addresses.length > 0 && !addresses.some(isNonPublicAddress);
}

function nonPublicV4(address: string): boolean {
  const [a = 0, b = 0, c = 0] = address.split('.').map(Number);
  return (
    a === 0 || // "this network"
    a === 10 ||
    a === 127 ||
    (a === 100 && b >= 64 && b <= 127) || // carrier-grade NAT
    (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 192 && b === 0 && (c === 0 || c === 2)) || // protocol assignments, documentation (TEST-NET-1)
    (a === 198 && b === 51 && c === 100) || // TEST-NET-2
    (a === 203 && b === 0 && c === 113) || // TEST-NET-3
    (a === 198 && (b === 18 || b === 19)) || // benchmarking
    a >= 224 // multicast and reserved
  );
}

function nonPublicV6(address: string): boolean {
  const groups = expandV6(address.toLowerCase());
  if (!groups) return true;
  const mapped = groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff;
  if (mapped)
    return nonPublicV4(`${groups[6]! >> 8}.${groups[6]! & 255}.${groups[7]! >> 8}.${groups[7]! & 255}`);
  const first = groups[0]!;
  return (
    groups.every((g) => g === 0) || // ::
    (groups.slice(0, 7).every((g) => g === 0) && groups[7] === 1) || // ::1
    (first & 0xfe00) === 0xfc00 || // fc00::/7 unique local
    (first & 0xffc0) === 0xfe80 || // fe80::/10 link-local
    (first & 0xff00) === 0xff00 || // multicast
    (first === 0x2001 && groups[1] === 0x0db8) // documentation
  );
}

/** Eight 16-bit groups of an IPv6 address (with an embedded IPv4 tail), or null. */
function expandV6(address: string): number[] | null {
  let text = address.split('%')[0]!;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4[1]!.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const parts = (s: string) => (s === '' ? [] : s.split(':').map((g) => Number.parseInt(g, 16)));
  const left = parts(head);
  const right = tail === undefined ? [] : parts(tail);
  const missing = 8 - left.length - right.length;
  if (tail === undefined ? missing !== 0 : missing < 0) return null;
  const groups = [...left, ...Array(missing).fill(0), ...right];
  return groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null;
}

const LOCAL_NAMES = /^(localhost|localhost\.localdomain|ip6-localhost|ip6-loopback|broadcasthost)$/;
const LOCAL_SUFFIXES =
  /\.(localhost|local|localdomain|internal|intranet|lan|home|corp|home\.arpa|test|invalid|example)$/;

/** Names that can only mean this machine or a private network. */
export function isLocalStyleHost(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  return LOCAL_NAMES.test(name) || LOCAL_SUFFIXES.test(name) || !name.includes('.');
}
