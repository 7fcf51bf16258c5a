import { isIP } from 'node:net';

/**
 * Settings that would run the kit open by mistake (issue 25): refused at start-up, one line each,
 * rather than warned about in a log nobody reads. Pure: the parsed settings in, the refusal out.
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

/** The first setting that must not be run with, as one line naming it; null when there is none. */
export function unsafeSetting(s: GuardedSettings): string | null {
  if (
    !s.production &&
    s.remoteGateway !== null &&
    !isLocal(s.remoteGateway) &&
    !s.allowRemoteGatewayInDevelopment
  )
    return `GATEWAY_BASE_URL: ${s.remoteGateway} is not on this machine and NODE_ENV is not production: the kit would seal secrets and card holds under the development key and serve the demo shop. Set NODE_ENV=production, or ALLOW_REMOTE_GATEWAY_IN_DEVELOPMENT=true on purpose`;
  if (!s.production) return null;
  if (s.encryptionKeyIsDevelopmentKey)
    return 'APP_ENCRYPTION_KEY: is the development key, which anyone can read in the source: set a key of your own (openssl rand -base64 32)';
  const token = s.opsApiToken ?? '';
  if ((PLACEHOLDER_TOKENS as readonly string[]).includes(token) || /change-?me/i.test(token))
    return 'OPS_API_TOKEN: is a placeholder from the documentation: set a random one (openssl rand -base64 32)';
  if (token.length < MIN_PRODUCTION_TOKEN)
    return `OPS_API_TOKEN: must be at least ${MIN_PRODUCTION_TOKEN} characters in production (openssl rand -base64 32)`;
  if (new Set(token).size < MIN_PRODUCTION_TOKEN_CHARACTERS)
    return `OPS_API_TOKEN: must hold at least ${MIN_PRODUCTION_TOKEN_CHARACTERS} different characters in production, as a random one does (openssl rand -base64 32)`;
  if (s.roles.includes('api') && s.metricsToken === undefined && s.metricsPort === undefined)
    return 'METRICS_TOKEN: is required in production, or /metrics would be open on the public port; or set METRICS_PORT to serve it on a private port of its own';
  return null;
}

/** A gateway on this machine (loopback): a sandbox a developer runs, not somebody's real gateway. */
function isLocal(url: string): boolean {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1';
}
