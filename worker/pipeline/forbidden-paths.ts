/**
 * Glob matching for the repository config's forbidden paths: `**` spans directories, `*` and `?`
 * stay within one path segment, a pattern ending in `/` covers everything below it.
 */
export function globToRegExp(pattern: string): RegExp {
  const glob = pattern.endsWith("/") ? `${pattern}**` : pattern;
  let source = "";
  for (let i = 0; i < glob.length; i++) {
    const char = glob[i]!;
    if (char === "*" && glob[i + 1] === "*") {
      // `**/` matches zero or more whole directories; a trailing `**` matches anything.
      if (glob[i + 2] === "/") {
        source += "(?:.*/)?";
        i += 2;
      } else {
        source += ".*";
        i += 1;
      }
    } else if (char === "*") source += "[^/]*";
    else if (char === "?") source += "[^/]";
    else source += char.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${source}$`);
}

/** The changed paths that some forbidden pattern matches. */
export function forbiddenChanges(paths: readonly string[], patterns: readonly string[]): string[] {
  const regexps = patterns.map(globToRegExp);
  return paths.filter((path) => regexps.some((regexp) => regexp.test(path.replace(/^\.\//, ""))));
}
