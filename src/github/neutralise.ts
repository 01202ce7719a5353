/**
 * Text the app did not write itself (the model's thoughts and summary, tool output, file names, an
 * issue's title) made inert before it reaches a pull request body, a comment or a commit message:
 * an `@login` would notify that person or team, and a closing keyword before an issue reference
 * (`Fixes #2`, `closes owner/repo#3`, `resolved: https://github.com/o/r/issues/4`) would close that
 * issue when the pull request merges. A zero-width joiner after the `@` and after the keyword's first
 * letter breaks both for GitHub and is invisible to readers. Only the app's own `Fixes #N` line, written
 * after this runs, links an issue.
 */

/** Invisible to readers; GitHub's mention and keyword parsers see a character that breaks the word. */
export const ZERO_WIDTH_JOINER = "\u200D";

/** GitHub's closing keywords (docs: "Linking a pull request to an issue"), matched case-insensitively. */
export const CLOSING_KEYWORDS = [
  "close",
  "closes",
  "closed",
  "fix",
  "fixes",
  "fixed",
  "resolve",
  "resolves",
  "resolved",
] as const;

// Entities GitHub's renderer turns back into `@` and `#` before it looks for mentions and references.
const AT_ENTITY = /&(?:#0*64|#x0*40|commat);/gi;
const HASH_ENTITY = /&(?:#0*35|#x0*23|num);/gi;

/**
 * `@` then a login or `org/team`, not after a letter or digit (an email address mentions no one).
 * Inside a URL the `@` is percent-encoded instead, which keeps the link working.
 */
const MENTION = /(?<![A-Za-z0-9_])@(?=[A-Za-z0-9_-])/g;
const URL_TEXT = /https?:\/\/[^\s<>"'`]+/gi;

/**
 * A closing keyword as a word, followed (after a colon, spaces or markdown punctuation) by something
 * that refers to an issue: `#N`, `GH-N`, `owner/repo#N`, or a URL.
 */
const CLOSING = new RegExp(
  `(?<![A-Za-z0-9_])(${CLOSING_KEYWORDS.join("|")})(?![A-Za-z0-9_])` +
    String.raw`(?=[\s:*_~\x60\[\]()>]*(?:#|GH-|[\w.-]+/[\w.-]+#|https?://|www\.))`,
  "gi",
);

/** `text` with every mention and every closing-keyword reference made inert; otherwise unchanged. */
export function neutralise(text: string): string {
  return text
    .replace(AT_ENTITY, "@")
    .replace(HASH_ENTITY, "#")
    .replace(URL_TEXT, (url) => url.replaceAll("@", "%40"))
    .replace(MENTION, `@${ZERO_WIDTH_JOINER}`)
    .replace(CLOSING, (keyword: string) => `${keyword[0]}${ZERO_WIDTH_JOINER}${keyword.slice(1)}`);
}
