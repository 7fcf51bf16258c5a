import { expect } from 'chai';
import { pino } from 'pino';
import { GatewayError } from '../../../src/client/errors.js';
import type { GatewayClient } from '../../../src/client/gateway-client.js';
import {
  combinedSummary,
  FIRST_LOOKBACK_MS,
  OVERLAP_MS,
  RECOVERY_CHECKPOINT,
  type RecoveryDeps,
  recoverEvents,
  recoveryCheckpoint,
} from '../../../src/merchant/jobs/recovery.js';
import { ManualClock } from '../../../src/shared/clock.js';

/**
 * merchant.md, Background work (recovery): what the job asks the gateway, what it stores, and where
 * its checkpoint goes, against a gateway and a store in memory. The real ones: background.test.ts.
 */
const T0 = Date.UTC(2026, 10, 23, 12);
const iso = (ms: number) => new Date(ms).toISOString();

function event(n: number) {
  const id = `evt_${String(n).padStart(24, '0')}`;
  const createdAt = iso(T0 + n * 1000);
  return {
    row: { id, event_type: 'transaction.captured', status: 'failed', attempts: 8, created_at: createdAt },
    payload: {
      id,
      type: 'transaction.captured',
      created_at: createdAt,
      data: {
        transaction: {
          id: String(100000 + n),
          related_trans_id: null,
          transaction_type: 'sale',
          status: 'captured',
          amount: 1000,
          currency: 'EUR',
          refunded_amount: 0,
        },
      },
    },
  };
}

function harness(count: number, held: number[] = []) {
  const clock = new ManualClock(T0 + 3_600_000);
  const events = Array.from({ length: count }, (_, i) => event(i + 1));
  const inbox = new Map<string, string>(held.map((n) => [events[n - 1]!.row.id, 'earlier']));
  const checkpoints = new Map<string, string>();
  const merchants = new Map<string, number | null>(); // event id -> the merchant it was stored as
  const calls: string[] = [];
  const queued: string[] = [];
  const broken = new Map<string, number>(); // event id -> the status its fetch answers
  const gateway = {
    listEvents: async (filters: { from?: string; page?: number; perPage?: number }, caller: string) => {
      expect(caller).to.equal('recovery');
      calls.push(`list ${filters.from} p${filters.page}`);
      const from = Date.parse(filters.from!);
      const newestFirst = events.filter((e) => Date.parse(e.row.created_at) >= from).reverse();
      const per = filters.perPage!;
      const page = filters.page!;
      return {
        data: {
          events: newestFirst.slice((page - 1) * per, page * per).map((e) => e.row),
          pagination: {
            current_page: page,
            last_page: Math.max(1, Math.ceil(newestFirst.length / per)),
            per_page: per,
            total: newestFirst.length,
          },
        },
      };
    },
    getEvent: async (id: string) => {
      calls.push(`get ${id}`);
      const status = broken.get(id);
      if (status) throw new GatewayError(status, status === 404 ? 'ERR_NOT_FOUND' : 'ERR_INTERNAL', 'no');
      return {
        data: {
          ...events.find((e) => e.row.id === id)!.row,
          payload: events.find((e) => e.row.id === id)!.payload,
        },
      };
    },
    replayEvent: async (id: string) => {
      calls.push(`replay ${id}`);
      return { data: {} };
    },
  } as unknown as Pick<GatewayClient, 'listEvents' | 'getEvent' | 'replayEvent'>;
  const deps: RecoveryDeps = {
    store: {
      inbox: {
        holding: async (ids: readonly string[]) => new Set(ids.filter((id) => inbox.has(id))),
        store: async (e: { id: string; source: string; merchantId?: number | null }) => {
          inbox.set(e.id, e.source);
          merchants.set(e.id, e.merchantId ?? null);
          return 'stored' as const;
        },
      },
      checkpoints: {
        get: async (name: string) => checkpoints.get(name) ?? null,
        put: async (name: string, value: string) => void checkpoints.set(name, value),
      },
    } as unknown as RecoveryDeps['store'],
    gateway,
    enqueue: async (id) => void queued.push(id),
    clock,
    logger: pino({ level: 'silent' }),
  };
  return { deps, events, inbox, checkpoints, merchants, calls, queued, broken, clock };
}

