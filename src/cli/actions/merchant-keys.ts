import { GatewayError } from '../../client/errors.js';
import type { KitSession } from '../kit-session.js';
import { fail, print } from '../output.js';

/** `merchant-key set|remove|list` (registered in ../merchant-keys.ts), loaded when one of them runs. */

/** The shortest key GATEWAY_MERCHANT_KEYS takes (gateway-merchants.ts), and a bound on what is sealed. */
const SHORTEST = 8;
const LONGEST = 256;

/** What is wrong with a key read from stdin (trimmed), in words that never repeat it; null when nothing. */
export function merchantKeyProblem(key: string): string | null {
  if (key === '')
    return 'no key read: pipe it in (`npm run cli -- merchant-key set --merchant <id> < key-file`) or type it when asked';
  if (/\s/.test(key)) return 'a key is one line, without spaces';
  if (!/^[\x21-\x7e]+$/.test(key)) return 'a key is printable ASCII characters';
  if (key.length < SHORTEST)
    return `the key read is ${key.length} characters: a gateway key has ${SHORTEST} or more`;
  if (key.length > LONGEST) return `the key read is ${key.length} characters: at most ${LONGEST}`;
  return null;
}

/** `--merchant`: a merchant id (a positive integer), or one line and exit 1. */
function merchantOf(text: string): number {
  if (!/^[1-9]\d{0,9}$/.test(text))
    fail(`--merchant: must be a merchant id (a positive integer), not "${text}"`);
  return Number(text);
}

export async function set(kit: KitSession, options: { merchant: string }) {
  const merchantId = merchantOf(options.merchant);
  const { merchants, merchantKeys } = kit.config.gateway;
  if (!merchants.includes(merchantId))
    fail(
      `--merchant: merchant ${merchantId} is not among the merchants this kit acts for (GATEWAY_MERCHANTS: ${merchants.join(', ') || 'unset'})`,
    );
  // Never from the command line: ps and the shell's history would show it.
  const key = (await keyFromStdin(merchantId)).trim();
  const problem = merchantKeyProblem(key);
  if (problem) fail(`stdin: ${problem}`);
  await checkWithGateway(kit, merchantId, key);
  // Before the kit's first start too: the database is made if missing.
  const { replaced } = await (await kit.store({ create: true })).merchantKeys.put(merchantId, key);
  console.log(
    `merchant ${merchantId}'s key ${replaced ? 'replaced' : 'stored'}, sealed under APP_ENCRYPTION_KEY: the kit's processes use it from their next start`,
  );
  if (merchantKeys.has(merchantId))
    console.log(
      `GATEWAY_MERCHANT_KEYS gives merchant ${merchantId} a key too: that one is used while it is set`,
    );
}

export async function remove(kit: KitSession, options: { merchant: string }) {
  const merchantId = merchantOf(options.merchant);
  // Not only one of GATEWAY_MERCHANTS: the key of a merchant the kit no longer acts for may go too.
  // Nothing is opened, so a key sealed under a lost one can be removed (keyCheck: false).
  const store = await kit.store({ keyCheck: false });
  if (!(await store.merchantKeys.remove(merchantId)))
    fail(`--merchant: no key is stored for merchant ${merchantId}`);
  console.log(
    `merchant ${merchantId}'s stored key removed: the kit's processes stop using it at their next start`,
  );
}

export async function list(kit: KitSession) {
  // Nothing is opened but to tell which keys open: a key sealed under a lost one is listed, and said.
  const store = await kit.store({ keyCheck: false });
  const stored = await store.merchantKeys.list();
  const unopened = new Set(await store.merchantKeys.unopened());
  const { merchants, merchantKeys } = kit.config.gateway;
  print(
    stored.map(({ merchantId, createdAt, updatedAt }) => {
      const note = !merchants.includes(merchantId)
        ? 'not used: the merchant is not among GATEWAY_MERCHANTS'
        : unopened.has(merchantId)
          ? 'not used: it does not open under APP_ENCRYPTION_KEY (the kit does not start)'
          : merchantKeys.has(merchantId)
            ? 'not used: GATEWAY_MERCHANT_KEYS gives this merchant a key, which wins'
            : null;
      return {
        merchant_id: merchantId,
        stored_at: createdAt.toISOString(),
        updated_at: updatedAt.toISOString(),
        opens: !unopened.has(merchantId),
        in_use: note === null,
        note,
      };
    }),
  );
}

/**
 * Asks the gateway what the key is (GET /api/v1/api-key, with the key itself): one it does not know,
 * refuses, or that is not this merchant's own is not stored. A gateway that does not answer (no kit
 * running beside the embedded sandbox) or lacks the operation leaves the key stored unchecked, said.
 */
async function checkWithGateway(kit: KitSession, merchantId: number, key: string): Promise<void> {
  const [{ GatewayClient }, { gatewayUrl }] = await Promise.all([
    import('../../client/gateway-client.js'),
    import('../../kit/gateway.js'),
  ]);
  // Another key than the kit's: its own rate limit, one call, not retried.
  const client = new GatewayClient({
    baseUrl: gatewayUrl(kit.config),
    apiKey: key,
    retry: { maxAttempts: 1 },
    timeoutMs: 10_000,
  });
  let info: { key_type: string; merchant_id?: number };
  try {
    info = (await client.apiKeyInfo()).data;
  } catch (error) {
    if (error instanceof GatewayError && error.status === 401)
      fail('stdin: the gateway does not know this key (401): not stored');
    if (error instanceof GatewayError && error.status === 403)
      fail(`stdin: the gateway refuses this key (403: ${error.message}): not stored`);
    const why = error instanceof GatewayError ? `${error.status} ${error.code}` : (error as Error).message;
    console.error(
      `the gateway did not describe the key (${why}): stored unchecked; a wrong one answers 409 MERCHANT_KEY_REFUSED to the merchant's 3D Secure, capture, refund and void`,
    );
    return;
  }
  if (info.key_type !== 'merchant')
    fail(`stdin: the gateway says this is a ${info.key_type} key, not a merchant's own: not stored`);
  if (info.merchant_id !== undefined && info.merchant_id !== merchantId)
    fail(
      `stdin: the gateway says this is merchant ${info.merchant_id}'s own key, not ${merchantId}'s: not stored`,
    );
}

/** The key: stdin read whole (a pipe, a file), or typed at a terminal without echo. */
async function keyFromStdin(merchantId: number): Promise<string> {
  const stdin = process.stdin;
  if (stdin.isTTY) return typed(`merchant ${merchantId}'s key (not shown): `);
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** One line typed at the terminal, not echoed; Ctrl-C leaves (exit 130), as a shell's read would. */
function typed(prompt: string): Promise<string> {
  const stdin = process.stdin;
  process.stderr.write(prompt);
  stdin.setRawMode(true);
  stdin.setEncoding('utf8');
  return new Promise((resolve) => {
    let text = '';
    const end = () => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write('\n');
    };
    const onData = (chunk: string) => {
      for (const c of chunk) {
        if (c === '\r' || c === '\n' || c === '\u0004') {
          end();
          resolve(text);
          return;
        }
        if (c === '\u0003') {
          end();
          process.exit(130);
        }
        text = c === '\u007f' || c === '\b' ? text.slice(0, -1) : text + c;
      }
    };
    stdin.on('data', onData);
    stdin.resume();
  });
}
