import { isIP } from 'node:net';

/**
 * Settings that would run the kit open by mistake (issue 25): refused at start-up, one line each,
 * rather than warned about in a log nobody reads. Pure: the parsed settings in, the refusals out.
 */

/** Tokens the repository's own files show as examples: whoever copies one has set no secret. */
export const PLACEHOLDER_TOKENS = ['change-me-to-a-long-random-token', 'local-ops-token-0123456789'] as const;

/** The shortest OPS_API_TOKEN production takes: 32 characters, as `openssl rand -base64 24` gives. */
export const MIN_PRODUCTION_TOKEN = 32;
/**
 * The fewest different characters an OPS_API_TOKEN of production holds: 32 times one character is
 * 32 characters long and no secret. A random base64 token of 32 characters has about 25.
 */
export const MIN_PRODUCTION_TOKEN_CHARACTERS = 16;

export interface GuardedSettings {
  production: boolean;
  /** GATEWAY_BASE_URL when it is a URL (not `embedded`), else null. */
  remoteGateway: string | null;
  allowRemoteGatewayInDevelopment: boolean;
  opsApiToken: string | undefined;
  /** APP_ENCRYPTION_KEY's bytes are the development key's, however the base64 was written. */
  encryptionKeyIsDevelopmentKey: boolean;
  roles: readonly string[];
  metricsToken: string | undefined;
  metricsPort: number | undefined;
}

/** One guard: the variables it reads, and its refusal (one line naming the setting) or null. */
interface Guard {
  reads: readonly string[];
  refusal: (s: GuardedSettings) => string | null;
}

const GUARDS: readonly Guard[] = [
  {
    reads: ['NODE_ENV', 'GATEWAY_BASE_URL', 'ALLOW_REMOTE_GATEWAY_IN_DEVELOPMENT'],
    refusal: (s) =>
      !s.production &&
      s.remoteGateway !== null &&
      !isLocal(s.remoteGateway) &&
      !s.allowRemoteGatewayInDevelopment
        ? `GATEWAY_BASE_URL: ${s.remoteGateway} is not on this machine and NODE_ENV is not production: the kit would seal secrets and card holds under the development key and serve the demo shop. Set NODE_ENV=production, or ALLOW_REMOTE_GATEWAY_IN_DEVELOPMENT=true on purpose`
        : null,
  },
  {
    reads: ['NODE_ENV', 'APP_ENCRYPTION_KEY'],
    refusal: (s) =>
      s.production && s.encryptionKeyIsDevelopmentKey
        ? 'APP_ENCRYPTION_KEY: is the development key, which anyone can read in the source: set a key of your own (openssl rand -base64 32)'
        : null,
  },
  {
    reads: ['NODE_ENV', 'OPS_API_TOKEN'],
    refusal: (s) => (s.production ? weakToken(s.opsApiToken ?? '') : null),
  },
  {
    reads: ['NODE_ENV', 'ROLES', 'METRICS_TOKEN', 'METRICS_PORT'],
    refusal: (s) =>
      s.production && s.roles.includes('api') && s.metricsToken === undefined && s.metricsPort === undefined
        ? 'METRICS_TOKEN: is required in production, or /metrics would be open on the public port; or set METRICS_PORT to serve it on a private port of its own'
        : null,
  },
];

/**
 * Every setting that must not be run with, one line each naming it; none when there is none. A guard
 * that reads a variable in `unreadable` (one that did not parse, and says so on a line of its own)
 * is skipped: it would judge a value that is not there.
 */
export function unsafeSettings(s: GuardedSettings, unreadable: ReadonlySet<string> = new Set()): string[] {
  return GUARDS.filter((g) => !g.reads.some((name) => unreadable.has(name)))
    .map((g) => g.refusal(s))
    .filter((line): line is string => line !== null);
}

/** What is wrong with a production OPS_API_TOKEN, or null. */
function weakToken(token: string): string | null {
  if ((PLACEHOLDER_TOKENS as readonly string[]).includes(token) || /change-?me/i.test(token))
    return 'OPS_API_TOKEN: is a placeholder from the documentation: set a random one (openssl rand -base64 32)';
  if (token.length < MIN_PRODUCTION_TOKEN)
    return `OPS_API_TOKEN: must be at least ${MIN_PRODUCTION_TOKEN} characters in production (openssl rand -base64 32)`;
  if (new Set(token).size < MIN_PRODUCTION_TOKEN_CHARACTERS)
    return `OPS_API_TOKEN: must hold at least ${MIN_PRODUCTION_TOKEN_CHARACTERS} different characters in production, as a random one does (openssl rand -base64 32)`;
  return null;
}

/** A gateway on this machine (loopback): a sandbox a developer runs, not somebody's real gateway. */
function isLocal(url: string): boolean {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1';
}
