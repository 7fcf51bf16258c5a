import { GatewayError, GatewayNetworkError } from '../client/errors.js';
import { configOrExit, settingProblem } from '../startup.js';
import { Refused } from './sandbox-triggers.js';

/** One line an operator can act on; a gateway that does not answer is most often a kit not started. */
export function explain(error: Error): string {
  if (error instanceof Refused) return error.message;
  if (error instanceof GatewayNetworkError && error.kind === 'connection') {
    const c = configOrExit();
    if (c.gateway.baseUrl === null) {
      return (
        `no running kit: the embedded sandbox gateway at http://127.0.0.1:${c.gateway.sandboxPort} does not answer ` +
        '(it runs inside the kit: start it with `npm start`, or set GATEWAY_BASE_URL to use another gateway)'
      );
    }
    return `GATEWAY_BASE_URL: the gateway at ${c.gateway.baseUrl} does not answer (${error.message})`;
  }
  if (error instanceof GatewayError) {
    // The gateway's own words, with the fields it names: `url: must use https` is what to fix.
    const fields = Object.entries(error.details.errors ?? {}).map(
      ([field, why]) => `${field}: ${why.join(', ')}`,
    );
    return `the gateway refused: ${[error.message, ...fields].join(' ')} (HTTP ${error.status} ${error.code})`;
  }
  return settingProblem(error) ?? `${error.name}: ${error.message}`;
}
