import { expect } from "vitest";

/** No error text may carry a stack, a host, a port, a server path or a credential. */
export function expectNoLeak(text: string, secrets: string[] = []): void {
  expect(text).not.toMatch(/\bat [\w.<>]+ \(|\.ts:\d+|\.js:\d+/); // stack frames
  expect(text).not.toMatch(/127\.0\.0\.1|localhost|0\.0\.0\.0/);
  expect(text).not.toMatch(/\/work\/|\/tmp\/|\/home\/|\/root\/|node_modules/);
  expect(text).not.toMatch(/https?:\/\//);
  for (const secret of secrets) expect(text).not.toContain(secret);
}
