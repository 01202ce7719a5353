/**
 * Text the app did not write itself (the model's thoughts and summary, tool output, file names, an
 * issue's title) made inert before it reaches a pull request body, a comment or a commit message:
 * an `@login` would notify that person or team, and a closing keyword before an issue reference
 * (`Fixes #2`, `closes owner/repo#3`, `resolved: https://github.com/o/r/issues/4`) would close that
 * issue when the pull request merges. A zero-width joiner after the `@` and after the keyword's first
 * letter breaks both for GitHub and is invisible to readers. Only the app's own `Fixes #N` line, written
 * after this runs, links an issue. Links and images first go through inert-links.ts: only those to a
 * host the operator allows stay links; no other is fetched or clickable.
 */
import { inertLinks, inertPlainLinks, type LinkPolicy } from "./inert-links.js";

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

/** Mentions and closing keywords made inert in text whose links were already made inert. */
function inertReferences(text: string): string {
  return text
    .replace(URL_TEXT, (url) => url.replaceAll("@", "%40"))
    .replace(MENTION, `@${ZERO_WIDTH_JOINER}`)
    .replace(CLOSING, (keyword: string) => `${keyword[0]}${ZERO_WIDTH_JOINER}${keyword.slice(1)}`);
}

/**
 * `text` (markdown: a body, a comment) with every mention, every closing-keyword reference and every
 * link or image to a host `links` does not allow made inert; otherwise it reads the same. Entities
 * are decoded first (inertLinks), so `&#64;` mentions no one either.
 */
export function neutralise(text: string, links: LinkPolicy): string {
  return inertReferences(inertLinks(text, links));
}

/** The same for plain text GitHub autolinks but renders no markdown in: a commit message. */
export function neutralisePlainText(text: string, links: LinkPolicy): string {
  return inertReferences(inertPlainLinks(text, links));
}
