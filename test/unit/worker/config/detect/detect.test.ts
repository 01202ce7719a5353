import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { detectedSnippet } from "../../../../../worker/config/detect/report.js";
import { detectDirectory } from "../../../../support/detect-fixture.js";

const FIXTURES = new URL("../../../../fixtures/detect/", import.meta.url).pathname;

/** A fixture tree as the worker sees a repository: its file list, and the files detection asks for. */
const detectFixture = (name: string) => detectDirectory(join(FIXTURES, name));

describe("Node: the lockfile decides the install, the `test` script the tests", () => {
  it("package-lock.json: npm ci, npm test", async () => {
    const found = await detectFixture("node-npm");
    expect(found.setup).toEqual(["npm ci"]);
    expect(found.test).toBe("npm test");
    expect(found.read).toEqual(["package.json"]);
  });
  it("no lockfile: npm install, which writes none (a lockfile setup wrote would be in the change)", async () => {
    const found = await detectFixture("node-no-lockfile");
    expect(found.setup).toEqual(["npm install --no-package-lock"]);
    expect(found.test).toBe("npm test");
    expect(found.parts[0]?.evidence).toEqual(["package.json (`test` script)", "no lockfile"]);
  });
  it("yarn.lock: yarn install --frozen-lockfile, through npx when yarn is not installed", async () => {
    const found = await detectFixture("node-yarn");
    expect(found.setup).toEqual([
      "if command -v yarn >/dev/null 2>&1; then yarn install --frozen-lockfile; else npx --yes yarn@1 install --frozen-lockfile; fi",
    ]);
    expect(found.test).toBe("npm test");
  });
  it("pnpm-lock.yaml: pnpm install --frozen-lockfile, at the version packageManager names", async () => {
    const found = await detectFixture("node-pnpm");
    expect(found.setup[0]).toContain("then pnpm install --frozen-lockfile;");
    expect(found.setup[0]).toContain("npx --yes pnpm@9.12.0 install --frozen-lockfile");
  });
  it("npm init's placeholder test script is no test", async () => {
    const found = await detectFixture("node-no-tests");
    expect(found.test).toBeNull();
    expect(found.parts).toEqual([]);
  });
});

describe("Python: a virtual environment in the workspace; pytest where the project uses it", () => {
  it("pyproject.toml with a test extra and pytest settings", async () => {
    const found = await detectFixture("python-pytest");
    expect(found.setup).toEqual([
      "python3 -m venv --system-site-packages --without-pip .venv && (.venv/bin/python -m pip --version || .venv/bin/python -m ensurepip)",
      // The test extra is optional: the project alone, then its requirements one by one, when it fails.
      ".venv/bin/python -m pip install -e \".[test]\" || (.venv/bin/python -m pip install -e . && { .venv/bin/python -m pip install 'pytest>=7'; true; })",
      ".venv/bin/python -m pip install pytest",
    ]);
    expect(found.test).toBe(".venv/bin/python -m pytest");
  });
  it("requirements files and no pytest: unittest, naming the tests directory that is not a package", async () => {
    const found = await detectFixture("python-unittest");
    expect(found.setup).toEqual([
      "python3 -m venv --system-site-packages --without-pip .venv && (.venv/bin/python -m pip --version || .venv/bin/python -m ensurepip)",
      ".venv/bin/python -m pip install -r requirements.txt",
      ".venv/bin/python -m pip install -r requirements-dev.txt || { .venv/bin/python -m pip install coverage; true; }",
    ]);
    expect(found.test).toBe(".venv/bin/python -m unittest discover -s tests");
  });
  it("setup.py, setup.cfg's testing extra, tox.ini running pytest", async () => {
    const found = await detectFixture("python-setupcfg");
    expect(found.parts[0]?.optional?.[0]?.install).toBe('.venv/bin/python -m pip install -e ".[testing]"');
    expect(found.test).toBe(".venv/bin/python -m pytest");
    expect(found.parts[0]?.evidence).toEqual([
      "setup.cfg",
      "setup.py",
      "tox.ini",
      "extra [testing]",
      "pytest",
    ]);
  });
});

