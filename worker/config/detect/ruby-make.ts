/** Ruby (bundler, then rake or rspec) and a Makefile's `test` target. */
import { cachePath, type EcosystemRule } from "./ecosystem-rule.js";

/**
 * Gems bundler installs go to the workspace's cache (kept with it; the root may be read-only), and the
 * gems the image already has stay visible: GEM_HOME adds a directory to the gem path, where BUNDLE_PATH
 * would replace the path, so that `bundle exec rake` of a lockfile naming only the image's own rake and
 * minitest would need rubygems.org, even offline with nothing to download. A gem the image lacks (or
 * another version) is downloaded into GEM_HOME during setup, with setup's network, as before.
 */

export const rubyRule: EcosystemRule = {
  ecosystem: "ruby",
  marks: (names) => names.has("Gemfile"),
  reads: (names) => ["Gemfile", ...(names.has("Rakefile") ? ["Rakefile"] : [])],
  detect({ names, text }) {
    const rakefile = text("Rakefile");
    const rspec =
      /\brspec\b/.test(text("Gemfile") ?? "") &&
      (names.has(".rspec") || [...names].some((name) => name.startsWith("spec/")));
    let test: string;
    if (rakefile !== undefined && /\btask\s*\(?\s*:?default\b|:default\s*=>/.test(rakefile)) {
      test = "bundle exec rake";
    } else if (rspec) {
      test = "bundle exec rspec";
    } else if (rakefile !== undefined && /TestTask|task\s*\(?\s*:test\b/.test(rakefile)) {
      test = "bundle exec rake test";
    } else {
      return null;
    }
    return {
      evidence: ["Gemfile", test.replace("bundle exec ", "")],
      env: { GEM_HOME: cachePath("gems") },
      setup: ["bundle install"],
      test,
    };
  },
};

export const MAKEFILES = ["GNUmakefile", "makefile", "Makefile"];

/** Whether a Makefile has a rule line `test:` or `test check:` (not a `test := ...` assignment). */
export const makeHasTestTarget = (body: string) => /^(?:[\w.-]+\s+)*test(?:\s+[\w.-]+)*\s*:(?!=)/m.test(body);

export const makeRule: EcosystemRule = {
  ecosystem: "make",
  marks: (names) => MAKEFILES.some((name) => names.has(name)),
  reads: (names) => MAKEFILES.filter((name) => names.has(name)).slice(0, 1),
  detect({ names, text }) {
    const file = MAKEFILES.find((name) => names.has(name));
    const body = file ? text(file) : undefined;
    if (!file || body === undefined || !makeHasTestTarget(body)) return null;
    return { evidence: [`${file} (\`test\` target)`], setup: [], test: "make test" };
  },
};
