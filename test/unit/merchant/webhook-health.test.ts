import { expect } from 'chai';
import type { Logger } from 'pino';
import { GatewayError } from '../../../src/client/errors.js';
import type { GatewayClient } from '../../../src/client/gateway-client.js';
import {
  checkWebhookHealth,
  type HealthDeps,
  WARN_AGAIN_MS,
  type WebhookHealth,
} from '../../../src/merchant/jobs/webhook-health.js';
import { ManualClock } from '../../../src/shared/clock.js';

/**
 * merchant.md, Background work: the webhook health check warns while deliveries are not healthy (once
 * a state, then every 15 minutes while it lasts), and runs recovery at once when they are healthy
 * again after a failure streak. The gateway and the memory in memory; the logic is the check's.
 */
function harness() {
  const clock = new ManualClock();
  let answer: () => unknown = () => ({ delivery_status: 'healthy', consecutive_failures: 0 });
  let stored: WebhookHealth | null = null;
  const warnings: string[] = [];
  let recoveries = 0;
  const deps: HealthDeps = {
    gateway: {
      getWebhook: async (caller) => {
        expect(caller).to.equal('health');
        return { data: answer(), status: 200, replayed: false, remaining: null };
      },
    } as Pick<GatewayClient, 'getWebhook'>,
    memory: {
      get: async () => stored,
      set: async (health) => {
        stored = health;
      },
    },
    recover: async () => {
      recoveries += 1;
    },
    clock,
    logger: {
      warn: (_: unknown, message: string) => warnings.push(message),
      info: () => {},
    } as unknown as Logger,
  };
  const endpoint = (status: string, failures = 0) => {
    answer = () => ({ delivery_status: status, consecutive_failures: failures, last_failure_at: null });
  };
  return {
    deps,
    clock,
    warnings,
    endpoint,
    recoveries: () => recoveries,
    gone: () =>
      (answer = () => {
        throw new GatewayError(404, 'ERR_NOT_FOUND', 'Webhook endpoint not found.');
      }),
  };
}

describe('merchant: the webhook health check', () => {
  it('healthy: nothing to say, nothing to do', async () => {
    const h = harness();
    expect(await checkWebhookHealth(h.deps)).to.include({ status: 'healthy', recovered: false });
    expect(h.warnings).to.deep.equal([]);
  });

  it('degraded, failing, paused: a warning when the state begins, then every 15 minutes while it lasts', async () => {
    const h = harness();
    h.endpoint('degraded', 2);
    await checkWebhookHealth(h.deps);
    h.clock.advance(60_000);
    await checkWebhookHealth(h.deps);
    expect(h.warnings).to.deep.equal(['webhook deliveries degraded']);
    h.endpoint('failing', 5); // a new state: said at once
    await checkWebhookHealth(h.deps);
    h.clock.advance(WARN_AGAIN_MS);
    await checkWebhookHealth(h.deps);
    expect(h.warnings).to.deep.equal([
      'webhook deliveries degraded',
      'webhook deliveries failing',
      'webhook deliveries failing',
    ]);
    h.endpoint('paused');
    await checkWebhookHealth(h.deps);
    expect(h.warnings.at(-1)).to.equal('webhook deliveries paused');
  });

  it('no endpoint at all (404) is said plainly: no events come, the poller keeps orders true', async () => {
    const h = harness();
    h.gone();
    expect((await checkWebhookHealth(h.deps)).status).to.equal('missing');
    expect(h.warnings).to.deep.equal([
      'no webhook endpoint at the gateway: no events are sent; the poller keeps orders true',
    ]);
  });

  it('healthy again after a streak: recovery runs at once, once', async () => {
    const h = harness();
    h.endpoint('failing', 7);
    await checkWebhookHealth(h.deps);
    h.endpoint('healthy');
    expect(await checkWebhookHealth(h.deps)).to.include({ status: 'healthy', recovered: true });
    expect(await checkWebhookHealth(h.deps)).to.include({ status: 'healthy', recovered: false });
    expect(h.recoveries()).to.equal(1);
  });

  it('the first check after a start, already healthy, recovers nothing (no streak was seen)', async () => {
    const h = harness();
    await checkWebhookHealth(h.deps);
    expect(h.recoveries()).to.equal(0);
  });
});