describe("Go, Rust, Ruby, Java and make", () => {
  it("go.mod: go test ./..., modules and the build cache (compiled in setup) in the workspace, named in the shell", async () => {
    const found = await detectFixture("go");
    expect(found.setup).toEqual(["go mod download", "go test -run '^$' ./..."]);
    expect(found.test).toBe("go test ./...");
    expect(found.env).toEqual({
      vars: {
        GOMODCACHE: { path: ".agent-fix-cache/go/mod" },
        GOCACHE: { path: ".agent-fix-cache/go/build" },
      },
      path: [],
    });
  });
  it("Cargo.toml: cargo fetch, then cargo test offline", async () => {
    const found = await detectFixture("rust");
    expect(found.setup).toEqual(["cargo fetch"]);
    expect(found.test).toBe("cargo test --offline");
    expect(found.env.vars).toEqual({ CARGO_HOME: { path: ".agent-fix-cache/cargo" } });
  });
  it("Gemfile with rspec and a spec directory: bundle install, bundle exec rspec", async () => {
    const found = await detectFixture("ruby-rspec");
    expect(found.setup).toEqual(["bundle install"]);
    expect(found.test).toBe("bundle exec rspec");
    expect(found.env.vars).toEqual({ GEM_HOME: { path: ".agent-fix-cache/gems" } });
  });
  it("Gemfile and a Rakefile with a default task: bundle exec rake", async () => {
    const found = await detectFixture("ruby-rake");
    expect(found.test).toBe("bundle exec rake");
  });
  it("pom.xml with the Maven wrapper: ./mvnw, the tests offline", async () => {
    const found = await detectFixture("java-maven");
    expect(found.setup[0]).toContain("./mvnw -B");
    // Setup forks surefire (which fetches its provider only then) with a filter matching no test.
    expect(found.setup).toEqual([
      "./mvnw -B test -Dtest='*#AgentFixSetupRunsNoTest' -Dsurefire.failIfNoSpecifiedTests=false",
    ]);
    expect(found.test).toBe("./mvnw -B -o test");
    expect(found.env.vars).toEqual({
      MAVEN_USER_HOME: { path: ".agent-fix-cache/m2" },
      MAVEN_OPTS: {
        path: ".agent-fix-cache/m2/repository",
        prefix: "-XX:TieredStopAtLevel=1 -Dmaven.repo.local=",
      },
    });
  });
  it("build.gradle.kts without a wrapper: gradle", async () => {
    const found = await detectFixture("java-gradle");
    // The test task resolves its runtime classpath (testRuntimeOnly too) and, filtered, runs nothing.
    expect(found.setup).toEqual([
      `mkdir -p "$GRADLE_USER_HOME" && printf '%s\\n' 'allprojects { tasks.withType(Test) { filter.failOnNoMatchingTests = false } }' > "$GRADLE_USER_HOME/agent-fix-no-tests.gradle"`,
      'gradle --no-daemon --init-script "$GRADLE_USER_HOME/agent-fix-no-tests.gradle" test --tests AgentFixSetupRunsNoTest',
    ]);
    expect(found.test).toBe("gradle --no-daemon --offline test");
    expect(found.env.vars).toEqual({
      GRADLE_USER_HOME: { path: ".agent-fix-cache/gradle" },
      GRADLE_OPTS: { value: "-XX:TieredStopAtLevel=1" },
    });
  });
  it("a Makefile with a test target (and .PHONY naming it): make test, no setup", async () => {
    const found = await detectFixture("make");
    expect(found.setup).toEqual([]);
    expect(found.test).toBe("make test");
  });
});

