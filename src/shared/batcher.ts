/**
 * Group commit: one call per item, one `flush` per batch. Calls made while `maxInFlight` flushes run
 * wait, and go together in the next (at most `maxBatch` each); a flush starts once the calls already
 * arrived in this turn of the event loop have joined it. A call that finds no flush running and none
 * waiting goes alone, at once: under light load nothing waits for the end of the turn; under heavy
 * load one round trip carries many, which is what makes it fast.
 *
 * `flush` answers each item in order: its result, or an Error for that item alone. Should `flush`
 * itself throw, every item of its batch gets that error.
 */
export interface BatchOptions {
  maxBatch: number;
  maxInFlight: number;
  /** Runs the next flush once the current turn's calls have arrived (tests: at once). Default setImmediate. */
  defer?: (run: () => void) => void;
}

export function batched<T, R>(
  flush: (items: readonly T[]) => Promise<readonly (R | Error)[]>,
  options: BatchOptions,
): (item: T) => Promise<R> {
  const defer = options.defer ?? ((run) => void setImmediate(run));
  const waiting: { item: T; resolve: (r: R) => void; reject: (e: unknown) => void }[] = [];
  let inFlight = 0;
  let deferred = false;

  const send = async (batch: typeof waiting) => {
    inFlight += 1;
    try {
      const results = await flush(batch.map((w) => w.item));
      batch.forEach((w, i) => {
        const result = results[i];
        if (result instanceof Error) w.reject(result);
        else if (i >= results.length)
          w.reject(new Error(`batch answered ${results.length} of ${batch.length}`));
        else w.resolve(result as R);
      });
    } catch (error) {
      for (const w of batch) w.reject(error);
    } finally {
      inFlight -= 1;
      pump();
    }
  };
  const pump = () => {
    while (inFlight < options.maxInFlight && waiting.length > 0)
      void send(waiting.splice(0, options.maxBatch));
  };
  return (item) =>
    new Promise<R>((resolve, reject) => {
      if (inFlight === 0 && !deferred && options.maxInFlight > 0) {
        void send([{ item, resolve, reject }]);
        return;
      }
      waiting.push({ item, resolve, reject });
      if (deferred) return;
      deferred = true;
      defer(() => {
        deferred = false;
        pump();
      });
    });
}
