/**
 * `Promise.withResolvers` (Node 22) for Node 20, which Restate's SDK calls. Imported before
 * the SDK; does nothing where Node has it.
 */
const promise = Promise as unknown as { withResolvers?: unknown };
promise.withResolvers ??= <T>() => {
  let resolve!: (value: T | PromiseLike<T>) => void;
  let reject!: (reason?: unknown) => void;
  const created = new Promise<T>((yes, no) => {
    resolve = yes;
    reject = no;
  });
  return { promise: created, resolve, reject };
};
