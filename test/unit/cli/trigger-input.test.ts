import { expect } from 'chai';
import {
  formatDuration,
  MAX_SANDBOX_SECONDS,
  parseAmount,
  parseDuration,
  parseOutcome,
  parseWait,
  settleTarget,
} from '../../../src/cli/trigger-input.js';

/** The sandbox triggers' arguments (`npm run cli -- sandbox ...`): read, or refused with one line. */
describe('CLI: the sandbox triggers’ arguments', () => {
  describe('parseDuration', () => {
    for (const [text, seconds] of [
      ['90s', 90],
      ['15m', 900],
      ['2h', 7200],
      ['7d', 604_800],
      ['1h30m', 5400],
      ['1d2h3m4s', 93_784],
      ['0h5m', 300],
      [' 2h ', 7200],
    ] as const) {
      it(`${JSON.stringify(text)} is ${seconds} s`, () => {
        expect(parseDuration(text)).to.deep.equal({ ok: true, value: seconds });
      });
    }

    for (const text of ['', '90', '2x', 'h', '1.5h', '-1h', '30m1h', '2h2h', '1 h', '2H', '1e3s']) {
      it(`${JSON.stringify(text)} is refused, naming what it got`, () => {
        expect(parseDuration(text)).to.deep.equal({
          ok: false,
          message: `must be a duration such as 90s, 15m, 2h, 7d or 1h30m (got "${text}")`,
        });
      });
    }

    it('zero is refused: the sandbox moves only forward', () => {
      expect(parseDuration('0s')).to.deep.equal({
        ok: false,
        message: 'must be longer than zero (got "0s")',
      });
      expect(parseDuration('0d0h')).to.have.property('ok', false);
    });

    it("up to the sandbox's ten years, not a second more", () => {
      expect(parseDuration('3650d')).to.deep.equal({ ok: true, value: MAX_SANDBOX_SECONDS });
      expect(parseDuration('3650d1s')).to.deep.equal({
        ok: false,
        message: 'must be at most ten years, the sandbox\'s limit (got "3650d1s")',
      });
    });
  });

  describe('formatDuration', () => {
    it('largest units first, zero units left out; what it writes reads back', () => {
      expect(formatDuration(90)).to.equal('1m30s');
      expect(formatDuration(7200)).to.equal('2h');
      expect(formatDuration(93_784)).to.equal('1d2h3m4s');
      expect(formatDuration(0)).to.equal('0s');
      expect(formatDuration(7199.6)).to.equal('2h');
      for (const s of [1, 59, 61, 3601, 86_399, 86_401, 5_000_000])
        expect(parseDuration(formatDuration(s))).to.deep.equal({ ok: true, value: s });
    });
  });

  describe('parseAmount (--amount of a chargeback)', () => {
    it('major units to exact minor units, per the currency', () => {
      expect(parseAmount('5.00', 'EUR')).to.deep.equal({ ok: true, value: 500 });
      expect(parseAmount('5', 'EUR')).to.deep.equal({ ok: true, value: 500 });
      expect(parseAmount('0.29', 'EUR')).to.deep.equal({ ok: true, value: 29 });
      expect(parseAmount('500', 'JPY')).to.deep.equal({ ok: true, value: 500 });
      expect(parseAmount('1.234', 'KWD')).to.deep.equal({ ok: true, value: 1234 });
    });

    it('more decimals than the currency has are refused, as written (5.000 EUR too)', () => {
      expect(parseAmount('5.001', 'EUR')).to.deep.equal({
        ok: false,
        message: 'must have at most 2 decimal places for EUR, the order\'s currency (got "5.001")',
      });
      expect(parseAmount('5.000', 'EUR')).to.have.property('ok', false);
      expect(parseAmount('5.5', 'JPY')).to.deep.equal({
        ok: false,
        message: 'must be a whole number for JPY, the order\'s currency (got "5.5")',
      });
    });

    it('anything but a positive decimal is refused, with or without the currency', () => {
      for (const text of ['abc', '-5', '5,00', '.5', '5.', '1e3', '', ' 5', '+5', '0x10']) {
        for (const currency of [null, 'EUR'] as const)
          expect(parseAmount(text, currency)).to.deep.equal({
            ok: false,
            message: `must be a positive amount in major units, such as 5.00 (got "${text}")`,
          });
      }
      for (const text of ['0', '0.00', '000'])
        expect(parseAmount(text, 'EUR')).to.deep.equal({
          ok: false,
          message: `must be greater than zero (got "${text}")`,
        });
    });

    it('without a currency only the form is checked: no value yet', () => {
      expect(parseAmount('5.001', null)).to.deep.equal({ ok: true, value: null });
      expect(parseAmount('0', null)).to.have.property('ok', false);
    });
  });

  it('parseOutcome: paid, failed or cancelled, nothing else', () => {
    for (const o of ['paid', 'failed', 'cancelled'])
      expect(parseOutcome(o)).to.deep.equal({ ok: true, value: o });
    for (const o of ['PAID', 'pending', 'expired', ''])
      expect(parseOutcome(o)).to.deep.equal({
        ok: false,
        message: `must be paid, failed or cancelled (got "${o}")`,
      });
  });

  it('parseWait: whole seconds from 0 to 60', () => {
    expect(parseWait('0')).to.deep.equal({ ok: true, value: 0 });
    expect(parseWait('60')).to.deep.equal({ ok: true, value: 60 });
    for (const w of ['61', '-1', '1.5', 'soon', '']) expect(parseWait(w)).to.have.property('ok', false);
  });

  it('settleTarget: a gateway session id (ps_...) or the kit’s order id', () => {
    expect(settleTarget('ps_abc')).to.deep.equal({ kind: 'session', id: 'ps_abc' });
    expect(settleTarget('ord_abc')).to.deep.equal({ kind: 'order', id: 'ord_abc' });
  });
});
