/**
 * A setting the operator must fix: the process stops with one line, `<label>: <message>`, and exit 1
 * (src/startup.ts); a reader that finds several (the configuration) gives a line for each. Each
 * reader of a setting (configuration, seed, state file) has its own subclass, so the entry points
 * need not know them all.
 */
export abstract class SettingError extends Error {
  /** What the line names first: the variable, or the file's role. */
  abstract readonly label: string;

  line(): string {
    return `${this.label}: ${this.message}`;
  }

  /** Every line to print: one, unless a subclass holds several problems. */
  lines(): string[] {
    return [this.line()];
  }
}
