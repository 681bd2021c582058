/**
 * Abort handling that leaks nothing. However many requests and streams share one caller
 * `AbortSignal`, it gets at most one listener from this SDK, removed as soon as the last of them
 * ends: a long-lived signal (a component's lifetime, a server's shutdown) never collects listeners
 * or triggers `MaxListenersExceededWarning`. The SDK never hands a caller's signal to `fetch`
 * either; each request gets a controller of its own, linked through here.
 */
interface Watchers {
  callbacks: Set<() => void>;
  fire: () => void;
}

const watched = new WeakMap<AbortSignal, Watchers>();

/** Calls `onAbort` when `signal` aborts; the returned function stops watching. */
export function watchAbort(signal: AbortSignal | undefined, onAbort: () => void): () => void {
  if (!signal) return () => {};
  if (signal.aborted) {
    onAbort();
    return () => {};
  }
  let watchers = watched.get(signal);
  if (!watchers) {
    const callbacks = new Set<() => void>();
    const fire = () => {
      watched.delete(signal);
      for (const callback of [...callbacks]) callback();
    };
    watchers = { callbacks, fire };
    watched.set(signal, watchers);
    signal.addEventListener('abort', fire, { once: true });
  }
  const { callbacks, fire } = watchers;
  callbacks.add(onAbort);
  return () => {
    callbacks.delete(onAbort);
    if (callbacks.size === 0 && watched.get(signal)?.fire === fire) {
      watched.delete(signal);
      signal.removeEventListener('abort', fire);
    }
  };
}

/** Resolves after `ms`, or rejects with `abortError()` as soon as `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal | undefined, abortError: () => Error): Promise<void> {
  return new Promise((resolve, reject) => {
    let unwatch = () => {};
    const timer = setTimeout(() => {
      unwatch();
      resolve();
    }, ms);
    unwatch = watchAbort(signal, () => {
      clearTimeout(timer);
      reject(abortError());
    });
  });
}
