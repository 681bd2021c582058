/**
 * The way a layer observes a service's calls without re-stating the service: the spans over the LLM client,
 * the sandbox and the gates runner (their tracing.ts), and the sandbox's metrics. Such a layer names only the
 * methods it observes; every other member of the interface (`close`, the `load` and `pids` getters) reads
 * through to the service as it is at the moment it is read, so a member added to an interface needs no change
 * in the layers over it, and the result has exactly the service's type.
 */

/** A function of any arguments; `never[]` so that every method, whatever it takes, is one. */
type AnyMethod = (...args: never[]) => unknown;

/** The names of T's members that are methods. */
type MethodName<T> = { [K in keyof T]-?: T[K] extends AnyMethod ? K : never }[keyof T];

/**
 * For some of T's methods, what to do in place of a call: given `call`, which makes the call on the service
 * with the caller's arguments, and those arguments (to read, never to change), return what the caller gets.
 */
export type MethodWrappers<T> = {
  [K in MethodName<T>]?: T[K] extends (...args: infer A) => infer R ? (call: () => R, ...args: A) => R : never;
};

type Wrapper = (call: () => unknown, ...args: unknown[]) => unknown;

/**
 * `service` with the methods `wrappers` names wrapped, and every other member read through to it. A Proxy,
 * so that getters stay live and nothing has to list the members left alone.
 */
export function wrapMethods<T extends object>(service: T, wrappers: MethodWrappers<T>): T {
  const wrapped = new Map<PropertyKey, (...args: unknown[]) => unknown>();
  for (const [name, wrapper] of Object.entries(wrappers) as Array<[string, Wrapper | undefined]>) {
    if (!wrapper) continue;
    // The method is read when it is called, as a caller of the service itself would read it.
    const call = (args: unknown[]) => () =>
      (Reflect.get(service, name) as (...a: unknown[]) => unknown).apply(service, args);
    wrapped.set(name, (...args: unknown[]) => wrapper(call(args), ...args));
  }
  return new Proxy(service, {
    get(target, key) {
      const own = wrapped.get(key);
      if (own) return own;
      const member: unknown = Reflect.get(target, key);
      // Called on the service, as before it was wrapped: a method may use `this`.
      return typeof member === 'function' ? member.bind(target) : member;
    },
  });
}
