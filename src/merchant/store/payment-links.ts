import { type RandomSource, randomId } from '../../shared/ids.js';
import { type Actor, actorLabel } from '../operators/roles.js';
import { type LinkRefusal, linkRefusal, linkTokenHash, newLinkToken } from '../orders/payment-links.js';
import { auditStatement } from './audit.js';
import { type Models, type PaymentLinkRow, plain } from './models.js';
import type { OrderWriter } from './order-writer.js';
import type { OrderRecord, PaymentLinkRecord } from './records.js';

/** What making a link asks. */
export interface NewLink {
  paymentMethod: string;
  /** Seconds from now (the writer's clock) until the link ends. */
  expiresInSeconds: number;
  /** Who asked: named in the history line and the audit log. */
  actor: Actor;
}

/** What making a link did: the link and its token (shown this once), or why the order takes none. */
export type MadeLink =
  | { kind: 'created'; link: PaymentLinkRecord; token: string; order: OrderRecord }
  | { kind: 'refused'; refusal: LinkRefusal; order: OrderRecord };

const record = (row: PaymentLinkRow): PaymentLinkRecord => {
  const { token_hash: _hash, ...link } = plain(row);
  return link;
};

/**
 * Payment links (issue 43, part 3). A link is made as a change handed to the order's one writer:
 * under the order's lock it is refused for an order that ended or holds money (orders/payment-links.ts
 * linkRefusal), and otherwise its row, the order's history line and the audit line are written in the
 * order's transaction. The token is made here and kept only as its hash.
 */
export class PaymentLinkStore {
  constructor(
    private readonly models: Models,
    private readonly writer: OrderWriter,
    private readonly random: RandomSource,
  ) {}

  async create(orderId: string, request: NewLink): Promise<MadeLink> {
    const token = newLinkToken(this.random);
    const id = randomId('plk_', this.random);
    const done = await this.writer.one<MadeLinkResult>({ orderId }, ({ order }, now) => {
      const refusal = linkRefusal({ status: order.status, closedReason: order.closed_reason });
      if (refusal) return { change: null, result: { kind: 'refused', refusal } };
      const link: PaymentLinkRecord = {
        id,
        order_id: order.id,
        payment_method: request.paymentMethod,
        expires_at: new Date(now.getTime() + request.expiresInSeconds * 1000),
        created_at: now,
        created_by: actorLabel(request.actor).slice(0, 96),
      };
      const until = link.expires_at.toISOString();
      return {
        change: {
          history: {
            source: 'api',
            sourceId: `link:${id}`,
            outcome: 'applied',
            detail: `payment link ${id} (${link.payment_method}) made by ${link.created_by}, live until ${until}`,
          },
          also: [
            {
              sql: 'INSERT INTO payment_links SET ?',
              values: [{ ...link, token_hash: linkTokenHash(token) }],
            },
            auditStatement(
              {
                actor: request.actor,
                action: 'order.payment_link',
                orderId: order.id,
                subjectId: id,
                amountMinor: order.amount_minor,
                currency: order.currency,
                detail: `payment link (${link.payment_method}) live until ${until}; the order was ${order.status}`,
              },
              now,
            ),
          ],
        },
        result: { kind: 'created', link },
      };
    });
    const { result, order } = done!;
    return result.kind === 'created' ? { ...result, token, order } : { ...result, order };
  }

  /** The link whose token has this hash (linkTokenHash); null when none has. */
  async byTokenHash(hash: string): Promise<PaymentLinkRecord | null> {
    const row = await this.models.PaymentLink.findOne({ where: { token_hash: hash } });
    return row && record(row);
  }
}

type MadeLinkResult =
  | { kind: 'created'; link: PaymentLinkRecord }
  | { kind: 'refused'; refusal: LinkRefusal };
