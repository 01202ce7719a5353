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

/**
 * URLs in a body that GitHub would fetch (images) or make clickable (links, autolinks, HTML), on a
 * host not in `allowedHosts`, read by rules written apart from the app's own scanner and stricter
 * than GitHub: outside fenced code blocks and code spans, any HTML tag with an attribute or `<url>`, any entity that
 * could hide a character, any `]:` (a reference definition), any `](` to another host and any bare
 * `scheme://` or `www.` URL on another host count. Lines quoted with `>` are read without the quote.
 */
export function liveOutsideUrls(body: string, allowedHosts: readonly string[]): string[] {
  const allowed = (url: string) => {
    try {
      const parsed = new URL(/^www\./i.test(url) ? `http://${url}` : url, "https://github.com/o/r/pull/1");
      return /^https?:$/.test(parsed.protocol) && !parsed.username && allowedHosts.includes(parsed.host);
    } catch {
      return false;
    }
  };
  const live: string[] = [];
  const lines = body.split("\n").map((line) => line.replace(/^(?:> ?)+/, ""));
  let fence: { char: string; length: number } | null = null;
  for (const line of lines) {
    const marker = /^(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence) {
      if (marker && marker[0] === fence.char && marker.length >= fence.length && line.trim() === marker)
        fence = null;
      continue;
    }
    if (marker) {
      fence = { char: marker[0] ?? "`", length: marker.length };
      continue;
    }
    // Code spans: an unescaped backtick run and the next run of the same length on the line.
    let prose = "";
    for (let i = 0; i < line.length; ) {
      if (line[i] === "\\") {
        prose += line.slice(i, i + 2);
        i += 2;
        continue;
      }
      if (line[i] === "`") {
        const run = /^`+/.exec(line.slice(i))?.[0] ?? "`";
        const rest = line.slice(i + run.length);
        const close = new RegExp(`(?<!\`)${run}(?!\`)`).exec(rest);
        if (close) {
          prose += " ";
          i += run.length + close.index + run.length;
          continue;
        }
      }
      prose += line[i];
      i++;
    }
    const text = prose.replace(/\\[!-/:-@[-`{-~]/g, " ");
    // An HTML tag with no attribute (`<details>`) or a comment (the app's markers) fetches nothing.
    for (const m of text.matchAll(/<[A-Za-z/!?][^>]*>?/g))
      if (!/^<!--.*-->$|^<\/?[A-Za-z][A-Za-z0-9]*\s*>$/.test(m[0])) live.push(`html ${m[0]}`);
    for (const m of text.matchAll(/&(?!(?:lt|gt|amp|quot);)#?[A-Za-z0-9]+;/g)) live.push(`entity ${m[0]}`);
    for (const m of text.matchAll(/\]:/g)) live.push(`definition ${text.slice(m.index, m.index + 60)}`);
    for (const m of text.matchAll(/\]\(\s*<?([^\s)>]*)/g))
      if (!allowed(m[1] ?? "")) live.push(`link ${m[1]}`);
    for (const m of text.matchAll(/(?:[A-Za-z][A-Za-z0-9+.-]*:\/\/|www\.)[^\s<]*/gi))
      if (!allowed(m[0])) live.push(`url ${m[0]}`);
  }
  return live;
}
