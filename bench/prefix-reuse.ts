/**
 * Prefix reuse, as bench:history and bench:tokens measure it: the share of each request's prompt that
 * repeats the previous request's prompt from its start (what a provider's prompt cache can serve),
 * measured on the messages serialised one JSON object per line, in characters.
 */
import type { ChatMessage } from "../src/shared/contracts.js";

export function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/** A request's messages as the prefix is measured on. */
export function serialised(messages: readonly ChatMessage[]): string {
  return messages.map((message) => JSON.stringify(message)).join("\n");
}

/** Per request from the second on: the characters it shares from its start with the request before it. */
export function sharedPrefixes(requests: readonly string[]): { shared: number; length: number }[] {
  return requests
    .slice(1)
    .map((request, index) => ({ shared: commonPrefix(requests[index]!, request), length: request.length }));
}

/** The mean share of each request (2..n) that repeats the previous one's prefix; 0 for fewer than 2. */
export function prefixReuse(requests: readonly string[]): number {
  const shares = sharedPrefixes(requests).map(({ shared, length }) => shared / length);
  return shares.length === 0 ? 0 : shares.reduce((sum, share) => sum + share, 0) / shares.length;
}
