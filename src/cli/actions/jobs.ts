import { timestamp } from '../input.js';
import { type KitSession, whenLockFree } from '../kit-session.js';
import { fail } from '../output.js';
import { summaryLines, withProgressBar } from '../progress.js';

/** `recover` and `poll` (registered in ../jobs.ts). */

export async function recover(kit: KitSession, options: { since?: string }) {
  const since = options.since === undefined ? undefined : timestamp('--since', options.since);
  const s = await withProgressBar(async (bar) => {
    const { jobs } = await kit.adapters();
    // Under the job's lock: never beside a scheduler's recovery, which would fetch the same events.
    return whenLockFree(jobs, 'recovery', () =>
      jobs.recover({ since, onProgress: (...at) => bar.update(...at) }),
    );
  });
  console.log(
    summaryLines(`recovery from ${s.from}`, [
      ['listed', s.listed],
      ['missing', s.missing],
      ['recovered', s.recovered],
      ['replayed', s.replayed],
      ['failed', s.failed],
      ['gateway calls', s.gatewayCalls],
      ['checkpoint', s.checkpoint],
    ]),
  );
}

export async function poll(kit: KitSession) {
  const s = await withProgressBar(async (bar) => {
    const { jobs } = await kit.adapters();
    // Under the poller's lock: a scheduler's tick beside it would ask about the same orders again.
    return whenLockFree(jobs, 'poller', () =>
      jobs.pollAll((done, total) => bar.update('polling', done, total)),
    );
  });
  console.log(
    summaryLines(`polled ${s.orders} orders`, [
      ['changed', s.changed],
      ['flagged (open 30 days)', s.exhausted],
      ['failed', s.failed],
      ['gateway calls', s.gatewayCalls],
    ]),
  );
  if (s.stopped)
    fail(
      `stopped: the gateway does not answer (${s.stopped}); ${s.total - s.orders} of ${s.total} orders not asked: the poller asks them on its schedule`,
    );
}
