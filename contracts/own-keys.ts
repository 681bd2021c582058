/**
 * Lookups in a table written as an object literal, by a key that someone else chose: a lab unit a client sent,
 * an error code in a response, an agent a model named. `table[key]` also finds what every object inherits
 * (`constructor`, `toString`, `__proto__`, …): a function, or Object.prototype, where the table has nothing, and
 * the caller fails far from the cause (a lab unit spelled `constructor` was a 500). These read the table's own
 * properties only. No dependency and no Node built-in: the SDK, the CLI and workflow code use them too.
 */

/** Whether `key` is one of the table's own keys; narrows it to them. */
export function isOwnKey<T extends object>(table: T, key: PropertyKey): key is keyof T {
  return Object.hasOwn(table, key);
}

/** The table's own value under `key`, or undefined when the table has none. */
export function ownValue<T extends object>(table: T, key: PropertyKey): T[keyof T] | undefined {
  return isOwnKey(table, key) ? table[key] : undefined;
}