describe("a monorepo: each part found", () => {
  it("tests the Node, Python and Go parts from their directories; not examples, docs, workspaces or the root Makefile", async () => {
    const found = await detectFixture("monorepo");
    expect(found.parts.map((part) => `${part.ecosystem}:${part.dir}`)).toEqual([
      "node:web",
      "python:services/api",
      "go:services/worker",
    ]);
    expect(found.setup[0]).toBe("cd web && npm ci");
    expect(found.setup).toContain(
      "cd services/api && python3 -m venv --system-site-packages --without-pip .venv && (.venv/bin/python -m pip --version || .venv/bin/python -m ensurepip)",
    );
    expect(found.test).toBe(
      "(cd web && npm test) && (cd services/api && .venv/bin/python -m pytest) && (cd services/worker && go test ./...)",
    );
    // One cache at the workspace's root for every part: the variables are the shell's, not per command.
    expect(Object.keys(found.env.vars)).toEqual(["GOMODCACHE", "GOCACHE"]);
  });
  it("nothing to test: no parts, no command", async () => {
    const found = await detectFixture("nothing");
    expect(found).toMatchObject({ parts: [], setup: [], test: null, read: [] });
  });
});

describe("the snippet that would change it", () => {
  it("is a .github/agent-fix.yml holding exactly the detected commands", async () => {
    const found = await detectFixture("node-npm");
    expect(detectedSnippet(found)).toBe("setup:\n  commands:\n    - npm ci\ntest:\n  command: npm test");
  });
  it("sets the variables in each command itself, as a committed file's commands get none from detection", async () => {
    expect(detectedSnippet(await detectFixture("go"))).toBe(
      [
        "setup:",
        "  commands:",
        '    - GOMODCACHE="$PWD/.agent-fix-cache/go/mod" GOCACHE="$PWD/.agent-fix-cache/go/build" go mod download',
        `    - GOMODCACHE="$PWD/.agent-fix-cache/go/mod" GOCACHE="$PWD/.agent-fix-cache/go/build" go test -run '^$' ./...`,
        "test:",
        '  command: GOMODCACHE="$PWD/.agent-fix-cache/go/mod" GOCACHE="$PWD/.agent-fix-cache/go/build" go test ./...',
      ].join("\n"),
    );
    // A part in a directory: the variables are exported at the root, before the `cd`.
    expect(detectedSnippet(await detectFixture("monorepo"))).toContain(
      'command: export GOMODCACHE="$PWD/.agent-fix-cache/go/mod" GOCACHE="$PWD/.agent-fix-cache/go/build" && (cd web && npm test)',
    );
    // Maven's local repository is a system property in MAVEN_OPTS, beside its JVM's C1-only option.
    expect(detectedSnippet(await detectFixture("java-maven"))).toContain(
      'command: MAVEN_USER_HOME="$PWD/.agent-fix-cache/m2" MAVEN_OPTS="-XX:TieredStopAtLevel=1 -Dmaven.repo.local=$PWD/.agent-fix-cache/m2/repository" ./mvnw -B -o test',
    );
  });
  it("with a chosen image and a provided Node: names the image, installs Node first, puts it on PATH", async () => {
    const found = await detectFixture("node-npm");
    const snippet = detectedSnippet(found, {
      image: "agent-fix-sandbox-rich:0.1.4",
      setup: ['npm install --prefix .agent-fix-cache/node "node@22"'],
      env: { vars: {}, path: [".agent-fix-cache/node/node_modules/.bin"] },
      lines: [],
    });
    expect(snippet).toBe(
      [
        "sandbox:",
        "  image: agent-fix-sandbox-rich:0.1.4",
        "setup:",
        "  commands:",
        `    - PATH="$PWD/.agent-fix-cache/node/node_modules/.bin:$PATH" npm install --prefix .agent-fix-cache/node "node@22"`,
        '    - PATH="$PWD/.agent-fix-cache/node/node_modules/.bin:$PATH" npm ci',
        "test:",
        '  command: PATH="$PWD/.agent-fix-cache/node/node_modules/.bin:$PATH" npm test',
      ].join("\n"),
    );
  });
});
