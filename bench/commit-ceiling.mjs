/**
 * The commit ceiling: how many events a second MySQL on this machine commits with `connections`
 * events in flight, and nothing else: no HTTP, no signature, no queue. A receiver that answers 200
 * only once its event is committed cannot go faster with that many requests in flight, whatever it
 * batches: each request waits for a commit, and a commit's wait (the redo log's flush) is the same
 * for one row as for many. Two ways, the faster counts: `connections` clients each committing one
 * inbox row at a time (InnoDB's group commit shares their flushes), and one client committing
 * `connections` rows a statement (the batch a receiver would gather).
 *
 * A process of its own; needs a migrated database. Prints one JSON line: { rps, parallel, batched }.
 *
 *   node bench/commit-ceiling.mjs '{"databaseUrl": ..., "connections": 4, "seconds": 8, "tag": ...}'
 */
import mysql from 'mysql2/promise';

const { databaseUrl, connections, seconds, tag } = JSON.parse(process.argv[2]);
const pool = mysql.createPool({ uri: databaseUrl, connectionLimit: connections, timezone: 'Z' });
const payload = JSON.stringify({ id: 'evt', type: 'transaction.captured', data: { pad: 'x'.repeat(600) } });
let n = 0;
const row = () => [`evt_${tag}_${n++}`, 'transaction.captured', '1', 'webhook', payload, new Date(), 0];
const INSERT =
  'INSERT INTO webhook_inbox (event_id, event_type, transaction_id, source, payload, received_at, attempts) VALUES ?';

/** Events committed a second over `ms`, by `clients` loops each committing `rows` rows a statement. */
async function run(clients, rows, ms) {
  let committed = 0;
  const end = performance.now() + ms;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < end) {
        await pool.query(INSERT, [Array.from({ length: rows }, row)]);
        committed += rows;
      }
    }),
  );
  return committed / ((performance.now() - started) / 1000);
}

const half = (seconds * 1000) / 2;
const parallel = await run(connections, 1, half);
const batched = await run(1, connections, half);
await pool.query('DELETE FROM webhook_inbox WHERE event_id LIKE ?', [`evt\\_${tag}\\_%`]);
await pool.end();
console.log(JSON.stringify({ rps: Math.max(parallel, batched), parallel, batched }));
