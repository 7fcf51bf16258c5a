import { isIP } from 'node:net';
import { ipAddress } from './customer.js';

/**
 * A client address as the kit keeps and sends it: an IPv4 address mapped into IPv6 (`::ffff:1.2.3.4`,
 * how a dual-stack socket reports an IPv4 client) as plain IPv4, a bracketed IPv6 (`[2001:db8::1]`)
 * without its brackets, and an IPv6 scope (`%eth0`) dropped. Null for anything that is not an IP
 * address the gateway would take (a proxy header's garbage, a port, a host name). Pure.
 */
export function normalizeAddress(value: string | undefined | null): string | null {
  if (typeof value !== 'string') return null;
  let v = value.trim();
  if (v.startsWith('[') && v.endsWith(']')) v = v.slice(1, -1);
  const zone = v.indexOf('%');
  if (zone >= 0 && v.includes(':')) v = v.slice(0, zone);
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(v);
  if (mapped && isIP(mapped[1]!) === 4) return mapped[1]!;
  // The gateway checks `ip_address` with these rules: an address it would refuse is none.
  if (isIP(v) === 0 || !ipAddress.safeParse(v).success) return null;
  return v.toLowerCase();
}

/**
 * What a per-address limit counts under: an IPv4 address itself; for IPv6, its /64 network (one
 * subscriber's usual allocation, within which an abuser may pick a new address for each request).
 * Takes a normalized address (normalizeAddress). Pure.
 */
export function addressKey(address: string): string {
  if (isIP(address) !== 6) return address;
  return `${expandIpv6(address).slice(0, 4).join(':')}::/64`;
}

/** The eight 16-bit groups of an IPv6 address, as lowercase hex without leading zeros. */
function expandIpv6(address: string): string[] {
  let text = address.toLowerCase();
  // An IPv4 tail (`64:ff9b::192.0.2.1`) is the last two groups.
  const tail = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (tail) {
    const [a, b, c, d] = tail.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, tail.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', rest] = text.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = rest === undefined || rest === '' ? [] : rest.split(':');
  const fill = rest === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...fill, ...right].map((group) => Number.parseInt(group, 16).toString(16));
}
