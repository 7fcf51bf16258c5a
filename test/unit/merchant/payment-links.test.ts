import { expect } from 'chai';
import { renderLinkPage } from '../../../src/merchant/http/link-page.js';
import {
  LINK_TOKEN,
  linkRefusal,
  linkTokenHash,
  newLinkToken,
  type VisitedAttempt,
  visitStep,
} from '../../../src/merchant/orders/payment-links.js';
import { ORDER_STATUSES, type OrderStatus } from '../../../src/merchant/orders/status.js';
import type { OrderRecord } from '../../../src/merchant/store/records.js';
import { seededRandom } from '../../../src/shared/ids.js';

/** Issue 43, part 3: the rules of payment links, pure: the token, who may have a link, what a visit does. */
const now = Date.parse('2026-12-01T10:00:00Z');
const live = { expires_at: new Date(now + 60_000) };
const over = { expires_at: new Date(now) };
const PAGE = 'https://gateway.test/hosted/checkout/ps_1';

const session = (over: Partial<VisitedAttempt> = {}): VisitedAttempt => ({
  kind: 'redirect',
  status: 'requires_action',
  payment_session_id: 'ps_1',
  action_url: PAGE,
  session_expires_at: new Date(now + 10 * 60_000),
  ...over,
});

describe('merchant: payment links, the rules (orders/payment-links.ts)', () => {
  it('a token is plt_ and 256 random bits; only its SHA-256 (base64url) is kept', () => {
    const random = seededRandom(7);
    const a = newLinkToken(random);
    const b = newLinkToken(random);
    expect(a).to.match(LINK_TOKEN);
    expect(a).to.not.equal(b);
    expect(linkTokenHash(a)).to.have.length(43).and.not.equal(linkTokenHash(b));
    expect(linkTokenHash(a)).to.equal(linkTokenHash(a));
    expect(LINK_TOKEN.test(`${a}x`)).to.equal(false);
    expect(LINK_TOKEN.test('plt_short')).to.equal(false);
  });

  it('an order that ended, holds money or was voided takes no link; one that may still be paid does', () => {
    const refusals = Object.fromEntries(
      ORDER_STATUSES.map((status) => [
        status,
        linkRefusal({ status, closedReason: status === 'closed' ? 'expired' : null })?.kind ?? null,
      ]),
    );
    expect(refusals).to.deep.equal({
      pending: null,
      requires_action: null,
      failed: null,
      cancelled: null,
      expired: null,
      authorized: 'paid',
      paid: 'paid',
      partially_refunded: 'paid',
      refunded: 'paid',
      disputed: 'paid',
      voided: 'state',
      closed: 'closed',
    });
    expect(linkRefusal({ status: 'closed', closedReason: 'cancelled' })).to.deep.equal({
      kind: 'closed',
      reason: 'cancelled',
    });
  });

  describe('visitStep: what a visit does', () => {
    const step = (status: OrderStatus, attempt: VisitedAttempt | null, link = live, answer?: unknown) =>
      visitStep(link, { status }, attempt, now, answer as never);

    it('paid and closed come before an expired link: whoever opens an old link learns the order’s fate', () => {
      expect(step('paid', null, over)).to.deep.equal({ kind: 'paid' });
      expect(step('refunded', session(), over)).to.deep.equal({ kind: 'paid' });
      expect(step('closed', null, over)).to.deep.equal({ kind: 'ended' });
      expect(step('voided', null)).to.deep.equal({ kind: 'ended' });
      expect(step('pending', null, over)).to.deep.equal({ kind: 'expired' });
      expect(step('requires_action', session(), over)).to.deep.equal({ kind: 'expired' });
    });

    it('nothing under way: a new session is opened', () => {
      expect(step('pending', null)).to.deep.equal({ kind: 'open' });
      for (const status of ['failed', 'cancelled', 'expired'] as const)
        expect(step(status, session({ status }))).to.deep.equal({ kind: 'open' });
    });

    it('a session under way is asked about, then sent to while open, opened over once ended, waited on otherwise', () => {
      expect(step('requires_action', session())).to.deep.equal({ kind: 'ask' });
      const other = 'https://gateway.test/hosted/checkout/ps_2';
      for (const status of ['created', 'pending_redirect'])
        expect(step('requires_action', session(), live, { status, url: other })).to.deep.equal({
          kind: 'send',
          url: other,
        });
      for (const status of ['failed', 'cancelled', 'expired'])
        expect(step('requires_action', session(), live, { status, url: other })).to.deep.equal({
          kind: 'open',
        });
      for (const status of ['pending_provider', 'paid', 'something_new'])
        expect(step('requires_action', session(), live, { status, url: other })).to.deep.equal({
          kind: 'wait',
        });
    });

    it('no answer from the gateway: the stored page while the session’s own expiry has not passed', () => {
      expect(step('requires_action', session(), live, null)).to.deep.equal({ kind: 'send', url: PAGE });
      const stale = session({ session_expires_at: new Date(now - 1) });
      expect(step('requires_action', stale, live, null)).to.deep.equal({ kind: 'wait' });
      expect(step('requires_action', session({ action_url: null }), live, null)).to.deep.equal({
        kind: 'wait',
      });
    });

    it('a card payment under way is waited out; a redirect cut off before its session is opened over', () => {
      const card = session({ kind: 'card', payment_session_id: null });
      expect(step('requires_action', card)).to.deep.equal({ kind: 'wait' });
      expect(step('pending', { ...card, status: 'pending' })).to.deep.equal({ kind: 'wait' });
      const cut = session({ status: 'pending', payment_session_id: null, action_url: null });
      expect(step('pending', cut)).to.deep.equal({ kind: 'open' });
    });
  });
});

describe('merchant: a payment link’s pages (http/link-page.ts)', () => {
  const order = {
    reference: 'inv-<1001>',
    amount_minor: 4990,
    currency: 'EUR',
  } as OrderRecord;
  const view = { shopUrl: 'https://shop.test/', again: '/pay/plt_x' };

  it('says what became of the order or the link, in words, with the status the browser gets', () => {
    const pages = [
      ['paid', 200, 'This order is already paid'],
      ['ended', 200, 'This order is closed'],
      ['expired', 410, 'This payment link has expired'],
      ['wait', 200, 'A payment for this order is under way'],
      ['limited', 429, 'Too many tries in a short time'],
      ['unavailable', 503, 'The payment page cannot be opened right now'],
    ] as const;
    for (const [kind, status, headline] of pages) {
      const { status: got, html } = renderLinkPage({ kind, order }, view);
      expect(got, kind).to.equal(status);
      expect(html).to.contain(`data-link="${kind}"`);
      expect(html).to.contain(`<h1>${headline}</h1>`);
      expect(html, 'escaped').to.contain('inv-&lt;1001&gt;');
      expect(html).to.contain('49.90 EUR');
      expect(html).to.contain('href="https://shop.test/"');
      expect(html).to.not.contain('<script');
      expect(html.includes('id="again"'), kind).to.equal(['wait', 'limited', 'unavailable'].includes(kind));
    }
    const unknown = renderLinkPage({ kind: 'unknown' }, view);
    expect(unknown.status).to.equal(404);
    expect(unknown.html).to.not.contain('<dl>');
    const refused = renderLinkPage({ kind: 'refused', order, message: 'The provider said <no>.' }, view);
    expect(refused.html).to.contain('The provider said &lt;no&gt;.');
  });
});
