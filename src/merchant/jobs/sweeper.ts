import type { InboxStore } from '../store/inbox.js';

export const SWEEP_AFTER_MS = 60_000;

/**
 * merchant.md, Background work: inbox rows stored but not processed after a minute are queued
 * again (the job id is the event id, so one already queued stays one job). Returns how many.
 */
export async function sweepInbox(deps: {
  inbox: Pick<InboxStore, 'stuck' | 'markQueued'>;
  enqueue: (eventId: string) => Promise<void>;
  now: number;
  olderThanMs?: number;
  limit?: number;
}): Promise<number> {
  const ids = await deps.inbox.stuck(
    new Date(deps.now - (deps.olderThanMs ?? SWEEP_AFTER_MS)),
    deps.limit ?? 500,
  );
  for (const id of ids) await deps.enqueue(id);
  await deps.inbox.markQueued(ids, new Date(deps.now));
  return ids.length;
}
