import { GATEWAY_ID_FIELDS } from '../../src/merchant/orders/event-masking.js';
import { luhn } from '../../src/shared/card-numbers.js';

/**
 * The card-data check over what the kit wrote (a database dump, Redis): every bare run of 13 to 19
 * digits that starts as a card brand's numbers do and passes Luhn, wherever it stands, save in the
 * value of a field the gateway defines as an id or a code (orders/event-masking.ts GATEWAY_ID_FIELDS):
 * the gateway's names for a payment, numeric on many gateways, are no card data (issue 44, part 1).
 */

/** Bare 13-19 digit runs: anything that looks like a PAN. */
const PAN_LIKE = /(?<!\d)\d{13,19}(?!\d)/g;

/**
 * A gateway id field and its value in JSON text, also as kept inside another JSON string (a dumped
 * row's payload: its quotes escaped, once or more): a string value, or a number.
 */
const ID_FIELD = new RegExp(
  `(\\\\*"(?:${[...GATEWAY_ID_FIELDS].join('|')})\\\\*"\\s*:\\s*)(\\\\*"[^"\\\\]*\\\\*"|-?[\\d.eE+-]+)`,
  'g',
);

const brandStart = (digits: string) =>
  /^[3-6]/.test(digits) || (Number(digits.slice(0, 4)) >= 2221 && Number(digits.slice(0, 4)) <= 2720);

/** Every Luhn-valid, brand-prefixed run of 13 to 19 digits in `text`, ids included. */
export function cardLikeRuns(text: string): string[] {
  return (text.match(PAN_LIKE) ?? []).filter((run) => brandStart(run) && luhn(run));
}

/** `text` with the value of every gateway id field replaced by `"<id>"`. */
export function withoutGatewayIds(text: string): string {
  return text.replace(ID_FIELD, '$1"<id>"');
}

/** The card numbers in `text` outside the gateway's ids: what the card-data checks expect none of. */
export function cardNumbersIn(text: string): string[] {
  return cardLikeRuns(withoutGatewayIds(text));
}
