import assert from "node:assert/strict";

/** Assert that `actual` contains every key/value of `expected` (recursively for plain objects). */
export function assertPartial(actual: unknown, expected: Record<string, unknown>, path = "value"): void {
  assert.ok(actual !== null && typeof actual === "object", `${path} is not an object`);
  for (const [key, want] of Object.entries(expected)) {
    const got: unknown = (actual as Record<string, unknown>)[key];
    if (want !== null && typeof want === "object" && !Array.isArray(want)) {
      assertPartial(got, want as Record<string, unknown>, `${path}.${key}`);
    } else {
      assert.deepEqual(got, want, `${path}.${key}`);
    }
  }
}
