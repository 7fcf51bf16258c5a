import { expect } from 'chai';
import { ConfigError } from '../../../src/config.js';
import { SandboxStateError } from '../../../src/gateway/persistence/state-file.js';
import { SeedError } from '../../../src/gateway/state/seed.js';
import { settingProblem } from '../../../src/startup.js';

/** What every entry point prints for a setting it cannot start with: one line, naming the setting. */
describe('startup: the one line for a bad setting', () => {
  it('names the setting of each reader: configuration, seed, sandbox state', () => {
    expect(settingProblem(new ConfigError('PORT: must be a port number from 0 to 65535'))).to.equal(
      'configuration: PORT: must be a port number from 0 to 65535',
    );
    expect(settingProblem(new SeedError('merchants.0.id: is required'))).to.equal(
      'gateway seed: merchants.0.id: is required',
    );
    expect(settingProblem(new SandboxStateError('var/s.json', 'is not valid JSON'))).to.equal(
      'GATEWAY_SANDBOX_STATE: sandbox state file var/s.json: is not valid JSON',
    );
  });

  it('a configuration with several bad settings: a line for each, each naming its setting', () => {
    const error = new ConfigError([
      'PORT: must be a port number from 0 to 65535',
      'OPS_API_TOKEN: is required in production',
    ]);
    expect(settingProblem(error)).to.equal(
      'configuration: PORT: must be a port number from 0 to 65535\nconfiguration: OPS_API_TOKEN: is required in production',
    );
  });

  it('a database that refuses or a port in use names DATABASE_URL or the ports', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:3307'), { code: 'ECONNREFUSED' });
    expect(settingProblem(refused)).to.equal('DATABASE_URL: cannot connect to the database (ECONNREFUSED)');
    const sequelize = Object.assign(new Error('refused'), {
      name: 'SequelizeConnectionRefusedError',
      parent: { code: 'ECONNREFUSED' },
    });
    expect(settingProblem(sequelize)).to.equal('DATABASE_URL: cannot connect to the database (ECONNREFUSED)');
    const inUse = Object.assign(new Error('listen EADDRINUSE: address already in use 0.0.0.0:3000'), {
      code: 'EADDRINUSE',
    });
    expect(settingProblem(inUse)).to.match(/^PORT or GATEWAY_PORT: the port is already in use/);
    const noSuchAddress = Object.assign(
      new Error('listen EADDRNOTAVAIL: address not available 192.0.2.1:3000'),
      {
        code: 'EADDRNOTAVAIL',
      },
    );
    expect(settingProblem(noSuchAddress)).to.match(/^HOST: this machine has no such address to listen on/);
    const mayNotCreate = Object.assign(new Error('denied'), {
      name: 'SequelizeDatabaseError',
      parent: { code: 'ER_TABLEACCESS_DENIED_ERROR', sqlMessage: "CREATE command denied to user 'shop'" },
    });
    expect(settingProblem(mayNotCreate)).to.equal(
      "DATABASE_URL: the database refuses this user what the kit needs (ER_TABLEACCESS_DENIED_ERROR: CREATE command denied to user 'shop')",
    );
  });

  it('anything else is not a setting: null, so it is thrown with its stack', () => {
    expect(settingProblem(new TypeError('x is undefined'))).to.equal(null);
    expect(settingProblem('a string')).to.equal(null);
    expect(settingProblem(undefined)).to.equal(null);
  });
});
