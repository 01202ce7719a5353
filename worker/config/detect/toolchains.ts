/**
 * Go, Rust and the JVM: one manifest decides the part. Their downloads go to the cache directory in
 * the workspace (setup's $HOME does not outlive setup), named by variables in the run's shell
 * environment, and the tests run offline from it, as the agent's sandbox has no network.
 */
import { cachePath, type EcosystemRule } from "./ecosystem-rule.js";

export const goRule: EcosystemRule = {
  ecosystem: "go",
  marks: (names) => names.has("go.mod"),
  reads: () => [],
  detect: () => ({
    evidence: ["go.mod"],
    env: { GOMODCACHE: cachePath("go/mod"), GOCACHE: cachePath("go/build") },
    // Compiling the packages and their tests once here fills the workspace's build cache, which every
    // sandbox after setup starts from: none of them compiles the standard library again (minutes).
    // A go.mod asking for a newer Go than the image's has it downloaded here too (GOTOOLCHAIN), into
    // GOMODCACHE, where the offline sandboxes after setup find it.
    setup: ["go mod download", "go test -run '^$' ./..."],
    test: "go test ./...",
  }),
};

export const rustRule: EcosystemRule = {
  ecosystem: "rust",
  marks: (names) => names.has("Cargo.toml"),
  reads: () => [],
  detect: () => ({
    evidence: ["Cargo.toml"],
    env: { CARGO_HOME: cachePath("cargo") },
    setup: ["cargo fetch"],
    test: "cargo test --offline",
  }),
};

/** A test name no project has: a filter of it selects no test. */
const NO_SUCH_TEST = "AgentFixSetupRunsNoTest";

/** Surefire's filter for every class and no method, allowed to match nothing. */
const MAVEN_NO_TESTS = `-Dtest='*#${NO_SUCH_TEST}' -Dsurefire.failIfNoSpecifiedTests=false`;

/** Where setup writes the Gradle init script below: the cache, which the change never holds. */
const GRADLE_NO_TESTS_SCRIPT = '"$GRADLE_USER_HOME/agent-fix-no-tests.gradle"';

/** Writes the init script that lets setup's test filter match nothing (Gradle's API since 1.10). */
const GRADLE_NO_TESTS_INIT = `mkdir -p "$GRADLE_USER_HOME" && printf '%s\\n' 'allprojects { tasks.withType(Test) { filter.failOnNoMatchingTests = false } }' > ${GRADLE_NO_TESTS_SCRIPT}`;

/**
 * Maven's and Gradle's own JVM compile with C1 only: a sandbox's build is mostly start-up, plugin
 * loading and resolution, over before C2's optimised code pays for itself. On the rich image's JDK 21,
 * commons-cli 1.11.0's Maven setup took 33 s of user CPU -> 20 s, its `mvn -o test` 21 s -> 13 s; the
 * gradle-junit fixture's `gradle --offline test` 9 s -> 4 s. The JVMs that run the tests (Surefire's
 * fork, Gradle's test worker) are not these and keep their defaults.
 */
const BUILD_JVM = "-XX:TieredStopAtLevel=1";

export const javaRule: EcosystemRule = {
  ecosystem: "java",
  marks: (names) => names.has("pom.xml") || names.has("build.gradle") || names.has("build.gradle.kts"),
  reads: () => [],
  detect({ names }) {
    if (names.has("pom.xml")) {
      const mvn = names.has("mvnw") ? "./mvnw" : "mvn";
      return {
        evidence: ["pom.xml", names.has("mvnw") ? "Maven wrapper" : "no Maven wrapper"],
        // MAVEN_USER_HOME: where the wrapper keeps the Maven it downloads; MAVEN_OPTS: Maven's own
        // JVM (BUILD_JVM), and the local repository, which Maven reads as a system property.
        env: {
          MAVEN_USER_HOME: cachePath("m2"),
          MAVEN_OPTS: cachePath("m2/repository", `${BUILD_JVM} -Dmaven.repo.local=`),
        },
        // Surefire resolves its booter and the test framework's provider only when it has test classes
        // to run (`dependency:go-offline` never fetches them, and the offline `mvn -o test` then fails
        // on a real project). A method filter that matches no test makes it resolve them, fork, and run
        // nothing: the project's tests run in the baseline and the gate, not a third time here.
        setup: [`${mvn} -B test ${MAVEN_NO_TESTS}`],
        test: `${mvn} -B -o test`,
      };
    }
    const gradle = names.has("gradlew") ? "./gradlew" : "gradle";
    return {
      evidence: [
        names.has("build.gradle.kts") ? "build.gradle.kts" : "build.gradle",
        names.has("gradlew") ? "Gradle wrapper" : "no Gradle wrapper",
      ],
      // GRADLE_OPTS: the JVM of Gradle's client, which runs the build itself with --no-daemon (BUILD_JVM).
      env: { GRADLE_USER_HOME: cachePath("gradle"), GRADLE_OPTS: { value: BUILD_JVM } },
      // `testClasses` resolves only the test compile classpath: a `testRuntimeOnly` dependency (the
      // JUnit Platform launcher or engine, as `gradle init` writes them) would be missing from the
      // offline test run. The test task itself, filtered to no test, resolves its runtime classpath and
      // runs nothing; the init script lets an empty filter pass (Gradle has no flag for it).
      setup: [
        GRADLE_NO_TESTS_INIT,
        `${gradle} --no-daemon --init-script ${GRADLE_NO_TESTS_SCRIPT} test --tests ${NO_SUCH_TEST}`,
      ],
      test: `${gradle} --no-daemon --offline test`,
    };
  },
};
