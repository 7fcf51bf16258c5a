/** Settles like `promise`, or rejects after `ms` if it has not (the promise itself runs on). */
export function withDeadline<T>(promise: Promise<T>, ms: number, what = 'the operation'): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer from ${what} in ${ms} ms`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
