/**
 * GitHub rejects comment and pull request bodies over 65,536 characters (422 "Body is too long
 * (maximum is 65536 characters)"), counting Unicode code points: an emoji outside the BMP is one
 * character to GitHub and two UTF-16 units to JavaScript.
 */
export const GITHUB_BODY_LIMIT = 65_536;

export const TRUNCATION_NOTE = "\n\n_…cut to fit GitHub's 65,536-character limit._";

/** The length of `text` as GitHub counts it (code points). */
export function githubLength(text: string): number {
  // Every code point is one or two UTF-16 units: short texts need no counting.
  if (text.length <= GITHUB_BODY_LIMIT) return countCodePoints(text);
  let count = 0;
  for (const _ of text) count++;
  return count;
}

function countCodePoints(text: string): number {
  let count = text.length;
  for (let i = 0; i < text.length - 1; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        count--;
        i++;
      }
    }
  }
  return count;
}

/** The first `max` characters of `text` as GitHub counts them, never half of a surrogate pair. */
export function cutAt(text: string, max: number): string {
  if (text.length <= max) return text;
  let units = 0;
  let count = 0;
  for (const point of text) {
    if (count === max) break;
    units += point.length;
    count++;
  }
  return text.slice(0, units);
}

/** Closes a code fence and <details> blocks left open by a cut, so the note after them shows. */
function closeOpenBlocks(cut: string): string {
  let closed = cut;
  const fences = (closed.match(/^```/gm) ?? []).length;
  if (fences % 2 === 1) closed += "\n```";
  const opened = (closed.match(/<details>/g) ?? []).length - (closed.match(/<\/details>/g) ?? []).length;
  for (let i = 0; i < opened; i++) closed += "\n</details>";
  return closed;
}

/** Cuts `text` to fit a comment as GitHub counts, saying so. Text that fits is returned unchanged. */
export function fitComment(text: string, limit = GITHUB_BODY_LIMIT): string {
  if (githubLength(text) <= limit) return text;
  let keep = limit - githubLength(TRUNCATION_NOTE);
  for (;;) {
    const result = closeOpenBlocks(cutAt(text, keep)) + TRUNCATION_NOTE;
    const over = githubLength(result) - limit;
    if (over <= 0) return result;
    keep -= over;
  }
}
