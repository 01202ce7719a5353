/**
 * What GitHub would act on in a body it receives, by its documented rules, written independently of
 * the app's neutraliser so tests can check it: `@login` mentions (notify), and closing keywords
 * (close, closes, closed, fix, fixes, fixed, resolve, resolves, resolved; any case; an optional colon)
 * before `#N`, `OWNER/REPO#N` or an issue URL (close the issue on merge).
 */

/** Logins mentioned live: `@` after the start or a non-word character, then a login. */
export function liveMentions(body: string): string[] {
  return [...body.matchAll(/(?:^|[^A-Za-z0-9_`])@([A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)/g)].map(
    (m) => m[1] ?? "",
  );
}

/** Issues a closing keyword would close, e.g. `#2`, `owner/repo#3`, `owner/repo/issues/4`. */
export function liveClosingReferences(body: string): string[] {
  const keyword = /\b(?:close|closes|closed|fix|fixes|fixed|resolve|resolves|resolved)\b:?\s+/.source;
  const reference = /(#\d+|[\w.-]+\/[\w.-]+#\d+|https?:\/\/[^\s/]+\/([\w.-]+\/[\w.-]+\/issues\/\d+))/.source;
  return [...body.matchAll(new RegExp(keyword + reference, "gi"))].map((m) => m[2] ?? m[1] ?? "");
}
