/**
 * HTML built by a tagged template that escapes every interpolated value unless it is already Html: the
 * model's, the repository's and the text can never become markup. Pages carry a CSP that allows
 * no script at all and only the page's own stylesheet (by hash), so even a missed escape runs nothing.
 */
import { createHash } from "node:crypto";
import type { ServerResponse } from "node:http";

export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ESCAPES[char] ?? char);
}

type Part = Html | string | number | null | undefined | false | readonly Part[];

function render(part: Part): string {
  if (part === null || part === undefined || part === false) return "";
  if (part instanceof Html) return part.text;
  if (Array.isArray(part)) return part.map(render).join("");
  return escapeHtml(String(part));
}

export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  return new Html(strings.reduce((out, text, index) => out + render(values[index - 1] ?? null) + text));
}

const STYLE = `
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1f2328;background:#f6f8fa}
header{background:#24292f;color:#fff;padding:.6rem 1rem;display:flex;gap:1rem;align-items:center}
header a{color:#fff} header form{margin-left:auto} main{padding:1rem;max-width:1200px}
table{border-collapse:collapse;background:#fff;width:100%} td,th{border:1px solid #d0d7de;padding:.3rem .5rem;text-align:left}
pre{background:#fff;border:1px solid #d0d7de;padding:.5rem;overflow:auto;white-space:pre-wrap;word-break:break-word;margin:.3rem 0}
.step{background:#fff;border:1px solid #d0d7de;border-radius:6px;padding:.5rem 1rem;margin:.8rem 0}
.step.failing{border:3px solid #cf222e;background:#ffebe9}
.label{font-weight:600;color:#57606a;margin-top:.4rem}
.diff .add{background:#dafbe1;display:block} .diff .del{background:#ffebe9;display:block} .diff .hunk{color:#0969da;display:block}
.passed{color:#1a7f37;font-weight:600} .failed{color:#cf222e;font-weight:600}
.jump{display:inline-block;background:#cf222e;color:#fff;padding:.3rem .6rem;border-radius:6px}
`;
const STYLE_HASH = createHash("sha256").update(STYLE).digest("base64");
const CSP = `default-src 'none'; style-src 'sha256-${STYLE_HASH}'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`;

/** A whole page: the CSP header, no-store (pages show private code) and no referrer leaving the app. */
export function sendPage(res: ServerResponse, status: number, title: string, body: Html, nav?: Html): void {
  const page = html`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>
<meta name="viewport" content="width=device-width,initial-scale=1"><style>${new Html(STYLE)}</style></head>
<body><header><strong>agent-fix</strong>${nav ?? ""}</header><main>${body}</main></body></html>`;
  res.writeHead(status, {
    "content-type": "text/html; charset=utf-8",
    "content-security-policy": CSP,
    "cache-control": "no-store",
    "referrer-policy": "no-referrer",
    "x-content-type-options": "nosniff",
  });
  res.end(page.text);
}
