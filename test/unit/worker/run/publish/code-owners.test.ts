/**
 * CODEOWNERS as GitHub documents it ("About code owners", its example file): the last matching pattern
 * wins, gitignore-style patterns, comments, teams and emails, lines GitHub skips as errors.
 */
import { describe, expect, it } from "vitest";
import { ownersOf, parseCodeOwners, reviewersOf } from "../../../../../worker/run/publish/code-owners.js";

// GitHub's example CODEOWNERS file (docs.github.com, "About code owners"), the parts that match paths.
const GITHUB_EXAMPLE = `
# This is a comment.
# Each line is a file pattern followed by one or more owners.

# These owners will be the default owners for everything in
# the repo. Unless a later match takes precedence,
# @global-owner1 and @global-owner2 will be requested for
# review when someone opens a pull request.
*       @global-owner1 @global-owner2

# Order is important; the last matching pattern takes the most
# precedence. When someone opens a pull request that only
# modifies JS files, only @js-owner and not the global
# owner(s) will be requested for a review.
*.js    @js-owner #This is an inline comment.

# You can also use email addresses if you prefer.
*.go docs@example.com

# Teams can be specified as code owners as well.
*.txt @octo-org/octocats

# In this example, @doctocat owns any files in the build/logs
# directory at the root of the repository and any of its
# subdirectories.
/build/logs/ @doctocat

# The \`docs/*\` pattern will match files like
# \`docs/getting-started.md\` but not further nested files like
# \`docs/build-app/troubleshooting.md\`.
docs/*  docs@example.com

# In this example, @octocat owns any file in an apps directory
# anywhere in your repository.
apps/ @octocat

# In this example, @doctocat owns any file in the \`/docs\`
# directory in the root of your repository and any of its
# subdirectories.
/docs/ @doctocat

# In this example, any change inside the \`/scripts\` directory
# will require approval from @doctocat or @octocat.
/scripts/ @doctocat @octocat

# In this example, @octocat owns any file in a \`/logs\` directory such as
# \`/build/logs\`, \`/scripts/logs\`, and \`/deeply/nested/logs\`. Any changes
# in a \`/logs\` directory will require approval from @octocat.
**/logs @octocat

# In this example, @octocat owns any file in the \`/apps\`
# directory in the root of your repository except for the \`/apps/github\`
# subdirectory, as its owners are left empty. Without an owner, changes
# to \`apps/github\` can be made with the approval of any user who has
# write access to the repository.
/apps/ @octocat
/apps/github
`;

describe("CODEOWNERS", () => {
  const rules = parseCodeOwners(GITHUB_EXAMPLE);
  const owners = (path: string) => ownersOf(rules, [path]);

  it("gives each file the owners of the last pattern that matches it", () => {
    expect(owners("README.md")).toEqual(["@global-owner1", "@global-owner2"]);
    expect(owners("src/index.js")).toEqual(["@js-owner"]); // the inline comment is not an owner
    expect(owners("main.go")).toEqual(["docs@example.com"]);
    expect(owners("notes/a.txt")).toEqual(["@octo-org/octocats"]);
    expect(owners("build/logs/today.log")).toEqual(["@octocat"]); // **/logs comes after /build/logs/
    expect(owners("scripts/deploy.sh")).toEqual(["@doctocat", "@octocat"]);
    expect(owners("deeply/nested/logs/x")).toEqual(["@octocat"]);
    expect(owners("src/apps/x.py")).toEqual(["@octocat"]);
  });

  it("anchors a leading slash to the root and leaves a pattern without owners unowned", () => {
    expect(owners("docs/getting-started.md")).toEqual(["@doctocat"]);
    expect(owners("apps/web/page.html")).toEqual(["@octocat"]);
    expect(owners("apps/github/readme.md")).toEqual([]);
  });

  it("puts the owners of several files together once", () => {
    expect(ownersOf(rules, ["a.js", "b.js", "scripts/x", "README.md"])).toEqual([
      "@js-owner",
      "@doctocat",
      "@octocat",
      "@global-owner1",
      "@global-owner2",
    ]);
  });

  it("skips the lines GitHub reports as errors: negation, ranges, an owner that is not one", () => {
    const skipped = parseCodeOwners("* @all\n!keep.txt @nobody\n*.[ch] @c-owner\nlib/ not-an-owner\n");
    expect(skipped.map((r) => r.pattern)).toEqual(["*"]);
    expect(ownersOf(skipped, ["keep.txt", "x.c", "lib/a"])).toEqual(["@all"]);
  });

  it("requests people and the repository's organisation's teams; emails and other orgs' teams cannot be", () => {
    expect(reviewersOf(["@alice", "@octo/reviewers", "@other/team", "a@example.com"], "octo")).toEqual({
      users: ["alice"],
      teams: ["reviewers"],
      unrequestable: ["@other/team", "a@example.com"],
    });
  });
});
