// Mocha's spec reporter, plus the run's counts written to $TEST_SUMMARY_FILE (when set) so that
// .ci/run can print the plain "N passed, N failed" line without parsing mocha's own summary.
'use strict';
const fs = require('node:fs');
const Mocha = require('mocha');

class CountingReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    runner.once(Mocha.Runner.constants.EVENT_RUN_END, () => {
      const file = process.env.TEST_SUMMARY_FILE;
      if (!file) return;
      const { passes, failures, pending } = this.stats;
      fs.writeFileSync(file, JSON.stringify({ passes, failures, pending }));
    });
  }
}

module.exports = CountingReporter;
