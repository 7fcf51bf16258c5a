import type { InboxCursor, InboxStore } from '../store/inbox.js';

export const SWEEP_AFTER_MS = 60_000;

/** What the sweeps queue with: the queue (job id = event id) and the time they mark rows queued at. */
interface Requeue {
  enqueue: (eventId: string) => Promise<void>;
  now: number;
}

/** Queues these events again (one job each, id = event id) and marks them queued at `now`. */
async function queueAgain(
  deps: Requeue & { inbox: Pick<InboxStore, 'markQueued'> },
  ids: string[],
): Promise<void> {
  // One at a time: each event its own job, whose id is the event's, so one already queued stays one.
  for (const id of ids) await deps.enqueue(id);
  await deps.inbox.markQueued(ids, new Date(deps.now));
}

/**
 * merchant.md, Background work: inbox rows stored but not processed after a minute are queued
 * again (the job id is the event id, so one already queued stays one job). Returns how many.
 */
export async function sweepInbox(
  deps: Requeue & {
    inbox: Pick<InboxStore, 'stuck' | 'markQueued'>;
    olderThanMs?: number;
    limit?: number;
  },
): Promise<number> {
  const ids = await deps.inbox.stuck(
    new Date(deps.now - (deps.olderThanMs ?? SWEEP_AFTER_MS)),
    deps.limit ?? 500,
  );
  await queueAgain(deps, ids);
  return ids.length;
}

/**
 * Another process's clock may run this far ahead of ours: a row it stored just now still counts as
 * stored before now.
 */
const CLOCK_SKEW_MS = 60_000;

/**
 * The sweep, whatever the rows' age and however many: every inbox row stored and not processed,
 * queued again, page by page. What Redis lost (emptied, or restarted without its data) is found in
 * the database at once, not a minute later. Events still queued or in a worker's hands are queued
 * again too: a job id is its event's, and an event already applied is `already processed`. Returns
 * how many.
 */
export async function requeueUnprocessed(
  deps: Requeue & { inbox: Pick<InboxStore, 'unprocessed' | 'markQueued'>; pageSize?: number },
): Promise<number> {
  const pageSize = deps.pageSize ?? 500;
  const before = new Date(deps.now + CLOCK_SKEW_MS);
  let queued = 0;
  let after: InboxCursor | undefined;
  for (;;) {
    const page = await deps.inbox.unprocessed(before, pageSize, after);
    await queueAgain(
      deps,
      page.map((row) => row.eventId),
    );
    queued += page.length;
    if (page.length < pageSize) return queued;
    after = page.at(-1);
  }
}
