import { type RandomSource, randomId } from '../../shared/ids.js';
import { instrumentToKeep, type PaymentInstrument, type SaveFacts } from '../domain/instruments.js';

/**
 * Payment instruments (sandbox.md section 11): the records by vault token, in the order they were
 * created (lists show them newest first), and which one is a customer's active instrument for a card.
 */
export class InstrumentStore {
  readonly records = new Map<string, PaymentInstrument>();
  /** merchant, customer and card fingerprint -> the token of the active instrument for them. */
  readonly #activeByCard = new Map<string, string>();

  constructor(private readonly random: RandomSource) {}

  /**
   * Keeps the card of an approved payment for a customer: the instrument they have for it, or a new
   * one with a new `vt_` token (sandbox.md section 11). Returns the instrument as kept.
   */
  keep(f: Omit<SaveFacts, 'existing' | 'newToken'>): PaymentInstrument {
    let newToken = randomId('vt_', this.random);
    // A restart on a seeded source could draw a token again: no token names two instruments.
    while (this.records.has(newToken)) newToken = randomId('vt_', this.random);
    const existing = this.forCard(f.merchantId, f.merchantCustomerId, f.fingerprint);
    const kept = instrumentToKeep({ ...f, existing, newToken });
    this.save(kept);
    return kept;
  }

  get(vaultToken: string): PaymentInstrument | undefined {
    return this.records.get(vaultToken);
  }

  /** The instrument kept for this merchant's customer and card: the active one, if any. */
  forCard(
    merchantId: number,
    merchantCustomerId: string,
    fingerprint: string,
  ): PaymentInstrument | undefined {
    const token = this.#activeByCard.get(cardKey(merchantId, merchantCustomerId, fingerprint));
    return token === undefined ? undefined : this.records.get(token);
  }

  /** Stores a new or changed record and keeps the index true (a revoked one leaves it). */
  save(i: PaymentInstrument): void {
    this.records.set(i.vaultToken, i);
    const key = cardKey(i.merchantId, i.merchantCustomerId, i.fingerprint);
    if (i.status === 'active') this.#activeByCard.set(key, i.vaultToken);
    else if (this.#activeByCard.get(key) === i.vaultToken) this.#activeByCard.delete(key);
  }

  /** A customer's active instruments, newest first. */
  activeOf(merchantId: number, merchantCustomerId: string): PaymentInstrument[] {
    return [...this.records.values()]
      .filter(
        (i) =>
          i.merchantId === merchantId && i.merchantCustomerId === merchantCustomerId && i.status === 'active',
      )
      .reverse();
  }
}

// JSON, so that no customer id (any text) can make two keys meet.
const cardKey = (merchantId: number, merchantCustomerId: string, fingerprint: string) =>
  JSON.stringify([merchantId, merchantCustomerId, fingerprint]);