describe('merchant: recovery (recoverEvents)', () => {
  it('first run: a day back; lists pages of 100, fetches what the inbox lacks, oldest first, and queues it', async () => {
    const h = harness(250, [3, 250]);
    const s = await recoverEvents(h.deps);
    expect(s.from).to.equal(iso(h.clock.now() - FIRST_LOOKBACK_MS));
    expect(h.calls.filter((c) => c.startsWith('list'))).to.have.length(3);
    expect(s).to.include({ listed: 250, missing: 248, recovered: 248, replayed: 0, failed: 0 });
    expect(s.gatewayCalls).to.equal(3 + 248);
    expect(h.queued[0]).to.equal(h.events[0]!.row.id);
    expect(h.queued).to.have.length(248);
    expect([...h.inbox.values()].filter((v) => v === 'recovery')).to.have.length(248);
    // Everything listed is stored: the checkpoint is the newest event's time.
    expect(h.checkpoints.get(RECOVERY_CHECKPOINT)).to.equal(h.events[249]!.row.created_at);
  });

  it('the next run lists from the checkpoint minus the overlap, and twice changes nothing', async () => {
    const h = harness(10);
    await recoverEvents(h.deps);
    const checkpoint = h.checkpoints.get(RECOVERY_CHECKPOINT)!;
    h.calls.length = 0;
    const s = await recoverEvents(h.deps);
    expect(s.from).to.equal(iso(Date.parse(checkpoint) - OVERLAP_MS));
    expect(s).to.include({ missing: 0, recovered: 0, gatewayCalls: 1 });
    expect(h.checkpoints.get(RECOVERY_CHECKPOINT)).to.equal(checkpoint);
  });

  it('an event whose payload cannot be fetched is replayed; the checkpoint stops before it', async () => {
    const h = harness(5);
    h.broken.set(h.events[2]!.row.id, 500);
    const s = await recoverEvents(h.deps);
    expect(s).to.include({ missing: 5, recovered: 4, replayed: 1, failed: 0 });
    expect(h.calls).to.include(`replay ${h.events[2]!.row.id}`);
    expect(h.checkpoints.get(RECOVERY_CHECKPOINT)).to.equal(h.events[1]!.row.created_at);
  });

  it('a pruned event (404) is not replayed: failed, and the next run tries it again', async () => {
    const h = harness(4);
    h.broken.set(h.events[0]!.row.id, 404);
    const first = await recoverEvents(h.deps);
    expect(first).to.include({ recovered: 3, replayed: 0, failed: 1 });
    expect(h.calls.some((c) => c.startsWith('replay'))).to.equal(false);
    expect(h.checkpoints.has(RECOVERY_CHECKPOINT), 'nothing before the failure to stand on').to.equal(false);
    h.broken.clear();
    const second = await recoverEvents(h.deps);
    expect(second).to.include({ missing: 1, recovered: 1, failed: 0 });
    expect(h.checkpoints.get(RECOVERY_CHECKPOINT)).to.equal(h.events[3]!.row.created_at);
  });

  it('--since lists from there, and never moves the checkpoint back', async () => {
    const h = harness(3);
    await recoverEvents(h.deps);
    const checkpoint = h.checkpoints.get(RECOVERY_CHECKPOINT)!;
    const s = await recoverEvents(h.deps, { since: new Date(T0 - 10 * 86_400_000) });
    expect(s.from).to.equal(iso(T0 - 10 * 86_400_000));
    expect(h.checkpoints.get(RECOVERY_CHECKPOINT)).to.equal(checkpoint);
  });

  it('an event with a card number outside its ids is stored truncated, with where, and queued: never skipped', async () => {
    const h = harness(2);
    const stored: { id: string; payload: string; masked?: readonly string[] }[] = [];
    h.deps.store.inbox.store = async (e) => {
      stored.push(e);
      h.inbox.set(e.id, e.source);
      return 'stored';
    };
    const tx = h.events[1]!.payload.data.transaction as Record<string, unknown>;
    tx.merchant_trans_id = 'order 4242 4242 4242 4242';
    tx.id = '4539578763621486'; // an id: kept as sent
    const s = await recoverEvents(h.deps);
    expect(s).to.include({ missing: 2, recovered: 2, failed: 0 });
    expect(h.queued).to.have.length(2);
    const carded = stored.find((e) => e.id === h.events[1]!.row.id)!;
    expect(carded.masked).to.deep.equal(['data.transaction.merchant_trans_id']);
    expect(JSON.parse(carded.payload).data.transaction).to.include({
      merchant_trans_id: 'order **** **** **** 4242',
      id: '4539578763621486',
    });
    expect(stored.find((e) => e.id === h.events[0]!.row.id)!.masked).to.deep.equal([]);
    expect(h.checkpoints.get(RECOVERY_CHECKPOINT)).to.equal(h.events[1]!.row.created_at);
  });

  describe('per merchant (issue 45, platform mode)', () => {
    it("a merchant's run keeps its events as its and its checkpoint under its own name", async () => {
      const h = harness(3);
      h.deps.merchantId = 1004;
      h.deps.checkpoint = recoveryCheckpoint([1001, 1004], 1004);
      await recoverEvents(h.deps);
      expect([...h.merchants.values()]).to.deep.equal([1004, 1004, 1004]);
      expect([...h.checkpoints.keys()]).to.deep.equal(['recovery:1004']);
    });

    it('the first merchant starts from the checkpoint of the kit of one merchant it was, then keeps its own', async () => {
      const h = harness(10);
      const before = h.events[7]!.row.created_at;
      h.checkpoints.set(RECOVERY_CHECKPOINT, before);
      h.deps.checkpoint = recoveryCheckpoint([1001, 1004], null);
      const s = await recoverEvents(h.deps);
      expect(s.from).to.equal(iso(Date.parse(before) - OVERLAP_MS));
      expect(h.checkpoints.get('recovery:1001')).to.equal(h.events[9]!.row.created_at);
      expect(h.checkpoints.get(RECOVERY_CHECKPOINT), 'left as it was').to.equal(before);
      // Another merchant never reads it: its first run looks a day back.
      expect(recoveryCheckpoint([1001, 1004], 1004)).to.deep.equal({ name: 'recovery:1004' });
      // A kit of one merchant keeps the name it always had.
      expect(recoveryCheckpoint([1001], 1001)).to.deep.equal({ name: RECOVERY_CHECKPOINT });
      expect(recoveryCheckpoint([], null)).to.deep.equal({ name: RECOVERY_CHECKPOINT });
    });

    it('runs of several merchants add up; the earliest start and checkpoint are the whole', () => {
      const run = (from: number, checkpoint: number | null, n: number) => ({
        from: iso(from),
        listed: n,
        missing: n,
        recovered: n,
        replayed: 0,
        failed: 0,
        gatewayCalls: n + 1,
        checkpoint: checkpoint === null ? null : iso(checkpoint),
      });
      const a = run(T0, T0 + 5000, 2);
      const b = run(T0 - 1000, T0 + 3000, 3);
      const s = combinedSummary([
        [1001, a],
        [1004, b],
      ]);
      expect(s).to.include({ from: iso(T0 - 1000), listed: 5, recovered: 5, gatewayCalls: 7 });
      expect(s.checkpoint).to.equal(iso(T0 + 3000));
      expect(s.merchants).to.deep.equal({ 1001: a, 1004: b });
      expect(
        combinedSummary([
          [1001, a],
          [1004, run(T0, null, 0)],
        ]).checkpoint,
      ).to.equal(null);
    });
  });
});
