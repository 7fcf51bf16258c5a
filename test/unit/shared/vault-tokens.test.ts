import { expect } from 'chai';
import { MASKED_VAULT_TOKEN, maskVaultTokens } from '../../../src/shared/vault-tokens.js';

/** Vault tokens masked in the gateway JSON the kit keeps (issue 41, part 5). */
describe('shared: vault tokens masked in kept payloads', () => {
  const TOKEN = 'vt_Ab3dEf6hIj9kLm2nOp5qRs8t';

  it('leaves a payload that holds none as it is, byte for byte', () => {
    const text = '{ "id": "evt_1",  "data": {"transaction": {"id": "100", "vault_token": null}}}';
    expect(maskVaultTokens(text)).to.equal(text);
    expect(maskVaultTokens('{"a":"vault of heaven"}')).to.equal('{"a":"vault of heaven"}');
    // The sandbox's events: an `evt_` id, and the key with null (neither a token; read without a parse).
    const sandbox = '{"id":"evt_8htPov2t6rpVnXkMAXTd4huZ","data":{"transaction":{"vault_token" : null}}}';
    expect(maskVaultTokens(sandbox)).to.equal(sandbox);
    expect(JSON.parse(maskVaultTokens(`{"id":"evt_1","vault_token" : "${TOKEN}"}`))).to.deep.equal({
      id: 'evt_1',
      vault_token: MASKED_VAULT_TOKEN,
    });
    expect(maskVaultTokens('not json, vt_Ab3dEf6hIj9kLm2nOp5qRs8t')).to.equal(
      'not json, vt_Ab3dEf6hIj9kLm2nOp5qRs8t',
    );
  });

  it('masks the value of every vault_token key, at any depth and in lists, and tokens standing in text', () => {
    const payload = {
      id: 'evt_1',
      data: {
        transaction: { id: '100', vault_token: 'tok_of_another_gateway', status_reason: `saved ${TOKEN}.` },
        payment_instrument: { vault_token: TOKEN, last4: '4242' },
        list: [TOKEN, { vault_token: TOKEN }, 7, null],
      },
    };
    const masked = JSON.parse(maskVaultTokens(JSON.stringify(payload)));
    expect(masked).to.deep.equal({
      id: 'evt_1',
      data: {
        transaction: {
          id: '100',
          vault_token: MASKED_VAULT_TOKEN,
          status_reason: `saved ${MASKED_VAULT_TOKEN}.`,
        },
        payment_instrument: { vault_token: MASKED_VAULT_TOKEN, last4: '4242' },
        list: [MASKED_VAULT_TOKEN, { vault_token: MASKED_VAULT_TOKEN }, 7, null],
      },
    });
  });

  it('reads the JSON, not only its bytes: an escaped key or token, a __proto__ key', () => {
    const escapedKey = `{"data":{"vault\\u005ftoken":"${TOKEN}"}}`;
    expect(JSON.parse(maskVaultTokens(escapedKey))).to.deep.equal({
      data: { vault_token: MASKED_VAULT_TOKEN },
    });
    const escapedToken = `{"data":{"note":"\\u0076t_Ab3dEf6hIj9kLm2nOp5qRs8t"}}`;
    expect(maskVaultTokens(escapedToken)).to.not.contain('Ab3dEf6hIj9kLm2nOp5qRs8t');
    const proto = `{"__proto__":{"vault_token":"${TOKEN}"},"x":{"__proto__":"${TOKEN}"}}`;
    expect(maskVaultTokens(proto)).to.not.contain(TOKEN);
  });

  it('does not take a longer word for a token: vt_ inside another identifier, or too short', () => {
    const text = '{"a":"xvt_Ab3dEf6hIj9kLm2nOp5qRs8t","b":"vt_short","c":"vt_Ab3dEf6hIj9kLm2nOp5qRs8t_x"}';
    expect(maskVaultTokens(text)).to.equal(text);
  });
});
